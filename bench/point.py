"""The geometry at given weights, timed: issue 28's targets, side by side with raw FLINT on the same matrix.

For each size (default: issue 28's two targets, widths w,w,w, ranks a,a, 2
heads, t = 4):

* random float32 weights written to a ``.safetensors`` file (``__metadata__``
  tokens = 4) and read back (:meth:`ag_attention.Network.load`);
* the **estimate** :func:`ag_attention._point.estimate.estimate_point` prints
  before the work (what ``ag-attention point`` prints first);
* the **exact local rank** at those weights
  (:func:`ag_attention._point.geometry.local_rank`; targets: 6,144
  parameters in <= 20 s, 13,824 in <= 90 s);
* **raw FLINT on the same matrix**: the same Jacobian (same prime, samples
  and seeds), its rank by FLINT's ``nmod_mat`` LU (what the package used
  before), beside the BLAS route's rank of it (``--no-flint`` skips FLINT:
  4 to 5 minutes at 13,824);
* the whole report :func:`ag_attention.point_geometry` against the estimate
  (target: within a factor 2).

    python bench/point.py [--sizes 32:8,48:12] [--layers 2] [--heads 2] [--tokens 4] [--no-flint]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def network_file(path: Path, layers: int, heads: int, width: int, rank: int, tokens: int) -> None:
    from ag_attention._point.safetensors import write_safetensors

    rng = np.random.default_rng(0)
    arrays = {}
    for l in range(layers):
        for h in range(heads):
            for name, shape in (("Q", (rank, width)), ("K", (rank, width)), ("V", (width, width))):
                arrays[f"layers.{l}.heads.{h}.{name}"] = (
                    "F32",
                    (rng.standard_normal(shape) / np.sqrt(width)).astype(np.float32),
                )
    write_safetensors(path, arrays, {"tokens": str(tokens)})


def same_matrix(net, seed: int = 0):
    """The Jacobian local_rank's first rank takes (same prime, samples, seeds), and its prime."""
    from ag_attention._exact.field import GFp
    from ag_attention._exact.spans import output_span
    from ag_attention._models.formulas import prove
    from ag_attention._network import jacobian, random_inputs, random_seeds
    from ag_attention._point.geometry import primes_for, samples_for

    arch = net.architecture
    p = primes_for(arch)[0]
    F = GFp(p)
    theta = net.theta_mod(p)
    bound = prove(arch, output_span).bound.value
    n, k = samples_for(arch, bound)
    rng = np.random.default_rng([seed, p, n])
    X = random_inputs(arch, F, rng, n)
    seeds = random_seeds(arch, F, rng, n, k)
    return jacobian(arch, F, theta, X, seeds), p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="32:8,48:12", help="width:rank pairs (default: issue 28's two targets)")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=4)
    ap.add_argument("--no-flint", action="store_true", help="skip FLINT's rank of the same matrix")
    args = ap.parse_args()
    from ag_attention import Network, point_geometry
    from ag_attention._exact import linalg
    from ag_attention._exact.modular_lu import rank_blas, rank_blas_flops
    from ag_attention._exact.spans import output_span
    from ag_attention._models.formulas import prove
    from ag_attention._point.estimate import estimate_point, matrix_product_rate
    from ag_attention._point.geometry import local_rank

    print(f"float64 matrix product here: {matrix_product_rate() / 1e9:.0f} GFLOP/s")
    for size in args.sizes.split(","):
        width, rank = (int(x) for x in size.split(":"))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "net.safetensors"
            network_file(path, args.layers, args.heads, width, rank, args.tokens)
            t0 = time.perf_counter()
            net = Network.load(path)
            t_load = time.perf_counter() - t0
        arch = net.architecture
        P = arch.parameter_count
        print(f"\n{arch.describe()}: {P:,} parameters, float32 weights")
        print(f"  read and converted to exact rationals       {t_load:8.2f} s")
        t0 = time.perf_counter()
        est = estimate_point(net)
        print(f"  estimate (printed before the work, {time.perf_counter() - t0:.1f} s): {est.describe()}")
        bound = prove(arch, output_span).bound.value
        t0 = time.perf_counter()
        r = local_rank(net, dimension_bound=bound)
        t_local = time.perf_counter() - t0
        print(
            f"  exact local rank at the weights              {t_local:8.2f} s   {r.lower}"
            + (" (exact)" if r.exact else f" <= rank <= {r.upper}")
            + f"; {r.method}"
        )
        J, p = same_matrix(net)
        m, n = J.shape
        t0 = time.perf_counter()
        rb = rank_blas(J, p)
        t_blas = time.perf_counter() - t0
        flops = rank_blas_flops(m, n, rb)
        print(f"  the same {m:,} x {n:,} matrix over GF({p}):")
        print(
            f"    BLAS LU (the package)                      {t_blas:8.2f} s   rank {rb}  "
            f"({flops / t_blas / 1e9:.1f} GFLOP/s, {flops / t_blas / matrix_product_rate():.2f} of the product's)"
        )
        if not args.no_flint:
            t0 = time.perf_counter()
            rf = (
                linalg.rank_python_flint(J, p)
                if not linalg.fastpath_available()
                else linalg._rank_ctypes(linalg._load(), J, p)
            )
            t_flint = time.perf_counter() - t0
            print(
                f"    FLINT nmod_mat LU (raw, what it replaces)  {t_flint:8.2f} s   rank {rf}  "
                f"(x{t_flint / t_blas:.1f} the BLAS time){'' if rf == rb else '  RANKS DIFFER'}"
            )
        del J
        t0 = time.perf_counter()
        g = point_geometry(net, timeout=None)
        t_all = time.perf_counter() - t0
        ratio = t_all / est.seconds
        print(
            f"  point_geometry (the whole report)           {t_all:8.2f} s   critical: {g.critical}; "
            f"estimate {est.seconds:.1f} s: measured / estimated = {ratio:.2f}"
            + ("" if 0.5 <= ratio <= 2 else "  (OUTSIDE the factor 2)")
        )


if __name__ == "__main__":
    main()
