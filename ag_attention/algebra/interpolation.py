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
``nmod_mat.nullspace`` (:func:`ag_attention.exact.linalg.nullspace_mod_p`).  With ``N >= #monomials + 20`` random image points the
kernel is ``I_mu`` except with probability at most ``#monomials * 2D / p``
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
"""

from __future__ import annotations

import itertools
import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import ComputationError, InvalidArgumentError
from ..exact import linalg
from ..exact.field import DEFAULT_PRIME, SECOND_PRIME, GFp, check_prime
from ..models.coordinates import named_labels, reduced_coordinates, reduced_keys, reduced_names
from ..resources import MemoryEstimate, require_memory

__all__ = ["Block", "LowDegreeEquations", "low_degree_equations", "reduced_coordinate_keys", "coordinate_names", "image_points"]

Multidegree = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
#: primes for the multimodular lift after the first two (all below 2^31)
_MORE_PRIMES = (2147483587, 2147483579, 2147483563, 2147483549, 2147483543, 2147483497, 2147483489, 2147483477)


#: the reduced coordinates' keys ``(k, m, i, j)`` and names (``q12z13``), from :mod:`ag_attention.models.coordinates`
reduced_coordinate_keys = reduced_keys
coordinate_names = reduced_names


def _weight(key: tuple[int, int, int, int], d: int, e: int) -> np.ndarray:
    k, m, i, j = key
    w = np.zeros(2 * d + e, dtype=np.int64)
    w[k] += 1
    w[d + m] += 1
    w[d + e + i] += 1
    w[d + e + j] += 1
    return w


def image_points(d: int, e: int, a: int, n: int, F: GFp, rng: np.random.Generator) -> np.ndarray:
    """``n`` random points of the image over GF(p): rows of reduced coordinates of ``phi_{A,V}``.

    ``A = B C`` with ``B`` (``d x a``), ``C`` (``a x d``) random when ``a < d``.
    """
    if a < d:
        B, C = F.random(rng, (n, d, a)), F.random(rng, (n, a, d))
        A = F.einsum("nka,nai->nki", B, C)
    else:
        A = F.random(rng, (n, d, d))
    V = F.random(rng, (n, e, d))
    return np.stack(reduced_coordinates(A, V, F), axis=1)


def _monomials(n: int, degree: int, weights: np.ndarray) -> dict[Multidegree, list[tuple[int, ...]]]:
    """Monomials of ``degree`` in ``n`` variables (sorted index tuples), grouped by multidegree."""
    blocks: dict[tuple[int, ...], list[tuple[int, ...]]] = defaultdict(list)
    for mono in itertools.combinations_with_replacement(range(n), degree):
        blocks[tuple(weights[list(mono)].sum(axis=0))].append(mono)
    return blocks  # type: ignore[return-value]


def _evaluate(points: np.ndarray, monos: list[tuple[int, ...]], F: GFp) -> np.ndarray:
    idx = np.array(monos, dtype=np.int64)  # (s, D)
    out = points[:, idx[:, 0]]
    for c in range(1, idx.shape[1]):
        out = F.mul(out, points[:, idx[:, c]])
    return out  # (N, s)


def _rref_rows(vectors: list[list[int]], p: int, ncols: int) -> tuple[list[list[int]], list[int]]:
    """Reduced row echelon basis of the span of ``vectors`` over GF(p), and its pivot columns."""
    rows = linalg.rref_mod_p(vectors, p, ncols)
    pivots = [next(c for c in range(ncols) if row[c]) for row in rows]
    return rows, pivots


@dataclass
class _ModularBlock:
    monomials: list[tuple[int, ...]]
    ideal_dim: int  # dim I_mu over GF(p)
    ideal: list[list[int]]  # RREF basis of I_mu over GF(p); emptied once degree D + 1 no longer needs it
    generators: list[list[int]]  # canonical complement of (S_1 I_{D-1})_mu in I_mu (RREF)


def _level_memory(groups: dict, top: bool, D: int) -> MemoryEstimate:
    """What a level of :func:`_modular` holds at once, at most (about 40 bytes per GF(p) entry in Python lists).

    Below the top degree every block's RREF basis of ``I_mu`` (at most
    ``s_mu x s_mu``) is kept for the next degree's products; at the top only
    one block at a time (its basis is dropped once its generators are out).
    The largest block also has its evaluation matrix and kernel in flight.
    """
    sizes = [len(m) for m in groups.values()]
    largest = max(sizes)
    held = largest * largest if top else sum(s * s for s in sizes)
    what = (f"one block of degree {D} ({largest:,} monomials)" if top
            else f"the bases of I in degree {D} ({len(sizes):,} blocks, {sum(sizes):,} monomials)")
    return MemoryEstimate(40 * held + 80 * (largest + 20) * largest,
                          {what: 40 * held, f"the evaluation and kernel of the largest block ({largest:,} monomials)":
                           80 * (largest + 20) * largest})


def _generators(mu: tuple, blk: _ModularBlock, lower: dict[tuple, _ModularBlock], weights: np.ndarray,
                p: int, seed: int) -> list[list[int]]:
    """A canonical complement of ``(S_1 I_{D-1})_mu`` in ``I_mu``: zero on the span's pivots, in RREF."""
    position = {m: c for c, m in enumerate(blk.monomials)}
    products = []
    for v in range(len(weights)):
        low = lower.get(tuple(np.array(mu) - weights[v]))
        if low is None or not low.ideal:
            continue
        for g in low.ideal:
            vec = [0] * len(blk.monomials)
            for coeff, mono in zip(g, low.monomials):
                if coeff:
                    vec[position[tuple(sorted(mono + (v,)))]] = coeff
            products.append(vec)
    span, pivots = _rref_rows(products, p, len(blk.monomials))
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
    generators, _ = _rref_rows(reduced, p, len(blk.monomials))
    if len(generators) != len(blk.ideal) - len(span):
        raise ComputationError("minimal generators: the complement has the wrong dimension (bug)", prime=p, seed=seed)
    return generators


