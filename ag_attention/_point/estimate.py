"""How long :func:`~ag_attention.point_geometry` will take and how much memory it will need, said before it starts.

A model of the work from the sizes alone, calibrated on this machine in
well under a second:

* the **ranks** over GF(p): the operation count of a row-echelon LU
  (:func:`~ag_attention._exact.modular_lu.rank_blas_flops`) of each Jacobian
  (``N k`` rows by ``P`` columns, rank at most the proven bound) and of the
  symmetry tangents, at the rate of this machine's float64 matrix product
  (timed on a 1,024 x 1,024 product) times the share of it the modular LU
  reaches (:mod:`ag_attention._exact.cost`, measured by ``bench/point.py``);
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

from dataclasses import dataclass

from .._architecture import Architecture
from .._exact import (
    BLAS_EFFICIENCY,
    BLAS_SECONDS_PER_ENTRY,
    FLINT_SHARE,
    duration,
    jacobian_seconds,
    matrix_product_rate,
    output_span,
    rank_seconds,
    run_memory,
)
from .._models import prove, symmetry_generators
from .._resources import format_bytes
from .geometry import primes_for, samples_for
from .steps import layer_network
from .weights import Network

__all__ = [
    "PointEstimate",
    "estimate_point",
    "matrix_product_rate",
    "BLAS_EFFICIENCY",
    "BLAS_SECONDS_PER_ENTRY",
    "FLINT_SHARE",
]


@dataclass(frozen=True)
class PointEstimate:
    """The estimated time (seconds, smooth point) and peak memory (bytes) of :func:`~ag_attention.point_geometry`."""

    seconds: float
    bytes: int
    parts: tuple[tuple[str, float], ...]
    critical_extra: float
    rate: float  # FLOP/s of the float64 product measured here

    def describe(self) -> str:
        parts = ", ".join(f"{name} {duration(s)}" for name, s in self.parts if s >= 0.05)
        return (
            f"estimated {duration(self.seconds)} (within a factor 2) and {format_bytes(self.bytes)} at most"
            + (f": {parts}" if parts else "")
            + f"; a critical point adds up to {duration(self.critical_extra)} "
            f"(calibrated here: float64 products at {self.rate / 1e9:.0f} GFLOP/s)"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "seconds": round(self.seconds, 1),
            "bytes": self.bytes,
            "critical_extra": round(self.critical_extra, 1),
            "parts": {k: round(v, 2) for k, v in self.parts},
            "matrix_product_flops": round(self.rate),
        }


def _piece(net: Network, samples: int | None) -> tuple[float, float, int]:
    """``(seconds at a smooth point, extra seconds at a critical one, peak bytes)`` of one network's ranks."""
    arch: Architecture = net.architecture
    P = arch.parameter_count
    p = primes_for(arch)[0]
    proven = prove(arch, output_span)
    bound = proven.bound.value if proven.bound is not None else P
    n, k = samples_for(arch, bound, samples)
    rows = n * k
    g = symmetry_generators(arch)
    sym = rank_seconds(g, P, min(g, P), p) * 2  # the tangents' rank, then each family's
    rank = rank_seconds(rows, P, bound, p)
    jac = jacobian_seconds(arch, p, n, k, net.theta_mod(p))
    memory = run_memory(arch, n, k, p).peak
    # a critical point: the rank at a random point (about the same work), a second prime, up to one doubling
    extra = 2 * (rank + jac) + (rank_seconds(2 * rows, P, bound, p) + 2 * jac)
    return sym + rank + jac, extra, memory


def estimate_point(net: Network, samples: int | None = None) -> PointEstimate:
    """The estimate of :func:`~ag_attention.point_geometry` on ``net`` (see the module docstring)."""

    rate = matrix_product_rate()
    arch = net.architecture
    parts: list[tuple[str, float]] = []
    total, extra, memory = _piece(net, samples)
    parts.append(("local rank", total))
    if arch.depth > 1 and not arch.normalized:
        layers = 0.0
        for i in range(arch.depth):
            s, e, m = _piece(layer_network(net, i), None)
            layers += s
            extra += e
            memory = max(memory, m)
        parts.append(("each layer alone", layers))
        total += layers
    return PointEstimate(total, memory, tuple(parts), extra, rate)
