"""The result of :func:`~ag_attention.dimension`: the bounds, the verdict against the formula, the certificate.

docs/math/certificates.md (certificates-summary, certificates-verdicts): the
dimension is certified exact when the GF(p) rank (a lower bound) meets an
upper bound (the symmetries, a proven analytic bound, or the effective
architecture's); otherwise it is a lower bound, and a formula it falls short
of is neither confirmed nor refuted.  :func:`decide` is the last step of
:func:`~ag_attention.dimension`: the runs' bounds against what is proven.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._architecture import Architecture
from .._errors import ComputationError
from .._models import Expectation, Proven
from .._results import ResultMixin, dimension_fields
from .runs import RankRun, known_bounds
from .spans import engine_bound

__all__ = ["DimensionResult", "decide"]


@dataclass(frozen=True)
class DimensionResult(ResultMixin):
    """Dimension of a neuromanifold, with everything needed to trust or rerun it.

    In a notebook it shows as its summary and a table of its fields
    (``_repr_markdown_``); ``to_frame()`` gives it as a one-row pandas
    ``DataFrame`` (its columns: the flattened ``to_dict()``).
    """

    architecture: Architecture
    dimension: int
    parameters: int
    upper_bound: int
    symmetry_count: int
    expected: Expectation
    runs: tuple[RankRun, ...]
    seconds: float
    reduction: DimensionResult | None = None

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
            return (
                "DIFFERS (proven)" if self.certified or self.upper_bound < value else "DIFFERS (lower bound above it)"
            )
        why = (
            f"only {self.main.rows} rows: too few samples to reach it, use more"
            if self.rows_limit_rank
            else f"lower bound below it, confirmed by {len(self.runs)} runs, but not proven"
        )
        return f"not decided: {why}"

    @property
    def closed_by(self) -> str | None:
        """Which upper bound the rank meets: ``"symmetries"``, ``"effective-architecture"``, a bound's name, or None.

        A bound's name is one of docs/math/bounds.md's (``"composition"``,
        ``"span"``, ...): it is named when it is smaller than the symmetry
        bound, the symmetries otherwise.
        """
        if not self.certified:
            return None
        if self.upper_bound >= self.symmetry_bound:
            return "symmetries"
        red = self.reduction
        if red is not None and red.symmetry_bound == self.upper_bound:
            return "effective-architecture"  # the narrower network's own symmetries close it
        analytic = engine_bound(self.architecture)
        if analytic is not None and self.upper_bound == analytic.value:
            return analytic.name
        return "effective-architecture"  # a bound of the effective architecture's own

    @property
    def certificate(self) -> str:
        red = self.reduction
        if self.certified:
            analytic = engine_bound(self.architecture)
            if analytic is not None and self.closed_by == analytic.name:
                return (
                    f"exact: rank over GF(p) = {self.dimension} is a lower bound and equals the proven "
                    f"{analytic.describe()}"
                )
            if red is not None and self.closed_by == "effective-architecture":  # red is set when it closes
                return (
                    f"exact: M equals the neuromanifold of the effective architecture "
                    f"{red.architecture.describe()} (same functions); rank over GF(p) = {self.dimension} "
                    f"is a lower bound and equals its symmetry upper bound {self.upper_bound} "
                    f"(this architecture's own symmetries only give {self.symmetry_bound})"
                )
            torus = (
                " (the rotations at a random point of the frequencies' torus: a lower bound at the true frequencies, "
                "docs/math/rotary.md)"
                if self.architecture.positions is not None
                else ""
            )
            return (
                f"exact: rank over GF({self.prime}) = {self.dimension} is a lower bound{torus} and equals "
                f"the symmetry upper bound P - rank(T) = {self.upper_bound}"
            )
        primes = sorted({r.prime for r in self.runs})
        confirm = (
            f", confirmed with {len(self.runs)} random points over GF({', '.join(map(str, primes))})"
            if len(self.runs) > 1
            else ""
        )
        if self.rows_limit_rank:
            return (
                f"lower bound: dim >= {self.dimension} (rank over GF(p){confirm}); with {self.main.rows} rows "
                f"the rank cannot reach the upper bound dim <= {self.upper_bound}: use more samples"
            )
        return (
            f"lower bound: dim >= {self.dimension} (rank over GF(p){confirm}); the known symmetries and the "
            f"bounds of docs/math/bounds.md give dim <= {self.upper_bound}, so {self.upper_bound - self.dimension} "
            "kernel direction(s) are not explained by them"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **dimension_fields(self),
            "upper_bound": self.upper_bound,
            "symmetry_count": self.symmetry_count,
            "certified": self.certified,
            "certificate": self.certificate,
            "closed_by": self.closed_by,
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
            formula = f"{e.formula} gives {e.value} ({verdict}; {e.hypotheses_text()})"
        fiber = self.fiber_dimension if self.certified else f"at most {self.fiber_dimension} (P minus a lower bound)"
        bound = "certified exact" if self.certified else "certified lower bound"
        lines = [
            f"{self.architecture.describe()}",
            f"  dimension        {self.dimension}  ({bound})",
            f"  parameters       {self.parameters}",
            f"  fiber dimension  {fiber}",
            f"  formula          {formula}",
            *([f"  note             {e.note}"] if e.note and e.value is not None else []),
            f"  certificate      {self.certificate}",
            f"  prime {self.prime}, seed {self.seed}, {self.samples} samples x {self.main.seeds_per_sample} "
            f"output combinations = {self.main.rows} rows, {self.seconds:.2f} s",
        ]
        return "\n".join(lines)


def decide(
    proven: Proven, runs: Sequence[RankRun], reduction: DimensionResult | None, seconds: float
) -> DimensionResult:
    """The result of the runs of ``proven.architecture``: exact where the bounds meet (a rank above one is a bug).

    ``reduction``: the result of the effective architecture (the same
    neuromanifold), whose bounds hold here too.
    """
    lower, upper = known_bounds(
        proven, runs, None if reduction is None else (reduction.dimension, reduction.upper_bound)
    )
    if lower > upper:
        raise ComputationError(
            f"{proven.architecture.describe()}: the rank {lower} exceeds the proven upper bound {upper} (bug)",
            prime=runs[0].prime,
            seed=runs[0].seed,
        )
    return DimensionResult(
        architecture=proven.architecture,
        dimension=lower,
        parameters=proven.parameters,
        upper_bound=upper,
        symmetry_count=proven.symmetry_count,
        expected=proven.expected,
        runs=tuple(runs),
        seconds=seconds,
        reduction=reduction,
    )
