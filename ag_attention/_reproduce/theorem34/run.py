"""The reproduction of Theorem 3.4: its options and the order in which the parts run."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..._errors import M2NotFoundError
from ..._progress import bar
from ..equations34 import EQUATION_GRID, equation_checks
from ..report import FIGURE_FORMATS, Report
from .grids import M2_GRID, POINT_GRID, Size
from .pointwise import StatedMismatch, conjugate_checks, fiber_count_checks, point_checks
from .predictions import THEOREM, Theory, features
from .report import dimension_checks, excluded_size_findings, stated_rule_findings, theorem_verdicts
from .symbolic import M2Outcome, m2_checks

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


def _run_m2(report: Report, opts: Options, say: Callable[[str], None]) -> dict[Size, M2Outcome]:
    from ..._m2.runner import get_backend

    try:  # once, before any item: a missing Macaulay2 is one error (exit 3), not a failure per item
        backend = get_backend(opts.backend)
    except M2NotFoundError as exc:
        raise M2NotFoundError(f"{exc} (--no-m2, or Options(use_m2=False), skips the Macaulay2 items)") from None
    implicit: dict[Size, M2Outcome] = {}
    for size in opts.m2_grid:
        say(f"Macaulay2: {size}")
        rng = np.random.default_rng([opts.seed, size.d, size.d_out, size.a, 1])
        outcome = m2_checks(report, size, opts.theory, opts.seed, rng, backend, opts.m2_timeout)
        if outcome is not None:
            implicit[size] = outcome
    return implicit


def _run_pointwise(report: Report, opts: Options, implicit: dict[Size, M2Outcome],
                   say: Callable[[str], None]) -> list[StatedMismatch]:
    """The checks from the parametrization; the orbits where Theorem 3.4 as stated fails."""
    stated_mismatch: list[StatedMismatch] = []
    for size in opts.point_grid:
        say(f"pointwise: {size}")
        rng = np.random.default_rng([opts.seed, size.d, size.d_out, size.a, 2])
        point_checks(report, size, opts.theory, rng, opts.per_stratum, opts.seed, stated_mismatch)
        fiber_count_checks(report, size, rng, opts.theory)
        if size.free and size.in_hypotheses:
            m2 = implicit.get(size)
            conjugate_checks(report, size, opts.seed, None if m2 is None else m2.conjugate_on_closure, opts.theory)
    return stated_mismatch


def _new_report(opts: Options) -> Report:
    return Report(
        "Theorem 3.4: geometry of one lightning self-attention layer",
        summary=(
            "Each check tests one claim on one size (d, d', a) of one layer, a = d when A is free. 'Macaulay2' "
            "checks use the implicit equations of the closure; the others are exact certificates from the "
            "parametrization (see ag_attention._exact.onelayer; the mathematics: docs/math/geometry.md). GF(p) ranks are certified lower bounds; rank drops "
            f"are exact ranks over QQ. Predictions: {opts.theory.name}."
        ),
        meta={"seed": opts.seed, "prime": 2**31 - 1, "m2_sizes": len(opts.m2_grid) if opts.use_m2 else 0,
              "pointwise_sizes": len(opts.point_grid)},
        details_csv="checks.csv",
    )


def _steps(opts: Options) -> int:
    """How many items announce themselves: Macaulay2 sizes, equation sizes, pointwise sizes, the picture."""
    return ((len(opts.m2_grid) if opts.use_m2 else 0) + len(opts.equation_grid) + len(opts.point_grid)
            + (1 if opts.picture and opts.out is not None else 0))


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
    implicit: dict[Size, M2Outcome] = {}
    if opts.use_m2 and opts.m2_grid:
        timer.start()
        implicit = _run_m2(report, opts, say)
        timer.stop("macaulay2")
    report.engines["macaulay2"] = next((m2.m2_version for m2 in implicit.values()), None)
    if opts.equation_grid:
        timer.start()
        equation_checks(
            report, opts.equation_grid,
            singular_rule=lambda d, e, a, orbit: opts.theory.singular(Size(d, e, a), features(orbit.A, orbit.V)),
            dimension=lambda d, e, a: opts.theory.dimension(Size(d, e, a)),
            seed=opts.seed, say=say,
        )
        timer.stop("equations")
    timer.start()
    stated_mismatch = _run_pointwise(report, opts, implicit, say)
    timer.stop("pointwise")
    timer.start()
    dimension_checks(report, opts.point_grid, opts.theory, opts.seed)
    timer.stop("dimensions")
    stated_rule_findings(report, stated_mismatch)
    excluded_size_findings(report, implicit)
    theorem_verdicts(report, opts.theory)
    if opts.picture and opts.out is not None:
        timer.start()
        from ..figure1 import render_figure1

        say("picture")
        path = render_figure1(Path(opts.out) / "figure1.png", seed=opts.seed)
        report.meta["picture"] = path.name
        report.meta["figures"] = [path.with_suffix("." + ext).name for ext in FIGURE_FORMATS]
        timer.stop("picture")
    report.meta["seconds_by_part"] = {k: round(v, 1) for k, v in timer.seconds.items()}
    return report
