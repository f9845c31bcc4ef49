"""The loss landscape of one layer, reproduced: ``ag-attention reproduce landscape [--quick]`` (issue 22).

Three parts (docs/math/landscape.md states what each number proves):

1. **ED degrees** (:func:`ag_attention.ed_degree`) of every size of :data:`FULL` (:data:`QUICK`), for the
   Euclidean, generic and data forms, ``t = 2`` and ``t = 3`` (only the data form depends on ``t``), each
   counted in the weights over two primes, and on the implicit side (Macaulay2's closure ideal, msolve) where
   that finishes: the two routes must agree.  Beside each: the closure's dimension and degree, and for a
   hypersurface the ED degree of a general hypersurface of the same degree.  Checks: two primes agree, the
   routes agree, no special form exceeds the generic count, and the data form equals the generic one
   exactly when ``d' = 1`` (a conjecture from the sizes, tested on all of them).
2. **Critical points of random data sets** (:func:`ag_attention.critical_points`) of the smallest size with
   a nontrivial landscape, ``(d, d', a) = (2, 1, 2)``, ``t = 2``: for each data set the complex count (equal
   to the data ED degree), the real ones isolated with their loss and Hessian signature, the histogram figure.
3. **Basins**: gradient descent (float64, backtracking) from random starts on each data set, and which of
   the certified minima each run reaches (its function within ``MATCH`` relative of the minimum's; a run
   whose gradient is still above ``CONVERGED`` counts as not converged).

Parts 2 and 3 are computed in :mod:`ag_attention._reproduce.landscape_data`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from .. import _progress as progress
from .._algebra import degree
from .._architecture import Architecture
from .._errors import AgAttentionError, M2TimeoutError, MSolveTimeoutError
from .._exact import dimension
from .._landscape import ed_degree
from .._models import reduced_count
from .landscape_data import (  # coordinates_tensor, gradient_descent: re-exported (imported from here)
    SMALLEST,
    coordinates_tensor,
    data_checks,
    data_figure,
    data_sets,
    data_table,
    gradient_descent,
)
from .landscape_data import layer as _arch
from .report import FIGURE_FORMATS, Check, Report, Table, written
from .sources import Source

__all__ = [
    "Plan",
    "QUICK",
    "FULL",
    "reproduce_landscape",
    "gradient_descent",
    "hypersurface_ed_degree",
    "coordinates_tensor",
]


@dataclass(frozen=True)
class Plan:
    sizes: tuple[tuple[int, int, int], ...]  # (d, d', a) of the ED table
    tokens: tuple[int, ...]  # t of the data form
    m2_sizes: tuple[tuple[int, int, int], ...]  # where the implicit route runs too
    timeout: float  # per count
    data_sets: int
    starts: int  # gradient descent runs per data set
    samples: int  # input sequences per data set
    one_token: bool = True  # t = 1 (euclidean, generic) on the implicit side, at the sizes of m2_sizes


QUICK = Plan(
    sizes=((2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2)),
    tokens=(2, 3),
    m2_sizes=((2, 1, 1), (2, 1, 2)),
    timeout=60.0,
    data_sets=10,
    starts=10,
    samples=5,
)
FULL = Plan(
    sizes=((2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2), (2, 3, 1), (2, 3, 2), (3, 1, 1), (3, 1, 2), (3, 1, 3)),
    tokens=(2, 3),
    m2_sizes=((2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2), (3, 1, 1)),
    timeout=300.0,
    data_sets=100,
    starts=20,
    samples=5,
)
METRIC_NAMES = ("euclidean", "generic", "data")


def hypersurface_ed_degree(n: int, degree: int) -> int:
    """The ED degree of a general affine cone over a hypersurface of ``degree`` in ``P^{n-1}`` (Draisma et al.,
    *The Euclidean distance degree of an algebraic variety*, Cor. 2.9): ``degree * sum_{i<n-1} (degree-1)^i``."""
    # an int: each power has an exponent i >= 0 (typeshed's int ** int is Any, a negative exponent gives a float)
    powers: int = sum((degree - 1) ** i for i in range(n - 1))
    return degree * powers


# ------------------------------------------------------------------ 1. the ED table
@dataclass
class _Row:
    size: tuple[int, int, int]
    t: int
    metric: str
    count: int | None
    count_seconds: float | None
    counts: tuple[int, ...]
    fiber: int | None
    m2: int | None
    m2_seconds: float | None
    failed: str  # why a route did not finish ("" if both did or were not asked)
    dimension: int
    degree: int | None
    coordinates: int


def _ed_rows(plan: Plan, seed: int) -> list[_Row]:
    jobs = [(size, t, m) for size in plan.sizes for m in METRIC_NAMES for t in (plan.tokens if m == "data" else (2,))]
    if plan.one_token:
        jobs += [(size, 1, m) for size in plan.m2_sizes for m in ("euclidean", "generic")]
    rows = []
    with progress.bar(total=len(jobs), desc="ED degrees", unit="count") as b:
        for size, t, m in jobs:
            rows.append(_ed_row(plan, seed, size, t, m))
            b.update(1)
    return rows


def _ed_row(plan: Plan, seed: int, size: tuple[int, int, int], t: int, metric: str) -> _Row:
    """One row of the ED table: the count in the weights (``t >= 2``), the implicit route (at ``plan.m2_sizes``),
    the closure's dimension and degree; a route that does not finish is named in ``failed``."""
    arch = _arch(size, t)
    failed: list[str] = []
    count, count_s, fiber, counts = _count_route(arch, metric, seed, plan.timeout, failed) if t >= 2 else _NO_COUNT
    m2 = m2_s = closure = None
    if size in plan.m2_sizes:
        m2, m2_s, closure = _implicit_route(arch, metric, seed, plan.timeout, failed)
    if t == 1:  # the closure of one token, in its full coordinates, from Macaulay2
        dim1 = closure[0] if closure else dimension(_arch(size, 1)).dimension
        why = "; ".join(failed) or "count: needs t >= 2"
        coordinates = size[1] * (size[0] + 2) * (size[0] + 1) * size[0] // 6
        return _Row(
            size, 1, metric, None, None, (), None, m2, m2_s, why, dim1, closure[2] if closure else None, coordinates
        )
    try:
        deg: int | None = degree(_arch(size, 2)).degree
    except AgAttentionError:
        deg = None
    return _Row(
        size,
        t,
        metric,
        count,
        count_s,
        counts,
        fiber,
        m2,
        m2_s,
        "; ".join(failed),
        dimension(_arch(size, 2)).dimension,
        deg,
        reduced_count(size[0], size[1]),
    )


