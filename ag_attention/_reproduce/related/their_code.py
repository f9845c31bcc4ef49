"""What the Macaulay2 code of Alexandr, Duan and Montúfar computes, against the package (``reproduce related``):
the report's part, :func:`their_code_section`.

Their repository (``yuliaalexandr/algebraic-invariants-of-lightning-self-attention`` at d57db82) was run on its own
by ``scripts/aldm_golden.py``; what it computes is kept in golden files shipped with the package, which check
themselves against their manifest (:mod:`.golden`: :func:`~.golden.load_golden`).  Nothing is fetched or run of
theirs here.  The comparisons, in their coordinates:

* **the coordinates** and **the families, member by member** (:mod:`.spans`): each of their parametrized
  coordinates is the package's rebuilt one (exact), and each family of theirs spans, degree by degree, what the
  package's rebuilt family spans (probabilistic ranks modulo two primes); their cubics per torus multidegree
  against the closure ideal's (exact);
* **their implicit ideal J against the package's closure** (:mod:`.ideals`): J vanishes on the package's
  parametrization (exact), and Macaulay2 decides ``J == phi(I) + (the linear forms of J)`` and compares
  codimension, degree and Hilbert numerator.

Their t = 1 driver eliminates without ``minors(at+1, A)``: its ideal is the one of ``a = d`` whatever ``at`` is,
and the comparison uses the ideal their code computes, against the package's closure at ``a = d``.
"""

from __future__ import annotations

import time
from typing import Any

from ..report import Check, Table
from ..sources import Source
from . import golden, invariants
from .coordinates import INVARIANTS
from .golden import (
    FAMILY_OF,
    GOLDEN_DIRECTORY,
    GOLDEN_SCHEMA,
    IDEAL_CASES,
    MANIFEST,
    MEMBER_CASES,
    MULTIDEGREE_CASES,
    THEIR_BLOBS,
    THEIR_COMMIT,
    THEIR_COMMIT_DATE,
    Golden,
    golden_available,
    golden_manifest,
    load_golden,
)
from .ideals import compare_ideal
from .spans import SPAN_PRIMES, by_multidegree, check_parametrization, compare_family

__all__ = [
    "GOLDEN_DIRECTORY",
    "MANIFEST",
    "GOLDEN_SCHEMA",
    "THEIR_COMMIT",
    "THEIR_COMMIT_DATE",
    "THEIR_BLOBS",
    "golden_manifest",
    "QUICK_MEMBER_CASES",
    "THEIR_SOURCE",
    "their_code_section",
]

# ---------------------------------------------------------------------------------------------- the report
#: the quick run: the member comparisons at d <= 3 and the ideals without Macaulay2's equality
QUICK_MEMBER_CASES = ((2, 1, 2), (2, 2, 2), (3, 1, 2), (3, 3, 2))
#: what the tables compare against: their own Macaulay2 code's output, run on its own (another tool's computation)
THEIR_SOURCE = Source.independent(
    f"their Macaulay2 code (yuliaalexandr/algebraic-invariants-of-lightning-self-attention @ {THEIR_COMMIT[:7]}), "
    "run by scripts/aldm_golden.py into the golden files"
)


def their_code_section(report: Any, quick: bool, seed: int, timeout: float = 900.0) -> dict[str, Any]:
    """The report's part: coordinates, families member by member, ideals (see the module docstring)."""
    directory = golden.GOLDEN_DIRECTORY
    out: dict[str, Any] = {"directory": str(directory)}
    if not golden_available():
        out["skipped"] = (
            f"{directory} is missing or incomplete: the golden files ship with the package "
            f"(ag_attention/_reproduce/related/data/aldm, with their {MANIFEST})"
        )
        report.findings.append(f"{INVARIANTS} their code's outputs were not compared: {out['skipped']}.")
        return out
    out["members"] = _member_checks(report, quick, seed)
    out["multidegrees"] = _multidegree_checks(report, quick, seed)
    out["ideals"] = _ideal_checks(report, quick, timeout)
    return out


