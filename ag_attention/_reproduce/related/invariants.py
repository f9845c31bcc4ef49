"""Algebraic invariants of lightning self-attention (Alexandr, Duan, Montúfar, arXiv:2604.15632), rebuilt from
their definitions and checked: one of the published works of ``ag-attention reproduce related``.

They take one output coordinate ``(V X X^T A X)_j`` of one layer with ``d' = 1`` and ``rank A <= a``, and as
coordinates its coefficients in the cubic monomials of ``X``, each divided by its number of terms as a polynomial in
generic ``(A, V)``.  Their ``A`` is the transpose of ours (``phi(X)_i = sum_j (x_i^T A x_j) V x_j``), and their
coordinates are linear in our reduced ones (:func:`~.coordinates.reduced_form`):

* ``y[(u,n),(v,n),(l,j)]`` (``n != j``) ``= c[l, (u,v)] / w(u,v)``, with ``c[l, (u,v)]`` the coefficient of
  ``z_u z_v`` in ``q_l(z) = (A_l . z)(V . z)`` and ``w(u,v) = 1`` if ``u = v``, else 2: the entries of the
  symmetric matrix of the quadric ``q_l``;
* ``y[(a,j),(b,j),(c,j)] = sum_{p} c[p, {a,b,c} - p] / |S_3 . (a,b,c)|`` (``p`` over the distinct entries): the
  symmetric tensor of the cubic ``(z^T A z)(V z)``.  The same formula gives their ``t = 1`` coordinates.

The map is checked exactly (:func:`~.coordinates.check_coordinate_map`, in :mod:`.coordinates`), their families
of equations are rebuilt from the mathematics (:mod:`.constructions`; no code of theirs is used here), every member
is checked to vanish on the parametrization (a polynomial identity over QQ in the weights:
:func:`~.families.check_family`, in :mod:`.families`), and their members in our coordinates are compared with the
package's minimal generators per degree and torus multidegree (:func:`~.explain.explain_generators`, in
:mod:`.explain`).  This module compares them with Macaulay2's kernels (:func:`t1_against_m2`,
:func:`reduced_against_m2`) and writes the report's part (:func:`invariants_section`, :func:`m2_section`).  What
their own code computes is compared in :mod:`.their_code`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from ..._algebra import degree as closure_degree
from ..._algebra import implicitize
from ..._architecture import Architecture
from ..._errors import InvalidArgumentError
from ..._exact import dimension as exact_dimension
from ..._exact import linalg
from ..._models import full_structure
from ..report import Check, Table
from .constructions import DEFAULT_LINES, _fraction, lines_for
from .coordinates import INVARIANTS, REPOSITORY, Label, Poly, _orbit3, check_coordinate_map, reduced_ring
from .explain import Explained, _Space, _sparse, explain_generators
from .families import FAMILIES, FamilyCheck, check_family, family_members, linear_span

__all__ = [
    "REPOSITORY",
    "INVARIANTS",
    "DEFAULT_LINES",
    "lines_for",
    "t1_against_m2",
    "reduced_against_m2",
    "invariants_section",
    "m2_section",
    "MAP_SIZES",
    "QUICK_MAP_SIZES",
    "FAMILY_SIZES",
    "QUICK_FAMILY_SIZES",
    "OUTSIDE",
    "EXPLAIN_SIZES",
    "QUICK_EXPLAIN_SIZES",
    "T1_VALUES",
]


# ---------------------------------------------------------------------------------------------- Macaulay2's kernels
def _full_value(d: int) -> Callable[[Label], Poly]:
    """Their ``t = 1`` coordinates in our full coordinates of one token (``c_1, ...`` in ``full_structure`` order,
    the names Macaulay2's implicitization uses): ``y_K = full_K / |S_3 K|``."""
    keys, _ = full_structure(d, 1, 1)
    R = linalg.rational_polynomial_ring([f"c_{i + 1}" for i in range(len(keys))])
    position = {key: i for i, key in enumerate(keys)}
    gens = R.gens()

    def value(label: Label) -> Poly:
        return gens[position[(0, 0, tuple(f - 1 for f in label))]] * linalg.rational(Fraction(1, _orbit3(label)))

    return value


def t1_against_m2(a: int, timeout: float, d: int = 3) -> dict[str, Any]:
    """Their ``t = 1`` families at ``(d, 1, a)`` against the minimal generators Macaulay2's kernel gives for the
    closure in our full coordinates: how many of each degree their members span (exact ranks over QQ of the
    coefficient vectors; a generator of degree ``D`` is explained when it lies in the span of the members of degree
    ``D`` plus the ideal generated in lower degrees, here empty: every generator has one degree)."""
    arch = Architecture((d, 1), (a,), tokens=1)
    imp = implicitize(arch, coords="full", field="QQ", timeout=timeout)
    value = _full_value(d)
    members = [
        p
        for name in ("t1-low-rank", "t1-lie")
        for p in FAMILIES[name].build(d, 1, 1, min(a, d), value)
        if not p.is_zero()
    ]
    gens = imp.generators
    degrees = Counter(imp.generator_degrees)
    out: dict[str, Any] = {
        "architecture": arch.describe(),
        "dimension": imp.dimension,
        "degree": imp.degree,
        "generators": dict(degrees),
        "m2_seconds": round(imp.seconds, 1),
        "cached": imp.cached,
        "members": len(members),
        "explained": {},
        "members_in_ideal": True,
    }
    if len(set(degrees)) != 1:
        raise InvalidArgumentError(f"{arch.describe()}: generators of several degrees; this comparison takes one")
    D = next(iter(degrees))
    same = [p for p in members if p.total_degree() == D]

    def vec(p: Poly, cols: dict[tuple[int, ...], int]) -> list[Fraction]:
        row = [Fraction(0)] * len(cols)
        for e, c in p.to_dict().items():
            row[cols[tuple(e)]] = _fraction(c)
        return row

    cols: dict[tuple[int, ...], int] = {}
    for p in list(gens) + same:
        for e in p.to_dict():
            cols.setdefault(tuple(e), len(cols))
    # map the members into the ring of the generators (the same names c_1, ... in the same order)
    g_rows = [vec(p, cols) for p in gens]
    m_rows = [vec(p, cols) for p in same]
    rank_g = linalg.rank_rational(g_rows)
    rank_m = linalg.rank_rational(m_rows) if m_rows else 0
    rank_all = linalg.rank_rational(g_rows + m_rows) if m_rows else rank_g
    out["explained"] = {str(D): rank_m}
    out["unexplained"] = {str(D): rank_g - rank_m}
    out["members_in_ideal"] = rank_all == rank_g
    out["members_of_degree"] = {str(k): v for k, v in sorted(Counter(p.total_degree() for p in members).items())}
    return out


def reduced_against_m2(d: int, a: int, timeout: float) -> dict[str, Any]:
    """Macaulay2's kernel of one layer ``(d, 1, a)``, ``t = 2``, reduced coordinates, against their ``t >= 2``
    families pulled back to our coordinates: the members of each generator degree span (exact ranks over QQ)."""
    arch = Architecture((d, 1), (a,), tokens=2)
    imp = implicitize(arch, coords="reduced", field="QQ", timeout=timeout)
    R, value = reduced_ring(d)
    images = list(R.gens())
    gens = [g.compose(*images, ctx=R) for g in imp.generators]  # Macaulay2's names are ours, in our order
    members = [
        p
        for name, fam in FAMILIES.items()
        if fam.regime == "t>=2"
        for p in family_members(name, d, 2, a, 1, "reduced")
        if not p.is_zero()
    ]
    out: dict[str, Any] = {
        "architecture": arch.describe(),
        "dimension": imp.dimension,
        "degree": imp.degree,
        "generators": dict(Counter(imp.generator_degrees)),
        "m2_seconds": round(imp.seconds, 1),
        "cached": imp.cached,
        "variables": list(imp.variables),
    }
    explained, ok = {}, True
    for D in sorted(set(imp.generator_degrees)):
        g = [_sparse(p) for p in gens if p.total_degree() == D]
        m = [_sparse(p) for p in members if p.total_degree() == D]
        space = _Space()
        rank_g, rank_m, rank_all = space.rank(g), space.rank(m), space.rank(g, m)
        explained[str(D)] = rank_m if D == min(imp.generator_degrees) else None
        ok &= rank_all == rank_g or D != min(imp.generator_degrees)
    out["explained"] = explained
    out["members_in_ideal"] = ok
    return out


# ---------------------------------------------------------------------------------------------- the report
#: (d, t, j, a) where their coordinates are checked against :func:`reduced_form`
MAP_SIZES = (
    (2, 2, 1, 2),
    (3, 2, 1, 3),
    (3, 2, 2, 3),
    (3, 3, 1, 2),
    (4, 3, 2, 4),
    (3, 1, 1, 3),
    (3, 1, 1, 1),
    (4, 1, 1, 2),
)
QUICK_MAP_SIZES = ((2, 2, 1, 2), (3, 2, 1, 3), (3, 3, 2, 1), (3, 1, 1, 3))
#: (d, t, a) per family: their default (3, 2, 3) and the sizes around it the families are defined on
FAMILY_SIZES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "linear": ((3, 2, 3), (3, 3, 3), (2, 3, 2), (4, 3, 4), (2, 4, 1)),
    "low-rank": ((2, 2, 1), (3, 2, 1), (3, 2, 2), (3, 3, 2), (4, 2, 2), (4, 2, 3)),
    "cubics": ((3, 2, 3), (3, 2, 2), (3, 2, 1), (4, 2, 4), (4, 3, 2)),
    "syzygies": ((3, 2, 3), (3, 2, 1), (3, 3, 2), (4, 2, 4), (4, 2, 2)),
    "veronese-2": ((2, 2, 2), (3, 2, 3), (3, 2, 2), (3, 3, 3), (4, 2, 4)),
    "veronese-3": ((3, 2, 3), (3, 3, 3), (4, 2, 3), (4, 2, 4)),
    "resultants": ((2, 2, 2), (2, 2, 1), (3, 2, 3), (3, 2, 1), (3, 3, 3), (4, 2, 4)),
    "t1-low-rank": ((4, 1, 1), (5, 1, 1), (6, 1, 1), (6, 1, 2)),
    "t1-lie": ((3, 1, 3), (3, 1, 1), (4, 1, 4), (4, 1, 2), (5, 1, 5)),
}
#: the sizes of the quick run: three per family, the cheap ones (about 3 s in all)
QUICK_FAMILY_SIZES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "linear": ((3, 2, 3), (3, 3, 3), (2, 3, 2)),
    "low-rank": ((2, 2, 1), (3, 2, 1), (3, 2, 2)),
    "cubics": ((3, 2, 3), (3, 2, 2), (3, 2, 1)),
    "syzygies": ((3, 2, 3), (3, 2, 1), (3, 3, 2)),
    "veronese-2": ((2, 2, 2), (3, 2, 3), (3, 2, 2)),
    "veronese-3": ((3, 2, 3), (3, 3, 3), (4, 2, 4)),
    "resultants": ((2, 2, 2), (2, 2, 1), (3, 2, 3)),
    "t1-low-rank": ((4, 1, 1), (5, 1, 1), (6, 1, 1)),
    "t1-lie": ((3, 1, 3), (3, 1, 1), (4, 1, 4)),
}
#: where a family is not an invariant by its construction, checked to be none (the hypothesis fails)
OUTSIDE = {"t1-lie": ((2, 1, 2),)}
#: (d, a, max_degree) of the generator comparison
EXPLAIN_SIZES = ((2, 2, 4), (2, 1, 4), (3, 3, 4), (3, 2, 4), (3, 1, 4), (4, 4, 3), (4, 3, 3), (4, 2, 3), (4, 1, 3))
QUICK_EXPLAIN_SIZES = ((2, 2, 4), (3, 3, 4), (4, 4, 3))
#: their t = 1 values (the issue's): (d, d', a) -> (dimension, degree)
T1_VALUES = {(3, 1, 1): (7, 15), (3, 1, 3): (8, 21)}
#: seconds per Macaulay2 job of the report ((3,1,3), t = 1: about 190 s here, then cached)
M2_TIMEOUT = 900.0


