"""A layer's projections as the package's heads (ag_attention._point.layouts), and the layouts people save (issue
37): GPT-2's Conv1D c_attn/c_proj, fused Wqkv/qkv_proj, grouped-query attention, rotary embeddings refused; each
read without torch (tests/point/test_torch.py runs the torch modules)."""

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Network
from ag_attention._errors import InvalidArgumentError
from ag_attention._point import checkpoints
from ag_attention._point.checkpoints import GPT2, MHA, PROJ, QKV_PROJ, WQKV, recognize
from ag_attention._point.layouts import LAYOUTS, Layout, layer_heads
from ag_attention._point.safetensors import write_safetensors
from tests.cli import run_in_process
from tests.helpers import generator

E, H = 4, 2
DH = E // H


def _exact(value, name):
    return np.vectorize(lambda x: Fraction(float(x)), otypes=[object])(np.asarray(value))


def test_a_layer_s_heads_are_the_rows_of_its_projections_however_stacked():
    """Head i: Q = W_q rows of head i, K likewise, V = W_O,i W_v,i; the same from W_q, W_k, W_v stacked, and
    from a Conv1D's transposed stack (x W + b)."""
    rng = generator(1)
    W = {r: rng.standard_normal((E, E)) for r in "qkvo"}
    stacked = np.vstack([W["q"], W["k"], W["v"]])
    found = []
    for roles in (
        {"q": W["q"], "k": W["k"], "v": W["v"], "o": W["o"]},
        {"qkv": stacked, "o": W["o"]},
        {"qkvT": stacked.T, "oT": W["o"].T},
    ):
        out, notes = {}, []
        sources = {("a.", role): f"a.{role}" for role in roles}
        assert layer_heads(0, "a.", roles, sources, _exact, H, out, notes)[:2] == (DH, H)
        found.append(out)
    for i in range(H):
        s = slice(i * DH, (i + 1) * DH)
        assert found[0][f"layers.0.heads.{i}.Q"].tolist() == _exact(W["q"][s], "").tolist()
        assert (
            found[0][f"layers.0.heads.{i}.V"].tolist() == (_exact(W["o"][:, s], "").dot(_exact(W["v"][s], ""))).tolist()
        )
    assert all(f.keys() == found[0].keys() and all(f[k].tolist() == found[0][k].tolist() for k in f) for f in found)


def _shaped(*shape):
    """A read-only array of the shape with no memory behind it (the readers look at shapes first)."""
    return np.broadcast_to(np.float32(0.01), shape)


def gpt2_small():
    """A state dict of GPT-2 small's names and shapes: 12 layers x 12 heads, d = 768, head 64 (zero biases)."""
    E = 768
    sd = {"wte.weight": _shaped(50257, E), "wpe.weight": _shaped(1024, E), "ln_f.weight": _shaped(E)}
    for i in range(12):
        p = f"h.{i}."
        sd.update(
            {
                p + "ln_1.weight": _shaped(E),
                p + "attn.bias": np.tril(np.ones((1, 1, 4, 4), np.float32)),
                p + "attn.c_attn.weight": _shaped(E, 3 * E),
                p + "attn.c_attn.bias": np.zeros(3 * E, np.float32),
                p + "attn.c_proj.weight": _shaped(E, E),
                p + "attn.c_proj.bias": np.zeros(E, np.float32),
                p + "mlp.c_fc.weight": _shaped(E, 4 * E),
                p + "mlp.c_proj.weight": _shaped(4 * E, E),
            }
        )
    return sd


