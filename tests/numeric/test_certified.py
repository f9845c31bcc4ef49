"""Certified dimensions of softmax networks: ball-arithmetic lower bounds, symmetry upper bounds."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._models.formulas import cor38
from ag_attention._numeric import numerical_dimension
from ag_attention._numeric.certified import (
    INPUT_DENOMINATOR,
    WEIGHT_DENOMINATOR,
    ball_minor,
    certify_dimension,
    pivoted_selection,
    rational_point,
)
from tests.helpers import generator, seed


def _thm39(d, e, a):
    r = min(a, d)
    return r * (2 * d - r) + d * e


def test_the_point_is_dyadic():
    arch = Architecture((4, 3, 3), (2, 2), tokens=3, normalized=True)
    theta, X = rational_point(arch, seed(), 5)
    assert np.array_equal(theta * WEIGHT_DENOMINATOR, np.round(theta * WEIGHT_DENOMINATOR)) and np.all(theta != 0)
    assert np.array_equal(X * INPUT_DENOMINATOR, np.round(X * INPUT_DENOMINATOR))


def test_pivoted_selection_picks_independent_columns():
    A = np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 1.0], [1.0, 2.0, 1.0]])
    cols = pivoted_selection(A, 3)
    assert len(cols) == 2 and 2 in cols  # columns 0 and 1 are parallel


def test_pivoted_selection_does_not_follow_the_rounding():
    """Unit columns (a normalized Jacobian) tie at the first step: the smaller index wins, whatever the last bits
    of the arithmetic (another BLAS kernel) say, so every machine proves the same minor."""
    rng = generator(5)
    A = rng.standard_normal((12, 8))
    A /= np.linalg.norm(A, axis=0)
    chosen = pivoted_selection(A, 5)
    assert chosen[0] == 0 and len(set(chosen)) == 5
    for _ in range(10):  # rounding-sized perturbations (1e-15 relative) never change the selection
        assert pivoted_selection(A * (1 + 1e-15 * rng.standard_normal(A.shape)), 5) == chosen
    # a column larger by more than the tie tolerance is a real pivot
    B = A.copy()
    B[:, 3] *= 1 + 1e-6
    assert pivoted_selection(B, 5)[0] == 3


@pytest.mark.parametrize(
    "d, e, a, t", [(d, e, a, t) for d in (1, 2, 3, 4) for e in (1, 2, 3) for a in (1, 2, 3, 5) for t in (2, 3)]
)
def test_single_layers_certified_against_theorem_39(d, e, a, t):
    c = certify_dimension(Architecture((d, e), (a,), tokens=t, normalized=True), seed=seed())
    assert c.certified and c.lower == c.upper == _thm39(d, e, a), c.describe()
    assert c.determinant is not None and c.determinant.excludes_zero and c.determinant.size == c.lower


def test_one_token_is_not_certified():
    """t = 1: the softmax is the constant 1, phi(x) = V x, dim = d d' < the symmetry bound."""
    c = certify_dimension(Architecture((3, 2), (2,), tokens=1, normalized=True), seed=seed())
    assert not c.certified and c.lower == 6 and c.upper == _thm39(3, 2, 2) == 14
    assert "not certified: lower bound 6 by ball arithmetic, upper bound 14" in c.describe()


@pytest.mark.parametrize(
    "widths, ranks, t",
    [
        ((3, 3, 3), (2, 2), 3),
        ((4, 2, 4), (2, 2), 3),
        ((5, 3, 2), (2, 2), 2),
        ((4, 4, 4, 4), (2, 2, 2), 3),
        ((6, 4, 3, 3), (3, 2, 2), 2),
        ((6, 6, 6), (3, 3), 3),
        ((5, 5, 5, 5), (2, 2, 2), 2),
    ],
    ids=str,
)
def test_deep_networks_certified_against_eq16(widths, ranks, t):
    arch = Architecture(widths, ranks, tokens=t, normalized=True)
    c = certify_dimension(arch, seed=seed())
    assert c.certified and c.lower == cor38(widths, ranks) + len(ranks), c.describe()


def test_output_width_one_where_eq16_is_not_reached():
    """widths 5,4,1 ranks 2,1: Eq. 16 (= the symmetry bound) says 31; a minor of size 30 is proven, none of 31."""
    c = certify_dimension(Architecture((5, 4, 1), (2, 1), tokens=3, normalized=True), seed=seed())
    assert not c.certified and (c.lower, c.upper) == (30, 31)


def test_too_few_samples_is_not_certified():
    c = certify_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True), samples=1, seed=seed())
    assert not c.certified and c.lower is not None and c.lower < c.upper == 24
    assert "not certified" in c.describe()


def test_a_singular_selection_is_not_certified():
    arch = Architecture((4, 3), (2,), tokens=3, normalized=True)
    c = certify_dimension(arch, rank=25, seed=seed())  # the dimension is 24 (proven): every 25 x 25 minor is 0
    assert not c.certified and c.lower is None and "fewer than 25" in c.note
    theta, X = rational_point(arch, seed(), 8)
    # rows and columns 0..24: a 25 x 25 minor, exactly 0; its ball contains 0
    det = ball_minor(arch, theta, X, list(range(25)), list(range(25)), 128)
    assert not det.excludes_zero and det.text.startswith("[+/-")
    # a minor with a repeated column
    det = ball_minor(arch, theta, X, [0, 1, 2], [20, 20, 21], 128)
    assert not det.excludes_zero


def test_causal_softmax_is_certified():
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True, causal=True), seed=seed())
    assert r.certified and r.dimension == 24
