"""How many lightning dimensions are certified exact, per variant, and by which bound.

``reproduce_certification(out)`` sweeps ``sweeps/certification.toml`` (``L <= 3``,
widths ``<= 3``, every rank, ``t <= 3``; plain, two heads, skip connections) with
the sweep machinery (:func:`ag_attention.sweep`) into ``out/sweeps/NAME``;
``wide=True`` adds ``sweeps/certification-wide.toml`` (widths ``<= 4``, heads
``<= 3``, with and without skip), ``quick=True`` runs
``sweeps/certification-quick.toml`` instead (for tests).  The report gives

* the fraction certified per variant (plain, ``H`` heads, skip; ``t = 1`` apart),
* which upper bound closed each certified case (``symmetries``,
  ``effective-architecture`` or a bound of docs/math/bounds.md),
* every uncertified case with its lower and upper bound and why it is open,
* an independent check of a sample of certified values: the rank again over a
  second prime at another random point, and the float64 numerical rank
  (:func:`ag_attention.numerical_dimension`); any disagreement fails the report.

Files: ``report.md``, ``report.json``, ``certification.json`` (every row's key,
bounds and closing bound) beside ``sweeps/``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from .._checks import check_choice
from .._exact import DEFAULT_PRIME, SECOND_PRIME, dimension
from .._files import atomic_write
from .._numeric import numerical_dimension
from .._sweep import Spec, to_architecture
from .conjectures import Row, describe, sweep_grid
from .report import Check, Report, Table, written

__all__ = ["GRIDS", "variant_of", "reproduce_certification", "independent_check"]

#: the grids of each mode
GRIDS: dict[str, tuple[str, ...]] = {
    "quick": ("certification-quick.toml",),
    "standard": ("certification.toml",),
    "wide": ("certification.toml", "certification-wide.toml"),
}

#: the target of issue 13 on the standard grid
TARGET = 0.99


def variant_of(row: Row) -> str:
    """``plain``, ``H heads`` or ``skip`` (with ``H heads`` when ``H > 1``), and ``t = 1`` or ``t >= 2``."""
    kind = "skip" if row["skip"] else "plain"
    if row["heads"] > 1:
        kind = f"{row['heads']} heads" + (", skip" if row["skip"] else "")
    return f"{kind}, {'t = 1' if row['tokens'] == 1 else 't >= 2'}"


def independent_check(row: Row, seed: int) -> dict[str, Any]:
    """The certified value of ``row`` against a second prime (another point) and the float64 numerical rank."""

    arch = to_architecture(Spec.from_row(row))
    prime = SECOND_PRIME if row["prime"] != SECOND_PRIME else DEFAULT_PRIME
    second = dimension(arch, prime=prime, seed=seed + 1, recheck=False, threads=1)
    numeric = numerical_dimension(arch, seed=seed + 2, raise_on_no_gap=False)
    return {
        "architecture": describe(row),
        "certified": row["dimension"],
        "second_prime": prime,
        "second_rank": second.dimension,
        "float64": numeric.dimension,
        "agrees": second.dimension == row["dimension"] and numeric.dimension in (row["dimension"], None),
    }


def _per_variant(rows: list[Row]) -> tuple[Table, dict[str, tuple[int, int]]]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    closers: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        v = variant_of(r)
        counts[v][1] += 1
        if r["certified"]:
            counts[v][0] += 1
            closers[v][r["bound"] or "?"] += 1
    table = Table(
        "Certified per variant",
        ["variant", "certified", "networks", "fraction", "closed by"],
        [
            [v, c, n, f"{c / n:.1%}", ", ".join(f"{k} {m}" for k, m in closers[v].most_common())]
            for v, (c, n) in sorted(counts.items())
        ],
        source=None,
    )
    return table, {v: (c, n) for v, (c, n) in counts.items()}


def _open_cases(rows: list[Row]) -> Table:
    return Table(
        "Uncertified cases",
        ["architecture", "lower", "upper", "why open"],
        [[describe(r), r["dimension"], r["upper_bound"], r["certificate"]] for r in rows if not r["certified"]],
        note="lower: the GF(p) rank (proven); upper: the smallest proven upper bound",
        source=None,
    )


def _check_sample(rows: list[Row], samples: int, seed: int, report: Report) -> list[dict[str, Any]]:
    """Recompute ``samples`` certified rows (evenly spaced over the grid) independently."""
    certified = [r for r in rows if r["certified"]]
    if not certified or samples <= 0:
        return []
    step = max(1, len(certified) // samples)
    t0 = time.perf_counter()
    results = [independent_check(r, seed) for r in certified[::step][:samples]]
    bad = [e for e in results if not e["agrees"]]
    silent = sum(e["float64"] is None for e in results)
    report.add(
        Check(
            "certified values agree with an independent computation",
            f"{len(results)} certified rows",
            "rank over a second prime at another point + float64 numerical rank",
            len(results),
            len(results) - len(bad),
            not bad,
            time.perf_counter() - t0,
            {"disagreements": bad, "float64_without_verdict": silent},
        )
    )
    report.findings.append(
        f"independent check of {len(results)} certified values: {len(results) - len(bad)} agree "
        f"(second prime: all ranks equal = {all(e['second_rank'] == e['certified'] for e in results)}; "
        f"float64: {len(results) - silent} with a clear gap, {silent} without a verdict)"
    )
    return results


def reproduce_certification(
    out: Path | str | None, *, mode: str = "standard", seed: int = 0, workers: int | None = None, samples: int = 100
) -> Report:
    """Sweep the certification grids and report what is certified, by which bound, and what is open."""
    check_choice(mode, "mode", GRIDS)
    report = Report(
        "Certification: which lightning dimensions are proven exact",
        summary=(
            "A dimension is certified when the GF(p) rank (a proven lower bound) meets a proven upper bound: "
            "the symmetry tangents, the effective architecture, or a bound of docs/math/bounds.md. "
            "Per variant: the fraction certified and the bounds that closed the cases; every open case "
            "with its bounds; a sample of certified values recomputed over a second prime and in float64."
        ),
        meta={"mode": mode, "seed": seed},
    )
    tmp = tempfile.TemporaryDirectory(prefix="ag-attention-certification-") if out is None else None
    base = Path(tmp.name if tmp is not None else str(out))
    base.mkdir(parents=True, exist_ok=True)
    try:
        grids, by_grid = _sweep_grids(mode, base, seed, workers, report)
        # the wide grid repeats the standard one's networks: one row per network
        rows = list({describe(r): r for grid_rows in by_grid.values() for r in grid_rows}.values())
        _tables_and_findings(report, rows, by_grid, grids)
        checked = _check_sample(rows, samples, seed, report)
        report.meta["grids"] = {
            k: f"{g['grid']} ({g['architectures']} architectures, {g['seconds']} s)" for k, g in grids.items()
        }
        if tmp is None:
            written(report, lambda: atomic_write(base / "certification.json", _rows_json(grids, checked, rows)))
            report.meta["rows"] = "certification.json"
            written(report, lambda: report.write(base))
    finally:
        if tmp is not None:
            tmp.cleanup()
    return report


def _sweep_grids(
    mode: str, base: Path, seed: int, workers: int | None, report: Report
) -> tuple[dict[str, dict[str, Any]], dict[str, list[Row]]]:
    """Sweep each grid of ``mode`` under ``base``: each grid's run and its rows (computed, not normalized)."""
    grids: dict[str, dict[str, Any]] = {}
    by_grid: dict[str, list[Row]] = {}
    for name in GRIDS[mode]:
        grids[name], rows = sweep_grid(
            name, base, seed=seed, workers=workers, report=report, case=name, who="the certification report runs"
        )
        by_grid[name] = [r for r in rows if r["error"] is None and not r["normalized"]]
    return grids, by_grid


