"""The main job, timed: ``reproduce theorem-3.4`` from an empty Macaulay2 cache, as it runs now and as it ran before.

Side by side, each in a fresh process with its own empty cache
(``AG_ATTENTION_CACHE_DIR``):

* ``now``: the default run: the Macaulay2 jobs in persistent sessions,
  :func:`ag_attention._m2.session.job_slots` of them at once, beside the
  equations and pointwise checks;
* ``one job at a time``: every Macaulay2 job a fresh process
  (``AG_ATTENTION_M2_SESSIONS=0``), one at a time (``job_slots`` forced to 1),
  the Python parts after them: the schedule of before (the interpolation is
  the same fast one in both: it has no switch).

Prints the job's seconds (``report.json``'s ``meta.seconds``, what issue 20's
target of 180 s is about), the seconds by part, the wall time of the whole
command (interpreter start and writing included) and whether both reports hold
the same checks.  Asserts nothing.

    python bench/reproduce.py [--only now] [--keep DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEQUENTIAL = (
    "import sys\n"
    "import ag_attention._m2.session as s\n"
    "s.job_slots = lambda memory: 1\n"
    "from ag_attention._cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
NOW = "import sys\nfrom ag_attention._cli import main\nsys.exit(main(sys.argv[1:]))\n"


def run(name: str, code: str, env: dict[str, str], base: Path) -> dict:
    out, cache = base / name / "out", base / name / "cache"
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-c", code, "reproduce", "theorem-3.4", "--out", str(out), "--quiet"],
        env={**os.environ, **env, "AG_ATTENTION_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        print(f"{name}: exit {r.returncode}\n{r.stderr[-2000:]}")
    report = json.loads((out / "report.json").read_text())
    with open(out / "checks.csv") as fh:
        rows = [
            {k: re.sub(r"\(\d+\.\d+ s\)", "(s)", v) for k, v in row.items() if k != "seconds"}
            for row in csv.DictReader(fh)
        ]
    return {
        "name": name,
        "wall": wall,
        "seconds": report["meta"]["seconds"],
        "passed": report["passed"],
        "checks": len(report["checks"]),
        "parts": report["meta"].get("seconds_by_part", {}),
        "slots": report["meta"].get("m2_jobs_at_once"),
        "rows": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["now", "sequential"], default=None)
    ap.add_argument("--keep", default=None, help="keep the outputs and caches in this directory")
    args = ap.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-reproduce-"))
    runs = []
    if args.only in (None, "now"):
        runs.append(run("now", NOW, {}, base))
    if args.only in (None, "sequential"):
        runs.append(run("one job at a time", SEQUENTIAL, {"AG_ATTENTION_M2_SESSIONS": "0"}, base))
    print(f"reproduce theorem-3.4, empty Macaulay2 cache, {os.cpu_count()} cores")
    print(f"  {'schedule':<20} {'job s':>7} {'wall s':>7} {'checks':>7}  parts (s)")
    for r in runs:
        parts = ", ".join(f"{k} {v}" for k, v in r["parts"].items())
        print(
            f"  {r['name']:<20} {r['seconds']:>7.1f} {r['wall']:>7.1f} {r['checks']:>7}  {parts}"
            f"  [{'PASSED' if r['passed'] else 'FAILED'}, M2 jobs at once: {r['slots']}]"
        )
    if len(runs) == 2:
        same = runs[0]["rows"] == runs[1]["rows"]
        print(f"  same checks, in the same order (but their seconds): {same}")
    if not args.keep:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
