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
