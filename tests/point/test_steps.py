"""The steps of point_geometry (ag_attention._point.steps): each layer alone, its ranks and its own verdict."""

from __future__ import annotations

from ag_attention import Network, point_geometry
from ag_attention._point.steps import layer_network, layers_at_point
from ag_attention._resources import Deadline
from tests.helpers import deep_weights


def test_a_deep_network_with_a_rank_deficient_layer_is_critical_and_names_the_layer():
    g = point_geometry(Network.from_weights(deep_weights(True)))
    assert g.exact and g.local_rank == 22 < g.generic_dimension == 23 and g.critical is True
    assert g.critical_layers() == [2]
    assert g.layers[1].rank_deficient and g.layers[1].critical and not g.layers[0].rank_deficient
    assert "layer 2" in str(g) and "critical by itself" in str(g)
    generic = point_geometry(Network.from_weights(deep_weights(False)))
    assert generic.critical is False and generic.critical_layers() == [] and generic.explained is True


def test_a_rank_deficient_layer_that_is_not_critical_is_not_named_critical():
    # rank V = 2 < 3 in the first layer, A of full rank a = 2: rank-deficient, yet not critical by itself
    w = deep_weights(False)
    w["layers.0.heads.0.V"][2] = w["layers.0.heads.0.V"][0] + w["layers.0.heads.0.V"][1]
    g = point_geometry(Network.from_weights(w))
    assert g.layers[0].rank_deficient and g.layers[0].critical is False
    assert g.critical_layers() == [] and g.to_dict()["critical_layers"] == []


def test_a_layer_alone_is_a_one_layer_network_at_the_same_weights():
    net = Network.from_weights(deep_weights(True))
    sub = layer_network(net, 1)
    assert sub.architecture.depth == 1 and sub.architecture.tokens == net.architecture.tokens
    assert sub.source == f"layer 2 of {net.source}" and sub.weights[0] is net.weights[1]
    shallow = layers_at_point(net, 0, deep=False, deadline=Deadline(None))
    assert [ly.local for ly in shallow] == [None, None] and shallow[1].rank_deficient


def test_a_point_at_its_own_symmetry_bound_needs_no_rank_at_a_random_point(monkeypatch):
    """Biases: the sizes alone prove no bound the rank reaches; the rank at the point meets the point's own
    symmetry bound P - rank T(theta), which bounds dim M too: dim M is that rank, proven, with no random point."""
    import ag_attention._point.steps as steps
    from ag_attention import Architecture, dimension
    from tests.helpers import generator

    arch = Architecture((4, 4), (2,), tokens=3, heads=2, causal=True, bias="qkv")
    rng = generator(11)
    w = {f"layers.{b.layer - 1}.heads.{b.head}.{b.name}": rng.integers(-5, 6, (b.rows, b.cols)) for b in arch.blocks}
    net = Network.from_weights(w, tokens=3, causal=True)
    want = dimension(arch).dimension

    def no_random_rank(*args, **kwargs):
        raise AssertionError("a rank at a random point was taken")

    monkeypatch.setattr(steps, "dimension", no_random_rank)
    g = point_geometry(net)
    assert g.exact and g.generic_certified and g.local_rank == g.generic_dimension == want == 70
    assert "reaches the symmetry bound there, P - rank T(theta) = 70" in g.generic_certificate
    assert g.critical is False
