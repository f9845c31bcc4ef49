"""From residues modulo primes to generators over QQ, verified exactly (ag_attention._algebra.lifting)."""

from fractions import Fraction

import pytest

from ag_attention import Architecture
from ag_attention._algebra.interpolation import low_degree_equations
from ag_attention._algebra.lifting import MORE_PRIMES, crt, lift, rational_reconstruction, verify_on_parametrization
from ag_attention._algebra.modular import ModularBlock
from ag_attention._exact.field import DEFAULT_PRIME, SECOND_PRIME, is_prime

P, Q = 101, 103  # m = 10403: fractions with |r|, s <= 72 come back


def residue(f: Fraction, p: int) -> int:
    return f.numerator * pow(f.denominator, -1, p) % p


@pytest.mark.parametrize("f", [Fraction(0), Fraction(5), Fraction(-3, 7), Fraction(72, 71), Fraction(-1, 72)])
def test_small_fractions_are_reconstructed(f):
    assert rational_reconstruction(residue(f, P * Q), P * Q) == f


def test_no_small_fraction_no_answer():
    assert rational_reconstruction(73, P * Q) is None  # 73 itself is above the bound, and no small r/s is 73
    big = [a for a in range(P * Q) if rational_reconstruction(a, P * Q) is None]
    assert 0 < len(big) < P * Q and 73 in big


def test_crt():
    for x in (0, 1, 5000, P * Q * 107 - 1):
        assert crt([x % P, x % Q, x % 107], [P, Q, 107]) == x
    x = DEFAULT_PRIME * SECOND_PRIME - 12345  # above 2^61: exact integers throughout
    assert crt([x % DEFAULT_PRIME, x % SECOND_PRIME], [DEFAULT_PRIME, SECOND_PRIME]) == x


def test_the_lifting_primes_are_distinct_primes_below_2_31():
    primes = (DEFAULT_PRIME, SECOND_PRIME) + MORE_PRIMES
    assert len(set(primes)) == len(primes) and all(is_prime(p) and p < 2**31 for p in primes)


def _block(coefficients, p):
    monomials = [(0, 0), (0, 1), (1, 1)]
    row = [residue(Fraction(c), p) for c in coefficients]
    return ModularBlock(monomials, 1, [row], [row])


def test_lift_combines_the_primes_and_skips_zero_coefficients():
    coefficients = [Fraction(1, 2), 0, Fraction(-3)]
    mu = ((1,), (1,), (2,))
    mods = [{2: {mu: _block(coefficients, p)}} for p in (P, Q)]
    assert lift(mods, [P, Q]) == {2: {mu: [{(0, 0): Fraction(1, 2), (1, 1): Fraction(-3)}]}}


def test_lift_fails_where_a_coefficient_has_no_small_fraction():
    mu = ((1,), (1,), (2,))
    mods = [{2: {mu: ModularBlock([(0, 0)], 1, [[73 % p]], [[73 % p]])}} for p in (P, Q)]
    assert lift(mods, [P, Q]) is None


def test_the_generators_found_vanish_on_the_parametrization():
    quartic = low_degree_equations(Architecture.single_layer(2, 1, 2), max_degree=4).generators_of_degree(4)
    assert len(quartic) == 1 and verify_on_parametrization(2, 1, 2, quartic)
    (g,) = quartic
    wrong = {mono: c + 1 if n == 0 else c for n, (mono, c) in enumerate(g.items())}
    assert not verify_on_parametrization(2, 1, 2, [wrong])


def test_rank_bounded_domains_are_parametrized():
    """(2,1,1): the three quadrics hold where rank A <= 1, not on all of A."""
    quadrics = low_degree_equations(Architecture.single_layer(2, 1, 1), max_degree=2).generators_of_degree(2)
    assert len(quadrics) == 3
    assert verify_on_parametrization(2, 1, 1, quadrics)
    assert not any(verify_on_parametrization(2, 1, 2, [q]) for q in quadrics)
