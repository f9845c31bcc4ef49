"""The settings of reproduce icl (ag_attention._reproduce.icl_settings): the limits, the replaced sizes, the cost."""

import math

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.icl import eigenvalues, gains, plateau_predictions
from ag_attention._reproduce.icl_settings import LIMITS, QUICK, Setting, estimate, settings_for


@pytest.mark.parametrize(
    "bad, name",
    [
        (dict(dims=0), "dims"),
        (dict(heads=-1), "heads"),
        (dict(heads=()), "heads"),
        (dict(context=0), "context"),
        (dict(steps=True), "steps"),
        (dict(dims=12, steps=10_000_000), "estimated"),
    ],
)
def test_bad_sizes_are_refused_by_name(bad, name):
    with pytest.raises(InvalidArgumentError, match=name):
        settings_for(True, **bad)


def test_sizes_replace_the_quick_setting_and_the_predictions_follow():
    (s,) = settings_for(True, dims=3, heads=3, context=15, steps=5000)
    assert (s.D, s.heads_separate, s.heads_merged, s.N, s.steps_separate, s.steps_merged) == (
        3,
        (3,),
        3,
        15,
        5000,
        5000,
    )
    assert s.seeds == QUICK.seeds and settings_for(True) == (QUICK,)
    assert settings_for(False, heads=[4, 2])[0].seeds == (0, 1, 2, 3, 4)
    seconds, held = estimate(QUICK)
    assert 1 < seconds < 120 and held < 2**30
    assert plateau_predictions(eigenvalues(3), 15)[1] == 1 - gains(eigenvalues(3), 15)[0]


def test_settings_are_plain_data():
    s = Setting(D=3, heads_separate=(2, 1))
    assert s.to_dict()["heads_separate"] == [2, 1]
    assert math.comb(s.D, 1) == 3


def test_the_limits_are_inclusive_and_every_value_is_named():
    low, high = LIMITS["dims"]
    assert settings_for(True, dims=low)[0].D == low
    with pytest.raises(InvalidArgumentError, match=f"dims={high + 1}"):
        settings_for(True, dims=high + 1)
    with pytest.raises(InvalidArgumentError, match="quick='yes'"):
        settings_for("yes")
