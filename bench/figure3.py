"""Benchmark: the whole Figure 3 computation (16 architectures), timed, and the figure printed.

L = 2, t = 3, a_i = 2, d_i = delta for delta = 3..10, N = 250 input sequences;
normalized (float64 rank at the largest singular-value gap, certified by a
lower bound by ball arithmetic and an upper bound by the symmetry families 1
and 2) and lightning (exact over GF(p)).  Target on the 2-core development
machine: under 10 s in total, all 16 certified and equal to Eq. 16 / Cor. 3.8.

    python bench/figure3.py [OUT]     # OUT: also draw the figure to OUT/figure3.png (.pdf, .svg)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ag_attention.reproduce.figure3 import figure3_rows, plot_figure3


def main() -> None:
    print(f"Figure 3 benchmark, {os.cpu_count()} CPUs")
    t0 = time.perf_counter()
    rows = figure3_rows()
    total = time.perf_counter() - t0
    print(f"{'delta':>5} {'attention':<11} {'estimated':>9} {'expected':>8} {'gap':>6} {'lower':>6} {'upper':>6} "
          f"{'certified':>9} {'seconds':>8}")
    right = certified = 0
    for r in rows:
        ok = r["estimated"] == r["expected"]
        right += ok
        certified += bool(r["certified"])
        gap = "exact" if r["gap"] is None else f"{r['gap']:.1f}"
        print(f"{r['delta']:>5} {'normalized' if r['normalized'] else 'lightning':<11} {str(r['estimated']):>9} "
              f"{r['expected']:>8} {gap:>6} {str(r['lower']):>6} {str(r['upper']):>6} {str(r['certified']):>9} "
              f"{r['seconds']:>8.3f}{'' if ok else '  WRONG'}")
    print(f"total {total:.2f} s for {len(rows)} architectures, {right}/{len(rows)} equal to Eq. 16 / Cor. 3.8, "
          f"{certified}/{len(rows)} certified")
    if len(sys.argv) > 1:
        out = Path(sys.argv[1])
        out.mkdir(parents=True, exist_ok=True)
        print("figure:", plot_figure3(rows, out / "figure3.png"))


if __name__ == "__main__":
    main()
