"""Their families against the package's minimal generators, per degree and torus multidegree
(:func:`explain_generators`): one part of :mod:`.invariants`.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..._algebra import Multidegree, low_degree_equations, torus_weights
from ..._architecture import Architecture
from ..._checks import check_int
from ..._errors import InvalidArgumentError
from ..._exact import linalg
from .constructions import _fraction
from .coordinates import Poly, _check_size
from .families import FAMILIES, family_members

__all__ = ["Explained", "explain_generators"]

# ---------------------------------------------------------------------------------------------- explained generators
Sparse = dict[tuple[int, ...], Fraction]  # a polynomial in the reduced coordinates: monomial (sorted indices) -> coef


def _sparse(p: Poly) -> Sparse:
    out: Sparse = {}
    for exps, c in p.to_dict().items():
        mono = tuple(i for i, e in enumerate(exps) for _ in range(int(e)))
        out[mono] = _fraction(c)
    return out


def _weight(mono: tuple[int, ...], weights: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in weights[list(mono)].sum(axis=0)) if mono else ()


class _Space:
    """Subspaces of one multidegree's polynomials, exactly over QQ: ranks and bases by FLINT's ``fmpq_mat``."""

    def __init__(self) -> None:
        self.columns: dict[tuple[int, ...], int] = {}

    def rows(self, polys: Iterable[Sparse]) -> list[list[Fraction]]:
        polys = list(polys)
        for p in polys:
            for m in p:
                self.columns.setdefault(m, len(self.columns))
        return [[p.get(m, Fraction(0)) for m in self.columns] for p in polys]

    def rank(self, *groups: Iterable[Sparse]) -> int:
        rows = self.rows(p for g in groups for p in g)
        return linalg.rank_rational(rows) if rows else 0

    def basis(self, *groups: Iterable[Sparse]) -> list[Sparse]:
        rows = self.rows(p for g in groups for p in g)
        if not rows:
            return []
        R, r = linalg.rref_rational(rows)
        cols = list(self.columns)
        return [{cols[c]: q for c, q in enumerate(R[i]) if q} for i in range(r)]


@dataclass
class Explained:
    """Their families against the package's minimal generators of one size (``d' = 1``, reduced coordinates).

    ``rows``: one per degree and orbit of multidegrees under index permutations (``representative``, how many
    multidegrees, the minimal generators of each, and summed over the orbit: generators, explained by all families
    together, unexplained, explained by each family alone).  A generator of degree ``D`` and multidegree ``mu`` is
    *explained* when it lies in the span of the families' members of degree ``D`` plus the ideal generated in lower
    degrees; the count is ``rank(H_mu + F_mu) - rank(H_mu)`` with ``H = S_1 I_{D-1}``, exact over QQ (members that
    are not torus-homogeneous count through the part of their span that is: :meth:`_inhomogeneous`).
    ``generates_up_to``: the largest ``k`` such that no generator of degree ``<= k`` is unexplained, i.e. (by
    induction on the degree: ``J_{D-1} = I_{D-1}`` makes ``H = S_1 J_{D-1}``) the ideal ``J`` the families generate
    alone equals ``I`` in every degree ``<= k``.
    """

    d: int
    a: int
    max_degree: int
    families: tuple[str, ...]
    rows: list[dict[str, Any]]
    generates_up_to: int
    members: dict[str, dict[str, int]]
    seconds: float
    generators_exact: bool  # rank over QQ of the lifted generators and H equals the modular dimension everywhere
    consistent: bool  # the families' homogeneous members add nothing to I_mu (they lie in the ideal)

    @property
    def generator_count(self) -> dict[int, int]:
        out: dict[int, int] = defaultdict(int)
        for r in self.rows:
            out[r["degree"]] += r["generators"]
        return dict(out)

    @property
    def unexplained(self) -> dict[int, int]:
        out: dict[int, int] = defaultdict(int)
        for r in self.rows:
            out[r["degree"]] += r["unexplained"]
        return dict(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "d": self.d,
            "d_out": 1,
            "a": self.a,
            "max_degree": self.max_degree,
            "families": list(self.families),
            "rows": self.rows,
            "generates_up_to": self.generates_up_to,
            "members": self.members,
            "generators_exact": self.generators_exact,
            "consistent": self.consistent,
            "seconds": round(self.seconds, 2),
        }


def explain_generators(
    d: int, a: int, max_degree: int = 4, families: Sequence[str] | None = None, seed: int = 0, t: int = 2
) -> Explained:
    """Which minimal generators of degree ``<= max_degree`` (:func:`ag_attention.low_degree_equations`) the
    families (their ``t >= 2`` ones, by default all) explain, per degree and multidegree (cached: the same
    arguments give the same object, not to be changed)."""
    a = _check_size(d, t, 1, a)
    max_degree = check_int(max_degree, "max_degree", minimum=1, maximum=6)
    names = tuple(f for f in FAMILIES if FAMILIES[f].regime == "t>=2") if families is None else tuple(families)
    for name in names:
        if name not in FAMILIES or FAMILIES[name].regime != "t>=2":
            raise InvalidArgumentError(
                f"families: {name!r} is not one of the t >= 2 families "
                f"({', '.join(f for f in FAMILIES if FAMILIES[f].regime == 't>=2')})"
            )
    return _explain(d, a, max_degree, names, seed, t)


@lru_cache(maxsize=16)
def _explain(d: int, a: int, max_degree: int, names: tuple[str, ...], seed: int, t: int) -> Explained:
    t0 = time.perf_counter()
    eqs = low_degree_equations(Architecture.single_layer(d, 1, a, tokens=2), max_degree=max_degree, seed=seed)
    weights = torus_weights(d, 1)
    by_family, members = _members_by_degree(names, d, t, a, max_degree, weights)
    ideal_basis: dict[tuple[int, ...], list[Sparse]] = {}  # I_{D-1} per multidegree
    rows: dict[tuple[int, Multidegree], dict[str, Any]] = {}
    exact = consistent = True
    for D in range(1, max_degree + 1):
        lower = _products(ideal_basis, len(weights), weights)
        blocks = {tuple(x for part in b.multidegree for x in part): b for b in eqs.blocks.get(D, [])}
        step = _Degree(names, blocks, lower, weights, *_split_homogeneous(names, by_family, D, weights))
        exact &= step.exact
        consistent &= step.consistent
        step.add_rows(rows, D)
        ideal_basis = step.new_basis
    table = [r for _, r in sorted(rows.items()) if r["generators"] or any(r["by_family"].values())]
    unexplained = {r["degree"] for r in table if r["unexplained"]}
    upto = min(unexplained) - 1 if unexplained else max_degree
    return Explained(d, a, max_degree, names, table, upto, members, time.perf_counter() - t0, exact, consistent)


def _members_by_degree(
    names: tuple[str, ...], d: int, t: int, a: int, max_degree: int, weights: Any
) -> tuple[dict[str, dict[int, list[Sparse]]], dict[str, dict[str, int]]]:
    """Each family's nonzero members of degree ``<= max_degree`` in our reduced coordinates, by degree, and how many
    there are (nonzero, of degree ``<= max_degree``, torus-homogeneous among those)."""
    members: dict[str, dict[str, int]] = {}
    by_family: dict[str, dict[int, list[Sparse]]] = {}
    for name in names:
        polys = [p for p in family_members(name, d, t, a, 1, "reduced") if not p.is_zero()]
        kept = [_sparse(p) for p in polys if p.total_degree() <= max_degree]
        by_family[name] = defaultdict(list)
        for s in kept:
            by_family[name][len(next(iter(s)))].append(s)
        members[name] = {
            "nonzero_in_reduced": len(polys),
            "up_to_degree": len(kept),
            "homogeneous": sum(len({_weight(m, weights) for m in s}) == 1 for s in kept),
        }
    return by_family, members


def _split_homogeneous(
    names: tuple[str, ...], by_family: dict[str, dict[int, list[Sparse]]], D: int, weights: Any
) -> tuple[dict[str, dict[tuple[int, ...], list[Sparse]]], dict[str, list[Sparse]]]:
    """Each family's members of degree ``D``: the torus-homogeneous ones by multidegree, and the others."""
    F: dict[str, dict[tuple[int, ...], list[Sparse]]] = {name: defaultdict(list) for name in names}
    inhomogeneous: dict[str, list[Sparse]] = defaultdict(list)
    for name in names:
        for s in by_family[name].get(D, []):
            mus = {_weight(m, weights) for m in s}
            if len(mus) == 1:
                F[name][mus.pop()].append(s)
            else:
                inhomogeneous[name].append(s)
    return F, inhomogeneous


