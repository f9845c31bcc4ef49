"""Polynomials as text or as a function, sized before they are expanded (``_landscape/polytext.py``).

The adversarial review's inputs (issue 46): each once stopped the interpreter (FLINT/GMP aborts) or ran for
minutes.  They run here in a child process, which must end normally having printed the package's
InvalidArgumentError (or the expanded polynomial, where it is within the limits), never by a signal.
"""

import os
import subprocess
import sys
from fractions import Fraction
from math import comb

import pytest

from ag_attention import (
    ComputationTimeoutError,
    InvalidArgumentError,
    M2TimeoutError,
    MSolveTimeoutError,
    _clock,
    ideal_ed_degree,
    polynomial_model,
)
from ag_attention._landscape.polytext import (
    MAX_DEPTH,
    MAX_EXPONENT,
    MAX_TERMS,
    Bounded,
    parse_polynomial,
)
from tests.helpers import ROOT

XY = ["x", "y"]

_CHILD = """
import sys
from ag_attention import InvalidArgumentError, ideal_ed_degree, polynomial_model
try:
    M = {call}
except InvalidArgumentError as exc:
    print("refused:", exc)
else:
    print("built:", sum(len(f) for f in M.polynomials), "terms")
"""


@pytest.mark.parametrize(
    "call,expected",
    [
        ("polynomial_model(2, lambda t: [t[0] ** (10**9)])", "degree 1e+09, above the limit of 10,000 (MAX_DEGREE"),
        ("polynomial_model(2, lambda t: [(t[0] + t[1]) ** (10**6)])", "p**1,000,000 of a polynomial p of 2 terms"),
        ("polynomial_model(2, lambda t: [(t[0] * 2**2000 + 1) ** 1000])", "MAX_COEFFICIENT_BITS"),
        (  # a product: 8,008 times 8,008 terms, at most C(26, 6) = 230,230 monomials
            "polynomial_model(6, lambda t: [(sum(t) + 1) ** 10 * (sum(t) + 1) ** 10])",
            "about 230,230 terms after expansion, above the limit of 100,000 (MAX_TERMS",
        ),
        ("polynomial_model(['x', 'y'], ['((x^1000)^1000)^1000'])", "'(x^1000)^1000' at position 1: degree 1,000,000"),
        ("polynomial_model(['x', 'y'], ['((2^1000)^1000)^1000 * x'])", "MAX_COEFFICIENT_BITS"),
        ("polynomial_model(['x', 'y', 'z', 'w', 'v'], ['(x+y+z+w+v)^40'])", "about 135,751 terms after expansion"),
        ("polynomial_model(['x', 'y', 'z', 'w'], ['(x+y+z+w)^60'])", "built: 39711 terms"),  # within the limits
        ("polynomial_model(['x', 'y'], ['(x+y)^1000 - 1'])", "built: 1002 terms"),
        ("ideal_ed_degree(['x', 'y'], ['(x+y)^1000^1000'])", "an operator or the end expected at position 10"),
        ("ideal_ed_degree(['x', 'y'], ['(x+y)^(10^9)'])", "a nonnegative integer exponent expected"),
        ("ideal_ed_degree(['x', 'y'], ['(x+y)^1000000000'])", "exponent 1000000000 at position 6 is above the limit"),
    ],
)
def test_the_review_inputs_are_refused_before_they_are_expanded(call, expected):
    r = subprocess.run(
        [sys.executable, "-c", _CHILD.format(call=call)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])  # (a signal is a negative return code)
    assert expected in r.stdout and "Traceback" not in r.stderr
    assert r.stdout.startswith("built:" if expected.startswith("built:") else "refused:")


def test_nesting_is_refused_beyond_its_limit_not_by_a_recursion_error():
    deep = "(" * 2000 + "x" + ")" * 2000
    for call in (
        lambda: parse_polynomial(deep, XY),
        lambda: polynomial_model(XY, [deep]),
        lambda: ideal_ed_degree(XY, [deep]),
    ):
        with pytest.raises(InvalidArgumentError, match=f"parentheses nested more than {MAX_DEPTH} deep at position"):
            call()
    ok = "(" * MAX_DEPTH + "x" + ")" * MAX_DEPTH
    assert parse_polynomial(ok, XY) == {(1, 0): 1}


def test_within_the_limits_the_expansion_is_exact():
    f = parse_polynomial("(x+y)^1000 - 1", XY)
    assert len(f) == 1002 and f[(500, 500)] == comb(1000, 500)
    assert f[(0, 0)] == -1
    # a sum of many terms (summed pairwise) and a long product
    assert parse_polynomial("x" + " + x" * 50_000, XY) == {(1, 0): 50_001}
    assert parse_polynomial("*".join(["(x+1)"] * 200), XY)[(100, 0)] == comb(200, 100)
    assert parse_polynomial("-(x - 1/2)*(-y)/3 + 0.5", XY) == {
        (1, 1): Fraction(1, 3),
        (0, 1): -Fraction(1, 6),
        (0, 0): Fraction(1, 2),
    }
    with pytest.raises(InvalidArgumentError, match=f"exponent 1001 at position 2 is above the limit of {MAX_EXPONENT}"):
        parse_polynomial("x^1001", XY)


def test_a_homogeneous_power_is_sized_by_the_monomials_of_its_degree():
    import flint

    ctx = flint.fmpq_mpoly_ctx.get(("a", "b", "c", "d"), "degrevlex")
    s = Bounded(sum(ctx.gens()))
    assert s.homogeneous and s.bits == 2
    assert len(s.pow(60, lambda: "s^60").p) == 39711  # C(63, 3): allowed, though C(64, 4) > MAX_TERMS
    inhomogeneous = Bounded(sum(ctx.gens()) + 1)
    with pytest.raises(InvalidArgumentError, match=r"s\^60: about 635,376 terms after expansion.*MAX_TERMS"):
        inhomogeneous.pow(60, lambda: "s^60")
    assert MAX_TERMS < 635_376


def test_parsing_counts_against_the_time_limit(monkeypatch):
    """The clock starts before the generators are parsed: past the deadline during parsing, a timeout."""
    real = _clock.now
    start = real()
    readings = iter([start])  # the first reading starts the clock, every later one is past the deadline

    monkeypatch.setattr(_clock, "now", lambda: next(readings, start + 1e6))
    with pytest.raises(ComputationTimeoutError, match="parsing a polynomial"):
        ideal_ed_degree(XY, ["(x+y)^1000 - 1"], timeout=20)


def test_the_review_curve_is_counted_or_stopped_at_its_time_limit():
    """``(x+y)^1000 - 1`` (1,000 parallel lines: ED degree 1000) took 48 s to parse before the clock started; now it
    parses at once and the call ends with the value or at its limit (a timeout error), whichever comes first."""
    try:
        r = ideal_ed_degree(XY, ["(x+y)^1000 - 1"], timeout=5, cache=False)
    except (ComputationTimeoutError, M2TimeoutError, MSolveTimeoutError):
        return
    assert r.value == 1000 and r.degree == 1000
