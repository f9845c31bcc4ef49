"""Products of thin factors (ag_attention._point.factors): residues, exact ranks, singular values, blocks."""

from fractions import Fraction

import numpy as np

from ag_attention._point.factors import PRIME, near_equal_blocks, product_rank, product_singular_values, residues
from tests.helpers import SLOW_TESTS_ASKED, generator


def test_residues_are_the_exact_binary_values_mod_p():
    x = np.array([[0.1, -3.5, 1e-30], [2.0**60, 0.0, -7.25]], dtype=np.float64)
    expected = [
        [Fraction(v).numerator % PRIME * pow(Fraction(v).denominator, -1, PRIME) % PRIME for v in row]
        for row in x.tolist()
    ]
    assert residues(x, PRIME).tolist() == expected
    assert residues(x.astype(np.float32), PRIME).tolist() == [
        [Fraction(float(v)).numerator % PRIME * pow(Fraction(float(v)).denominator, -1, PRIME) % PRIME for v in row]
        for row in x.astype(np.float32).tolist()
    ]
    obj = np.array([[Fraction(1, 3), Fraction(-2)]], dtype=object)
    assert residues(obj, PRIME).tolist() == [[pow(3, -1, PRIME), PRIME - 2]]


def test_product_rank_is_exact_over_qq():
    rng = generator(1)
    L, R = rng.standard_normal((6, 2)), rng.standard_normal((2, 6))
    assert product_rank(L, R)[:2] == (2, 2)
    L[:, 1] = 0  # one column of L zero: rank 1, proven by the exact integer rank, not guessed from GF(p)
    rank, bound, method = product_rank(L, R)
    assert (rank, bound) == (1, 2) and "exact over QQ" in method
    # orthogonal factors: the product is exactly zero although neither factor is
    assert product_rank(np.array([[1.0, 0.0]]), np.array([[0.0], [3.0]]))[0] == 0


def test_singular_values_from_the_factors_match_the_product():
    rng = generator(2)
    L, R = rng.standard_normal((30, 4)), rng.standard_normal((4, 20))
    s, err = product_singular_values(L, R)
    assert np.allclose(s, np.linalg.svd(L @ R, compute_uv=False)[:4], rtol=1e-12) and 0 < err < 1e-10


def test_near_equal_blocks():
    """Relative gaps at most gap_rtol (1e-6 by default) among the values above rtol times the largest; random
    heads pass (Gaussian factors 256 x 64 and 64 x 256: 25 heads, none flagged; make test-all: 100)."""
    s = np.array([3.0, 2.0, 2.0 - 1e-7, 2.0 - 2e-7, 1.0, 1e-9, 1e-9])
    assert near_equal_blocks(s, 1e-3) == ((1, 3),)
    assert near_equal_blocks(np.array([3.0, 2.0, 2.0 - 1e-5, 1.0]), 1e-3) == ()  # 5e-6 apart: distinct at 1e-6
    assert near_equal_blocks(np.array([3.0, 2.0, 2.0 - 1e-5, 1.0]), 1e-3, gap_rtol=1e-4) == ((1, 2),)
    assert near_equal_blocks(np.array([3.0, 2.0, 2.0 - 1e-5, 1.0]), 1e-3, error=1e-5) == ((1, 2),)
    assert near_equal_blocks(np.array([0.0, 0.0]), 1e-3) == ()
    rng = np.random.default_rng(20261129)
    flagged = 0
    for _ in range(100 if SLOW_TESTS_ASKED else 25):
        s, err = product_singular_values(rng.standard_normal((256, 64)) * 0.02, rng.standard_normal((64, 256)) * 0.02)
        flagged += bool(near_equal_blocks(s[:64], 1e-3, error=err))
    assert flagged == 0
