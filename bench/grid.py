"""Exhaustive grids behind the README's findings (prints its counts; asserts nothing).

1. t = 2, 2 and 3 layers, widths 1..4, ranks 1..d_{i-1}: how often Cor. 3.8
   applies (with the hypotheses found here) and agrees; how often the
   dimension is Cor. 3.8 on the effective widths when their ranks before the
   last layer are at least 2; how many results are certified exact.
2. t = 1, 1 to 3 layers, widths 1..4: how many are certified exact by the
   proven one-token upper bound.

    python bench/grid.py
"""

from __future__ import annotations

import itertools
import time

from ag_attention import Architecture, dimension
from ag_attention.models.formulas import cor38, effective_architecture


def grid(depths, tokens):
    for L in depths:
        for widths in itertools.product(range(1, 5), repeat=L + 1):
            for ranks in itertools.product(*[range(1, w + 1) for w in widths[:-1]]):
                yield Architecture(widths, ranks, tokens=tokens)


def main() -> None:
    t0 = time.perf_counter()
    n = certified = applies = agrees = eff = eff_agrees = paper = paper_proven_wrong = 0
    for arch in grid((2, 3), tokens=2):
        r = dimension(arch)
        n += 1
        certified += r.certified
        if r.expected.applies:
            applies += 1
            agrees += r.dimension == r.expected.value and r.certified
        if r.expected.paper_hypotheses_hold:
            paper += 1
            paper_proven_wrong += r.agrees is False
        e = effective_architecture(arch)
        if all(a >= 2 for a in e.ranks[:-1]):
            eff += 1
            eff_agrees += r.dimension == cor38(e.widths, e.ranks) and r.certified
    print(f"t = 2, L = 2, 3, widths 1..4: {n} architectures, {certified} certified exact, {time.perf_counter() - t0:.0f} s")
    print(f"  Cor. 3.8 with the hypotheses found here: applies to {applies}, exact and equal on {agrees}")
    print(f"  the paper's hypotheses hold on {paper}; the formula is proven wrong on {paper_proven_wrong} of them")
    print(f"  effective ranks before the last layer >= 2: {eff}, dimension = Cor. 3.8 on the effective widths: {eff_agrees}")
    t0 = time.perf_counter()
    n = certified = 0
    for arch in grid((1, 2, 3), tokens=1):
        n += 1
        certified += dimension(arch).certified
    print(f"t = 1, L = 1..3, widths 1..4: {n} architectures, {certified} certified exact, {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
