"""The exact dimension engine against the paper's formulas, inside and outside their hypotheses."""

import itertools
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ag_attention import Architecture, InvalidArgumentError, dimension
from ag_attention._exact.field import SECOND_PRIME
from ag_attention._models.formulas import cor33, cor38, effective_architecture
from tests.helpers import ANY_VALUE


@pytest.mark.parametrize(
    "d, e, a, t",
    [(d, e, a, t) for d in range(1, 5) for e in range(1, 4) for a in range(1, d + 1) for t in (2, 3)],
)
def test_single_layer_matches_cor33(d, e, a, t):
    r = dimension(Architecture((d, e), (a,), tokens=t))
    assert r.dimension == cor33(d, e, a)
    assert r.certified
    assert r.formula_applies == (e > 1 or a > 1)
    assert r.fiber_dimension == r.parameters - r.dimension == a * a + 1


def test_single_layer_av_parametrization():
    # A free: d^2 + d d' - 1, fiber = rescaling only
    for d, e in [(2, 1), (3, 2), (4, 3)]:
        r = dimension(Architecture.single_layer(d, e, tokens=2))
        assert r.dimension == d * d + d * e - 1 and r.fiber_dimension == 1 and r.certified


def test_rank_above_width_uses_capped_formula():
    r = dimension(Architecture((3, 2), (5,), tokens=2))
    assert r.dimension == cor33(3, 2, 3) == 14
    assert not r.formula_applies and "a <= d" in r.expected.failed_hypotheses


@pytest.mark.parametrize("d, e, a", [(3, 1, 3), (2, 1, 2), (3, 2, 3), (5, 3, 2), (4, 1, 4)])
def test_one_token_true_value_differs(d, e, a):
    r = dimension(Architecture((d, e), (a,), tokens=1))
    assert not r.formula_applies and "t >= 2" in r.expected.failed_hypotheses
    r_sym = min(2 * a, d)
    assert r.dimension == r_sym * (2 * d - r_sym + 1) // 2 + d * e - 1 < cor33(d, e, a)
    assert r.certified  # by the proven t = 1 upper bound


@pytest.mark.parametrize(
    "widths, ranks, value",
    [
        ((4, 4, 4), (2, 2), 34),
        ((4, 2, 4), (2, 2), 23),
        ((5, 3, 2), (2, 2), 30),
        ((4, 2, 4, 4), (2, 2, 2), 25),
    ],
)
def test_deep_one_token_is_certified(widths, ranks, value):
    # f(x) = prod_i (x^T S_i x)^(3^(L-i)) M x: the proven bound from (S_1..S_L, M) meets the rank
    r = dimension(Architecture(widths, ranks, tokens=1))
    assert r.dimension == value and r.certified and "nested row spaces" in r.certificate
    assert r.dimension < r.symmetry_bound  # the symmetries alone do not decide it


def test_one_token_bound_certifies_every_small_network():
    for L in (1, 2):
        for widths in itertools.product(range(1, 4), repeat=L + 1):
            for ranks in itertools.product(*[range(1, w + 1) for w in widths[:-1]]):
                r = dimension(Architecture(widths, ranks, tokens=1))
                assert r.certified, r


def test_math_md_t1_example():
    # docs/math/dimension.md (dimension-one-token): d=3, a=3, t=1 has dimension 8, not 11
    r = dimension(Architecture((3, 1), (3,), tokens=1))
    assert (r.dimension, r.expected.value) == (8, 11)


MATH_MD = [((4, 4, 4), (2, 2), 38), ((4, 4, 4, 4), (2, 2, 2), 49), ((4, 2, 4), (2, 2), 26), ((4, 3, 2), (2, 2), 27)]


@pytest.mark.parametrize("widths, ranks, value", MATH_MD)
def test_math_md_deep_examples(widths, ranks, value):
    r = dimension(Architecture(widths, ranks, tokens=3))
    assert r.dimension == value == r.expected.value and r.certified and r.formula_applies


def deep_grid():
    for L in (2, 3):
        for widths in itertools.product((2, 3, 4), repeat=L + 1):
            for ranks in itertools.product((1, 2, 3), repeat=L):
                if all(a <= d for a, d in zip(ranks, widths)):
                    yield widths, ranks


@pytest.mark.slow
def test_cor38_on_a_grid():
    """Inside the (refined) hypotheses the formula holds and is certified; the paper's
    hypotheses alone are not enough (counterexamples below)."""
    inside = outside_paper_ok = 0
    for widths, ranks in deep_grid():
        r = dimension(Architecture(widths, ranks, tokens=2))
        if r.formula_applies:
            inside += 1
            assert r.dimension == cor38(widths, ranks), (widths, ranks)
            assert r.certified
        elif r.expected.paper_hypotheses_hold and r.dimension != r.expected.value:
            outside_paper_ok += 1
    assert inside > 150 and outside_paper_ok > 50


