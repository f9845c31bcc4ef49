"""The parts of the Theorem 3.4 report that sum up: the dimension table and the findings."""

from __future__ import annotations

from typing import Sequence

from ...architecture import Architecture
from ...exact.dimension import dimension as exact_dimension
from ..report import Check, Report, Table
from .grids import Size
from .pointwise import StatedMismatch
from .predictions import Theory
from .symbolic import M2Outcome

__all__ = ["dimension_checks", "stated_rule_findings", "excluded_size_findings"]


def dimension_checks(report: Report, sizes: Sequence[Size], theory: Theory, seed: int) -> None:
    """Cor. 3.3 on every size and token count, by the exact engine; a table of all of them."""
    rows = []
    one_token = []
    for size in sizes:
        for t in (1, 2, 3):
            r = exact_dimension(Architecture((size.d, size.d_out), (size.a,), tokens=t), seed=seed)
            rows.append([str(size), t, r.dimension, size.dim, "exact" if r.certified else "lower bound",
                         "yes" if r.formula_applies else "no"])
            if r.formula_applies:
                want = theory.dimension(size)
                report.add(Check("Cor. 3.3: dim M = a(2d - a) + d d' - 1", f"{size}, t={t}", "GF(p) Jacobian rank + symmetry bound",
                                 want, r.dimension, r.dimension == want and r.certified, r.seconds))
            elif t == 1 and r.dimension != size.dim:
                one_token.append(f"{size}: {r.dimension} ({'exact' if r.certified else 'lower bound'}) vs {size.dim}")
            elif not size.in_hypotheses and r.dimension == size.dim and t == 2:
                report.findings.append(f"{size}: Cor. 3.3 holds (dim {r.dimension}) although d' = 1, a = 1 is excluded")
    if one_token:
        report.findings.append(
            f"t = 1 (excluded): the dimension is below Cor. 3.3 on {len(one_token)} of {len(sizes)} sizes, "
            f"e.g. {one_token[0]}; phi(x) = (x^T A x) V x only sees A + A^T"
        )
    report.tables.append(Table("Dimensions (exact engine)", ["size", "t", "dim", "Cor. 3.3", "certified", "hypotheses hold"], rows))


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
            parts.append(f"{len(sing)} orbit(s) the rank-one rule calls smooth are singular, "
                         f"e.g. {sing[0].orbit} ({sing[0].certificate.summary})")
        if smooth:
            parts.append(f"{len(smooth)} orbit(s) it calls singular are smooth, "
                         f"e.g. {smooth[0].orbit} ({smooth[0].certificate.summary})")
        report.findings.append(f"{size}: 'singular iff rank A <= 1 and rank V <= 1' fails: " + "; ".join(parts))


def excluded_size_findings(report: Report, implicit: dict[Size, M2Outcome]) -> None:
    """The Macaulay2 degree of each size outside the theorem's hypotheses."""
    for size, info in implicit.items():
        if not size.in_hypotheses:
            report.findings.append(f"{size} (excluded by the theorem): Macaulay2 degree {info.degree}; see the orbit table")
