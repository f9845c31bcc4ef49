"""Rank over GF(p) of a large dense matrix by a blocked LU on float64 BLAS (delayed modular reduction).

FLINT's ``nmod_mat_rank`` runs at a few GFLOP/s on word-size primes; a
float64 matrix product runs at tens.  For a prime ``p < 2^21`` every residue
is an exact float64; kept centred (``|x| <= p/2``, up to rounding) a
product of two is below ``2^40``, and a sum of ``k <= 4096`` of them below
``2^53``: a matrix product of residues with an inner dimension up to 4096 is
computed *exactly* by BLAS and reduced once afterwards (the idea of FFLAS-FFPACK, Dumas, Giorgi, Pernet 2008).

The elimination is recursive on columns (Toledo's LU): the left half of a
column range is factored, the rows it chose as pivots are solved into the
right half (a unit lower triangular solve, itself recursive), the rows below
are updated by one product, and the right half is factored from the next
pivot row.  Leaves of at most :data:`LEAF` columns eliminate column by column,
left-looking (row pivoting: the first nonzero entry).  Every product has its inner
dimension cut into pieces of at most :data:`MAX_INNER`, and is reduced to
centred residues by ``x - p rint(x / p)`` (three vector passes; ``fmod`` is
four times slower here).

The result is the rank over GF(p), exactly: the same number FLINT returns
(``tests/exact/test_modular_lu.py`` compares them on random low-rank and
structured matrices).  What a rank mod p proves about a rational matrix is
the caller's statement (a lower bound on its rank over QQ).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._errors import InvalidArgumentError

__all__ = ["MAX_PRIME", "BLAS_PRIMES", "MAX_INNER", "LEAF", "rank_blas", "rank_blas_memory", "rank_blas_flops"]

#: primes below 2^21: a centred residue is below 2^20 in absolute value
MAX_PRIME = 2**21
#: the primes the package uses with this routine (the largest three below 2^21)
BLAS_PRIMES = (2097143, 2097133, 2097131)
#: the longest inner dimension of one exact float64 product of centred residues (|x| <= p (1/2 + 2^-19)):
#: 4096 products below 2^40.0007 each, plus one residue, stay below 2^53
MAX_INNER = 4096
#: columns eliminated one by one (below this width, numpy's per-call cost dominates a product)
LEAF = 32

Progress = Callable[[int], None]


def rank_blas_memory(rows: int, cols: int) -> int:
    """Bytes :func:`rank_blas` allocates at most: a float64 copy of the matrix, one product's temporary and the
    copied multipliers of the rows below (each at most the matrix's size)."""
    return 3 * 8 * int(rows) * int(cols) + 8 * (int(rows) + int(cols))


def rank_blas_flops(rows: int, cols: int, rank: int | None = None) -> float:
    """Floating-point operations of :func:`rank_blas` on an ``rows x cols`` matrix of rank ``rank`` (default: full):
    ``2 (m n r - (m + n) r^2 / 2 + r^3 / 3)``, the count of a row-echelon LU."""
    m, n = float(max(rows, cols)), float(min(rows, cols))
    r = n if rank is None else float(min(rank, n))
    return 2.0 * (m * n * r - (m + n) * r * r / 2 + r**3 / 3)


def _check(M: np.ndarray, p: int) -> None:
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or not 2 < int(p) < MAX_PRIME:
        raise InvalidArgumentError(
            f"p={p!r}: rank_blas needs a prime below 2^21 = {MAX_PRIME} (float64 products of residues must stay exact)"
        )
    if M.ndim != 2:
        raise InvalidArgumentError(f"M: rank_blas needs a 2-D matrix, got shape {M.shape}")


class _LU:
    """The state of one elimination: the float64 matrix (residues in (-p, p)), the next pivot row, the rank."""

    def __init__(self, A: np.ndarray, p: int, progress: Progress | None):
        self.A = A
        self.p = float(p)
        self.ip = int(p)
        self.pinv = 1.0 / self.p
        self.row = 0  # rows [0, row) hold the pivots found so far (in order)
        self.progress = progress

    # ---------------------------------------------------------------- products
    def _reduce(self, x: np.ndarray) -> np.ndarray:
        """``x`` (integers below 2^53 in absolute value) to its centred residues, in place: ``x - p rint(x / p)``.

        ``rint(x * (1/p))`` is within ``2^-19`` of ``x / p`` (two roundings, ``|x / p| < 2^33``), so the result is
        at most ``p (1/2 + 2^-19)`` in absolute value, and every step is exact in float64.
        """
        q = np.multiply(x, self.pinv)
        np.rint(q, out=q)
        q *= self.p
        x -= q
        return x

    def _mul_sub(self, C: np.ndarray, L: np.ndarray, U: np.ndarray) -> None:
        """``C <- C - L U`` reduced, in place, exactly (inner dimension in pieces of MAX_INNER)."""
        k = L.shape[1]
        for s in range(0, k, MAX_INNER):
            C -= L[:, s : s + MAX_INNER] @ U[s : s + MAX_INNER]
            self._reduce(C)

    def _trsm(self, L: np.ndarray, B: np.ndarray) -> None:
        """``B <- L^{-1} B`` reduced, in place, ``L`` unit lower triangular (entries below the diagonal used)."""
        k = L.shape[0]
        if k <= LEAF:
            for i in range(1, k):
                B[i] -= L[i, :i] @ B[:i]
                self._reduce(B[i])
            return
        h = k // 2
        self._trsm(L[:h, :h], B[:h])
        self._mul_sub(B[h:], L[h:, :h], B[:h])
        self._trsm(L[h:, h:], B[h:])

    # ---------------------------------------------------------------- elimination
    def _leaf(self, c0: int, c1: int) -> list[int]:
        """Eliminate columns ``c0 .. c1 - 1`` one by one below the current pivot row; the pivot columns found.

        Left-looking, on a column-major copy of the panel: each column is first brought up to date with the
        pivots found before it in the panel (a unit lower triangular solve for its top rows, then one
        matrix-vector product for the rows below: BLAS, one pass), then its pivot is sought.  The multipliers
        are kept in a contiguous buffer beside the panel (for the products) and below each pivot (for the
        caller).  Row swaps are applied to the whole panel and buffer at once, and to the matrix's whole rows
        at the end.
        """
        A = self.A
        r0 = self.row
        panel = np.asfortranarray(A[r0:, c0:c1])
        m = panel.shape[0]
        L = np.zeros((m, c1 - c0), order="F")  # column t: the multipliers of the t-th pivot (rows below it)
        swaps = []
        pivots = []
        rr = 0
        for j in range(c1 - c0):
            if rr >= m:
                break
            col = panel[:, j]
            if rr:
                self._reduce(col[:1])
                for i in range(1, rr):  # top: solve with the unit lower triangle of the pivot rows (reduced
                    x = col[i] - L[i, :i] @ col[:i]  # at each row: the next one multiplies it)
                    col[i] = x - self.p * np.rint(x * self.pinv)
                col[rr:] -= L[rr:, :rr] @ col[:rr]
            self._reduce(col[rr:])
            nz = np.flatnonzero(col[rr:])
            if nz.size == 0:
                continue
            i = rr + int(nz[0])
            if i != rr:
                panel[[rr, i]] = panel[[i, rr]]
                L[[rr, i]] = L[[i, rr]]
                swaps.append((r0 + rr, r0 + i))
            inv = float(pow(int(col[rr]) % self.ip, -1, self.ip))
            below = col[rr + 1 :]
            below *= inv
            self._reduce(below)  # the multipliers, stored below the pivot
            L[rr + 1 :, rr] = below
            pivots.append(c0 + j)
            rr += 1
        for a, b in swaps:
            A[[a, b]] = A[[b, a]]
        A[r0:, c0:c1] = panel
        self.row = r0 + rr
        return pivots

    def factor(self, c0: int, c1: int) -> list[int]:
        """Eliminate columns ``c0 .. c1 - 1`` (all rows from the current pivot row); the pivot columns found."""
        if self.row >= self.A.shape[0]:
            return []
        if c1 - c0 <= LEAF:
            pivots = self._leaf(c0, c1)
            if self.progress is not None:
                self.progress(c1 - c0)
            return pivots
        h = c0 + (c1 - c0) // 2
        r0 = self.row
        left = self.factor(c0, h)
        k = len(left)
        if k:
            A = self.A
            # the pivot rows' multipliers: row r0 + i holds L[r0 + i, pivot j] for j < i, below the diagonal
            L11 = A[r0 : r0 + k, left]
            U12 = A[r0 : r0 + k, h:c1]
            self._trsm(L11, U12)
            if r0 + k < A.shape[0]:
                self._mul_sub(A[r0 + k :, h:c1], A[r0 + k :, left], U12)
        return left + self.factor(h, c1)


def rank_blas(M: np.ndarray, p: int, progress: Progress | None = None) -> int:
    """The rank of the integer matrix ``M`` over GF(p), ``p`` a prime below 2^21 (see the module docstring).

    ``progress(k)`` is called as each run of ``k`` columns is eliminated; the elimination runs along the shorter
    side of ``M``, so the calls add up to ``min(M.shape)``.

    >>> rank_blas(np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]]), 2097143)
    2
    """
    M = np.asarray(M)
    _check(M, p)
    if M.size == 0:
        return 0
    if M.shape[0] < M.shape[1]:  # eliminate along the shorter side: at most min(m, n) pivots either way
        M = M.T
    if M.dtype.kind not in "iu":
        raise InvalidArgumentError(f"M: rank_blas needs an integer matrix, got dtype {M.dtype}")
    if M.min() < 0 or M.max() >= p:
        M = np.remainder(M, int(p))
    A = np.array(M, dtype=np.float64, order="C")
    lu = _LU(A, int(p), progress)
    lu.factor(0, A.shape[1])
    return lu.row
