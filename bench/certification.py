"""Issue 13's certification report, timed: the fraction certified per variant, and how long it takes.

Runs :func:`ag_attention._reproduce.certification.reproduce_certification` on the
standard grid (``sweeps/certification.toml``: 4,812 networks) or, with
``--wide``, also on ``sweeps/certification-wide.toml`` (41,220 networks), and
prints per variant how many are certified, the bounds that closed them, the
number of open cases, the independent rechecks and the wall-clock and CPU time
(asserts nothing; the tests check correctness).  Side by side, in the same
run: how many of the standard grid's ranks the upper bounds of before
docs/math/bounds.md certify (the symmetry tangents, the effective
architecture's symmetry tangents, the one-token bound), recomputed with
:func:`ag_attention.dimension` (its ``symmetry_bound`` and ``reduction``).

    python bench/certification.py [--wide] [--out DIR] [--samples N]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from ag_attention import dimension, upper_bounds
from ag_attention._progress import quiet
from ag_attention._reproduce.certification import reproduce_certification, variant_of
from ag_attention._sweep.grid import Spec, to_architecture
from ag_attention._sweep.store import read_rows


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _before(results: Path) -> tuple[dict[str, list[int]], float]:
    """Per variant ``[certified, networks]`` with only the upper bounds of before this stop, and the seconds."""
    counts: dict[str, list[int]] = {}
    t0 = time.perf_counter()
    for row in read_rows(results):
        arch = to_architecture(Spec.from_row(row))
        r = dimension(arch)
        old = [r.symmetry_bound] + ([r.reduction.symmetry_bound] if r.reduction is not None else [])
        old += [b.value for b in upper_bounds(arch) if b.name == "one-token"]
        c = counts.setdefault(variant_of(row), [0, 0])
        c[0] += r.dimension == min(old)
        c[1] += 1
    return counts, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wide", action="store_true", help="also the wide grid (widths <= 4, heads <= 3)")
    ap.add_argument("--out", default=None, help="keep the report here (default: a temporary directory)")
    ap.add_argument("--samples", type=int, default=100, help="certified rows rechecked independently")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-certification-") as tmp:
        t0, c0 = time.perf_counter(), _cpu()
        with quiet():
            report = reproduce_certification(
                args.out or tmp, mode="wide" if args.wide else "standard", samples=args.samples
            )
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        with quiet():
            before, before_seconds = _before(Path(args.out or tmp) / "sweeps" / "certification" / "results.parquet")
    for table in report.tables[:2]:
        print(f"{table.title}:")
        for row in table.rows:
            print("  " + " | ".join(map(str, row)))
    print(f"open cases: {len(report.tables[2].rows)}")
    for finding in report.findings:
        print(f"finding: {finding}")
    for check in report.checks:
        print(
            f"check: {check.claim} [{check.case}]: {check.observed} / {check.expected}, "
            f"{'pass' if check.passed else 'FAIL'}, {check.seconds:.1f} s"
        )
    print(f"certification report ({'wide' if args.wide else 'standard'}): {wall:.1f} s wall, {cpu:.1f} s CPU")
    print(
        f"side by side on sweeps/certification.toml, certified with the bounds of before / now "
        f"({before_seconds:.1f} s to recompute):"
    )
    now = {row[0]: row[1] for row in report.tables[0].rows}
    for v, (c, n) in sorted(before.items()):
        print(f"  {v}: {c} / {now.get(v, '?')} of {n}")
    total = sum(c for c, _ in before.values()), sum(n for _, n in before.values())
    print(f"  all: {total[0]} ({total[0] / total[1]:.1%}) / {sum(now.values())} of {total[1]}")


if __name__ == "__main__":
    main()