def _member_checks(report: Any, quick: bool, seed: int) -> list[dict[str, Any]]:
    """Their coordinates and every family of each case against the package's, and the table of the spans."""
    rows: list[list[Any]] = []
    members: list[dict[str, Any]] = []
    for d, at, t in QUICK_MEMBER_CASES + ((2, 1, 1),) if quick else MEMBER_CASES + ((3, 1, 3), (2, 1, 1), (3, 1, 1)):
        g = load_golden(d, at, t)
        t0 = time.perf_counter()
        par = check_parametrization(g)
        report.add(
            Check(
                f"{INVARIANTS} their code's coordinates are the package's rebuilt ones",
                f"(d, at, t) = ({d}, {at}, {t})",
                "their parametrization (golden file, their Macaulay2) against their_coordinates, polynomials over QQ",
                par["labels"],
                par["agree"],
                not par["disagree"] and par["labels"] > 0,
                time.perf_counter() - t0,
                par,
                size=(d, 1, at),
            )
        )
        for name in g.families:
            members.append(_family_check(report, g, name, seed, rows))
        for s in g.skipped:
            report.findings.append(
                f"{INVARIANTS} their code at ({d},{at},{t}): {s['family']} not computed: {s['reason']}."
            )
    report.tables.append(
        Table(
            "Their code's families against the package's, member by member (span per degree)",
            [
                "(d,at,t)",
                "their family",
                "package's family",
                "degree",
                "their members",
                "our members",
                "their span",
                "our span",
                "span of both",
                "spans",
            ],
            rows,
            note="Their members: as their helpers return them (trimmed ideals for veronese2 and quarticResultants); "
            "ours: rebuilt from the definitions. Span dimensions from the values at random points modulo "
            f"{' and '.join(map(str, SPAN_PRIMES))} (probabilistic; both primes agree).",
            source=THEIR_SOURCE,
        )
    )
    return members


def _family_check(report: Any, g: Golden, name: str, seed: int, rows: list[list[Any]]) -> dict[str, Any]:
    """Their family ``name`` of one case against the package's: its check, its rows of the table (added to
    ``rows``) and its record."""
    d, at, t = g.d, g.at, g.t
    t0 = time.perf_counter()
    comps = compare_family(g, name, seed)
    for c in comps:
        rows.append(
            [
                f"({d},{at},{t})",
                name,
                FAMILY_OF[name],
                c.degree,
                c.theirs,
                c.ours,
                c.rank_theirs,
                c.rank_ours,
                c.rank_union,
                "equal" if c.equal else "differ",
            ]
        )
    report.add(
        Check(
            f"{INVARIANTS} their family '{name}' spans, degree by degree, what the package's '{FAMILY_OF[name]}' spans",
            f"(d, at, t) = ({d}, {at}, {t})",
            f"ranks of the values at random points modulo 2 primes (probabilistic; seed {seed}): theirs, ours, both",
            "equal spans",
            "; ".join(f"degree {c.degree}: {c.rank_theirs}, {c.rank_ours}, {c.rank_union}" for c in comps)
            or "no members",
            all(c.equal for c in comps),
            time.perf_counter() - t0,
            size=(d, 1, at),
        )
    )
    return {"case": [d, at, t], "family": name, "ours": FAMILY_OF[name], "degrees": [c.to_dict() for c in comps]}


def _multidegree_checks(report: Any, quick: bool, seed: int) -> list[dict[str, Any]]:
    """Their cubics per torus multidegree against the closure's (d = 4), and their table."""
    multi = []
    mrows = []
    for d, at, t in MULTIDEGREE_CASES[-1:] if quick else MULTIDEGREE_CASES:
        g = load_golden(d, at, t)
        t0 = time.perf_counter()
        r = by_multidegree(g, 3, seed=seed)
        multi.append(r)
        report.add(
            Check(
                f"{INVARIANTS} their cubic members lie in the closure ideal, multidegree by multidegree, and "
                "span part of its cubics",
                f"(d, at, t) = ({d}, {at}, {t}), degree 3",
                "their members pulled back to reduced coordinates; exact ranks over QQ per torus multidegree "
                "against low_degree_equations",
                "inside the ideal",
                f"{r['their_span']} of {r['ideal']} cubics spanned; inside: {r['members_in_ideal']}",
                r["members_in_ideal"] and r["their_span"] > 0,
                time.perf_counter() - t0,
                size=(d, 1, at),
            )
        )
        for row in r["rows"]:
            if row["ideal"] or row["their_span"]:
                mrows.append(
                    [
                        f"({d},{at},{t})",
                        "; ".join(",".join(map(str, p)) for p in row["representative"]),
                        row["multidegrees"],
                        row["ideal"],
                        row["their_span"],
                        row["ideal"] - row["their_span"],
                    ]
                )
        report.findings.append(
            f"{INVARIANTS} d = {d}, at = {at}: their cubic members ({r['members']} nonzero after "
            f"the pull-back) span {r['their_span']} of the {r['ideal']} cubics of the closure "
            "ideal; the others are new to their list (per multidegree in the table)."
        )
    report.tables.append(
        Table(
            "Their cubics per torus multidegree against the closure's (d = 4)",
            [
                "(d,at,t)",
                "multidegree (A rows; V rows; z)",
                "multidegrees",
                "cubics of the ideal",
                "their span",
                "not theirs",
            ],
            mrows,
            note="Per orbit of multidegrees under index permutations; exact ranks over QQ. The ideal: "
            "low_degree_equations of one layer (d, 1, at), t = 2.",
            source=THEIR_SOURCE,
        )
    )
    return multi


