"""Every single-layer size whose degree is below a bound, counted by msolve: the count against the formula.

The issue's target: the degree by counting of every single-layer size whose
degree is below 2,000, each in under 2 minutes.  For each size ``(d, d', a)``
with ``d, d' <= 6`` and ``t`` in {1, 2} (``d = 1`` is a linear space, left
out) whose formula degree is below ``--below``, runs
``degree(arch, method="count", cache=False)`` (two msolve runs: two primes,
two random sections) under ``--timeout`` seconds per run, and prints the count,
the formula, and the seconds of both runs.

    python bench/degree_counts.py [--below 2000] [--timeout 120] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import time

from ag_attention import Architecture
from ag_attention._algebra.closure_degree import degree
from ag_attention._algebra.degree import degree_formula
from ag_attention._algebra.msolve import find_msolve, msolve_version
from ag_attention._errors import MSolveTimeoutError


def sizes(below: int) -> list[tuple[int, int, int, int, int]]:
    out = []
    for d in range(2, 7):
        for e in range(1, 7):
            for a in range(1, d + 1):
                for t in (1, 2):
                    f = degree_formula(d, e, a, tokens=t)
                    if f.degree is not None and f.degree < below:
                        out.append((f.count or f.degree, d, e, a, t))
    return [s[1:] + (s[0],) for s in sorted(set(out))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--below", type=int, default=2000)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    print(
        f"msolve {msolve_version(find_msolve())}; sizes with formula degree < {args.below}; "
        f"timeout {args.timeout:.0f} s per msolve run"
    )
    print(f"{'d,dp,a,t':>10} {'formula':>8} {'count/fiber':>11} {'run 1 s':>8} {'run 2 s':>8} {'total s':>8}  agree")
    rows = []
    for d, e, a, t, _ in sizes(args.below):
        arch = Architecture((d, e), (a,), tokens=t)
        formula = degree_formula(d, e, a, tokens=t).degree
        t0 = time.perf_counter()
        try:
            r = degree(arch, method="count", timeout=args.timeout, cache=False)
            row = {
                "size": [d, e, a, t],
                "formula": formula,
                "count": r.degree,
                "runs": [round(c.seconds, 2) for c in r.counts],
                "seconds": round(time.perf_counter() - t0, 2),
            }
        except MSolveTimeoutError:
            row = {"size": [d, e, a, t], "formula": formula, "count": None, "runs": [], "seconds": None}
        rows.append(row)
        runs = row["runs"] + [None, None]
        print(
            f"{f'{d},{e},{a},{t}':>10} {formula:>8} {str(row['count'] or 'timeout'):>11} "
            f"{str(runs[0]):>8} {str(runs[1]):>8} {str(row['seconds']):>8}  "
            f"{'yes' if row['count'] == formula else 'NO' if row['count'] else '-'}",
            flush=True,
        )
    done = [r for r in rows if r["count"] is not None]
    print(
        f"{len(done)} of {len(rows)} sizes counted; all agree with the formula: "
        f"{all(r['count'] == r['formula'] for r in done)}; slowest size: "
        f"{max((r['seconds'], r['size']) for r in done) if done else None}"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
