"""Counting the monomials of the monomial-span bound: closed forms, brute force, the caps."""

import itertools
from math import comb

import pytest

from ag_attention import Architecture
from ag_attention._models.monomials import MAX_CAUSAL_TOKENS, MAX_SPAN_DEPTH, monomial_count, orbit_counts


def _brute_force_orbits(d, others, degree):
    """Monomials in (1 + others) tokens of d variables, up to permuting the other tokens."""

    def monomials(deg):
        return [m for m in itertools.product(range(deg + 1), repeat=d) if sum(m) == deg]

    seen = set()
    for split in itertools.product(range(degree + 1), repeat=1 + others):
        if sum(split) != degree:
            continue
        for first in monomials(split[0]):
            for rest in itertools.product(*(monomials(k) for k in split[1:])):
                seen.add((first, tuple(sorted(rest))))
    return len(seen)


@pytest.mark.parametrize(
    "d, others, degree", [(1, 1, 3), (2, 1, 3), (2, 2, 3), (3, 1, 3), (2, 2, 5), (1, 3, 9), (2, 0, 9)]
)
def test_orbit_counts_match_brute_force(d, others, degree):
    assert orbit_counts(d, others, degree)[degree] == _brute_force_orbits(d, others, degree)


def test_more_tokens_than_the_degree_add_only_constants():
    assert orbit_counts(2, 3, 3) == orbit_counts(2, 10**9, 3)


def test_one_token_is_the_space_of_polynomial_maps():
    assert monomial_count(Architecture((3, 2), (2,), tokens=1))[0] == 2 * comb(5, 3)  # cubic maps C^3 -> C^2
    assert monomial_count(Architecture((2, 2, 1), (1, 1), tokens=1))[0] == comb(10, 1)  # binary forms of degree 9
    # skip connections: every odd degree up to 3^L (x + cubic for one layer)
    value, why = monomial_count(Architecture((2, 2), (1,), tokens=1, skip=True))
    assert value == 2 * (comb(2, 1) + comb(4, 1)) and "odd degrees <= 3" in why


def test_causal_tokens_count_their_prefixes():
    # token i of a causal layer with d = 1: cubic monomials in the first i inputs
    assert monomial_count(Architecture((1, 1), (1,), tokens=2, causal=True))[0] == comb(3, 0) + comb(4, 1)


def test_astronomical_counts_are_skipped():
    assert monomial_count(Architecture((2,) * (MAX_SPAN_DEPTH + 2), (1,) * (MAX_SPAN_DEPTH + 1), tokens=1)) is None
    assert monomial_count(Architecture((1, 1), (1,), tokens=MAX_CAUSAL_TOKENS + 1, causal=True)) is None
    assert monomial_count(Architecture((2,) * 8, (1,) * 7, tokens=2)) is None  # degree 2,187 with two tokens
