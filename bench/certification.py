"""Issue 13's certification report, timed: the fraction certified per variant, and how long it takes.

Runs :func:`ag_attention._reproduce.certification.reproduce_certification` on the
standard grid (``sweeps/certification.toml``: 4,812 networks) or, with
``--wide``, also on ``sweeps/certification-wide.toml`` (41,220 networks), and
prints per variant how many are certified, the bounds that closed them, the
number of open cases, the independent rechecks and the wall-clock and CPU time
(asserts nothing; the tests check correctness).

    python bench/certification.py [--wide] [--out DIR] [--samples N]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

from ag_attention._progress import quiet
from ag_attention._reproduce.certification import reproduce_certification


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wide", action="store_true", help="also the wide grid (widths <= 4, heads <= 3)")
    ap.add_argument("--out", default=None, help="keep the report here (default: a temporary directory)")
    ap.add_argument("--samples", type=int, default=100, help="certified rows rechecked independently")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-certification-") as tmp:
        t0, c0 = time.perf_counter(), _cpu()
        with quiet():
            report = reproduce_certification(args.out or tmp, mode="wide" if args.wide else "standard",
                                             samples=args.samples)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
    for table in report.tables[:2]:
        print(f"{table.title}:")
        for row in table.rows:
            print("  " + " | ".join(map(str, row)))
    print(f"open cases: {len(report.tables[2].rows)}")
    for finding in report.findings:
        print(f"finding: {finding}")
    for check in report.checks:
        print(f"check: {check.claim} [{check.case}]: {check.observed} / {check.expected}, "
              f"{'pass' if check.passed else 'FAIL'}, {check.seconds:.1f} s")
    print(f"certification report ({'wide' if args.wide else 'standard'}): {wall:.1f} s wall, {cpu:.1f} s CPU")


if __name__ == "__main__":
    main()
