"""ED degrees of other polynomial models through the general API (issue 38), beside what they replace.

Each row: :func:`ag_attention.model_ed_degree` on a :class:`~ag_attention.PolynomialModel` (Euclidean and generic
metric), its route, fiber degree and seconds; beside it the reference: the layer's own :func:`ag_attention.ed_degree`
for ``from_layer`` rows (what the general API replaces), and for the rank-one deep linear networks the generic ED
degree of the Segre product ``P^(a-1) x P^(b-1)`` from Draisma, Horobeţ, Ottaviani, Sturmfels, Thomas (2016,
Thm. 5.8, the Chern class formula; ``ag_attention._landscape.formula.segre_product_ed_degree``) and ``min(a, b)``
(Eckart–Young) for the Euclidean metric.

    python bench/models.py [--quick] [--timeout 300]
"""

from __future__ import annotations

import argparse
import time

from ag_attention import Architecture, PolynomialModel, ed_degree, model_ed_degree
from ag_attention._landscape.formula import segre_product_ed_degree


def segre_generic_ed(a: int, b: int) -> int:
    """The generic ED degree of the Segre variety ``P^(a-1) x P^(b-1)`` (the package's Chern class formula)."""
    return segre_product_ed_degree((a - 1, b - 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the rows under 10 s")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    rows: list[tuple[str, PolynomialModel, str]] = []
    for a, b in ((2, 2), (2, 3), (3, 3), (3, 4)) + (() if args.quick else ((4, 4),)):
        rows.append(
            (
                f"deep_linear([{a},1,{b}])",
                PolynomialModel.deep_linear([a, 1, b]),
                f"Eckart-Young {min(a, b)}, Segre formula {segre_generic_ed(a, b)}",
            )
        )
    rows.append(("deep_linear([2,1,2,2])", PolynomialModel.deep_linear([2, 1, 2, 2]), "Eckart-Young 2, Segre 6"))
    if not args.quick:
        rows.append(
            ("deep_linear([3,2,3])", PolynomialModel.deep_linear([3, 2, 3]), "Eckart-Young 3; dual of rank 1: 39")
        )
    for ks in ((2, 2), (3, 3), (2, 2, 2)) + (() if args.quick else ((4, 4), (2, 2, 3))):
        rows.append(
            (f"linear_convolutional({list(ks)})", PolynomialModel.linear_convolutional(ks), "fills its space over C: 1")
        )
    layers = [(2, 1, None), (2, 1, 1)] + ([] if args.quick else [(2, 2, None), (3, 1, 1)])
    print(f"{'model':<34} {'dim':>4} {'fiber':>6} {'Euclid.':>8} {'generic':>8} {'s':>7}   reference")
    for name, M, ref in rows:
        _row(name, M, ref, args.timeout)
    for d, e, a in layers:
        arch = Architecture.single_layer(d, e, a, tokens=2)
        t0 = time.perf_counter()
        theirs = [
            ed_degree(
                arch,
                metric=m,
                method="count" if (d, e, a) != (3, 1, 1) or m == "euclidean" else "auto",
                timeout=args.timeout,
            ).ed_degree
            for m in ("euclidean", "generic")
        ]
        ref = f"ed_degree (the layer's own): {theirs[0]}, {theirs[1]} in {time.perf_counter() - t0:.1f} s"
        _row(f"from_layer(({d},{e},{a or d}))", PolynomialModel.from_layer(arch), ref, args.timeout)


def _row(name: str, M: PolynomialModel, ref: str, timeout: float) -> None:
    t0 = time.perf_counter()
    got = [model_ed_degree(M, metric=m, timeout=timeout) for m in ("euclidean", "generic")]
    cells = [str(r.ed_degree) if r.final else "n.d." for r in got]
    fiber = got[0].fiber_degree if got[0].fiber_degree is not None else "-"
    print(
        f"{name:<34} {got[0].dimension!s:>4} {fiber!s:>6} {cells[0]:>8} {cells[1]:>8} "
        f"{time.perf_counter() - t0:>7.1f}   {ref}",
        flush=True,
    )


if __name__ == "__main__":
    main()
