"""Every head's geometry from its factors (issue 37 item 3): exact ranks, spectra, dead and rank-deficient heads."""

import json
from fractions import Fraction

import numpy as np
import pytest

from ag_attention._point.grouped import GroupedLayer
from ag_attention._point.heads import (
    PRIME,
    head_table,
    load_head_table,
    near_equal_blocks,
    product_rank,
    product_singular_values,
    residues,
)
from ag_attention._point.safetensors import write_safetensors
from tests.helpers import generator, run_cli

E, H = 8, 4
D = E // H


def _gpt2(tmp_path, dead=(), rank_one=(), layers=2, seed=0):
    """A GPT-2 Conv1D checkpoint (float32, zero biases) with planted heads: ``dead`` (layer, head) get W_v,h = 0,
    ``rank_one`` keep one query row."""
    rng = generator(seed)
    tensors = {}
    for l in range(layers):
        qkv = rng.standard_normal((E, 3 * E)).astype("<f4")
        for L, h in dead:
            if L == l:
                qkv[:, 2 * E + h * D : 2 * E + (h + 1) * D] = 0
        for L, h in rank_one:
            if L == l:
                qkv[:, h * D + 1 : (h + 1) * D] = 0
        tensors[f"h.{l}.attn.c_attn.weight"] = ("F32", qkv)
        tensors[f"h.{l}.attn.c_proj.weight"] = ("F32", rng.standard_normal((E, E)).astype("<f4"))
    path = tmp_path / "gpt2.safetensors"
    write_safetensors(path, tensors, metadata={"heads": str(H)})
    return path


def test_residues_are_the_exact_binary_values_mod_p():
    x = np.array([[0.1, -3.5, 1e-30], [2.0**60, 0.0, -7.25]], dtype=np.float64)
    expected = [
        [Fraction(v).numerator % PRIME * pow(Fraction(v).denominator, -1, PRIME) % PRIME for v in row]
        for row in x.tolist()
    ]
    assert residues(x, PRIME).tolist() == expected
    assert residues(x.astype(np.float32), PRIME).tolist() == [
        [Fraction(float(v)).numerator % PRIME * pow(Fraction(float(v)).denominator, -1, PRIME) % PRIME for v in row]
        for row in x.astype(np.float32).tolist()
    ]
    obj = np.array([[Fraction(1, 3), Fraction(-2)]], dtype=object)
    assert residues(obj, PRIME).tolist() == [[pow(3, -1, PRIME), PRIME - 2]]


def test_product_rank_is_exact_over_qq():
    rng = generator(1)
    L, R = rng.standard_normal((6, 2)), rng.standard_normal((2, 6))
    assert product_rank(L, R)[:2] == (2, 2)
    L[:, 1] = 0  # one column of L zero: rank 1, proven by the exact integer rank, not guessed from GF(p)
    rank, bound, method = product_rank(L, R)
    assert (rank, bound) == (1, 2) and "exact over QQ" in method
    # orthogonal factors: the product is exactly zero although neither factor is
    assert product_rank(np.array([[1.0, 0.0]]), np.array([[0.0], [3.0]]))[0] == 0


def test_singular_values_from_the_factors_match_the_product():
    rng = generator(2)
    L, R = rng.standard_normal((30, 4)), rng.standard_normal((4, 20))
    s, err = product_singular_values(L, R)
    assert np.allclose(s, np.linalg.svd(L @ R, compute_uv=False)[:4], rtol=1e-12) and 0 < err < 1e-10


def test_near_equal_blocks():
    assert near_equal_blocks(np.array([3.0, 2.0, 2.0 - 1e-5, 2.0 - 2e-5, 1.0, 1e-9, 1e-9]), 1e-3) == ((1, 3),)
    assert near_equal_blocks(np.array([0.0, 0.0]), 1e-3) == ()


