"""Every numerical route stops well-formed wherever its limit comes (issue 45, 1).

The package's clock (``ag_attention._clock``) is the only clock its deadlines read.  These tests replace it by
one that, at its k-th reading, moves past every deadline ("deadline") or interrupts the run as Ctrl-C does
("interrupt": :func:`ag_attention._clock.interrupt`), for seeded random k spread over the readings of a full run
(and the first, second and last): with zero, one, some or all paths finished.  Each run must return its result
object (no exception), printable and serializable, ``final`` false unless it finished before the limit arrived,
and never more than the full run certified.  Sizes (2,1,2), (2,2,2) and (3,1,1) of one layer, a (4,4) layer whose
monodromy cannot finish, the polynomial-model route and the point engine; ``make test-all`` draws more k.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ag_attention import (
    Architecture,
    Network,
    PointGeometry,
    _clock,
    critical_points,
    ed_degree,
    model_critical_points,
    point_geometry,
    polynomial_model,
)
from ag_attention._landscape.numerical import distinct_images
from ag_attention._numeric import certify as _certify
from ag_attention._numeric.homotopy import parameter_homotopy
from tests.helpers import SLOW_TESTS_ASKED, generator, seed

DRAWS = 12 if SLOW_TESTS_ASKED else 2


class Limit:
    """``_clock.now`` replaced: its k-th reading moves past every deadline, or interrupts (Ctrl-C)."""

    def __init__(self, k: int | None, mode: str):
        self.k, self.mode, self.calls, self.offset = k, mode, 0, 0.0
        self.real = _clock.now

    def __call__(self) -> float:
        self.calls += 1
        if self.calls == self.k:
            if self.mode == "interrupt":
                _clock.interrupt()
            else:
                self.offset = _clock.PAST
        return self.real() + self.offset


def _run(monkeypatch, fn, k, mode):
    limit = Limit(k, mode)
    with monkeypatch.context() as m:
        m.setattr(_clock, "now", limit)
        result = fn()
    assert not _clock.interrupted()  # the route's end restored the clock
    return limit.calls, result


def _moments(n: int, base: int, draws: int = DRAWS) -> list[int]:
    """The first, second and last reading of a run of ``n``, and ``draws`` seeded random ones."""
    rng = generator(base)
    drawn = rng.integers(1, max(2, n + 1), size=12 if SLOW_TESTS_ASKED else draws).tolist()
    return sorted({1, 2, n, *drawn})


def _full_run(monkeypatch, fn):
    """The run with no limit (its readings are counted): one for both modes, which it never reaches."""
    return _run(monkeypatch, fn, None, "deadline")


def _limits(n: int, base: int, draws: int = DRAWS) -> list[tuple[str, int]]:
    """Each mode (a deadline, an interrupt) at each of the moments of a run of ``n`` readings."""
    return [(mode, k) for mode in ("deadline", "interrupt") for k in _moments(n, base, draws)]


def _check_landscape(result, full, mode):
    text = str(result)
    assert text and "None" not in text.splitlines()[0]
    json.dumps(result.to_dict())
    if result.final:  # (by the homotopy, or by msolve's count and isolation beside it)
        assert result.complex_pure == full.complex_pure and len(result.points) == len(full.points)
        assert result.complex_certified in (None, 0, full.complex_certified) or result.method == "auto"
    else:
        assert (result.complex_certified or 0) <= full.complex_certified
        assert result.status
    if mode == "interrupt" and not result.final and result.monodromy is not None:
        assert result.monodromy["stop"] in ("interrupted", "trace test", "known count")


def _layer_data(d, e, t, n, base):
    rng = generator(base)
    return rng.standard_normal((n, t, d)), rng.standard_normal((n, t, e))


@pytest.mark.parametrize(
    "method, samples, base, draws",
    # auto: msolve's jobs beside the homotopy (each run waits for them to be stopped: one random moment)
    [("homotopy", 6, 450, DRAWS), ("auto", 5, 461, 1)],
    ids=["homotopy", "msolve-beside"],
)
def test_critical_points_stop_well_formed_at_any_moment(monkeypatch, method, samples, base, draws):
    X, Y = _layer_data(2, 1, 2, samples, 50 if method == "homotopy" else 46)
    arch = Architecture.single_layer(2, 1, 2, tokens=2)

    def run():
        return critical_points(arch, X, Y, method=method, seed=seed(), timeout=240)

    n, full = _full_run(monkeypatch, run)
    assert full.final
    for mode, k in _limits(n, base, draws=draws):
        _, r = _run(monkeypatch, run, k, mode)
        _check_landscape(r, full, mode)


LIMITED = [
    pytest.param((4, 4, 4), id="4-4"),
    pytest.param((2, 2, 2), id="2-2-2", marks=pytest.mark.slow),
    pytest.param((3, 1, 1), id="3-1-1", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("size", LIMITED)
def test_layers_stop_well_formed_within_a_short_limit(monkeypatch, size):
    # a limit of a few seconds: the monodromy cannot finish; (4,4) crashed when no path to the data had finished
    # (issue 45); the readings of one such run are where the limit is then moved
    d, e, a = size
    X, Y = _layer_data(d, e, 2, 6, 47 + d + e + a)
    arch = Architecture.single_layer(d, e, a, tokens=2)

    def run():
        return critical_points(arch, X, Y, method="homotopy", seed=seed(), timeout=3)

    n, r = _full_run(monkeypatch, run)
    for mode, k in _limits(n, 470 + d + e + a):
        _, r = _run(monkeypatch, run, k, mode)
        assert r.status or r.final
        str(r)
        json.dumps(r.to_dict())


def test_ed_degree_by_monodromy_stops_well_formed(monkeypatch):
    arch = Architecture.single_layer(2, 1, 2, tokens=2)

    def run():
        return ed_degree(arch, metric="generic", method="monodromy", seed=seed(), timeout=240, cache=False)

    n, full = _full_run(monkeypatch, run)
    assert full.final
    for mode, k in _limits(n, 480):
        _, r = _run(monkeypatch, run, k, mode)
        str(r)
        json.dumps(r.to_dict())
        assert r.final or r.lower_bound is None or r.lower_bound <= full.ed_degree


def test_a_polynomial_models_critical_points_stop_well_formed(monkeypatch):
    model = polynomial_model(["s", "t"], ["s*t", "s^2 - t", "t^2 + s"])

    def run():
        return model_critical_points(model, target=[1, 2, 3], seed=seed(), timeout=240)

    n, full = _full_run(monkeypatch, run)
    for mode, k in _limits(n, 490):
        _, r = _run(monkeypatch, run, k, mode)
        str(r)
        json.dumps(r.to_dict())
        assert len(r.points) <= len(full.points) and (r.final or "NOT FINAL" in r.headline())
        if r.final:
            assert r.complex_count == full.complex_count and len(r.points) == len(full.points)


@pytest.mark.parametrize("normalized", [False, True], ids=["lightning", "softmax"])
def test_the_point_engine_stops_with_its_own_error_or_a_result(monkeypatch, normalized):
    arch = Architecture((3, 3, 2), (2, 2), tokens=3, normalized=normalized)
    rng = generator(500)
    net = Network.from_weights(
        {
            f"layers.{b.layer - 1}.heads.{b.head}.{b.name}": rng.standard_normal((b.rows, b.cols)) * 0.5
            for b in arch.blocks
        },
        tokens=arch.tokens,
        normalized=normalized,
    )

    def run():
        # Ctrl-C is a deadline inside interruptible() (the CLI runs the point engine in it): a partial result
        with _clock.interruptible():
            return point_geometry(net, seed=seed(), timeout=120)

    n, full = _full_run(monkeypatch, run)
    assert full.final
    for mode, k in _limits(n, 500):
        _, r = _run(monkeypatch, run, k, mode)
        assert isinstance(r, PointGeometry)
        if not r.final:
            assert ("interrupted" in r.stopped) == (mode == "interrupt") and "not computed" in r.stopped
            assert r.layers == () and r.numerical is None
        str(r)
        json.dumps(r.to_dict())


def test_the_parts_take_empty_batches():
    # what the routes hand on when no path finished: zero rows everywhere
    from ag_attention._landscape.metrics import metric
    from ag_attention._landscape.square import square_system

    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    G, _ = metric("generic", 2, 1, 2, seed=0)
    S = square_system(arch, G)
    rng = np.random.default_rng(0)
    p = rng.standard_normal(S.n_parameters) + 1j * rng.standard_normal(S.n_parameters)
    empty = np.zeros((0, S.n), dtype=complex)
    charts = np.zeros((0, S.n_chart), dtype=complex)
    assert S.invariants(empty, charts).shape[0] == 0
    res = parameter_homotopy(S, empty, p, p * 1.1, chart=charts, timeout=5)
    assert res.z.shape == (0, S.n) and not res.ok.any()
    # rows, none of which arrives (the limit has passed): the retries' bookkeeping sees zero ends
    some = rng.standard_normal((3, S.n)) + 0j
    some_charts = np.ones((3, S.n_chart), dtype=complex)
    res = parameter_homotopy(S, some, p, p * 1.1, chart=some_charts, timeout=0)
    assert res.z.shape == (3, S.n) and not res.ok.any()
    cert = _certify.certify_solutions(S, empty, list(p), float_parameter=p, real_system=False, charts=charts)
    assert cert.count == 0 and cert.unchecked == 0
    assert distinct_images(S, []) == 0
