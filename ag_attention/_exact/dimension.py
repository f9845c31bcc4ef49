"""Exact dimension of the neuromanifold of a lightning network over GF(p).

The dimension of the image of a polynomial map is the generic rank of its
Jacobian.  :func:`dimension` evaluates the reverse-mode Jacobian of
``parameters -> outputs on N random input sequences`` at a random integer
point, reduces it mod ``p`` and takes its rank with FLINT.  Two bounds come
out of one run (docs/math/certificates.md (certificates-gfp, certificates-upper-bounds)):

* lower: ``rank_p J(theta, X) <= rank_Q J(theta, X) <= dim M`` for any point;
* upper: the symmetry tangents ``T(theta)`` lie in the kernel of the generic
  Jacobian, so ``dim M <= P - rank_p T(theta)``.

When they meet, the dimension is proven.  When the rank falls below the upper
bound or below the paper's formula, the computation is repeated with a second
prime and a fresh random point before anything is reported.

The parts live in :mod:`ag_attention._exact.sampling` (how many samples, what
a run may allocate), :mod:`ag_attention._exact.runs` (one rank run) and
:mod:`ag_attention._exact.result` (:class:`DimensionResult` and its
certificate); their names are importable from here too.  A call that takes
more than a few seconds shows its steps on a progress bar (standard error,
see :mod:`ag_attention._progress`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from .. import _progress as progress
from .._architecture import Architecture
from .._errors import ComputationError, InsufficientMemoryError, InvalidArgumentError
from .._models.bounds import effective_architecture
from .._models.formulas import expected_dimension, symmetry_count
from . import linalg
from .field import DEFAULT_PRIME, SECOND_PRIME, check_prime
from .result import DimensionResult
from .runs import Evaluation, RankRun, Stages, evaluate, jacobian_rank, rank_run
from .spans import engine_bound
from .sampling import (
    check_exact_sizes,
    check_run_memory,
    default_samples,
    new_directions_per_sample,
    planning_bound,
    run_memory,
    sampling_plan,
)

log = logging.getLogger(__name__)

__all__ = [
    "DimensionResult",
    "RankRun",
    "Evaluation",
    "evaluate",
    "dimension",
    "default_samples",
    "jacobian_rank",
    "sampling_plan",
    "new_directions_per_sample",
    "run_memory",
    "check_run_memory",
    "check_exact_sizes",
]

#: the former private name of :func:`ag_attention._exact.sampling.planning_bound`
_planning_bound = planning_bound


def dimension(
    arch: Architecture,
    *,
    prime: int = DEFAULT_PRIME,
    seed: int = 0,
    samples: int | None = None,
    recheck: bool = True,
    threads: int | None = None,
    max_doublings: int = 4,
    full_rows: bool = False,
) -> DimensionResult:
    """Exact dimension of the neuromanifold of a lightning network.

    Parameters
    ----------
    arch:
        The network (lightning: ``normalized=False``).
    prime:
        Prime ``p < 2^31`` of the finite field.
    seed:
        Seed of the random parameter point and input sequences.
    samples:
        Number ``N`` of random input sequences.  Default: from
        ``sampling_plan`` (one sample adds at most ``t^2`` new directions
        beyond the shared value weights, so ``N`` grows like ``dim / t^2``),
        doubled (up to ``max_doublings`` times) while the rank is below the
        upper bound and still grows.  An explicit ``samples`` is used as
        given.  Each sample contributes ``k`` rows: random combinations of its
        ``t d_L`` outputs, seeded into the backward pass (``k`` from the
        plan); the rank of these combinations is still a lower bound.
    recheck:
        Repeat with a second prime and a new point when the rank is below the
        symmetry bound or below the paper's formula.
    threads:
        Threads FLINT may use for the ranks (default: all CPUs), for the
        duration of the call; FLINT's setting is restored afterwards.
    full_rows:
        Use all ``t d_L`` output rows of every sample (no random combinations).

    Examples
    --------
    >>> r = dimension(Architecture((4, 4, 4), (2, 2), tokens=3))
    >>> r.dimension, r.certified, r.expected.value
    (38, True, 38)
    """
    settings = _settings(arch, prime, seed, samples, recheck, threads, max_doublings, full_rows)
    # the first run is refused before anything is computed (also before the effective architecture's run)
    plan = _prepare(arch, settings)
    # FLINT's threads for this call only; one bar for the runs of this architecture and its effective one
    with linalg.threads(threads), progress.bar(desc=f"dimension of {arch.describe()}", unit="step") as bar:
        return _search(arch, settings, plan, Stages(bar))


@dataclass(frozen=True)
class _Settings:
    """The checked arguments of one :func:`dimension` call (``samples`` None: adaptive)."""

    prime: int
    seed: int
    samples: int | None
    recheck: bool
    max_doublings: int
    full_rows: bool


def _positive(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer)) and bool(value >= 1)


def _settings(arch: Architecture, prime: int, seed: int, samples: int | None, recheck: bool, threads: int | None,
              max_doublings: int, full_rows: bool) -> _Settings:
    """The arguments checked, in the order of the error a user sees first."""
    if not isinstance(arch, Architecture):
        raise InvalidArgumentError(f"arch={arch!r}: must be an Architecture")
    if arch.normalized:
        raise InvalidArgumentError(
            "normalized attention is not polynomial: use ag_attention._numeric.numerical_dimension"
        )
    prime = check_prime(prime)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidArgumentError(f"seed={seed!r}: must be a non-negative integer")
    if samples is not None and not _positive(samples):
        raise InvalidArgumentError(f"samples={samples!r}: must be a positive integer")
    if threads is not None and not _positive(threads):
        raise InvalidArgumentError(f"threads={threads!r}: must be a positive integer or None (all CPUs)")
    return _Settings(prime, int(seed), None if samples is None else int(samples), recheck, max_doublings, full_rows)


def _prepare(arch: Architecture, s: _Settings) -> tuple[int, int]:
    """``(N, k)`` of the first run of ``arch``, refused here if the sizes or the memory do not allow it."""
    samples, k = sampling_plan(arch, planning_bound(arch), s.samples)
    if s.full_rows:
        k = arch.output_size
    check_exact_sizes(arch)
    check_run_memory(arch, samples, k)
    return samples, k


class _Bounds:
    """The best lower bound and the smallest upper bound of the runs so far."""

    def __init__(self, arch: Architecture, runs: list[RankRun], reduction: DimensionResult | None) -> None:
        self.parameters = arch.parameter_count
        self.runs = runs
        self.reduction = reduction
        self.analytic = engine_bound(arch)

    def best(self) -> int:
        return max([r.rank for r in self.runs] + ([self.reduction.dimension] if self.reduction else []))

    def upper(self) -> int:
        bounds = [self.parameters - r.symmetry_rank for r in self.runs]
        if self.reduction is not None:
            bounds.append(self.reduction.upper_bound)
        if self.analytic is not None:
            bounds.append(self.analytic.value)
        return min(bounds)


def _search(arch: Architecture, s: _Settings, plan: tuple[int, int], stages: Stages, what: str = "") -> DimensionResult:
    """The runs of one architecture: the first, more samples while short of the upper bound, the confirmation."""
    t0 = time.perf_counter()
    samples, k = plan
    expected = expected_dimension(arch)
    # A narrower architecture with the same neuromanifold gives a second
    # lower and upper bound (see effective_architecture).
    reduction = None
    eff = effective_architecture(arch)
    if eff != arch:
        eff_settings = _Settings(s.prime, s.seed, None, s.recheck, s.max_doublings, s.full_rows)
        reduction = _search(eff, eff_settings, _prepare(eff, eff_settings), stages, f"effective {eff.describe()}: ")
    runs = [rank_run(arch, s.prime, s.seed, samples, k, stages, what)]
    if not runs[0].kernel_check:
        raise ComputationError("a symmetry tangent is not in the kernel of the Jacobian (bug)", prime=s.prime, seed=s.seed)
    bounds = _Bounds(arch, runs, reduction)
    samples = _more_samples(arch, s, samples, k, bounds, stages, what)
    below_formula = expected.value is not None and bounds.best() < expected.value
    if s.recheck and (bounds.best() < bounds.upper() or below_formula):
        second = SECOND_PRIME if s.prime != SECOND_PRIME else DEFAULT_PRIME
        runs.append(rank_run(arch, second, s.seed + 1, samples, k, stages, f"{what}confirmation: "))
    if bounds.best() > bounds.upper():
        raise ComputationError(
            f"{arch.describe()}: the rank {bounds.best()} exceeds the proven upper bound {bounds.upper()} (bug)",
            prime=s.prime, seed=s.seed,
        )
    return DimensionResult(
        architecture=arch,
        dimension=bounds.best(),
        parameters=arch.parameter_count,
        upper_bound=bounds.upper(),
        symmetry_count=symmetry_count(arch),
        expected=expected,
        runs=tuple(runs),
        seconds=time.perf_counter() - t0,
        reduction=reduction,
    )


def _more_samples(arch: Architecture, s: _Settings, samples: int, k: int, bounds: _Bounds, stages: Stages,
                  what: str) -> int:
    """Double the samples while the rank is short of the upper bound and still growing; the samples reached.

    Only with adaptive samples, at most ``max_doublings`` times, and never past the memory limit.
    """
    runs = bounds.runs
    for _ in range(s.max_doublings if s.samples is None else 0):
        if bounds.best() >= bounds.upper():
            break
        try:
            runs.append(rank_run(arch, s.prime, s.seed, 2 * samples, k, stages, what))
        except InsufficientMemoryError as exc:
            log.info("not doubling the samples of %s: %s", arch.describe(), exc)
            break
        samples *= 2
        if runs[-1].rank <= runs[-2].rank:
            break
    return samples