def _family_checks(report: Any, quick: bool) -> list[FamilyCheck]:
    sizes = QUICK_FAMILY_SIZES if quick else FAMILY_SIZES
    found = []
    for name, grid in sizes.items():
        for d, t, a in grid:
            c = check_family(name, d, t, a)
            found.append(c)
            report.add(
                Check(
                    f"{INVARIANTS} every member of '{name}' vanishes on the image",
                    f"d={d}, t={t}, a={a}",
                    c.method,
                    f"{c.nonzero} of {c.nonzero}",
                    f"{c.vanishing} of {c.nonzero} (members built {c.members}, distinct {c.distinct}, "
                    f"degrees {','.join(map(str, c.degrees)) or '-'})",
                    c.passed and c.nonzero > 0,
                    c.seconds,
                    c.to_dict(),
                    size=(d, 1, a),
                )
            )
        for d, t, a in OUTSIDE.get(name, ()):
            c = check_family(name, d, t, a)
            found.append(c)
            report.add(
                Check(
                    f"{INVARIANTS} '{name}' outside its hypothesis ({FAMILIES[name].hypothesis}) is not an invariant",
                    f"d={d}, t={t}, a={a}",
                    c.method,
                    "no member vanishes",
                    f"{c.vanishing} of {c.nonzero} vanish",
                    c.vanishing == 0 and c.nonzero > 0,
                    c.seconds,
                    c.to_dict(),
                    size=(d, 1, a),
                )
            )
    return found


