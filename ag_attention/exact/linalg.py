"""Exact rank over GF(p): the one seam between numpy arrays and FLINT.

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
from collections.abc import Sequence
from numbers import Rational

import numpy as np

from ..errors import InvalidArgumentError

__all__ = ["rank", "rank_rational", "rank_memory", "rank_python_flint", "fastpath_available", "set_threads"]

log = logging.getLogger(__name__)

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_lib_checked = False
_STRUCT_BYTES = 256  # room for nmod_mat_struct (48 bytes in FLINT 3)


def set_threads(n: int | None = None) -> int:
    """Let FLINT use ``n`` threads (default: all CPUs); returns the number set."""
    import flint

    n = n or os.cpu_count() or 1
    flint.ctx.threads = n
    return n


def _find_libflint() -> str | None:
    import flint

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
    import flint

    M = np.asarray(M)
    m, n = M.shape
    if m == 0 or n == 0:
        return 0
    return int(flint.nmod_mat(m, n, np.remainder(M, p).ravel().tolist(), p).rank())


def rank_rational(rows: Sequence[Sequence[int | Rational]]) -> int:
    """Exact rank over QQ of a matrix of integers or ``Fraction``s (FLINT's ``fmpq_mat``; small matrices).

    >>> from fractions import Fraction
    >>> rank_rational([[1, 2], [Fraction(1, 2), 1]]), rank_rational([[1, 0], [0, Fraction(1, 3)]])
    (1, 2)
    """
    import flint
    from fractions import Fraction

    if not rows or not rows[0]:
        return 0
    m, n = len(rows), len(rows[0])
    entries = []
    for row in rows:
        for v in row:
            q = Fraction(v)
            entries.append(flint.fmpq(q.numerator, q.denominator))
    return int(flint.fmpq_mat(m, n, entries).rank())


def rank_memory(rows: int, cols: int) -> int:
    """Bytes :func:`rank` allocates beyond its argument: FLINT's copy of the matrix and LU workspace.

    (The python-flint fallback builds a Python list of the entries as well:
    about 4 more copies' worth, which the fast path avoids.)
    """
    copy = 8 * int(rows) * int(cols)
    return copy + copy // 4 + 8 * int(rows)


def rank(M: np.ndarray, p: int) -> int:
    """Rank of the integer matrix ``M`` over ``GF(p)`` (entries reduced mod ``p``)."""
    M = np.asarray(M)
    if M.ndim != 2:
        raise InvalidArgumentError(f"M: rank needs a 2-D matrix, got shape {M.shape}")
    m, n = M.shape
    if m == 0 or n == 0:
        return 0
    if M.dtype != np.int64 or (M.size and (M.min() < 0 or M.max() >= p)):
        M = np.remainder(M.astype(np.int64), p)
    lib = _load()
    if lib is None:
        return rank_python_flint(M, p)
    return _rank_ctypes(lib, M, p)