def test_a_planted_dead_head_and_a_planted_rank_one_head_are_found_and_decided(tmp_path):
    table = load_head_table(_gpt2(tmp_path, dead=[(0, 1)], rank_one=[(1, 2)]))
    assert table.normalized and "softmax (normalized) attention, read as GPT-2 Conv1D" in table.model
    assert [(h.layer, h.head) for h in table.dead()] == [(1, 2)]
    assert [(h.layer, h.head) for h in table.critical()] == [(1, 2), (2, 3)]
    dead, one = (h for h in table.heads if h.critical)
    assert dead.dead == "V_h = 0" and dead.V.rank == 0 and "W_q,h and W_k,h (32 entries) are kernel" in dead.reason
    assert one.A.rank == 1 and one.A.bound == D and "rank A_h = 1 < d_h = 2" in one.reason and not one.dead
    assert one.A.distances[0] == pytest.approx(1.0) and one.A.to_lower == pytest.approx(1.0)
    healthy = [h for h in table.heads if not h.critical]
    assert all(h.A.rank == D and h.V.rank == D and "GF(" in h.A.method for h in healthy)
    text = str(table)
    assert "1 dead, 0 near-dead, 2 critical by their ranks" in text and "head 1.2" in text
    assert table.grid("critical")[1, 0] == 1 and table.grid("rank_A")[2, 1] == 1
    # the layers' proven bounds: a dead head moves only through V (d d' = 64), a rank-one A loses d - 1 + ... = 6
    count = H * (D * (2 * E - D) + E * E)  # softmax: Theorem 3.9's one-head dimension, H times
    assert table.layer_bounds() == [
        (1, count - (D * (2 * E - D)), count, [2]),
        (2, count - (D * (2 * E - D) - (E * (2 * D - 1) - D * (D - 1))), count, [3]),
    ]
    assert "critical if dim M = H dim M_1 (the heads' secant not defective" in text
    light = load_head_table(_gpt2(tmp_path, dead=[(0, 1)]), normalized=False)
    assert not light.normalized and "lightning" in light.model


def test_a_nearly_dead_head_is_near_dead_not_critical(tmp_path):
    path = _gpt2(tmp_path)
    from ag_attention._point.weights import read_weights_file

    arrays, meta = read_weights_file(path)
    tensors = {k: ("F32", np.array(v, dtype="<f4")) for k, v in arrays.items()}
    tensors["h.0.attn.c_attn.weight"][1][:, 2 * E : 2 * E + D] *= np.float32(1e-6)
    write_safetensors(path, tensors, metadata=meta)
    table = load_head_table(path)
    first = table.heads[0]
    assert first.near_dead and not first.critical and not first.dead and first.scale < 1e-3
    assert first.V.rank == D  # exactly of full rank: near-dead is a float verdict at rtol, the ranks are exact


def _layers(rng, heads=H):
    Q, K, Wo, Wv = (rng.standard_normal((E, E)) for _ in range(4))
    rows = [slice(h * D, (h + 1) * D) for h in range(heads)]
    return GroupedLayer(
        tuple(Q[s] for s in rows), tuple(Wo[:, s] for s in rows), tuple(K[s] for s in rows), tuple(Wv[s] for s in rows)
    )


def test_permuting_the_heads_permutes_the_table():
    layer = _layers(generator(3))
    perm = [2, 0, 3, 1]
    permuted = GroupedLayer(*(tuple(f[i] for i in perm) for f in (layer.Q, layer.W_O, layer.K, layer.W_v)))
    a, b = (head_table([x], normalized=False) for x in (layer, permuted))
    for i, j in enumerate(perm):
        ha, hb = a.heads[j].to_dict(), b.heads[i].to_dict()
        for d in (ha, hb):
            d.pop("head")
        assert ha == hb


@pytest.mark.parametrize("c", [4.0, 3.0])
def test_scaling_queries_by_c_and_keys_by_1_over_c_leaves_a_unchanged(c):
    layer = _layers(generator(4))
    scaled = GroupedLayer(tuple(q * c for q in layer.Q), layer.W_O, tuple(k / c for k in layer.K), layer.W_v)
    a, b = (head_table([x], normalized=True) for x in (layer, scaled))
    for ha, hb in zip(a.heads, b.heads):
        assert (ha.A.rank, ha.A.bound) == (hb.A.rank, hb.A.bound) == (D, D)
        assert np.allclose(ha.A.singular_values, hb.A.singular_values, rtol=1e-13)
        if c == 4.0:  # a power of two: the same exact point, the same floats
            assert ha.A.singular_values == hb.A.singular_values


def test_point_per_head_on_the_command_line(tmp_path):
    path = _gpt2(tmp_path, dead=[(1, 0)])
    r = run_cli("point", str(path), "--per-head", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["dead"] == [[2, 1]] and d["normalized"] and len(d["heads"]) == 2 * H
    r = run_cli("point", str(path), "--per-head", "--as", "lightning", "--plot", str(tmp_path / "heads.png"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Heads at the point: 8 heads in 2 layers, lightning attention")
    assert (tmp_path / "heads.png").stat().st_size > 0 and "heads x layers figure written" in r.stderr


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
