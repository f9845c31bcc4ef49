"""The reproduction of Theorem 3.4: its options and the order in which the parts run.

The Macaulay2 jobs (one per size of the Macaulay2 grid) run in worker
threads, at most :func:`~ag_attention._m2.session.job_slots` at once (the
usable cores, bounded by the memory each job may take), the largest first,
while this thread computes the equations and the pointwise certificates.
Each job's checks are added once it is done; the report lists them in the
order of a sequential run (Macaulay2 sizes first, then the equations, then
the pointwise checks, each size's Cor. A.6 check after its fibers), so the
report does not depend on which job finished first.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import M2NotFoundError
from ..._m2 import close_all, get_backend, job_slots, kill_all_jobs
from ..._progress import bar, quiet, ticking
from ..equations34 import EQUATION_GRID, equation_checks
from ..figure1 import render_figure1
from ..report import FIGURE_FORMATS, Report, written
from .grids import M2_GRID, POINT_GRID, Size
from .pointwise import StatedMismatch, conjugate_checks, fiber_count_checks, point_checks
from .predictions import THEOREM, Theory, features
from .report import dimension_checks, excluded_size_findings, stated_rule_findings, theorem_verdicts
from .symbolic import M2Job, M2Outcome, m2_checks, m2_job

__all__ = ["Options", "reproduce_theorem_34"]


@dataclass
class Options:
    m2_grid: tuple[Size, ...] = M2_GRID
    point_grid: tuple[Size, ...] = POINT_GRID
    seed: int = 0
    per_stratum: int = 2
    backend: Any = "auto"  # a backend's name ("auto", "local", "container") or a Backend
    m2_timeout: float = 900.0
    use_m2: bool = True
    equation_grid: tuple[tuple[int, int, int, int], ...] = EQUATION_GRID
    theory: Theory = THEOREM
    picture: bool = True
    out: Path | None = None


class _Timer:
    """Seconds by part of the run (``report.meta["seconds_by_part"]``)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._t0 = 0.0

    def start(self) -> None:
        self._t0 = time.perf_counter()

    def stop(self, part: str) -> None:
        self.seconds[part] = time.perf_counter() - self._t0


def _quietly(job: M2Job, backend: Any, timeout: float) -> M2Job:
    """``job.run`` without its own elapsed-time bar: the jobs' progress is the one of :class:`_M2Runs`."""
    with quiet():
        return job.run(backend, timeout)


class _M2Runs:
    """The Macaulay2 jobs of a run, under way in worker threads (the largest first), on one progress bar: k of n
    jobs finished, the time elapsed and left, redrawn while they run (off a terminal: a line as each one finishes,
    and every 10 s)."""

    def __init__(self, opts: Options) -> None:

        try:  # once, before any item: a missing Macaulay2 is one error (exit 3), not a failure per item
            backend = get_backend(opts.backend)
        except M2NotFoundError as exc:
            raise M2NotFoundError(f"{exc} (--no-m2, or Options(use_m2=False), skips the Macaulay2 items)") from None
        self.jobs = [
            m2_job(size, opts.seed, np.random.default_rng([opts.seed, size.d, size.d_out, size.a, 1]))
            for size in opts.m2_grid
        ]
        self.slots = job_slots(backend.memory_limit()[0])
        self._pool = ThreadPoolExecutor(max_workers=self.slots, thread_name_prefix="ag-attention-m2")
        self._progress = contextlib.ExitStack()
        b = self._progress.enter_context(bar(total=len(self.jobs), desc="Macaulay2", unit="job", each=True))
        self._progress.enter_context(ticking(b))
        self.futures: dict[int, Future[M2Job]] = {}
        for i in sorted(range(len(self.jobs)), key=lambda i: -self.jobs[i].size.coordinates):
            self.futures[i] = self._pool.submit(_quietly, self.jobs[i], backend, opts.m2_timeout)
            self.futures[i].add_done_callback(lambda f: None if f.cancelled() else b.update(1))

    def collect(self, report: Report, opts: Options, say: Callable[[str], None]) -> dict[Size, M2Outcome]:
        """Wait for every job, in grid order, and add its checks."""
        implicit: dict[Size, M2Outcome] = {}
        for i, job in enumerate(self.jobs):
            done = self.futures[i].result()
            say(f"Macaulay2: {job.size}")
            outcome = m2_checks(report, done, opts.theory, opts.seed)
            if outcome is not None:
                implicit[job.size] = outcome
        self._pool.shutdown()
        self._progress.close()
        return implicit

    def abandon(self) -> None:
        """After an interruption: cancel the jobs not started, kill those under way (and every session)."""

        self._pool.shutdown(wait=False, cancel_futures=True)
        self._progress.close()
        kill_all_jobs()
        close_all()


def _run_pointwise(report: Report, opts: Options, say: Callable[[str], None]) -> tuple[list[StatedMismatch], list[int]]:
    """The checks from the parametrization but Cor. A.6's; the orbits where Theorem 3.4 as stated fails, and
    where in ``report.checks`` each size's Cor. A.6 check goes (:func:`_conjugate_checks`)."""
    stated_mismatch: list[StatedMismatch] = []
    slots: list[int] = []
    for size in opts.point_grid:
        say(f"pointwise: {size}")
        rng = np.random.default_rng([opts.seed, size.d, size.d_out, size.a, 2])
        point_checks(report, size, opts.theory, rng, opts.per_stratum, opts.seed, stated_mismatch)
        fiber_count_checks(report, size, rng, opts.theory)
        slots.append(len(report.checks))
    return stated_mismatch, slots


