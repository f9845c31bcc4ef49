"""Benchmark: the whole Figure 3 computation (16 architectures), timed, and the figure printed.

L = 2, t = 3, a_i = 2, d_i = delta for delta = 3..10, N = 250 input sequences;
normalized (float64 rank at the largest singular-value gap, certified by a
lower bound by ball arithmetic and an upper bound by the symmetry families 1
and 2) and lightning (exact over GF(p)).  Target on the 2-core development
machine: under 10 s in total, all 16 certified and equal to Eq. 16 / Cor. 3.8.

    python bench/figure3.py [OUT]     # OUT: also draw the figure to OUT/figure3.png (.pdf, .svg)
    python bench/figure3.py --grids   # certify grids of single layers (Thm. 3.9) and deep networks (Eq. 16)

``--grids``: every single layer with d <= 5, d' <= 4, a <= 5, t <= 3 (300), and
deep networks with widths <= 6 and ranks <= 3: all of L = 2, t = 3 (1944) and
600 drawn (seeded) from L = 2, t = 2 and L = 3, t = 2, 3; prints the time and
every case where the lower bound by ball arithmetic does not meet the upper
bound by the symmetry families 1 and 2, with both numbers.
"""

from __future__ import annotations

import itertools
import os
import random
import sys
import time
from pathlib import Path

from ag_attention import Architecture
from ag_attention._models.formulas import expected_dimension
from ag_attention._numeric import certify_dimension
from ag_attention._reproduce.figure3 import figure3_rows, plot_figure3


def grid_architectures() -> dict[str, list[Architecture]]:
    single = [
        Architecture((d, e), (a,), tokens=t, normalized=True)
        for d, e, a, t in itertools.product(range(1, 6), range(1, 5), range(1, 6), (1, 2, 3))
    ]
    deep = [
        Architecture(w, r, tokens=t, normalized=True)
        for L in (2, 3)
        for t in (2, 3)
        for w in itertools.product(range(1, 7), repeat=L + 1)
        for r in itertools.product(range(1, 4), repeat=L)
    ]
    full = [a for a in deep if a.depth == 2 and a.tokens == 3]
    rest = [a for a in deep if not (a.depth == 2 and a.tokens == 3)]
    return {"single layers (Thm. 3.9)": single, "deep networks (Eq. 16)": full + random.Random(0).sample(rest, 600)}


def grids() -> None:
    for name, archs in grid_architectures().items():
        t0 = time.perf_counter()
        open_cases = []
        agree = applies = 0
        for arch in archs:
            c = certify_dimension(arch)
            e = expected_dimension(arch)
            applies += e.applies
            agree += e.applies and c.certified and c.lower == e.value
            if not c.certified:
                hyp = "applies" if e.applies else "fails: " + "; ".join(e.failed_hypotheses)
                open_cases.append(
                    f"  {arch.describe()}: lower {c.lower}, upper {c.upper} ({e.formula} gives {e.value}, {hyp})"
                )
        total = time.perf_counter() - t0
        print(
            f"{name}: {len(archs)} networks in {total:.1f} s, {len(archs) - len(open_cases)} certified; "
            f"formula hypotheses hold for {applies}, certified equal to it for {agree}; "
            f"{len(open_cases)} where the bounds do not meet:"
        )
        print("\n".join(open_cases))


def main() -> None:
    if sys.argv[1:] == ["--grids"]:
        grids()
        return
    print(f"Figure 3 benchmark, {os.cpu_count()} CPUs")
    t0 = time.perf_counter()
    rows = figure3_rows()
    total = time.perf_counter() - t0
    print(
        f"{'delta':>5} {'attention':<11} {'estimated':>9} {'expected':>8} {'gap':>6} {'lower':>6} {'upper':>6} "
        f"{'certified':>9} {'seconds':>8}"
    )
    right = certified = 0
    for r in rows:
        ok = r["estimated"] == r["expected"]
        right += ok
        certified += bool(r["certified"])
        gap = "exact" if r["gap"] is None else f"{r['gap']:.1f}"
        print(
            f"{r['delta']:>5} {'normalized' if r['normalized'] else 'lightning':<11} {str(r['estimated']):>9} "
            f"{r['expected']:>8} {gap:>6} {str(r['lower']):>6} {str(r['upper']):>6} {str(r['certified']):>9} "
            f"{r['seconds']:>8.3f}{'' if ok else '  WRONG'}"
        )
    print(
        f"total {total:.2f} s for {len(rows)} architectures, {right}/{len(rows)} equal to Eq. 16 / Cor. 3.8, "
        f"{certified}/{len(rows)} certified"
    )
    if len(sys.argv) > 1:
        out = Path(sys.argv[1])
        out.mkdir(parents=True, exist_ok=True)
        print("figure:", plot_figure3(rows, out / "figure3.png"))


if __name__ == "__main__":
    main()
