"""Training on the neuromanifold: where gradient descent ends, measured (``ag-attention reproduce training``).

Teacher-student runs (:mod:`ag_attention._point.training`) of one and two
lightning layers: teachers in three strata (generic; every ``A`` of rank
one; every layer at a critical pair ``A = u v^T, V = w v^T``), data sets of
several sizes, several seeds.  Along each run the loss, the singular values
of ``A`` and ``V``, the float64 local rank and ``s_D / s_1`` of the
normalized Jacobian (``D`` the generic dimension) and, for one layer, the
distance to the critical pairs are recorded; where each run ends is
classified (critical / singular / smooth, thresholds in the module above).

The report counts, per architecture, teacher and data size, how the runs end
and how close they come to the critical locus, draws the trajectories, and
checks what must hold whatever the findings: the loss never increases
(backtracking), students of generic teachers with enough data reach zero loss
at a point of full local rank, and students of critical teachers with enough
data approach the critical set.  It is the attention analogue of "Learning on
a Razor's Edge" (arXiv 2505.11846, for MLPs): measurements in float64, not
proofs.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _progress as progress
from .._architecture import Architecture
from .._files import atomic_write
from .._point import CRITICAL_RATIO, RANK_TOLERANCE, TEACHERS, TrainingRun, train
from .._sweep import OKABE_ITO, integer_ticks
from .report import FIGURE_FORMATS, Check, Report, Table, pyplot, save_figure, written

__all__ = ["Plan", "QUICK", "FULL", "reproduce_training", "training_figure"]


@dataclass(frozen=True)
class Plan:
    """Which runs: per architecture, the data sizes, the seeds and the steps."""

    runs: tuple[tuple[Architecture, tuple[int, ...], tuple[int, ...], int], ...]  # (arch, samples, seeds, steps)
    record_every: int


ONE = Architecture((3, 2), (3,), tokens=2)
TWO = Architecture((3, 3, 2), (2, 2), tokens=2)
#: about 40 s on 2 cores: one layer, 2 data sizes x 3 seeds; two layers, 1 data size x 1 seed
QUICK = Plan(((ONE, (2, 30), (0, 1, 2), 3000), (TWO, (30,), (0,), 2000)), 250)
#: about 25 minutes: more seeds, data sizes and steps
FULL = Plan(
    (
        (ONE, (2, 5, 30), tuple(range(10)), 10000),
        (Architecture((2, 2), (2,), tokens=2), (2, 5, 30), tuple(range(10)), 10000),
        (TWO, (5, 30), tuple(range(5)), 8000),
    ),
    500,
)

#: a loss above this at the end: the run did not reach the teacher's function (a spurious point, or too slow)
STUCK = 1e-3


def _runs(plan: Plan, seed: int, on_run: Callable[[TrainingRun], None]) -> list[TrainingRun]:
    jobs = [
        (arch, teacher, n, s, steps)
        for arch, sizes, seeds, steps in plan.runs
        for teacher in TEACHERS
        for n in sizes
        for s in seeds
    ]
    out = []
    with progress.bar(total=len(jobs), desc="teacher-student runs", unit="run") as b:
        for arch, teacher, n, s, steps in jobs:
            b.set_postfix_str(f"{arch.describe()}, {teacher}, N = {n}, seed {s}", refresh=False)
            run = train(arch, teacher, n, seed=seed + s, steps=steps, record_every=plan.record_every)
            on_run(run)
            out.append(run)
            b.update(1)
    return out


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _summary_rows(runs: list[TrainingRun]) -> list[list[Any]]:
    groups: dict[tuple[str, str, int], list[TrainingRun]] = {}
    for r in runs:
        groups.setdefault((r.architecture.describe(), r.teacher, r.samples), []).append(r)
    rows = []
    for (arch, teacher, n), rs in groups.items():
        ends = Counter(r.end for r in rs)
        start_d = [r.records[0].distance for r in rs if r.records[0].distance is not None]
        end_d = [r.final.distance for r in rs if r.final.distance is not None]
        rows.append(
            [
                arch,
                teacher,
                n,
                len(rs),
                ends.get("smooth", 0),
                ends.get("singular", 0),
                ends.get("critical", 0),
                sum(1 for r in rs if r.final.loss > STUCK),
                _median([r.final.loss for r in rs]),
                _median([r.final.ratio for r in rs if r.final.ratio is not None]),
                _median(start_d),
                _median(end_d),
            ]
        )
    return rows


def _checks(report: Report, runs: list[TrainingRun]) -> None:
    increased = [r for r in runs if any(b.loss > a.loss * (1 + 1e-9) for a, b in zip(r.records, r.records[1:]))]
    report.add(
        Check(
            "gradient descent with backtracking never increases the loss",
            f"{len(runs)} runs",
            "loss at every record",
            "non-increasing",
            f"{len(runs) - len(increased)} of {len(runs)}",
            not increased,
            details={"increased": [(r.teacher, r.samples, r.seed) for r in increased]},
        )
    )
    for arch in {r.architecture for r in runs}:
        generic = [
            r
            for r in runs
            if r.architecture == arch
            and r.teacher == "generic"
            and r.samples == max(x.samples for x in runs if x.architecture == arch)
        ]
        fitted = [r for r in generic if r.final.loss < 1e-8]
        if arch.depth == 1 and fitted:
            # N t d' equations >> dim M: zero loss means the teacher's (generic) function, whose fiber is the
            # rescalings only (Thm. 3.2): the student must be at a point of full local rank
            ok = [r for r in fitted if r.final.numerical_rank == r.generic_dimension]
            report.add(
                Check(
                    "generic teacher, enough data: a run that reaches zero loss ends at a point of full local rank",
                    arch.describe(),
                    f"the float64 local rank (clear gap) = dim M = {fitted[0].generic_dimension} "
                    "where the final loss < 1e-8",
                    f"{len(fitted)} of {len(fitted)}",
                    f"{len(ok)} of {len(fitted)}",
                    len(ok) == len(fitted),
                    details={"runs": [(r.seed, r.final.loss, r.final.numerical_rank) for r in generic]},
                )
            )
        every = [
            r
            for r in runs
            if r.architecture == arch and r.teacher == "critical" and r.samples >= 30 and r.final.distance is not None
        ]
        # the claim is about students that fit the teacher; a run stopped above STUCK (a stall) is listed apart
        critical = [r for r in every if r.final.loss <= STUCK]
        if critical:
            closer = [r for r in critical if r.final.distance < r.records[0].distance / 2]  # type: ignore[operator]
            stalled = [r for r in every if r.final.loss > STUCK]
            report.add(
                Check(
                    f"critical teacher, enough data: a student that fits the teacher (loss <= {STUCK:g}) "
                    "approaches the critical pairs",
                    arch.describe()
                    + (f" ({len(stalled)} stalled run(s) above loss {STUCK:g} left out)" if stalled else ""),
                    "distance to {(u v^T, w v^T)} at the end below half the start",
                    f"{len(critical)} of {len(critical)}",
                    f"{len(closer)} of {len(critical)}",
                    len(closer) == len(critical),
                    details={"runs": [(r.seed, r.records[0].distance, r.final.distance, r.final.loss) for r in every]},
                )
            )


def _findings(runs: list[TrainingRun]) -> list[str]:
    out = []
    for arch in dict.fromkeys(r.architecture for r in runs):
        mine = [r for r in runs if r.architecture == arch]
        for teacher in TEACHERS:
            for n in sorted({r.samples for r in mine}):
                rs = [r for r in mine if r.teacher == teacher and r.samples == n]
                if not rs:
                    continue
                ends = Counter(r.end for r in rs)
                stuck = sum(1 for r in rs if r.final.loss > STUCK)
                text = (
                    f"{arch.describe()}, {teacher} teacher, N = {n}: {len(rs)} runs end "
                    + ", ".join(f"{k} {v}" for k, v in sorted(ends.items()))
                    + f"; median final loss {statistics.median(r.final.loss for r in rs):.1e}"
                )
                d = [r.final.distance for r in rs if r.final.distance is not None]
                if d:
                    text += f", median distance to the critical pairs {statistics.median(d):.2g}"
                if stuck:
                    text += f"; {stuck} stopped above loss {STUCK:g} (not the teacher's function)"
                out.append(text)
    return out


def training_figure(runs: list[TrainingRun]) -> Any:
    """The trajectories of the first one-layer architecture's runs with the most data, four panels: a pyplot
    figure (the caller closes it; :func:`_figure` saves it as PNG, PDF and SVG).

    Each teacher has an Okabe-Ito colour, a line style and a marker (at each run's end); its legend entry
    counts the runs drawn, and a teacher without runs has none.  Each run's line has the gid
    ``"run:<teacher>:<seed>"``.  The steps are integers: integer ticks.
    """

    plt = pyplot()
    one = [r for r in runs if r.architecture.depth == 1]
    # one architecture per figure (the first one-layer one of the plan): its title names it
    one = [r for r in one if r.architecture == one[0].architecture]
    big = max((r.samples for r in one), default=0)
    drawn = [r for r in one if r.samples == big]
    colors = {"generic": OKABE_ITO["blue"], "rank-one A": OKABE_ITO["orange"], "critical": OKABE_ITO["reddish purple"]}
    styles = {"generic": "-", "rank-one A": "--", "critical": "-."}
    markers = {"generic": "o", "rank-one A": "s", "critical": "^"}
    names = {"rank-one A": "rank-one $A$"}
    counts = Counter(r.teacher for r in drawn)
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.2))
    # (axes, the value of a run's record or None where it has none, label); a record is a _point.training.Record
    panels: list[tuple[Any, Callable[[TrainingRun, Any], float | None], str]] = [
        (axes[0][0], lambda r, x: x.loss, "loss (mean squared error)"),
        (axes[0][1], lambda r, x: x.ratio, r"$s_D / s_1$ of the normalized Jacobian"),
        (axes[1][0], lambda r, x: x.distance, r"distance to the critical pairs $(uv^\top, wv^\top)$"),
        (
            axes[1][1],
            lambda r, x: min(x.singular_A[0]) / max(x.singular_A[0]) if max(x.singular_A[0]) > 0 else None,
            r"$\sigma_{\min}(A) / \sigma_{\max}(A)$",
        ),
    ]
    for ax, value, label in panels:
        seen = set()
        for r in drawn:
            points = [(x.step, value(r, x)) for x in r.records]
            xs = [step for step, v in points if v is not None]
            ys = [max(float(v), 1e-300) for _, v in points if v is not None]
            if not xs:
                continue
            n = counts[r.teacher]
            name = None if r.teacher in seen else f"{names.get(r.teacher, r.teacher)} teacher ({n} run{'s' * (n != 1)})"
            seen.add(r.teacher)
            ax.semilogy(
                xs,
                ys,
                ls=styles.get(r.teacher, ":"),
                color=colors.get(r.teacher, OKABE_ITO["black"]),
                lw=1.5,
                marker=markers.get(r.teacher, "D"),
                markevery=[len(xs) - 1],
                ms=6,
                label=name,
                alpha=0.85,
                gid=f"run:{r.teacher}:{r.seed}",
            )
        ax.set_xlabel("gradient step")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        integer_ticks(ax, "x")
    if drawn:
        axes[0][0].legend(fontsize=8)
        a = drawn[0].architecture
        fig.suptitle(
            f"Gradient descent on one lightning layer ($d = {a.widths[0]}$, $d' = {a.widths[1]}$, "
            f"$a = {a.ranks[0]}$, $t = {a.tokens}$) with $N = {big}$ input sequences.\n"
            "The loss and the geometry along each run, a marker where it ends."
        )
    else:
        fig.suptitle("No one-layer run to draw.")
    fig.tight_layout()
    return fig


def _figure(runs: list[TrainingRun], path: Path) -> list[Path]:
    """:func:`training_figure` of ``runs`` saved as PNG, PDF and SVG (atomically); the paths written."""
    fig = training_figure(runs)
    try:
        return save_figure(fig, path)
    finally:
        pyplot().close(fig)


def reproduce_training(
    out: str | Path | None = None, *, quick: bool = False, seed: int = 0, plan: Plan | None = None
) -> Report:
    """Run the plan (:data:`QUICK` or :data:`FULL`), return the report (and write it with its figure under
    ``out``)."""
    plan = plan or (QUICK if quick else FULL)
    t0 = time.perf_counter()
    report = Report(
        "Training on the neuromanifold: where gradient descent ends",
        summary=(
            "Teacher-student runs of lightning attention: a teacher in a stratum (generic; A of rank one; "
            "critical pairs A = u v^T, V = w v^T) labels N random input sequences, a student of the same "
            "architecture follows gradient descent on the mean squared error (full batch, backtracking). Along "
            "each run: the loss, the singular values of A and V, the float64 local rank (s_D / s_1 of the "
            "normalized Jacobian, D the generic dimension) and, for one layer, the distance to the critical "
            f"pairs. A run ends 'critical' when s_D / s_1 < {CRITICAL_RATIO:g}, 'singular' (one layer) when A and "
            f"V have numerical rank <= 1 (singular values below {RANK_TOLERANCE:g} of the largest count as "
            "zero), else 'smooth'. Float64 measurements, not proofs (docs/math/point.md)."
        ),
        meta={"seed": seed, "plan": "quick" if plan == QUICK else "full" if plan == FULL else "custom"},
    )
    runs = _runs(plan, seed, lambda r: None)
    report.tables.append(
        Table(
            "Where the runs end",
            [
                "architecture",
                "teacher",
                "N",
                "runs",
                "smooth",
                "singular",
                "critical",
                f"loss > {STUCK:g}",
                "median loss",
                "median s_D/s_1",
                "median start distance",
                "median end distance",
            ],
            _summary_rows(runs),
            note="distance: to the critical pairs (u v^T, w v^T) in the Frobenius norm of (A, V), one layer only",
            formats={
                c: (lambda v, row: "-" if v is None else f"{v:.2g}")
                for c in ("median loss", "median s_D/s_1", "median start distance", "median end distance")
            },
            source=None,
        )
    )
    _checks(report, runs)
    report.findings += _findings(runs)
    report.meta["runs"] = len(runs)
    report.meta["seconds"] = round(time.perf_counter() - t0, 1)
    if out is not None:
        target = Path(out)
        path = written(report, lambda: _figure(runs, target / "training.png"))
        if path:
            report.meta["figures"] = [f"training.{ext}" for ext in FIGURE_FORMATS]
        import json

        written(report, lambda: atomic_write(target / "runs.json", json.dumps([r.to_dict() for r in runs]) + "\n"))
        report.meta["runs_file"] = "runs.json"
    return report