def _modular(d: int, e: int, a: int, max_degree: int, p: int, seed: int) -> dict[int, dict[tuple, _ModularBlock]]:
    """All blocks up to ``max_degree`` over GF(p): ``dim I_mu`` and the minimal generators per multidegree.

    A block's basis of ``I_mu`` lives only as long as a higher degree needs it:
    the top degree's blocks are computed, reduced to their generators and
    dropped one at a time, so the peak is the bases of degree
    ``max_degree - 1`` plus one block of the top degree.
    """
    F = GFp(p)
    keys = reduced_coordinate_keys(d, e)
    n = len(keys)
    weights = np.array([_weight(k, d, e) for k in keys])
    rng = np.random.default_rng([seed, p])
    out: dict[int, dict[tuple, _ModularBlock]] = {}
    for D in range(1, max_degree + 1):
        groups = _monomials(n, D, weights)
        require_memory(_level_memory(groups, D == max_degree, D),
                       f"the equations of degree {D} of ({d},{e},{a}) by interpolation", "use a smaller --max-degree")
        largest = max(len(m) for m in groups.values())
        points = image_points(d, e, a, largest + 20, F, rng)
        lower = out.get(D - 1, {})
        level: dict[tuple, _ModularBlock] = {}
        for mu, monos in groups.items():
            E = _evaluate(points, monos, F)
            s = len(monos)
            basis = linalg.nullspace_mod_p(E, p)
            ideal, _ = _rref_rows(basis, p, s)
            blk = _ModularBlock(list(monos), len(ideal), ideal, [])
            if ideal:
                blk.generators = ideal if D == 1 or not lower else _generators(mu, blk, lower, weights, p, seed)
            if D == max_degree:
                blk.ideal = []
            level[mu] = blk
        for blk in lower.values():  # degree D - 1's bases have served
            blk.ideal = []
        out[D] = level
    return out