def _conjugate_checks(report: Report, opts: Options, implicit: dict[Size, M2Outcome], slots: list[int]) -> None:
    """Cor. A.6 for each size in hypotheses with A free, at its place among the pointwise checks (it needs the
    Macaulay2 result of the size, when there is one)."""
    for size, at in reversed(list(zip(opts.point_grid, slots))):
        if size.free and size.in_hypotheses:
            m2 = implicit.get(size)
            part = Report("")
            conjugate_checks(part, size, opts.seed, None if m2 is None else m2.conjugate_on_closure, opts.theory)
            report.checks[at:at] = part.checks


def _new_report(opts: Options) -> Report:
    return Report(
        "Theorem 3.4: geometry of one lightning self-attention layer",
        summary=(
            "Each check tests one claim on one size (d, d', a) of one layer, a = d when A is free. 'Macaulay2' "
            "checks use the implicit equations of the closure; the others are exact certificates from the "
            "parametrization (see ag_attention._exact.onelayer; the mathematics: docs/math/geometry.md). "
            "GF(p) ranks are certified lower bounds; rank drops "
            f"are exact ranks over QQ. Predictions: {opts.theory.name}."
        ),
        meta={
            "seed": opts.seed,
            "prime": 2**31 - 1,
            "m2_sizes": len(opts.m2_grid) if opts.use_m2 else 0,
            "pointwise_sizes": len(opts.point_grid),
        },
        details_csv="checks.csv",
    )


def _steps(opts: Options) -> int:
    """How many items announce themselves: Macaulay2 sizes, equation sizes, pointwise sizes, the picture."""
    return (
        (len(opts.m2_grid) if opts.use_m2 else 0)
        + len(opts.equation_grid)
        + len(opts.point_grid)
        + (1 if opts.picture and opts.out is not None else 0)
    )


def _stepper(b: Any, lines: Callable[[str], None] | None) -> Callable[[str], None]:
    """``say``: each announced item advances the bar (k of N, ETA) and names itself; indented notes only show."""
    started = False

    def say(text: str) -> None:
        nonlocal started
        if lines is not None:
            lines(text)
        if not text.startswith(" "):
            if started:
                b.update(1)
            started = True
        b.set_postfix_str(text.strip(), refresh=False)

    return say


def reproduce_theorem_34(opts: Options | None = None, progress: Callable[[str], None] | None = None) -> Report:
    """Run every check of :class:`Options` and return the report (see the package docstring).

    The report opens with Theorem 3.4's three statements and the results they
    rest on, each with its verdict; its checks go to ``checks.csv`` when written.
    A progress bar (k of N sizes, ETA) shows on a terminal; ``progress``, if
    given, also receives each item's name as a line.
    """
    opts = opts or Options()
    with bar(total=_steps(opts), desc="Theorem 3.4", unit="item") as b:
        report = _reproduce(opts, _stepper(b, progress))
        b.update(b.total - b.n)
    return report


def _reproduce(opts: Options, say: Callable[[str], None]) -> Report:
    report = _new_report(opts)
    timer = _Timer()
    t_start = time.perf_counter()
    runs = _M2Runs(opts) if opts.use_m2 and opts.m2_grid else None
    try:
        others = Report("")  # the checks computed while the Macaulay2 jobs run: they go after theirs
        if opts.equation_grid:
            timer.start()
            equation_checks(
                others,
                opts.equation_grid,
                singular_rule=lambda d, e, a, orbit: opts.theory.singular(Size(d, e, a), features(orbit.A, orbit.V)),
                dimension=lambda d, e, a: opts.theory.dimension(Size(d, e, a)),
                seed=opts.seed,
                say=say,
            )
            timer.stop("equations")
        timer.start()
        stated_mismatch, slots = _run_pointwise(others, opts, say)
        timer.stop("pointwise")
        implicit: dict[Size, M2Outcome] = {}
        if runs is not None:
            implicit = runs.collect(report, opts, say)
            timer.seconds["macaulay2"] = time.perf_counter() - t_start  # wall time: the jobs ran alongside
            report.meta["m2_jobs_at_once"] = runs.slots
    except BaseException:
        if runs is not None:
            runs.abandon()
        raise
    _conjugate_checks(others, opts, implicit, slots)
    report.checks += others.checks
    report.tables += others.tables
    report.engines["macaulay2"] = next((m2.m2_version for m2 in implicit.values()), None)
    timer.start()
    dimension_checks(report, opts.point_grid, opts.theory, opts.seed)
    timer.stop("dimensions")
    stated_rule_findings(report, stated_mismatch)
    excluded_size_findings(report, implicit)
    theorem_verdicts(report, opts.theory)
    if opts.picture and opts.out is not None:
        timer.start()

        say("picture")
        target = Path(opts.out) / "figure1.png"
        path = written(report, lambda: render_figure1(target, seed=opts.seed))
        if path is not None:
            report.meta["picture"] = path.name
            report.meta["figures"] = [path.with_suffix("." + ext).name for ext in FIGURE_FORMATS]
        timer.stop("picture")
    report.meta["seconds_by_part"] = {k: round(v, 1) for k, v in timer.seconds.items()}
    return report
