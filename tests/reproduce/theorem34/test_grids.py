"""The sizes of one layer that the Theorem 3.4 reproduction checks (ag_attention._reproduce.theorem34.grids)."""

import pytest

from ag_attention._models.formulas import cor33
from ag_attention._reproduce.theorem34.grids import (
    DEFAULT_MAX_M2_SIZE,
    M2_CANDIDATES,
    M2_GRID,
    POINT_GRID,
    QUICK_M2_GRID,
    QUICK_POINT_GRID,
    Size,
)


@pytest.mark.parametrize(
    "size, free, hypotheses, bounded, triple, text",
    [
        (Size(2, 1, 2), True, True, False, (2, 1, 2), "d=2, d'=1, A free"),
        (Size(3, 2, 5), True, True, False, (3, 2, 3), "d=3, d'=2, A free"),  # a above d: A free, listed as a = d
        (Size(4, 2, 3), False, True, True, (4, 2, 3), "d=4, d'=2, a=3"),
        (Size(3, 1, 1), False, False, False, (3, 1, 1), "d=3, d'=1, a=1"),  # outside Theorem 3.4: d' = 1 and a = 1
        (
            Size(3, 2, 1),
            False,
            True,
            False,
            (3, 2, 1),
            "d=3, d'=2, a=1",
        ),  # a = 1 is no rank-bounded domain (2 <= a < d)
    ],
)
def test_a_size_says_what_it_is(size, free, hypotheses, bounded, triple, text):
    assert (size.free, size.in_hypotheses, size.rank_bounded, size.triple, str(size)) == (
        free,
        hypotheses,
        bounded,
        triple,
        text,
    )


def test_coordinates_and_dimension():
    assert Size(2, 1, 2).coordinates == 6 and Size(3, 2, 1).coordinates == 36  # d d' d(d+1)/2
    assert all(s.dim == cor33(s.d, s.d_out, s.a) for s in POINT_GRID)
    assert Size(2, 1, 2).dim == 5


def test_the_grids():
    assert [s.coordinates for s in M2_CANDIDATES] == sorted(s.coordinates for s in M2_CANDIDATES)  # smallest first
    small = [s for s in M2_CANDIDATES if s.coordinates <= DEFAULT_MAX_M2_SIZE]
    assert list(M2_GRID) == small + [Size(3, 2, 1)]
    assert set(QUICK_M2_GRID) <= set(M2_CANDIDATES) and len(set(POINT_GRID)) == len(POINT_GRID)
    assert len(set(QUICK_POINT_GRID)) == len(QUICK_POINT_GRID)
    assert {s.d for s in POINT_GRID} == set(range(2, 9))
    assert any(not s.in_hypotheses for s in QUICK_POINT_GRID) and any(s.rank_bounded for s in QUICK_POINT_GRID)