def _tables_and_findings(
    report: Report, rows: list[Row], by_grid: dict[str, list[Row]], grids: dict[str, dict[str, Any]]
) -> None:
    """The tables (per variant, closing bounds, open cases), the share certified, and the standard grid's target."""
    table, counts = _per_variant(rows)
    report.tables.append(table)
    report.tables.append(
        Table(
            "Closing bounds",
            ["bound", "certified cases"],
            [[k, m] for k, m in Counter(r["bound"] for r in rows if r["certified"]).most_common()],
            source=None,
        )
    )
    report.tables.append(_open_cases(rows))
    certified = sum(c for c, _ in counts.values())
    report.findings.append(
        f"{certified} of {len(rows)} dimensions certified ({certified / max(len(rows), 1):.1%}); "
        + "; ".join(f"{v}: {c}/{n}" for v, (c, n) in sorted(counts.items()))
    )
    for name, grid_rows in by_grid.items():
        share = sum(r["certified"] for r in grid_rows) / max(len(grid_rows), 1)
        report.findings.append(
            f"sweeps/{name}: {share:.2%} certified ({len(grid_rows)} networks, {grids[name]['seconds']} s)"
        )
        if name == "certification.toml":
            report.add(
                Check(
                    f"at least {TARGET:.0%} certified on the standard grid",
                    name,
                    "certified / networks",
                    f">= {TARGET:.0%}",
                    f"{share:.2%}",
                    share >= TARGET,
                )
            )


def _rows_json(grids: dict[str, dict[str, Any]], checked: list[dict[str, Any]], rows: list[Row]) -> str:
    """certification.json: the grids' runs, the independent checks, every row's bounds and closing bound."""
    return (
        json.dumps(
            {
                "grids": grids,
                "independent_checks": checked,
                "rows": [
                    {
                        "architecture": describe(r),
                        "variant": variant_of(r),
                        "lower": r["dimension"],
                        "upper": r["upper_bound"],
                        "certified": r["certified"],
                        "bound": r["bound"],
                    }
                    for r in rows
                ],
            },
            indent=1,
        )
        + "\n"
    )
