"""Their code's coordinates and families against the package's rebuilt ones (golden files of :mod:`.golden`):
one part of :mod:`.their_code`.

* **the coordinates**: each of their parametrized coordinates is the package's rebuilt one
  (:func:`~.coordinates.their_coordinates`), as polynomials over QQ in the weights: exact
  (:func:`check_parametrization`);
* **the families, member by member**: for each family and degree, the span of their members against the span of
  the package's rebuilt family (:data:`~.families.FAMILIES`): ranks of both and of the union, from the values at
  random points modulo a prime (:func:`compare_spans`; probabilistic: equal ranks everywhere with two primes, the
  primes and seeds recorded);
* **their cubics per torus multidegree** against the closure ideal's (:func:`by_multidegree`, exact over QQ).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..._algebra import low_degree_equations, torus_weights
from ..._architecture import Architecture
from ..._checks import check_choice
from ..._errors import InvalidArgumentError
from ..._exact import linalg
from .constructions import veronese
from .coordinates import reduced_ring, their_coordinates, their_labels, their_ring
from .explain import _Space, _sparse, _weight
from .families import family_members
from .golden import FAMILY_OF, Golden, Terms

__all__ = [
    "VERONESE_PARTS",
    "SPAN_PRIMES",
    "check_parametrization",
    "SpanComparison",
    "compare_spans",
    "compare_family",
    "by_multidegree",
]

#: the parts of the package's Veronese family, by their helper's keys
VERONESE_PARTS = {
    "veronese2_internal": "internal",
    "veronese2_crossTarget": "cross-target",
    "veronese2_blockConcatenated": "block",
}
#: primes of the span comparisons (below 2^31: products of two residues fit in int64)
SPAN_PRIMES = (2147483647, 2147483629)


def _to_ring(g: Golden, terms: Terms) -> Any:
    """A polynomial of the golden file (variables in their order) in the package's ring of their coordinates."""
    R, gens = their_ring(g.d, g.t, 1)
    position = {lab: i for i, lab in enumerate(gens)}
    index = [position[lab] for lab in g.labels]
    n = len(gens)
    data = {}
    for c, mono in terms:
        e = [0] * n
        for v, k in mono:
            e[index[v]] += k
        data[tuple(e)] = linalg.rational(c)
    return R.from_dict(data) if data else R.constant(0)


def check_parametrization(g: Golden) -> dict[str, Any]:
    """Each of their coordinates (as their code parametrizes it, generic ``A``) against the package's
    :func:`~.invariants.their_coordinates`: equal polynomials over QQ in the weights ``a_r_c``, ``v_c``."""
    th = their_coordinates(g.d, g.t, 1, None)
    if set(g.labels) != set(th.values):
        return {"labels": len(g.labels), "agree": 0, "disagree": ["the label sets differ"]}
    P = th.ring
    bad = []
    for lab, terms in zip(g.labels, g.parametrization):
        data = {}
        for c, mono in terms:
            e = [0] * P.nvars()
            for v, k in mono:
                e[v] += k
            data[tuple(e)] = linalg.rational(c)
        if P.from_dict(data) != th.values[lab]:
            bad.append(str(lab))
    return {"labels": len(g.labels), "agree": len(g.labels) - len(bad), "disagree": bad}


# ---------------------------------------------------------------------------------------------- spans
@dataclass
class SpanComparison:
    """Two lists of polynomials of one degree: the dimensions of their spans and of the span of both."""

    degree: int
    theirs: int  # members
    ours: int
    rank_theirs: int
    rank_ours: int
    rank_union: int
    primes: tuple[int, ...]
    seed: int

    @property
    def equal(self) -> bool:
        return self.rank_theirs == self.rank_ours == self.rank_union

    def to_dict(self) -> dict[str, Any]:
        return {
            "degree": self.degree,
            "members_theirs": self.theirs,
            "members_ours": self.ours,
            "span_theirs": self.rank_theirs,
            "span_ours": self.rank_ours,
            "span_union": self.rank_union,
            "equal": self.equal,
            "primes": list(self.primes),
            "seed": self.seed,
        }


