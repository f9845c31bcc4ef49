"""The rank runs of :func:`~ag_attention.dimension`: a random point, its Jacobian's rank and its symmetry rank.

docs/math/certificates.md (certificates-gfp, certificates-upper-bounds): the
rank over GF(p) of the Jacobian at a random point is a lower bound on the
dimension, and the rank of the symmetry tangents there gives the upper bound
``P - rank_p T``.  :func:`rank_run` is one run; :func:`measure` the runs of one
architecture, the measuring step of :func:`~ag_attention.dimension` (the
first run, more samples while the rank is short of the upper bound, a second
prime where it stays short).  :class:`Stages` reports the steps of the runs on
a progress bar (:mod:`ag_attention._progress`).  A Jacobian is assembled in
pieces when one piece would need too much memory
(:func:`ag_attention._exact.sampling.jacobian_pieces`: long sequences), and a
:class:`~ag_attention._resources.Deadline` is checked between the pieces,
inside large ranks and between the steps (``dimension(timeout=...)``).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _progress as progress
from .._architecture import Architecture
from .._errors import ComputationError, InsufficientMemoryError, InvalidArgumentError
from .._models import Proven, symmetry_tangents
from .._network import jacobian, random_inputs, random_parameters, random_seeds
from .._resources import Deadline
from . import linalg
from .field import DEFAULT_PRIME, SECOND_PRIME, GFp, check_prime
from .modular_lu import BLAS_PRIMES
from .sampling import Plan, check_run_memory, jacobian_pieces

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


def evaluate(
    arch: Architecture,
    prime: int,
    seed: int,
    samples: int,
    k: int,
    deadline: Deadline | None = None,
    what: str = "Jacobian",
) -> Evaluation:
    """Random parameters and inputs from ``seed``, and the Jacobian with ``k`` seeds per sample.

    The draws come first, all of them, so the Jacobian is the same whether it
    is assembled at once or in the pieces of
    :func:`~ag_attention._exact.sampling.jacobian_pieces`; ``deadline``
    (``what`` names the step) is checked before each piece.
    """
    F = GFp(prime)
    rng = np.random.default_rng(seed)
    theta = random_parameters(arch, F, rng)
    X = random_inputs(arch, F, rng, samples)
    seeds = random_seeds(arch, F, rng, samples, k)
    return Evaluation(F, theta, _assemble(arch, F, theta, X, seeds, k, deadline, what), rng)


def _assemble(
    arch: Architecture,
    F: GFp,
    theta: np.ndarray,
    X: np.ndarray,
    seeds: np.ndarray | None,
    k: int,
    deadline: Deadline | None,
    what: str,
) -> np.ndarray:
    """The Jacobian of ``X`` (``seeds``: ``k`` combinations a sample, None: every output) piece by piece."""
    pieces = jacobian_pieces(arch, X.shape[0], k)
    if deadline is not None:
        deadline.check(what)
    if len(pieces) == 1:
        return jacobian(arch, F, theta, X, seeds)
    R = arch.output_size if seeds is None else seeds.shape[1]
    J = np.empty((X.shape[0] * R, arch.parameter_count), dtype=np.int64)
    for i, (n0, n1, r0, r1) in enumerate(pieces):
        if deadline is not None and i:
            deadline.check(f"{what} (piece {i + 1} of {len(pieces)})")
        if (r0, r1) == (0, R):
            J[n0 * R : n1 * R] = jacobian(arch, F, theta, X[n0:n1], None if seeds is None else seeds[n0:n1])
            continue
        if seeds is None:  # rows r0..r1 of the identity: output (token i, coordinate m) of row i d_L + m
            part = np.zeros((1, r1 - r0, arch.tokens, arch.widths[-1]), dtype=np.int64)
            tokens, coords = np.divmod(np.arange(r0, r1), arch.widths[-1])
            part[0, np.arange(r1 - r0), tokens, coords] = 1
        else:
            part = seeds[n0:n1, r0:r1]
        J[n0 * R + r0 : n0 * R + r1] = jacobian(arch, F, theta, X[n0:n1], part)
    return J


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


def rank_run(
    arch: Architecture,
    prime: int,
    seed: int,
    samples: int,
    k: int,
    stages: Stages | None = None,
    what: str = "",
    deadline: Deadline | None = None,
) -> RankRun:
    """The Jacobian's rank and the symmetry rank at the random point of ``seed`` (``what``: the bar's prefix).

    ``deadline``: checked between the Jacobian's pieces, inside a rank on the
    BLAS route and between the steps (raises
    :class:`~ag_attention.ComputationTimeoutError`).
    """
    stages = stages or Stages()
    check_run_memory(arch, samples, k, prime, pieced=True)
    stages.add_run()
    t0 = time.perf_counter()
    step = f"{what}Jacobian of {samples:,} samples"
    stages.begin(step)
    ev = evaluate(arch, prime, seed, samples, k, deadline, step)
    stages.end()
    t1 = time.perf_counter()
    step = f"{what}rank of {ev.J.shape[0]:,} x {ev.J.shape[1]:,} over GF({prime})"
    stages.begin(step)
    r = linalg.rank(ev.J, prime, _checker(deadline, step))
    stages.end()
    t2 = time.perf_counter()
    step = f"{what}symmetry tangents"
    stages.begin(step)
    if deadline is not None:
        deadline.check(step)
    T, _ = symmetry_tangents(arch, ev.theta, ev.field)
    rs = linalg.rank(T, prime, _checker(deadline, step)) if T.shape[0] else 0
    ok = _tangents_in_kernel(ev, T)
    stages.end()
    t3 = time.perf_counter()
    rows = ev.J.shape[0]
    return RankRun(prime, seed, samples, rows // samples, rows, r, rs, ok, t1 - t0, t2 - t1, t3 - t2)


def _checker(deadline: Deadline | None, what: str) -> Callable[[int], None] | None:
    """The progress callback of a rank that checks ``deadline`` (None without one)."""
    if deadline is None:
        return None
    deadline.check(what)
    return lambda _columns: deadline.check(what)


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


def measure(
    plan: Plan,
    prior: tuple[int, int] | None,
    *,
    prime: int,
    seed: int,
    max_doublings: int,
    recheck: bool,
    stages: Stages,
    what: str = "",
    deadline: Deadline | None = None,
) -> list[RankRun]:
    """The runs of one architecture: the first, more samples while short of the upper bound, the confirmation.

    The first run as planned (:func:`ag_attention._exact.sampling.first_runs`);
    with adaptive samples, the samples doubled (at most ``max_doublings``
    times, never past the memory limit) while the rank is short of the upper
    bound and still grows; with ``recheck``, a run with a second prime and the
    next seed where the rank stays below the upper bound or the paper's
    formula.  ``prior``: the effective architecture's bounds (:func:`known_bounds`).
    ``deadline``: passed to every run (:func:`rank_run`).
    """
    proven, samples, k = plan.proven, plan.samples, plan.k
    arch = proven.architecture
    runs = [rank_run(arch, prime, seed, samples, k, stages, what, deadline)]
    if not runs[0].kernel_check:
        raise ComputationError("a symmetry tangent is not in the kernel of the Jacobian (bug)", prime=prime, seed=seed)
    for _ in range(max_doublings if plan.adaptive else 0):
        lower, upper = known_bounds(proven, runs, prior)
        if lower >= upper:
            break
        try:
            runs.append(rank_run(arch, prime, seed, 2 * samples, k, stages, what, deadline))
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
        runs.append(rank_run(arch, second, seed + 1, samples, k, stages, f"{what}confirmation: ", deadline))
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
        raise InvalidArgumentError(
            f"theta has {theta.size} entries, the architecture has {arch.parameter_count} parameters"
        )

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
