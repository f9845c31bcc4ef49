"""Rotary position embeddings (ag_attention._positions): the frequencies' rational relations, the rotations in
GF(p), float64 and balls, the entry's checks (docs/math/rotary.md)."""

import math
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture, InvalidArchitectureError
from ag_attention._exact.balls import Balls, precision
from ag_attention._positions import (
    POSITIONS,
    REFUSED_POSITIONS,
    Frequencies,
    Rotary,
    circle_float,
    circle_modp,
    perfect_power,
    rotary_from_dict,
)

P = 2**31 - 1


@pytest.mark.parametrize(
    "b, want",
    [
        (Fraction(10000), (Fraction(10), 4)),
        (Fraction(1000000), (Fraction(10), 6)),
        (Fraction(500000), (Fraction(500000), 1)),
        (Fraction(1, 64), (Fraction(1, 2), 6)),
        (Fraction(9, 4), (Fraction(3, 2), 2)),
        (Fraction(12), (Fraction(12), 1)),
        (Fraction(2**40), (Fraction(2), 40)),
    ],
)
def test_perfect_power(b, want):
    assert perfect_power(b) == want
    c, k = want
    assert c**k == b


@pytest.mark.parametrize("base", [10000, 500000, 1000000, Fraction(10001, 2), Fraction(1, 3)])
@pytest.mark.parametrize("pairs", [1, 2, 3, 8, 32])
def test_the_lattice_writes_every_frequency_as_an_integer_multiple_of_a_basis(base, pairs):
    freqs = Frequencies(Fraction(base), pairs, Fraction(3, 2))
    n, lattice = freqs.lattice()
    theta = freqs.floats()
    assert len(lattice) == pairs and all(m >= 1 for _, m in lattice)
    basis = [None] * n
    for f, (e, m) in enumerate(lattice):
        beta = theta[f] / m
        # every frequency of one basis element gives the same beta, to rounding (1e-15 relative; another multiple of
        # it would be off by a factor of at least 1 + 1/m)
        if basis[e] is None:
            basis[e] = beta
        assert math.isclose(beta, basis[e], rel_tol=1e-12)
    # the basis elements are c^(-e/F') times one common factor: pairwise ratios are irrational powers, never 1
    assert len(set(np.round(np.array(basis) / basis[0], 12))) == n


def test_ten_thousand_relates_its_frequencies():
    """base 10^4, 4 coordinates: theta = (1, 1/100), so the first frequency turns 100 times the second."""
    assert Frequencies(Fraction(10000), 2).lattice() == (1, ((0, 100), (0, 1)))
    C, S = circle_modp(Frequencies(Fraction(10000), 2), P, 3)
    step = (int(C[1, 1]), int(S[1, 1]))
    point = (1, 0)
    for _ in range(100):
        point = ((point[0] * step[0] - point[1] * step[1]) % P, (point[0] * step[1] + point[1] * step[0]) % P)
    assert point == (int(C[1, 0]), int(S[1, 0]))
    # 128 coordinates of LLaMA (base 500000): 64 independent frequencies; of base 10^4: 16
    assert Frequencies(Fraction(500000), 64).lattice()[0] == 64
    assert Frequencies(Fraction(10000), 64).lattice()[0] == 16


def test_modular_rotations_lie_on_the_circle_and_compose():
    freqs = Frequencies(Fraction(10000), 4)
    C, S = circle_modp(freqs, P, 5)
    assert np.all((C.astype(object) ** 2 + S.astype(object) ** 2) % P == 1)
    assert np.all(C[0] == 1) and np.all(S[0] == 0)
    for pos in range(1, 5):  # position pos is position 1 turned pos times
        c = (C[pos - 1].astype(object) * C[1] - S[pos - 1].astype(object) * S[1]) % P
        s = (C[pos - 1].astype(object) * S[1] + S[pos - 1].astype(object) * C[1]) % P
        assert np.array_equal(c, C[pos]) and np.array_equal(s, S[pos])
    # the same point for the same prime (every Jacobian of one computation), another for another prime
    assert np.array_equal(circle_modp(freqs, P, 5)[0], C)
    assert not np.array_equal(circle_modp(freqs, 2147483629, 5)[0], C)


