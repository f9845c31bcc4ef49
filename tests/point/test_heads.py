"""Every head's geometry from its factors (issue 37 item 3): exact ranks, spectra, dead and rank-deficient heads."""

import json

import numpy as np
import pytest

from ag_attention._point.grouped import GroupedLayer
from ag_attention._point.head_readers import load_head_table
from ag_attention._point.heads import head_table
from ag_attention._point.safetensors import write_safetensors
from tests.cli import run_in_process
from tests.helpers import generator

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
    assert "1 dead, 0 near-dead, 2 critical by their ranks" in text and "head 0.1 " in text and "head 1.2 " in text
    assert "heads numbered layer.head from 0" in text and "(numerical 0)" in text
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


def test_point_per_head_on_the_command_line(tmp_path, capsys):
    path = _gpt2(tmp_path, dead=[(1, 0)])
    r = run_in_process(capsys, "point", str(path), "--per-head", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["dead"] == [[1, 0]] and d["normalized"] and len(d["heads"]) == 2 * H  # from 0, as planted
    r = run_in_process(
        capsys, "point", str(path), "--per-head", "--as", "lightning", "--plot", str(tmp_path / "heads.png")
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Heads at the point: 8 heads in 2 layers, lightning attention")
    assert (tmp_path / "heads.png").stat().st_size > 0 and "heads x layers figure written" in r.stderr


def test_a_rank_deficient_v_is_critical_in_the_checkpoint_s_own_factors(tmp_path):
    """V_h = W_O,h W_v,h of rank 1 < d_h: (dW_O, dW_v) -> dW_O W_v + W_O dW_v loses rank, as a rank-deficient A_h's
    factors do: decided critical in the per-head table (the checkpoint's parametrization); the full report analyses
    V_h free, where it is no defect, and does not say it."""
    from ag_attention import Network, point_geometry
    from ag_attention._point.weights import read_weights_file

    path = _gpt2(tmp_path, layers=1)
    arrays, meta = read_weights_file(path)
    tensors = {k: ("F32", np.array(v, dtype="<f4")) for k, v in arrays.items()}
    tensors["h.0.attn.c_attn.weight"][1][:, 2 * E + 2 * D + 1 : 2 * E + 3 * D] = 0  # W_v of head 2: one row left
    write_safetensors(path, tensors, metadata=meta)
    table = load_head_table(path)
    h = table.heads[2]
    assert h.V.rank == 1 and h.critical and "rank V_h = 1 < d_h = 2" in h.reason and "head 0.2 " in str(table)
    report = point_geometry(Network.load(path, tokens=2, normalized=False))
    assert report.heads is not None and not report.heads.heads[2].critical


def test_the_table_as_csv_and_frame(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    path = _gpt2(tmp_path, dead=[(1, 0)])
    r = run_in_process(capsys, "point", str(path), "--per-head", "--csv", str(tmp_path / "heads.csv"))
    assert r.returncode == 0 and "written to" in r.stderr
    frame = pd.read_csv(tmp_path / "heads.csv")
    assert len(frame) == 2 * H and list(frame["layer"]) == [0] * H + [1] * H and list(frame["head"][:H]) == [0, 1, 2, 3]
    assert frame.loc[(frame["layer"] == 1) & (frame["head"] == 0), "dead"].item() == "V_h = 0"
    table = load_head_table(path)
    assert table.to_frame().shape == (2 * H, len(table.rows()[0]))
    bad = run_in_process(capsys, "point", str(path), "--csv", str(tmp_path / "x.csv"))
    assert bad.returncode == 2 and "--per-head" in bad.stderr
