"""The start of every data set's homotopy: the solutions of a generic form of the data's rank, solved once by
monodromy and stored in the result cache.

docs/math/landscape.md (landscape-form-homotopy).  :func:`generic_factor` draws ``E_0`` (``rank x n_x``) from the
seed; the monodromy of ``E_0^T E_0`` over a random complex target is resumed from the result cache (under its trust
rules, :meth:`ag_attention._m2.ResultCache.trusted_file`) or started, and stored after each run
(:func:`store`); :func:`from_generic` gives the path of forms from it to a data set's
(:class:`.form_homotopy.FormHomotopy`).
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import AgAttentionError
from .._exact import exact_rank
from .._m2 import ResultCache, cache_disabled_by_env
from .._numeric import monodromy as _monodromy
from .form_homotopy import FormHomotopy
from .square import SquareSystem, square_system
from .system import check_layer

__all__ = [
    "GenericStart",
    "generic_start",
    "generic_system",
    "store",
    "from_generic",
    "monodromy_state",
    "generic_factor",
    "generic_form",
    "form_rank",
    "data_factor",
    "FORM_BITS",
]

log = logging.getLogger(__name__)


def monodromy_state(S: SquareSystem, seed: int, resume: Any) -> _monodromy.Monodromy:
    """The monodromy state of ``S`` from ``resume`` (its fingerprint checked), else new from a start pair drawn
    from ``seed``."""
    if resume is not None:
        return _monodromy.Monodromy.resume(S, resume, fingerprint=S.fingerprint(seed))
    z0, p0, c0 = S.seed(np.random.default_rng(seed))
    return _monodromy.Monodromy(S, z0, p0, seed=seed, chart0=c0, fingerprint=S.fingerprint(seed))


#: the generic factor's entries: Gaussian, rounded to multiples of 2^-FORM_BITS (exact rationals)
FORM_BITS = 12


def generic_factor(d: int, e: int, rank: int, seed: int) -> np.ndarray:
    """A generic ``rank x n_x`` matrix ``E_0`` (exact rationals, drawn from ``seed``) whose form ``E_0^T E_0`` is
    the start of every data set's homotopy of that rank (:func:`homotopy_solutions`): a data set's form is
    ``E^T E`` with ``E`` its stacked linear maps, of rank ``min(samples t d', n_x)`` in general.  Entries Gaussian
    rounded to multiples of ``2^-12``: a generic point of the ``rank x n_x`` matrices with probability one (the
    matrices whose form has fewer critical points form a proper Zariski-closed set, which a continuous draw
    misses)."""
    n_x = e * d * d * (d + 1) // 2
    rng = np.random.default_rng([int(seed), 0x47454E, d, e, rank])
    M = np.rint(rng.standard_normal((rank, n_x)) * 2**FORM_BITS).astype(np.int64)
    return np.array([[Fraction(int(v), 2**FORM_BITS) for v in row] for row in M], dtype=object)


def generic_form(d: int, e: int, rank: int, seed: int) -> np.ndarray:
    """``E_0^T E_0`` for :func:`generic_factor` (exact)."""
    E = generic_factor(d, e, rank, seed)
    num = np.array([[int(v * 2**FORM_BITS) for v in row] for row in E], dtype=object)
    return np.array([[Fraction(v, 4**FORM_BITS) for v in row] for row in num.T.dot(num)], dtype=object)


def form_rank(G: Any) -> int:
    """The exact rank of a rational form (over QQ)."""
    return exact_rank(np.asarray(G, dtype=object))


def data_factor(S: SquareSystem, rank: int, E0: np.ndarray) -> np.ndarray:
    """A float ``rank x n_x`` factor ``E`` of the form of ``S`` (``E^T E = G`` to rounding: its ``rank`` largest
    eigenvalues), turned (an orthogonal ``Q``, which leaves ``E^T E`` alone) to be nearest ``E0``: the shortest
    straight path from ``E0``."""
    lam, Q = np.linalg.eigh(S._tables()["G"])
    top = np.argsort(lam)[::-1][:rank]
    E = np.sqrt(np.maximum(lam[top], 0.0))[:, None] * Q[:, top].T
    U, _, Vt = np.linalg.svd(E0 @ E.T)  # orthogonal Procrustes: min |R E - E0| over R orthogonal
    return np.asarray((U @ Vt) @ E)


@dataclass
class GenericStart:
    """The monodromy of the generic form of one size and seed: its system, its state and where it is stored."""

    system: SquareSystem
    state: _monodromy.Monodromy
    name: str  # the file name in the result cache
    source: str  # "stored", "resumed" or "new"
    path: str | None = None  # the file it came from


@functools.lru_cache(maxsize=8)
def generic_system(d: int, e: int, a: int, rank: int, seed: int) -> SquareSystem:
    """The square system of :func:`generic_form` (exact; its float tables filled as they are used), built once a
    process: every data set of one size and form rank starts from it (at (4,4) its exact form and system take 1.3 s
    a call; ``tests/numeric/test_limits.py`` calls it 11 times)."""
    return square_system(Architecture.single_layer(d, e, a, tokens=2), generic_form(d, e, rank, seed))


def generic_start(arch: Architecture, rank: int, seed: int, resume: Any) -> GenericStart:
    """The monodromy state of the generic form of ``rank``: from ``resume``, else from the result cache (a state
    that cannot be read there is solved again, with a warning in the log), else new."""
    d, e, a, _ = check_layer(arch)
    S0 = generic_system(d, e, a, rank, seed)
    fp = S0.fingerprint(seed)
    name = f"{fp}.landscape-{d}{e}{a}-rank{rank}-seed{seed}.npz"  # (in the cache's subdirectory named by fp[:2])
    if resume is not None:
        return GenericStart(S0, monodromy_state(S0, seed, resume), name, "resumed", str(resume))
    path = None if cache_disabled_by_env() else ResultCache().trusted_file(name, create=False)
    if path is not None:
        try:
            state = _monodromy.Monodromy.resume(S0, path, fingerprint=fp)
            return GenericStart(S0, state, name, "stored", str(path))
        except AgAttentionError as exc:
            log.warning("the stored solution set %s is not used (%s): it is solved again", path, exc)
    return GenericStart(S0, monodromy_state(S0, seed, None), name, "new")


def store(start: GenericStart) -> str | None:
    """Write the generic form's state to the result cache (atomically, under its trust rules); where, or None."""
    if cache_disabled_by_env():
        return None
    path = ResultCache().trusted_file(start.name, create=True)
    if path is None:
        return None
    checkpoint = start.state.checkpoint
    try:
        start.state.save(path)
    except (AgAttentionError, OSError) as exc:
        log.warning("the generic form's solution set could not be stored in %s: %s", path, exc)
        return None
    finally:
        start.state.checkpoint = checkpoint  # the user's --save file stays the one reported
    return str(path)


def from_generic(arch: Architecture, S: SquareSystem, seed: int, resume: Any) -> tuple[GenericStart, Any, int]:
    """The generic form's monodromy state of the rank of ``S``'s form, the path of forms from it to ``S``'s
    (:class:`.form_homotopy.FormHomotopy`), and the rank."""
    d, e, a, _ = check_layer(arch)
    rank = form_rank(S.G)
    start = generic_start(arch, rank, seed, resume)
    E0 = np.array(generic_factor(d, e, rank, seed), dtype=float) / math.sqrt(float(start.system.scale_G))
    return start, FormHomotopy.factors(S, E0, data_factor(S, rank, E0)), rank