def invariants_section(report: Any, quick: bool, seed: int) -> dict[str, Any]:
    """Item 1: the coordinate map, the families on the image, the generator tables, the t = 1 values."""
    out: dict[str, Any] = {"coordinate_map": _map_checks(report, quick), "linear_span": _span_checks(report)}
    checks = _family_checks(report, quick)
    out["families"] = [c.to_dict() for c in checks]
    _family_table(report, checks)
    out["explained"] = [e.to_dict() for e in _explain_checks(report, quick, seed)]
    out["t1_values"] = _t1_checks(report)
    return out


def _map_checks(report: Any, quick: bool) -> list[dict[str, Any]]:
    """Their scaled coordinates against :func:`~.coordinates.reduced_form` of ours, size by size."""
    maps = []
    for d, t, j, a in QUICK_MAP_SIZES if quick else MAP_SIZES:
        t0 = time.perf_counter()
        m = check_coordinate_map(d, t, j, a)
        maps.append(m)
        report.add(
            Check(
                "their scaled coordinates are the linear forms of reduced_form in ours (A transposed)",
                f"d={d}, t={t}, j={j}, a={a}",
                "their coefficients of V X X^T A X over QQ, divided by their "
                "numbers of terms, against reduced_coordinates(A^T, V) (and full coordinates at t = 1)",
                m["labels"],
                m["agree"],
                not m["disagree"],
                time.perf_counter() - t0,
                m,
                size=(d, 1, a),
            )
        )
    return maps


