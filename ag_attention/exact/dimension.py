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
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..architecture import Architecture
from ..errors import ComputationError, InsufficientMemoryError, InvalidArgumentError
from ..models.formulas import (
    Expectation,
    analytic_upper_bound,
    effective_architecture,
    expected_dimension,
    symmetry_count,
)
from ..models.symmetries import symmetry_generators, symmetry_tangents
from ..network import inputs_memory, jacobian, jacobian_memory, random_inputs, random_parameters
from ..resources import MemoryEstimate, require_memory
from . import linalg
from .field import DEFAULT_PRIME, MAX_CONTRACTION, SECOND_PRIME, GFp, check_prime

log = logging.getLogger(__name__)

__all__ = ["DimensionResult", "RankRun", "Evaluation", "evaluate", "dimension", "default_samples", "jacobian_rank", "sampling_plan"]


def new_directions_per_sample(arch: Architecture) -> int:
    """Bound ``b`` on the rank one more input sequence can add, once shared weights are seen.

    A plain lightning network computes ``Y = (V_L ... V_1) X (S_1^T ... S_L^T)``
    with ``t x t`` attention matrices ``S_i`` (Lemma 3.6), so beyond the
    ``d_L x d_0`` product of the values a sample carries at most ``t^2`` new
    directions; several heads or skip connections give ``(H + skip)^L`` such
    products.  Never more than the ``t d_L`` outputs.
    """
    t = arch.tokens
    paths: int = (arch.heads + int(arch.skip)) ** arch.depth  # int ** int is typed Any (a negative power is a float)
    return min(t * arch.widths[-1], t * t * paths)


def sampling_plan(arch: Architecture, target: int, samples: int | None = None) -> tuple[int, int]:
    """``(N, k)``: input sequences and backward seeds per sequence to reach rank ``target``.

    ``N`` is large enough that ``N b`` exceeds the target by 10% (``b`` from
    :func:`new_directions_per_sample`), and ``k`` makes the ``N k`` rows
    exceed it by 10% too.
    """
    need = 1.1 * target + 10
    if samples is None:
        samples = math.ceil(need / new_directions_per_sample(arch)) + 1
    k = min(arch.output_size, math.ceil(need / samples) + 1)
    return samples, k


def default_samples(arch: Architecture) -> int:
    """Default number ``N`` of input sequences (see :func:`sampling_plan`)."""
    return sampling_plan(arch, _planning_bound(arch))[0]


def _planning_bound(arch: Architecture) -> int:
    bound = arch.parameter_count - symmetry_count(arch)
    analytic = analytic_upper_bound(arch)
    if analytic is not None:
        bound = min(bound, analytic[0])
    return max(bound, 1)


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


