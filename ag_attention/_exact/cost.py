"""What the exact engines will cost on this machine, from sizes alone: said before the work starts.

A rank over GF(p) costs the operation count of a row-echelon LU
(:func:`~ag_attention._exact.modular_lu.rank_blas_flops`) at a share of this
machine's float64 matrix product rate (timed once per process on a
1,024 x 1,024 product, :func:`matrix_product_rate`): :data:`BLAS_EFFICIENCY`
on the BLAS route (:func:`ag_attention._exact.linalg.rank` with a prime below
2^21), :data:`FLINT_SHARE` with FLINT.  A Jacobian is timed on two samples of
the same architecture and scaled (its cost is linear in the samples).  The
shares were measured by ``bench/point.py``; the estimates are meant to hold
within a factor 2 (``bench/point.py`` prints them beside the measured times).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._architecture import Architecture
from .._network import jacobian, random_inputs, random_parameters, random_seeds
from .._resources import format_bytes
from . import linalg
from .field import GFp
from .modular_lu import rank_blas_flops

__all__ = ["matrix_product_rate", "rank_seconds", "jacobian_seconds", "DimensionEstimate", "estimate_dimension",
           "duration", "BLAS_EFFICIENCY", "BLAS_SECONDS_PER_ENTRY", "FLINT_SHARE"]

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


def rank_seconds(rows: int, cols: int, rank: int, p: int) -> float:
    """The estimated seconds of :func:`ag_attention._exact.linalg.rank` on a ``rows x cols`` matrix of rank at
    most ``rank`` modulo ``p`` (the route it will take)."""
    flops = rank_blas_flops(rows, cols, rank)
    rate = matrix_product_rate()
    if linalg.uses_blas(rows, cols, p):
        return flops / (BLAS_EFFICIENCY * rate) + BLAS_SECONDS_PER_ENTRY * rows * cols
    return flops / (FLINT_SHARE * rate)


def jacobian_seconds(arch: Architecture, p: int, samples: int, k: int, theta: np.ndarray | None = None) -> float:
    """One Jacobian of ``arch`` mod ``p`` (at ``theta``, or a random point) on two samples with ``k`` output
    combinations each, timed, scaled to ``samples``."""
    F = GFp(p)
    rng = np.random.default_rng(1)
    if theta is None:
        theta = random_parameters(arch, F, rng)
    n0 = min(samples, 2)
    X = random_inputs(arch, F, rng, n0)
    seeds = random_seeds(arch, F, rng, n0, k)
    t0 = time.perf_counter()
    jacobian(arch, F, theta, X, seeds)
    return (time.perf_counter() - t0) * samples / n0


def duration(s: float) -> str:
    """``4.2 s``, ``42 s``, ``3 min 05 s``."""
    if s < 60:
        return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"
    return f"{int(s // 60)} min {int(round(s % 60)):02d} s"


@dataclass(frozen=True)
class DimensionEstimate:
    """The estimated seconds and peak bytes of :func:`ag_attention.dimension`'s first runs, with what they are."""

    seconds: float
    bytes: int
    parts: tuple[tuple[str, float], ...]

    def describe(self) -> str:
        parts = ", ".join(f"{name} {duration(s)}" for name, s in self.parts)
        return (f"estimated {duration(self.seconds)} (within a factor 2) and {format_bytes(self.bytes)} at most: {parts} "
                f"(calibrated here: float64 products at {matrix_product_rate() / 1e9:.0f} GFLOP/s); a rank short of "
                "its bound doubles the samples and adds a second prime")


def estimate_dimension(arch: Architecture, prime: int, samples: int | None = None) -> DimensionEstimate:
    """The estimate of :func:`ag_attention.dimension` with ``prime`` (its first runs, each architecture it plans)."""
    from .._models.formulas import prove
    from .._models.symmetries import symmetry_generators
    from .sampling import first_runs, run_memory
    from .spans import output_span

    parts: list[tuple[str, float]] = []
    total, peak = 0.0, 0
    for plan in first_runs(prove(arch, output_span), samples):
        a = plan.proven.architecture
        P = a.parameter_count
        rows = plan.samples * plan.k
        bound = min(plan.proven.planning_bound, P)
        g = symmetry_generators(a)
        jac = jacobian_seconds(a, prime, plan.samples, plan.k)
        rank = rank_seconds(rows, P, bound, prime)
        sym = rank_seconds(g, P, min(g, P), prime)
        own = "" if a is arch or a == arch else " (effective architecture)"
        parts += [(f"Jacobian of {plan.samples:,} samples{own}", jac), (f"rank of {rows:,} x {P:,} over GF({prime})", rank),
                  (f"symmetry tangents {g:,} x {P:,}", sym)]
        total += jac + rank + sym
        peak = max(peak, run_memory(a, plan.samples, plan.k, prime).peak)
    return DimensionEstimate(total, peak, tuple(parts))
