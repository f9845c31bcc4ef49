"""msolve's input and output as text (ag_attention._algebra.msolve_text): input format, leading ideals,
parametrizations."""

import pytest

from ag_attention._algebra.certificate import build_system
from ag_attention._algebra.msolve import (
    count_standard_monomials,
    format_input,
    parse_leading_ideal,
    parse_parametrization,
)
from ag_attention._errors import InvalidArgumentError


def test_standard_monomials_and_parsers():
    assert count_standard_monomials([(1, 0, 0), (0, 1, 1), (0, 2, 0), (0, 0, 3)], 3) == 4
    assert count_standard_monomials([(0, 0)], 2) == 0
    assert count_standard_monomials([(3, 0), (1, 1)], 2) is None
    text = "#comment\n[x_1^1,\ny_2^1*z^1,\ny_2^2,\nz^3]:\n"
    assert parse_leading_ideal(text, ["x_1", "y_2", "z"]) == [(1, 0, 0), (0, 1, 1), (0, 2, 0), (0, 0, 3)]
    head = parse_parametrization("[0, [65521, \n3, \n4, \n['x', 'y', 'A'],\n[1,1,1],\n[1,\n[[2,\n[65520, 0, 1]],\n")
    assert head["quotient_dimension"] == 4 and head["eliminating_degree"] == 2 and head["variables"] == ["x", "y", "A"]
    assert parse_parametrization("[-1]:") == {"dimension": -1}
    assert parse_parametrization("[1, 2, -1, []]:") == {"dimension": 1}


def test_input_format_is_checked():
    assert format_input(["x", "y"], 65521, ["x^2 - 1", "y"]) == "x,y\n65521\nx^2-1,\ny\n"
    with pytest.raises(InvalidArgumentError, match="prime"):
        format_input(["x"], 2**31 + 11, ["x"])
    with pytest.raises(InvalidArgumentError, match="variables"):
        format_input(["x(1)"], 65521, ["x"])
    with pytest.raises(InvalidArgumentError, match="prime"):
        build_system(2, 1, 2, prime=65520)


def test_repeated_factors_are_written_as_powers():
    # msolve 0.10.1 reads x*x as x; every product goes to it with one power per variable
    assert format_input(["x", "y"], 65521, ["x*y*x - 3*y*y + x", "2*x*3*x"]) == "x,y\n65521\n1*x^2*y-3*y^2+x,\n6*x^2\n"


def test_coefficients_are_reduced_modulo_the_prime():
    # msolve reads a coefficient at or above p unreduced: every one goes to it in [-(p-1)/2, (p-1)/2]
    p = 2**31 - 1
    assert format_input(["x"], 7, ["15*x^2 - 8"]) == "x\n7\n1*x^2-1\n"
    assert format_input(["x", "y"], p, [f"{2 * p}*x + {p + 3}*y - {3 * p - 1}"]) == f"x,y\n{p}\n3*y+1\n"
    assert format_input(["x"], p, [f"{p - 1}*x"]) == f"x\n{p}\n-1*x\n"
    # over QQ (characteristic 0) the numbers are kept
    assert format_input(["x"], 0, [f"{2 * p}*x - 1"]) == f"x\n0\n{2 * p}*x-1\n"
    with pytest.raises(InvalidArgumentError, match=r"polynomials \[0\] vanish modulo 7") as info:
        format_input(["x"], 7, ["14*x - 21"])
    assert "(prime=), give another" in str(info.value) and "prime_seed=" in str(info.value)  # the user's remedy
    with pytest.raises(InvalidArgumentError, match="unreduced"):
        format_input(["x"], 7, ["(x+1)*15"])