@dataclass(frozen=True)
class DimensionResult:
    """Dimension of a neuromanifold, with everything needed to trust or rerun it."""

    architecture: Architecture
    dimension: int
    parameters: int
    upper_bound: int
    symmetry_count: int
    expected: Expectation
    runs: tuple[RankRun, ...]
    seconds: float
    reduction: "DimensionResult | None" = None

    # -- derived ------------------------------------------------------------
    @property
    def main(self) -> RankRun:
        """The first run that reached the reported rank (or the first run)."""
        return next((r for r in self.runs if r.rank == self.dimension), self.runs[0])

    @property
    def symmetry_bound(self) -> int:
        """``P - rank_p T(theta)``: the upper bound from this architecture's own symmetries."""
        return min(self.parameters - r.symmetry_rank for r in self.runs)

    @property
    def prime(self) -> int:
        return self.main.prime

    @property
    def seed(self) -> int:
        return self.main.seed

    @property
    def samples(self) -> int:
        return self.main.samples

    @property
    def fiber_dimension(self) -> int:
        """Generic fiber dimension ``P - dim`` (exact when certified, else an upper bound)."""
        return self.parameters - self.dimension

    @property
    def certified(self) -> bool:
        """True when the GF(p) rank (lower bound) meets the symmetry bound (upper bound)."""
        return self.dimension == self.upper_bound

    @property
    def formula_applies(self) -> bool:
        return self.expected.applies

    @property
    def agrees(self) -> bool | None:
        """Whether the dimension equals the formula, where that is proven.

        True: equal.  False: proven different (certified, or a lower bound above
        the formula).  None: no formula, or a lower bound below the formula
        that the upper bounds do not decide.
        """
        value = self.expected.value
        if value is None:
            return None
        if self.dimension == value:
            return True
        if self.certified or self.dimension > value or self.upper_bound < value:
            return False
        return None

    @property
    def rows_limit_rank(self) -> bool:
        """True when every run had fewer rows than the upper bound (too few samples to reach it)."""
        return all(r.rows < self.upper_bound for r in self.runs)

    def comparison(self) -> str:
        """The computed value against the formula, in words."""
        value = self.expected.value
        if value is None:
            return "no formula"
        if self.agrees:
            return "agrees"
        if self.agrees is False:
            return "DIFFERS (proven)" if self.certified or self.upper_bound < value else "DIFFERS (lower bound above it)"
        why = (
            f"only {self.main.rows} rows: too few samples to reach it, use more"
            if self.rows_limit_rank
            else f"lower bound below it, confirmed by {len(self.runs)} runs, but not proven"
        )
        return f"not decided: {why}"

    @property
    def certificate(self) -> str:
        red = self.reduction
        if self.certified:
            analytic = analytic_upper_bound(self.architecture)
            if analytic is not None and self.upper_bound == analytic[0] < self.symmetry_bound:
                return (
                    f"exact: rank over GF(p) = {self.dimension} is a lower bound and equals the proven "
                    f"upper bound {analytic[0]} ({analytic[1]})"
                )
            if red is not None and self.upper_bound < self.symmetry_bound:
                return (
                    f"exact: M equals the neuromanifold of the effective architecture "
                    f"{red.architecture.describe()} (same functions); rank over GF(p) = {self.dimension} "
                    f"is a lower bound and equals its symmetry upper bound {self.upper_bound} "
                    f"(this architecture's own symmetries only give {self.symmetry_bound})"
                )
            return (
                f"exact: rank over GF({self.prime}) = {self.dimension} is a lower bound and equals "
                f"the symmetry upper bound P - rank(T) = {self.upper_bound}"
            )
        primes = sorted({r.prime for r in self.runs})
        confirm = f", confirmed with {len(self.runs)} random points over GF({', '.join(map(str, primes))})" if len(self.runs) > 1 else ""
        if self.rows_limit_rank:
            return (
                f"lower bound: dim >= {self.dimension} (rank over GF(p){confirm}); with {self.main.rows} rows "
                f"the rank cannot reach the upper bound dim <= {self.upper_bound}: use more samples"
            )
        return (
            f"lower bound: dim >= {self.dimension} (rank over GF(p){confirm}); the known symmetries give "
            f"dim <= {self.upper_bound}, so {self.upper_bound - self.dimension} kernel direction(s) "
            "are not explained by them"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "architecture": self.architecture.to_dict(),
            "dimension": self.dimension,
            "parameters": self.parameters,
            "fiber_dimension": self.fiber_dimension,
            "expected": self.expected.value,
            "formula": self.expected.formula,
            "formula_applies": self.formula_applies,
            "failed_hypotheses": self.expected.failed_hypotheses,
            "agrees": self.agrees,
            "comparison": self.comparison(),
            "upper_bound": self.upper_bound,
            "symmetry_count": self.symmetry_count,
            "certified": self.certified,
            "certificate": self.certificate,
            "prime": self.prime,
            "seed": self.seed,
            "samples": self.samples,
            "rows": self.main.rows,
            "seeds_per_sample": self.main.seeds_per_sample,
            "runs": [r.to_dict() for r in self.runs],
            "effective_architecture": None if self.reduction is None else self.reduction.architecture.to_dict(),
            "seconds": round(self.seconds, 4),
            "numerical": False,
        }

    def __repr__(self) -> str:
        return (
            f"DimensionResult({self.architecture.describe()}: dim={self.dimension}, P={self.parameters}, "
            f"{'certified' if self.certified else 'lower bound'}, p={self.prime}, seed={self.seed})"
        )

    def __str__(self) -> str:
        e = self.expected
        if e.value is None:
            formula = f"no formula ({e.note})"
        else:
            verdict = self.comparison()
            hyp = "hypotheses hold" if e.applies else "does not apply, fails: " + "; ".join(e.failed_hypotheses)
            formula = f"{e.formula} gives {e.value} ({verdict}; {hyp})"
        lines = [
            f"{self.architecture.describe()}",
            f"  dimension        {self.dimension}  ({'certified exact' if self.certified else 'certified lower bound'})",
            f"  parameters       {self.parameters}",
            f"  fiber dimension  {self.fiber_dimension if self.certified else f'at most {self.fiber_dimension} (P minus a lower bound)'}",
            f"  formula          {formula}",
            *([f"  note             {e.note}"] if e.note and e.value is not None else []),
            f"  certificate      {self.certificate}",
            f"  prime {self.prime}, seed {self.seed}, {self.samples} samples x {self.main.seeds_per_sample} output combinations = {self.main.rows} rows, {self.seconds:.2f} s",
        ]
        return "\n".join(lines)


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


