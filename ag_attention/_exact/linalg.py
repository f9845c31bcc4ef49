"""Exact linear algebra and polynomial rings: the one seam between the package and FLINT.

Nothing outside :mod:`ag_attention._exact` and :mod:`ag_attention._flint` imports python-flint: matrices over
GF(p) and QQ (:func:`rank`, :func:`rank_rational`, :func:`rref_mod_p`,
:func:`nullspace_mod_p`, :func:`rref_rational`) come from here; polynomial rings over ZZ, QQ
and GF(p) (:func:`integer_polynomial_ring`, :func:`rational_polynomial_ring`,
:func:`modular_polynomial_ring`, with the element types
:data:`IntegerPolynomial`, :data:`RationalPolynomial`,
:data:`ModularPolynomial`) and exact rationals (:func:`rational`) from the layer below,
:mod:`ag_attention._flint` (so that the parametrizations of :mod:`ag_attention._models` can use them), and are
re-exported here.  FLINT's threads are set only by :func:`threads` (for a block of code)
or :func:`set_threads` (for the whole process).

:func:`rank` computes the rank of an int64 matrix modulo ``p`` with FLINT's
``nmod_mat_rank``.  Converting a numpy array through python-flint's
``nmod_mat`` constructor costs about 0.4 microseconds per entry (8 s for a
20-million-entry Jacobian), more than the elimination itself, so by default
the rows are copied straight into a FLINT matrix of the libflint that
python-flint ships, located with ``nmod_mat_entry_ptr`` (no assumption on the
struct layout).  That path is self-tested against python-flint at first use
and disabled (falling back to the constructor) if anything disagrees; set
``AG_ATTENTION_FLINT_FASTPATH=0`` to disable it by hand.
"""

from __future__ import annotations

import ctypes
import glob
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from numbers import Rational

import flint
import numpy as np

from .._errors import InvalidArgumentError
from .._flint import (
    IntegerNumber,
    IntegerPolynomial,
    IntegerPolynomialRing,
    ModularPolynomial,
    ModularPolynomialRing,
    RationalNumber,
    RationalPolynomial,
    RationalPolynomialRing,
    Terms,
    integer_polynomial_ring,
    modular_polynomial,
    modular_polynomial_ring,
    rational,
    rational_polynomial,
    rational_polynomial_ring,
)
from . import modular_lu

__all__ = [
    "rank",
    "rank_rational",
    "rank_memory",
    "uses_blas",
    "BLAS_MIN_SIDE",
    "rank_python_flint",
    "fastpath_available",
    "set_threads",
    "threads",
    "rref_mod_p",
    "nullspace_mod_p",
    "integer_product_rank",
    "integer_nullspace",
    "rref_rational",
    "rational",
    "rational_polynomial",
    "modular_polynomial",
    "Terms",
    "IntegerNumber",
    "RationalNumber",
    "integer_polynomial_ring",
    "rational_polynomial_ring",
    "modular_polynomial_ring",
    "IntegerPolynomial",
    "RationalPolynomial",
    "ModularPolynomial",
    "IntegerPolynomialRing",
    "RationalPolynomialRing",
    "ModularPolynomialRing",
]

log = logging.getLogger(__name__)

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_lib_checked = False
_STRUCT_BYTES = 256  # room for nmod_mat_struct (48 bytes in FLINT 3)
#: both sides at least this long (and a prime below 2^21): :func:`rank` uses the BLAS route
BLAS_MIN_SIDE = 1024


def set_threads(n: int | None = None) -> int:
    """Let FLINT use ``n`` threads (default: all CPUs) from now on, in the whole process; returns the number set.

    The package itself never calls this: its engines scope their threads with :func:`threads`.
    """
    n = n or os.cpu_count() or 1
    flint.ctx.threads = n
    return n


@contextmanager
def threads(n: int | None = None) -> Iterator[int]:
    """FLINT uses ``n`` threads (default: all CPUs) inside the ``with`` block; the previous number after it.

    >>> before = flint.ctx.threads
    >>> with threads(2) as n:
    ...     n, flint.ctx.threads
    (2, 2)
    >>> flint.ctx.threads == before
    True
    """
    previous = flint.ctx.threads
    n = n or os.cpu_count() or 1
    flint.ctx.threads = n
    try:
        yield n
    finally:
        flint.ctx.threads = previous


# ------------------------------------------------------------ small dense matrices
def rref_mod_p(vectors: Sequence[Sequence[int]], p: int, ncols: int) -> list[list[int]]:
    """The nonzero rows of the reduced row echelon form of ``vectors`` (rows of length ``ncols``) over GF(p).

    >>> rref_mod_p([[2, 4], [1, 2]], 7, 2)
    [[1, 2]]
    """
    if not vectors:
        return []
    M = flint.nmod_mat(len(vectors), ncols, [int(x) for v in vectors for x in v], p)
    R, rank = M.rref()
    return [[int(R[r, c]) for c in range(ncols)] for r in range(rank)]


