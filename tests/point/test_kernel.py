"""The kernel directions of dead and rank-deficient heads (ag_attention._point.kernel), decided in the report."""

import numpy as np
import pytest

from ag_attention._point.kernel import head_kernel
from tests.helpers import generator


def _mha(dead=False, rank_one=False):
    rng = generator(6)
    W = rng.standard_normal((12, 4)).astype(np.float32)  # E = 4, 2 heads of 2: W_q, W_k, W_v stacked
    if dead:
        W[8 + 2 : 8 + 4] = 0  # W_v of head 2: V_2 = 0
    if rank_one:
        W[1] = 0  # one query row of head 1: rank A_1 = 1
    return {"attn.in_proj_weight": W, "attn.out_proj.weight": rng.standard_normal((4, 4)).astype(np.float32)}


@pytest.mark.parametrize(
    "plant, rank, said",
    [
        ("dead", 43, "layer 1 head 2: V = 0, so Q and K (16 entries)"),
        ("rank_one", 52, "layer 1 head 1: rank A = 1 < 2, so 4 directions of Q and K that keep A"),
    ],
)
def test_the_point_report_decides_a_dead_and_a_rank_one_head(plant, rank, said):
    """Issue 37: with one head's W_O,h W_v,h exactly 0 the report said "43 <= rank <= 54 (not decided)"; the
    head's own kernel directions (exact, no lifting) with the symmetry tangents prove the rank and the verdict."""
    from ag_attention import Network, point_geometry

    net = Network.from_checkpoint(_mha(**{plant: True}), tokens=3, heads=2, normalized=False)
    g = point_geometry(net)
    assert g.exact and g.local_rank == rank and g.generic_dimension == 54 and g.critical is True
    text = str(g)
    assert said in text and "heads' kernel    rank <= " in text
    assert "critical (its own parametrization, proven)" in text
    d = g.to_dict()
    assert len(d["heads"]["critical"]) == 1
    healthy = point_geometry(Network.from_checkpoint(_mha(), tokens=3, heads=2, normalized=False))
    assert healthy.critical is False and "heads' kernel" not in str(healthy)
    assert "rank-deficient" not in str(healthy)  # rank V_h = 2 = d_h < d = 4: full for a factored product


def test_a_softmax_checkpoint_s_dead_head_is_decided_by_its_kernel_directions():
    """The default model of a checkpoint (softmax): no exact lower bound, but V_h = 0 makes W_q,h, W_k,h kernel
    directions, so the local rank is at most 44 against the certified softmax dimension 56: critical, proven."""
    from ag_attention import Network, point_geometry

    g = point_geometry(Network.from_checkpoint(_mha(dead=True), tokens=3, heads=2))
    assert g.network.architecture.normalized and g.generic_dimension == 56 and g.generic_certified
    assert g.local.upper == 44 and g.local_rank is None and g.critical is True
    assert "rank <= 44 (softmax: no exact lower bound)" in str(g)
    assert point_geometry(Network.from_checkpoint(_mha(), tokens=3, heads=2)).critical is None  # as --normalized


def test_a_dead_head_s_queries_and_keys_are_kernel_directions():
    from ag_attention import Network

    net = Network.from_checkpoint(_mha(dead=True), tokens=3, heads=2, normalized=False)
    rows, said = head_kernel(net, 101)
    assert rows.shape == (16, net.architecture.parameter_count) and said == (
        "layer 1 head 2: V = 0, so Q and K (16 entries)",
    )
    assert head_kernel(Network.from_checkpoint(_mha(), tokens=3, heads=2, normalized=False), 101)[0].shape[0] == 0


def _variant_weights(rng, bias, plant):
    """Two heads of width 4 (a = 2) with biases ``bias`` and one planted defect in head 2 (head 1 healthy)."""
    w = {}
    for h in range(2):
        w[f"layers.0.heads.{h}.Q"] = rng.integers(-3, 4, (2, 4))
        w[f"layers.0.heads.{h}.K"] = rng.integers(-3, 4, (2, 4))
        w[f"layers.0.heads.{h}.V"] = rng.integers(-3, 4, (3, 4))
        for c in bias.replace("o", ""):
            w[f"layers.0.heads.{h}.b{c.upper()}"] = rng.integers(-3, 4, 3 if c == "v" else 2)
    if "o" in bias:
        w["layers.0.bO"] = rng.integers(-3, 4, 3)
    if plant == "values":
        w["layers.0.heads.1.V"] = np.zeros((3, 4), int)
        if "v" in bias:
            w["layers.0.heads.1.bV"] = np.zeros(3, int)
    elif plant == "scores":
        w["layers.0.heads.1.Q"] = np.zeros((2, 4), int)
        if "q" in bias:
            w["layers.0.heads.1.bQ"] = np.zeros(2, int)
    elif plant == "rank":  # A = W_q^T W_k of rank 1; a query bias keeps the affine block's rank 2
        w["layers.0.heads.1.Q"][1] = 0
        if "q" in bias:
            w["layers.0.heads.1.bQ"] = np.array([0, 1])
    return w


@pytest.mark.parametrize("bias", ["", "qkvo", "qv", "k"])
@pytest.mark.parametrize("positions", [None, "rope"])
@pytest.mark.parametrize("plant", ["values", "scores", "rank", None])
def test_affine_and_rotary_kernel_directions_are_in_the_kernel(bias, positions, plant, rng):
    """Every direction head_kernel claims is in the Jacobian's kernel at the point (GF(p), random inputs): the
    augmented blocks decide (a rank-deficient W_q^T W_k is no defect when the biases restore the rank), and with
    rotary positions only dead heads are claimed. The report's verdict agrees with the local rank."""
    from ag_attention import Network, point_geometry
    from ag_attention._exact.field import DEFAULT_PRIME, GFp
    from ag_attention._network import jacobian

    if not bias and positions is None:
        return  # the paper's heads: above
    net = Network.from_weights(_variant_weights(rng, bias, plant), tokens=3, positions=positions)
    F = GFp(DEFAULT_PRIME)
    S, said = head_kernel(net, DEFAULT_PRIME)
    X = F.random(rng, (6, 3, 4))
    J = jacobian(net.architecture, F, net.theta_mod(DEFAULT_PRIME), X)
    assert not F.einsum("rp,kp->rk", J, S).any(), said
    if plant == "values":
        assert S.shape[0] > 0
    if plant == "rank" and (positions is not None or "q" in bias):
        assert S.shape[0] == 0  # no claim: rotary forms differ, or the query bias restores the affine rank
    g = point_geometry(net)
    table = g.heads
    if table is not None and g.critical is False:
        assert not table.critical(), "a head called critical at a point the local rank proves is not"
