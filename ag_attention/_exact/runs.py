"""One rank run of :func:`~ag_attention.dimension`: a random point, its Jacobian's rank and its symmetry rank.

docs/math/certificates.md (certificates-gfp, certificates-upper-bounds): the
rank over GF(p) of the Jacobian at a random point is a lower bound on the
dimension, and the rank of the symmetry tangents there gives the upper bound
``P - rank_p T``.  :class:`Stages` reports the steps of the runs on a progress
bar (:mod:`ag_attention._progress`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _progress as progress
from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._models.symmetries import symmetry_tangents
from .._network import jacobian, random_inputs, random_parameters
from . import linalg
from .field import DEFAULT_PRIME, GFp, check_prime
from .sampling import check_run_memory

__all__ = ["RankRun", "Evaluation", "Stages", "evaluate", "rank_run", "jacobian_rank"]

#: steps of one run on the stage bar: the Jacobian, its rank, the symmetry tangents
STEPS_PER_RUN = 3


@dataclass(frozen=True)
class RankRun:
    """One evaluation: Jacobian rank and symmetry rank at one random point."""

    prime: int
    seed: int
    samples: int
    seeds_per_sample: int
    rows: int
    rank: int
    symmetry_rank: int
    kernel_check: bool
    assembly_seconds: float
    rank_seconds: float
    symmetry_seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "prime": self.prime,
            "seed": self.seed,
            "samples": self.samples,
            "seeds_per_sample": self.seeds_per_sample,
            "rows": self.rows,
            "rank": self.rank,
            "symmetry_rank": self.symmetry_rank,
            "kernel_check": self.kernel_check,
            "assembly_seconds": round(self.assembly_seconds, 4),
            "rank_seconds": round(self.rank_seconds, 4),
            "symmetry_seconds": round(self.symmetry_seconds, 4),
        }


class Stages(progress.Steps):
    """The steps of the rank runs on one progress bar: three a run (:class:`ag_attention._progress.Steps`)."""

    def add_run(self) -> None:
        """One more run to come: three more steps."""
        self.add(STEPS_PER_RUN)


@dataclass
class Evaluation:
    """The random point of one run: parameters, the (seeded) Jacobian, the symmetry tangents."""

    field: GFp
    theta: np.ndarray
    J: np.ndarray
    rng: np.random.Generator


def evaluate(arch: Architecture, prime: int, seed: int, samples: int, k: int) -> Evaluation:
    """Random parameters and inputs from ``seed``, and the Jacobian with ``k`` seeds per sample."""
    F = GFp(prime)
    rng = np.random.default_rng(seed)
    theta = random_parameters(arch, F, rng)
    X = random_inputs(arch, F, rng, samples)
    seeds = None if k >= arch.output_size else F.random(rng, (samples, k, arch.tokens, arch.widths[-1]))
    return Evaluation(F, theta, jacobian(arch, F, theta, X, seeds), rng)


def _tangents_in_kernel(ev: Evaluation, T: np.ndarray) -> bool:
    """Every symmetry tangent is in the kernel of the Jacobian (a polynomial identity, so also mod p).

    Checked on random combinations (Freivalds: error <= p^-2).
    """
    F, ok = ev.field, True
    if T.shape[0]:
        for _ in range(2):
            w = F.random(ev.rng, T.shape[0])
            v = F.matvec(np.ascontiguousarray(T.T), w)
            ok &= not np.any(F.matvec(ev.J, v))
    return bool(ok)


def rank_run(arch: Architecture, prime: int, seed: int, samples: int, k: int, stages: Stages | None = None,
             what: str = "") -> RankRun:
    """The Jacobian's rank and the symmetry rank at the random point of ``seed`` (``what``: the bar's prefix)."""
    stages = stages or Stages()
    check_run_memory(arch, samples, k)
    stages.add_run()
    t0 = time.perf_counter()
    stages.begin(f"{what}Jacobian of {samples:,} samples")
    ev = evaluate(arch, prime, seed, samples, k)
    stages.end()
    t1 = time.perf_counter()
    stages.begin(f"{what}rank of {ev.J.shape[0]:,} x {ev.J.shape[1]:,} over GF({prime})")
    r = linalg.rank(ev.J, prime)
    stages.end()
    t2 = time.perf_counter()
    stages.begin(f"{what}symmetry tangents")
    T, _ = symmetry_tangents(arch, ev.theta, ev.field)
    rs = linalg.rank(T, prime) if T.shape[0] else 0
    ok = _tangents_in_kernel(ev, T)
    stages.end()
    t3 = time.perf_counter()
    rows = ev.J.shape[0]
    return RankRun(prime, seed, samples, rows // samples, rows, r, rs, ok, t1 - t0, t2 - t1, t3 - t2)


def jacobian_rank(
    arch: Architecture,
    theta: np.ndarray,
    *,
    prime: int = DEFAULT_PRIME,
    seed: int = 0,
    samples: int | None = None,
    max_doublings: int = 6,
) -> int:
    """Rank over GF(p) of the sampled Jacobian at given integer parameters (random inputs).

    A lower bound on the rank of the differential at ``theta`` over QQ.  At
    special points one sample contributes few independent rows (the output can
    be a rank-one ``t x d'`` matrix), so unless ``samples`` is given the number
    of samples is doubled until the rank stops growing.
    """
    prime = check_prime(prime)
    F = GFp(prime)
    theta = F.from_ints(np.ravel(theta))
    if theta.shape != (arch.parameter_count,):
        raise InvalidArgumentError(f"theta has {theta.size} entries, the architecture has {arch.parameter_count} parameters")

    def at(n: int) -> int:
        check_run_memory(arch, n, arch.output_size)
        rng = np.random.default_rng(seed)
        X = random_inputs(arch, F, rng, n)
        return linalg.rank(jacobian(arch, F, theta, X), prime)

    if samples is not None:
        return at(samples)
    n = math.ceil((1.1 * arch.parameter_count + 10) / arch.output_size)
    r = at(n)
    for _ in range(max_doublings):
        n *= 2
        r2 = at(n)
        if r2 <= r:
            break
        r = r2
    return r
