"""Public functions raise only the AgAttentionError family, naming the bad argument (property tests too)."""

import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ag_attention import Architecture, dimension
from ag_attention._errors import (
    AgAttentionError,
    ComputationError,
    InvalidArchitectureError,
    InvalidArgumentError,
    NoClearGapError,
)
from ag_attention._exact import linalg
from ag_attention._exact.field import GFp
from ag_attention._exact.onelayer import certify, quadrics
from ag_attention._network import forward, unflatten
from ag_attention._numeric import numerical_dimension

from tests.helpers import ROOT


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda: dimension(Architecture((3, 3), (2,)), threads=-1), "threads"),
        (lambda: dimension(Architecture((3, 3), (2,)), threads="x"), "threads"),
        (lambda: dimension(Architecture((3, 3), (2,)), threads=True), "threads"),
        (lambda: numerical_dimension(Architecture((3, 3), (2,), normalized=True), min_gap="x"), "min_gap"),
        (lambda: numerical_dimension(Architecture((3, 3), (2,), normalized=True), min_gap=float("nan")), "min_gap"),
        (lambda: numerical_dimension(Architecture((3, 3), (2,), normalized=True), max_doublings=-1), "max_doublings"),
        (lambda: Architecture((3, 3), (2,)).block("Z", 1), "block"),
        (lambda: Architecture((3, 3), (2,)).block("Q", 7), "block"),
        (lambda: unflatten(Architecture((3, 3), (2,)), np.zeros(5)), "theta"),
        (lambda: forward(Architecture((3, 3), (2,)), GFp(101), np.zeros(21, dtype=np.int64), np.zeros((1, 2, 4))), "X"),
        (lambda: GFp(101).einsum("ij,jk,kl->il", np.zeros((2, 2)), np.zeros((2, 2))), "spec"),
        (lambda: linalg.rank(np.zeros(3, dtype=np.int64), 101), "M"),
        (lambda: quadrics([1, 2], 2, 1), "x"),
        (lambda: certify([[1, 2], [3, 4]], [[1, 1]], dimension="5"), "dimension"),
        (lambda: certify([[1, 2], [3, 4]], [[1, 1]], dimension=5, rank_bound=0), "rank_bound"),
        (lambda: certify([[1, 2]], [[1, 1]], dimension=5), "A"),
        (lambda: certify("AV", [[1, 1]], dimension=5), "A"),
        (lambda: Architecture({4, 3}, (2,)), "widths"),  # a set has no order
        (lambda: Architecture((4, 3), (2,), temperature="2"), "temperature"),
        (lambda: Architecture((4, 3), (2,), parametrization=["QKV"]), "parametrization"),
        (lambda: Architecture.from_dict([("widths", (4, 3))]), "data"),
        (lambda: Architecture.from_dict({1: 2, "widths": (3, 3)}), "1"),
    ],
)
def test_errors_are_of_the_family_and_name_the_argument(call, named):
    with pytest.raises(AgAttentionError) as err:
        call()
    assert isinstance(err.value, InvalidArgumentError)
    assert named in str(err.value)


def test_errors_module_holds_every_documented_error():
    assert issubclass(NoClearGapError, ComputationError)
    # the old import path still works
    from ag_attention._numeric import NoClearGapError as N2

    assert N2 is NoClearGapError


def test_figure1_checks_survive_python_O():
    """``verify_slice`` raises ComputationError on a wrong claim even under ``python -O`` (no bare assert)."""
    code = (
        "from ag_attention._reproduce import figure1\n"
        "figure1.F = lambda x, y, w: 1\n"
        "from ag_attention._errors import ComputationError\n"
        "try:\n    figure1.verify_slice()\nexcept ComputationError as e:\n    print('refused:', e)\n"
    )
    r = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0 and "refused: Figure 1 check failed" in r.stdout, r.stderr


# ------------------------------------------------------------------ numerics that must not lie
@pytest.mark.parametrize("temperature", [1e-6, 1e-300, 1e300])
def test_temperature_only_rescales_A(temperature):
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=2, normalized=True, temperature=temperature))
    assert r.dimension == 24 == r.expected.value and r.agrees is True
    assert r.computed_temperature == 1.0 and "only rescales A" in str(r)


def test_too_few_samples_is_no_numerical_verdict():
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=2, normalized=True), samples=1)
    assert r.dimension is None and "too few samples" in r.undecided
    assert r.agrees is None and "DIFFERS" not in str(r) and r.to_dict()["agrees"] is None


