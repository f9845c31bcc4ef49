"""numerical_dimension: normalized attention (Thm. 3.9, Eq. 16), gaps, sample counts, refusals, progress."""

import sys

import pytest
from hypothesis import HealthCheck, given, settings

from ag_attention import Architecture
from ag_attention._errors import ComputationError, InvalidArgumentError
from ag_attention._models.formulas import cor38
from ag_attention._numeric import NoClearGapError, numerical_dimension
from tests.helpers import ANY_VALUE, seed


@pytest.mark.parametrize("d, e, a, t", [(3, 2, 2, 2), (4, 3, 2, 3), (4, 1, 4, 2), (3, 3, 1, 3)])
def test_one_normalized_layer_theorem_39(d, e, a, t):
    r = numerical_dimension(Architecture((d, e), (a,), tokens=t, normalized=True), seed=seed())
    assert r.dimension == a * (2 * d - a) + d * e == r.expected.value  # no rescaling: one more than Cor. 3.3
    assert r.expected.formula == "Thm. 3.9" and r.gap.clear and r.gap.gap > 8
    lightning = numerical_dimension(Architecture((d, e), (a,), tokens=t), seed=seed())
    assert lightning.dimension == r.dimension - 1


@pytest.mark.parametrize("widths, ranks", [((3, 3, 3), (2, 2)), ((4, 2, 4), (2, 2)), ((4, 3, 3, 2), (2, 2, 2))])
def test_deep_normalized_eq16(widths, ranks):
    r = numerical_dimension(Architecture(widths, ranks, tokens=3, normalized=True), seed=seed())
    assert r.dimension == cor38(widths, ranks) + len(ranks) == r.expected.value
    assert r.expected.conjectural and r.certified and r.to_dict()["numerical"] is False
    assert r.to_dict()["certified"] is True and r.lower_bound == r.upper_bound == r.dimension
    uncertified = numerical_dimension(
        Architecture(widths, ranks, tokens=3, normalized=True), certify=False, seed=seed()
    )
    assert uncertified.certified is False


@pytest.mark.parametrize(
    "widths, ranks, t, value",
    [
        ((8, 8), (4,), 2, 112),  # Thm. 3.9: a(2d - a) + d d'
        ((12, 12), (6,), 3, 252),
        ((12, 12, 12), (6, 6), 3, 360),  # Eq. 16
    ],
)
def test_default_samples_reach_the_dimension(widths, ranks, t, value):
    # softmax rows sum to one: a sample adds only t (t - 1) directions beyond the values,
    # so the default number of samples must account for it
    r = numerical_dimension(Architecture(widths, ranks, tokens=t, normalized=True), seed=seed())
    assert r.dimension == value == r.expected.value and r.gap.gap > 8


def test_numerical_dimension_refuses_without_a_clear_gap():
    arch = Architecture((3, 2), (2,), tokens=2, normalized=True)
    with pytest.raises(NoClearGapError, match="no clear gap"):
        numerical_dimension(arch, min_gap=30, certify=False, seed=seed())
    r = numerical_dimension(arch, min_gap=30, raise_on_no_gap=False, certify=False, seed=seed())
    assert r.dimension is None and r.to_dict()["clear_gap"] is False
    # a certificate needs no gap: the minor of the size of the symmetry bound is proven nonzero
    r = numerical_dimension(arch, min_gap=30, seed=seed())
    assert r.certified and r.dimension == 14 and r.to_dict()["clear_gap"] is False
    assert isinstance(NoClearGapError("x"), ComputationError)


def test_numerical_dimension_shows_its_steps_on_a_terminal(monkeypatch, capsys):
    from ag_attention import _progress as progress
    from tests.helpers import Terminal

    monkeypatch.setattr(progress, "DELAY", 0.0)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)  # in the test body: pytest's capture resets it after set-up
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True), seed=seed())
    text = err.getvalue()
    assert "numerical dimension of widths 4,3 ranks 2 t=3" in text
    assert all(f"Jacobian of {n} samples" in text for n, _ in r.history) and "SVD of" in text  # doublings too
    assert f"/{2 * len(r.history)} [" in text  # two steps a spectrum
    assert capsys.readouterr().out == ""  # standard output is never touched
    err.truncate(0)
    with progress.quiet():
        numerical_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True), seed=seed())
    assert err.getvalue() == ""


@pytest.mark.parametrize("temperature", [1e-6, 1e-300, 1e300])
def test_temperature_only_rescales_A(temperature):
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=2, normalized=True, temperature=temperature), seed=seed())
    assert r.dimension == 24 == r.expected.value and r.agrees is True
    assert r.computed_temperature == 1.0 and "only rescales A" in str(r)


def test_too_few_samples_is_no_numerical_verdict():
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=2, normalized=True), samples=1, seed=seed())
    assert r.dimension is None and "too few samples" in r.undecided
    assert r.agrees is None and "DIFFERS" not in str(r) and r.to_dict()["agrees"] is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(samples=ANY_VALUE, seed=ANY_VALUE, min_gap=ANY_VALUE, raise_on_no_gap=ANY_VALUE)
def test_numerical_dimension_arguments_give_a_result_or_a_named_error(
    samples, seed, min_gap, raise_on_no_gap, monkeypatch
):
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
