"""Equations of the closure of one layer by interpolation, one multidegree at a time.

The torus of ``GL_d x GL_d x GL_{d'}`` acts on the reduced coordinates
``x_{k,m,ij}`` (the coefficient of ``z_i z_j`` in ``q_{k,m}(z) = (A_k . z)(V_m . z)``):
scaling row ``k`` of ``A`` by ``s_k``, row ``m`` of ``V`` by ``u_m`` and the
variable ``z_i`` by ``w_i`` multiplies ``x_{k,m,ij}`` by ``s_k u_m w_i w_j``.
These come from the symmetries ``A -> S A W``, ``V -> U V W`` of the
parametrization, so the ideal ``I`` of the closure is homogeneous for the
grading by ``(alpha, beta, gamma)`` in ``Z^d x Z^{d'} x Z^d``: a monomial of
degree ``D`` has ``|alpha| = |beta| = D`` and ``|gamma| = 2D``.

In each multidegree ``mu`` the component ``I_mu`` is the kernel of the
evaluation of the monomials of multidegree ``mu`` at points of the image: a
small exact linear-algebra problem over GF(p) (the largest block of
``(3,3,3)`` in degree 3 has a few hundred monomials), solved with FLINT's
``nmod_mat.nullspace`` (:func:`ag_attention._exact.linalg.nullspace_mod_p`).  With ``N >= #monomials + 20``
random image points the kernel is ``I_mu`` except with probability at most ``#monomials * 2D / p``
(Schwartz-Zippel on each non-member).  The *minimal* generators of degree
``D`` in ``mu`` are a complement of ``(S_1 I_{D-1})_mu``, the span of
``x_v g`` over the equations ``g`` of degree ``D - 1``; the complement is
chosen canonically (zero on the pivots of that span, in reduced row echelon
form), so that the same basis comes out modulo every prime and lifts to QQ
by the Chinese remainder theorem and rational reconstruction.  Every lifted
generator is verified *exactly* by substituting the parametrization (a
polynomial identity over QQ in the weights).

Permutations of the indices (``S_d x S_{d'} x S_d``) permute the multidegrees
and preserve ``I``; blocks are grouped into orbits with one representative
(non-increasing ``alpha``, ``beta``, ``gamma``) so a reader sees the structure.

The steps live in :mod:`.multidegrees` (the grading, monomials, image
points), :mod:`.modular` (the blocks modulo one prime), :mod:`.lifting` (CRT,
rational reconstruction, exact verification) and :mod:`.low_degree` (the
result); :func:`low_degree_equations` runs them and this module re-exports
what the rest of the package uses.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

from .. import _progress as progress
from .._architecture import Architecture
from .._checks import check_int
from .._errors import ComputationError, InvalidArgumentError
from .._exact import DEFAULT_PRIME, SECOND_PRIME, check_prime
from .._models import check_one_layer, reduced_keys, reduced_names
from .._resources import require_memory
from .lifting import MORE_PRIMES, Generator, lift, verify_on_parametrization
from .low_degree import Block, LowDegreeEquations
from .modular import ModularBlock, interpolation_memory, modular_blocks, representative_groups
from .multidegrees import IndexPermutations, Multidegree, image_points, mu_split

__all__ = [
    "Block",
    "LowDegreeEquations",
    "low_degree_equations",
    "reduced_coordinate_keys",
    "coordinate_names",
    "image_points",
    "interpolation_memory",
    "mu_split",
    "Multidegree",
]

#: the reduced coordinates' keys ``(k, m, i, j)`` and names (``q12z13``), from :mod:`ag_attention._models.coordinates`
reduced_coordinate_keys = reduced_keys
coordinate_names = reduced_names

Modular = dict[int, dict[tuple[int, ...], ModularBlock]]


def _check_sizes(d: int, e: int, a: int | None, max_degree: int) -> int:
    """The rank bound ``min(a, d)`` (``a=None``: ``d``) once every size is a positive integer."""
    for name, v in (("d", d), ("e", e), ("max_degree", max_degree)):
        check_int(v, name, minimum=1)
    a = check_int(d if a is None else a, "a", minimum=1)
    return min(a, d)


def _shape(m: Modular) -> dict[int, dict[tuple[int, ...], int]]:
    return {D: {mu: len(b.generators) for mu, b in lvl.items()} for D, lvl in m.items()}


class _Degrees(progress.Steps):
    """Degrees x primes on one progress bar (:class:`ag_attention._progress.Steps`): the degree and prime
    under way as its postfix."""

    def __init__(self, bar: Any, max_degree: int) -> None:
        super().__init__(bar)
        self.max_degree, self.prime = max_degree, 0

    def modulo(self, prime: int, count: int) -> _Degrees:
        """The ``count``-th prime is next (from the third on, the bar's total grows by its degrees)."""
        if count > 2:
            self.add(self.max_degree)
        self.prime = prime
        return self

    def __call__(self, D: int | None) -> None:
        if D is None:
            self.end()
        else:
            self.begin(f"degree {D} modulo {self.prime}")


def _lift_over_primes(
    d: int, e: int, a: int, max_degree: int, p: int, seed: int, degrees: _Degrees
) -> tuple[Modular, list[int], dict[int, dict[tuple[int, ...], list[Generator]]]]:
    """Blocks modulo ``p``, then further primes until the rational reconstruction is stable.

    Returns the blocks modulo the first prime, the primes used and the lifted generators.
    """
    primes = [p] + [q for q in (SECOND_PRIME, DEFAULT_PRIME, *MORE_PRIMES) if q != p]
    mods = [modular_blocks(d, e, a, max_degree, primes[0], seed, degrees.modulo(primes[0], 1))]
    used = [primes[0]]
    lifted: dict[int, dict[tuple[int, ...], list[Generator]]] | None = None
    for q in primes[1:]:
        mods.append(modular_blocks(d, e, a, max_degree, q, seed, degrees.modulo(q, len(used) + 1)))
        used.append(q)
        if _shape(mods[-1]) != _shape(mods[0]):
            raise ComputationError(
                f"the generator counts of ({d},{e},{a}) differ between primes {used[0]} and {q}: an unlucky point; "
                "rerun with another seed",
                prime=q,
                seed=seed,
            )
        new = lift(mods, used)
        if new is not None and new == lifted:
            break
        lifted = new
    else:
        if lifted is None:
            raise ComputationError("rational reconstruction did not stabilize", seed=seed)
    assert lifted is not None
    return mods[0], used, lifted


def _every_multidegree(
    d: int, e: int, first: Modular, lifted: dict[int, dict[tuple[int, ...], list[Generator]]]
) -> dict[int, list[Block]]:
    """The blocks of every multidegree from those of the representatives, carried by index permutations.

    A permutation of the indices is an automorphism of the closure
    (:class:`~ag_attention._algebra.multidegrees.IndexPermutations`): it maps
    the minimal generators of the representative onto a complement of
    ``(S_1 I_{D-1})_mu`` in ``I_mu``, i.e. minimal generators of ``mu``.
    """
    perms = IndexPermutations(d, e)
    blocks: dict[int, list[Block]] = {}
    for D, level in first.items():
        groups, _ = representative_groups(d, e, D)
        out = []
        for mu, monos in groups.items():
            rep, sigma = perms.carry(mu)
            b = level[rep]
            gens = tuple({IndexPermutations.apply(sigma, mono): c for mono, c in g.items()} for g in lifted[D][rep])
            out.append(Block(mu_split(mu, d, e), len(monos), b.ideal_dim, gens))
        blocks[D] = out
    return blocks


def _sizes_of(arch: Any, old_sizes: tuple[Any, ...], old_keywords: dict[str, Any]) -> tuple[int, int, int | None]:
    """``(d, e, a)`` from an :class:`~ag_attention.Architecture` or, deprecated, from raw sizes ``d, e, a``."""
    unknown = sorted(set(old_keywords) - {"d", "e", "a"})
    if unknown:
        raise TypeError(f"low_degree_equations() got an unexpected keyword argument {unknown[0]!r}")
    if isinstance(arch, Architecture):
        if old_sizes or old_keywords:
            extra = [repr(v) for v in old_sizes] + [f"{k}={v!r}" for k, v in old_keywords.items()]
            raise InvalidArgumentError(
                f"low_degree_equations(arch, {', '.join(extra)}): an Architecture gives the "
                "sizes; pass no d, e or a beside it"
            )
        check_one_layer(arch, "reduced", "low_degree_equations")
        return arch.widths[0], arch.widths[1], arch.ranks[0]
    if len(old_sizes) > 2:
        raise TypeError(
            f"low_degree_equations() takes an Architecture or at most three sizes d, e, a; got "
            f"{1 + len(old_sizes)} positional arguments"
        )
    given: dict[str, Any] = dict(zip(("d", "e", "a"), (arch, *old_sizes))) if arch is not None else {}
    for k, v in old_keywords.items():
        if k in given:
            raise TypeError(f"low_degree_equations() got multiple values for argument {k!r}")
        given[k] = v
    if not isinstance(given.get("d"), int) or "e" not in given:
        raise InvalidArgumentError(
            f"arch={arch!r}: must be an Architecture (one plain lightning layer, t >= 2), "
            "e.g. low_degree_equations(Architecture((2, 1), (2,), tokens=2))"
        )
    d, e, a = given["d"], given["e"], given.get("a")
    warnings.warn(
        "low_degree_equations(d, e, a, ...) is deprecated and stops working in the next version: pass an "
        f"Architecture, low_degree_equations(Architecture(({d!r}, {e!r}), ({a if a is not None else d!r},), "
        "tokens=2), max_degree=...)",
        DeprecationWarning,
        stacklevel=3,
    )
    return d, e, a


def low_degree_equations(
    arch: Architecture | int | None = None,
    *old_sizes: Any,
    max_degree: int = 3,
    prime: int = DEFAULT_PRIME,
    seed: int = 0,
    verify: bool = True,
    **old_keywords: Any,
) -> LowDegreeEquations:
    """All minimal generators of degree ``<= max_degree`` of the ideal of the closure (reduced coordinates, t >= 2).

    ``arch`` is one plain lightning layer with ``t >= 2`` tokens (widths
    ``(d, d')``, rank bound ``a``; the reduced coordinates do not depend on
    ``t``).  The raw sizes of earlier versions, ``low_degree_equations(d, d',
    a, max_degree=...)``, still work for this version with a
    ``DeprecationWarning``.

    Computed modulo primes (``prime``, then ``SECOND_PRIME`` and more while
    the rational reconstruction changes), lifted to QQ and, with ``verify``,
    checked exactly by substitution.  The counts per degree are exact with
    probability at least ``1 - sum(#monomials * 2D) / p`` per prime and
    confirmed by the agreement of two primes.  A computation of more than a
    few seconds shows the degrees done modulo each prime on a progress bar
    on standard error (after 2 s, and only on a terminal or in a notebook).
    """
    d, e, a = _sizes_of(arch, old_sizes, old_keywords)
    a = _check_sizes(d, e, a, max_degree)
    p = check_prime(prime)
    require_memory(
        interpolation_memory(d, e, max_degree),
        f"the equations of degree <= {max_degree} of ({d},{e},{a}) by interpolation",
        "use a smaller --max-degree",
    )
    t0 = time.perf_counter()
    with progress.bar(
        total=2 * max_degree, desc=f"equations of degree <= {max_degree} of ({d},{e},{a})", unit="degree"
    ) as bar:
        first, used, lifted = _lift_over_primes(d, e, a, max_degree, p, seed, _Degrees(bar, max_degree))
    names = reduced_names(d, e)
    verified = False
    if verify:  # the representatives' generators; the others are their images under automorphisms of the closure
        allg = [g for D in lifted for gens in lifted[D].values() for g in gens]
        verified = verify_on_parametrization(d, e, a, allg)
        if not verified:
            raise ComputationError(
                f"a lifted generator of ({d},{e},{a}) does not vanish on the parametrization", seed=seed
            )
    blocks = _every_multidegree(d, e, first, lifted)
    return LowDegreeEquations(d, e, a, max_degree, tuple(used), seed, blocks, names, time.perf_counter() - t0, verified)
