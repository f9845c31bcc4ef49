"""Monodromy (ag_attention._numeric.monodromy): its stopping rule, its limits, its checkpoints, on systems whose
solutions are known in closed form (and one of the landscape's)."""

import time
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._landscape.metrics import metric
from ag_attention._landscape.square import square_system
from ag_attention._numeric.executors import LocalExecutor
from ag_attention._numeric.homotopy import CAREFUL
from ag_attention._numeric.monodromy import LOOP_OPTIONS, STOPPING_RULE, Monodromy, monodromy_solve
from tests.numeric.test_homotopy import Reciprocal, Roots


def test_monodromy_finds_every_root_and_stops_by_the_trace_test():
    for k in (3, 5):
        p0 = np.array([0.7 + 0.4j])
        z0 = np.array([p0[0] ** (1 / k)])
        r = monodromy_solve(Roots(k), z0, p0, seed=1)
        # the sum of the k roots is 0 for every p: the trace test passes once all are found
        assert r.count == k and r.stop == "trace test" and r.final and r.failures == 0 and r.trace < 1e-12
        assert np.allclose(np.sort_complex(r.solutions[:, 0] ** k), p0[0], atol=1e-10)
        assert len({np.round(z, 8) for z in r.solutions[:, 0]}) == k  # distinct: the k roots of p0
        assert r.to_dict()["stopping_rule"] == STOPPING_RULE and r.to_dict()["final"] is True


def test_a_round_without_news_is_not_a_stop():
    # the trace of 1/p is not affine along a pencil (it escapes to infinity at p = 0): the trace test never passes,
    # so nothing but a limit stops it; it says so, and keeps what it found
    t0 = time.monotonic()
    r = monodromy_solve(Reciprocal(), np.array([0.5 + 0j]), np.array([2.0 + 0j]), seed=2, timeout=2.0)
    assert r.count == 1 and r.stop == "time limit" and not r.final and r.trace > 1e-3
    assert r.loops > 3 + 10 and time.monotonic() - t0 < 2.0 * 1.1 + 5  # many rounds, none a stop; the limit kept
    # a count known otherwise stops it as soon as it is reached
    r = monodromy_solve(Reciprocal(), np.array([0.5 + 0j]), np.array([2.0 + 0j]), seed=2, known=1)
    assert r.stop == "known count" and r.final and r.known == 1
    # ... also when it becomes known only while the monodromy runs (msolve beside it)
    calls = []

    def later():
        calls.append(1)
        return 4 if len(calls) > 20 else None

    r = monodromy_solve(Roots(4), np.array([1.0 + 0j]), np.array([1.0 + 0j]), known=later)
    assert r.count == 4 and r.stop in ("known count", "trace test") and r.final
    # a cap on the solutions stops it early, and says so: not final
    r = monodromy_solve(Roots(7), np.array([1.0 + 0j]), np.array([1.0 + 0j]), max_solutions=2)
    assert r.stop == "max_solutions" and r.count >= 2 and not r.final
    with pytest.raises(InvalidArgumentError, match="not a regular solution"):
        monodromy_solve(Roots(3), np.array([5.0 + 0j]), np.array([1.0 + 0j]))


def test_the_stall_of_one_blas_kernel_is_not_a_stop():
    # (2,1,2) with a Gaussian data form at scale 1 stalled at 13 of 14 for 18 loops under OpenBLAS's SkylakeX kernel
    # (the 14th came at the 19th loop): with seeds 0..3 every run ends by the trace test with all 14
    from ag_attention._landscape.metrics import gram

    layer = Architecture.single_layer(2, 1, None, tokens=2)
    rng = np.random.default_rng(7)
    exact = np.vectorize(Fraction, otypes=[object])  # floats by their exact binary value, as critical_points reads
    X = [exact(rng.standard_normal((2, 2))) for _ in range(5)]
    Y = [exact(rng.standard_normal((2, 1))) for _ in range(5)]
    G, w, _ = gram(X, Y, 2, 1, False)
    S = square_system(layer, G, w_scale=max(abs(v) for v in w))
    for seed in range(4):
        z0, p0, c0 = S.seed(np.random.default_rng(seed))
        r = monodromy_solve(S, z0, p0, seed=seed, chart0=c0, timeout=120)
        assert (r.count, r.stop) == (14, "trace test"), (seed, r.count, r.stop, r.history)


def test_an_interrupt_keeps_what_was_found(tmp_path):
    arch = Architecture.single_layer(2, 2, 2, tokens=2)
    G, _ = metric("generic", 2, 2, 2, seed=0)
    S = square_system(arch, G)
    z0, p0, c0 = S.seed(np.random.default_rng(0))
    state = Monodromy(S, z0, p0, seed=0, chart0=c0)

    class Interrupting(LocalExecutor):
        polls = 0

        def poll(self, wait):
            self.polls += 1
            if self.polls == 40:
                raise KeyboardInterrupt
            return super().poll(wait)

    r = state.run(Interrupting(S, LOOP_OPTIONS, CAREFUL), save=tmp_path / "s.npz")
    assert r.stop == "interrupted" and not r.final and r.count >= 1 and (tmp_path / "s.npz").exists()
    assert len(Monodromy.resume(S, tmp_path / "s.npz").found) == r.count


def test_the_progress_counts_solutions_towards_the_predicted_count_or_the_known_one(monkeypatch, capsys):
    """Off a terminal (a line at each change here: interval 0) the run counts solutions found of the prediction,
    or of the count known otherwise once there is one."""
    import re

    monkeypatch.setenv("AG_ATTENTION_PROGRESS_INTERVAL", "0")
    p0 = np.array([0.7 + 0.4j])
    z0 = np.array([p0[0] ** (1 / 5)])
    for known, expected, total in ((None, 5, 5), (5, 99, 5), (None, None, None)):
        capsys.readouterr()
        r = Monodromy(Roots(5), z0, p0, seed=1).run(
            LocalExecutor(Roots(5), LOOP_OPTIONS, CAREFUL), known=known, expected=expected, desc="roots"
        )
        lines = capsys.readouterr().err.splitlines()
        of = "" if total is None else f"/{total}"
        assert r.count == 5 and len(lines) >= 2, lines
        assert all(re.match(rf"roots: [1-5]{of} solutions found, \d\d:\d\d elapsed", line) for line in lines), lines
        assert lines[-1].startswith(f"roots: 5{of} solutions found")
