"""Tangents of the continuous parameter symmetries (ag_attention._models.symmetries): in the Jacobian's kernel."""

import numpy as np
import pytest

from ag_attention import Architecture, dimension
from ag_attention._exact import linalg
from ag_attention._exact.field import DEFAULT_PRIME, GFp
from ag_attention._models.formulas import symmetry_count
from ag_attention._models.symmetries import symmetry_generators, symmetry_tangents
from ag_attention._network import jacobian
from ag_attention._numeric import Float64
from tests.helpers import generator

ARCHS = [
    Architecture((4, 4, 4), (2, 2), tokens=3),
    Architecture((4, 2, 4), (2, 2), tokens=2),
    Architecture.single_layer(3, 2, tokens=2),
    Architecture((2, 3, 2), None, tokens=2, parametrization="AV"),
    Architecture((3, 3, 3), (2, 1), tokens=2, heads=2),
    Architecture((3, 3, 3), (2, 1), tokens=2, skip=True),
    Architecture((3, 2, 2), (2, 1), tokens=3, causal=True),
    # affine and rotary attention (docs/math/affine.md, docs/math/rotary.md)
    Architecture((3, 3, 2), (2, 2), tokens=3, heads=2, bias="qkvo"),
    Architecture((3, 3, 2), (2, 2), tokens=2, bias="qv"),
    Architecture((4, 4, 2), (4, 2), tokens=3, positions="rope"),
    Architecture((4, 4, 2), (4, 4), tokens=3, heads=2, bias="qkvo", positions={"kind": "rope", "dims": 2}),
    Architecture((3, 3, 3), (2, 2), tokens=2, bias="qkvo", skip=True, causal=True),
]


@pytest.mark.parametrize("arch", ARCHS, ids=str)
def test_every_tangent_is_in_the_kernel_of_the_jacobian(arch, rng):
    F = GFp(DEFAULT_PRIME)
    theta = F.random(rng, arch.parameter_count)
    X = F.random(rng, (3, arch.tokens, arch.widths[0]))
    T, families = symmetry_tangents(arch, theta, F)
    assert T.shape == (symmetry_generators(arch), arch.parameter_count)
    J = jacobian(arch, F, theta, X)
    assert not F.einsum("rp,gp->rg", J, T).any()
    # the families cover the rows, in order, without overlap
    assert [f.rows.start for f in families] == [0] + [f.rows.stop for f in families[:-1]]
    assert families[-1].rows.stop == T.shape[0]


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((3, 2, 2), (2, 1), tokens=3, normalized=True, temperature=0.7),
        Architecture((2, 2, 2), (1, 2), tokens=2, heads=2, normalized=True),
        Architecture((3, 3, 2), (2, 2), tokens=3, heads=2, bias="qkvo", normalized=True),
        Architecture((3, 3, 2), (2, 2), tokens=3, heads=2, bias="qvo", normalized=True, causal=True),
        Architecture((3, 3, 2), (2, 2), tokens=3, heads=3, bias="kv", normalized=True),
        Architecture((4, 4, 2), (4, 2), tokens=3, heads=2, bias="qkvo", positions="rope", normalized=True),
        Architecture((4, 4), (4,), tokens=3, bias="kv", positions={"kind": "rope", "dims": 2}, normalized=True),
    ],
    ids=str,
)
def test_softmax_tangents_are_in_the_kernel_too(arch):
    rng = generator(1)
    F = Float64()
    theta = rng.standard_normal(arch.parameter_count)
    X = rng.standard_normal((2, arch.tokens, arch.widths[0]))
    T, families = symmetry_tangents(arch, theta, F)
    assert T.shape == (symmetry_generators(arch), arch.parameter_count)
    assert {f.kind for f in families} <= {"attention", "interlayer", "bias"}  # no rescaling under a softmax
    J = jacobian(arch, F, theta, X)
    # J T^T is 0 exactly; in float64 each entry is a sum of P products, off by about P eps |J| |T| (1e-14): 1e-9 is
    # a margin of 1e5, and a tangent outside the kernel gives order one
    assert np.abs(J @ T.T).max() < 1e-9 * max(1.0, np.abs(J).max() * np.abs(T).max())


