"""Compiled kernels of the path tracker: batched LU factorizations and solves of small complex matrices.

docs/math/landscape.md (landscape-monodromy).  The tracker's linear algebra is a batch of ``n x n`` complex systems
(``n`` from 5 to 40): LAPACK's cost there is its call per matrix, not its flops.  These kernels (numba, compiled
once per machine and kept in numba's cache, run without the GIL so two threads step two halves of a batch) factor
each matrix once by Gaussian elimination with partial pivoting (the pivot of largest ``|re| + |im|``, as LAPACK's
``zgetrf``) and apply the factors to as many right-hand sides as the step needs (the chord corrector's three
corrections and the velocity: no explicit inverse).  Measured (python bench/trackers.py, 512 paths, one core):
a solve at ``n = 21`` in 7.2 us against numpy's 9.1 us, at ``n = 9`` 1.3 us against 3.8 us.

A matrix is *good* when its entries are finite and no pivot is exactly zero (numpy's ``LinAlgError``); the rows of
the others are NaN, never an exception (one singular matrix does not fail the batch).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

__all__ = ["compiled", "warm", "lu_factor", "lu_solve", "solve"]


def compiled(function: Any, signature: Any) -> Any:
    """``function`` compiled by numba for ``signature`` now (or read from numba's on-disk cache, where a later
    process finds it): no Python objects, no GIL while it runs.  numba is imported here, not with the package (it
    takes 0.4 s: every command would pay it)."""
    import numba

    try:
        return numba.njit(signature, cache=True, nogil=True)(function)
    except RuntimeError:  # pragma: no cover - no writable cache directory (numba's NUMBA_CACHE_DIR): compiled only
        return numba.njit(signature, nogil=True)(function)


_LOCK = threading.Lock()
_READY: list[bool] = []
# the compiled kernels (set by warm(); the batch kernels call the single ones by these names)
_factor_one_c: Any = None
_solve_one_c: Any = None
_factor_batch_c: Any = None
_solve_batch_c: Any = None


def warm() -> None:
    """Compile the kernels (once a process; a process that finds them in numba's cache reads them: measured
    0.2 s, against 6 s to compile on a cold machine; with the landscape's square kernels, 0.5 s against 14 s).
    ``make setup`` runs it once; the tracker on first use."""
    global _factor_one_c, _solve_one_c, _factor_batch_c, _solve_batch_c
    with _LOCK:
        if _READY:
            return
        from numba import types as T

        # C-contiguous arrays (the callers below make them so): loops the compiler may vectorize
        c1, c2, c3 = T.complex128[::1], T.complex128[:, ::1], T.complex128[:, :, ::1]
        i1, i2, b1 = T.int64[::1], T.int64[:, ::1], T.boolean[::1]
        _factor_one_c = compiled(_factor_one, T.boolean(c2, i1))
        _solve_one_c = compiled(_solve_one, T.void(c2, i1, c1))
        _factor_batch_c = compiled(_factor_batch, T.void(c3, c3, i2, b1))
        _solve_batch_c = compiled(_solve_batch, T.void(c3, i2, b1, c2, c2, T.complex128))
        _READY.append(True)


def _factor_one(A: Any, piv: Any) -> bool:
    n = A.shape[0]
    for k in range(n):
        p = k
        best = abs(A[k, k].real) + abs(A[k, k].imag)
        for i in range(k + 1, n):
            v = abs(A[i, k].real) + abs(A[i, k].imag)
            if v > best:
                best, p = v, i
        piv[k] = p
        if not (best > 0.0) or not np.isfinite(best):
            return False
        if p != k:
            for j in range(n):
                A[k, j], A[p, j] = A[p, j], A[k, j]
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            A[i, k] *= inv
            f = A[i, k]
            for j in range(k + 1, n):
                A[i, j] -= f * A[k, j]
    for i in range(n):  # a NaN or inf anywhere (entries below the pivots are not compared)
        for j in range(n):
            if not np.isfinite(A[i, j].real) or not np.isfinite(A[i, j].imag):
                return False
    return True


def _solve_one(LU: Any, piv: Any, b: Any) -> None:
    n = LU.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            b[k], b[p] = b[p], b[k]
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= LU[i, j] * b[j]
        b[i] = s
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= LU[i, j] * b[j]
        b[i] = s / LU[i, i]


def _factor_batch(J: Any, LU: Any, piv: Any, good: Any) -> None:
    for b in range(J.shape[0]):
        LU[b] = J[b]
        good[b] = _factor_one_c(LU[b], piv[b])


def _solve_batch(LU: Any, piv: Any, good: Any, R: Any, out: Any, fill: complex) -> None:
    n = R.shape[1]
    for b in range(R.shape[0]):
        if good[b]:
            out[b] = R[b]
            _solve_one_c(LU[b], piv[b], out[b])
            for i in range(n):
                if not np.isfinite(out[b, i].real) or not np.isfinite(out[b, i].imag):
                    good[b] = False
        if not good[b]:
            out[b] = fill


def lu_factor(J: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The LU factors of each of a batch ``J`` (``(B, n, n)`` complex), their pivots and which were good (module
    docstring)."""
    J = np.require(J, complex, ("C", "W"))
    if J.ndim != 3 or J.shape[1] != J.shape[2]:  # the kernels read without bounds checks: shapes are checked here
        raise ValueError(f"lu_factor: a batch of square matrices (B, n, n) is needed, got the shape {J.shape}")
    B, n = J.shape[0], J.shape[-1]
    LU = np.empty_like(J)
    piv = np.empty((B, n), dtype=np.int64)
    good = np.empty(B, dtype=bool)
    if B:
        if not _READY:
            warm()
        _factor_batch_c(J, LU, piv, good)
    return LU, piv, good


def lu_solve(
    factors: tuple[np.ndarray, np.ndarray, np.ndarray], R: np.ndarray, fill: complex = complex("nan")
) -> tuple[np.ndarray, np.ndarray]:
    """``J^{-1} R`` for each row of ``R`` (``(B, n)``) from :func:`lu_factor`'s ``factors``, and which rows are
    good (a good factor and a finite solution; the others ``fill``, NaN unless asked)."""
    LU, piv, good = factors
    R = np.require(R, complex, ("C", "W"))
    if R.shape != LU.shape[:2] or piv.shape != LU.shape[:2] or good.shape != LU.shape[:1]:
        raise ValueError(f"lu_solve: right-hand sides of the shape {LU.shape[:2]} are needed, got {R.shape}")
    out = np.empty_like(R)
    ok = good.copy()
    if R.shape[0]:
        if not _READY:
            warm()
        _solve_batch_c(LU, piv, ok, R, out, complex(fill))
    return out, ok


def solve(J: np.ndarray, R: np.ndarray, fill: complex = complex("nan")) -> tuple[np.ndarray, np.ndarray]:
    """``J^{-1} R`` for each of a batch (``J`` ``(B, n, n)``, ``R`` ``(B, n)``) and which were good (the others
    ``fill``)."""
    return lu_solve(lu_factor(J), R, fill)
