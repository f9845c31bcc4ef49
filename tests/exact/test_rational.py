"""Exact rational matrices (ag_attention._exact.rational): validation, integer scaling, ranks, rank factorization."""

from fractions import Fraction

import numpy as np
import pytest

from ag_attention._errors import InvalidArgumentError
from ag_attention._exact.rational import (
    check_weight_shapes,
    exact_rank,
    integral,
    rank_factorization,
    rank_mod_p,
    rational_matrix,
)


def test_rational_matrix_accepts_exact_entries():
    M = rational_matrix([[1, Fraction(1, 2)], [np.int64(3), 0.25]], "A")
    assert M == [[1, Fraction(1, 2)], [3, 0.25]]
    assert rational_matrix(np.arange(6).reshape(2, 3)) == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize(
    "bad, text",
    [
        ([1, 2], "A=[1, 2]: must be a non-empty rectangular matrix"),
        ([[1, 2], [3]], "A=[[1, 2], [3]]: must be a non-empty rectangular matrix"),
        ([[]], "A=[[]]: must be a non-empty rectangular matrix"),
        ("AV", "A='AV': must be a non-empty rectangular matrix"),
        ([[1, True]], "A: entry True is not a rational number"),
        ([[1, "2"]], "A: entry '2' is not a rational number"),
        ([[1, complex(1, 1)]], "A: entry (1+1j) is not a rational number"),
        ([[1.0, float("nan")]], "A: entry nan is not a finite number"),
        ([[float("inf")]], "A: entry inf is not a finite number"),
    ],
)
def test_rational_matrix_names_the_bad_value(bad, text):
    with pytest.raises(InvalidArgumentError) as err:
        rational_matrix(bad, "A")
    assert str(err.value).startswith(text), str(err.value)


def test_weight_shapes():
    check_weight_shapes([[1, 2], [3, 4]], [[1, 1]])  # d = 2, d' = 1
    with pytest.raises(InvalidArgumentError, match=r"A: must be square \(d x d\), got 2 x 3"):
        check_weight_shapes([[1, 2, 3], [4, 5, 6]], [[1, 1, 1]])
    with pytest.raises(InvalidArgumentError, match=r"V: must have d = 2 columns \(d' x d\), got 1 x 3"):
        check_weight_shapes([[1, 2], [3, 4]], [[1, 1, 1]])


def test_integral_clears_the_denominators():
    M = integral([[Fraction(1, 2), Fraction(1, 3)], [1, 0.25]])
    assert M.tolist() == [[6, 4], [12, 3]]  # times lcm(2, 3, 4) = 12
    assert all(type(v) is int for v in M.flat)
    assert integral([[2, -3]]).tolist() == [[2, -3]]
    assert integral([[Fraction(4, 2), 1.0]]).tolist() == [[2, 1]]  # whole values: no scaling


def test_exact_rank_and_rank_mod_p():
    M = [[Fraction(1, 2), 1], [1, 2]]  # rank 1 over QQ
    assert exact_rank(M) == rank_mod_p(M) == 1
    assert exact_rank([[1, 2], [3, 4]]) == 2
    # singular modulo 7 only: GF(p) gives a lower bound of the rank over QQ
    M = [[1, 2], [3, 13]]
    assert (exact_rank(M), rank_mod_p(M, 7), rank_mod_p(M, 101)) == (2, 1, 2)
    # entries beyond int64 are reduced exactly
    big = [[2**70, 1], [2**71, 2]]
    assert exact_rank(big) == rank_mod_p(big) == 1
    assert exact_rank(np.zeros((0, 3), dtype=object)) == rank_mod_p(np.zeros((0, 3), dtype=object)) == 0


@pytest.mark.parametrize(
    "A",
    [
        [[1, 2, 3], [2, 4, 6], [1, 0, 1]],  # rank 2
        [[Fraction(1, 2), 0], [0, Fraction(-3, 4)]],  # rank 2, fractions
        [[1, 1], [1, 1]],  # rank 1
        [[0, 0], [0, 0]],  # rank 0
    ],
)
def test_rank_factorization_reproduces_the_matrix(A):
    Q, K = rank_factorization(A)
    r = exact_rank(A)
    assert len(Q) == len(K) == r
    if r:
        QtK = (np.array(Q, dtype=object).T.dot(np.array(K, dtype=object))).tolist()
        assert QtK == [[Fraction(v) for v in row] for row in A]
    with pytest.raises(InvalidArgumentError, match="must be a non-empty rectangular matrix"):
        rank_factorization([[1, 2], [3]])