@pytest.mark.parametrize(
    "widths, ranks, dim, formula",
    [
        ((2, 3, 3), (2, 2), 12, 16),  # hidden layer wider than the input
        ((4, 2, 4, 4), (2, 2, 2), 29, 37),  # bottleneck, but growth before the last layer
        ((4, 4, 4, 4), (1, 2, 2), 40, 44),  # a_1 = 1 makes all tokens parallel
    ],
)
def test_counterexamples_to_the_stated_hypotheses(widths, ranks, dim, formula):
    r = dimension(Architecture(widths, ranks, tokens=3))
    assert r.expected.paper_hypotheses_hold and not r.formula_applies
    assert (r.dimension, r.expected.value) == (dim, formula)


def test_growing_widths_are_certified_by_the_effective_architecture():
    arch = Architecture((2, 3, 3), (2, 2), tokens=2)
    eff = effective_architecture(arch)
    assert eff.widths == (2, 2, 3)
    r = dimension(arch)
    assert r.certified and r.upper_bound == cor38(eff.widths, eff.ranks) < r.symmetry_bound
    assert "effective architecture" in r.certificate


def test_growing_then_shrinking_reports_true_value():
    arch = Architecture((2, 4, 2), (2, 2), tokens=3)
    r = dimension(arch)
    assert not r.formula_applies
    assert r.dimension == cor38((2, 2, 2), (2, 2)) and r.certified


def test_reproducible_with_fixed_seed():
    arch = Architecture((4, 3, 2), (2, 2), tokens=3)
    a, b = dimension(arch, seed=7), dimension(arch, seed=7)
    assert a.to_dict() | {"seconds": 0, "runs": 0} == b.to_dict() | {"seconds": 0, "runs": 0}
    assert [r.rank for r in a.runs] == [r.rank for r in b.runs]
    c = dimension(arch, seed=8, prime=SECOND_PRIME)
    assert (c.seed, c.prime, c.dimension) == (8, SECOND_PRIME, a.dimension)


def test_recheck_with_second_prime_below_expected():
    # below the formula: rechecked with the second prime even though certified otherwise
    r = dimension(Architecture((3, 1), (3,), tokens=1), recheck=True)
    assert r.certified and {run.prime for run in r.runs} == {2**31 - 1, SECOND_PRIME}
    assert {run.rank for run in r.runs} == {8}
    r = dimension(Architecture((4, 4, 4), (2, 2), tokens=3))
    assert len(r.runs) == 1  # certified at once: nothing to recheck
    r = dimension(Architecture((2, 4, 1), (1, 2), tokens=2, heads=2))  # 30 <= dim <= 34: no bound meets it
    assert not r.certified
    assert {run.prime for run in r.runs} == {2**31 - 1, SECOND_PRIME}


def test_too_few_samples_is_only_a_lower_bound():
    # one sample gives at most t d_L rows
    r = dimension(Architecture((3, 3), (1,), tokens=3), samples=1, recheck=False)
    assert r.dimension < 13 and not r.certified
    # a lower bound below the formula does not contradict it: no verdict, and the reason
    assert r.agrees is None and r.rows_limit_rank and "too few samples" in r.comparison()
    assert "use more samples" in r.certificate and "DIFFERS" not in str(r)
    assert dimension(Architecture((3, 3), (1,), tokens=3)).dimension == 13


def test_av_networks_with_growing_hidden_widths():
    # no ranks given: the effective (narrowed) network must also be AV with A free
    r = dimension(Architecture((2, 3, 2), None, tokens=2, parametrization="AV"))
    assert r.reduction.architecture.widths == (2, 2, 2) and r.reduction.architecture.ranks == (2, 2)
    assert r.dimension == 10 and r.certified
    assert effective_architecture(Architecture((2, 3, 3), None, parametrization="AV")).ranks == (2, 2)


def test_a_jacobian_too_large_for_memory_is_refused_before_allocation():
    with pytest.raises(InvalidArgumentError, match=r"GiB.*available"):
        dimension(Architecture((200, 200, 200), (100, 100), tokens=3))