def test_gpt2_small_is_recognized_from_its_names_and_shapes():
    sd = gpt2_small()
    rec = recognize(sd)
    assert rec.layout == GPT2 and rec.order == tuple(f"h.{i}.attn." for i in range(12)) and rec.needs_heads
    assert all(set(rec.roles[p]) == {"qkvT", "oT", "qkv bias", "o bias"} for p in rec.order)
    assert rec.sources[("h.11.attn.", "oT")] == "h.11.attn.c_proj.weight"  # never the MLP's c_proj
    assert rec.sources[("h.11.attn.", "qkv bias")] == "h.11.attn.c_attn.bias"
    assert "h.3.mlp.c_proj.weight" in rec.ignored and len(rec.zero) == 24
    assert any("12 causal mask buffer(s) of GPT-2" in n and "h.0.attn.bias" in n for n in rec.notes)
    # refused from the shapes, before a weight is converted, naming the layout; and the heads asked for
    with pytest.raises(InvalidArgumentError, match=rf"attention weights \({GPT2}, at least 21,233,664 parameters\)"):
        Network.from_checkpoint(sd, tokens=2, heads=12, max_parameters=10**6)
    with pytest.raises(InvalidArgumentError, match="the number of heads is not stored"):
        Network.from_checkpoint(sd, tokens=2)
    with pytest.raises(InvalidArgumentError, match=r"h\.0\.attn\.c_attn\.bias: a nonzero bias of the stacked"):
        recognize({**sd, "h.0.attn.c_attn.bias": np.ones(3 * 768, np.float32)}, biases=False)
    assert recognize({**sd, "h.0.attn.c_attn.bias": np.ones(3 * 768, np.float32)}).zero[0] == "h.0.attn.c_proj.bias"


def _weights(seed=1, kv=H):
    rng = generator(seed)
    return {
        "q": rng.standard_normal((E, E)),
        "k": rng.standard_normal((kv * DH, E)),
        "v": rng.standard_normal((kv * DH, E)),
        "o": rng.standard_normal((E, E)),
    }


def _reference(W, X, heads=H):
    """Multi-head or grouped-query attention without softmax (repeat_kv: query head i uses key/value head
    i // (heads / kv)), the score scale 1/sqrt(d_h) kept: the checkpoint's own lightning function."""
    kv = W["k"].shape[0] // DH
    q, k, v = X @ W["q"].T, X @ W["k"].T, X @ W["v"].T
    out = []
    for i in range(heads):
        g = i // (heads // kv)
        s, t = slice(i * DH, (i + 1) * DH), slice(g * DH, (g + 1) * DH)
        out.append((q[:, s] @ k[:, t].T / math.sqrt(DH)) @ v[:, t])
    return np.concatenate(out, axis=1) @ W["o"].T


def _same_function(net, W, heads=H):
    X = generator(7).standard_normal((3, 2, E))
    got = net.forward(X) / math.sqrt(DH)
    assert np.allclose(got, np.stack([_reference(W, x, heads) for x in X]), rtol=1e-12, atol=1e-12)


def test_conv1d_and_fused_layouts_read_the_same_network_as_multihead_attention():
    W = _weights()
    stacked = np.vstack([W["q"], W["k"], W["v"]])
    layouts = {
        MHA: {"attn.in_proj_weight": stacked, "attn.out_proj.weight": W["o"]},
        GPT2: {
            "h.0.attn.c_attn.weight": stacked.T,
            "h.0.attn.c_attn.bias": np.zeros(3 * E),
            "h.0.attn.c_proj.weight": W["o"].T,
            "h.0.mlp.c_proj.weight": np.ones((4 * E, E)),
        },
        WQKV: {"blocks.0.attn.Wqkv.weight": stacked, "blocks.0.attn.out_proj.weight": W["o"]},
        QKV_PROJ: {"layers.0.self_attn.qkv_proj.weight": stacked, "layers.0.self_attn.o_proj.weight": W["o"]},
    }
    nets = {  # GPT-2's names are a decoder's (causal by default): the same function without the mask here
        name: Network.from_checkpoint(sd, tokens=2, heads=H, normalized=False, biases=False, causal=False)
        for name, sd in layouts.items()
    }
    for name, net in nets.items():
        assert net.layout == f"{name}, 2 heads" and f"({name})" in net.source
        _same_function(net, W)
        assert [h[n].tolist() for h in net.weights[0] for n in "QKV"] == [
            h[n].tolist() for h in nets[MHA].weights[0] for n in "QKV"
        ]
    assert nets[GPT2].ignored == ("h.0.attn.c_attn.bias", "h.0.mlp.c_proj.weight")
    with pytest.raises(InvalidArgumentError, match=r"blocks\.0\.attn\.Wqkv\.weight: 9 rows for 4 inputs"):
        Network.from_checkpoint({"blocks.0.attn.Wqkv.weight": stacked[:9]}, tokens=2, heads=H)
    with pytest.raises(InvalidArgumentError, match="two layouts give the stacked query/key/value projection"):
        Network.from_checkpoint({**layouts[GPT2], "h.0.attn.in_proj_weight": stacked}, tokens=2, heads=H)


