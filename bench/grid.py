"""Exhaustive grids behind the README's findings, as sweeps: prints their counts and times (asserts nothing).

1. ``sweeps/findings-t2.toml``: t = 2, 2 and 3 layers, widths 1..4, ranks
   1..d_{i-1}: how often Cor. 3.8 applies (with the hypotheses found here)
   and agrees; how often the paper's hypotheses hold and the formula is
   proven wrong; how often the dimension is Cor. 3.8 on the effective widths
   when their ranks before the last layer are at least 2; how many results
   are certified exact.
2. ``sweeps/findings-t1.toml``: t = 1, 1 to 3 layers, widths 1..4: how many
   are certified exact by the proven one-token upper bound.

Both run with :func:`ag_attention._sweep.sweep` on every local core (the
time printed is the sweep's wall-clock time, with the CPU seconds of this
process and its worker processes).  ``--dask`` runs the t = 2 grid
again on a local Dask cluster (a scheduler and two single-threaded worker
processes on 127.0.0.1, started as subprocesses) and checks that its rows
equal the local ones (all columns but ``seconds``).

    python bench/grid.py [--out DIR] [--workers N] [--dask] [--only t2|t1]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from ag_attention._m2.cluster import LocalDaskCluster
from ag_attention._progress import quiet
from ag_attention._sweep import sweep
from ag_attention._sweep.run import SweepResult, local_workers

GRIDS = Path(__file__).resolve().parents[1] / "sweeps"


def _same_rows(a: SweepResult, b: SweepResult) -> tuple[bool, int]:
    """Whether two sweeps' rows are equal but for ``seconds``; how many rows differ."""
    strip = [[{k: v for k, v in row.items() if k != "seconds"} for row in r.rows()] for r in (a, b)]
    differ = sum(x != y for x, y in zip(*strip)) + abs(len(strip[0]) - len(strip[1]))
    return differ == 0, differ


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the local worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed(run: SweepResult, cpu: float) -> str:
    return f"{run.seconds:.1f} s ({_cpu() - cpu:.1f} CPU s in all; load average {os.getloadavg()[0]:.1f} at the end)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="directory for the sweeps' results (default: a temporary one)")
    parser.add_argument("--workers", type=int, default=None, help="local processes (default: all cores)")
    parser.add_argument("--dask", action="store_true", help="also run the t = 2 grid on a local Dask cluster")
    parser.add_argument("--only", choices=["t2", "t1"], default=None, help="run one grid only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ag-attention-grid-") as tmp, quiet():
        out = Path(args.out or tmp)
        cores = args.workers or local_workers()
        load = os.getloadavg()[0]
        print(f"{cores} local worker processes; load average {load:.1f} before starting")
        if args.only in (None, "t2"):
            cpu = _cpu()
            r = sweep(GRIDS / "findings-t2.toml", out / "findings-t2", workers=args.workers, overwrite=True)
            t = r.summary["total"]
            print(
                f"t = 2, L = 2, 3, widths 1..4: {t['rows']} architectures, {t['certified']} certified exact, "
                f"{_timed(r, cpu)}"
            )
            print(
                f"  Cor. 3.8 with the hypotheses found here: applies to {t['formula_applies']}, "
                f"exact and equal on {t['applies_agrees']}"
            )
            print(
                f"  the paper's hypotheses hold on {t['paper_hypotheses_hold']}; "
                f"the formula is proven wrong on {t['paper_proven_wrong']} of them"
            )
            print(
                f"  effective ranks before the last layer >= 2: {t['effective_eligible']}, "
                f"dimension = Cor. 3.8 on the effective widths: {t['effective_agrees']}"
            )
            if args.dask:
                t0 = time.perf_counter()
                with LocalDaskCluster(workers=2, threads=1) as address:
                    started = time.perf_counter() - t0
                    d = sweep(
                        GRIDS / "findings-t2.toml",
                        out / "findings-t2-dask",
                        scheduler=address,
                        workers=2,
                        overwrite=True,
                    )
                same, differ = _same_rows(r, d)
                print(
                    f"  on a local Dask cluster ({address}, 2 worker processes x 1 thread): {d.seconds:.1f} s "
                    f"(+ {started:.1f} s to start it); rows {'identical' if same else f'DIFFER ({differ})'} "
                    "(all columns but seconds)"
                )
        if args.only in (None, "t1"):
            cpu = _cpu()
            r = sweep(GRIDS / "findings-t1.toml", out / "findings-t1", workers=args.workers, overwrite=True)
            t = r.summary["total"]
            print(
                f"t = 1, L = 1..3, widths 1..4: {t['rows']} architectures, {t['certified']} certified exact, "
                f"{_timed(r, cpu)}"
            )
        if args.out:
            print(f"results, summaries and plots in {out}")


if __name__ == "__main__":
    main()
