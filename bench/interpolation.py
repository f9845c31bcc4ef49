"""Equations by interpolation, timed here and at an earlier commit, side by side (prints; asserts nothing).

For each size ``(d, d', a, k)`` (default: the sizes of the Theorem 3.4 report
past Macaulay2's kernel, and ``(4,1,4)`` of ``--full``) this times
``low_degree_equations(d, d', a, max_degree=k)`` (all minimal generators of
degree ``<= k``: three primes, lifted to QQ, verified exactly) in a fresh
process of this checkout and in one of ``--before`` (default ``da979f6``, the
last commit that computed every multidegree instead of one per orbit of the
index permutations), checked out into a temporary worktree.  Both must find
the same number of generators per degree.

    python bench/interpolation.py [--before COMMIT] [--sizes "3,2,3,4;2,4,2,4"]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = [(3, 2, 3, 4), (3, 2, 2, 4), (2, 4, 2, 4), (4, 1, 4, 4)]
WORKER = (
    "import json, sys, time\n"
    "from ag_attention._algebra.interpolation import low_degree_equations\n"
    "d, e, a, k = map(int, sys.argv[1:5])\n"
    "t0 = time.perf_counter()\n"
    "r = low_degree_equations(d, e, a, max_degree=k)\n"
    "print(json.dumps({'seconds': time.perf_counter() - t0, 'counts': r.generator_count, 'verified': r.verified}))\n"
)


def timed(tree: Path, size: tuple[int, ...]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    r = subprocess.run(
        [sys.executable, "-c", WORKER, *map(str, size)], cwd=tree, env=env, capture_output=True, text=True
    )
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="da979f6")
    ap.add_argument("--sizes", default=None, help="d,d',a,k;... (default: the report's sizes)")
    args = ap.parse_args()
    sizes = SIZES if not args.sizes else [tuple(map(int, s.split(","))) for s in args.sizes.split(";")]
    with tempfile.TemporaryDirectory(prefix="bench-interp-") as tmp:
        old = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old), args.before], check=True)
        try:
            print(f"low_degree_equations: this checkout against {args.before} (fresh process each)")
            head = "(d,d',a), degree <="
            print(f"  {head:<22} {'generators':<22} {'now s':>8} {'before s':>9} {'speed-up':>9}")
            for size in sizes:
                now, before = timed(ROOT, size), timed(old, size)
                if "error" in now or "error" in before:
                    print(
                        f"  {str(size[:3]) + ', ' + str(size[3]):<22} now: {now.get('error', 'ok')}; "
                        f"before: {before.get('error', 'ok')}"
                    )
                    continue
                counts = "+".join(str(now["counts"][D]) for D in sorted(now["counts"], key=int))
                same = "" if now["counts"] == before["counts"] else "  (counts DIFFER)"
                print(
                    f"  {str(size[:3]) + ', ' + str(size[3]):<22} {counts:<22} {now['seconds']:>8.1f} "
                    f"{before['seconds']:>9.1f} {before['seconds'] / now['seconds']:>8.1f}x{same}"
                )
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=False)


if __name__ == "__main__":
    main()
