"""The BLAS rank over GF(p) against FLINT's, on matrices built to have a known rank."""

import numpy as np
import pytest

from ag_attention import InvalidArgumentError
from ag_attention._exact import linalg
from ag_attention._exact.modular_lu import BLAS_PRIMES, LEAF, MAX_INNER, rank_blas, rank_blas_flops, rank_blas_memory

P = BLAS_PRIMES[0]


def low_rank(rng, m, n, r, p=P):
    """A product of random m x r and r x n residue matrices, reduced mod p (rank r for generic factors)."""
    B = rng.integers(0, p, (m, r), dtype=np.int64)
    C = rng.integers(0, p, (r, n), dtype=np.int64)
    return (B @ C) % p  # exact in int64: r products below 2^42 each, r <= 2^20


@pytest.mark.parametrize(
    "m,n,r",
    [
        (1, 1, 1),
        (5, 7, 3),
        (40, 33, 33),
        (97, 130, 61),
        (300, 260, 200),
        (3 * LEAF + 5, 2 * LEAF + 3, LEAF + 1),
        (1100, 1040, 1000),
    ],
)
def test_rank_equals_flint(m, n, r):
    rng = np.random.default_rng([m, n, r])
    M = low_rank(rng, m, n, r)
    assert rank_blas(M, P) == linalg.rank_python_flint(M, P) == r


def test_structured_matrices():
    """Zero columns and rows, repeated rows, a pivot found far down, the transpose: all as FLINT says."""
    rng = np.random.default_rng(5)
    M = low_rank(rng, 200, 150, 90)
    M[:, ::7] = 0
    M[5] = M[17]
    M[:150, 3] = 0
    M[199, 3] = 11
    want = linalg.rank_python_flint(M, P)
    assert rank_blas(M, P) == want == rank_blas(M.T, P)
    assert rank_blas(np.zeros((50, 40), dtype=np.int64), P) == 0
    assert rank_blas(np.eye(70, dtype=np.int64) * (P - 1), P) == 70


def test_entries_reduced_and_negative():
    """Entries outside [0, p) (negative, multiples of p) are taken mod p, as FLINT takes them."""
    rng = np.random.default_rng(9)
    M = low_rank(rng, 80, 60, 30)
    shifted = M - 3 * P * rng.integers(-2, 3, M.shape)
    assert rank_blas(shifted, P) == 30
    assert rank_blas(np.array([[P, 2 * P], [1, 2]]), P) == 1


def test_long_products_exact():
    """A matrix of full rank beside a rank drop hidden in long inner products (more than MAX_INNER columns in
    one update): exactness of the delayed reduction."""
    rng = np.random.default_rng(11)
    n = MAX_INNER + 300
    M = rng.integers(0, P, (n + 10, n), dtype=np.int64)
    M[:, -1] = (M[:, 0] * 3 + M[:, 1] * (P - 1)) % P  # dependent on the first two columns
    assert rank_blas(M, P) == n - 1


def test_linalg_rank_takes_the_blas_route_for_small_primes():
    rng = np.random.default_rng(2)
    M = low_rank(rng, linalg.BLAS_MIN_SIDE + 20, linalg.BLAS_MIN_SIDE + 4, 900)
    assert linalg.uses_blas(*M.shape, P) and not linalg.uses_blas(*M.shape, 2147483647)
    seen = []
    assert linalg.rank(M, P, seen.append) == 900
    assert sum(seen) == min(M.shape)  # the progress callback covers every column
    assert linalg.rank_memory(*M.shape, P) == rank_blas_memory(*M.shape) > linalg.rank_memory(*M.shape)


def test_costs_from_sizes():
    assert rank_blas_flops(100, 100) == pytest.approx(2 * (100**3 - 100**3 + 100**3 / 3))
    assert rank_blas_flops(100, 100, 10) < rank_blas_flops(100, 100)
    assert rank_blas_memory(1000, 2000) >= 3 * 8 * 1000 * 2000


@pytest.mark.parametrize("p", [2, 2**21 + 17, 2147483647, "7", 7.0])
def test_bad_prime(p):
    with pytest.raises(InvalidArgumentError, match="p="):
        rank_blas(np.eye(3, dtype=np.int64), p)


def test_bad_matrix():
    with pytest.raises(InvalidArgumentError, match="2-D"):
        rank_blas(np.zeros(3, dtype=np.int64), P)
    with pytest.raises(InvalidArgumentError, match="integer"):
        rank_blas(np.eye(3), P)


def test_the_route_needs_an_odd_prime_below_2_21():
    assert not linalg.uses_blas(2000, 2000, 2) and linalg.uses_blas(2000, 2000, 3)
    assert not linalg.uses_blas(2000, 2000, 2**21 + 17) and not linalg.uses_blas(1000, 2000, P)
    M = (np.arange(1100 * 1030).reshape(1100, 1030) % 2).astype(np.int64)
    assert linalg.rank(M, 2) == linalg.rank_python_flint(M, 2)  # p = 2 stays with FLINT, as before