def nullspace_mod_p(M: np.ndarray, p: int) -> list[list[int]]:
    """A basis of the right kernel ``{x : M x = 0}`` of the integer matrix ``M`` over GF(p) (FLINT's order).

    >>> nullspace_mod_p(np.array([[1, 1, 0], [0, 0, 1]]), 5)
    [[4, 1, 0]]
    """
    m, n = M.shape
    K, nullity = flint.nmod_mat(m, n, [int(x) for x in M.ravel()], p).nullspace()
    return [[int(K[r, c]) for r in range(n)] for c in range(nullity)]


def rref_rational(rows: Sequence[Sequence[int | Fraction | RationalNumber]]) -> tuple[list[list[Fraction]], int]:
    """The reduced row echelon form of a rational matrix over QQ (all its rows, as ``Fraction``) and its rank.

    >>> rref_rational([[2, 4], [1, 2]])
    ([[Fraction(1, 1), Fraction(2, 1)], [Fraction(0, 1), Fraction(0, 1)]], 1)
    """
    M = flint.fmpq_mat([[rational(v) for v in row] for row in rows])
    R, r = M.rref()
    return [[Fraction(int(R[i, j].p), int(R[i, j].q)) for j in range(M.ncols())] for i in range(M.nrows())], r


def _find_libflint() -> str | None:
    site = os.path.dirname(os.path.dirname(flint.__file__))
    for pattern in ("python_flint.libs/libflint*.so*", "flint/.dylibs/libflint*.dylib"):
        hits = sorted(glob.glob(os.path.join(site, pattern)))
        if hits:
            return hits[0]
    return None


def _load() -> ctypes.CDLL | None:
    global _lib, _lib_checked
    with _lock:
        if _lib_checked:
            return _lib
        _lib_checked = True
        if os.environ.get("AG_ATTENTION_FLINT_FASTPATH", "1") == "0":
            return None
        path = _find_libflint()
        if path is None:
            log.debug("libflint of python-flint not found; using the nmod_mat constructor")
            return None
        try:
            lib = ctypes.CDLL(path)
            lib.nmod_mat_init.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_ulong]
            lib.nmod_mat_init.restype = None
            lib.nmod_mat_entry_ptr.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long]
            lib.nmod_mat_entry_ptr.restype = ctypes.c_void_p
            lib.nmod_mat_get_entry.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long]
            lib.nmod_mat_get_entry.restype = ctypes.c_ulong
            lib.nmod_mat_rank.argtypes = [ctypes.c_void_p]
            lib.nmod_mat_rank.restype = ctypes.c_long
            lib.nmod_mat_lu.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
            lib.nmod_mat_lu.restype = ctypes.c_long
            lib.nmod_mat_clear.argtypes = [ctypes.c_void_p]
            lib.nmod_mat_clear.restype = None
        except (OSError, AttributeError) as exc:
            log.debug("libflint fast path unavailable: %s", exc)
            return None
        _lib = lib
        if not _self_test(lib):
            log.warning("libflint fast path disagreed with python-flint; disabled")
            _lib = None
        return _lib


def _rank_ctypes(lib: ctypes.CDLL, M: np.ndarray, p: int, check_entries: bool = False) -> int:
    # residues in [0, p) as int64 have the bit pattern of the ulongs FLINT stores: a view, no copy
    M = np.ascontiguousarray(M)
    M = M.view(np.uint64) if M.dtype == np.int64 else M.astype(np.uint64)
    m, n = M.shape
    buf = ctypes.create_string_buffer(_STRUCT_BYTES)
    lib.nmod_mat_init(buf, m, n, p)
    try:
        row_bytes = 8 * n
        base = M.ctypes.data
        for i in range(m):
            ctypes.memmove(lib.nmod_mat_entry_ptr(buf, i, 0), base + i * row_bytes, row_bytes)
        if check_entries:
            for i in range(m):
                for j in range(n):
                    if lib.nmod_mat_get_entry(buf, i, j) != int(M[i, j]):
                        raise RuntimeError("entry mismatch")
        # LU in place (nmod_mat_rank would first copy the matrix once more)
        perm = (ctypes.c_long * m)()
        return int(lib.nmod_mat_lu(perm, buf, 0))
    finally:
        lib.nmod_mat_clear(buf)


def _self_test(lib: ctypes.CDLL) -> bool:
    rng = np.random.default_rng(12345)
    p = 2147483647
    try:
        for m, n, r in [(7, 5, 3), (6, 9, 4), (12, 12, 12)]:
            B = rng.integers(0, 1000, size=(m, r))
            C = rng.integers(0, 1000, size=(r, n))
            M = (B @ C) % p
            want = rank_python_flint(M, p)
            if want != r or _rank_ctypes(lib, M, p, check_entries=True) != want:
                return False
    except Exception as exc:  # pragma: no cover - depends on the installed FLINT
        log.debug("fast path self-test raised %r", exc)
        return False
    return True


def fastpath_available() -> bool:
    return _load() is not None


