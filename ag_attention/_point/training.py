"""Training on the neuromanifold: teacher-student gradient descent, with the geometry measured along the way.

A *teacher* network (random weights in a chosen stratum) labels ``N`` random
input sequences; a *student* of the same architecture, from a random start,
follows gradient descent on the mean squared error
``L(theta) = |f_theta(X) - Y|^2 / M`` (``M`` the number of output entries),
full batch, with a backtracking (Armijo) step: the step is halved until the
loss decreases by at least half the first-order prediction, and grows by 1.5
after each accepted step, so every run is deterministic and needs no tuning.
The gradient is the network's reverse pass (:func:`ag_attention._network.jacobian`)
seeded with the residuals: one backward pass per step, in float64.

Every ``record_every`` steps the run records, at the current weights:

* the loss;
* the singular values of ``A = Q^T K`` and of ``V`` of every head and layer;
* the singular values of the column-normalized Jacobian of
  ``parameters -> outputs`` on fresh inputs (:func:`ag_attention._numeric.spectrum.spectrum`):
  ``ratio = s_D / s_1`` at ``D`` the generic dimension measures how close the
  point is to the critical locus (0 on it), and the gap rank is the float64
  local rank when the gap is clear;
* for one layer, the distance (Frobenius, in ``(A, V)``) to the critical pairs
  ``(u v^T, w v^T)`` of Lemma A.3 (docs/math/point.md (point-one-layer)).

Where a run ends is then classified, a *measurement* with stated thresholds,
never a proof: ``critical`` when ``ratio < CRITICAL_RATIO``; for one layer,
``singular`` when the numerical ranks of ``A`` and ``V`` are at most one
(Theorem 3.4.3) at relative tolerance :data:`RANK_TOLERANCE`; otherwise
``smooth``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._checks import check_choice, check_int
from .._errors import InvalidArgumentError
from .._exact import dimension
from .._network import forward, jacobian, unflatten
from .._numeric import SmallFloat64
from .._numeric import softmax_spectrum as spectrum

__all__ = ["TEACHERS", "RANK_TOLERANCE", "CRITICAL_RATIO", "Record", "TrainingRun", "teacher_weights", "train"]

#: strata of the teacher: generic weights; every layer's A of rank one (V generic: a smooth point of one layer);
#: every layer critical (A = u v^T, V = w v^T with the same v: Lemma A.3's critical pairs)
TEACHERS = ("generic", "rank-one A", "critical")
#: a singular value below this fraction of the largest counts as zero for the numerical ranks of A and V
RANK_TOLERANCE = 1e-3
#: ``s_D / s_1`` of the normalized Jacobian below this: the point counts as numerically critical
CRITICAL_RATIO = 1e-4


def teacher_weights(arch: Architecture, kind: str, rng: np.random.Generator) -> np.ndarray:
    """Teacher parameters (float64, the order of ``arch.blocks``) in the stratum ``kind`` of :data:`TEACHERS`.

    ``rank-one A``: every head's ``A = u v^T`` (QKV: ``Q`` and ``K`` with one nonzero row), ``V`` generic;
    ``critical``: also ``V = w v^T`` with the same ``v`` (Lemma A.3's critical pairs).
    """
    check_choice(kind, "teacher", TEACHERS)
    theta = np.empty(arch.parameter_count)
    for b in arch.blocks:
        theta[b.slice] = rng.standard_normal(b.size) / math.sqrt(arch.layers[b.layer - 1].d_in)
    if kind == "generic":
        return theta
    weights = unflatten(arch, theta)
    for layer in weights:
        for w in layer:
            d = w["V"].shape[1]
            u, v = rng.standard_normal(d) / math.sqrt(d), rng.standard_normal(d) / math.sqrt(d)
            if "A" in w:
                w["A"][...] = np.outer(u, v)
            else:  # A = Q^T K = sum_c Q[c]^T K[c]: one nonzero row each
                w["Q"][...] = 0.0
                w["Q"][0] = u
                w["K"][0] = v
            if kind == "critical":
                w["V"][...] = np.outer(rng.standard_normal(w["V"].shape[0]) / math.sqrt(d), v)
    out = np.empty_like(theta)
    for b in arch.blocks:
        out[b.slice] = weights[b.layer - 1][b.head][b.name].ravel()
    return out


@dataclass(frozen=True)
class Record:
    """The state of a run at one step."""

    step: int
    loss: float
    singular_A: tuple[tuple[float, ...], ...]  # per (layer, head), in order
    singular_V: tuple[tuple[float, ...], ...]
    ratio: float | None  # s_D / s_1 of the normalized Jacobian (None: D beyond its size)
    numerical_rank: int | None  # the float64 gap rank when the gap is clear
    distance: float | None  # one layer: distance to the critical pairs

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "loss": self.loss,
            "singular_A": [list(s) for s in self.singular_A],
            "singular_V": [list(s) for s in self.singular_V],
            "ratio": self.ratio,
            "numerical_rank": self.numerical_rank,
            "distance": self.distance,
        }


@dataclass(frozen=True)
class TrainingRun:
    """One teacher-student run: its settings, its records and where it ended."""

    architecture: Architecture
    teacher: str
    samples: int
    seed: int
    steps: int
    generic_dimension: int
    records: tuple[Record, ...]
    end: str  # "critical", "singular", "smooth"
    seconds: float
    theta: np.ndarray = field(repr=False)  # the final weights

    @property
    def final(self) -> Record:
        return self.records[-1]

    def ranks(self, record: Record | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Numerical ranks of every A and V at ``record`` (default the last), at :data:`RANK_TOLERANCE`."""
        r = record or self.final
        return (tuple(_numerical_rank(s) for s in r.singular_A), tuple(_numerical_rank(s) for s in r.singular_V))

    def to_dict(self) -> dict[str, Any]:
        ra, rv = self.ranks()
        return {
            "architecture": self.architecture.to_dict(),
            "teacher": self.teacher,
            "samples": self.samples,
            "seed": self.seed,
            "steps": self.steps,
            "generic_dimension": self.generic_dimension,
            "end": self.end,
            "final_loss": self.final.loss,
            "ranks_A": list(ra),
            "ranks_V": list(rv),
            "final_ratio": self.final.ratio,
            "final_distance": self.final.distance,
            "seconds": round(self.seconds, 3),
            "records": [r.to_dict() for r in self.records],
        }


def _numerical_rank(s: tuple[float, ...]) -> int:
    top = max(s, default=0.0)
    return sum(1 for x in s if top > 0 and x > RANK_TOLERANCE * top)


def _record(arch: Architecture, theta: np.ndarray, step: int, loss: float, generic: int, seed: int) -> Record:

    weights = unflatten(arch, theta)
    sa, sv = [], []
    for layer in weights:
        for w in layer:
            A = w["A"] if "A" in w else w["Q"].T @ w["K"]
            sa.append(tuple(float(x) for x in np.linalg.svd(A, compute_uv=False)))
            sv.append(tuple(float(x) for x in np.linalg.svd(w["V"], compute_uv=False)))
    samples = max(4, (3 * arch.parameter_count) // max(1, arch.output_size) + 4)
    spec = spectrum(arch, seed, samples, 4.0, theta=theta)
    s = spec.singular_values
    ratio = float(s[generic - 1] / s[0]) if 0 < generic <= len(s) and s[0] > 0 else None
    distance = None
    if arch.depth == 1 and arch.heads == 1:
        w = weights[0][0]
        A = w["A"] if "A" in w else w["Q"].T @ w["K"]
        M = A.T @ A + w["V"].T @ w["V"]
        eig = np.linalg.eigvalsh(M)
        distance = float(math.sqrt(max(0.0, float(np.trace(M) - eig[-1]))))
    return Record(step, loss, tuple(sa), tuple(sv), ratio, spec.gap.rank, distance)


def _classify(arch: Architecture, record: Record) -> str:
    if record.ratio is not None and record.ratio < CRITICAL_RATIO:
        return "critical"
    if arch.depth == 1 and arch.heads == 1:
        ra = [_numerical_rank(s) for s in record.singular_A]
        rv = [_numerical_rank(s) for s in record.singular_V]
        if max(ra) <= 1 and max(rv) <= 1:
            return "singular"
    return "smooth"


def train(
    arch: Architecture,
    teacher: str,
    samples: int,
    *,
    seed: int = 0,
    steps: int = 2000,
    record_every: int = 100,
    init_scale: float = 0.5,
) -> TrainingRun:
    """One teacher-student run of :data:`TEACHERS` ``teacher`` on ``samples`` input sequences (see the module
    docstring); the student starts from weights of standard deviation ``init_scale / sqrt(d_in)``."""

    if arch.normalized:
        raise InvalidArgumentError(
            "training: lightning attention only (the geometry measured is that of a polynomial parametrization)"
        )
    samples, steps, record_every = (
        check_int(value, name, minimum=1)
        for name, value in (("samples", samples), ("steps", steps), ("record_every", record_every))
    )
    t0 = time.perf_counter()
    F = SmallFloat64()  # (many small products: numpy's C loop, 4x faster than a path search each)
    rng = np.random.default_rng([seed, samples, TEACHERS.index(teacher) if teacher in TEACHERS else 99])
    theta_t = teacher_weights(arch, teacher, rng)
    X = rng.standard_normal((samples, arch.tokens, arch.widths[0]))
    Y = forward(arch, F, theta_t, X)
    theta = np.empty(arch.parameter_count)
    for b in arch.blocks:
        theta[b.slice] = rng.standard_normal(b.size) * init_scale / math.sqrt(arch.layers[b.layer - 1].d_in)
    generic = dimension(arch, seed=seed).dimension
    M = Y.size

    def loss_and_gradient(th: np.ndarray) -> tuple[float, np.ndarray]:
        R = forward(arch, F, th, X) - Y
        seeds = (2.0 / M) * R[:, None, :, :]
        return float(np.sum(R * R) / M), jacobian(arch, F, th, X, seeds).sum(axis=0)

    loss, grad = loss_and_gradient(theta)
    records = [_record(arch, theta, 0, loss, generic, seed)]
    lr = 0.1
    for step in range(1, steps + 1):
        g2 = float(grad @ grad)
        while True:
            trial = theta - lr * grad
            new_loss, new_grad = loss_and_gradient(trial)
            if new_loss <= loss - 0.5 * lr * g2 or lr < 1e-14:
                break
            lr /= 2
        theta, loss, grad = trial, new_loss, new_grad
        lr = min(lr * 1.5, 100.0)
        if step % record_every == 0 or step == steps:
            records.append(_record(arch, theta, step, loss, generic, seed))
    return TrainingRun(
        arch,
        teacher,
        samples,
        seed,
        steps,
        generic,
        tuple(records),
        _classify(arch, records[-1]),
        time.perf_counter() - t0,
        theta,
    )
