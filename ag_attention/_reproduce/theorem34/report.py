"""The parts of the Theorem 3.4 report that sum up: its opening verdicts, the dimension table, the findings."""

from __future__ import annotations

from collections.abc import Sequence

from ..._architecture import Architecture
from ..._exact import dimension as exact_dimension
from ..claims import STATEMENT, Claim
from ..report import Check, Report, Table, Verdict
from ..sources import Source
from .grids import Size
from .pointwise import StatedMismatch
from .predictions import Theory
from .symbolic import M2Outcome

__all__ = [
    "THEOREM_34",
    "SUPPORTING",
    "dimension_checks",
    "stated_rule_findings",
    "excluded_size_findings",
    "theorem_verdicts",
]


def dimension_checks(report: Report, sizes: Sequence[Size], theory: Theory, seed: int) -> None:
    """Cor. 3.3 on every size and token count, by the exact engine; a table of all of them."""
    rows = []
    one_token = []
    for size in sizes:
        for t in (1, 2, 3):
            r = exact_dimension(Architecture((size.d, size.d_out), (size.a,), tokens=t), seed=seed)
            rows.append([*size.triple, t, r.dimension, size.dim, r.certified, r.formula_applies])
            if r.formula_applies:
                want = theory.dimension(size)
                report.add(
                    Check(
                        "Cor. 3.3: dim M = a(2d - a) + d d' - 1",
                        f"{size}, t={t}",
                        "GF(p) Jacobian rank + symmetry bound",
                        want,
                        r.dimension,
                        r.dimension == want and r.certified,
                        r.seconds,
                        topic=Claim.COR_33,
                        size=size.triple,
                        techniques=("GF(p) Jacobian rank + symmetry bound",),
                    )
                )
            elif t == 1 and r.dimension != size.dim:
                one_token.append(f"{size}: {r.dimension} ({'exact' if r.certified else 'lower bound'}) vs {size.dim}")
            elif not size.in_hypotheses and r.dimension == size.dim and t == 2:
                report.findings.append(f"{size}: Cor. 3.3 holds (dim {r.dimension}) although d' = 1, a = 1 is excluded")
    if one_token:
        report.findings.append(
            f"t = 1 (excluded): the dimension is below Cor. 3.3 on {len(one_token)} of {len(sizes)} sizes, "
            f"e.g. {one_token[0]}; phi(x) = (x^T A x) V x only sees A + A^T"
        )
    report.tables.append(
        Table(
            "Dimensions (exact engine)",
            ["d", "d'", "a", "t", "dim", "Cor. 3.3", "certified", "hypotheses hold"],
            rows,
            formats={"certified": lambda v, row: "exact" if v else "lower bound"},
            source=Source.theorem(
                "Henry, Marchetti, Kohn, Geometry of Lightning Self-Attention, Cor. 3.3, "
                "evaluated by expected_dimension"
            ),
        )
    )


def stated_rule_findings(report: Report, stated_mismatch: Sequence[StatedMismatch]) -> None:
    """One finding per size where Theorem 3.4 as stated and the certificates differ."""
    by_size: dict[Size, list[StatedMismatch]] = {}
    for item in stated_mismatch:
        by_size.setdefault(item.size, []).append(item)
    for size, items in by_size.items():
        sing = [i for i in items if i.certificate.singular]
        smooth = [i for i in items if not i.certificate.singular]
        parts = []
        if sing:
            parts.append(
                f"{len(sing)} orbit(s) the rank-one rule calls smooth are singular, "
                f"e.g. {sing[0].orbit} ({sing[0].certificate.summary})"
            )
        if smooth:
            parts.append(
                f"{len(smooth)} orbit(s) it calls singular are smooth, "
                f"e.g. {smooth[0].orbit} ({smooth[0].certificate.summary})"
            )
        report.findings.append(f"{size}: 'singular iff rank A <= 1 and rank V <= 1' fails: " + "; ".join(parts))


def excluded_size_findings(report: Report, implicit: dict[Size, M2Outcome]) -> None:
    """The Macaulay2 degree of each size outside the theorem's hypotheses."""
    for size, info in implicit.items():
        if not size.in_hypotheses:
            report.findings.append(
                f"{size} (excluded by the theorem): Macaulay2 degree {info.degree}; see the orbit table"
            )


#: Theorem 3.4's statements: (label, statement, evidence, the results whose checks decide it)
THEOREM_34: tuple[tuple[str, str, str, tuple[Claim, ...]], ...] = (
    (
        "Thm. 3.4 (1): closed",
        "M is closed in the Euclidean topology",
        "Cor. A.1: no base points, so phi descends to a morphism of projective spaces",
        (Claim.COR_A1,),
    ),
    (
        "Thm. 3.4 (2): boundary",
        "its relative boundary points are exactly the phi(u v^T, w v^T)",
        "Lemma A.3: these are the critical values; Cor. A.6: the real points of the closure outside M "
        "have them as limits",
        (Claim.LEMMA_A3, Claim.COR_A6),
    ),
    (
        "Thm. 3.4 (3): singular",
        STATEMENT[Claim.THM_34_SINGULAR],
        "every GL-orbit (Macaulay2's equations, equations by interpolation, exact certificates) and random points "
        "of each stratum",
        (Claim.THM_34_SINGULAR,),
    ),
)
#: the results Theorem 3.4 rests on, each with what its checks compute
SUPPORTING: tuple[tuple[Claim, str], ...] = (
    (Claim.COR_A1, "the radical of the base locus ideal"),
    (Claim.LEMMA_A3, "the rank of the differential at critical, rank-one pair and generic points"),
    (Claim.COR_A6, "phi(u v^T, w conj(v)^T): real, on the closure, no real preimage; its limit Im v -> 0 critical"),
    (Claim.COR_33, "the dimension of the closure (Macaulay2) and the exact Jacobian rank for t = 1, 2, 3"),
    (Claim.THM_32, "the minimal primes of fibers (Macaulay2) and the preimages by factorization"),
)


def theorem_verdicts(report: Report, theory: Theory) -> None:
    """The report's opening rows: Theorem 3.4's three statements, then the results they rest on."""
    by_topic: dict[Claim | None, list[Check]] = {}
    for c in report.checks:
        by_topic.setdefault(c.topic, []).append(c)
    refined = (
        f"checked against the predictions '{theory.name}': the statement as the paper gives it where its "
        "hypotheses hold (d' > 1 or a > 1, A free), refined where the computation shows it must be: with a rank "
        "bound 2 <= a < d also singular where rank A < a; for d' = 1, a = 1 (excluded by the theorem) singular "
        "exactly on the critical set when d >= 3. See the findings"
    )
    for label, statement, evidence, topics in THEOREM_34:
        checks = [c for t in topics for c in by_topic.get(t, [])]
        note = refined if Claim.THM_34_SINGULAR in topics else ""
        report.verdicts.append(Verdict.of(label, statement, evidence, checks, note))
    for claim, evidence in SUPPORTING:
        report.verdicts.append(Verdict.of(claim.value, STATEMENT[claim], evidence, by_topic.get(claim, [])))
    jobs = [c for c in by_topic.get(None, []) if c.claim == "Macaulay2 checks"]
    if jobs:
        report.verdicts.append(
            Verdict.of(
                "Macaulay2 jobs",
                "every Macaulay2 job finished",
                "the jobs that did not finish (their checks are missing)",
                jobs,
            )
        )
    report.verdict_heading = "Theorem 3.4 and the results it rests on"