def _rational_reconstruction(a: int, m: int) -> Fraction | None:
    """``r/s = a mod m`` with ``|r|, s <= sqrt(m/2)``, or None."""
    bound = math.isqrt(m // 2)
    r0, r1, s0, s1 = m, a % m, 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1, s0, s1 = r1, r0 - q * r1, s1, s0 - q * s1
    if s1 == 0 or abs(s1) > bound:
        return None
    return Fraction(r1, s1) if s1 > 0 else Fraction(-r1, -s1)


@dataclass(frozen=True)
class Block:
    """One multidegree: its monomials, the dimension of the ideal there, its minimal generators."""

    multidegree: Multidegree
    monomials: int
    ideal_dimension: int
    generators: tuple[dict[tuple[int, ...], Fraction], ...]  # over QQ: monomial (sorted indices) -> coefficient

    @property
    def representative(self) -> Multidegree:
        """The non-increasing member of its orbit under permutations of the indices."""
        a, b, c = self.multidegree
        return tuple(sorted(map(int, a), reverse=True)), tuple(sorted(map(int, b), reverse=True)), tuple(sorted(map(int, c), reverse=True))


@dataclass
class LowDegreeEquations:
    """All minimal generators of degree ``<= max_degree`` of the closure's ideal, over QQ, verified."""

    d: int
    e: int
    a: int
    max_degree: int
    primes: tuple[int, ...]
    seed: int
    blocks: dict[int, list[Block]]
    variables: tuple[str, ...]
    seconds: float
    verified: bool  # every generator vanishes on the parametrization (exact substitution over QQ)
    extra: dict[str, Any] = field(default_factory=dict)
    #: the length test of ``ag_attention.algebra.completeness``, when it was run (``length_test.certified``: the ideal is complete)
    length_test: Any = None
    #: the leading-ideal test of ``ag_attention.algebra.completeness``, when it was run
    leading_test: Any = None

    def ideal_dimension(self, degree: int) -> int:
        return sum(b.ideal_dimension for b in self.blocks.get(degree, []))

    def hilbert_function(self, degree: int) -> int:
        """``dim (S/I)_D``: monomials of degree ``D`` minus equations."""
        n = len(self.variables)
        return math.comb(n + degree - 1, degree) - self.ideal_dimension(degree)

    def generators_of_degree(self, degree: int) -> list[dict[tuple[int, ...], Fraction]]:
        return [g for b in self.blocks.get(degree, []) for g in b.generators]

    @property
    def generator_count(self) -> dict[int, int]:
        return {D: len(self.generators_of_degree(D)) for D in sorted(self.blocks)}

    def orbits(self, degree: int) -> list[tuple[Multidegree, int, int]]:
        """``(representative, number of multidegrees in the orbit, generators per multidegree)``."""
        acc: dict[Multidegree, list[int]] = defaultdict(list)
        for b in self.blocks.get(degree, []):
            if b.generators:
                acc[b.representative].append(len(b.generators))
        out = []
        for rep, counts in sorted(acc.items(), reverse=True):
            if len(set(counts)) != 1:  # permutations preserve the ideal: a mismatch is a bug
                raise ComputationError(f"multidegrees of the orbit of {rep} have different generator counts {counts}")
            out.append((rep, len(counts), counts[0]))
        return out

    def representations(self, degree: int) -> list[tuple[Multidegree, int, int]]:
        """The minimal generators of ``degree`` as a ``GL_d x GL_{d'} x GL_d`` representation (rows of A, rows
        of V, the variable z): ``((lambda, mu, nu), multiplicity, dimension)`` per irreducible summand, from the
        generator counts per multidegree (``ag_attention.algebra.representations``)."""
        from .representations import decompose

        character: dict[Multidegree, int] = {}
        for b in self.blocks.get(degree, []):
            if b.generators:
                alpha, beta, gamma = b.multidegree
                key = (tuple(map(int, alpha)), tuple(map(int, beta)), tuple(map(int, gamma)))
                character[key] = character.get(key, 0) + len(b.generators)
        found = decompose(character, (self.d, self.e, self.d))
        if sum(m * dim for _, m, dim in found) != self.generator_count.get(degree, 0):
            raise ComputationError(f"degree {degree}: the irreducibles do not add up to the generators")
        return found

    @staticmethod
    def _irreducible_text(shape: Multidegree, m: int, dim: int) -> str:
        name = " x ".join("S" + str(tuple(part)).replace(",)", ")") for part in shape)
        return f"{m} x [{name}] (dim {dim})" if m > 1 else f"[{name}] (dim {dim})"

    @property
    def certified_complete(self) -> bool:
        return any(t is not None and t.certified for t in (self.leading_test, self.length_test))

    @property
    def cohen_macaulay(self) -> str | None:
        """What the tests say about ``R/I`` being Cohen-Macaulay (None: nothing)."""
        if self.length_test is None:
            return None
        if self.length_test.certified:
            return "yes (proven by the length test)"
        if self.leading_test is not None and self.leading_test.certified and self.length_test.length is not None:
            return (f"no, unless {self.length_test.prime} is an unlucky prime: the complete ideal gives length "
                    f"{self.length_test.length} > deg M = {self.length_test.degree}")
        return None

    @property
    def complete(self) -> str:
        """What is known about completeness: certified, or every generator of degree <= max_degree is here."""
        for name, t in (("leading-ideal test", self.leading_test), ("length test", self.length_test)):
            if t is not None and t.certified:
                return (f"certified: these generators (degree <= {self.max_degree}) generate the whole ideal "
                        f"({name}: {t.summary()})")
        text = f"up to degree {self.max_degree}: all minimal generators of degree <= {self.max_degree}; "
        tests = [t.summary() for t in (self.leading_test, self.length_test) if t is not None]
        return text + ("; ".join(tests) if tests else "higher degrees not examined")

    def coordinate_labels(self) -> list[str]:
        return named_labels(self.variables, self.d, self.e)

    def to_dict(self) -> dict[str, Any]:
        return {
            "d": self.d, "d_out": self.e, "rank": self.a, "coordinates": "reduced", "method": "interpolate",
            "max_degree": self.max_degree, "primes": list(self.primes), "seed": self.seed,
            "generator_count": {str(D): n for D, n in self.generator_count.items()},
            "ideal_dimension": {str(D): self.ideal_dimension(D) for D in sorted(self.blocks)},
            "hilbert_function": {str(D): self.hilbert_function(D) for D in sorted(self.blocks)},
            "orbits": {str(D): [{"alpha": list(r[0]), "beta": list(r[1]), "gamma": list(r[2]), "multidegrees": n,
                                 "generators_each": g} for r, n, g in self.orbits(D)] for D in sorted(self.blocks)},
            "representations": {str(D): [{"A_rows": list(sh[0]), "V_rows": list(sh[1]), "z": list(sh[2]),
                                          "multiplicity": m, "dimension": dim}
                                         for sh, m, dim in self.representations(D)] for D in sorted(self.blocks)},
            "complete": self.complete,
            "certified_complete": self.certified_complete,
            "cohen_macaulay": self.cohen_macaulay,
            "length_test": None if self.length_test is None else self.length_test.to_dict(),
            "leading_ideal_test": None if self.leading_test is None else self.leading_test.to_dict(),
            "verified": self.verified,
            "notes": {k: str(v) for k, v in self.extra.items()},
            "variables": list(self.variables),
            "coordinate_labels": self.coordinate_labels(),
            "generators": {str(D): self.polynomial_strings(D) for D in sorted(self.blocks)},
            "seconds": round(self.seconds, 3),
        }

    def __repr__(self) -> str:
        return (f"LowDegreeEquations(d={self.d}, d'={self.e}, a={self.a}: generators by degree {self.generator_count}, "
                f"primes {len(self.primes)}, {'verified' if self.verified else 'not verified'})")

    def __str__(self) -> str:
        lines = [
            f"Equations of the closure of d={self.d}, d'={self.e}, a={self.a} (reduced coordinates, "
            f"{len(self.variables)}), by interpolation per torus multidegree",
        ]
        for D in sorted(self.blocks):
            n = self.generator_count[D]
            orbit_text = ", ".join(f"{r} x{size}: {g}" for r, size, g in self.orbits(D)[:4])
            more = f", ... ({len(self.orbits(D)) - 4} more orbits)" if len(self.orbits(D)) > 4 else ""
            lines.append(f"  degree {D}: {n} minimal generators (dim I_{D} = {self.ideal_dimension(D)})"
                         + (f"; orbits (alpha, beta, gamma) x size: per multidegree: {orbit_text}{more}" if n else ""))
            if n:
                irreps = self.representations(D)
                shown = ", ".join(self._irreducible_text(*r) for r in irreps[:6])
                extra = f", ... ({len(irreps) - 6} more)" if len(irreps) > 6 else ""
                lines.append(f"    as GL(A rows) x GL(V rows) x GL(z): {len(irreps)} irreducible(s): {shown}{extra}")
        lines += [
            f"  complete         {self.complete}",
            f"  verified         {'every generator vanishes on the parametrization (exact substitution over QQ)' if self.verified else 'no'}",
            f"  primes {', '.join(map(str, self.primes))} (counts agree), seed {self.seed}, {self.seconds:.2f} s",
        ]
        if self.leading_test is not None:
            t = self.leading_test
            lines.append(f"  leading ideals   {t.summary()}; msolve {t.seconds_j:.2f} s (J) + {t.seconds_i:.2f} s "
                         "(elimination)")
        if self.length_test is not None:
            t = self.length_test
            lines.append(f"  length test      {t.summary()}; prime {t.prime}, seed {t.seed}, {t.seconds:.2f} s")
        if self.cohen_macaulay is not None:
            lines.append(f"  Cohen-Macaulay   {self.cohen_macaulay}")
        lines += [f"  {k:<16} {v}" for k, v in self.extra.items()]
        return "\n".join(lines)

    def polynomial_strings(self, degree: int) -> list[str]:
        out = []
        for g in self.generators_of_degree(degree):
            terms = []
            for mono, c in sorted(g.items(), reverse=True):
                m = "*".join(self.variables[i] for i in mono)
                terms.append(f"{c}*{m}")
            out.append(" + ".join(terms).replace("+ -", "- "))
        return out


def _verify(d: int, e: int, a: int, gens: list[dict[tuple[int, ...], Fraction]]) -> bool:
    """Exact: each generator composed with the parametrization is the zero polynomial over QQ."""
    names = [f"a{k}_{i}" for k in range(d) for i in range(d)] + [f"v{m}_{i}" for m in range(e) for i in range(d)]
    if a < d:  # A = B C: the rank-bounded domain
        names = [f"b{k}_{r}" for k in range(d) for r in range(a)] + [f"c{r}_{i}" for r in range(a) for i in range(d)] + names[d * d:]
    ctx = linalg.rational_polynomial_ring(names, "degrevlex")
    g = dict(zip(names, ctx.gens()))
    if a < d:
        A = [[sum((g[f"b{k}_{r}"] * g[f"c{r}_{i}"] for r in range(a)), ctx.constant(0)) for i in range(d)] for k in range(d)]
    else:
        A = [[g[f"a{k}_{i}"] for i in range(d)] for k in range(d)]
    V = [[g[f"v{m}_{i}"] for i in range(d)] for m in range(e)]
    coords = reduced_coordinates(A, V)
    for gen in gens:
        total = ctx.constant(0)
        for mono, c in gen.items():
            term = ctx.constant(linalg.rational(c))
            for v in mono:
                term = term * coords[v]
            total += term
        if not total.is_zero():
            return False
    return True


def interpolation_memory(d: int, e: int, max_degree: int) -> MemoryEstimate:
    """What :func:`low_degree_equations` keeps across degrees: the monomials as Python tuples, per prime.

    About 550 bytes per monomial (a tuple, its list slot, its share of the
    blocks' bases) for each of up to three primes, by arithmetic only, so an
    absurd degree is refused before anything is enumerated.  The bases of
    each degree are estimated once its blocks are known (:func:`_level_memory`).
    """
    n = d * e * d * (d + 1) // 2
    monomials = sum(math.comb(n + D - 1, D) for D in range(1, max_degree + 1))
    return MemoryEstimate(3 * 550 * monomials, {f"{monomials:,} monomials in {n} coordinates, 3 primes": 3 * 550 * monomials})


def low_degree_equations(d: int, e: int, a: int | None = None, *, max_degree: int = 3, prime: int = DEFAULT_PRIME,
                         seed: int = 0, verify: bool = True) -> LowDegreeEquations:
    """All minimal generators of degree ``<= max_degree`` of the ideal of the closure (reduced coordinates, t >= 2).

    Computed modulo primes (``prime``, then ``SECOND_PRIME`` and more while
    the rational reconstruction changes), lifted to QQ and, with ``verify``,
    checked exactly by substitution.  The counts per degree are exact with
    probability at least ``1 - sum(#monomials * 2D) / p`` per prime and
    confirmed by the agreement of two primes.
    """
    for name, v in (("d", d), ("e", e), ("max_degree", max_degree)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidArgumentError(f"{name}={v!r}: must be a positive integer")
    a = d if a is None else a
    if isinstance(a, bool) or not isinstance(a, int) or a < 1:
        raise InvalidArgumentError(f"a={a!r}: must be a positive integer")
    a = min(a, d)
    p = check_prime(prime)
    require_memory(interpolation_memory(d, e, max_degree),
                   f"the equations of degree <= {max_degree} of ({d},{e},{a}) by interpolation",
                   "use a smaller --max-degree")
    t0 = time.perf_counter()
    primes = [p] + [q for q in (SECOND_PRIME, DEFAULT_PRIME, *_MORE_PRIMES) if q != p]
    mods = [_modular(d, e, a, max_degree, primes[0], seed)]
    used = [primes[0]]
    lifted: dict[int, dict[tuple, list[dict[tuple[int, ...], Fraction]]]] | None = None
    for q in primes[1:]:
        mods.append(_modular(d, e, a, max_degree, q, seed))
        used.append(q)
        shape = lambda m: {D: {mu: len(b.generators) for mu, b in lvl.items()} for D, lvl in m.items()}  # noqa: E731
        if shape(mods[-1]) != shape(mods[0]):
            raise ComputationError(
                f"the generator counts of ({d},{e},{a}) differ between primes {used[0]} and {q}: an unlucky point; "
                "rerun with another seed", prime=q, seed=seed,
            )
        new = _lift(mods, used)
        if new is not None and new == lifted:
            break
        lifted = new
    else:
        if lifted is None:
            raise ComputationError("rational reconstruction did not stabilize", seed=seed)
    assert lifted is not None
    blocks: dict[int, list[Block]] = {}
    for D, level in mods[0].items():
        blocks[D] = [
            Block(mu_split(mu, d, e), len(b.monomials), b.ideal_dim, tuple(lifted[D][mu]))
            for mu, b in level.items()
        ]
    names = coordinate_names(d, e)
    verified = False
    if verify:
        allg = [g for D in blocks for b in blocks[D] for g in b.generators]
        verified = _verify(d, e, a, allg)
        if not verified:
            raise ComputationError(f"a lifted generator of ({d},{e},{a}) does not vanish on the parametrization", seed=seed)
    return LowDegreeEquations(d, e, a, max_degree, tuple(used), seed, blocks, names, time.perf_counter() - t0, verified)


def mu_split(mu: tuple, d: int, e: int) -> Multidegree:
    return tuple(mu[:d]), tuple(mu[d:d + e]), tuple(mu[d + e:])


def _lift(mods: list[dict[int, dict[tuple, _ModularBlock]]], primes: list[int]):
    """CRT of the canonical generators over the primes, then rational reconstruction; None if one fails."""
    M = math.prod(primes)
    out: dict[int, dict[tuple, list[dict[tuple[int, ...], Fraction]]]] = {}
    for D, level in mods[0].items():
        out[D] = {}
        for mu, blk in level.items():
            gens = []
            for gi, row in enumerate(blk.generators):
                residues = [m[D][mu].generators[gi] for m in mods]
                poly = {}
                for c, mono in enumerate(blk.monomials):
                    vals = [r[c] for r in residues]
                    if not any(vals):
                        continue
                    x = _crt(vals, primes)
                    f = _rational_reconstruction(x, M)
                    if f is None:
                        return None
                    poly[mono] = f
                gens.append(poly)
            out[D][mu] = gens
    return out


def _crt(residues: list[int], moduli: list[int]) -> int:
    x, m = 0, 1
    for r, q in zip(residues, moduli):
        # x + m t = r (mod q)
        t = ((r - x) * pow(m, -1, q)) % q
        x, m = x + m * t, m * q
    return x
