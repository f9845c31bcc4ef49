"""Products of thin factors ``L R`` (``L``: ``m x k``, ``R``: ``k x n``, ``k`` small) without forming them in
QQ: the exact rank (over GF(p) by BLAS, over QQ by FLINT when the modular rank is below ``k``), the float64
singular values from the QR factors with their error bound, and blocks of near-equal singular values. What
:mod:`.heads` computes for every head's ``A_h = W_q,h^T W_k,h`` and ``V_h = W_O,h W_v,h`` (docs/math/point.md,
point-heads)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._exact import BLAS_PRIMES, linalg

__all__ = [
    "PRIME",
    "residues",
    "integer_rows",
    "product_rank",
    "product_singular_values",
    "near_equal_blocks",
    "GAP_RTOL",
]

#: the prime of the modular ranks: below 2^21, so a product of centred residues with an inner dimension up to
#: 4,096 is exact in float64 (the BLAS route)
PRIME = BLAS_PRIMES[0]
_EPS = float(np.finfo(np.float64).eps)


def residues(M: np.ndarray, p: int) -> np.ndarray:
    """The exact value of every entry of ``M`` modulo ``p`` (int64 in ``[0, p)``): a float by its exact binary
    value ``m 2^e`` (denominators are powers of two, invertible mod an odd ``p``), a Fraction by its own."""
    if M.dtype == object:
        out = np.empty(M.shape, dtype=np.int64)
        for idx, v in np.ndenumerate(M):
            q = Fraction(v)
            out[idx] = q.numerator % p * pow(q.denominator, -1, p) % p
        return out
    X = np.asarray(M, dtype=np.float64)  # float16/32/bf16 are exact in float64
    m, e = np.frexp(X)
    mant = np.ldexp(m, 53).astype(np.int64)  # |m| < 1: an exact integer below 2^53
    e = e.astype(np.int64) - 53
    low = int(e.min()) if e.size else 0
    powers = np.array([pow(2, x, p) for x in range(low, int(e.max()) + 1 if e.size else low + 1)], dtype=np.int64)
    return np.remainder(mant, p) * powers[e - low] % p


def _modular_product(L: np.ndarray, R: np.ndarray, p: int) -> np.ndarray:
    """``L R mod p`` of residues, through float64 BLAS on centred residues (exact: inner dimension <= 4,096)."""
    half = p // 2
    out = np.zeros((L.shape[0], R.shape[1]), dtype=np.float64)
    for s in range(0, L.shape[1], 4096):
        cl = np.where(L[:, s : s + 4096] > half, L[:, s : s + 4096] - p, L[:, s : s + 4096]).astype(np.float64)
        cr = np.where(R[s : s + 4096] > half, R[s : s + 4096] - p, R[s : s + 4096]).astype(np.float64)
        out = np.remainder(out + cl @ cr, p)
    return out.astype(np.int64)


def integer_rows(M: np.ndarray) -> list[list[int]]:
    """``M`` times one power of two (or the common denominator): Python integers, the same rank."""
    if M.dtype == object:
        den = math.lcm(*(Fraction(v).denominator for v in M.flat)) if M.size else 1
        return [[int(Fraction(v) * den) for v in row] for row in M]
    X = np.asarray(M, dtype=np.float64)
    m, e = np.frexp(X)
    mant = np.ldexp(m, 53).astype(np.int64)
    e = e.astype(np.int64) - 53
    low = int(e[mant != 0].min()) if np.any(mant) else 0
    return [[int(a) << int(b - low) if a else 0 for a, b in zip(ra, rb)] for ra, rb in zip(mant, e)]


def product_rank(L: np.ndarray, R: np.ndarray, p: int = PRIME) -> tuple[int, int, str]:
    """The rank over QQ of ``L R`` at the exact values, its largest possible value ``min(rows, inner, cols)``,
    and how it was proven: the GF(p) rank when it reaches that bound (a lower bound that meets the upper one),
    else the exact integer rank (FLINT) of the product of the factors scaled to integers."""
    if p >= 1 << 21:
        raise ValueError(f"product_rank: the prime {p} must be below 2^21 (the products run in float64)")
    m, k = L.shape
    n = R.shape[1]
    bound = min(m, k, n)
    if bound == 0:
        return 0, 0, "empty"
    Lp, Rp = residues(L, p), residues(R, p)
    if k <= min(m, n) and linalg.rank(Lp, p) == k and linalg.rank(Rp, p) == k:
        return k, bound, f"GF({p}): both factors of rank {k} = the bound"
    r = linalg.rank(_modular_product(Lp, Rp, p), p)
    if r == bound:
        return r, bound, f"GF({p}) rank = the bound"
    exact = linalg.integer_product_rank(integer_rows(L), integer_rows(R))
    return exact, bound, f"exact over QQ (FLINT; GF({p}) gave {r})"


def product_singular_values(L: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, float]:
    """The singular values of ``L R`` in float64 from the factors (``L = U_1 R_1``, ``R^T = U_2 R_2``, so
    ``L R = U_1 (R_1 R_2^T) U_2^T``: an SVD of the inner size), and their error bound
    ``4 k eps ||L||_2 ||R||_2``."""
    Lf, Rf = np.asarray(L, dtype=np.float64), np.asarray(R, dtype=np.float64)
    k = Lf.shape[1]
    if k >= min(Lf.shape[0], Rf.shape[1]):
        s = np.linalg.svd(Lf @ Rf, compute_uv=False)
        nl, nr = (np.linalg.norm(x, 2) if x.size else 0.0 for x in (Lf, Rf))
    else:
        r1: np.ndarray = np.linalg.qr(Lf, mode="r")  # type: ignore[assignment]
        r2: np.ndarray = np.linalg.qr(Rf.T, mode="r")  # type: ignore[assignment]
        s = np.linalg.svd(r1 @ r2.T, compute_uv=False)
        nl, nr = (np.linalg.norm(x, 2) if x.size else 0.0 for x in (r1, r2))
    return s, 4 * k * _EPS * float(nl) * float(nr)


#: two singular values closer than this, relative to the larger, are *near-equal* (``gap_rtol``, ``--gap-rtol``)
GAP_RTOL = 1e-6


def near_equal_blocks(
    s: np.ndarray, rtol: float, gap_rtol: float = GAP_RTOL, error: float = 0.0
) -> tuple[tuple[int, int], ...]:
    """``(first index, size)`` of each run of two or more consecutive singular values above ``rtol`` times the
    largest (the numerical rank's) whose relative gap ``(s_i - s_{i+1}) / s_i`` is at most ``gap_rtol`` (or whose
    gap is within the float64 error bound ``error``): equal to that precision, so a relative perturbation of the
    head of size ``gap_rtol`` can turn the singular vectors of the run into any basis of their span (Wedin): they
    are not identifiable there. A random head passes: the smallest relative gap of 144 Gaussian heads of 64 values
    is 1.9e-4 in the first percentile, and level repulsion makes a gap of 1e-6 about 1e-7 likely per head."""
    if s.size == 0 or not s[0] > 0:
        return ()
    top = float(s[0])
    kept = s[s > rtol * top]
    blocks, start = [], 0
    for i in range(1, kept.size + 1):
        if i == kept.size or kept[i - 1] - kept[i] > max(gap_rtol * kept[i - 1], 2 * error):
            if i - start >= 2:
                blocks.append((start, i - start))
            start = i
    return tuple(blocks)
