"""What the exact engines will cost on this machine, from sizes alone: said before the work starts.

A rank over GF(p) costs the operation count of a row-echelon LU
(:func:`~ag_attention._exact.modular_lu.rank_blas_flops`) at a share of this
machine's float64 matrix product rate (timed once per process on a
1,024 x 1,024 product, :func:`matrix_product_rate`): :data:`BLAS_EFFICIENCY`
on the BLAS route (:func:`ag_attention._exact.linalg.rank` with a prime below
2^21), :data:`FLINT_SHARE` with FLINT.  A Jacobian is timed on two samples of
the same architecture and scaled (its cost is linear in the samples); on long
sequences (more than :data:`TIMED_TOKENS` tokens), where the ``t x t``
adjoints of each row make the cost, one row is timed at :data:`TIMED_TOKENS`
and ``2 TIMED_TOKENS`` tokens and extrapolated in ``t``
(:func:`assembly_seconds`).  The shares were measured by ``bench/point.py``;
the estimates are meant to hold within a factor 2 (``bench/point.py`` prints
them beside the measured times).  :func:`long_sequences` says when the
``t``-driven work alone is worth an estimate (``dim`` prints it then).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._architecture import Architecture
from .._errors import InsufficientMemoryError
from .._models import prove, symmetry_generators
from .._network import jacobian, random_inputs, random_parameters, random_seeds
from .._resources import format_bytes
from . import linalg
from .field import GFp
from .modular_lu import rank_blas_flops
from .sampling import first_runs, jacobian_pieces, run_memory
from .spans import output_span

__all__ = [
    "matrix_product_rate",
    "rank_seconds",
    "jacobian_seconds",
    "assembly_seconds",
    "DimensionEstimate",
    "estimate_dimension",
    "long_sequences",
    "duration",
    "BLAS_EFFICIENCY",
    "BLAS_SECONDS_PER_ENTRY",
    "FLINT_SHARE",
    "TIMED_TOKENS",
    "TOKEN_WORK_ENTRIES",
]

#: the modular LU's rate as a share of the float64 product's (bench/point.py: 0.38 at 6,144 and 0.47 at 13,824
#: parameters on a 2-core AMD EPYC)
BLAS_EFFICIENCY = 0.42
#: seconds per matrix entry the BLAS route spends outside the products (the float64 copy of the transpose, the
#: swaps and reductions: 0.95 s for the 5,525 x 6,144 Jacobian of bench/point.py)
BLAS_SECONDS_PER_ENTRY = 3e-8
#: FLINT's nmod_mat rank as a share of the float64 product's rate (3,000 x 3,000 in 4.0 s against 61 GFLOP/s)
FLINT_SHARE = 0.15
#: beyond this many tokens a Jacobian is timed one row at a time at this many tokens and twice as many, and
#: extrapolated: ``a t + b t^2`` seconds a row (one row of widths 3,3 at t = 512: 0.02 s; at t = 5,000: 2.7 s)
TIMED_TOKENS = 512
#: a ``t x t`` int64 array above this many bytes no longer stays in cache: the ``t^2`` work per entry is slower
#: (widths 3,3, one row, 2-core AMD EPYC: 64 to 74 ns an entry from t = 256 to 2,896; 95 to 109 ns at 4,096 to 7,000)
LARGE_ARRAY_BYTES = 64 * 2**20
#: that slowdown, applied to the ``t^2`` term of the extrapolation
LARGE_ARRAY_SLOWDOWN = 1.5
#: ``dim`` prints its estimate when its first runs' rows times ``t^2`` reach this (about 3 s at 70 ns an entry;
#: widths 3,3 rank 2: from t = 1,200 on), whatever the number of parameters
TOKEN_WORK_ENTRIES = 5 * 10**7


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
    return 2 * 1024**3 / max(best, 1e-6)


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


@lru_cache(maxsize=64)
def _row_seconds(arch: Architecture, p: int, rows: int) -> float:
    """Seconds of one row of ``arch``'s Jacobian mod ``p``: one sample, ``rows`` seeded rows, best of two; timed
    once per process and shape, so that the extrapolation of :func:`assembly_seconds` grows with ``t`` for every
    ``t`` of one shape (timed twice on a busy machine, it could estimate ``t = 3,000`` above ``t = 6,000``)."""
    F = GFp(p)
    rng = np.random.default_rng(1)
    theta = random_parameters(arch, F, rng)
    X = random_inputs(arch, F, rng, 1)
    seeds = F.random(rng, (1, rows, arch.tokens, arch.widths[-1]))
    best = math.inf
    for _ in range(2):
        t0 = time.perf_counter()
        jacobian(arch, F, theta, X, seeds)
        best = min(best, time.perf_counter() - t0)
    return best / rows


def assembly_seconds(arch: Architecture, p: int, samples: int, k: int) -> float:
    """The Jacobian of ``samples`` samples with ``k`` output combinations each, as :func:`ag_attention.dimension`
    assembles it: :func:`jacobian_seconds` up to :data:`TIMED_TOKENS` tokens; beyond, one row timed (at ``t``
    itself up to ``2 TIMED_TOKENS``, else at ``T`` and ``2T`` and extrapolated as ``a t + b t^2``, the ``t^2``
    term slower for arrays beyond :data:`LARGE_ARRAY_BYTES`) times the rows."""
    t = arch.tokens
    if t <= TIMED_TOKENS:
        return jacobian_seconds(arch, p, samples, k)
    rows = samples * min(k, arch.output_size)
    r = min(2, rows)
    if t <= 2 * TIMED_TOKENS:
        return _row_seconds(arch, p, r) * rows
    T = TIMED_TOKENS
    f1, f2 = _row_seconds(arch.with_(tokens=T), p, r), _row_seconds(arch.with_(tokens=2 * T), p, r)
    b = max(0.0, (f2 - 2 * f1) / (2 * T * T))  # f(T) = aT + bT^2, f(2T) = 2aT + 4bT^2
    a = max(0.0, (f1 - b * T * T) / T)
    slow = LARGE_ARRAY_SLOWDOWN if 8 * t * t > LARGE_ARRAY_BYTES else 1.0
    return (a * t + slow * b * t * t) * rows


def long_sequences(arch: Architecture, samples: int | None = None) -> bool:
    """Whether the ``t``-driven work of :func:`ag_attention.dimension`'s first runs reaches
    :data:`TOKEN_WORK_ENTRIES` (their rows times ``t^2``): from sizes alone, before anything is timed.

    >>> long_sequences(Architecture((3, 3), (2,), tokens=500)), long_sequences(Architecture((3, 3), (2,), tokens=5000))
    (False, True)
    """

    try:
        plans = first_runs(prove(arch, output_span), samples)
    except InsufficientMemoryError:  # too large for this machine's memory: long (dimension() then says why)
        return True
    work = sum(
        plan.samples * min(plan.k, plan.proven.architecture.output_size) * plan.proven.architecture.tokens**2
        for plan in plans
    )
    return work >= TOKEN_WORK_ENTRIES


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
        return (
            f"estimated {duration(self.seconds)} (within a factor 2) and {format_bytes(self.bytes)} at most: {parts} "
            f"(calibrated here: float64 products at {matrix_product_rate() / 1e9:.0f} GFLOP/s); a rank short of "
            "its bound doubles the samples and adds a second prime"
        )


def estimate_dimension(arch: Architecture, prime: int, samples: int | None = None) -> DimensionEstimate:
    """The estimate of :func:`ag_attention.dimension` with ``prime`` (its first runs, each architecture it plans)."""

    parts: list[tuple[str, float]] = []
    total, peak = 0.0, 0
    for plan in first_runs(prove(arch, output_span), samples):
        a = plan.proven.architecture
        P = a.parameter_count
        rows = plan.samples * plan.k
        bound = min(plan.proven.planning_bound, P)
        g = symmetry_generators(a)
        jac = assembly_seconds(a, prime, plan.samples, plan.k)
        rank = rank_seconds(rows, P, bound, prime)
        sym = rank_seconds(g, P, min(g, P), prime)
        own = "" if a is arch or a == arch else " (effective architecture)"
        pieces = len(jacobian_pieces(a, plan.samples, plan.k))
        long = "" if a.tokens <= TIMED_TOKENS else f" x {rows // plan.samples:,} rows at t = {a.tokens:,}"
        long += "" if pieces == 1 else f" in {pieces:,} pieces"
        parts += [
            (f"Jacobian of {plan.samples:,} samples{long}{own}", jac),
            (f"rank of {rows:,} x {P:,} over GF({prime})", rank),
            (f"symmetry tangents {g:,} x {P:,}", sym),
        ]
        total += jac + rank + sym
        peak = max(peak, run_memory(a, plan.samples, plan.k, prime, pieced=True).peak)
    return DimensionEstimate(total, peak, tuple(parts))