def _span_checks(report: Any) -> list[dict[str, Any]]:
    """The linear relations against every linear relation of their coordinates."""
    spans = []
    for d, t in ((3, 2), (3, 3), (2, 4), (4, 3)):
        sp = linear_span(d, t)
        spans.append({"d": d, "t": t, **sp})
        report.add(
            Check(
                f"{INVARIANTS} the linear relations span every linear relation of their coordinates",
                f"d={d}, t={t}",
                "rank over QQ of the family's coefficient vectors",
                sp["kernel"],
                sp["rank"],
                sp["rank"] == sp["kernel"],
                details=sp,
                size=(d, 1, d),
            )
        )
    return spans


def _family_table(report: Any, checks: list[FamilyCheck]) -> None:
    """The table of the families on the image."""
    report.tables.append(
        Table(
            "Their families on the image (item 1)",
            ["family", "d", "t", "a", "members", "nonzero", "distinct", "degrees", "vanish on the image", "method"],
            [
                [
                    c.family,
                    c.d,
                    c.t,
                    c.a,
                    c.members,
                    c.nonzero,
                    c.distinct,
                    ",".join(map(str, c.degrees)) or "-",
                    c.vanishing,
                    c.method,
                ]
                for c in checks
            ],
            note="A member vanishes on the image iff it lies in the ideal of the closure (exact substitution over QQ). "
            "t1-lie at d = 2 is outside the construction (d >= 3): a generic binary cubic is a quadric times a "
            "line, the closure is the whole space, and no member vanishes.",
            source=None,
        )
    )