class _Degree:
    """One degree ``D`` of :func:`explain_generators`: per multidegree ``mu`` of the generators, the basis of
    ``I_mu``, what all families together and each alone explain, and whether the generators are exact and the
    families consistent."""

    def __init__(
        self,
        names: tuple[str, ...],
        blocks: dict[tuple[int, ...], Any],
        lower: dict[tuple[int, ...], list[Sparse]],
        weights: Any,
        F: dict[str, dict[tuple[int, ...], list[Sparse]]],
        inhomogeneous: dict[str, list[Sparse]],
    ) -> None:
        self.names, self.blocks = names, blocks
        self.new_basis: dict[tuple[int, ...], list[Sparse]] = {}
        self.explained_all: dict[tuple[int, ...], int] = {}
        self.explained_one: dict[tuple[int, ...], dict[str, int]] = {}
        self.exact = self.consistent = True
        homogeneous_all = {mu: [s for name in names for s in F[name].get(mu, [])] for mu in blocks}
        extra = _inhomogeneous(
            [s for name in names for s in inhomogeneous[name]], blocks, lower, homogeneous_all, weights
        )
        extra_one = {
            name: _inhomogeneous(
                inhomogeneous[name], blocks, lower, {mu: F[name].get(mu, []) for mu in blocks}, weights
            )
            for name in names
        }
        for mu, blk in blocks.items():
            space = _Space()
            H = lower.get(mu, [])
            h = space.rank(H)
            basis = space.basis(H, blk.generators)
            self.exact &= len(basis) == blk.ideal_dimension
            self.consistent &= space.rank(basis, homogeneous_all[mu]) == len(basis)
            self.new_basis[mu] = basis
            self.explained_all[mu] = space.rank(H, homogeneous_all[mu]) - h + extra.get(mu, 0)
            self.explained_one[mu] = {
                name: space.rank(H, F[name].get(mu, [])) - h + extra_one[name].get(mu, 0) for name in names
            }

    def add_rows(self, rows: dict[tuple[int, Multidegree], dict[str, Any]], D: int) -> None:
        """Add this degree's counts to ``rows``, one per orbit of multidegrees (keyed by degree and representative)."""
        for mu, blk in self.blocks.items():
            a_, b_, g_ = blk.representative
            row = rows.setdefault(
                (D, (a_, b_, g_)),
                {
                    "degree": D,
                    "representative": [list(a_), list(b_), list(g_)],
                    "multidegrees": 0,
                    "generators_each": len(blk.generators),
                    "generators": 0,
                    "explained": 0,
                    "unexplained": 0,
                    "by_family": {name: 0 for name in self.names},
                },
            )
            row["multidegrees"] += 1
            row["generators"] += len(blk.generators)
            row["explained"] += self.explained_all[mu]
            row["unexplained"] += len(blk.generators) - self.explained_all[mu]
            for name in self.names:
                row["by_family"][name] += self.explained_one[mu][name]


