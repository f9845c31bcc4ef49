"""Typed verdicts: certify answers with a CertificateKind and its numbers; text only when printed."""

import pickle

import numpy as np
import pytest

from ag_attention import CertificateKind, InvalidArgumentError, PointVerdict, certify
from ag_attention._models.orbits import orbit_representatives
from ag_attention._reproduce.theorem34 import Size

SIZES = [(2, 1, 2), (3, 2, 3), (3, 2, 2), (4, 1, 3), (3, 1, 1), (2, 1, 1), (2, 2, 2)]


def test_every_orbit_gets_a_kind_and_the_kinds_cover_the_arguments():
    kinds = set()
    for d, e, a in SIZES:
        size = Size(d, e, a)
        for orb in orbit_representatives(d, e, a):
            v = certify(orb.A, orb.V, dimension=size.dim, rank_bound=None if size.free else a)
            assert isinstance(v.kind, CertificateKind) and v.decided == (v.singular is not None)
            assert v.reason == str(v) and v.to_dict()["kind"] == v.kind.name
            kinds.add(v.kind)
    assert kinds == {
        CertificateKind.VERTEX,
        CertificateKind.IMMERSION,
        CertificateKind.PAIR_AND_SWAP,
        CertificateKind.DOMAIN_EXCESS,
        CertificateKind.SYMMETRIC_MINORS,
        CertificateKind.RANK_DROP,
        CertificateKind.SINGULAR_DOMAIN,
    }


def test_the_numbers_of_each_argument():
    crit = certify(np.outer([1, 2, 3], [1, 1, 2]), np.outer([1, 4], [1, 1, 2]), dimension=14)
    assert crit.kind is CertificateKind.RANK_DROP and crit.exact_rank == 12 and crit.singular is True
    assert "rank 12 < dim M = 14" in str(crit)
    sym = certify(np.outer([1, 2, 3], [1, 1, 2]), [[2, 2, 4]], dimension=7, rank_bound=1)
    assert sym.kind is CertificateKind.SYMMETRIC_MINORS and sym.singular is True
    assert (sym.symmetric_rank, sym.minors_rank, sym.codim, sym.minors_rank_is_bound) == (1, 0, 1, False)
    d = sym.to_dict()
    assert d["kind"] == "SYMMETRIC_MINORS" and d["minors_rank"] == 0 and "minors_rank_is_bound" not in d
    zero = certify([[0]], [[0]], dimension=1)  # d = d' = 1: the neuromanifold is the whole line
    assert zero.kind is CertificateKind.WHOLE_SPACE and zero.singular is False and zero.preimages == 0
    vertex = certify([[0, 0], [0, 0]], [[0, 0]], dimension=5)
    assert vertex.kind is CertificateKind.VERTEX and vertex.singular is True and vertex.preimages == 0
    pair = certify([[1, 0], [0, 0]], [[0, 1]], dimension=5)
    assert pair.kind is CertificateKind.PAIR_AND_SWAP and (pair.preimages, pair.span) == (2, 6)


@pytest.mark.parametrize(
    "kind, text",
    [
        (CertificateKind.NOT_RATIONAL, "preimages not defined over QQ (use the conjugate-point checks)"),
        (CertificateKind.UNDECIDED, "undecided by the parametrization"),
    ],
)
def test_undecided_kinds_render_and_stay_undecided(kind, text):
    v = PointVerdict(kind, None, 2, dimension=5)
    assert not v.decided and str(v) == text and v.summary


def test_verdicts_are_frozen():
    v = PointVerdict(CertificateKind.IMMERSION, False, 1, 5, 5, 5)
    with pytest.raises(AttributeError):
        v.singular = True  # type: ignore[misc]


@pytest.mark.parametrize("value", [np.array([0.0, 0.0]), 3, None, "nope", [1]])
def test_a_certificate_kind_of_no_label_is_the_package_error_naming_the_value(value):
    # an unhashable array made Enum's own lookup fail with an ambiguous truth value, before _missing_ was asked
    with pytest.raises(InvalidArgumentError, match=r"^value=.*: must be the label of a CertificateKind"):
        CertificateKind(value)
    assert CertificateKind("immersion") is CertificateKind.IMMERSION
    assert pickle.loads(pickle.dumps(CertificateKind.VERTEX)) is CertificateKind.VERTEX