def test_grouped_query_attention_is_read_exactly_as_heads_sharing_keys_and_values():
    """LLaMA-style (num_key_value_heads < num_heads): 2 query heads sharing 1 key/value head, separately and
    through a fused qkv_proj (Phi-3); then 4 heads over 2. Each query head gets its group's K and W_v: the
    checkpoint's own function, exactly."""
    W = _weights(2, kv=1)
    sd = {f"model.layers.0.self_attn.{r}_proj.weight": W[r] for r in "qkvo"}
    net = Network.from_checkpoint(sd, tokens=2, heads=H, normalized=False)
    assert net.layout == f"{PROJ}, 2 heads (grouped-query: 1 key/value heads)"
    assert net.architecture.heads == 2 and net.architecture.ranks == (DH,)
    K0, K1 = (net.weights[0][h]["K"] for h in range(2))
    assert K0.tolist() == K1.tolist()  # the group shares its key projection
    assert any(
        "grouped-query attention, 2 query heads sharing 1 key/value heads (groups of 2)" in n
        and "that of the 2-head model at this GQA point" in n
        for n in net.notes
    )
    _same_function(net, W)
    fused = {
        "model.layers.0.self_attn.qkv_proj.weight": np.vstack([W["q"], W["k"], W["v"]]),
        "model.layers.0.self_attn.o_proj.weight": W["o"],
    }
    _same_function(Network.from_checkpoint(fused, tokens=2, heads=H, normalized=False), W)
    # 4 heads of size 1 over 2 key/value heads: groups of 2
    W4 = {**W, "k": generator(3).standard_normal((2, E)), "v": generator(4).standard_normal((2, E))}
    sd4 = {f"a.{r}_proj.weight": W4[r] for r in "qkvo"}
    net4 = Network.from_checkpoint(sd4, tokens=2, heads=4)
    assert [net4.weights[0][i]["K"].tolist() for i in range(4)] == [W4["k"][g : g + 1].tolist() for g in (0, 0, 1, 1)]
    with pytest.raises(InvalidArgumentError, match="heads=3: does not divide the 4 query rows"):
        Network.from_checkpoint(sd4, tokens=2, heads=3)
    odd = {
        **sd4,
        "a.k_proj.weight": generator(5).standard_normal((3, E)),
        "a.v_proj.weight": generator(6).standard_normal((3, E)),
    }
    with pytest.raises(
        InvalidArgumentError,
        match=r"the 3 key rows and 3 value rows are not key/value heads of size 1 "
        "in a number dividing the heads",
    ):
        Network.from_checkpoint(odd, tokens=2, heads=4)


@pytest.mark.parametrize(
    "extra, named",
    [
        (
            {"model.layers.0.self_attn.rotary_emb.inv_freq": np.ones(1)},
            r"model\.layers\.0\.self_attn\.rotary_emb\.inv_freq",
        ),
        ({"transformer.freqs_cis": np.ones((4, 2))}, r"transformer\.freqs_cis"),
    ],
    ids=["llama-inv_freq", "freqs_cis"],
)
def test_rotary_embeddings_are_refused_saying_why(extra, named):
    """A rotary buffer without a config saying which rotation: refused, with the way forward; with the rotation
    given, the buffer is what it is (not a weight) and the model has it."""
    sd = {f"model.layers.0.self_attn.{r}_proj.weight": w for r, w in _weights().items()}
    with pytest.raises(
        InvalidArgumentError,
        match=rf"^{named}: rotary position embeddings: .* depends on the token's position .* put its config\.json "
        "beside it .* or give --rope-theta BASE",
    ):
        Network.from_checkpoint({**sd, **extra}, tokens=2, heads=H)
    net = Network.from_checkpoint({**sd, **extra}, tokens=2, heads=H, positions="rope")
    assert net.architecture.positions is not None and list(extra)[0] in net.ignored


