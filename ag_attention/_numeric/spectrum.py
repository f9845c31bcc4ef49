"""One float64 spectrum: the column-normalized Jacobian at a seeded point, its singular values and gap rank.

Conditioning: weights are drawn so that attention logits and layer outputs
are of order one (queries and keys with variance ``1 / (d_in sqrt(a))``,
values with variance ``1 / d_in``), inputs are standard Gaussian, and each
Jacobian column is scaled to unit norm (which does not change the rank).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import _progress as progress
from .._architecture import Architecture
from .._network import attention_weights, inputs_memory, jacobian, jacobian_memory
from .._resources import MemoryEstimate
from .float64 import Float64
from .gap import GapRank, gap_rank

__all__ = [
    "sample_weights",
    "rows_per_sample",
    "input_scale",
    "INPUT_SPREAD",
    "numeric_memory",
    "saturated_fraction",
    "Steps",
    "Spectrum",
    "spectrum",
    "undecided_reason",
]


def sample_weights(arch: Architecture, rng: np.random.Generator) -> np.ndarray:
    """Seeded weights with attention logits and layer outputs of order one (see the module docstring)."""
    theta = np.empty(arch.parameter_count)
    for b in arch.blocks:
        layer = arch.layers[b.layer - 1]
        if b.name in ("Q", "K"):
            std = 1.0 / math.sqrt(layer.d_in * math.sqrt(layer.rank))
        elif b.name == "A":
            std = 1.0 / layer.d_in
        else:
            std = 1.0 / math.sqrt(layer.d_in)
        theta[b.slice] = rng.standard_normal(b.size) * std
    return theta


def rows_per_sample(arch: Architecture, samples: int, factor: float = 3.0) -> int:
    """About ``factor P`` rows in all (3 by default): ``k`` Gaussian combinations of each sample's outputs."""
    return max(1, math.ceil(factor * arch.parameter_count / samples))


#: the spread of a softmax row (its largest weight minus its smallest, averaged over the first layer's rows) the
#: inputs are scaled to at a given point: the softmax responsive, neither near uniform (small scores: the
#: Jacobian's query and key directions nearly dependent) nor saturated (its derivative vanishing)
INPUT_SPREAD = 0.9


def input_scale(arch: Architecture, theta: np.ndarray, seed: int, probe: int = 16) -> float:
    """The factor that brings the first layer's softmax rows at ``theta`` to a spread of :data:`INPUT_SPREAD` on
    Gaussian inputs (a power of two between ``2^-10`` and ``2^10``; 1 for lightning attention). The rank of the
    Jacobian is the same for almost every input (a polynomial identity in the inputs holds or fails for almost
    all): only its conditioning changes. A tiny GPT-2 at its initialisation (weights of size 0.02: rows of spread
    0.5, singular values gliding to 1e-12 with no gap at the rank) gets a gap of 5 orders at factor 32."""
    if not arch.normalized:
        return 1.0
    first = arch.with_(widths=arch.widths[:2], ranks=arch.ranks[:1])
    count = first.parameter_count
    rng = np.random.default_rng([seed, 0x5CA1E])
    X = rng.standard_normal((probe, arch.tokens, arch.widths[0]))
    best, best_gap = 1.0, math.inf
    for k in range(-10, 11):
        s = 2.0**k
        with np.errstate(all="ignore"):
            rows = np.concatenate(
                [W.reshape(-1, arch.tokens) for W in attention_weights(first, Float64(), theta[:count], X * s)]
            )
        allowed = rows > 0 if arch.causal else np.ones(rows.shape, dtype=bool)
        many = allowed.sum(axis=1) > 1  # a row with one token (the first, under a mask) has no spread
        if not np.any(many):
            return 1.0
        spread = float(np.mean(rows[many].max(axis=1) - np.where(allowed, rows, np.inf)[many].min(axis=1)))
        if abs(spread - INPUT_SPREAD) < best_gap:
            best, best_gap = s, abs(spread - INPUT_SPREAD)
    return best


