"""Exact dimension of the neuromanifold of a lightning network over GF(p).

The dimension of the image of a polynomial map is the generic rank of its
Jacobian.  :func:`dimension` evaluates the reverse-mode Jacobian of
``parameters -> outputs on N random input sequences`` at a random integer
point, reduces it mod ``p`` and takes its rank with FLINT.  It proves what it
can, measures what it must, and decides (docs/math/certificates.md
(certificates-steps)):

1. **prove**, from the architecture alone (:func:`ag_attention._models.formulas.prove`):
   the smallest upper bound of docs/math/bounds.md, the effective
   architecture (a narrower network with the same neuromanifold, proven
   alike), the paper's formula, what one sample can add; all in one
   :class:`~ag_attention._models.formulas.Proven`;
2. **measure** (:mod:`ag_attention._exact.sampling`, :mod:`ag_attention._exact.runs`):
   the first run of each architecture planned and refused before anything is
   computed; the effective architecture's runs, then this one's: the rank
   over GF(p) at a random point (a lower bound) and the rank of the symmetry
   tangents there (the upper bound ``P - rank_p T``); more samples while the
   rank is short of the upper bound and still grows; a second prime and a
   fresh point when it stays below the upper bound or the formula;
3. **decide** (:func:`ag_attention._exact.result.decide`): the best lower
   bound against the smallest upper bound, exact when they meet;
   :class:`DimensionResult` says which bound closed it and writes the
   certificate.  A rank above a proven bound is a bug and raises.

The names of those modules are importable from here too.  A call that takes
more than a few seconds shows its steps on a progress bar (standard error,
see :mod:`ag_attention._progress`); ``timeout=`` stops it inside its steps
(:class:`~ag_attention.ComputationTimeoutError`).
"""

from __future__ import annotations

import time

from .. import _progress as progress
from .._architecture import Architecture, check_architecture
from .._checks import check_int
from .._errors import InvalidArgumentError
from .._m2 import check_timeout
from .._models import prove
from .._resources import Deadline
from . import linalg
from .field import DEFAULT_PRIME, check_prime
from .modular_lu import BLAS_PRIMES
from .result import DimensionResult, decide
from .runs import Evaluation, RankRun, Stages, evaluate, jacobian_rank, measure
from .sampling import (
    check_exact_sizes,
    check_run_memory,
    default_samples,
    directions_per_sample,
    first_runs,
    new_directions_per_sample,
    planning_bound,
    run_memory,
    sampling_plan,
)
from .spans import output_span

__all__ = [
    "DimensionResult",
    "RankRun",
    "Evaluation",
    "evaluate",
    "dimension",
    "default_prime",
    "BLAS_FROM_PARAMETERS",
    "default_samples",
    "jacobian_rank",
    "sampling_plan",
    "new_directions_per_sample",
    "directions_per_sample",
    "run_memory",
    "check_run_memory",
    "check_exact_sizes",
    "first_runs",
]

#: the former private name of :func:`ag_attention._exact.sampling.planning_bound`
_planning_bound = planning_bound


# long: over 80 lines only by its docstring (the API reference); its code is the three steps prove, measure, decide
def dimension(
    arch: Architecture,
    *,
    prime: int | None = None,
    seed: int = 0,
    samples: int | None = None,
    recheck: bool = True,
    threads: int | None = None,
    max_doublings: int = 4,
    full_rows: bool = False,
    timeout: float | None = None,
) -> DimensionResult:
    """Exact dimension of the neuromanifold of a lightning network.

    Parameters
    ----------
    arch:
        The network (lightning: ``normalized=False``).
    prime:
        Prime ``p < 2^31`` of the finite field.  Default: ``2^31 - 1`` below
        1,024 parameters, from 1,024 parameters on ``2097143`` (below
        ``2^21``), whose ranks take the float64 BLAS route (6 times faster
        than FLINT at 13,824 columns); any prime gives a proven lower bound.
    seed:
        Seed of the random parameter point and input sequences.
    samples:
        Number ``N`` of random input sequences.  Default: from
        ``sampling_plan`` (one sample adds at most ``t^2`` new directions
        beyond the shared value weights, and without a causal mask at most
        ``d_0 d_L`` whatever ``t``, so ``N`` grows like ``dim / min(t^2, d_0 d_L)``),
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
    timeout:
        Seconds for the whole call (default: no limit), checked between the
        steps, between the pieces of a Jacobian (a piece is about 2 s of work
        at most, one sample's rows at ``t = 5,000``) and inside large ranks:
        past it, :class:`~ag_attention.ComputationTimeoutError` names the step.

    Examples
    --------
    >>> r = dimension(Architecture((4, 4, 4), (2, 2), tokens=3))
    >>> r.dimension, r.certified, r.expected.value
    (38, True, 38)
    """
    arch = check_architecture(arch)
    prime, seed, samples = _checked(arch, default_prime(arch) if prime is None else prime, seed, samples, threads)
    if timeout is not None:
        timeout = check_timeout(timeout)
    deadline = Deadline(timeout)
    proven = prove(arch, output_span)  # 1. prove: everything the architecture alone gives
    plans = first_runs(proven, samples, full_rows)  # every first run refused here, before any is made
    # FLINT's threads for this call only; one bar for the runs of this architecture and its effective one
    with linalg.threads(threads), progress.bar(desc=f"dimension of {arch.describe()}", unit="step") as bar:
        stages, t0 = Stages(bar), time.perf_counter()
        result = None
        for plan in plans:  # the effective architecture first: its bounds hold for the next
            what = "" if plan.proven is proven else f"effective {plan.proven.architecture.describe()}: "
            prior = None if result is None else (result.dimension, result.upper_bound)
            runs = measure(
                plan,
                prior,
                prime=prime,
                seed=seed,
                max_doublings=max_doublings,
                recheck=recheck,
                stages=stages,
                what=what,
                deadline=deadline,
            )  # 2. measure
            result = decide(plan.proven, runs, result, time.perf_counter() - t0)  # 3. decide
        assert result is not None  # plans holds the architecture's own run
        return result


#: from this many parameters on, :func:`dimension`'s default prime is below 2^21 (the BLAS rank route)
BLAS_FROM_PARAMETERS = 1024


def default_prime(arch: Architecture) -> int:
    """:func:`dimension`'s prime when none is given: ``2^31 - 1`` below :data:`BLAS_FROM_PARAMETERS` parameters,
    else the largest prime below ``2^21`` (:data:`ag_attention._exact.modular_lu.BLAS_PRIMES`)."""
    return BLAS_PRIMES[0] if arch.parameter_count >= BLAS_FROM_PARAMETERS else DEFAULT_PRIME


def _checked(
    arch: Architecture, prime: int, seed: int, samples: int | None, threads: int | None
) -> tuple[int, int, int | None]:
    """``prime, seed, samples`` checked (as ints), in the order of the error a user sees first; ``threads`` too."""
    if not isinstance(arch, Architecture):
        raise InvalidArgumentError(f"arch={arch!r}: must be an Architecture")
    if arch.normalized:
        raise InvalidArgumentError(
            "normalized attention is not polynomial: use ag_attention._numeric.numerical_dimension"
        )
    prime = check_prime(prime)
    seed = check_int(seed, "seed", minimum=0)
    if samples is not None:
        samples = check_int(samples, "samples", minimum=1)
    if threads is not None:
        check_int(threads, "threads", minimum=1)  # None: all CPUs
    return prime, seed, samples