def _sparse_terms(p: Any) -> list[tuple[Fraction, tuple[tuple[int, int], ...]]]:
    out = []
    for exps, c in p.to_dict().items():
        out.append((Fraction(int(c.p), int(c.q)), tuple((i, int(e)) for i, e in enumerate(exps) if int(e))))
    return out


def _values(polys: Sequence[Terms], points: np.ndarray, p: int) -> np.ndarray:
    """``polys`` at the points (rows: polynomials, columns: points), modulo ``p``."""
    n_points, n_vars = points.shape
    powers: dict[tuple[int, int], np.ndarray] = {}
    out = np.zeros((len(polys), n_points), dtype=np.int64)
    for row, terms in enumerate(polys):
        acc = np.zeros(n_points, dtype=np.int64)
        for c, mono in terms:
            if c.denominator % p == 0:
                raise InvalidArgumentError(f"a coefficient {c} has a denominator divisible by {p}")
            v = np.full(n_points, c.numerator % p * pow(c.denominator % p, -1, p) % p, dtype=np.int64)
            for var, e in mono:
                key = (var, e)
                if key not in powers:
                    x = points[:, var] % p
                    pw = np.ones(n_points, dtype=np.int64)
                    for _ in range(e):
                        pw = pw * x % p
                    powers[key] = pw
                v = v * powers[key] % p
            acc = (acc + v) % p
        out[row] = acc
    return out


def compare_spans(
    theirs: Sequence[Terms], ours: Sequence[Terms], nvars: int, seed: int = 0, primes: Sequence[int] = SPAN_PRIMES
) -> tuple[int, int, int]:
    """Dimensions of span(theirs), span(ours), span(both), as ranks of their values at ``#theirs + #ours + 8``
    random points modulo each prime (probabilistic: a rank can only come out too low, by a bad choice of points;
    the primes must agree, else an error)."""
    results = set()
    for k, p in enumerate(primes):
        rng = np.random.default_rng([seed, k])
        points = rng.integers(1, p, size=(len(theirs) + len(ours) + 8, nvars), dtype=np.int64)
        A = _values(theirs, points, p) if theirs else np.zeros((0, len(points)), dtype=np.int64)
        B = _values(ours, points, p) if ours else np.zeros((0, len(points)), dtype=np.int64)
        ra = linalg.rank(A, p) if len(A) else 0
        rb = linalg.rank(B, p) if len(B) else 0
        ru = linalg.rank(np.vstack([A, B]), p) if len(A) + len(B) else 0
        results.add((ra, rb, ru))
    if len(results) != 1:
        raise ArithmeticError(f"the primes {list(primes)} disagree on the span dimensions: {sorted(results)}")
    return results.pop()


def compare_family(g: Golden, name: str, seed: int = 0) -> list[SpanComparison]:
    """Their family ``name`` (a key of the golden file) against the package's rebuilt one, degree by degree."""
    check_choice(name, "family", FAMILY_OF)
    theirs = [_sparse_terms(_to_ring(g, m)) for m in g.families[name]]
    at = min(g.at, g.d)
    if name in VERONESE_PARTS:
        y = their_ring(g.d, g.t, 1)[1].__getitem__
        built = veronese(g.d, g.t, 1, at, y, 2)[VERONESE_PARTS[name]]
    else:
        built = family_members(FAMILY_OF[name], g.d, g.t, at, 1, "theirs")
    ours = [_sparse_terms(p) for p in built if not p.is_zero()]
    nvars = len(g.labels)

    def degree(terms: Terms) -> int:
        return max(sum(e for _, e in mono) for _, mono in terms)

    out = []
    for D in sorted({degree(m) for m in theirs} | {degree(m) for m in ours}):
        a = [m for m in theirs if degree(m) == D]
        b = [m for m in ours if degree(m) == D]
        ra, rb, ru = compare_spans(a, b, nvars, seed)
        out.append(SpanComparison(D, len(a), len(b), ra, rb, ru, SPAN_PRIMES, seed))
    return out


