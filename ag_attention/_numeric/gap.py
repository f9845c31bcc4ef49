"""The rank of a float64 matrix from the largest gap in its singular values, or no verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["GapRank", "gap_rank"]


@dataclass(frozen=True)
class GapRank:
    rank: int | None  # None: no verdict
    gap: float  # log10 of the ratio across the chosen gap (orders of magnitude)
    runner_up: float  # the second largest log10 gap
    smallest_kept: float  # s_rank / s_1
    largest_dropped: float  # s_{rank+1} / s_1 (0 if full rank)
    clear: bool
    reason: str


def gap_rank(
    s: np.ndarray, *, min_gap: float = 4.0, min_margin: float = 2.0, size: int | None = None
) -> GapRank:
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

    >>> gap_rank([3.0, 2.0, 1.0, 1e-14]).rank
    3
    >>> gap_rank([1, 1, 1, 1e-3, 1e-6, 1e-8]).rank is None   # decays, no clear gap
    True
    >>> gap_rank([10.0 ** -k for k in range(0, 22, 3)] + [1e-35]).rank is None   # a gap between two noise values
    True
    """
    s = np.asarray(s, dtype=float)
    if s.size == 0 or s[0] == 0:
        return GapRank(0, math.inf, 0.0, 0.0, 0.0, True, "zero matrix")
    rel = s / s[0]
    logs = np.log10(np.maximum(rel, 1e-300))
    gaps = logs[:-1] - logs[1:]
    order = np.argsort(gaps)[::-1]
    best = float(gaps[order[0]]) if gaps.size else 0.0
    runner = float(gaps[order[1]]) if gaps.size > 1 else 0.0
    noise = float(np.log10(np.finfo(float).eps * max(size or 0, s.size)))
    if gaps.size and best >= min_gap and best - runner >= min_margin:
        r = int(order[0]) + 1
        if float(logs[r - 1]) - noise >= min_margin:
            return GapRank(r, best, runner, float(rel[r - 1]), float(rel[r]), True, "clear gap")
        return GapRank(None, best, runner, float(rel[r - 1]), float(rel[r]), False,
                       f"the largest gap ({best:.1f} orders) lies below the float64 noise level: s_{r} = "
                       f"{rel[r - 1]:.1e} s_1 is noise")
    headroom = float(logs[-1]) - noise  # orders between s_min and the noise level
    spread = -float(logs[-1])
    if spread < min_gap and headroom >= min_gap and headroom - best >= min_margin:
        return GapRank(int(s.size), headroom, best, float(rel[-1]), 0.0, True,
                       f"full rank: s_min = {rel[-1]:.1e} s_1, {headroom:.1f} orders above the float64 noise level")
    reason = (
        f"no clear gap: largest {best:.1f} orders of magnitude (need {min_gap}), runner-up {runner:.1f} "
        f"(need a margin of {min_margin}); the spectrum spans {spread:.1f} orders, "
        f"smallest singular value {rel[-1]:.1e} s_1"
    )
    return GapRank(None, best, runner, float(rel[-1]), 0.0, False, reason)
