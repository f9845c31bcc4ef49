"""Grouped-query attention in its own parametrization (ag_attention._point.grouped): the heads of a group can be
mixed (GL_r), the dimension is P - h_kv (2 d_h^2 + r^2), and the local rank at a checkpoint's point."""

import numpy as np
import pytest

from ag_attention import Network, point_geometry
from ag_attention._point.grouped import grouped_geometry
from tests.cli import run_in_process
from tests.helpers import generator


def _checkpoint(E, h, kv, seed=0, integers=False):
    rng = generator(seed)
    d_h = E // h
    draw = (lambda *s: rng.integers(-3, 4, s).astype(float)) if integers else (lambda *s: rng.standard_normal(s))
    return {"q": draw(E, E), "k": draw(kv * d_h, E), "v": draw(kv * d_h, E), "o": draw(E, E)}


def _network(W, h, tokens=2):
    return Network.from_checkpoint(
        {f"a.{r}_proj.weight": W[r] for r in "qkvo"}, tokens=tokens, heads=h, normalized=False
    )  # the lightning GQA model


@pytest.mark.parametrize("E, h, kv", [(4, 2, 1), (4, 4, 2), (4, 4, 1), (6, 3, 1), (6, 2, 1), (8, 4, 1), (8, 4, 2)])
def test_the_dimension_is_the_parameters_minus_the_symmetries(E, h, kv):
    """Certified at a random point: the GF(p) rank of the Jacobian meets P minus the rank of the symmetry
    tangents, and both are the formula P - h_kv (2 d_h^2 + r^2) (r = h / h_kv query heads per group)."""
    d_h, r = E // h, h // kv
    net = _network(_checkpoint(E, h, kv, integers=True), h)
    g = grouped_geometry(net.architecture, net.grouped)
    P = 2 * h * d_h * E + 2 * kv * d_h * E
    assert g.parameters == P and g.symmetries == kv * (2 * d_h**2 + r**2)
    assert g.certified and g.dimension_lower == P - kv * (2 * d_h**2 + r**2)


def test_the_query_heads_of_a_group_can_be_mixed_and_of_two_groups_not():
    """Q'_h = sum G_hh' Q_h', W'_O = W_O G^-1 inside a group: the same function (exactly), beyond the per-head
    rescalings of multi-head attention; mixing heads of two groups changes it."""
    E, h, kv = 4, 4, 2  # heads of size 1, groups {0, 1} and {2, 3}
    W = _checkpoint(E, h, kv, seed=1)
    X = generator(2).standard_normal((3, 2, E))
    G = np.array([[2.0, 1.0], [1.0, 1.0]])
    mixed = dict(W, q=W["q"].copy(), o=W["o"].copy())
    mixed["q"][:2] = G @ W["q"][:2]
    mixed["o"][:, :2] = W["o"][:, :2] @ np.linalg.inv(G)
    assert np.allclose(_network(mixed, h).forward(X), _network(W, h).forward(X), rtol=1e-12)
    across = dict(W, q=W["q"].copy(), o=W["o"].copy())
    across["q"][[1, 2]] = G @ W["q"][[1, 2]]
    across["o"][:, [1, 2]] = W["o"][:, [1, 2]] @ np.linalg.inv(G)
    assert not np.allclose(_network(across, h).forward(X), _network(W, h).forward(X), rtol=1e-6)


def test_a_gqa_point_is_critical_in_the_ambient_model_and_judged_in_its_own():
    """A random GQA point is critical for the ambient multi-head parametrization (its function lies in the
    smaller GQA model) and smooth in its own; a query head repeated in its group is critical in its own (exact
    rank over QQ for one layer)."""
    W = _checkpoint(4, 2, 1, integers=True)
    pg = point_geometry(_network(W, 2))
    assert pg.critical and pg.local.lower == 52 < pg.generic_dimension == 54
    assert pg.grouped.to_dict() == {
        "parameters": 48,
        "symmetries": 12,
        "dimension": [36, 36],
        "certified": True,
        "local_rank": [36, 36],
        "critical": False,
        "prime": pg.grouped.prime,
    }
    assert any(
        n.startswith("grouped-query attention in its own parametrization (48 parameters")
        and "dimension 36 (certified" in n
        and "local rank at the point is 36: not critical" in n
        for n in pg.notes
    )
    repeated = dict(W, q=np.vstack([W["q"][:2], W["q"][:2]]))
    g = grouped_geometry(_network(repeated, 2).architecture, _network(repeated, 2).grouped)
    assert (g.local_lower, g.local_upper, g.critical) == (30, 30, True)


def test_the_cli_reports_the_gqa_model(tmp_path, capsys):
    from ag_attention._point.safetensors import write_safetensors

    W = _checkpoint(4, 2, 1, integers=True)
    tensors = {f"model.layers.0.self_attn.{r}_proj.weight": ("F32", W[r].astype("<f4")) for r in "qkvo"}
    write_safetensors(tmp_path / "gqa.safetensors", tensors, metadata={"tokens": "2", "heads": "2"})
    r = run_in_process(capsys, "point", str(tmp_path / "gqa.safetensors"), "--as", "lightning")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert (
        "read as q_proj/k_proj/v_proj/o_proj, 2 heads (grouped-query: 1 key/value heads); dropped the softmax" in first
    )
    assert r.stdout.splitlines()[2] == (
        "  grouped-query    GQA model: dimension 36 (certified), local rank 36, not "
        "critical; below: the ambient 2-head model at this GQA point"
    )
    assert "the GQA model has dimension 36 (certified" in r.stdout


@pytest.mark.parametrize("E, h, kv", [(4, 2, 1), (8, 4, 2), (8, 4, 1), (6, 2, 1)])
def test_grouped_queries_with_rotary_positions(E, h, kv):
    """GQA with rotary positions (LLaMA, Mistral, Qwen2): the keys' GL_{d_h} shrinks to the rotations' commutant
    (d_h coordinates turning: d_h of them), the values' GL_{d_h} and the heads' mixing stay: certified at a random
    point, dim = P - h_kv (d_h + d_h^2 + r^2)."""
    d_h, r = E // h, h // kv
    if d_h % 2:
        return
    W = _checkpoint(E, h, kv, integers=True)
    net = Network.from_checkpoint(
        {f"a.{x}_proj.weight": W[x] for x in "qkvo"}, tokens=3, heads=h, normalized=False, positions="rope"
    )
    g = grouped_geometry(net.architecture, net.grouped)
    P = 2 * h * d_h * E + 2 * kv * d_h * E
    assert g is not None and g.certified and g.dimension_lower == P - kv * (d_h + d_h**2 + r**2)


def test_two_grouped_layers_have_the_symmetries_between_them():
    """Two GQA layers: GL_E between them (the first layer's W_O, the second's Q, K, W_v) closes the gap between the
    GF(p) rank and the symmetry bound (without it the bound was E^2 too high)."""
    E, h, kv = 4, 2, 1
    rng = generator(9)
    arrays = {}
    for l in range(2):
        for x, rows in (("q", E), ("k", E // h * kv), ("v", E // h * kv), ("o", E)):
            arrays[f"layers.{l}.self_attn.{x}_proj.weight"] = rng.integers(-3, 4, (rows, E)).astype(float)
    net = Network.from_checkpoint(arrays, tokens=3, heads=h, normalized=False)
    g = grouped_geometry(net.architecture, net.grouped)
    d_h, r = E // h, h // kv
    per = 2 * h * d_h * E + 2 * kv * d_h * E
    assert g.certified and g.dimension_lower == 2 * per - 2 * kv * (2 * d_h**2 + r**2) - E * E
