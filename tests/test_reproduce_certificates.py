"""Typed certificates: every sentence of exact.onelayer.certify is a CertificateKind with its numbers."""

import numpy as np
import pytest

from ag_attention.errors import ComputationError
from ag_attention.exact.onelayer import PointVerdict, certify
from ag_attention.models.orbits import orbit_representatives
from ag_attention.reproduce.certificates import Certificate, CertificateKind, certify_point, from_verdict
from ag_attention.reproduce.theorem34 import Size

SIZES = [(2, 1, 2), (3, 2, 3), (3, 2, 2), (4, 1, 3), (3, 1, 1), (2, 1, 1), (2, 2, 2)]


def test_every_orbit_certificate_is_typed_and_renders_certifys_sentence():
    kinds = set()
    for d, e, a in SIZES:
        size = Size(d, e, a)
        for orb in orbit_representatives(d, e, a):
            v = certify(orb.A, orb.V, dimension=size.dim, rank_bound=None if size.free else a)
            c = from_verdict(v)
            assert str(c) == v.reason  # text only when printed, the same words
            assert (c.singular, c.preimages, c.dimension, c.differential_rank, c.span) == (
                v.singular, v.preimages, v.dimension, v.differential_rank, v.span)
            kinds.add(c.kind)
    assert kinds == {CertificateKind.VERTEX, CertificateKind.IMMERSION, CertificateKind.PAIR_AND_SWAP,
                     CertificateKind.DOMAIN_EXCESS, CertificateKind.SYMMETRIC_MINORS, CertificateKind.RANK_DROP,
                     CertificateKind.SINGULAR_DOMAIN}


def test_the_numbers_of_each_argument():
    crit = certify_point(np.outer([1, 2, 3], [1, 1, 2]), np.outer([1, 4], [1, 1, 2]), dimension=14)
    assert crit.kind is CertificateKind.RANK_DROP and crit.exact_rank == 12 and crit.singular is True
    sym = certify_point(np.outer([1, 2, 3], [1, 1, 2]), [[2, 2, 4]], dimension=7, rank_bound=1)
    assert sym.kind is CertificateKind.SYMMETRIC_MINORS and sym.singular is True
    assert (sym.symmetric_rank, sym.minors_rank, sym.codim, sym.minors_rank_is_bound) == (1, 0, 1, False)
    d = sym.to_dict()
    assert d["kind"] == "SYMMETRIC_MINORS" and d["minors_rank"] == 0 and "minors_rank_is_bound" not in d
    zero = certify_point([[0, 0], [0, 0]], [[0, 0]], dimension=6)
    assert zero.kind is CertificateKind.WHOLE_SPACE and zero.singular is False


@pytest.mark.parametrize("reason, kind", [
    ("preimages not defined over QQ (use the conjugate-point checks)", CertificateKind.NOT_RATIONAL),
    ("undecided by the parametrization", CertificateKind.UNDECIDED),
])
def test_sentences_no_rational_weights_reach(reason, kind):
    c = from_verdict(PointVerdict(None, reason, 2, dimension=5))
    assert c.kind is kind and not c.decided and str(c) == reason


def test_an_unknown_sentence_is_an_error_not_a_guess():
    with pytest.raises(ComputationError, match="does not know"):
        from_verdict(PointVerdict(True, "tangent excess: three preimages; their tangent images span >= 9 > dim M = 5", 3))


def test_certificates_are_frozen():
    c = Certificate(CertificateKind.IMMERSION, False, 1, 5, 5, 5)
    with pytest.raises(AttributeError):
        c.singular = True  # type: ignore[misc]
