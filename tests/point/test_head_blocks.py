"""A head's blocks at the point (ag_attention._point.head_blocks): verdicts of affine and rotary heads, proportional
heads."""

import numpy as np

from ag_attention._point.grouped import GroupedLayer
from ag_attention._point.head_blocks import Extra, factor, variant_verdict
from ag_attention._point.heads import head_table
from ag_attention._positions import Rotary
from tests.helpers import generator

E, H = 8, 4
D = E // H


def _layers(rng, heads=H):
    Q, K, Wo, Wv = (rng.standard_normal((E, E)) for _ in range(4))
    rows = [slice(h * D, (h + 1) * D) for h in range(heads)]
    return GroupedLayer(
        tuple(Q[s] for s in rows), tuple(Wo[:, s] for s in rows), tuple(K[s] for s in rows), tuple(Wv[s] for s in rows)
    )


def test_identical_and_proportional_heads_are_flagged_and_random_ones_are_not():
    rng = generator(8)
    layer = _layers(rng)
    assert head_table([layer], normalized=False).twins == ()
    Q, W_O, K, W_v = (list(f) for f in (layer.Q, layer.W_O, layer.K, layer.W_v))
    Q[3], K[3], W_O[3], W_v[3] = Q[0], K[0], W_O[0], W_v[0]  # head 3 = head 0
    Q[2], K[2], W_O[2], W_v[2] = 2 * Q[1], K[1], 4 * W_O[1], W_v[1]  # head 2 = 8 head 1 (powers of two: exact)
    table = head_table([GroupedLayer(tuple(Q), tuple(W_O), tuple(K), tuple(W_v))], normalized=False)
    assert table.twins == ((1, 1, 4, "identical"), (1, 2, 3, "proportional"))
    text = str(table)
    assert "heads 0.0, 0.3  identical functions (probabilistic" in text and "heads 0.1, 0.2  proportional" in text
    assert table.to_dict()["twins"] == [
        {"layer": 0, "heads": [0, 3], "kind": "identical"},
        {"layer": 0, "heads": [1, 2], "kind": "proportional"},
    ]
    # a GL(d_h) change of a head's factors is the same function: still flagged
    G = rng.standard_normal((D, D))
    Q[3], K[3] = G @ Q[0], np.linalg.solve(G.T, K[0])
    assert head_table([GroupedLayer(tuple(Q), tuple(W_O), tuple(K), tuple(W_v))], normalized=False).twins[0][3] in (
        "identical",
        "proportional",
    )


def test_affine_blocks_decide_where_the_bias_free_ones_would_mislead():
    """W_q^T W_k of rank 1 < d_h, but a query bias gives [W_q | b_q] rank 2: not critical (the scores see the affine
    block); zero values with a nonzero value bias are not dead under lightning (c_h times the scores' row sums), dead
    under softmax (c_h passes through)."""
    rng = generator(5)
    Q, K = rng.standard_normal((D, E)), rng.standard_normal((D, E))
    Q[1] = 0
    bQ = np.array([[0.0], [1.0]])
    A = factor(Q.T, K, 1e-3, 2097143)
    At = factor(np.hstack([Q, bQ]).T, np.hstack([K, np.zeros((D, 1))]), 1e-3, 2097143)
    Wo, Wv = rng.standard_normal((E, D)), np.zeros((D, E))
    V = factor(Wo, Wv, 1e-3, 2097143)
    Vt = factor(Wo, np.hstack([Wv, np.ones((D, 1))]), 1e-3, 2097143)
    assert A.rank == 1 and At.rank == 2 and V.zero and not Vt.zero
    critical, reason, dead = variant_verdict(A, V, Extra(At, Vt), D, normalized=False)
    assert not critical and not dead and "do not drop" in reason
    critical, reason, dead = variant_verdict(A, V, Extra(At, Vt), D, normalized=True)
    assert critical and dead == "V_h = 0"


def test_rotary_heads_are_decided_only_when_dead():
    layer = _layers(generator(6))
    rotary = GroupedLayer(layer.Q, layer.W_O, layer.K, layer.W_v, rotary=Rotary())
    table = head_table([rotary], normalized=False)
    assert all(h.pairs == (1, 1) and not h.critical for h in table.heads)
    Q = list(layer.Q)
    Q[0] = np.zeros_like(Q[0])
    dead = head_table([GroupedLayer(tuple(Q), layer.W_O, layer.K, layer.W_v, rotary=Rotary())], normalized=False)
    assert dead.heads[0].critical and dead.heads[0].pairs == (0, 1) and dead.heads[0].dead == "scores 0"
    assert table.twins == ()  # compared at offset 0 only: not claimed for rotary heads
