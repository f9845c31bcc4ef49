"""Degree of one layer: the closed formula (docs/math/degree.md) against known Macaulay2 degrees."""

from fractions import Fraction
from math import comb, factorial

import pytest

from ag_attention import Architecture
from ag_attention._algebra.degree import degree_formula, determinantal_degree, symmetric_determinantal_degree
from ag_attention._errors import InvalidArgumentError
from ag_attention._models.formulas import cor33, symmetric_rank_dimension

# degrees measured with Macaulay2 (kernel of the parametrization) by the team
M2_DEGREES = {(2, 1, 2): 4, (3, 1, 2): 108, (3, 2, 1): 756, (3, 2, 3): 1287}


@pytest.mark.parametrize("size, degree", sorted(M2_DEGREES.items()))
def test_formula_matches_macaulay2_degrees(size, degree):
    f = degree_formula(*size)
    assert f.degree == degree and f.fiber == 1 and f.applies


def test_swap_halves_the_degree():
    # d' = 1, a = 1: the map is 2:1 (the team's counts were twice the degree)
    for d, deg in ((2, 3), (3, 45), (4, 840)):
        f = degree_formula(d, 1, 1)
        assert (f.degree, f.fiber, f.count) == (deg, 2, 2 * deg)
    assert degree_formula(1, 1, 1).fiber == 1  # d = 1: a line
    assert degree_formula(3, 2, 1).fiber == 1 and degree_formula(3, 1, 2).fiber == 1


def test_harris_determinantal_degree():
    # Harris, Ex. 19.10: prod_{i=0}^{n-k-1} (m+i)! i! / ((k+i)! (m-k+i)!) for m x n, rank <= k
    for d in range(1, 8):
        for a in range(1, d + 1):
            v = Fraction(1)
            for i in range(d - a):
                v *= Fraction(factorial(d + i) * factorial(i), factorial(a + i) * factorial(d - a + i))
            assert determinantal_degree(d, a) == v
    assert [determinantal_degree(3, 1), determinantal_degree(4, 1)] == [6, 20]  # Segre P2xP2, P3xP3
    assert determinantal_degree(5, 9) == 1


def test_symmetric_determinantal_degree():
    assert symmetric_determinantal_degree(3, 1) == 4  # Veronese surface
    assert symmetric_determinantal_degree(4, 1) == 8  # v_2(P^3)
    assert symmetric_determinantal_degree(4, 3) == 4  # det
    assert all(symmetric_determinantal_degree(d, 1) == 2 ** (d - 1) for d in range(1, 8))  # v_2(P^{d-1})


def test_formula_dimension_is_cor33_and_the_one_token_bound():
    for d in range(1, 6):
        for e in range(1, 4):
            for a in range(1, d + 2):
                f = degree_formula(d, e, a)
                assert f.dimension == cor33(d, e, a)
                assert f.degree * f.fiber == comb(f.dimension - 1, d * e - 1) * determinantal_degree(d, a)
                g = degree_formula(d, e, a, tokens=1)
                assert g.dimension == symmetric_rank_dimension(d, min(2 * a, d)) + d * e - 1


def test_formula_accepts_architectures_and_unpacks():
    f = degree_formula(Architecture((3, 2), (1,), tokens=3))
    assert f.degree == 756
    deg, why = degree_formula(Architecture.single_layer(2, 1))  # AV: A free
    assert deg == 4 and "binom" in why
    t1 = degree_formula(3, 1, 1, tokens=1)
    assert (t1.degree, t1.fiber) == (15, 3)  # Chow variety of triangles in P^2
    assert degree_formula(2, 1, 2, tokens=1).degree == 1  # every binary cubic is quadric x line
    with pytest.raises(InvalidArgumentError, match="d_out"):
        degree_formula(2, 0, 1)
    with pytest.raises(InvalidArgumentError, match="one plain lightning layer"):
        degree_formula(Architecture((2, 2, 2), (1, 1)))


def test_absurd_sizes_are_refused_by_the_digits_of_the_degree_before_any_product():
    """(5000, 5000, 3000): the degree has about 15.5 million digits; refused at once (a review saw Fraction
    arithmetic still running at 120 s). The estimate is within a digit of the exact length where it is computed."""
    import time

    from ag_attention._algebra.degree import MAX_DEGREE_DIGITS, degree_digits, degree_formula

    t0 = time.process_time()
    with pytest.raises(InvalidArgumentError, match="has about 15,537,089 digits"):
        degree_formula(5000, 5000, 3000)
    assert time.process_time() - t0 < 10  # CPU seconds: the refusal computes no product (a hang shows here)
    for size in [(3, 2, 3, 2), (5, 3, 3, 2), (20, 10, 10, 2), (60, 60, 30, 2), (7, 2, 2, 1), (3, 1, 1, 1)]:
        exact = len(str(degree_formula(*size).degree))
        assert exact <= degree_digits(*size) <= exact + 1, size
    assert len(str(degree_formula(60, 60, 30).degree)) < MAX_DEGREE_DIGITS
