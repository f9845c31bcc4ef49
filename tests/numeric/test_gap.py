"""The rank from a spectrum (ag_attention._numeric.gap): the largest gap, and no verdict without a clear one."""

import numpy as np

from ag_attention._numeric import gap_rank


def test_gap_rank_verdicts_and_refusals():
    clear = np.array([3.0, 2.0, 1.0, 0.5, 1e-14, 1e-15])
    assert gap_rank(clear).rank == 4
    full = np.array([3.0, 2.0, 1.0, 0.2])
    assert gap_rank(full).rank == 4 and gap_rank(full).clear
    smooth = 10.0 ** (-np.arange(40) / 3.0)  # decays steadily: no gap anywhere
    g = gap_rank(smooth)
    assert g.rank is None and not g.clear and "no clear gap" in g.reason
    two = np.array([1.0, 1e-5, 1e-10, 1e-15])  # two gaps of equal size: ambiguous
    assert gap_rank(two).rank is None
    # no gap of 4 orders, but the spectrum spans 8: a rank drop may hide in it, so no verdict
    for decaying in ([1, 1, 1, 1e-3, 1e-6, 1e-8], 10.0 ** -np.arange(9)):
        assert gap_rank(np.array(decaying, dtype=float)).rank is None
    # full rank: the gap reported is the distance of s_min to the float64 noise level
    g = gap_rank(full, size=1000)
    assert g.rank == 4 and 10 < g.gap < 13 and "noise" in g.reason