def numeric_memory(arch: Architecture, samples: int) -> MemoryEstimate:
    """Peak memory of one float64 spectrum: inputs, seeds, Jacobian, its normalized copy, LAPACK's copy."""
    P = arch.parameter_count
    k = rows_per_sample(arch, samples)
    seeded = None if k >= arch.output_size else k
    rows = samples * (arch.output_size if seeded is None else k)
    J = 8 * rows * P
    svd = MemoryEstimate(2 * J + J // 8, {"float64 copies for normalization and SVD": 2 * J})
    return inputs_memory(arch, samples, seeded) + (jacobian_memory(arch, samples, seeded, exact=False) | svd)


#: attention rows with a weight within this of 1 are saturated (the softmax's derivative is lost in rounding)
_SATURATED = 1e-12
#: refuse a verdict when more than this fraction of attention rows is saturated
_SATURATED_FRACTION = 0.01


def saturated_fraction(arch: Architecture, weights: list[np.ndarray]) -> float:
    """The fraction of saturated attention rows (a weight within ``_SATURATED`` of 1) among the rows that
    attend to at least two tokens.

    With a causal mask token ``i`` attends to ``i + 1`` tokens, so the first row is ``[1, 0, ..., 0]`` by
    construction: it has no softmax derivative to lose and is not counted (nor are the rows of ``t = 1``).
    """
    t = arch.tokens
    allowed = np.arange(1, t + 1) if arch.causal else np.full(t, t)
    free = allowed >= 2  # rows with >= 2 allowed tokens
    if not free.any() or not weights:
        return 0.0
    top = np.concatenate([W.max(axis=-1)[:, free].ravel() for W in weights])
    return float(np.mean(top > 1.0 - _SATURATED))


class Steps(progress.Steps):
    """The steps of the spectra on one progress bar: two a spectrum, the Jacobian (samples and assembly)
    and its SVD (:class:`ag_attention._progress.Steps`)."""

    PER_SPECTRUM = 2

    def add_spectrum(self) -> None:
        self.add(self.PER_SPECTRUM)


@dataclass(frozen=True)
class Spectrum:
    gap: GapRank
    singular_values: np.ndarray
    rows: int
    saturated: float  # fraction of saturated softmax rows (0 for lightning attention)


def undecided_reason(arch: Architecture, spec: Spectrum, samples: int, per_sample: int) -> str:
    """Why a clear-gap rank is still no verdict on the dimension ("" if it is one)."""
    if spec.saturated > _SATURATED_FRACTION:
        return (
            f"saturated softmax: {spec.saturated:.0%} of the attention rows put weight 1 on one token to machine "
            "precision, where the derivative of the softmax vanishes in float64"
        )
    if spec.gap.rank is None:
        return ""
    P, r = arch.parameter_count, spec.gap.rank
    paths = (arch.heads + int(arch.skip)) ** arch.depth
    capacity = min(
        spec.rows, samples * arch.output_size, paths * arch.widths[0] * arch.widths[-1] + samples * per_sample
    )
    if r < P and r >= capacity:
        return (
            f"too few samples: the rank {r} reaches the {capacity} directions that {samples} samples x "
            f"{spec.rows // samples} rows can carry; use more samples (or the default)"
        )
    return ""


def spectrum(
    arch: Architecture,
    seed: int,
    samples: int,
    min_gap: float,
    steps: Steps | None = None,
    theta: np.ndarray | None = None,
    rows_factor: float = 3.0,
    scale: float = 1.0,
) -> Spectrum:
    """Singular values of the column-normalized Jacobian at a seeded point (or at ``theta``, float64
    parameters in the order of ``arch.blocks``), and their gap rank; ``rows_factor``: about that many times ``P``
    rows; ``scale``: the inputs' factor (:func:`input_scale`)."""
    steps = steps or Steps()
    steps.add_spectrum()
    steps.begin(f"Jacobian of {samples:,} samples")
    rng = np.random.default_rng(seed)
    F = Float64()

    drawn = sample_weights(arch, rng)  # drawn in any case: the inputs after it are the same with or without theta
    theta = drawn if theta is None else np.asarray(theta, dtype=np.float64)
    X = rng.standard_normal((samples, arch.tokens, arch.widths[0])) * scale
    # about 3 P rows: k Gaussian combinations of each sample's outputs
    # (the null space is unchanged for generic combinations, the reverse pass is cheaper)
    k = rows_per_sample(arch, samples, rows_factor)
    seeds = None
    if k < arch.output_size:
        seeds = rng.standard_normal((samples, k, arch.tokens, arch.widths[-1]))
    saturated = 0.0
    if arch.normalized:
        saturated = saturated_fraction(arch, attention_weights(arch, F, theta, X))
    J = jacobian(arch, F, theta, X, seeds)
    # unit columns (the rank is unchanged); identically zero columns only add kernel directions
    norms = np.sqrt(np.einsum("ij,ij->j", J, J))  # no temporary of the size of J
    if not np.all(norms > 0):
        J = J[:, norms > 0]
        norms = norms[norms > 0]
    J /= norms
    steps.end()
    steps.begin(f"SVD of {J.shape[0]:,} x {J.shape[1]:,} (float64)")
    s = np.linalg.svd(J, compute_uv=False)
    steps.end()
    return Spectrum(gap_rank(s, min_gap=min_gap, size=max(J.shape)), s, J.shape[0], saturated)
