"""Ball arithmetic (ag_attention._exact.balls): Jacobians enclosed, determinants that exclude zero or do not."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._exact.balls import Balls, balls, determinant, precision
from ag_attention._network import jacobian
from ag_attention._numeric import Float64
from tests.helpers import generator


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((3, 2, 2), (2, 1), tokens=3, normalized=True, temperature=0.7),
        Architecture((2, 2), None, tokens=2, parametrization="AV", normalized=True, causal=True),
        Architecture((2, 2, 2), (1, 2), tokens=2, heads=2, skip=True, normalized=True),
    ],
    ids=str,
)
def test_ball_jacobian_encloses_the_float64_jacobian(arch):
    rng = generator(0)
    theta = rng.standard_normal(arch.parameter_count) / 2
    X = rng.standard_normal((2, arch.tokens, arch.widths[0]))
    Jf = jacobian(arch, Float64(), theta, X)
    with precision(128):
        Jb = jacobian(arch, Balls(), balls(theta), balls(X))
    mid = np.vectorize(lambda x: float(x.mid()) if hasattr(x, "mid") else float(x), otypes=[float])(Jb)
    rad = np.vectorize(lambda x: float(x.rad()) if hasattr(x, "rad") else 0.0, otypes=[float])(Jb)
    # the balls are 128-bit enclosures of the exact Jacobian (radius about 1e-38, deterministic: arb has no BLAS);
    # the float64 Jacobian is off by rounding, about 1e-15 relative: atol 1e-12 (with allclose's relative 1e-5)
    # leaves a margin of 1,000 and fails on any wrong entry
    assert np.allclose(mid, Jf, atol=1e-12) and rad.max() < 1e-30


def test_determinant_ball_of_exact_and_singular_matrices():
    d = determinant(balls(np.array([[1.0, 2.0], [3.0, 4.0]])), 128)
    assert d.excludes_zero and d.midpoint == -2.0 and d.radius == 0.0
    d = determinant(balls(np.array([[1.0, 2.0], [2.0, 4.0]])), 128)
    assert not d.excludes_zero


def test_balls_travel_as_integers_and_come_back_holding_the_original():
    import pickle

    import flint

    from ag_attention._exact import balls as B
    from ag_attention._numeric.certify import Certified

    with B.precision(128):
        box = B.complex_box(np.array([1 / 3 + 0.2j, 2.5 - 1e-30j]), 1e-9)
        box = np.array([z * flint.acb(1) / 7 for z in box], dtype=object)
    back = B.balls_from_parts(B.ball_parts(box))
    for x, y in zip(box, back):
        for a, b in ((x.real, y.real), (x.imag, y.imag)):
            assert a.mid() == b.mid() and b.contains(a)  # the midpoint exactly, the radius at most rounded up
            assert float(b.rad()) <= float(a.rad()) * (1 + 2.0**-28) + 1e-300
    c = Certified(np.array([1.0, 2.0]), 1e-9, True, box, None, list(box))
    d = pickle.loads(pickle.dumps(c))
    assert d.real is True and all(y.contains(x) for x, y in zip(c.box, d.box)) and len(d.key) == 2


def test_integer_powers_of_a_ball_around_zero_are_not_nan():
    # python-flint's arb ** 2 is nan for a ball containing 0; an exact zero coordinate of a critical point is
    # such a ball (msolve's box around 0), and its loss and Hessian came out nan ("undecided")
    import flint

    from ag_attention._exact.balls import evaluate, power

    x = flint.arb(0, 1e-38)
    assert power(x, 0) == 1 and abs(float(power(x, 2).mid())) < 1e-70 and power(x, 2).rad() < 1e-70
    assert float(power(flint.arb(3), 5).mid()) == 243.0
    # x^2 y + 1 at x in 0 +/- 1e-38, y = 2: a ball around 1
    value = evaluate({(2, 1): 1, (0, 0): 1}, [x, flint.arb(2)])
    assert value.contains(1) and value.rad() < 1e-60