def test_per_sample_information_is_t_squared():
    """Beyond the shared values, each sample adds exactly t^2 = 9 directions (Lemma 3.6)."""
    arch = Architecture((12, 12, 12), (6, 6), tokens=3)
    ranks = [dimension(arch, samples=n, recheck=False).dimension for n in (10, 15, 20)]
    assert ranks[1] - ranks[0] == ranks[2] - ranks[1] == 5 * 9
    assert dimension(arch).dimension == cor38((12, 12, 12), (6, 6))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(prime=4), "prime=4"),
        (dict(prime=2**61 - 1), "prime="),
        (dict(seed=-1), "seed=-1"),
        (dict(seed="x"), "seed='x'"),
        (dict(samples=0), "samples=0"),
        (dict(timeout=0), "timeout=0"),
        (dict(timeout="1"), "timeout='1'"),
        (dict(timeout=float("nan")), "timeout=nan"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        dimension(Architecture((2, 1), (2,)), **kwargs)


def test_normalized_is_refused_by_the_exact_engine():
    with pytest.raises(InvalidArgumentError, match="not polynomial"):
        dimension(Architecture((2, 1), (2,), normalized=True))


def test_variants_have_no_formula_but_a_value():
    r = dimension(Architecture((3, 3, 3), (2, 2), tokens=2, heads=2))
    assert r.expected.value is None and r.agrees is None
    assert r.dimension <= r.upper_bound
    r = dimension(Architecture((3, 3), (2,), tokens=2, skip=True))
    assert r.expected.value is None and r.dimension > 0


def test_dimension_writes_nothing_under_quiet(monkeypatch):
    from ag_attention import _progress as progress
    from tests.helpers import Terminal

    monkeypatch.setattr(progress, "DELAY", 0.0)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)  # in the test body: pytest's capture resets it after set-up
    with progress.quiet():
        r = dimension(Architecture((12, 12, 12), (6, 6), tokens=3))
    assert r.dimension == cor38((12, 12, 12), (6, 6)) and err.getvalue() == ""


def test_dimension_shows_its_steps_on_a_terminal(monkeypatch, capsys):
    from ag_attention import _progress as progress
    from tests.helpers import Terminal

    monkeypatch.setattr(progress, "DELAY", 0.0)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    r = dimension(Architecture((2, 3, 3), (2, 2), tokens=2))  # an effective architecture and a confirmation run
    text = err.getvalue()
    assert "dimension of widths 2,3,3 ranks 2,2 t=2" in text
    assert "effective widths 2,2,3 ranks 2,2 t=2: Jacobian of" in text
    assert "Jacobian of" in text and "rank of" in text and "symmetry tangents" in text
    assert ("confirmation: " in text) == (len(r.runs) > 1)
    assert capsys.readouterr().out == ""  # standard output is never touched


def test_doubling_stops_at_the_memory_limit_instead_of_failing(monkeypatch):
    """The first run fits; a doubled one would not: the result is the first run's lower bound."""
    from ag_attention import _resources as resources
    from ag_attention._exact import sampling as engine

    arch = Architecture((4, 4, 4, 4), (1, 2, 2), tokens=2)  # a rank below the formula: doublings wanted
    first = engine.run_memory(arch, *engine.sampling_plan(arch, engine.planning_bound(arch))).peak
    monkeypatch.setattr(resources, "memory_limit", lambda: resources.MemoryLimit(int(1.5 * first), "test"))
    r = dimension(arch, recheck=False)
    assert len(r.runs) == 1 and r.dimension <= r.upper_bound
    monkeypatch.setattr(resources, "memory_limit", lambda: resources.MemoryLimit(2**40, "test"))
    assert len(dimension(arch, recheck=False).runs) > 1  # the same call doubles when memory allows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    samples=ANY_VALUE,
    seed=ANY_VALUE,
    prime=st.one_of(ANY_VALUE, st.sampled_from([101, 2**31 - 1, 2**31, 4, 65521])),
    max_doublings=ANY_VALUE,
)
def test_dimension_arguments_give_a_result_or_a_named_error(samples, seed, prime, max_doublings, monkeypatch):
    monkeypatch.setenv("AG_ATTENTION_MEMORY_LIMIT", "200M")
    arch = Architecture((3, 2), (2,), tokens=2)
    try:
        r = dimension(arch, samples=samples, seed=seed, prime=prime)
    except InvalidArgumentError as exc:
        assert any(name in str(exc) for name in ("samples", "seed", "prime")), exc
        return
    assert r.dimension <= r.upper_bound
    _ = max_doublings


@pytest.mark.serial  # a bound on wall-clock time: run alone, after the parallel tests
def test_timeout_stops_inside_the_jacobian_of_long_sequences():
    """t = 3,000: about 20 s of Jacobian (35 rows of 0.6 s, assembled row by row); timeout=1 stops it between two
    pieces, within the limit's 10 % and 5 s."""
    import time

    from ag_attention import ComputationTimeoutError

    start = time.monotonic()
    with pytest.raises(
        ComputationTimeoutError,
        match=r"^time limit of 1 s reached during Jacobian of 5 samples "
        r"\(piece \d+ of 35\): stopped",
    ):
        dimension(Architecture((3, 3), (2,), tokens=3000), timeout=1)
    assert time.monotonic() - start <= 1 * 1.1 + 5
