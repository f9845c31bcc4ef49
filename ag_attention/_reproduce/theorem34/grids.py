"""The sizes ``(d, d', a)`` of one lightning layer that the reproduction checks, and its grids."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..._models import cor33, reduced_count

__all__ = [
    "Size",
    "M2_CANDIDATES",
    "DEFAULT_MAX_M2_SIZE",
    "M2_GRID",
    "POINT_GRID",
    "QUICK_M2_GRID",
    "QUICK_POINT_GRID",
]


@dataclass(frozen=True)
class Size:
    """One layer: input width ``d``, output width ``d'`` (``d_out``), rank bound ``a`` on ``A``."""

    d: int
    d_out: int
    a: int

    @property
    def free(self) -> bool:
        return self.a >= self.d

    @property
    def in_hypotheses(self) -> bool:
        """Theorem 3.4's hypotheses: d' > 1 or a > 1 (and A free for its proof)."""
        return self.d_out > 1 or self.a > 1

    @property
    def rank_bounded(self) -> bool:
        return 2 <= self.a < self.d

    @property
    def coordinates(self) -> int:
        return reduced_count(self.d, self.d_out)

    @property
    def dim(self) -> int:
        """Cor. 3.3 (docs/math/dimension.md, dimension-cor-3-3), as a number (whether or not its hypotheses hold)."""
        return cor33(self.d, self.d_out, self.a)

    @property
    def triple(self) -> tuple[int, int, int]:
        """``(d, d', a)`` with ``a = d`` for ``A`` free: the size as the report's summary and CSV list it."""
        return (self.d, self.d_out, min(self.a, self.d))

    def __str__(self) -> str:
        bound = "A free" if self.free else f"a={self.a}"
        return f"d={self.d}, d'={self.d_out}, {bound}"


def _sizes(spec: Iterable[tuple[int, int, int]]) -> tuple[Size, ...]:
    return tuple(Size(*s) for s in spec)


#: candidates for the Macaulay2 items, smallest first; ``--max-m2-size N`` runs those with at most
#: N reduced coordinates (the last two, 36 coordinates, do not finish in 300 s here)
M2_CANDIDATES = _sizes(
    [
        (2, 1, 1),
        (2, 1, 2),
        (2, 2, 1),
        (2, 2, 2),
        (2, 3, 1),
        (2, 3, 2),
        (3, 1, 1),
        (3, 1, 2),
        (3, 1, 3),
        (2, 4, 1),
        (2, 4, 2),
        (3, 2, 1),
        (3, 2, 2),
        (3, 2, 3),
    ]
)
DEFAULT_MAX_M2_SIZE = 24
#: the default: every candidate Macaulay2 finishes (measured: (3,2,1) in about 140 s, the others in
#: at most 40 s each), i.e. up to 24 coordinates and (3, 2, 1) with 36
M2_GRID = tuple(s for s in M2_CANDIDATES if s.coordinates <= DEFAULT_MAX_M2_SIZE) + _sizes([(3, 2, 1)])
POINT_GRID = _sizes(
    [(d, e, d) for d in range(2, 9) for e in (1, 2, 3)]
    + [(3, 2, 2), (4, 1, 3), (4, 2, 2), (4, 2, 3), (5, 2, 3), (6, 3, 4), (8, 2, 5)]
    + [(2, 1, 1), (3, 1, 1), (5, 1, 1), (8, 1, 1), (4, 2, 1), (8, 3, 1)]
)
QUICK_M2_GRID = _sizes([(2, 1, 1), (2, 1, 2), (2, 2, 2), (3, 1, 1)])
QUICK_POINT_GRID = _sizes([(2, 1, 2), (3, 2, 3), (4, 1, 4), (3, 2, 2), (4, 1, 3), (3, 1, 1), (2, 1, 1)])
