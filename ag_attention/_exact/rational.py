"""Exact rational matrices: validation, integer scaling, ranks over QQ and GF(p), rank factorization.

The pointwise geometry of one layer (:mod:`ag_attention._exact.onelayer`) works
with weights and Jacobians whose entries are exact rationals (ints,
Fractions, python-flint numbers, or floats with an exact value).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from . import linalg
from .field import DEFAULT_PRIME

__all__ = ["rational_matrix", "check_weight_shapes", "integral", "exact_rank", "rank_mod_p", "rank_factorization"]


def rational_matrix(M: Any, name: str = "M") -> list[list[Any]]:
    """A non-empty rectangular matrix of exact rationals (int, Fraction, or float with an exact value)."""
    try:
        arr = np.asarray(M, dtype=object)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 2 or 0 in arr.shape:
        raise InvalidArgumentError(f"{name}={M!r}: must be a non-empty rectangular matrix (list of equal-length rows)")
    for v in arr.flat:
        if isinstance(v, bool) or not isinstance(
            v, (int, Fraction, np.integer, float, linalg.RationalNumber, linalg.IntegerNumber)
        ):
            raise InvalidArgumentError(f"{name}: entry {v!r} is not a rational number (int or Fraction)")
        if isinstance(v, float) and not math.isfinite(v):
            raise InvalidArgumentError(f"{name}: entry {v!r} is not a finite number")
    return [list(row) for row in arr]


def check_weight_shapes(A: list[list[Any]], V: list[list[Any]]) -> None:
    d = len(A)
    if len(A[0]) != d:
        raise InvalidArgumentError(f"A: must be square (d x d), got {d} x {len(A[0])}")
    if len(V[0]) != d:
        raise InvalidArgumentError(f"V: must have d = {d} columns (d' x d), got {len(V)} x {len(V[0])}")


def integral(M: Any) -> np.ndarray:
    """A rational matrix times the lcm of its denominators: an integer (object) array, same rank."""
    M = np.asarray(M, dtype=object)
    dens = {Fraction(v).denominator for v in M.flat if not isinstance(v, (int, np.integer))}
    den = math.lcm(*dens) if dens else 1
    out: np.ndarray
    if den == 1:
        out = np.vectorize(lambda v: int(Fraction(v)), otypes=[object])(M) if M.size else M
    else:
        out = np.vectorize(lambda v: int(Fraction(v) * den), otypes=[object])(M)
    return out


def exact_rank(M: Any) -> int:
    """Rank over QQ (exact: the integer matrix :func:`integral` gives, by :func:`linalg.rank_rational`)."""
    M = integral(M)
    if M.size == 0:
        return 0
    return linalg.rank_rational(M.tolist())


def rank_mod_p(M: Any, p: int = DEFAULT_PRIME) -> int:
    """Rank over GF(p) of a rational matrix (a lower bound for the rank over QQ)."""
    M = integral(M)
    if M.size == 0:
        return 0
    small = M.astype(np.int64) if all(abs(int(v)) < 2**62 for v in M.flat) else None
    if small is not None:
        return linalg.rank(np.remainder(small, p), p)
    return linalg.rank(np.vectorize(lambda v: int(v) % p, otypes=[np.int64])(M), p)


def rank_factorization(A: Any) -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    """``(Q, K)`` with ``A = Q^T K``, ``Q, K`` of size ``rank A x d`` (exact over QQ)."""
    M = [[Fraction(v) for v in row] for row in rational_matrix(A)]
    R, r = linalg.rref_rational(M)
    d, n = len(M), len(M[0])
    pivots = []
    for i in range(r):
        for j in range(n):
            if R[i][j] != 0:
                pivots.append(j)
                break
    # K = the r independent rows of the RREF; A = C K with C = columns of A at the pivots
    K = R[:r]
    C = [[M[k][pj] for pj in pivots] for k in range(d)]
    Q = [[C[k][c] for k in range(d)] for c in range(r)]
    return Q, K
