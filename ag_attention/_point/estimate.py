"""How long :func:`~ag_attention.point_geometry` will take and how much memory it will need, said before it starts.

A model of the work from the sizes alone, calibrated on this machine in
well under a second:

* the **ranks** over GF(p): the operation count of a row-echelon LU
  (:func:`~ag_attention._exact.modular_lu.rank_blas_flops`) of each Jacobian
  (``N k`` rows by ``P`` columns, rank at most the proven bound) and of the
  symmetry tangents, at the rate of this machine's float64 matrix product
  (timed on a 1,024 x 1,024 product) times :data:`BLAS_EFFICIENCY`, the
  share of it the modular LU reaches (measured by ``bench/point.py``); a
  FLINT rank (small networks, primes above 2^21) at :data:`FLINT_SHARE` of it;
* the **Jacobians**: one timed on a few samples of the same architecture at
  the same weights, scaled to the planned samples (its cost is linear in them);
* every piece the report computes: the whole network, then each layer alone
  (deep networks).

The figure is for a point where the local rank reaches the proven bound (a
smooth point, the common case); a critical point adds the rank at a random
point, a second prime and the certificate, given as ``critical_extra``.
``bench/point.py`` prints the estimate beside the measured time (the target
is a factor 2 either way).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._architecture import Architecture
from .._exact import linalg
from .._exact.field import GFp
from .._exact.modular_lu import rank_blas_flops
from .._exact.sampling import run_memory
from .._exact.spans import output_span
from .._models.formulas import prove
from .._models.symmetries import symmetry_generators
from .._network import jacobian, random_inputs
from .._resources import format_bytes
from .geometry import primes_for, samples_for
from .weights import Network

__all__ = ["PointEstimate", "estimate_point", "matrix_product_rate", "BLAS_EFFICIENCY", "BLAS_SECONDS_PER_ENTRY",
           "FLINT_SHARE"]

#: the modular LU's rate as a share of the float64 product's (bench/point.py: 0.38 at 6,144 and 0.47 at 13,824
#: parameters on a 2-core AMD EPYC)
BLAS_EFFICIENCY = 0.42
#: seconds per matrix entry the BLAS route spends outside the products (the float64 copy of the transpose, the
#: swaps and reductions: 0.95 s for the 5,525 x 6,144 Jacobian of bench/point.py)
BLAS_SECONDS_PER_ENTRY = 3e-8
#: FLINT's nmod_mat rank as a share of the float64 product's rate (3,000 x 3,000 in 4.0 s against 61 GFLOP/s)
FLINT_SHARE = 0.15


@lru_cache(maxsize=1)
def matrix_product_rate() -> float:
    """This machine's float64 matrix product in FLOP/s (best of three 1,024 x 1,024 products; once per process)."""
    rng = np.random.default_rng(0)
    a = rng.random((1024, 1024))
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t0)
    return 2 * 1024 ** 3 / max(best, 1e-6)


@dataclass(frozen=True)
class PointEstimate:
    """The estimated time (seconds, smooth point) and peak memory (bytes) of :func:`~ag_attention.point_geometry`."""

    seconds: float
    bytes: int
    parts: tuple[tuple[str, float], ...]
    critical_extra: float
    rate: float  # FLOP/s of the float64 product measured here

    def describe(self) -> str:
        parts = ", ".join(f"{name} {_dur(s)}" for name, s in self.parts if s >= 0.05)
        return (f"estimated {_dur(self.seconds)} (within a factor 2) and {format_bytes(self.bytes)} at most"
                + (f": {parts}" if parts else "")
                + f"; a critical point adds up to {_dur(self.critical_extra)} "
                f"(calibrated here: float64 products at {self.rate / 1e9:.0f} GFLOP/s)")

    def to_dict(self) -> dict[str, object]:
        return {"seconds": round(self.seconds, 1), "bytes": self.bytes, "critical_extra": round(self.critical_extra, 1),
                "parts": {k: round(v, 2) for k, v in self.parts}, "matrix_product_flops": round(self.rate)}


def _dur(s: float) -> str:
    if s < 60:
        return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"
    return f"{int(s // 60)} min {int(round(s % 60)):02d} s"


def _rank_seconds(rows: int, cols: int, rank: int, p: int, rate: float) -> float:
    flops = rank_blas_flops(rows, cols, rank)
    if linalg.uses_blas(rows, cols, p):
        return flops / (BLAS_EFFICIENCY * rate) + BLAS_SECONDS_PER_ENTRY * rows * cols
    return flops / (FLINT_SHARE * rate)


def _jacobian_seconds(net: Network, p: int, samples: int, k: int) -> float:
    """One Jacobian of ``net``'s architecture at its weights mod p on a few samples, timed, scaled to ``samples``."""
    arch = net.architecture
    theta = net.theta_mod(p)
    F = GFp(p)
    if theta is None:  # pragma: no cover - primes_for avoids the weights' denominators in practice
        theta = F.random(np.random.default_rng(0), arch.parameter_count)
    n0 = min(samples, 4)
    rng = np.random.default_rng(1)
    X = random_inputs(arch, F, rng, n0)
    seeds = None if k >= arch.output_size else F.random(rng, (n0, k, arch.tokens, arch.widths[-1]))
    t0 = time.perf_counter()
    jacobian(arch, F, theta, X, seeds)
    return (time.perf_counter() - t0) * samples / n0


def _piece(net: Network, rate: float, samples: int | None) -> tuple[float, float, int]:
    """``(seconds at a smooth point, extra seconds at a critical one, peak bytes)`` of one network's ranks."""
    arch: Architecture = net.architecture
    P = arch.parameter_count
    p = primes_for(arch)[0]
    proven = prove(arch, output_span)
    bound = proven.bound.value if proven.bound is not None else P
    n, k = samples_for(arch, bound, samples)
    rows = n * k
    g = symmetry_generators(arch)
    sym = _rank_seconds(g, P, min(g, P), p, rate) * 2  # the tangents' rank, then each family's
    rank = _rank_seconds(rows, P, bound, p, rate)
    jac = _jacobian_seconds(net, p, n, k)
    memory = run_memory(arch, n, k, p).peak
    # a critical point: the rank at a random point (about the same work), a second prime, up to one doubling
    extra = 2 * (rank + jac) + (_rank_seconds(2 * rows, P, bound, p, rate) + 2 * jac)
    return sym + rank + jac, extra, memory


def estimate_point(net: Network, samples: int | None = None) -> PointEstimate:
    """The estimate of :func:`~ag_attention.point_geometry` on ``net`` (see the module docstring)."""
    from .report import _layer_network

    rate = matrix_product_rate()
    arch = net.architecture
    parts: list[tuple[str, float]] = []
    total, extra, memory = _piece(net, rate, samples)
    parts.append(("local rank", total))
    if arch.depth > 1 and not arch.normalized:
        layers = 0.0
        for i in range(arch.depth):
            s, e, m = _piece(_layer_network(net, i), rate, None)
            layers += s
            extra += e
            memory = max(memory, m)
        parts.append(("each layer alone", layers))
        total += layers
    return PointEstimate(total, memory, tuple(parts), extra, rate)
