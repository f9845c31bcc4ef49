"""The result of :func:`ag_attention.numerical_dimension`: a float64 rank, and for softmax networks proven bounds.

The float64 rank proves nothing.  For normalized attention the result also
carries a :class:`~ag_attention._numeric.certified.RankCertificate`: a lower
bound by ball arithmetic and an upper bound by the symmetry families 1 and 2;
when they meet the dimension is ``certified`` (a proof, see
``ag_attention/_numeric/certified.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._models import Expectation
from .._results import ResultMixin, dimension_fields
from .certified import RankCertificate
from .gap import GapRank

__all__ = ["NumericalResult"]


@dataclass(frozen=True)
class NumericalResult(ResultMixin):
    """Dimension of a neuromanifold: a float64 rank, and for softmax networks proven bounds.

    ``dimension`` is the certified value when the bounds of ``certificate`` meet (``certified``), otherwise
    the float64 rank (numerical, not a proof).

    In a notebook it shows as its summary and a table of its fields
    (``_repr_markdown_``); ``to_frame()`` gives it as a one-row pandas
    ``DataFrame`` (its columns: the flattened ``to_dict()``).
    """

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
    #: proven bounds (normalized attention): the lower bound by ball arithmetic and the upper bound by the
    #: symmetry families 1 and 2; None if not computed
    certificate: RankCertificate | None = None

    def _certificate(self) -> RankCertificate | None:
        return self.certificate

    @property
    def certified(self) -> bool:
        """The lower bound by ball arithmetic equals the upper bound by the symmetry families 1 and 2."""
        c = self._certificate()
        return c is not None and c.certified

    @property
    def lower_bound(self) -> int | None:
        c = self._certificate()
        return None if c is None else c.lower

    @property
    def upper_bound(self) -> int | None:
        c = self._certificate()
        return None if c is None else c.upper

    @property
    def fiber_dimension(self) -> int | None:
        return None if self.dimension is None else self.parameters - self.dimension

    @property
    def formula_applies(self) -> bool:
        return self.expected.applies

    @property
    def agrees(self) -> bool | None:
        """True when the dimension equals the formula; False only for a certified difference; otherwise None.

        A float64 rank proves nothing, so an uncertified difference is never
        reported as ``False`` (proven) here: see :meth:`comparison`.
        """
        if self.expected.value is None or self.dimension is None:
            return None
        if self.certified:
            return self.dimension == self.expected.value
        return True if self.dimension == self.expected.value else None

    def comparison(self) -> str:
        """The numerical rank against the formula, in words (never a proven difference)."""
        value = self.expected.value
        if value is None:
            return "no formula"
        if self.dimension is None:
            return "no verdict: " + (self.undecided or self.gap.reason)
        if self.certified:
            return (
                "agrees (certified)" if self.dimension == value else f"differs (certified: {self.dimension} vs {value})"
            )
        if self.dimension == value:
            return "agrees (numerically)"
        return f"differs numerically ({self.dimension} vs {value}; float64 rank, not a proof)"

    def to_dict(self) -> dict[str, Any]:
        return {
            **dimension_fields(self),
            "undecided": self.undecided or None,
            "temperature": self.architecture.temperature,
            "computed_at_temperature": self.computed_temperature,
            **self._gap_fields(),
            "numerical": not self.certified,
            "numerical_dimension": self.gap.rank if not self.undecided else None,
            "certified": self.certified,
            "certificate": self.certificate_text(),
            **(c.to_dict() if (c := self._certificate()) is not None else {}),
            "prime": None,
            "seed": self.seed,
            "samples": self.samples,
            "rows": self.rows,
            "sample_doublings": [{"samples": n, "rank": r} for n, r in self.history],
            "seconds": round(self.seconds, 4),
        }

    def _gap_fields(self) -> dict[str, Any]:
        """The gap as reported (reproducible: no digit depends on the rounding of noise) and the raw numbers."""
        g = self.gap
        reported = g.reported
        if g.rank is None:
            at = None
        elif g.to_noise_level:
            at = (
                "full rank: s_rank to the float64 noise level eps * size * s_1"
                if g.rank == g.values
                else "s_rank to the float64 noise level eps * size * s_1 (s_rank+1 is noise)"
            )
        else:
            at = "between s_rank and s_rank+1"
        return {
            # what the text says: None without a verdict (and for the zero matrix)
            "singular_value_gap": None if reported is None or math.isinf(reported) else round(reported, 2),
            "gap_at": at,
            "gap_to_noise_level": g.to_noise_level,
            "gap_runner_up": None if g.resolved_runner_up is None else round(g.resolved_runner_up, 2),
            "clear_gap": g.clear,
            "gap_reason": g.reason,
            # the float64 numbers themselves: their digits below the noise level differ between machines
            "noise_level": g.noise_level,
            "singular_value_gap_raw": None if math.isinf(g.gap) else g.gap,
            "gap_runner_up_raw": g.runner_up,
            "smallest_kept": g.smallest_kept,
            "largest_dropped": g.largest_dropped,
        }

    def certificate_text(self) -> str:
        """What is proven, in words."""
        num = "float64 singular values, rank at the largest gap (not a proof)"
        c = self._certificate()
        if c is None:
            return "numerical: " + num
        return c.describe() + "; numerical: " + num

    def __repr__(self) -> str:
        return (
            f"NumericalResult({self.architecture.describe()}: dim={self.dimension}, P={self.parameters}, "
            f"gap {self.gap.describe()}, {'certified' if self.certified else 'numerical'}, seed={self.seed})"
        )

    def __str__(self) -> str:
        e = self.expected
        if e.value is None:
            formula = "no formula"
        else:
            verdict = self.comparison()
            conjecture = "; a conjecture" if e.conjectural else ""
            formula = f"{e.formula} gives {e.value} ({verdict}; {e.hypotheses_text()}{conjecture})"
        dim = (
            "no verdict (" + (self.undecided or self.gap.reason) + ")"
            if self.dimension is None
            else str(self.dimension)
        )
        c = self._certificate()
        how = "(certified)" if self.certified else "(numerical, float64: not certified)"
        bounds = []
        if c is not None:
            low = "none" if c.lower is None else str(c.lower)
            ball = (
                ""
                if c.determinant is None
                else (
                    f": {c.determinant.size} x {c.determinant.size} minor, determinant {c.determinant.text} at "
                    f"{c.determinant.bits} bits{'' if c.determinant.excludes_zero else ' (contains 0)'}"
                )
            )
            bounds = [
                f"  lower bound      {low}  (lower bound by ball arithmetic{ball})",
                f"  upper bound      {c.upper}  (upper bound by the symmetry families 1 and 2: P - rank_p of "
                f"{c.symmetry_rank} tangents)",
                f"  certificate      {c.describe()}",
            ]
        return "\n".join(
            [
                self.architecture.describe(),
                f"  dimension        {dim}  {how}",
                *bounds,
                f"  parameters       {self.parameters}",
                f"  singular values  {self.gap.summary()}",
                f"  formula          {formula}",
                *(
                    [
                        f"  temperature      {self.architecture.temperature:g} only rescales A "
                        "(phi_(A,V,tau) = phi_(A/tau,V,1)): "
                        f"same neuromanifold, computed at tau = {self.computed_temperature:g}"
                    ]
                    if self.architecture.temperature != self.computed_temperature
                    else []
                ),
                f"  seed {self.seed}, {self.samples} samples, {self.rows} rows, {self.seconds:.2f} s",
            ]
        )
