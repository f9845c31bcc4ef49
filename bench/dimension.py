"""Benchmark of the exact dimension engine (prints its figures; asserts correctness only).

1. The paper's Figure 3 architectures without softmax: L = 2, t = 3, a_i = 2,
   d_i = delta for delta = 3..10, N = 250 input sequences.  Reported once with
   the default rows (k random output combinations per sample) and once with
   all t d_L rows per sample (the plain Jacobian of the paper's method).
2. Networks with thousands of parameters: seconds split into Jacobian
   assembly (forward + reverse pass over GF(p)), rank (FLINT), and the
   symmetry bound (tangent matrix and its rank).

Targets on the 2-core development machine: sweep < 5 s; >= 4,000 parameters
certified in < 60 s; assembly no slower than the rank it feeds.

    python bench/dimension.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from ag_attention import Architecture, dimension
from ag_attention._exact import linalg

LARGE = [
    ((24, 24, 24, 24), (8, 8, 8)),
    ((64, 16, 64), (8, 8)),
    ((32, 32, 32), (16, 16)),
    ((40, 40, 40), (8, 8)),
]


def figure3(full_rows: bool) -> float:
    label = "all t*d_L rows per sample" if full_rows else "k output combinations per sample (default)"
    print(f"\nFigure 3 without softmax, N = 250, {label}")
    print(f"{'delta':>5} {'P':>5} {'rows':>6} {'dim':>5} {'Cor.3.8':>8} {'certified':>9} {'seconds':>8}")
    t0 = time.perf_counter()
    for delta in range(3, 11):
        r = dimension(Architecture((delta,) * 3, (2, 2), tokens=3), samples=250, full_rows=full_rows)
        assert r.dimension == r.expected.value and r.certified, r
        print(
            f"{delta:>5} {r.parameters:>5} {r.main.rows:>6} {r.dimension:>5} {r.expected.value:>8} "
            f"{str(r.certified):>9} {r.seconds:>8.3f}"
        )
    total = time.perf_counter() - t0
    print(f"total {total:.2f} s for 8 architectures (8/8 equal to Cor. 3.8, all certified)")
    return total


def large(quick: bool) -> None:
    print("\nLarge networks (t = 3, default sampling)")
    print(
        f"{'architecture':<34} {'P':>5} {'rows':>5} {'dim':>5} {'cert':>5} "
        f"{'assembly':>9} {'rank':>7} {'symm.':>7} {'total':>7}"
    )
    for widths, ranks in LARGE[:2] if quick else LARGE:
        arch = Architecture(widths, ranks, tokens=3)
        r = dimension(arch)
        assert r.dimension == r.expected.value and r.certified, r
        m = r.main
        print(
            f"{arch.describe():<34} {r.parameters:>5} {m.rows:>5} {r.dimension:>5} {str(r.certified):>5} "
            f"{m.assembly_seconds:>8.2f}s {m.rank_seconds:>6.2f}s {m.symmetry_seconds:>6.2f}s {r.seconds:>6.2f}s"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the two largest networks")
    args = ap.parse_args()
    print(
        f"ag-attention dimension benchmark: {platform.node()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, FLINT threads {linalg.set_threads()}, "
        f"direct FLINT copy {'on' if linalg.fastpath_available() else 'off'}"
    )
    figure3(full_rows=False)
    figure3(full_rows=True)
    large(args.quick)


if __name__ == "__main__":
    main()
