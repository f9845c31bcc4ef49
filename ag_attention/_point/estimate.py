"""How long :func:`~ag_attention.point_geometry` will take and how much memory it will need, said before it starts.

Softmax attention: the float64 Jacobian at the point, timed on two samples and scaled, and its singular values at
:data:`SVD_EFFICIENCY` times this machine's product rate; a point whose rank stays below its symmetry bound adds
the dimension at a random point (said as the extra).

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

import time
from dataclasses import dataclass

import numpy as np

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
from .._network import jacobian
from .._numeric import Float64, numeric_memory, rows_per_sample
from .._resources import format_bytes
from .geometry import primes_for, samples_for
from .steps import POINT_ROWS, layer_network
from .weights import Network

__all__ = [
    "PointEstimate",
    "softmax_cost",
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
    extra_when: str = "a critical point"  # what adds critical_extra

    def describe(self) -> str:
        parts = ", ".join(f"{name} {duration(s)}" for name, s in self.parts if s >= 0.05)
        return (
            f"estimated {duration(self.seconds)} (within a factor 2) and {format_bytes(self.bytes)} at most"
            + (f": {parts}" if parts else "")
            + f"; {self.extra_when} adds up to {duration(self.critical_extra)} "
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


#: the share of the float64 product's rate LAPACK's singular values reach on a tall Jacobian (0.13 to 0.29 measured
#: here on 2,000 to 5,000 rows; the smaller share, so that the estimate errs long)
SVD_EFFICIENCY = 0.13


def _svd_seconds(rows: int, cols: int, rate: float) -> float:
    """The singular values of a ``rows x cols`` float64 matrix (``rows >= cols``): ``4 m n^2 - 4 n^3 / 3`` flops."""
    m, n = max(rows, cols), min(rows, cols)
    return (4 * m * n * n - 4 * n**3 / 3) / (SVD_EFFICIENCY * rate)


def _float_jacobian_seconds(arch: Architecture, theta: np.ndarray, samples: int, k: int) -> float:
    """One float64 Jacobian on two samples with ``k`` output combinations each, timed, scaled to ``samples``."""
    rng = np.random.default_rng(1)
    n0 = min(samples, 2)
    X = rng.standard_normal((n0, arch.tokens, arch.widths[0]))
    seeds = None if k >= arch.output_size else rng.standard_normal((n0, k, arch.tokens, arch.widths[-1]))
    t0 = time.perf_counter()
    with np.errstate(all="ignore"):
        jacobian(arch, Float64(), theta, X, seeds)
    return (time.perf_counter() - t0) * samples / n0


def softmax_cost(net: Network, samples: int | None = None) -> tuple[float, float, int]:
    """:func:`_softmax_piece` at this machine's rate: what :func:`~ag_attention.point_geometry` checks against its
    deadline before a float64 rank it could not stop halfway."""
    return _softmax_piece(net, samples, matrix_product_rate())


def _softmax_piece(net: Network, samples: int | None, rate: float) -> tuple[float, float, int]:
    """Softmax: ``(seconds, extra seconds when the point's rank stays below its symmetry bound, peak bytes)``: the
    float64 Jacobian at the point (:data:`~ag_attention._point.steps.POINT_ROWS` times ``P`` rows) and its singular
    values; the extra is the dimension at a random point (three times ``P`` rows, up to one doubling)."""
    arch = net.architecture
    P = arch.parameter_count
    n = samples if samples is not None else max(4, (3 * P) // max(1, arch.output_size) + 4)
    theta = net.theta_float()
    k = rows_per_sample(arch, n, POINT_ROWS)
    rows = n * min(k, arch.output_size)
    point = _float_jacobian_seconds(arch, theta, n, k) + _svd_seconds(rows, P, rate)
    k3 = rows_per_sample(arch, n, 3.0)
    rows3 = n * min(k3, arch.output_size)
    random = _float_jacobian_seconds(arch, theta, n, k3) + _svd_seconds(rows3, P, rate)
    memory = numeric_memory(arch, n).peak
    return point, 3 * random, memory


def estimate_point(net: Network, samples: int | None = None) -> PointEstimate:
    """The estimate of :func:`~ag_attention.point_geometry` on ``net`` (see the module docstring)."""

    rate = matrix_product_rate()
    arch = net.architecture
    if arch.normalized:
        seconds, extra, memory = _softmax_piece(net, samples, rate)
        return PointEstimate(
            seconds,
            memory,
            (("float64 rank at the point", seconds),),
            extra,
            rate,
            "a rank short of the symmetry bound",
        )
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