def _explain_checks(report: Any, quick: bool, seed: int) -> list[Explained]:
    """The package's minimal generators against the families: checks, the table, the default size, the findings."""
    explained = []
    rows = []
    for d, a, k in QUICK_EXPLAIN_SIZES if quick else EXPLAIN_SIZES:
        e = explain_generators(d, a, k, seed=seed)
        explained.append(e)
        report.add(
            Check(
                "the package's minimal generators are exact and contain their families (consistency)",
                f"d={d}, d'=1, a={a}, degree <= {k}",
                "ranks over QQ per multidegree: lifted generators + "
                "S_1 I_{D-1} against the modular dimension; the families' members added",
                "exact and consistent",
                f"exact={e.generators_exact}, consistent={e.consistent}",
                e.generators_exact and e.consistent,
                e.seconds,
                size=(d, 1, a),
            )
        )
        for r in e.rows:
            fams = ", ".join(f"{n} {v}" for n, v in r["by_family"].items() if v)
            rows.append(
                [
                    f"({d},1,{a})",
                    r["degree"],
                    _multidegree_text(r["representative"]),
                    r["multidegrees"],
                    r["generators_each"],
                    r["generators"],
                    r["explained"],
                    r["unexplained"],
                    fams or "-",
                ]
            )
    _explain_table(report, rows)
    _explain_findings(report, explained)
    return explained


def _explain_table(report: Any, rows: list[list[Any]]) -> None:
    """The table of the generators explained by the families."""
    report.tables.append(
        Table(
            "The package's minimal generators explained by their families (item 1)",
            [
                "size",
                "degree",
                "multidegree (A rows; V rows; z)",
                "multidegrees",
                "generators each",
                "generators",
                "explained",
                "unexplained",
                "explained by one family alone",
            ],
            rows,
            note="Per orbit of multidegrees under permutations of the indices. Explained: in the span of the families' "
            "members of that degree plus the ideal generated in lower degrees (exact ranks over QQ; members that are "
            "not torus-homogeneous, the resultant quartics on their lines, count through the homogeneous part of "
            "their span together with the other families).",
            source=None,
        )
    )


def _explain_findings(report: Any, explained: list[Explained]) -> None:
    """The check at their default size (3, 1, 3) and a finding per size with unexplained generators."""
    default = next((e for e in explained if (e.d, e.a) == (3, 3)), None)
    if default is not None:
        report.add(
            Check(
                f"{INVARIANTS} at their default size the families generate the ideal (their candidate "
                "ideal equals the implicit one)",
                f"d=3, d'=1, a=3, degree <= {default.max_degree}",
                "generators not in the span of the families' members plus lower degrees",
                0,
                sum(default.unexplained.values()),
                not sum(default.unexplained.values()),
                default.seconds,
                size=(3, 1, 3),
            )
        )
    for e in explained:
        un = {D: n for D, n in e.unexplained.items() if n}
        if un:
            report.findings.append(
                f"New equations at d={e.d}, d'=1, a={e.a}: "
                + "; ".join(
                    f"{n} of the {e.generator_count[D]} minimal generators of degree {D} are not explained by "
                    f"their families"
                    for D, n in sorted(un.items())
                )
                + " (multidegrees in the table); their families generate the ideal only up to degree "
                f"{e.generates_up_to}."
            )