def test_a_numerical_difference_is_never_a_proven_one():
    """A float64 rank below the formula is reported as a numerical difference, never as DIFFERS."""
    # one token is outside Thm. 3.9 and lower: the numerical rank is below the formula
    r = numerical_dimension(Architecture((3, 1), (3,), tokens=2, normalized=True))
    assert r.agrees in (True, None)
    lightning = numerical_dimension(Architecture((3, 1), (3,), tokens=1))  # 8, Cor. 3.3 says 11
    assert lightning.dimension == 8 and lightning.agrees is None
    assert "differs numerically" in lightning.comparison() and "not a proof" in lightning.comparison()
    assert "DIFFERS" not in str(lightning)


def test_saturated_softmax_gives_no_verdict(monkeypatch):
    """Weights of 0 and 1 to machine precision: the softmax's derivative is lost, so no verdict."""
    from ag_attention._numeric import spectrum

    big = spectrum.sample_weights

    def saturating(arch, rng):  # logits of order 1e4: every softmax row is one-hot in float64
        return big(arch, rng) * 100.0

    monkeypatch.setattr(spectrum, "sample_weights", saturating)
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=2, normalized=True), raise_on_no_gap=False)
    assert r.dimension is None and r.undecided.startswith("saturated softmax")


# ------------------------------------------------------------------ property tests
_ANY = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4),
    st.lists(st.integers(-2, 6), max_size=4), st.tuples(st.integers(-2, 6), st.integers(-2, 6)),
    st.frozensets(st.integers(1, 5), max_size=3), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(widths=_ANY, ranks=_ANY, tokens=_ANY, heads=_ANY, skip=_ANY, normalized=_ANY, temperature=_ANY,
       parametrization=st.one_of(_ANY, st.sampled_from(["QKV", "AV"])))
def test_architecture_is_valid_or_an_invalid_architecture_error(widths, ranks, tokens, heads, skip, normalized,
                                                               temperature, parametrization):
    kwargs = dict(widths=widths, ranks=ranks, tokens=tokens, heads=heads, skip=skip, normalized=normalized,
                  temperature=temperature, parametrization=parametrization)
    try:
        arch = Architecture(**kwargs)
    except InvalidArchitectureError as exc:
        assert exc.field in str(exc)
        return
    assert arch.parameter_count > 0 and len(arch.widths) >= 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(samples=_ANY, seed=_ANY, prime=st.one_of(_ANY, st.sampled_from([101, 2**31 - 1, 2**31, 4, 65521])),
       max_doublings=_ANY)
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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(samples=_ANY, seed=_ANY, min_gap=_ANY, raise_on_no_gap=_ANY)
def test_numerical_dimension_arguments_give_a_result_or_a_named_error(samples, seed, min_gap, raise_on_no_gap,
                                                                       monkeypatch):
    monkeypatch.setenv("AG_ATTENTION_MEMORY_LIMIT", "200M")
    arch = Architecture((3, 2), (2,), tokens=2, normalized=True)
    try:
        r = numerical_dimension(arch, samples=samples, seed=seed, min_gap=min_gap, raise_on_no_gap=raise_on_no_gap)
    except NoClearGapError:
        return
    except InvalidArgumentError as exc:
        assert any(name in str(exc) for name in ("samples", "seed", "min_gap", "raise_on_no_gap")), exc
        return
    assert r.dimension is None or 0 <= r.dimension <= r.parameters


@settings(max_examples=100, deadline=None)
@given(A=st.one_of(_ANY, st.lists(st.lists(st.integers(-3, 3), min_size=1, max_size=3), min_size=1, max_size=3)),
       V=st.one_of(_ANY, st.lists(st.lists(st.integers(-3, 3), min_size=1, max_size=3), min_size=1, max_size=2)),
       dim=_ANY)
def test_certify_gives_a_verdict_or_a_named_error(A, V, dim):
    try:
        v = certify(A, V, dimension=dim)
    except InvalidArgumentError as exc:
        assert any(name in str(exc) for name in ("A", "V", "dimension")), exc
        return
    assert v.singular in (True, False, None)


def test_fractions_are_accepted_by_certify():
    v = certify([[Fraction(1, 2), 2], [3, 4]], [[1, 1]], dimension=5)
    assert v.singular is False
