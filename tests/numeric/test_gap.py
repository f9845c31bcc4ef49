"""The rank from a spectrum (ag_attention._numeric.gap): the largest gap, and no verdict without a clear one."""

import math

import numpy as np

from ag_attention._numeric import gap_rank
from ag_attention._numeric.gap import NOISE_MARGIN
from tests.helpers import generator

EPS = float(np.finfo(float).eps)


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
    # full rank: the gap reported is the distance of s_min to the float64 noise level, log10(0.2 / 3 / (1000 eps))
    g = gap_rank(full, size=1000)
    assert g.rank == 4 and g.to_noise_level and "noise" in g.reason
    assert math.isclose(g.reported, math.log10(0.2 / 3.0 / (1000 * EPS)), rel_tol=1e-12)  # libm's last bits
    assert math.isclose(g.gap, g.reported, rel_tol=1e-12)


def _spectrum(kept, rng):
    """``kept`` (relative to s_1) followed by four singular values of float64 noise, each below 1e-13 s_1."""
    noise = np.sort(10.0 ** rng.uniform(-17.5, -13.0, 4))[::-1]
    return np.concatenate([kept, noise])


def test_the_reported_gap_does_not_depend_on_the_noise():
    """What a machine's BLAS puts below the noise level (72 eps s_1 = 1.6e-14 s_1 here, and up to NOISE_MARGIN
    orders above it) changes no printed digit: the raw gap moves by orders of magnitude, the report does not."""
    rng = generator(11)
    kept = 10.0 ** -np.linspace(0.0, 1.5, 24)  # s_24 = 10^-1.5 s_1, the runner-up (between kept values) 1.5 / 23
    runs = [gap_rank(_spectrum(kept, rng), size=72) for _ in range(30)]
    assert len({round(g.gap, 1) for g in runs}) > 3  # the raw gap is noise: it varies
    reports = {(g.rank, g.reported, g.describe(), g.summary(), g.reason, g.resolved_runner_up) for g in runs}
    assert len(reports) == 1, reports
    g = runs[0]
    # computed independently: s_24 / s_1 to eps * 72, and the largest gap among the kept values
    expected = -1.5 - math.log10(72 * EPS)
    assert g.rank == 24 and g.to_noise_level and math.isclose(g.reported, expected, rel_tol=1e-12)
    assert g.describe() == f"{expected:.1f} orders to the noise level" == "12.3 orders to the noise level"
    assert g.summary().startswith("gap of 12.3 orders of magnitude from s_24 to the float64 noise level eps x 72 x s_1")
    assert math.isclose(g.resolved_runner_up, 1.5 / 23, rel_tol=1e-9) and "runner-up 0.1" in g.summary()
    # a different kept value is a different report (the report is not a constant)
    moved = gap_rank(_spectrum(kept * np.r_[np.ones(23), 0.5], rng), size=72)
    assert moved.rank == 24 and moved.describe() == "12.0 orders to the noise level"


def test_a_gap_between_two_resolved_values_is_reported_as_it_is():
    """s_{r+1} well above the noise level (10^-10 s_1 >> 10^NOISE_MARGIN x 4 eps s_1): the plain gap."""
    g = gap_rank(np.array([1.0, 0.5, 0.25, 1e-10]), size=4)
    assert g.rank == 3 and not g.to_noise_level and g.reported == g.gap
    assert g.describe() == f"{math.log10(0.25 / 1e-10):.1f} orders" == "9.4 orders"
    assert g.summary() == "gap of 9.4 orders of magnitude between s_3 and s_4; runner-up 0.3"
    # the same spectrum with s_4 within NOISE_MARGIN orders of the noise level: reported to the noise level
    near = 4 * EPS * 10 ** (NOISE_MARGIN - 0.5)
    g = gap_rank(np.array([1.0, 0.5, 0.25, near]), size=4)
    assert g.rank == 3 and g.to_noise_level
    assert g.describe() == f"{math.log10(0.25 / (4 * EPS)):.1f} orders to the noise level"


def test_no_verdict_prints_no_noise_digits():
    """Without a verdict the reason names the noise level instead of printing values below it."""
    # two gaps of 6 orders (ambiguous), the second down to s_3 = 1e-12 s_1, within NOISE_MARGIN of 1000 eps s_1
    g = gap_rank(np.array([1.0, 1e-6, 1e-12, 3e-17]), size=1000)
    assert g.rank is None and g.reported is None and g.describe() == "no clear gap"
    assert g.reason.startswith(
        "no clear gap: largest 6.7 orders of magnitude to the noise level (need 4.0), "
        "runner-up 6.0 orders of magnitude (need a margin of 2.0)"
    )
    assert "e-12" not in g.reason and "e-17" not in g.reason
    assert "the spectrum reaches the float64 noise level eps x 1000 x s_1 = 2.2e-13 s_1" in g.reason