def test_the_families_of_a_network():
    arch = Architecture((3, 3, 3), (2, 1), tokens=2, heads=2)
    theta = np.arange(1, arch.parameter_count + 1)
    _, families = symmetry_tangents(arch, theta, GFp(101))
    assert [(f.name, f.kind, f.rows.stop - f.rows.start) for f in families] == [
        ("GL_2 on (Q1, K1) head 1", "attention", 4),
        ("GL_2 on (Q1, K1) head 2", "attention", 4),
        ("GL_1 on (Q2, K2) head 1", "attention", 1),
        ("GL_1 on (Q2, K2) head 2", "attention", 1),
        ("GL_3 between layers 1 and 2", "interlayer", 9),
        ("rescaling (c A_i, V_i / c)", "scaling", 4),
    ]
    _, av = symmetry_tangents(Architecture.single_layer(2, 1), np.arange(1, 7), GFp(101))
    assert [(f.kind, f.rows.stop - f.rows.start) for f in av] == [("scaling", 1)]


def test_at_a_generic_point_the_tangents_span_the_counted_symmetries(rng):
    """On bottlenecks the families act freely: rank of the tangents = the count = P - dim (Thm. 3.7)."""
    for arch in (Architecture((4, 4, 4), (2, 2), tokens=3), Architecture((4, 2, 4), (2, 2), tokens=3)):
        F = GFp(DEFAULT_PRIME)
        T, _ = symmetry_tangents(arch, F.random(rng, arch.parameter_count), F)
        r = linalg.rank(T, DEFAULT_PRIME)
        assert r == symmetry_count(arch) == arch.parameter_count - dimension(arch).dimension


def test_at_zero_the_tangents_vanish():
    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    T, _ = symmetry_tangents(arch, np.zeros(arch.parameter_count, dtype=np.int64), GFp(101))
    assert T.shape[0] == symmetry_generators(arch) and not T.any()


def test_the_families_of_affine_and_rotary_networks():
    """docs/math/affine.md, docs/math/rotary.md: the commutant of the rotations (D + (a - D)^2), translations between
    layers, softmax's key and value bias families."""
    arch = Architecture((4, 4, 4), (4, 4), tokens=3, heads=2, bias="qkvo", positions={"kind": "rope", "dims": 2})
    theta = np.arange(1, arch.parameter_count + 1)
    _, families = symmetry_tangents(arch, theta, GFp(101))
    assert [(f.name, f.kind, f.rows.stop - f.rows.start) for f in families] == [
        ("the rotations' commutant in GL_4 on (Q1, K1) head 1", "attention", 2 + 2**2),
        ("the rotations' commutant in GL_4 on (Q1, K1) head 2", "attention", 6),
        ("the rotations' commutant in GL_4 on (Q2, K2) head 1", "attention", 6),
        ("the rotations' commutant in GL_4 on (Q2, K2) head 2", "attention", 6),
        ("GL_4 between layers 1 and 2", "interlayer", 16),
        ("translations R^4 between layers 1 and 2", "interlayer", 4),
        ("rescaling (c A_i, V_i / c)", "scaling", 4),
    ]
    soft = Architecture((3, 3), (2,), tokens=3, heads=2, bias="qkvo", normalized=True)
    _, families = symmetry_tangents(soft, np.arange(1, soft.parameter_count + 1), GFp(101))
    assert [(f.kind, f.rows.stop - f.rows.start) for f in families][-2:] == [("bias", 2 * 2), ("bias", 2 * 3)]


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((3, 2), (2,), tokens=3, bias="qkvo"),
        Architecture((4, 3), (4,), tokens=3, positions="rope"),
        Architecture((4, 3), (4,), tokens=2, positions={"kind": "rope", "dims": 2}, bias="qk"),
        Architecture((4, 4, 4), (2, 2), tokens=3, bias="qkvo"),
    ],
    ids=str,
)
def test_variant_tangents_span_the_counted_symmetries(arch, rng):
    """The families act freely at a generic point: the tangents' rank is the count, and P minus it the dimension."""
    F = GFp(DEFAULT_PRIME)
    T, _ = symmetry_tangents(arch, F.random(rng, arch.parameter_count), F)
    assert linalg.rank(T, DEFAULT_PRIME) == symmetry_count(arch) == arch.parameter_count - dimension(arch).dimension
