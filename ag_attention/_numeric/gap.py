"""The rank of a float64 matrix from the largest gap in its singular values, or no verdict.

What is reported is reproducible.  A singular value at most ``NOISE_MARGIN``
orders of magnitude above the float64 noise level ``eps * size * s_1`` (or
below it) is noise: its computed value depends on the BLAS kernel, the CPU
kind and the threads (a dropped value of ``1.2e-16 s_1`` on one machine is
``1.8e-16 s_1`` on another).  So a gap whose lower side is noise is reported
*to the noise level*, ``log10(s_r / (eps * size * s_1))``, as the gap of a
full-rank spectrum always was; only the kept values enter it, and those are
computed to nearly full precision.  The raw ratio stays available
(:attr:`GapRank.gap`) but is never what is printed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["GapRank", "gap_rank", "NOISE_MARGIN"]

#: a singular value within this many orders of magnitude above the float64 noise level ``eps * size * s_1``
#: (or below it) is noise.  Above it, the value's rounding error (at most about the noise level) is below 1 %,
#: i.e. below 0.005 in log10, a twentieth of the one decimal a gap is printed with.
NOISE_MARGIN = 2.0


@dataclass(frozen=True)
class GapRank:
    """The rank at the largest gap of a spectrum, or no verdict (``rank=None``), with the gap in orders of magnitude.

    :attr:`gap` and :attr:`runner_up` are the raw float64 numbers; :attr:`reported`, :meth:`describe` and
    :meth:`summary` give what is printed, which no rounding of noise can change (the module docstring).
    """

    rank: int | None  # None: no verdict
    #: log10 of the ratio across the chosen gap (orders of magnitude), raw: for a full rank, from s_min to the
    #: noise level; otherwise s_rank / s_rank+1, whose lower side may be noise (see :attr:`reported`)
    gap: float
    #: the second largest log10 gap, raw (it may lie between two noise values: see :attr:`resolved_runner_up`)
    runner_up: float
    smallest_kept: float  # s_rank / s_1
    largest_dropped: float  # s_{rank+1} / s_1 (0 if full rank)
    clear: bool
    reason: str
    #: the float64 noise level ``eps * size`` relative to s_1 (``numpy.linalg.matrix_rank``'s tolerance)
    noise_level: float = 0.0
    #: the largest gap other than the chosen one between two singular values above the noise
    #: (``NOISE_MARGIN``); None if there is none
    resolved_runner_up: float | None = None
    #: how many singular values there were (full rank: ``rank == values``)
    values: int = 0

    def _is_noise(self, relative: float) -> bool:
        return bool(relative <= self.noise_level * 10.0**NOISE_MARGIN)

    @property
    def to_noise_level(self) -> bool:
        """The gap is measured from ``s_rank`` to the noise level: full rank, or ``s_rank+1`` is noise."""
        if self.rank is None or self.rank == 0 or math.isinf(self.gap):
            return False
        return self._is_noise(self.largest_dropped)

    @property
    def reported(self) -> float | None:
        """The gap as reported, in orders of magnitude (None without a verdict; inf for the zero matrix).

        ``log10(s_rank / (eps * size * s_1))`` when :attr:`to_noise_level`, else ``log10(s_rank / s_rank+1)``
        (both above the noise): never a number that depends on the rounding of noise.
        """
        if self.rank is None:
            return None
        if self.to_noise_level and self.noise_level > 0:
            return math.log10(self.smallest_kept / self.noise_level)
        return self.gap

    def describe(self) -> str:
        """The reported gap in words: ``"12.7 orders to the noise level"``, ``"9.3 orders"``, ``"no clear gap"``."""
        value = self.reported
        if value is None:
            return "no clear gap"
        if math.isinf(value):
            return "zero matrix"
        return f"{value:.1f} orders" + (" to the noise level" if self.to_noise_level else "")

    def runner_up_text(self) -> str:
        """The largest other gap between two singular values above the noise, in words."""
        if self.resolved_runner_up is None:
            return "no other gap above the noise"
        return f"runner-up {self.resolved_runner_up:.1f}"

    def summary(self) -> str:
        """One line: where the gap is, how large, and the runner-up (all reproducible)."""
        if self.rank is None:
            return "no clear gap"
        if self.rank == 0:
            return "zero matrix"
        value = self.reported
        assert value is not None
        if self.to_noise_level:
            below = "full rank" if self.rank == self.values else f"s_{self.rank + 1} and below are noise"
            size = round(self.noise_level / float(np.finfo(float).eps))
            where = f"from s_{self.rank} to the float64 noise level eps x {size} x s_1 ({below})"
        else:
            where = f"between s_{self.rank} and s_{self.rank + 1}"
        return f"gap of {value:.1f} orders of magnitude {where}; {self.runner_up_text()}"


def _resolved_runner_up(logs: np.ndarray, gaps: np.ndarray, resolved: np.ndarray, chosen: int | None) -> float | None:
    """The largest gap between two resolved singular values, leaving out the gap at index ``chosen``."""
    both = resolved[:-1] & resolved[1:]
    if chosen is not None and 0 <= chosen < both.size:
        both[chosen] = False
    return float(gaps[both].max()) if both.any() else None


def _gap_text(i: int, gaps: np.ndarray, logs: np.ndarray, resolved: np.ndarray, noise: float) -> str:
    """The gap between ``s_{i+1}`` and ``s_{i+2}`` without noise digits."""
    if resolved[i + 1]:
        return f"{gaps[i]:.1f} orders of magnitude"
    if resolved[i]:
        return f"{float(logs[i]) - noise:.1f} orders of magnitude to the noise level"
    return "within the noise"


def gap_rank(s: np.ndarray, *, min_gap: float = 4.0, min_margin: float = 2.0, size: int | None = None) -> GapRank:
    """Rank from singular values ``s`` (descending) by the largest gap, in orders of magnitude.

    A rank ``r < len(s)`` needs the gap between ``s_r`` and ``s_{r+1}`` to span
    at least ``min_gap`` orders of magnitude and to beat every other gap by
    ``min_margin`` orders.  Full rank needs the same of the gap between the
    smallest singular value and the float64 noise level ``eps * size * s_1``
    (``size``: the larger side of the matrix, default ``len(s)``), and the
    whole spectrum to span less than ``min_gap`` orders, so no rank drop can
    hide in it.  A gap whose upper side is itself within ``min_margin`` orders
    of that noise level is noise too.  Otherwise there is no verdict
    (``rank=None``).

    The gap reported (:meth:`GapRank.describe`, :attr:`GapRank.reported`)
    runs to the noise level when ``s_{r+1}`` is noise (within
    ``NOISE_MARGIN`` orders above that level, or below it): the printed
    digits never depend on the rounding of noise.

    >>> gap_rank([3.0, 2.0, 1.0, 1e-14]).rank
    3
    >>> gap_rank([1, 1, 1, 1e-3, 1e-6, 1e-8]).rank is None   # decays, no clear gap
    True
    >>> gap_rank([10.0 ** -k for k in range(0, 22, 3)] + [1e-35]).rank is None   # a gap between two noise values
    True
    >>> g = gap_rank([1.0, 0.3, 1e-17], size=100)   # s_3 is noise: the gap runs to eps * 100 (log10: -13.65)
    >>> g.describe(), round(g.gap, 1)   # the raw 16.5 would depend on the rounding of the noise
    ('13.1 orders to the noise level', 16.5)
    """
    s = np.asarray(s, dtype=float)
    noise_level = float(np.finfo(float).eps * max(size or 0, s.size))
    if s.size == 0 or s[0] == 0:
        return GapRank(0, math.inf, 0.0, 0.0, 0.0, True, "zero matrix", noise_level, None, int(s.size))
    rel = s / s[0]
    logs = np.log10(np.maximum(rel, 1e-300))
    gaps = logs[:-1] - logs[1:]
    order = np.argsort(gaps)[::-1]
    best = float(gaps[order[0]]) if gaps.size else 0.0
    runner = float(gaps[order[1]]) if gaps.size > 1 else 0.0
    noise = math.log10(noise_level)
    resolved = logs - noise > NOISE_MARGIN
    if gaps.size and best >= min_gap and best - runner >= min_margin:
        r = int(order[0]) + 1
        if float(logs[r - 1]) - noise >= min_margin:
            return GapRank(
                r,
                best,
                runner,
                float(rel[r - 1]),
                float(rel[r]),
                True,
                "clear gap",
                noise_level,
                _resolved_runner_up(logs, gaps, resolved, r - 1),
                int(s.size),
            )
        return GapRank(
            None,
            best,
            runner,
            float(rel[r - 1]),
            float(rel[r]),
            False,
            f"the largest gap lies at the float64 noise level: s_{r} is within {min_margin:g} orders of "
            f"magnitude of eps x {max(size or 0, s.size)} x s_1 = {noise_level:.1e} s_1, so it is noise",
            noise_level,
            _resolved_runner_up(logs, gaps, resolved, r - 1),
            int(s.size),
        )
    headroom = float(logs[-1]) - noise  # orders between s_min and the noise level
    spread = -float(logs[-1])
    if spread < min_gap and headroom >= min_gap and headroom - best >= min_margin:
        return GapRank(
            int(s.size),
            headroom,
            best,
            float(rel[-1]),
            0.0,
            True,
            f"full rank: s_min = {rel[-1]:.1e} s_1, {headroom:.1f} orders above the float64 noise level",
            noise_level,
            _resolved_runner_up(logs, gaps, resolved, None),
            int(s.size),
        )
    largest = _gap_text(int(order[0]), gaps, logs, resolved, noise) if gaps.size else "none"
    second = _gap_text(int(order[1]), gaps, logs, resolved, noise) if gaps.size > 1 else "none"
    span = (
        f"the spectrum spans {spread:.1f} orders, smallest singular value {rel[-1]:.1e} s_1"
        if resolved[-1]
        else f"the spectrum reaches the float64 noise level eps x {max(size or 0, s.size)} x s_1 = "
        f"{noise_level:.1e} s_1"
    )
    reason = (
        f"no clear gap: largest {largest} (need {min_gap}), runner-up {second} (need a margin of {min_margin}); {span}"
    )
    return GapRank(
        None,
        best,
        runner,
        float(rel[-1]),
        0.0,
        False,
        reason,
        noise_level,
        _resolved_runner_up(logs, gaps, resolved, None),
        int(s.size),
    )
