"""The shared argument checks: each error names the argument and its value; bools are not numbers."""

import math

import numpy as np
import pytest

from ag_attention import InvalidArgumentError
from ag_attention._checks import MAX_SECONDS, check_choice, check_int, check_real, check_seconds


@pytest.mark.parametrize("value", [0, 1, 7, 10**30, np.int64(5), np.uint8(3)])
def test_check_int_accepts_integers_and_numpy_integers(value):
    got = check_int(value, "n")
    assert got == int(value) and type(got) is int


@pytest.mark.parametrize("value", [True, False, 1.0, "3", None, np.float64(2.0), [1]])
def test_check_int_refuses_what_is_not_an_integer_naming_it(value):
    with pytest.raises(InvalidArgumentError, match=r"^seed=.*: must be an integer$"):
        check_int(value, "seed")


@pytest.mark.parametrize(
    ("value", "minimum", "maximum", "says"),
    [(0, 1, None, ">= 1"), (-1, 0, None, ">= 0"), (11, None, 10, "<= 10"), (5, 6, 9, "from 6 to 9")],
)
def test_check_int_bounds_are_named(value, minimum, maximum, says):
    with pytest.raises(InvalidArgumentError, match=f"heads={value}: must be an integer {says}"):
        check_int(value, "heads", minimum=minimum, maximum=maximum)
    assert check_int(minimum if minimum is not None else maximum, "heads", minimum=minimum, maximum=maximum) in (
        minimum,
        maximum,
    )


@pytest.mark.parametrize("value", [0.0, -2.5, 1e-300, 1e300, 3, np.float32(0.25)])
def test_check_real_accepts_finite_numbers(value):
    assert check_real(value, "x") == float(value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, "1.0", None, 1j])
def test_check_real_refuses_non_finite_and_non_numbers(value):
    with pytest.raises(InvalidArgumentError, match=r"^x=.*: must be a finite number"):
        check_real(value, "x")


def test_check_real_strict_and_closed_bounds():
    assert check_real(0, "tol", minimum=0) == 0.0
    with pytest.raises(InvalidArgumentError, match=r"tol=0: must be a finite number > 0"):
        check_real(0, "tol", minimum=0, strict=True)
    with pytest.raises(InvalidArgumentError, match=r"p=1: must be a finite number strictly between 0 and 1"):
        check_real(1, "p", minimum=0, maximum=1, strict=True)
    with pytest.raises(InvalidArgumentError, match=r"p=2: must be a finite number from 0 to 1"):
        check_real(2, "p", minimum=0, maximum=1)


@pytest.mark.parametrize("value", [0, -1, MAX_SECONDS, math.nan, math.inf, True, "5", None])
def test_check_seconds_refuses_naming_the_argument(value):
    with pytest.raises(InvalidArgumentError, match=r"^deadline=.*: must be a number of seconds"):
        check_seconds(value, "deadline")


def test_check_seconds_accepts_the_open_interval():
    assert check_seconds(1e-3) == 1e-3
    assert check_seconds(MAX_SECONDS - 1) == MAX_SECONDS - 1


def test_check_choice_lists_the_table():
    table = {"euclidean": 1, "generic": 2}
    assert check_choice("generic", "metric", table) == "generic"
    with pytest.raises(InvalidArgumentError, match=r"metric='cosine': must be one of euclidean, generic$"):
        check_choice("cosine", "metric", table)
    with pytest.raises(InvalidArgumentError, match=r"metric=\[1\]: must be one of euclidean, generic$"):
        check_choice([1], "metric", table)
