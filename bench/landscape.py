"""The loss landscape's figures (issue 22), side by side: prints; asserts nothing.

    python bench/landscape.py [--quick] [--out DIR]

Runs ``reproduce_landscape`` (the full plan: every size of ``FULL``, 300 s per count) and prints

* each ED degree with the seconds of the count in the weights (msolve, two primes) beside the seconds of the
  implicit route (Macaulay2's closure ideal and msolve) where it runs: no other tool computes these, so the
  two routes are what stands side by side;
* the targets: the generic ED degree of every size within 5 minutes and the largest reached; the sizes where
  both routes finish and agree (target >= 5); the seconds of the 100 data sets' critical points (target
  < 600 s in all).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ag_attention._reproduce import landscape  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    report = landscape.reproduce_landscape(args.out, quick=args.quick)
    (table,) = [t for t in report.tables if t.title == "ED degrees of one layer's closure"]
    cols = table.columns
    print(f"{os.cpu_count()} cores; plan {'quick' if args.quick else 'full'}; {time.perf_counter() - t0:.0f} s in all")
    print(f"{'(d,d,a)':9} {'t':>2} {'metric':10} {'ED count':>9} {'s':>7} {'ED implicit':>12} {'s':>7}  not finished")
    for row in table.rows:
        r = dict(zip(cols, row))
        show = lambda v: "-" if v is None else str(v)  # noqa: E731
        print(f"{row[0]:9} {r['t']:>2} {r['metric']:10} {show(r['ED (count)']):>9} "
              f"{show(r['count s']):>7} {show(r['ED (implicit)']):>12} {show(r['implicit s']):>7}  "
              f"{r['not finished'] or ''}")
    generic = [row for row in table.rows if row[2] == "generic"]
    reached = [row for row in generic if row[3] is not None]
    print(f"generic ED by counting: {len(reached)} of {len(generic)} sizes within the time limit; largest "
          f"{max((row[3] for row in reached), default=None)} at {max(reached, key=lambda r: r[3])[0] if reached else '-'}")
    both = {row[0] for row in table.rows if row[3] is not None and row[4] is not None}
    agree = {row[0] for row in table.rows if row[3] is not None and row[4] is not None and row[3] == row[4]}
    print(f"count and implicit route: {len(agree)} sizes agree on every metric both finished, of {len(both)} "
          f"where both finished; two primes agree on "
          f"{sum(1 for c in report.checks if c.claim.startswith('two primes') and c.passed)} of "
          f"{sum(1 for c in report.checks if c.claim.startswith('two primes'))} counts")
    print(f"critical points of {report.meta['data_sets']} data sets: {report.meta['seconds_data_sets']} s "
          f"(with gradient descent: see the report); report passed: {report.passed}")
    for f in report.findings:
        print("  -", f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