def check_exact_sizes(arch: Architecture) -> None:
    """Sizes the int64 GF(p) arithmetic can contract exactly (tokens, widths, ranks up to 65,534)."""
    for name, values in (("tokens", (arch.tokens,)), ("widths", arch.widths), ("ranks", arch.ranks)):
        for v in values:
            if v > MAX_CONTRACTION:
                raise InvalidArgumentError(
                    f"{name}={v}: exact GF(p) arithmetic on int64 contracts at most {MAX_CONTRACTION:,} terms at once; "
                    "use a smaller size"
                )


def run_memory(arch: Architecture, samples: int, k: int) -> MemoryEstimate:
    """Peak memory of one run (:func:`_run`): inputs, seeds, Jacobian, its FLINT copy, symmetry tangents.

    Stages: assembling the Jacobian (forward caches and adjoints), its rank
    (FLINT's copy and LU workspace, while the numpy Jacobian is alive), and
    the symmetry tangents (a list of rows, their array, their rank) beside it.
    """
    P = arch.parameter_count
    seeded = None if k >= arch.output_size else k
    rows = samples * (arch.output_size if seeded is None else k)
    jac = jacobian_memory(arch, samples, seeded)
    J = 8 * rows * P
    fixed = inputs_memory(arch, samples, seeded) + MemoryEstimate(8 * P, {"parameters": 8 * P})
    rank_stage = MemoryEstimate(J + linalg.rank_memory(rows, P), {"FLINT copy of the Jacobian": linalg.rank_memory(rows, P)})
    g = symmetry_generators(arch)
    sym_stage = MemoryEstimate(J + 2 * 8 * g * P + linalg.rank_memory(g, P), {f"symmetry tangents {g:,} x {P:,}": 2 * 8 * g * P})
    return fixed + (jac | rank_stage | sym_stage)


def check_run_memory(arch: Architecture, samples: int, k: int) -> None:
    """Refuse a run that does not fit in memory (before allocating anything of it)."""
    require_memory(
        run_memory(arch, samples, k),
        f"{arch.describe()} with {samples:,} samples x {min(k, arch.output_size)} rows",
        "use fewer samples (--samples) or a smaller network",
    )


