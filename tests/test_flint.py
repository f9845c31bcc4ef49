"""python-flint's numbers and polynomial rings (ag_attention._flint): rings by names, polynomials from terms."""

from fractions import Fraction

import pytest

from ag_attention import _flint
from ag_attention._exact import linalg
from ag_attention._flint import (
    IntegerPolynomial,
    integer_polynomial_ring,
    modular_polynomial,
    modular_polynomial_ring,
    rational,
    rational_polynomial,
    rational_polynomial_ring,
)


def test_rings_are_shared_by_their_names_and_ordering():
    R = integer_polynomial_ring(["x", "y"])
    assert R is integer_polynomial_ring(("x", "y"), "degrevlex")
    x, y = R.gens()
    assert isinstance(x * y, IntegerPolynomial) and str(x**2 - 3 * y) == "x^2 - 3*y"


def test_polynomials_from_their_terms_over_qq_and_gf_p():
    Q = rational_polynomial_ring(["x", "y"])
    f = rational_polynomial(Q, [((2, 0), Fraction(1, 2)), ((0, 1), -3)])
    assert str(f) == "1/2*x^2 - 3*y"
    P = modular_polynomial_ring(["x", "y"], 7)
    g = modular_polynomial(P, [((1, 1), 10), ((0, 0), -1)])
    assert str(g) == "3*x*y + 6"


@pytest.mark.parametrize(("value", "text"), [(3, "3"), (Fraction(-2, 6), "-1/3"), (rational(5), "5")])
def test_rational_takes_ints_fractions_and_itself(value, text):
    assert str(rational(value)) == text


def test_the_exact_rooms_seam_reexports_the_same_objects():
    for name in ("IntegerPolynomial", "rational", "rational_polynomial_ring", "modular_polynomial", "Terms"):
        assert getattr(linalg, name) is getattr(_flint, name)
