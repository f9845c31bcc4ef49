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