def test_float_and_ball_rotations_are_the_true_cosines():
    freqs = Frequencies(Fraction(10000), 3, Fraction(2))
    C, S = circle_float(freqs, 4)
    theta = [10000 ** (-f / 3) / 2 for f in range(3)]
    for pos in range(4):
        assert np.allclose(C[pos], [math.cos(pos * x) for x in theta], rtol=1e-14, atol=1e-15)
        assert np.allclose(S[pos], [math.sin(pos * x) for x in theta], rtol=1e-14, atol=1e-15)
    with precision(128):
        Cb, Sb = Balls().circle(freqs, 4)
    for pos in range(4):
        for f in range(3):
            assert Cb[pos, f].contains(float(C[pos, f])) or abs(float(Cb[pos, f].mid()) - C[pos, f]) < 1e-15
            assert float(Cb[pos, f].rad()) < 1e-30


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(dims=3), "even"),
        (dict(dims=0), "even"),
        (dict(pairing="zigzag"), "pairing"),
        (dict(base=1), "same frequency"),
        (dict(base=-5), "positive"),
        (dict(base=float("inf")), "finite"),
        (dict(scale=0), "positive"),
        (dict(base=True), "positive number"),
    ],
)
def test_bad_rotary_entries_name_the_field(kwargs, match):
    with pytest.raises(InvalidArchitectureError, match=match):
        Rotary(**kwargs)


def test_the_architecture_checks_the_heads_against_the_rotation():
    with pytest.raises(InvalidArchitectureError, match=r"ranks\[0\]"):
        Architecture((4, 2), (3,), positions="rope")  # an odd head turns no pairs
    with pytest.raises(InvalidArchitectureError, match=r"ranks\[1\]"):
        Architecture((4, 4, 2), (4, 2), positions={"kind": "rope", "dims": 4})
    with pytest.raises(InvalidArchitectureError, match="QKV"):
        Architecture((2, 2), None, parametrization="AV", positions="rope")
    with pytest.raises(InvalidArchitectureError, match="positions"):
        Architecture((2, 2), (2,), positions="alibi")
    with pytest.raises(InvalidArchitectureError, match="unknown field"):
        Architecture((2, 2), (2,), positions={"kind": "rope", "theta": 5})


def test_round_trip_through_plain_values():
    arch = Architecture((4, 2), (4,), tokens=3, positions={"kind": "rope", "base": "500000", "dims": 2}, bias="vqo")
    assert arch.bias == "qvo"
    again = Architecture.from_dict(arch.to_dict())
    assert again == arch and again.positions == Rotary(Fraction(500000), 2)
    assert "rope(base 500000, 2 dims)" in arch.describe() and "bias qvo" in arch.describe()
    assert rotary_from_dict("rope") == Rotary() and rotary_from_dict(None) is None
    # a paper's network keeps its keys
    assert set(Architecture((2, 2), (2,)).to_dict()) == {
        "widths", "ranks", "tokens", "parametrization", "heads", "skip", "normalized", "temperature", "causal"
    }  # fmt: skip


def test_default_frequencies_separate_their_planes_and_a_crafted_one_does_not():
    assert Rotary().distinct(64) and Rotary(Fraction(500000)).distinct(128)
    # theta_0 = 1/scale = pi/2: 4 theta_0 = 2 pi turns the plane by a half turn at every second position
    assert not Rotary(scale=Fraction(2 / math.pi)).distinct(2)
    assert not Rotary(scale=Fraction(1 / math.pi)).distinct(2)  # 4 theta = 4 pi


def test_every_position_encoding_is_named():
    assert set(POSITIONS) == {"none", "rope"}
    for name, why in REFUSED_POSITIONS.items():
        assert "not modelled" in why and name not in POSITIONS