def _run(arch: Architecture, prime: int, seed: int, samples: int, k: int) -> RankRun:
    check_run_memory(arch, samples, k)
    t0 = time.perf_counter()
    ev = evaluate(arch, prime, seed, samples, k)
    F, theta, J, rng = ev.field, ev.theta, ev.J, ev.rng
    t1 = time.perf_counter()
    r = linalg.rank(J, prime)
    t2 = time.perf_counter()
    T, _ = symmetry_tangents(arch, theta, F)
    rs = linalg.rank(T, prime) if T.shape[0] else 0
    # every symmetry tangent must be in the kernel (a polynomial identity, so
    # also mod p); checked on random combinations (Freivalds: error <= p^-2)
    ok = True
    if T.shape[0]:
        for _ in range(2):
            w = F.random(rng, T.shape[0])
            v = F.matvec(np.ascontiguousarray(T.T), w)
            ok &= not np.any(F.matvec(J, v))
    t3 = time.perf_counter()
    return RankRun(prime, seed, samples, J.shape[0] // samples, J.shape[0], r, rs, bool(ok), t1 - t0, t2 - t1, t3 - t2)


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
    if not isinstance(arch, Architecture):
        raise InvalidArgumentError(f"arch={arch!r}: must be an Architecture")
    if arch.normalized:
        raise InvalidArgumentError(
            "normalized attention is not polynomial: use ag_attention.numeric.numerical_dimension"
        )
    prime = check_prime(prime)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidArgumentError(f"seed={seed!r}: must be a non-negative integer")
    adaptive = samples is None
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1):
        raise InvalidArgumentError(f"samples={samples!r}: must be a positive integer")
    samples, k = sampling_plan(arch, _planning_bound(arch), None if samples is None else int(samples))
    if full_rows:
        k = arch.output_size
    seed = int(seed)
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1):
        raise InvalidArgumentError(f"threads={threads!r}: must be a positive integer or None (all CPUs)")
    check_exact_sizes(arch)
    # the first run is refused before anything is computed (also before the effective architecture's run)
    check_run_memory(arch, samples, k)
    # FLINT's threads for this call only (the recursive call for the effective architecture nests)
    with linalg.threads(threads):
        t0 = time.perf_counter()
        P = arch.parameter_count
        expected = expected_dimension(arch)
        # A narrower architecture with the same neuromanifold gives a second
        # lower and upper bound (see effective_architecture).
        reduction = None
        eff = effective_architecture(arch)
        if eff != arch:
            reduction = dimension(
                eff, prime=prime, seed=seed, samples=None, recheck=recheck, threads=threads,
                max_doublings=max_doublings, full_rows=full_rows,
            )
        runs = [_run(arch, prime, seed, samples, k)]
        if not runs[0].kernel_check:
            raise ComputationError("a symmetry tangent is not in the kernel of the Jacobian (bug)", prime=prime, seed=seed)

        def best() -> int:
            return max([r.rank for r in runs] + ([reduction.dimension] if reduction else []))

        analytic = analytic_upper_bound(arch)

        def upper() -> int:
            bounds = [P - r.symmetry_rank for r in runs]
            if reduction is not None:
                bounds.append(reduction.upper_bound)
            if analytic is not None:
                bounds.append(analytic[0])
            return min(bounds)

        # more samples while the rank is short of the upper bound and still growing
        for _ in range(max_doublings if adaptive else 0):
            if best() >= upper():
                break
            try:
                runs.append(_run(arch, prime, seed, 2 * samples, k))
            except InsufficientMemoryError as exc:
                log.info("not doubling the samples of %s: %s", arch.describe(), exc)
                break
            samples *= 2
            if runs[-1].rank <= runs[-2].rank:
                break
        below_formula = expected.value is not None and best() < expected.value
        if recheck and (best() < upper() or below_formula):
            second = SECOND_PRIME if prime != SECOND_PRIME else DEFAULT_PRIME
            runs.append(_run(arch, second, seed + 1, samples, k))
        if best() > upper():
            raise ComputationError(
                f"{arch.describe()}: the rank {best()} exceeds the proven upper bound {upper()} (bug)", prime=prime, seed=seed
            )
        seconds = time.perf_counter() - t0
        return DimensionResult(
            architecture=arch,
            dimension=best(),
            parameters=P,
            upper_bound=upper(),
            symmetry_count=symmetry_count(arch),
            expected=expected,
            runs=tuple(runs),
            seconds=seconds,
            reduction=reduction,
        )


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
