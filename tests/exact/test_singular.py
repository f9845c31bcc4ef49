"""certify (ag_attention._exact.singular): whether the image of a weight pair is a singular point, with its
certificate."""

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ag_attention import CertificateKind, certify
from ag_attention._errors import InvalidArgumentError
from ag_attention._models.orbits import orbit_representatives
from tests.helpers import ANY_VALUE


def test_certificates(rng):
    d, e = 3, 2
    m = d * d + d * e - 1
    u, v, z = rng.integers(1, 9, size=d), rng.integers(1, 9, size=d), rng.integers(1, 9, size=d)
    z[1] += 30
    w = rng.integers(1, 9, size=e)
    generic = certify(rng.integers(-9, 10, (d, d)), rng.integers(-9, 10, (e, d)), dimension=m)
    pair = certify(np.outer(u, v), np.outer(w, z), dimension=m)
    crit = certify(np.outer(u, v), np.outer(w, v), dimension=m)
    assert generic.singular is False and generic.kind is CertificateKind.IMMERSION
    assert pair.singular is True and pair.span > m and pair.kind is CertificateKind.PAIR_AND_SWAP
    assert crit.singular is True and crit.differential_rank == m - (d - 1) and crit.kind is CertificateKind.RANK_DROP
    assert crit.exact_rank == m - (d - 1)


def test_rank_bound_has_its_own_singularities():
    # a = 2 < d = 3, d' = 2: rank A = 1 with rank V = 2 is singular (the domain is), against the rank-one rule
    m = 2 * (6 - 2) + 6 - 1
    orb = next(o for o in orbit_representatives(3, 2, 2) if (o.rank_a, o.rank_v) == (1, 2))
    v = certify(orb.A, orb.V, dimension=m, rank_bound=2)
    assert v.singular is True and v.kind is CertificateKind.DOMAIN_EXCESS and v.span > m


def test_d1_a1_is_outside_and_different():
    for d, want in [(2, False), (3, True), (5, True)]:
        crit = next(o for o in orbit_representatives(d, 1, 1) if o.critical)
        v = certify(crit.A, crit.V, dimension=2 * d - 1 + d - 1, rank_bound=1)
        assert v.singular is want and v.kind is CertificateKind.SYMMETRIC_MINORS
        assert (v.minors_rank < v.codim) is want


@settings(max_examples=100, deadline=None)
@given(
    A=st.one_of(ANY_VALUE, st.lists(st.lists(st.integers(-3, 3), min_size=1, max_size=3), min_size=1, max_size=3)),
    V=st.one_of(ANY_VALUE, st.lists(st.lists(st.integers(-3, 3), min_size=1, max_size=3), min_size=1, max_size=2)),
    dim=ANY_VALUE,
)
def test_certify_gives_a_verdict_or_a_named_error(A, V, dim):
    try:
        v = certify(A, V, dimension=dim)
    except InvalidArgumentError as exc:
        assert any(name in str(exc) for name in ("A", "V", "dimension")), exc
        return
    assert v.singular in (True, False, None)


def test_fractions_are_accepted_by_certify():
    v = certify([[Fraction(1, 2), 2], [3, 4]], [[1, 1]], dimension=5)
    assert v.singular is False
