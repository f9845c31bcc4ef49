"""Seeded integer weights: random points of each stratum, fiber cases, the points of Cor. A.6.

Every sampler draws from the generator it is given in a fixed order, so a
seed and a size determine every point of the report.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..._errors import ComputationError
from ..._exact import exact_rank, reduced_point
from .grids import Size

__all__ = [
    "nonzero",
    "full_rank",
    "rank_one_vectors",
    "strata_samples",
    "fiber_cases",
    "m2_fiber_points",
    "conjugate_data",
    "conjugate_point",
]

#: one sample: (stratum name, A, V)
Sample = tuple[str, np.ndarray, np.ndarray]


def nonzero(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Integers in [-9, 9], not all zero."""
    while True:
        x = rng.integers(-9, 10, size=shape)
        if np.any(x):
            return x


def full_rank(rng: np.random.Generator, rows: int, cols: int, rank: int) -> np.ndarray:
    """An integer ``rows x cols`` matrix of rank exactly ``rank``."""
    while True:
        M: np.ndarray = nonzero(rng, rows, rank) @ nonzero(rng, rank, cols)
        if exact_rank(M.astype(object)) == rank:
            return M


def rank_one_vectors(
    rng: np.random.Generator, d: int, e: int, *, w_first: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``u, v, z`` in ZZ^d (``v, z`` independent) and ``w`` in ZZ^e: ``(u v^T, w z^T)``, ``(u v^T, w v^T)``.

    ``w_first`` draws ``w`` before making ``z`` independent of ``v`` (the order of the Lemma A.3 check).
    """
    u, v, z = (nonzero(rng, d) for _ in range(3))
    w = nonzero(rng, e) if w_first else None
    while exact_rank(np.array([v, z], dtype=object)) < 2 and d >= 2:
        z = nonzero(rng, d)
    return u, v, z, (nonzero(rng, e) if w is None else w)


def strata_samples(size: Size, rng: np.random.Generator, per_stratum: int = 2) -> list[Sample]:
    """Random integer weights in each stratum of Theorem 3.4 (and of the rank bound)."""
    d, e, a = size.d, size.d_out, min(size.a, size.d)
    out: list[Sample] = []
    for _ in range(per_stratum):
        u, v, z, w = rank_one_vectors(rng, d, e)
        out.append(("generic", full_rank(rng, d, d, a), full_rank(rng, e, d, min(e, d))))
        if a >= 1:
            out.append(("rank A = 1", np.outer(u, v), full_rank(rng, e, d, min(e, d))))
        out.append(("rank V = 1", full_rank(rng, d, d, a), np.outer(w, z)))
        out.append(("rank-one pair", np.outer(u, v), np.outer(w, z)))
        out.append(("critical (A = u v^T, V = w v^T)", np.outer(u, v), np.outer(w, v)))
        if size.rank_bounded:
            out.append(
                (
                    f"rank A = {a - 1} < a (domain singular)",
                    full_rank(rng, d, d, a - 1),
                    full_rank(rng, e, d, min(e, d)),
                )
            )
    return out


def fiber_cases(size: Size, rng: np.random.Generator) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """One weight pair for each kind of fiber of Thm. 3.2 (``A`` free)."""
    d, e = size.d, size.d_out
    u, v, z, w = rank_one_vectors(rng, d, e)
    return {
        "generic": (full_rank(rng, d, d, d), full_rank(rng, e, d, min(d, e))),
        "rank A = 1": (np.outer(u, v), full_rank(rng, e, d, min(d, e))),
        "rank-one pair": (np.outer(u, v), np.outer(w, z)),
        "critical": (np.outer(u, v), np.outer(w, v)),
    }


def m2_fiber_points(size: Size, rng: np.random.Generator) -> dict[str, list[int]]:
    """The points whose fibers Macaulay2 decomposes (Thm. 3.2), in reduced coordinates."""
    d, e = size.d, size.d_out
    uu, vv, ww, zz = nonzero(rng, d), nonzero(rng, d), nonzero(rng, e), nonzero(rng, d)
    return {
        "generic": reduced_point(full_rank(rng, d, d, d), full_rank(rng, e, d, min(e, d))),
        "rank-one pair": reduced_point(np.outer(uu, vv), np.outer(ww, zz)),
        "critical": reduced_point(np.outer(uu, vv), np.outer(ww, vv)),
        "zero": [0] * size.coordinates,
    }


def conjugate_data(size: Size, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``u, r, s, w`` (integers, ``r, s`` independent) for ``v = r + i s`` (seeded by size)."""
    rng = np.random.default_rng([seed, size.d, size.d_out, size.a, 6])
    u, r, s, w = nonzero(rng, size.d), nonzero(rng, size.d), nonzero(rng, size.d), nonzero(rng, size.d_out)
    while exact_rank(np.array([r, s], dtype=object)) < 2:
        s = nonzero(rng, size.d)
    return u, r, s, w


def conjugate_point(
    u: Iterable[Any], r: Iterable[Any], s: Iterable[Any], w: Iterable[Any], scale: int = 1
) -> list[int]:
    """phi at A = u v^T, V = w conj(v)^T, v = r + i*scale*s, exactly (Gaussian integers).

    The reduced coordinates are bilinear in (A, V): with A = A_r + i A_i and
    V = V_r + i V_i, phi(A, V) = phi(A_r, V_r) - phi(A_i, V_i) + i (phi(A_r, V_i) + phi(A_i, V_r)),
    each an integer evaluation.
    """
    ui, ri, si, wi = ([int(x) for x in vec] for vec in (u, r, s, w))
    Ar, Ai = np.outer(ui, ri).astype(object), (scale * np.outer(ui, si)).astype(object)
    Vr, Vi = np.outer(wi, ri).astype(object), (-scale * np.outer(wi, si)).astype(object)
    re = [a - b for a, b in zip(reduced_point(Ar, Vr), reduced_point(Ai, Vi))]
    im = [a + b for a, b in zip(reduced_point(Ar, Vi), reduced_point(Ai, Vr))]
    if any(im):  # pragma: no cover - the construction is real
        raise ComputationError("phi(u v^T, w conj(v)^T) is not real")
    return [int(x) for x in re]