def _ideal_checks(report: Any, quick: bool, timeout: float) -> list[dict[str, Any]]:
    """Their implicit ideal J of each case against the package's closure ideal, and their table."""
    ideals = []
    irows = []
    for d, at, t in IDEAL_CASES:
        if quick and (d, at, t) not in ((2, 1, 1), (2, 1, 2), (3, 1, 2)):
            continue
        g = load_golden(d, at, t)
        ic = compare_ideal(g, timeout=timeout, m2=not quick)
        ideals.append(ic.to_dict())
        th = ic.theirs
        irows.append(
            [
                f"({d},{at},{t})",
                ic.package_rank,
                ic.generators,
                ic.vanishing,
                th["codim"],
                th["degree"],
                " ".join(map(str, th["hilbert_numerator"])),
                "-" if ic.equal is None else ("equal" if ic.equal else "differ"),
                ic.ours.get("degree", "-"),
                " ".join(map(str, ic.ours.get("hilbert_numerator", []))) or "-",
            ]
        )
        report.add(
            Check(
                f"{INVARIANTS} their implicit ideal J is the package's closure ideal"
                + (" (their t = 1 elimination has no rank constraint: compared at a = d)" if t == 1 else ""),
                f"(d, at, t) = ({d}, {at}, {t}); package (d, d', a) = ({d}, 1, {ic.package_rank})",
                "J's generators substituted with the package's parametrization (exact)"
                + (
                    "" if ic.equal is None else "; Macaulay2: J == phi(I) + linear(J), codim, degree, Hilbert numerator"
                ),
                f"{ic.generators} vanish" + ("" if ic.equal is None else ", equal"),
                f"{ic.vanishing} vanish" + ("" if ic.equal is None else (", equal" if ic.equal else ", differ")),
                ic.agrees,
                ic.seconds,
                ic.to_dict(),
                size=(d, 1, ic.package_rank),
            )
        )
        if t == 1 and g.rank_ideal is not None and at < d and g.rank_ideal["codim"] != th["codim"]:
            _rank_ideal_check(report, g, th)
    report.tables.append(
        Table(
            "Their implicit ideal J against the package's closure ideal",
            [
                "(d,at,t)",
                "package a",
                "generators of J",
                "vanish on the package's image",
                "codim J",
                "degree J",
                "Hilbert numerator of J",
                "J == phi(I) + linear(J)",
                "degree (package)",
                "Hilbert numerator (package)",
            ],
            irows,
            note="J: their elimination (golden file). I: the package's closure ideal (implicitize, Macaulay2), "
            "pushed into their coordinates (t = 2: c[l,(u,v)] = w(u,v) y[(u,2),(v,2),(l,1)]; t = 1: "
            "full_K = |S_3 K| y_K), plus the linear forms of J (their coordinates have linear relations). "
            "Vanishing: exact substitution over QQ.",
            source=THEIR_SOURCE,
        )
    )
    return ideals


def _rank_ideal_check(report: Any, g: Golden, th: dict[str, Any]) -> None:
    """t = 1, ``at < d``: the golden file's ideal with ``minors(at+1, A)`` added (not their code) against the
    package's dimension and degree of rank ``<= at``, and the finding that their check compares with full rank."""
    d, at = g.d, g.at
    ri = g.rank_ideal
    assert ri is not None
    expected = invariants.T1_VALUES.get((d, 1, at))
    if expected is not None:
        report.add(
            Check(
                f"{INVARIANTS} with minors(at+1, A) added to their t = 1 elimination (not their code) "
                "the ideal has the package's dimension and degree of rank <= at",
                f"(d, at, t) = ({d}, {at}, 1)",
                "golden file's rank_ideal against T1_VALUES",
                f"dim {expected[0]}, degree {expected[1]}",
                f"dim {ri['dim']}, degree {ri['degree']}",
                (ri["dim"], ri["degree"]) == expected,
                size=(d, 1, at),
            )
        )
    report.findings.append(
        f"{INVARIANTS} t = 1, d = {d}, at = {at}: their driver's ideal J (no rank constraint) has codim "
        f"{th['codim']}, degree {th['degree']}; with minors(at+1, A) added (not their code) the ideal has "
        f"codim {ri['codim']}, degree {ri['degree']}, {len(ri['generators'])} generators: their check "
        "'allI == J' at at < d compares with the full-rank ideal."
    )
