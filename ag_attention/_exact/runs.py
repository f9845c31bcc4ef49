"""The rank runs of :func:`~ag_attention.dimension`: a random point, its Jacobian's rank and its symmetry rank.

docs/math/certificates.md (certificates-gfp, certificates-upper-bounds): the
rank over GF(p) of the Jacobian at a random point is a lower bound on the
dimension, and the rank of the symmetry tangents there gives the upper bound
``P - rank_p T``.  :func:`rank_run` is one run; :func:`measure` the runs of one
architecture, the measuring step of :func:`~ag_attention.dimension` (the
first run, more samples while the rank is short of the upper bound, a second
prime where it stays short).  :class:`Stages` reports the steps of the runs on
a progress bar (:mod:`ag_attention._progress`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _progress as progress
from .._architecture import Architecture
from .._errors import ComputationError, InsufficientMemoryError, InvalidArgumentError
from .._models.formulas import Proven
from .._models.symmetries import symmetry_tangents
from .._network import jacobian, random_inputs, random_parameters, random_seeds
from . import linalg
from .field import DEFAULT_PRIME, SECOND_PRIME, GFp, check_prime
from .modular_lu import BLAS_PRIMES
from .sampling import Plan, check_run_memory

__all__ = ["RankRun", "Evaluation", "Stages", "evaluate", "rank_run", "jacobian_rank", "measure", "known_bounds"]

log = logging.getLogger(__name__)

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
    seeds = random_seeds(arch, F, rng, samples, k)
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
    check_run_memory(arch, samples, k, prime)
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


def known_bounds(proven: Proven, runs: Sequence[RankRun], prior: tuple[int, int] | None = None) -> tuple[int, int]:
    """The best lower bound and the smallest upper bound so far.

    Lower: the runs' ranks over GF(p).  Upper: ``P - rank_p T`` of every run
    and the proven bound of docs/math/bounds.md.  ``prior``: the lower and
    upper bounds of the effective architecture (the same neuromanifold), which
    hold here too.
    """
    lower = max([r.rank for r in runs] + ([prior[0]] if prior is not None else []))
    uppers = [proven.parameters - r.symmetry_rank for r in runs]
    if prior is not None:
        uppers.append(prior[1])
    if proven.bound is not None:
        uppers.append(proven.bound.value)
    return lower, min(uppers)


def measure(plan: Plan, prior: tuple[int, int] | None, *, prime: int, seed: int, max_doublings: int, recheck: bool,
            stages: Stages, what: str = "") -> list[RankRun]:
    """The runs of one architecture: the first, more samples while short of the upper bound, the confirmation.

    The first run as planned (:func:`ag_attention._exact.sampling.first_runs`);
    with adaptive samples, the samples doubled (at most ``max_doublings``
    times, never past the memory limit) while the rank is short of the upper
    bound and still grows; with ``recheck``, a run with a second prime and the
    next seed where the rank stays below the upper bound or the paper's
    formula.  ``prior``: the effective architecture's bounds (:func:`known_bounds`).
    """
    proven, samples, k = plan.proven, plan.samples, plan.k
    arch = proven.architecture
    runs = [rank_run(arch, prime, seed, samples, k, stages, what)]
    if not runs[0].kernel_check:
        raise ComputationError("a symmetry tangent is not in the kernel of the Jacobian (bug)", prime=prime, seed=seed)
    for _ in range(max_doublings if plan.adaptive else 0):
        lower, upper = known_bounds(proven, runs, prior)
        if lower >= upper:
            break
        try:
            runs.append(rank_run(arch, prime, seed, 2 * samples, k, stages, what))
        except InsufficientMemoryError as exc:
            log.info("not doubling the samples of %s: %s", arch.describe(), exc)
            break
        samples *= 2
        if runs[-1].rank <= runs[-2].rank:
            break
    lower, upper = known_bounds(proven, runs, prior)
    formula = proven.expected.value
    if recheck and (lower < upper or (formula is not None and lower < formula)):
        second = second_prime(prime)
        runs.append(rank_run(arch, second, seed + 1, samples, k, stages, f"{what}confirmation: "))
    return runs


def second_prime(prime: int) -> int:
    """The prime of a confirmation run: of the same size as ``prime`` (below 2^21 it keeps the BLAS rank route of
    :func:`ag_attention._exact.linalg.rank`)."""
    if prime in BLAS_PRIMES:
        return BLAS_PRIMES[(BLAS_PRIMES.index(prime) + 1) % len(BLAS_PRIMES)]
    return SECOND_PRIME if prime != SECOND_PRIME else DEFAULT_PRIME


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
