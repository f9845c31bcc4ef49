"""The ideal of one layer's closure modulo one prime, one torus multidegree at a time.

In each multidegree ``mu`` the component ``I_mu`` is the kernel of the
evaluation of the monomials of multidegree ``mu`` at random points of the
image (:func:`modular_blocks`); its minimal generators are a canonical
complement of ``(S_1 I_{D-1})_mu`` (:func:`minimal_generators`), so that the
same basis comes out modulo every prime (:mod:`ag_attention._algebra.lifting`).

Only one multidegree per orbit of the index permutations is computed (its
representative, :class:`~ag_attention._algebra.multidegrees.IndexPermutations`):
a permutation of the indices is an automorphism of the closure, so it
carries ``I_rep`` onto ``I_mu`` and ``(S_1 I_{D-1})_rep`` onto
``(S_1 I_{D-1})_mu``, hence a complement onto a complement.  The products
``x_v g`` for a representative ``mu`` use the lower degree's equations
``g`` of ``mu - e_v`` as the permuted equations of its representative.
(For ``(3,2,3)`` in degree 4: 120 representatives for 3,375 multidegrees.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._errors import ComputationError
from .._exact import GFp, linalg
from .._models import reduced_count
from .._resources import MemoryEstimate, require_memory
from .multidegrees import IndexPermutations, evaluate_monomials, image_points, monomials_by_multidegree, torus_weights

__all__ = [
    "ModularBlock",
    "rref_rows",
    "level_memory",
    "minimal_generators",
    "modular_blocks",
    "interpolation_memory",
    "representative_groups",
]


def rref_rows(vectors: list[list[int]], p: int, ncols: int) -> tuple[list[list[int]], list[int]]:
    """Reduced row echelon basis of the span of ``vectors`` over GF(p), and its pivot columns."""
    rows = linalg.rref_mod_p(vectors, p, ncols)
    pivots = [next(c for c in range(ncols) if row[c]) for row in rows]
    return rows, pivots


@dataclass
class ModularBlock:
    """One multidegree modulo one prime: its monomials, ``dim I_mu``, a basis of ``I_mu`` and the minimal generators."""

    monomials: list[tuple[int, ...]]
    ideal_dim: int  # dim I_mu over GF(p)
    ideal: list[list[int]]  # RREF basis of I_mu over GF(p); emptied once degree D + 1 no longer needs it
    generators: list[list[int]]  # canonical complement of (S_1 I_{D-1})_mu in I_mu (RREF)


def level_memory(groups: dict[tuple[int, ...], list[tuple[int, ...]]], top: bool, D: int) -> MemoryEstimate:
    """What a level of :func:`_modular` holds at once, at most (about 40 bytes per GF(p) entry in Python lists).

    Below the top degree every block's RREF basis of ``I_mu`` (at most
    ``s_mu x s_mu``) is kept for the next degree's products; at the top only
    one block at a time (its basis is dropped once its generators are out).
    The largest block also has its evaluation matrix and kernel in flight.
    """
    sizes = [len(m) for m in groups.values()]
    largest = max(sizes)
    held = largest * largest if top else sum(s * s for s in sizes)
    what = (
        f"one block of degree {D} ({largest:,} monomials)"
        if top
        else f"the bases of I in degree {D} ({len(sizes):,} blocks, {sum(sizes):,} monomials)"
    )
    return MemoryEstimate(
        40 * held + 80 * (largest + 20) * largest,
        {
            what: 40 * held,
            f"the evaluation and kernel of the largest block ({largest:,} monomials)": 80 * (largest + 20) * largest,
        },
    )


def minimal_generators(
    mu: tuple[int, ...],
    blk: ModularBlock,
    lower: dict[tuple[int, ...], ModularBlock],
    weights: np.ndarray,
    p: int,
    seed: int,
    perms: IndexPermutations | None = None,
) -> list[list[int]]:
    """A canonical complement of ``(S_1 I_{D-1})_mu`` in ``I_mu``: zero on the span's pivots, in RREF.

    ``lower`` holds the blocks of degree ``D - 1`` (with their bases of
    ``I``); with ``perms`` it holds representatives only, and the equations
    of ``mu - e_v`` are those of its representative carried by a permutation.
    """
    position = {m: c for c, m in enumerate(blk.monomials)}
    products = []
    for v in range(len(weights)):
        low_mu = tuple(int(x) for x in np.array(mu) - weights[v])
        if min(low_mu) < 0:
            continue
        if perms is None:
            low, sigma = lower.get(low_mu), None
        else:
            rep, sigma = perms.carry(low_mu)
            low = lower.get(rep)
        if low is None or not low.ideal:
            continue
        images = [low_m if sigma is None else IndexPermutations.apply(sigma, low_m) for low_m in low.monomials]
        columns = [position[tuple(sorted(m + (v,)))] for m in images]
        for g in low.ideal:
            vec = [0] * len(blk.monomials)
            for coeff, c in zip(g, columns):
                if coeff:
                    vec[c] = coeff
            products.append(vec)
    span, pivots = rref_rows(products, p, len(blk.monomials))
    if len(span) == len(blk.ideal):
        return []
    reduced = []
    for row in blk.ideal:
        r = list(row)
        for srow, pc in zip(span, pivots):
            if r[pc]:
                c = r[pc]
                r = [(x - c * y) % p for x, y in zip(r, srow)]
        reduced.append(r)
    generators, _ = rref_rows(reduced, p, len(blk.monomials))
    if len(generators) != len(blk.ideal) - len(span):
        raise ComputationError("minimal generators: the complement has the wrong dimension (bug)", prime=p, seed=seed)
    return generators


def representative_groups(
    d: int, e: int, D: int
) -> tuple[dict[tuple[int, ...], list[tuple[int, ...]]], dict[tuple[int, ...], list[tuple[int, ...]]]]:
    """The monomials of degree ``D`` by multidegree: all of them, and those of the representatives only."""
    weights = torus_weights(d, e)
    groups = monomials_by_multidegree(len(weights), D, weights)
    perms = IndexPermutations(d, e)
    reps = {mu: groups[mu] for mu in sorted({perms.representative(mu) for mu in groups}, reverse=True)}
    return groups, reps


def _level(
    d: int,
    e: int,
    a: int,
    D: int,
    top: bool,
    lower: dict[tuple[int, ...], ModularBlock],
    F: GFp,
    seed: int,
    rng: np.random.Generator,
) -> dict[tuple[int, ...], ModularBlock]:
    """The representatives' blocks of degree ``D`` (their bases dropped at the ``top`` degree, once the
    generators are out)."""
    p = F.p
    weights = torus_weights(d, e)
    perms = IndexPermutations(d, e)
    groups, reps = representative_groups(d, e, D)
    require_memory(
        level_memory(reps, top, D),
        f"the equations of degree {D} of ({d},{e},{a}) by interpolation",
        "use a smaller --max-degree",
    )
    largest = max(len(m) for m in groups.values())
    points = image_points(d, e, a, largest + 20, F, rng)
    level: dict[tuple[int, ...], ModularBlock] = {}
    for mu, monos in reps.items():
        E = evaluate_monomials(points, monos, F)
        basis = linalg.nullspace_mod_p(E, p)
        ideal, _ = rref_rows(basis, p, len(monos))
        blk = ModularBlock(list(monos), len(ideal), ideal, [])
        if ideal:
            blk.generators = (
                ideal if D == 1 or not lower else minimal_generators(mu, blk, lower, weights, p, seed, perms)
            )
        if top:
            blk.ideal = []
        level[mu] = blk
    return level


def modular_blocks(
    d: int, e: int, a: int, max_degree: int, p: int, seed: int, step: Callable[[int | None], object] | None = None
) -> dict[int, dict[tuple[int, ...], ModularBlock]]:
    """The representatives' blocks up to ``max_degree`` over GF(p): ``dim I_mu`` and the minimal generators.

    One block per orbit of multidegrees under the index permutations (see
    the module docstring; :func:`representative_groups`).  A block's basis
    of ``I_mu`` lives only as long as a higher degree needs it: the top
    degree's blocks are computed, reduced to their generators and dropped
    one at a time, so the peak is the bases of degree ``max_degree - 1``
    plus one block of the top degree.  ``step`` is called with each degree
    ``D`` before it is computed, and with None after it.
    """
    F = GFp(p)
    rng = np.random.default_rng([seed, p])
    out: dict[int, dict[tuple[int, ...], ModularBlock]] = {}
    for D in range(1, max_degree + 1):
        if step is not None:
            step(D)
        lower = out.get(D - 1, {})
        out[D] = _level(d, e, a, D, D == max_degree, lower, F, seed, rng)
        for blk in lower.values():  # degree D - 1's bases have served
            blk.ideal = []
        if step is not None:
            step(None)
    return out


def interpolation_memory(d: int, e: int, max_degree: int) -> MemoryEstimate:
    """What :func:`low_degree_equations` keeps across degrees: the monomials as Python tuples, per prime.

    About 550 bytes per monomial (a tuple, its list slot, its share of the
    blocks' bases) for each of up to three primes, by arithmetic only, so an
    absurd degree is refused before anything is enumerated.  The bases of
    each degree are estimated once its blocks are known (:func:`level_memory`).
    """
    n = reduced_count(d, e)
    monomials = sum(math.comb(n + D - 1, D) for D in range(1, max_degree + 1))
    return MemoryEstimate(
        3 * 550 * monomials, {f"{monomials:,} monomials in {n} coordinates, 3 primes": 3 * 550 * monomials}
    )
