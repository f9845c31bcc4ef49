"""One float64 spectrum (ag_attention._numeric.spectrum): saturated softmax rows, and no verdict where the softmax
saturates."""

import numpy as np

from ag_attention import Architecture
from ag_attention._numeric import numerical_dimension
from tests.helpers import seed


def test_saturated_softmax_gives_no_verdict(monkeypatch):
    """Weights of 0 and 1 to machine precision: the softmax's derivative is lost, so no verdict."""
    from ag_attention._numeric import spectrum

    big = spectrum.sample_weights

    def saturating(arch, rng):  # logits of order 1e4: every softmax row is one-hot in float64
        return big(arch, rng) * 100.0

    monkeypatch.setattr(spectrum, "sample_weights", saturating)
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=2, normalized=True), raise_on_no_gap=False, seed=seed())
    assert r.dimension is None and r.undecided.startswith("saturated softmax")


def test_causal_softmax_first_row_is_not_saturated():
    """With a causal mask the first attention row is [1, 0, ...] by construction: not a saturated softmax."""
    from ag_attention._numeric.spectrum import saturated_fraction

    arch = Architecture((4, 3), (2,), tokens=3, normalized=True, causal=True)
    r = numerical_dimension(arch, seed=seed())
    assert r.dimension is not None and r.undecided == ""
    W = np.array([[[1.0, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]]])
    assert saturated_fraction(arch, [W]) == 0.0
    # a fraction of rows is a count over a count: one float division, exact as written (1 / 3 rounds the same way)
    assert saturated_fraction(arch.with_(causal=False), [W]) == 1 / 3
    W[0, 1] = [1.0, 0.0, 0.0]  # a row with two allowed tokens that puts all weight on one: saturated
    assert saturated_fraction(arch, [W]) == 1 / 2
    # one token: the softmax is the constant 1, not saturated; phi(x) = V x has dimension d d'
    one = Architecture((3, 2), (2,), tokens=1, normalized=True)
    assert saturated_fraction(one, [np.ones((4, 1, 1))]) == 0.0
    r = numerical_dimension(one, seed=seed())
    assert r.dimension == 6 and r.undecided == "" and not r.certified and (r.lower_bound, r.upper_bound) == (6, 14)


def test_inputs_are_scaled_to_a_responsive_softmax():
    """input_scale brings the first layer's softmax rows to a spread near 0.9 at small weights (transformers'
    initialisation scale), leaves lightning alone, and the rank at the scaled inputs is the rank (a gap appears)."""
    from ag_attention import Architecture
    from ag_attention._network import attention_weights
    from ag_attention._numeric import Float64, input_scale

    arch = Architecture((6, 6), (3,), tokens=3, heads=2, normalized=True, bias="qkvo")
    theta = np.random.default_rng(3).standard_normal(arch.parameter_count) * 0.02
    s = input_scale(arch, theta, 0)
    assert s > 4 and input_scale(arch.with_(normalized=False), theta, 0) == 1.0
    X = np.random.default_rng(4).standard_normal((16, 3, 6))
    rows = attention_weights(arch, Float64(), theta, X * s)[0].reshape(-1, 3)
    assert 0.6 < float(np.mean(rows.max(1) - rows.min(1))) <= 1.0