_NO_COUNT: tuple[None, None, None, tuple[int, ...]] = (None, None, None, ())


def _count_route(
    arch: Architecture, metric: str, seed: int, timeout: float, failed: list[str]
) -> tuple[int | None, float | None, int | None, tuple[int, ...]]:
    """The ED degree counted in the weights: the count, its seconds, the fiber, the counts per prime."""
    try:
        r = ed_degree(arch, metric=metric, method="count", seed=seed, timeout=timeout)
        if r.final:
            return r.ed_degree, r.seconds, r.fiber, tuple(c.solutions for c in r.counts)
        failed.append(f"count > {timeout:g} s")  # the counts did not finish within the limit (no value)
    except (MSolveTimeoutError, M2TimeoutError):
        failed.append(f"count > {timeout:g} s")
    except AgAttentionError as exc:
        failed.append(f"count: {exc}")
    return _NO_COUNT


def _implicit_route(
    arch: Architecture, metric: str, seed: int, timeout: float, failed: list[str]
) -> tuple[int | None, float | None, tuple[int, int, int] | None]:
    """The ED degree on the implicit side (Macaulay2's closure ideal): the count, its seconds, the closure."""
    try:
        r = ed_degree(arch, metric=metric, method="m2", seed=seed, timeout=timeout)
        return r.ed_degree, r.seconds, r.closure
    except (MSolveTimeoutError, M2TimeoutError):
        failed.append(f"implicit > {timeout:g} s")
    except AgAttentionError as exc:
        failed.append(f"implicit: {exc}")
    return None, None, None


def _ed_table(rows: list[_Row]) -> Table:
    out = []
    for r in rows:
        codim = r.coordinates - r.dimension
        general = hypersurface_ed_degree(r.coordinates, r.degree) if codim == 1 and r.degree is not None else None
        out.append(
            [
                f"({r.size[0]},{r.size[1]},{r.size[2]})",
                r.t,
                r.metric,
                r.count,
                r.m2,
                None if r.count_seconds is None else round(r.count_seconds, 1),
                None if r.m2_seconds is None else round(r.m2_seconds, 1),
                r.dimension,
                codim,
                r.degree,
                general,
                r.failed or None,
            ]
        )
    return Table(
        "ED degrees of one layer's closure",
        [
            "(d,d',a)",
            "t",
            "metric",
            "ED (count)",
            "ED (implicit)",
            "count s",
            "implicit s",
            "dim",
            "codim",
            "degree",
            "general hypersurface",
            "not finished",
        ],
        out,
        note=(
            "count: the critical equations in the weights (critical locus removed), msolve over two primes, "
            "divided by the generic fiber; implicit: Macaulay2's closure ideal over GF(32003), Lagrange "
            "conditions counted by msolve. Both probabilistic (random data, primes). t = 1: the full coordinates "
            "(the cubics' coefficients), the implicit route only. Euclidean: the identity "
            "on the reduced coordinates (the plain coefficients of the quadrics; another scaling changes "
            "it). general hypersurface: the ED degree of a general cone over a hypersurface of that degree "
            "(codimension 1 only: no variety is determined by its dimension and degree in higher "
            "codimension)."
        ),
        formats={
            c: (lambda v, row: "-" if v is None else str(v))
            for c in (
                "ED (count)",
                "ED (implicit)",
                "count s",
                "implicit s",
                "degree",
                "general hypersurface",
                "not finished",
            )
        },
        source=Source.independent(
            "the implicit closure ideal (Macaulay2) and its ED degree (msolve), beside the parametric count"
        ),
    )