def rank_python_flint(M: np.ndarray, p: int) -> int:
    """Rank mod ``p`` through python-flint's ``nmod_mat`` constructor (slow conversion)."""
    M = np.asarray(M)
    m, n = M.shape
    if m == 0 or n == 0:
        return 0
    return int(flint.nmod_mat(m, n, np.remainder(M, p).ravel().tolist(), p).rank())


def rank_rational(rows: Sequence[Sequence[int | Rational]]) -> int:
    """Exact rank over QQ of a matrix of integers or ``Fraction``s (small matrices).

    A matrix of Python ints goes to FLINT's ``fmpz_mat`` (fraction-free
    elimination), any other to ``fmpq_mat``.

    >>> rank_rational([[1, 2], [Fraction(1, 2), 1]]), rank_rational([[1, 0], [0, Fraction(1, 3)]])
    (1, 2)
    >>> rank_rational([[1, 2, 3], [2, 4, 6]])
    1
    """
    if not rows or not rows[0]:
        return 0
    m, n = len(rows), len(rows[0])
    integers = _integer_rows(rows)
    if integers is not None:
        return int(flint.fmpz_mat(integers).rank())
    entries = []
    for row in rows:
        for v in row:
            q = Fraction(v)
            entries.append(flint.fmpq(q.numerator, q.denominator))
    return int(flint.fmpq_mat(m, n, entries).rank())


def integer_product_rank(L: Sequence[Sequence[int]], R: Sequence[Sequence[int]]) -> int:
    """Exact rank of the product ``L R`` of two integer matrices (FLINT's ``fmpz_mat``: the product formed exactly).

    >>> integer_product_rank([[1], [2]], [[3, 4]])
    1
    """
    return int((flint.fmpz_mat(L) * flint.fmpz_mat(R)).rank())


def integer_nullspace(rows: Sequence[Sequence[int]]) -> list[list[int]]:
    """A basis of the right nullspace over QQ of an integer matrix, as integer vectors (FLINT's ``nullspace``).

    >>> integer_nullspace([[1, 1]])
    [[1, -1]]
    """
    basis, nullity = flint.fmpz_mat(rows).nullspace()
    return [[int(basis[i, j]) for i in range(basis.nrows())] for j in range(nullity)]


def _integer_rows(rows: Sequence[Sequence[int | Rational]]) -> list[list[int]] | None:
    """The rows as lists of Python ints, or None if an entry is not an int."""
    out = []
    for row in rows:
        ints = []
        for v in row:
            if not isinstance(v, int):
                return None
            ints.append(v)
        out.append(ints)
    return out


def uses_blas(rows: int, cols: int, p: int | None) -> bool:
    """Whether :func:`rank` takes the float64 BLAS route (:func:`~ag_attention._exact.modular_lu.rank_blas`): a
    prime below 2^21 and both sides at least :data:`BLAS_MIN_SIDE`."""
    return p is not None and 2 < p < modular_lu.MAX_PRIME and min(int(rows), int(cols)) >= BLAS_MIN_SIDE


def rank_memory(rows: int, cols: int, p: int | None = None) -> int:
    """Bytes :func:`rank` allocates beyond its argument: FLINT's copy of the matrix and LU workspace, or the
    BLAS route's float64 copy and temporaries (for ``p`` below 2^21 on a large matrix).

    (The python-flint fallback builds a Python list of the entries as well:
    about 4 more copies' worth, which the fast path avoids.)
    """
    if uses_blas(rows, cols, p):
        return modular_lu.rank_blas_memory(rows, cols)
    copy = 8 * int(rows) * int(cols)
    return copy + copy // 4 + 8 * int(rows)


def rank(M: np.ndarray, p: int, progress: Callable[[int], None] | None = None) -> int:
    """Rank of the integer matrix ``M`` over ``GF(p)`` (entries reduced mod ``p``).

    For a prime below 2^21 and a matrix whose sides are both at least
    :data:`BLAS_MIN_SIDE`, the rank is computed by a blocked LU on float64 BLAS
    (:func:`~ag_attention._exact.modular_lu.rank_blas`: 6 times faster than
    FLINT at 6,144 columns here, ``bench/point.py``); otherwise by FLINT.
    ``progress(k)``: called as ``k`` more columns are eliminated (BLAS route
    only; they add up to ``min(M.shape)``).
    """
    M = np.asarray(M)
    if M.ndim != 2:
        raise InvalidArgumentError(f"M: rank needs a 2-D matrix, got shape {M.shape}")
    m, n = M.shape
    if m == 0 or n == 0:
        return 0
    if uses_blas(m, n, p):
        return modular_lu.rank_blas(M, p, progress)
    if M.dtype != np.int64 or (M.size and (M.min() < 0 or M.max() >= p)):
        M = np.remainder(M.astype(np.int64), p)
    lib = _load()
    if lib is None:
        return rank_python_flint(M, p)
    return _rank_ctypes(lib, M, p)
