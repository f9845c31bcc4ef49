"""The geometry at given weights, timed: issue 21's target network, side by side with dimension() (prints only).

A 4-layer, 4-head network of width 16 (ranks 2, t = 2: 5,120 parameters) with
random float32 weights, written to a ``.safetensors`` file; then, each timed:

* reading it (:meth:`ag_attention.Network.load`: every float to its exact
  binary value);
* its local rank at those weights (:func:`ag_attention._point.geometry.local_rank`,
  the GF(p) Jacobian at the point's reduction against the symmetry tangents
  there): the issue's target is an exact local rank in under 30 s;
* :func:`ag_attention.dimension` of the architecture (the generic rank at a
  random point, what the local rank is compared with);
* the whole report :func:`ag_attention.point_geometry` (both of the above,
  each layer alone, the float64 rank at the float point).

    python bench/point.py [--layers 4] [--heads 4] [--width 16] [--rank 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--rank", type=int, default=2)
    args = ap.parse_args()
    from safetensors.numpy import save_file

    from ag_attention import Network, dimension, point_geometry
    from ag_attention._point.geometry import local_rank

    rng = np.random.default_rng(0)
    d, a = args.width, args.rank
    arrays = {}
    for l in range(args.layers):
        for h in range(args.heads):
            arrays[f"layers.{l}.heads.{h}.Q"] = (rng.standard_normal((a, d)) / np.sqrt(d)).astype(np.float32)
            arrays[f"layers.{l}.heads.{h}.K"] = (rng.standard_normal((a, d)) / np.sqrt(d)).astype(np.float32)
            arrays[f"layers.{l}.heads.{h}.V"] = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "net.safetensors"
        save_file(arrays, str(path))
        t0 = time.perf_counter()
        net = Network.load(path)
        t_load = time.perf_counter() - t0
        arch = net.architecture
        print(f"{arch.describe()}: {arch.parameter_count:,} parameters, float32 weights from {path.name}")
        print(f"  read and converted to exact rationals   {t_load:8.2f} s")
        t0 = time.perf_counter()
        dim = dimension(arch)
        t_dim = time.perf_counter() - t0
        print(f"  dimension() of the architecture          {t_dim:8.2f} s   {dim.dimension} "
              f"({'certified' if dim.certified else 'lower bound'})")
        t0 = time.perf_counter()
        r = local_rank(net, dimension_bound=dim.upper_bound)
        t_local = time.perf_counter() - t0
        print(f"  local rank at the weights                {t_local:8.2f} s   {r.lower}"
              + (" (exact)" if r.exact else f" <= rank <= {r.upper}") + f"; {r.method}")
        t0 = time.perf_counter()
        g = point_geometry(net)
        t_all = time.perf_counter() - t0
        print(f"  point_geometry (all of it, each layer alone, float64) {t_all:8.2f} s   critical: {g.critical}; "
              f"float64 rank {g.numerical.rank if g.numerical else '-'}")


if __name__ == "__main__":
    main()