def _ed_checks(report: Report, rows: list[_Row]) -> list[str]:
    findings = []
    for r in rows:
        case = f"(d,d',a) = {r.size}, t = {r.t}, {r.metric}"
        if r.counts:
            report.add(
                Check(
                    "two primes and two random data give the same count",
                    case,
                    "msolve over GF(2^31-1) and GF(2^31-19)",
                    r.counts[0],
                    r.counts[1],
                    r.counts[0] == r.counts[1],
                    r.count_seconds or 0.0,
                    size=r.size,
                )
            )
        if r.count is not None and r.m2 is not None:
            report.add(
                Check(
                    "the count in the weights equals the count on the implicit side",
                    case,
                    "msolve in the weights / Macaulay2's closure + msolve",
                    r.count,
                    r.m2,
                    r.count == r.m2,
                    (r.count_seconds or 0.0) + (r.m2_seconds or 0.0),
                    size=r.size,
                )
            )
    value = {(r.size, r.t, r.metric): (r.count if r.count is not None else r.m2) for r in rows}
    for (size, t, m), v in value.items():
        g = value.get((size, 1 if t == 1 else 2, "generic"))  # t = 1 is another variety
        if m != "generic" and v is not None and g is not None:
            report.add(
                Check(
                    "no special form has more critical points than a generic one",
                    f"(d,d',a) = {size}, t = {t}, {m}",
                    "the counts above",
                    f"<= {g}",
                    v,
                    v <= g,
                    size=size,
                )
            )
    # the conjecture: data = generic exactly when d' = 1
    tested = [
        (size, t)
        for (size, t, m), v in value.items()
        if m == "data" and v is not None and value.get((size, 2, "generic")) is not None
    ]
    holds = [(s, t) for s, t in tested if (value[(s, t, "data")] == value[(s, 2, "generic")]) == (s[1] == 1)]
    if tested:
        report.add(
            Check(
                "conjecture: the data form's ED degree is the generic one exactly when d' = 1",
                f"{len(tested)} (size, t) with both counts",
                "the counts above",
                len(tested),
                len(holds),
                len(holds) == len(tested),
            )
        )
        findings.append(
            f"The data form's ED degree equals the generic one on every size with d' = 1 and is smaller on every "
            f"size with d' >= 2 ({len(holds)} of {len(tested)} (size, t) pairs agree with this; conjecture). "
            "Why d' >= 2 differs: each output coordinate sees the same inputs, so the Gram form of any data set is "
            "G0 (x) I_{d'} in the (k, m, ij) order (proven: docs/math/landscape.md), a special form."
        )
    reached = [r for r in rows if r.metric == "generic" and r.count is not None]
    if reached:
        top = max(reached, key=lambda r: r.count or 0)
        findings.append(
            f"The largest generic ED degree counted: {top.count} at (d,d',a) = {top.size} "
            f"({top.count_seconds:.1f} s for two primes)."
        )
    return findings


def reproduce_landscape(
    out: str | Path | None = None, *, quick: bool = False, seed: int = 0, plan: Plan | None = None
) -> Report:
    """Run the plan (:data:`QUICK` or :data:`FULL`), return the report (and write it with its figure under
    ``out``)."""
    plan = plan or (QUICK if quick else FULL)
    t0 = time.perf_counter()
    report = Report(
        "The loss landscape of one lightning layer: ED degrees and critical points",
        summary=(
            "The number of complex critical points of a squared distance on the closure of one layer (the ED "
            "degree) for the Euclidean form on the reduced coordinates, a generic form and the Gram form of "
            "random data; each counted in the weights (critical locus removed, two primes) and, where it "
            "finishes, on the implicit side (Macaulay2's closure ideal); then every critical point of random data "
            "sets of the smallest size, the real ones isolated (msolve) and classified by their Hessian (ball "
            "arithmetic), and where gradient descent from random starts ends (float64). docs/math/landscape.md"
        ),
        meta={"seed": seed, "plan": "quick" if plan == QUICK else "full" if plan == FULL else "custom"},
    )
    rows = _ed_rows(plan, seed)
    report.tables.append(_ed_table(rows))
    report.findings += _ed_checks(report, rows)
    ed_data = next((r.count for r in rows if r.size == SMALLEST and r.metric == "data" and r.t == 2), None)
    sets = data_sets(plan.data_sets, plan.samples, plan.starts, plan.timeout, seed)
    report.tables.append(data_table(sets, plan.samples, plan.starts))
    report.findings += data_checks(report, sets, ed_data, plan.samples)
    report.meta["data_sets"] = len(sets)
    report.meta["seconds_data_sets"] = round(sum(s.seconds for s in sets), 1)
    report.meta["seconds"] = round(time.perf_counter() - t0, 1)
    report.record_engines(msolve=True, macaulay2=True)
    if out is not None:
        target = Path(out)
        if written(report, lambda: data_figure(sets, target / "landscape.png")):
            report.meta["figures"] = [f"landscape.{ext}" for ext in FIGURE_FORMATS]
    return report
