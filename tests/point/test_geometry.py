"""The local rank at given weights (ag_attention._point.geometry): proven bounds, exact where they meet."""

from __future__ import annotations

import numpy as np
import pytest

from ag_attention import Architecture, Network, dimension
from tests.helpers import generator


def _random_network(arch: Architecture, seed: int) -> Network:
    rng = generator(seed)
    return Network.from_weights(
        {
            f"layers.{b.layer - 1}.heads.{b.head}.{b.name}": [
                list(map(int, row)) for row in rng.integers(-5, 6, (b.rows, b.cols))
            ]
            for b in arch.blocks
        },
        tokens=arch.tokens,
        causal=arch.causal,
        skip=arch.skip,
    )


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((3, 2), (2,), tokens=2),
        Architecture((3, 3, 3), (2, 2), tokens=2),
        Architecture((2, 3, 2), (2, 2), tokens=3, heads=2),
        Architecture((3, 3, 3), (2, 2), tokens=2, causal=True),
        Architecture((2, 2, 2), (2, 2), tokens=2, skip=True),
    ],
    ids=lambda a: a.describe(),
)
def test_a_generic_point_has_the_generic_rank_proven(arch):
    """At random integer weights the lower bound meets the symmetry bound and equals dim M (certified)."""
    from ag_attention._point.geometry import local_rank

    net = _random_network(arch, 11)
    dim = dimension(net.architecture)
    r = local_rank(net, dimension_bound=dim.upper_bound)
    assert r.exact and r.lower == r.upper == dim.dimension and dim.certified
    assert r.kernel == (arch.parameter_count - r.lower,) * 2


def test_the_one_layer_rank_is_exact_over_qq_at_a_critical_pair():
    """A = u v^T, V = w v^T: the symmetry bound (14) stays above the rank; the exact one-layer differential
    proves rank 12 = dim M - (d - 1) (Lemma A.3's rank drop)."""
    from ag_attention._point.geometry import exact_one_layer_rank, local_rank

    u, v, w = np.array([1, 2, 3]), np.array([1, -1, 2]), np.array([2, 5])
    net = Network.from_weights({"layers.0.heads.0.A": np.outer(u, v), "layers.0.heads.0.V": np.outer(w, v)})
    r = local_rank(net)
    assert r.exact and r.exact_qq and r.lower == r.upper == 12 == exact_one_layer_rank(net)
    assert r.symmetry_rank == 1  # only the rescaling: 15 - 1 = 14 would not have decided it
    # the QKV parametrization of the same point, A = Q^T K of rank 1 padded to rank 2
    q = Network.from_weights({"layers.0.heads.0.A": np.outer(u, v), "layers.0.heads.0.V": np.outer(w, v)}, rank=2)
    assert q.architecture.parametrization == "QKV" and exact_one_layer_rank(q) <= 12


def test_the_composition_at_the_point_proves_a_deep_rank_drop():
    """Layer 2 with a zero row in Q (rank A_2 = 1): the symmetries only bound the rank by 23 = dim M; the
    layers' own ranks (16 and 15, exact) minus GL_3 bound it by 22, which the GF(p) rank reaches."""
    from ag_attention._point.geometry import composition_at_point, local_rank, output_span_at

    net = _deep_rank_deficient()
    r = local_rank(net)
    assert (r.lower, r.upper) == (22, 23)
    layers = [Network(Architecture((3, 3), (2,), tokens=2), (net.weights[i],), "", False) for i in range(2)]
    ranks = [local_rank(n) for n in layers]
    assert [x.lower for x in ranks] == [16, 15] and all(x.exact for x in ranks)
    spans = [output_span_at(n) for n in layers]
    assert spans[0] == 3
    assert composition_at_point(net, [x.upper for x in ranks], spans)[0] == 22


def _deep_rank_deficient() -> Network:
    rng = generator(1)
    w = {}
    for l in range(2):
        w[f"layers.{l}.heads.0.Q"] = rng.integers(-3, 4, (2, 3))
        w[f"layers.{l}.heads.0.K"] = rng.integers(-3, 4, (2, 3))
        w[f"layers.{l}.heads.0.V"] = rng.integers(-3, 4, (3, 3))
    w["layers.1.heads.0.Q"][1] = 0
    return Network.from_weights(w, tokens=2)


def test_softmax_has_no_exact_local_rank():
    from ag_attention import ComputationError
    from ag_attention._point.geometry import local_rank

    net = _random_network(Architecture((2, 2), (2,), tokens=2), 2)
    soft = Network(net.architecture.with_(normalized=True), net.weights, net.conversion, net.floats)
    with pytest.raises(ComputationError, match="float64"):
        local_rank(soft)


def test_a_prime_dividing_a_denominator_is_skipped():
    """1/(2^31 - 1) cannot be reduced modulo the default prime: the next prime is used."""
    from fractions import Fraction

    from ag_attention._point.geometry import PRIMES, local_rank

    net = _random_network(Architecture((2, 1), (2,), tokens=2), 4)
    w = {f"layers.0.heads.0.{n}": m.copy() for n, m in net.weights[0][0].items()}
    w["layers.0.heads.0.V"][0, 0] = Fraction(1, PRIMES[0])
    r = local_rank(Network.from_weights(w))
    assert r.primes[0] == PRIMES[1] and r.exact and r.lower == 5
