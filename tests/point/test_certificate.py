"""Deep rank drops decided from above: kernel vectors lifted from GF(p) to QQ and verified exactly."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ag_attention import Architecture, Network, point_geometry
from tests.helpers import generator


def rank_one_first_v(seed: int = 3, scale: Fraction = Fraction(1), floats: bool = False) -> Network:
    """Two layers (3,3,3), ranks (2,2), t = 3, integer weights, the first V of rank one (issue 28's example):
    the symmetries only bound the rank by 23 = dim M."""
    rng = generator(seed)
    W = {}
    for l in range(2):
        Q, K, V = rng.integers(-3, 4, (2, 3)), rng.integers(-3, 4, (2, 3)), rng.integers(-3, 4, (3, 3))
        if l == 0:
            V = np.outer([1, 2, -1], [2, 0, 1])
        W[f"layers.{l}.heads.0.Q"] = [[Fraction(int(x)) * scale for x in r] for r in Q]
        W[f"layers.{l}.heads.0.K"] = [[Fraction(int(x)) for x in r] for r in K]
        W[f"layers.{l}.heads.0.V"] = [[Fraction(int(x)) / scale for x in r] for r in V]
    if floats:  # the same point as float32 arrays scaled by 0.37 (an exact binary value, big denominators)
        W = {k: (np.array(v, dtype=np.float64) * 0.37).astype(np.float32) for k, v in W.items()}
        for _ in range(2):  # keep V_1 of rank one in float32: an outer product of float16 numbers is exact
            W["layers.0.heads.0.V"] = np.outer(np.float16([0.37, 0.74, -0.37]), np.float16([2, 0, 1])).astype(
                np.float32
            )
    return Network.from_weights(W, tokens=3)


def test_a_deep_rank_drop_is_decided_critical_with_its_certificate():
    """Before: '16 <= rank <= 23 (not decided)', 'critical: not decided'.  Now: 26 kernel vectors verified
    over QQ, rank 16 exact, critical, and the 7 directions beyond the symmetries all in layer 2 (its V sees
    inputs on a line)."""
    g = point_geometry(rank_one_first_v())
    assert g.exact and g.local.lower == g.local.upper == 16 and g.generic_dimension == 23 and g.generic_certified
    assert g.critical is True
    cert = g.local.certificate
    assert cert is not None and cert.upper == 16 and len(cert.vectors) == 42 - 16
    assert len(cert.beyond_symmetries) == 23 - 16 == (42 - 16) - g.local.symmetry_rank
    assert all(layer == 2 for d in cert.beyond_symmetries for layer, _, _, _ in d.blocks)
    text = str(g)
    assert "kernel proof     rank <= 16" in text and "critical         yes" in text and "drop 1" in text
    d = g.to_dict()
    assert d["critical"] is True and d["local"]["kernel_certificate"]["verified_kernel_vectors"] == 26


def test_every_verified_vector_is_a_kernel_vector_and_a_wrong_one_is_not():
    from ag_attention._point.certificate import derivative_vanishes

    net = rank_one_first_v()
    cert = point_geometry(net).local.certificate
    assert all(derivative_vanishes(net, list(v)) for v in cert.vectors[:5])
    v = list(cert.vectors[0])
    v[0] += Fraction(1, 10**12)  # off the kernel by a hair: exact arithmetic sees it
    assert not derivative_vanishes(net, v)
    rng = generator(5)
    assert not derivative_vanishes(net, [Fraction(int(x)) for x in rng.integers(-2, 3, 42)])


def test_the_verdict_survives_a_symmetry_and_float_weights():
    """Metamorphic: (Q_1, V_1) -> (c Q_1, V_1 / c) is a symmetry (the same function): the same rank, the same
    number of directions beyond the symmetries; float32 weights with big binary denominators lift too."""
    base = point_geometry(rank_one_first_v())
    for net in (rank_one_first_v(scale=Fraction(7, 3)), rank_one_first_v(floats=True)):
        g = point_geometry(net)
        assert g.critical is True and g.exact and g.local.lower == base.local.lower
        assert len(g.local.certificate.beyond_symmetries) == len(base.local.certificate.beyond_symmetries)


def test_a_smooth_point_needs_no_certificate():
    rng = generator(8)
    arch = Architecture((3, 3, 3), (2, 2), tokens=3)
    net = Network.from_weights(
        {f"layers.{b.layer - 1}.heads.{b.head}.{b.name}": rng.integers(-4, 5, (b.rows, b.cols)) for b in arch.blocks},
        tokens=3,
    )
    g = point_geometry(net)
    assert g.critical is False and g.local.certificate is None


def test_too_large_for_the_exact_verification_says_why():
    """Three layers of width 3 at t = 3: outputs of degree 27 in 9 inputs (C(36, 9) monomials): no certificate,
    and the report says why instead of a bare 'not decided'."""
    from ag_attention._point.certificate import MAX_MONOMIALS, kernel_certificate, refusal, verification_size

    rng = generator(2)
    arch = Architecture((3, 3, 3, 3), (2, 2, 2), tokens=3)
    net = Network.from_weights(
        {f"layers.{b.layer - 1}.heads.{b.head}.{b.name}": rng.integers(-3, 4, (b.rows, b.cols)) for b in arch.blocks},
        tokens=3,
    )
    assert verification_size(net) > MAX_MONOMIALS
    why = refusal(net)
    assert why is not None and "degree 27" in why and kernel_certificate(net, 10) == why
