"""Numerical dimension of normalized (softmax) attention networks, in float64.

Softmax attention is not polynomial, so the exact GF(p) engine does not
apply.  :func:`numerical_dimension` evaluates the same reverse-mode Jacobian
(:func:`ag_attention.network.jacobian`) in float64 on Gaussian input
sequences, normalizes its columns, and decides the rank from the largest gap
in the singular values.  The result is *numerical, not certified*: it records
the gap (orders of magnitude between the singular values on either side) and
refuses a verdict when no clear gap exists.

Conditioning: weights are drawn so that attention logits and layer outputs
are of order one (queries and keys with variance ``1 / (d_in sqrt(a))``,
values with variance ``1 / d_in``), inputs are standard Gaussian, and each
Jacobian column is scaled to unit norm (which does not change the rank).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..architecture import Architecture
from ..errors import InsufficientMemoryError, InvalidArgumentError, NoClearGapError
from ..models.formulas import Expectation, expected_dimension
from ..models.sampling import new_directions_per_sample
from ..network import attention_weights, inputs_memory, jacobian, jacobian_memory
from ..resources import MemoryEstimate, require_memory

__all__ = ["Float64", "GapRank", "NoClearGapError", "gap_rank", "NumericalResult", "numerical_dimension",
           "new_directions_per_sample"]


class Float64:
    """float64 arithmetic: the :class:`ag_attention.network.Arithmetic` protocol, like :class:`ag_attention.exact.field.GFp`."""

    exact = False
    dtype = np.float64

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return rng.standard_normal(shape)

    def einsum(self, spec: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.einsum(spec, a, b, optimize=True)
        return out

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = a + b
        return out

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = a - b
        return out

    def neg(self, a: np.ndarray) -> np.ndarray:
        return -a

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = a * b
        return out

    def scale(self, a: np.ndarray, c: int) -> np.ndarray:
        out: np.ndarray = a * c
        return out


@dataclass(frozen=True)
class GapRank:
    rank: int | None  # None: no verdict
    gap: float  # log10 of the ratio across the chosen gap (orders of magnitude)
    runner_up: float  # the second largest log10 gap
    smallest_kept: float  # s_rank / s_1
    largest_dropped: float  # s_{rank+1} / s_1 (0 if full rank)
    clear: bool
    reason: str


def gap_rank(
    s: np.ndarray, *, min_gap: float = 4.0, min_margin: float = 2.0, size: int | None = None
) -> GapRank:
    """Rank from singular values ``s`` (descending) by the largest gap, in orders of magnitude.

    A rank ``r < len(s)`` needs the gap between ``s_r`` and ``s_{r+1}`` to span
    at least ``min_gap`` orders of magnitude and to beat every other gap by
    ``min_margin`` orders.  Full rank needs the same of the gap between the
    smallest singular value and the float64 noise level ``eps * size * s_1``
    (``size``: the larger side of the matrix, default ``len(s)``), and the
    whole spectrum to span less than ``min_gap`` orders, so no rank drop can
    hide in it.  Otherwise there is no verdict (``rank=None``).

    >>> gap_rank([3.0, 2.0, 1.0, 1e-14]).rank
    3
    >>> gap_rank([1, 1, 1, 1e-3, 1e-6, 1e-8]).rank is None   # decays, no clear gap
    True
    """
    s = np.asarray(s, dtype=float)
    if s.size == 0 or s[0] == 0:
        return GapRank(0, math.inf, 0.0, 0.0, 0.0, True, "zero matrix")
    rel = s / s[0]
    logs = np.log10(np.maximum(rel, 1e-300))
    gaps = logs[:-1] - logs[1:]
    order = np.argsort(gaps)[::-1]
    best = float(gaps[order[0]]) if gaps.size else 0.0
    runner = float(gaps[order[1]]) if gaps.size > 1 else 0.0
    if gaps.size and best >= min_gap and best - runner >= min_margin:
        r = int(order[0]) + 1
        return GapRank(r, best, runner, float(rel[r - 1]), float(rel[r]), True, "clear gap")
    noise = float(np.log10(np.finfo(float).eps * max(size or 0, s.size)))
    headroom = float(logs[-1]) - noise  # orders between s_min and the noise level
    spread = -float(logs[-1])
    if spread < min_gap and headroom >= min_gap and headroom - best >= min_margin:
        return GapRank(int(s.size), headroom, best, float(rel[-1]), 0.0, True,
                       f"full rank: s_min = {rel[-1]:.1e} s_1, {headroom:.1f} orders above the float64 noise level")
    reason = (
        f"no clear gap: largest {best:.1f} orders of magnitude (need {min_gap}), runner-up {runner:.1f} "
        f"(need a margin of {min_margin}); the spectrum spans {spread:.1f} orders, "
        f"smallest singular value {rel[-1]:.1e} s_1"
    )
    return GapRank(None, best, runner, float(rel[-1]), 0.0, False, reason)


@dataclass(frozen=True)
class NumericalResult:
    """Numerical (float64, not certified) dimension of a neuromanifold."""

    architecture: Architecture
    dimension: int | None
    parameters: int
    expected: Expectation
    gap: GapRank
    singular_values: np.ndarray
    seed: int
    samples: int
    rows: int
    seconds: float
    history: tuple[tuple[int, int | None], ...] = ()
    #: why there is no verdict although the gap is clear (too few rows, saturated softmax), or ""
    undecided: str = ""
    #: the temperature the Jacobian was evaluated at (the neuromanifold does not depend on it)
    computed_temperature: float = 1.0

    @property
    def fiber_dimension(self) -> int | None:
        return None if self.dimension is None else self.parameters - self.dimension

    @property
    def formula_applies(self) -> bool:
        return self.expected.applies

    @property
    def agrees(self) -> bool | None:
        """True when the numerical rank equals the formula; otherwise None.

        A float64 rank proves nothing, so a difference is never reported as
        ``False`` (proven) here: see :meth:`comparison`.
        """
        if self.expected.value is None or self.dimension is None:
            return None
        return True if self.dimension == self.expected.value else None

    def comparison(self) -> str:
        """The numerical rank against the formula, in words (never a proven difference)."""
        value = self.expected.value
        if value is None:
            return "no formula"
        if self.dimension is None:
            return "no verdict: " + (self.undecided or self.gap.reason)
        if self.dimension == value:
            return "agrees (numerically)"
        return f"differs numerically ({self.dimension} vs {value}; float64 rank, not a proof)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "architecture": self.architecture.to_dict(),
            "dimension": self.dimension,
            "parameters": self.parameters,
            "fiber_dimension": self.fiber_dimension,
            "expected": self.expected.value,
            "formula": self.expected.formula,
            "formula_applies": self.formula_applies,
            "conjectural": self.expected.conjectural,
            "agrees": self.agrees,
            "comparison": self.comparison(),
            "undecided": self.undecided or None,
            "temperature": self.architecture.temperature,
            "computed_at_temperature": self.computed_temperature,
            "singular_value_gap": None if math.isinf(self.gap.gap) else round(self.gap.gap, 2),
            "gap_at": "full rank: smallest singular value vs float64 noise" if self.dimension == self.parameters else "between s_rank and s_rank+1",
            "gap_runner_up": round(self.gap.runner_up, 2),
            "clear_gap": self.gap.clear,
            "gap_reason": self.gap.reason,
            "numerical": True,
            "certified": False,
            "certificate": "numerical: float64 singular values, rank at the largest gap; not a proof",
            "prime": None,
            "seed": self.seed,
            "samples": self.samples,
            "rows": self.rows,
            "sample_doublings": [{"samples": n, "rank": r} for n, r in self.history],
            "seconds": round(self.seconds, 4),
        }

    def __repr__(self) -> str:
        return (
            f"NumericalResult({self.architecture.describe()}: dim={self.dimension}, P={self.parameters}, "
            f"gap {self.gap.gap:.1f} orders, numerical, seed={self.seed})"
        )

    def __str__(self) -> str:
        e = self.expected
        if e.value is None:
            formula = "no formula"
        else:
            verdict = self.comparison()
            hyp = "hypotheses hold" if e.applies else "does not apply, fails: " + "; ".join(e.failed_hypotheses)
            formula = f"{e.formula} gives {e.value} ({verdict}; {hyp}{'; a conjecture' if e.conjectural else ''})"
        dim = "no verdict (" + (self.undecided or self.gap.reason) + ")" if self.dimension is None else str(self.dimension)
        return "\n".join([
            self.architecture.describe(),
            f"  dimension        {dim}  (numerical, float64: not certified)",
            f"  parameters       {self.parameters}",
            f"  singular values  gap of {self.gap.gap:.1f} orders of magnitude at the rank (runner-up {self.gap.runner_up:.1f})",
            f"  formula          {formula}",
            *([f"  temperature      {self.architecture.temperature:g} only rescales A (phi_(A,V,tau) = phi_(A/tau,V,1)): "
               f"same neuromanifold, computed at tau = {self.computed_temperature:g}"]
              if self.architecture.temperature != self.computed_temperature else []),
            f"  seed {self.seed}, {self.samples} samples, {self.rows} rows, {self.seconds:.2f} s",
        ])


def _weights(arch: Architecture, rng: np.random.Generator) -> np.ndarray:
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


def _positive_number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidArgumentError(f"{name}={value!r}: must be a positive number")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise InvalidArgumentError(f"{name}={value!r}: must be a positive finite number")
    return v


def numeric_memory(arch: Architecture, samples: int) -> MemoryEstimate:
    """Peak memory of one float64 spectrum: inputs, seeds, Jacobian, its normalized copy, LAPACK's copy."""
    P = arch.parameter_count
    k = _rows_per_sample(arch, samples)
    seeded = None if k >= arch.output_size else k
    rows = samples * (arch.output_size if seeded is None else k)
    J = 8 * rows * P
    svd = MemoryEstimate(2 * J + J // 8, {"float64 copies for normalization and SVD": 2 * J})
    return inputs_memory(arch, samples, seeded) + (jacobian_memory(arch, samples, seeded, exact=False) | svd)


def _rows_per_sample(arch: Architecture, samples: int) -> int:
    """About ``3 P`` rows in all: ``k`` Gaussian combinations of each sample's outputs."""
    return max(1, math.ceil(3 * arch.parameter_count / samples))


def numerical_dimension(
    arch: Architecture,
    *,
    seed: int = 0,
    samples: int | None = None,
    min_gap: float = 4.0,
    raise_on_no_gap: bool = True,
    max_doublings: int = 4,
) -> NumericalResult:
    """Dimension of a (normalized or lightning) network from float64 singular values.

    ``samples`` defaults to enough samples that the directions they can add
    (``new_directions_per_sample``) exceed ``1.5 P``; the rank is then
    confirmed with twice as many samples, doubling again while it grows (at
    most ``max_doublings`` times).  Each sample contributes ``ceil(3 P / N)``
    Gaussian combinations of its outputs (all of them if fewer), so the
    matrix has about ``3 P`` rows.  Raises :class:`NoClearGapError` when the
    spectrum has no clear gap (or returns a result with ``dimension=None``
    if ``raise_on_no_gap=False``).

    No verdict either (``dimension=None``, the reason in ``undecided``) when
    the rank reaches what the rows or samples can carry (too few samples),
    or when the softmax is saturated (attention weights 0 or 1 to machine
    precision, where its derivative vanishes numerically).  The temperature
    only rescales ``A`` (``phi_{A, V, tau} = phi_{A / tau, V, 1}``), so the
    neuromanifold does not depend on it and the Jacobian is evaluated at
    ``tau = 1``.
    """
    if not isinstance(arch, Architecture):
        raise InvalidArgumentError(f"arch={arch!r}: must be an Architecture")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidArgumentError(f"seed={seed!r}: must be a non-negative integer")
    min_gap = _positive_number("min_gap", min_gap)
    if not isinstance(raise_on_no_gap, bool):
        raise InvalidArgumentError(f"raise_on_no_gap={raise_on_no_gap!r}: must be True or False")
    if isinstance(max_doublings, bool) or not isinstance(max_doublings, (int, np.integer)) or max_doublings < 0:
        raise InvalidArgumentError(f"max_doublings={max_doublings!r}: must be a non-negative integer")
    # the temperature rescales A only: same functions, computed where the logits are of order one
    work = arch if arch.temperature == 1.0 else arch.with_(temperature=1.0)
    P = arch.parameter_count
    per_sample = new_directions_per_sample(arch)
    adaptive = samples is None
    if samples is None:
        samples = max(1, math.ceil(1.5 * P / per_sample) + 1)
    elif isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise InvalidArgumentError(f"samples={samples!r}: must be a positive integer")
    samples = int(samples)
    require_memory(numeric_memory(work, samples), f"{arch.describe()} with {samples:,} samples (float64)",
                   "use fewer samples (--samples) or a smaller network")
    t0 = time.perf_counter()
    history = []
    spec = _spectrum(work, seed, samples, min_gap)
    history.append((samples, spec.gap.rank))
    # default samples: confirmed by doubling them, and doubled again while the rank grows
    # (the per-sample bound is only an upper bound on what a sample contributes)
    for _ in range(max_doublings if adaptive else 0):
        if spec.gap.rank is None or spec.gap.rank == P:
            break
        try:
            require_memory(numeric_memory(work, 2 * samples), "doubling the samples", "")
        except InsufficientMemoryError:
            break
        spec2 = _spectrum(work, seed, 2 * samples, min_gap)
        history.append((2 * samples, spec2.gap.rank))
        if spec2.gap.rank is not None and spec2.gap.rank <= spec.gap.rank:
            break
        spec, samples = spec2, 2 * samples
    undecided = _undecided(arch, spec, samples, per_sample)
    g = spec.gap
    result = NumericalResult(arch, None if undecided else g.rank, P, expected_dimension(arch), g, spec.singular_values,
                             int(seed), samples, spec.rows, time.perf_counter() - t0, tuple(history), undecided,
                             work.temperature)
    if g.rank is None and raise_on_no_gap:
        raise NoClearGapError(f"{arch.describe()}: {undecided or g.reason}", seed=int(seed))
    return result


#: attention rows with a weight within this of 1 are saturated (the softmax's derivative is lost in rounding)
_SATURATED = 1e-12
#: refuse a verdict when more than this fraction of attention rows is saturated
_SATURATED_FRACTION = 0.01


@dataclass(frozen=True)
class _Spectrum:
    gap: GapRank
    singular_values: np.ndarray
    rows: int
    saturated: float  # fraction of saturated softmax rows (0 for lightning attention)


def _undecided(arch: Architecture, spec: _Spectrum, samples: int, per_sample: int) -> str:
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
    capacity = min(spec.rows, samples * arch.output_size, paths * arch.widths[0] * arch.widths[-1] + samples * per_sample)
    if r < P and r >= capacity:
        return (
            f"too few samples: the rank {r} reaches the {capacity} directions that {samples} samples x "
            f"{spec.rows // samples} rows can carry; use more samples (or the default)"
        )
    return ""


def _spectrum(arch: Architecture, seed: int, samples: int, min_gap: float) -> _Spectrum:
    """Singular values of the column-normalized Jacobian at a seeded point, and their gap rank."""
    rng = np.random.default_rng(seed)
    F = Float64()
    theta = _weights(arch, rng)
    X = rng.standard_normal((samples, arch.tokens, arch.widths[0]))
    # about 3 P rows: k Gaussian combinations of each sample's outputs
    # (the null space is unchanged for generic combinations, the reverse pass is cheaper)
    k = _rows_per_sample(arch, samples)
    seeds = None
    if k < arch.output_size:
        seeds = rng.standard_normal((samples, k, arch.tokens, arch.widths[-1]))
    saturated = 0.0
    if arch.normalized:
        rows = [W.reshape(-1, arch.tokens) for W in attention_weights(arch, F, theta, X)]
        top = np.concatenate([W.max(axis=1) for W in rows])
        saturated = float(np.mean(top > 1.0 - _SATURATED))
    J = jacobian(arch, F, theta, X, seeds)
    # unit columns (the rank is unchanged); identically zero columns only add kernel directions
    norms = np.sqrt(np.einsum("ij,ij->j", J, J))  # no temporary of the size of J
    if not np.all(norms > 0):
        J = J[:, norms > 0]
        norms = norms[norms > 0]
    J /= norms
    s = np.linalg.svd(J, compute_uv=False)
    return _Spectrum(gap_rank(s, min_gap=min_gap, size=max(J.shape)), s, J.shape[0], saturated)