def by_multidegree(g: Golden, degree: int = 3, names: Sequence[str] | None = None, seed: int = 0) -> dict[str, Any]:
    """Their members of ``degree`` (of the families ``names``, default all) pulled back to the package's reduced
    coordinates, against the degree-``degree`` part of the closure ideal (``low_degree_equations``), torus
    multidegree by torus multidegree: ``dim I_mu``, the span of their members in ``mu`` (exact ranks over QQ), and
    whether the members lie in ``I_mu``.  Rows per orbit of multidegrees under index permutations."""
    R, value = reduced_ring(g.d)
    images = [value(lab) for lab in their_labels(g.d, g.t, 1)]
    polys = []
    for name, members in g.families.items():
        if names is not None and name not in names or name in VERONESE_PARTS:
            continue
        for m in members:
            if max(sum(e for _, e in mono) for _, mono in m) != degree:
                continue
            q = _to_ring(g, m).compose(*images, ctx=R)
            if not q.is_zero():
                polys.append(_sparse(q))
    weights = torus_weights(g.d, 1)
    parts: dict[tuple[int, ...], list[dict[tuple[int, ...], Fraction]]] = {}
    for q in polys:
        split: dict[tuple[int, ...], dict[tuple[int, ...], Fraction]] = {}
        for mono, c in q.items():
            split.setdefault(_weight(mono, weights), {})[mono] = c
        for mu, part in split.items():
            parts.setdefault(mu, []).append(part)
    eqs = low_degree_equations(
        Architecture.single_layer(g.d, 1, g.at if g.at < g.d else None, tokens=2), max_degree=degree, seed=seed
    )
    rows: dict[Any, dict[str, Any]] = {}
    inside = True
    for D in range(1, degree + 1):
        blocks = {tuple(x for part in b.multidegree for x in part): b for b in eqs.blocks.get(D, [])}
        if D < degree:
            continue
        for mu, blk in blocks.items():
            space = _Space()
            basis = blk.generators
            dim = blk.ideal_dimension
            found = parts.get(mu, [])
            span = space.rank(found)
            joint = space.rank(found, _products_basis(eqs, D, mu, weights), basis)
            inside &= joint == dim
            key = tuple(map(tuple, blk.representative))
            row = rows.setdefault(
                key,
                {
                    "representative": [list(x) for x in blk.representative],
                    "multidegrees": 0,
                    "ideal": 0,
                    "generators": 0,
                    "their_span": 0,
                },
            )
            row["multidegrees"] += 1
            row["ideal"] += dim
            row["generators"] += len(blk.generators)
            row["their_span"] += span
    outside = [
        mu
        for mu in parts
        if mu not in {tuple(x for part in b.multidegree for x in part) for b in eqs.blocks.get(degree, [])}
    ]
    table = sorted(rows.values(), key=lambda r: (-r["ideal"], r["representative"]))
    return {
        "d": g.d,
        "at": g.at,
        "degree": degree,
        "members": len(polys),
        "ideal": sum(r["ideal"] for r in table),
        "their_span": sum(r["their_span"] for r in table),
        "members_in_ideal": inside and not outside,
        "rows": table,
    }


def _products_basis(eqs: Any, D: int, mu: tuple[int, ...], weights: Any) -> list[Any]:
    """``S_1 I_{D-1}`` in multidegree ``mu``: every variable times every generator of degree ``D - 1`` (and of the
    lower degrees, recursively through their products), as sparse polynomials."""
    out = []
    nvars = len(weights)
    for E in range(1, D):
        for b in eqs.blocks.get(E, []):
            for gen in b.generators:
                for mono_extra in itertools.combinations_with_replacement(range(nvars), D - E):
                    shifted = {tuple(sorted(m + mono_extra)): c for m, c in gen.items()}
                    if _weight(next(iter(shifted)), weights) == mu:
                        out.append(shifted)
    return out