def _products(
    basis: dict[tuple[int, ...], list[Sparse]], nvars: int, weights: Any
) -> dict[tuple[int, ...], list[Sparse]]:
    """``S_1 . basis``: every ``x_v b``, grouped by multidegree."""
    out: dict[tuple[int, ...], list[Sparse]] = defaultdict(list)
    for mu, polys in basis.items():
        for v in range(nvars):
            nu = tuple(int(x) + int(w) for x, w in zip(mu, weights[v]))
            for p in polys:
                out[nu].append({tuple(sorted(m + (v,))): c for m, c in p.items()})
    return out


def _inhomogeneous(
    polys: list[Sparse],
    blocks: dict[tuple[int, ...], Any],
    lower: dict[tuple[int, ...], list[Sparse]],
    homogeneous: dict[tuple[int, ...], list[Sparse]],
    weights: Any,
) -> dict[tuple[int, ...], int]:
    """What members that are not torus-homogeneous add in each multidegree ``mu``: with ``G = H + F_hom``
    (homogeneous), ``dim((G + F_inh) cap S_mu) - dim G_mu = dim(Fbar cap Q_mu)``, ``Fbar`` the members reduced
    modulo ``G`` block by block, ``Q = S / G``; ``dim(Fbar cap Q_mu) = rank Fbar - rank(Fbar without the columns
    of mu)``, over QQ, per connected component of members sharing multidegrees."""
    if not polys:
        return {}
    reduced: list[dict[tuple[int, ...], Sparse]] = []
    normal: dict[tuple[int, ...], list[Sparse]] = {}
    for p in polys:
        parts: dict[tuple[int, ...], Sparse] = defaultdict(dict)
        for m, c in p.items():
            parts[_weight(m, weights)][m] = c
        red = {}
        for mu, part in parts.items():
            if mu not in normal:
                space = _Space()
                normal[mu] = space.basis(lower.get(mu, []), homogeneous.get(mu, []))
            r = _reduce(part, normal[mu])
            if r:
                red[mu] = r
        if red:
            reduced.append(red)
    out: dict[tuple[int, ...], int] = {}
    for component in _components(reduced):
        mus = sorted({mu for r in component for mu in r})
        cols = [(mu, m) for mu in mus for m in sorted({m for r in component for m in r.get(mu, {})})]
        full = [[r.get(mu, {}).get(m, Fraction(0)) for mu, m in cols] for r in component]
        total = linalg.rank_rational(full)
        for mu in mus:
            keep = [i for i, (nu, _) in enumerate(cols) if nu != mu]
            out[mu] = total - (linalg.rank_rational([[row[i] for i in keep] for row in full]) if keep else 0)
    return out


def _reduce(p: Sparse, basis: list[Sparse]) -> Sparse:
    """``p`` modulo the span of ``basis`` (rows of a reduced row echelon form: each has a leading monomial no other
    row contains)."""
    out = dict(p)
    for b in basis:
        lead = next(iter(b))
        c = out.get(lead)
        if c:
            for m, q in b.items():
                v = out.get(m, Fraction(0)) - c * q
                if v:
                    out[m] = v
                else:
                    out.pop(m, None)
    return out


def _components(items: list[dict[tuple[int, ...], Sparse]]) -> list[list[dict[tuple[int, ...], Sparse]]]:
    """The items grouped by sharing a multidegree (union-find)."""
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[int, ...], int] = {}
    for i, item in enumerate(items):
        for mu in item:
            if mu in owner:
                parent[find(i)] = find(owner[mu])
            else:
                owner[mu] = i
    groups: dict[int, list[dict[tuple[int, ...], Sparse]]] = defaultdict(list)
    for i, item in enumerate(items):
        groups[find(i)].append(item)
    return list(groups.values())
