"""msolve's real solutions over QQ read into isolating boxes (the exact route of critical_points)."""

from fractions import Fraction

import pytest

from ag_attention._errors import MSolveOutputError
from ag_attention._landscape.critical_msolve import parse_real_solutions


def test_msolve_output_is_read():
    assert parse_real_solutions("[-1]:", 2) == []
    assert parse_real_solutions("[1, 2, -1, []]:", 2) is None
    boxes = parse_real_solutions("[0, [1,\n[[[1 / 2^1, 3 / 2^2], [-1, -1]]]\n]]:", 2)
    assert boxes == [[(Fraction(1, 2), Fraction(3, 4)), (Fraction(-1), Fraction(-1))]]
    # an exact rational solution is printed as a / b (not dyadic): it was read as two intervals short
    boxes = parse_real_solutions("[0, [1,\n[[[3, 3], [-1 / 2, -1 / 2], [-29 / 2^3, -3 / 2^2]]]\n]]:", 3)
    assert boxes == [
        [(Fraction(3), Fraction(3)), (Fraction(-1, 2), Fraction(-1, 2)), (Fraction(-29, 8), Fraction(-3, 4))]
    ]
    with pytest.raises(MSolveOutputError, match="3 intervals for 2 unknowns"):
        parse_real_solutions("[0, [1, [[[1, 1], [2, 2], [3, 3]]]]]:", 2)