def _t1_checks(report: Any) -> list[dict[str, Any]]:
    """Their t = 1 dimension and degree against the package's (certified dimension, degree)."""
    t1 = []
    for (d, e_, a), (dim_theirs, deg_theirs) in T1_VALUES.items():
        t0 = time.perf_counter()
        arch = Architecture((d, e_), (a,), tokens=1)
        dim = exact_dimension(arch)
        deg = closure_degree(arch, timeout=300.0)
        t1.append(
            {
                "architecture": arch.describe(),
                "dimension": dim.dimension,
                "certified": dim.certified,
                "closed_by": dim.closed_by,
                "degree": deg.degree,
                "degree_method": deg.method,
                "confirmed_by": deg.confirmed_by,
                "theirs": [dim_theirs, deg_theirs],
            }
        )
        report.add(
            Check(
                f"{INVARIANTS} t = 1 dimension and degree",
                f"d={d}, d'={e_}, a={a}, t=1",
                "ag_attention.dimension (certified) and ag_attention.degree (formula, msolve counts)",
                f"dim {dim_theirs}, degree {deg_theirs}",
                f"dim {dim.dimension} ({'certified' if dim.certified else 'lower bound'}), degree {deg.degree}",
                dim.dimension == dim_theirs and dim.certified and deg.degree == deg_theirs,
                time.perf_counter() - t0,
                t1[-1],
                size=(d, e_, a),
            )
        )
    return t1


def _multidegree_text(rep: Sequence[Sequence[int]]) -> str:
    return "; ".join(",".join(map(str, part)) for part in rep)


def m2_section(report: Any, quick: bool) -> dict[str, Any]:
    """Macaulay2's kernels against their families (full run only: the quick run needs no external engine):
    (2,1,2) and (2,1,1) at t = 2, the t = 1 ideals of (3,1,3) and (3,1,1)."""
    out: dict[str, Any] = {"reduced": [], "t1": []}
    if quick:
        out["skipped"] = "quick run: no Macaulay2"
        return out
    for d, a in ((2, 2), (2, 1)):
        t0 = time.perf_counter()
        r = reduced_against_m2(d, a, M2_TIMEOUT)
        out["reduced"].append(r)
        D = min(int(k) for k in r["generators"])
        report.add(
            Check(
                f"{INVARIANTS} their families span Macaulay2's generators of the lowest degree",
                f"d={d}, d'=1, a={a}, t=2 (reduced)",
                "implicitize (Macaulay2 kernel) and exact ranks over QQ",
                f"{r['generators'][D]} of degree {D}",
                f"{r['explained'][str(D)]} spanned",
                r["explained"][str(D)] == r["generators"][D] and r["members_in_ideal"],
                time.perf_counter() - t0,
                r,
                size=(d, 1, a),
            )
        )
    for a in (3, 1):
        t0 = time.perf_counter()
        r = t1_against_m2(a, M2_TIMEOUT)
        out["t1"].append(r)
        D = next(iter(r["generators"]))
        if a == 3:
            report.add(
                Check(
                    f"{INVARIANTS} the Lie-flattening minors generate the t = 1 ideal (their candidate "
                    "ideal equals the implicit one)",
                    "d=3, d'=1, a=3, t=1 (full coordinates)",
                    "implicitize (Macaulay2 kernel) and exact ranks over QQ",
                    f"{r['generators'][D]} of degree {D}",
                    f"{r['explained'][str(D)]} spanned",
                    r["explained"][str(D)] == r["generators"][D] and r["members_in_ideal"],
                    time.perf_counter() - t0,
                    r,
                    size=(3, 1, 3),
                )
            )
        else:
            report.findings.append(
                f"t = 1, d=3, a=1 (the totally split cubics, dim {r['dimension']}, degree {r['degree']}): the ideal "
                f"has {r['generators'][D]} minimal generators of degree {D}; their t = 1 families (low-rank: none at "
                f"d = 3; Lie: {r['members']} nonzero minors, all of degree 8) explain {r['explained'][str(D)]} of "
                "them: the equations of this Chow variety (products of three linear forms) are new to their list."
            )
    return out