def test_rotary_metadata_is_refused_and_the_projections_note_what_is_not_stored(tmp_path, capsys):
    sd = {f"model.layers.0.self_attn.{r}_proj.weight": ("F32", w.astype("<f4")) for r, w in _weights().items()}
    write_safetensors(tmp_path / "rope.safetensors", sd, metadata={"tokens": "2", "heads": "2", "rope_theta": "1e4"})
    r = run_in_process(capsys, "point", str(tmp_path / "rope.safetensors"))
    assert r.returncode == 2 and "metadata rope_theta = 1e4: rotary position embeddings" in r.stderr
    assert "--rope-theta BASE" in r.stderr
    r = run_in_process(capsys, "point", str(tmp_path / "rope.safetensors"), "--rope-theta", "10000", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["architecture"]["positions"]["base"] == "10000"
    write_safetensors(tmp_path / "plain.safetensors", sd, metadata={"tokens": "2", "heads": "2"})
    net = Network.load(tmp_path / "plain.safetensors")
    assert any("rotary position embeddings" in n and "not stored in the weights" in n for n in net.notes)


def _toy_split(W, name, heads=1):
    """A made-up fused layout that stacks the keys first: W_k, W_q, W_v (each E x E)."""
    E = W.shape[1]
    return W[E : 2 * E], W[:E], W[2 * E :]


def test_a_layout_is_one_entry_of_the_table(tmp_path, monkeypatch):
    """A toy layout (made-up names, keys stacked before queries, its own split) added as one LAYOUTS entry is read
    from a .safetensors and a .npz file exactly as the same weights under q_proj/k_proj/v_proj/o_proj."""
    assert list(LAYOUTS)[:2] == [MHA, PROJ] and all(LAYOUTS[name].name == name for name in LAYOUTS)
    toy = Layout(
        "toy kqv/wo",
        "a made-up layout: blk.<l>.mix.kqv (W_k, W_q, W_v stacked) and blk.<l>.mix.wo",
        (("mix.kqv.weight", "qkv"), ("mix.kqv.bias", "qkv bias")),
        (("mix.wo.weight", "o"),),
        trained_as="lightning",
        split=_toy_split,
        note="the toy layout was read",
    )
    monkeypatch.setitem(checkpoints.LAYOUTS, toy.name, toy)
    rng = generator(3)
    W = {r: rng.standard_normal((E, E)).astype(np.float32) for r in "qkvo"}
    mine = {"blk.0.mix.kqv.weight": np.vstack([W["k"], W["q"], W["v"]]), "blk.0.mix.wo.weight": W["o"]}
    mine["blk.0.mix.kqv.bias"] = np.zeros(3 * E, dtype=np.float32)
    theirs = {f"model.layers.0.self_attn.{r}_proj.weight": W[r] for r in "qkvo"}
    ref = Network.from_checkpoint(theirs, heads=H, tokens=2, normalized=False)
    write_safetensors(tmp_path / "toy.safetensors", {k: ("F32", v) for k, v in mine.items()})
    np.savez(tmp_path / "toy.npz", **mine)
    for path in (tmp_path / "toy.safetensors", tmp_path / "toy.npz"):
        net = Network.load(path, heads=H, tokens=2)
        assert net.layout == "toy kqv/wo, 2 heads" and not net.architecture.normalized
        assert "the toy layout was read" in net.notes and not any("q_proj/k_proj" in n for n in net.notes)
        assert len(net.weights[0]) == H
        assert all(np.array_equal(a[n], b[n]) for a, b in zip(net.weights[0], ref.weights[0]) for n in "QKV")
    with pytest.raises(InvalidArgumentError, match="toy kqv/wo"):
        recognize({"embed.weight": np.ones((2, 2))})
