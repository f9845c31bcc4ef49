"""Every checkpoint reader against the model Hugging Face transformers saves (``save_pretrained``, from no download)
and runs: config.json and model.safetensors, or shards with their index; biases nonzero, rotary positions, grouped
queries, causal masks as trained. The mapped network's forward pass is the module's (tests/point/hf_checkpoints.py
builds the models and runs one attention layer as transformers does, with or without its softmax)."""

import json
import math

import numpy as np
import pytest

from ag_attention import InvalidArgumentError, Network, point_geometry
from ag_attention._point.head_readers import load_head_table
from tests.cli import run_in_process
from tests.helpers import generator
from tests.point import hf_checkpoints as hf

pytestmark = pytest.mark.torch

T = 4
#: the families read (T5 is refused by name: its relative attention bias)
READ = [f for f in hf.FAMILIES if f != "t5"]
#: decoders: causal as trained
CAUSAL = {"gpt2", "opt", "gpt_neox"} | {
    f for f in hf.FAMILIES if f.split("_")[0] in ("llama", "mistral", "qwen2", "phi3")
}
ROTARY = {f for f in hf.FAMILIES if f.split("_")[0] in ("llama", "mistral", "qwen2", "phi3", "gpt")} - {"gpt2"}


@pytest.fixture(scope="module")
def saved(torch, transformers, tmp_path_factory):
    """Every family built, given nonzero attention biases and saved (one file; gpt2 and llama_gqa in shards)."""
    out = {}
    for family in hf.FAMILIES:
        directory = tmp_path_factory.mktemp(family)
        model = hf.build(family, directory, seed=1, sharded=family in ("gpt2", "llama_gqa"))
        out[family] = (directory, model.double())
    return out


def _layer_output(net, X, layer):
    """Layer ``layer`` of the read network alone on inputs X (its float64 forward pass)."""
    from ag_attention._point.steps import layer_network

    return layer_network(net, layer).forward(X)


@pytest.mark.parametrize("family", READ)
def test_each_family_is_read_as_it_was_trained(family, saved, torch):
    """The directory read with its config: heads, grouped queries, biases, rotary positions and the causal mask as
    trained; every layer's softmax forward pass equal to transformers' (float64; 2e-7 with rotary positions: their
    angles are computed in float32 by transformers); the first line names the model, the mask and its reason."""
    directory, model = saved[family]
    net = Network.load(directory, tokens=T)
    arch = net.architecture
    assert arch.normalized and arch.heads == hf.HEADS and arch.depth == hf.LAYERS
    assert arch.causal == (family in CAUSAL), net.model
    assert (arch.positions is not None) == (family in ROTARY)
    assert ("; causal mask (model_type" in net.model) == (family in CAUSAL)
    if family in ROTARY:
        assert "rotary positions rope(base 10000" in net.model and "from its config" in net.model
    if family == "gpt_neox" or family == "phi3_partial":
        assert arch.positions.dims == 2  # partial rotary: the first 2 of 4 coordinates
    biases = {"gpt2": "qkvo", "bert": "qkvo", "opt": "qkvo", "vit": "qkvo", "clip": "qkvo", "gpt_neox": "qkvo"}
    biases |= {"distilbert": "qkvo", "qwen2": "qkv", "qwen2_gqa": "qkv"}
    assert arch.bias == biases.get(family, "")
    X = generator(2).standard_normal((3, T, hf.HIDDEN))
    tol = 2e-7 if family in ROTARY else 1e-12
    for layer in range(hf.LAYERS):
        want = hf.attention_forward(model, layer, torch.from_numpy(X), softmax=True).detach().numpy()
        got = _layer_output(net, X, layer)
        assert np.abs(got - want).max() <= tol * max(1.0, np.abs(want).max()), family


@pytest.mark.parametrize("family", ["gpt2", "qwen2_gqa", "gpt_neox", "bert", "phi3_partial"])
def test_lightning_reads_the_same_weights_without_the_softmax(family, saved, torch):
    """--as lightning: the softmax removed; the score scale 1/sqrt(d_h) is dropped from the attention part (the
    output bias is added as it is), so the layer is transformers' without softmax with its attention part times
    sqrt(d_h): the same local rank and verdicts (a nonzero factor on the weights' Jacobian columns)."""
    directory, model = saved[family]
    net = Network.load(directory, tokens=T, normalized=False)
    X = generator(3).standard_normal((2, T, hf.HIDDEN))
    b = net.weights[0][0]["bO"].astype(float)[:, 0] if "bO" in net.weights[0][0] else 0.0
    got = (_layer_output(net, X, 0) - b) / math.sqrt(net.head_sizes[0]) + b
    want = hf.attention_forward(model, 0, torch.from_numpy(X), softmax=False).detach().numpy()
    tol = 2e-7 if family in ROTARY else 1e-12
    assert np.abs(got - want).max() <= tol * max(1.0, np.abs(want).max())


def test_sharded_checkpoints_and_the_same_file(saved, tmp_path):
    """A sharded save_pretrained directory (index + shards) reads as its single file would: the same weights."""
    directory, _ = saved["gpt2"]
    assert (directory / "model.safetensors.index.json").is_file()
    net = Network.load(directory, tokens=T)
    index = json.loads((directory / "model.safetensors.index.json").read_text())
    shards = sorted(set(index["weight_map"].values()))
    assert len(shards) >= 2
    # a shard the index does not list, a tensor listed in the wrong shard, a path in a shard name: refused by name
    bad = json.loads(json.dumps(index))
    name = next(iter(bad["weight_map"]))
    bad["weight_map"][name] = "../elsewhere.safetensors"
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(bad))
    with pytest.raises(InvalidArgumentError, match="is not a file name of this directory"):
        Network.load(tmp_path, tokens=T)
    bad["weight_map"][name] = shards[-1] if index["weight_map"][name] != shards[-1] else shards[0]
    for shard in shards:
        (tmp_path / shard).write_bytes((directory / shard).read_bytes())
    (tmp_path / "config.json").write_text((directory / "config.json").read_text())
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(bad))
    with pytest.raises(InvalidArgumentError, match="is listed in"):
        Network.load(tmp_path, tokens=T)
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    again = Network.load(tmp_path, tokens=T)
    assert all(np.array_equal(a[n], b[n]) for a, b in zip(again.weights[0], net.weights[0]) for n in a)


def test_the_causal_mask_follows_the_model_and_the_options(saved, capsys):
    directory, _ = saved["gpt2"]
    assert Network.load(directory, tokens=T).architecture.causal
    dropped = Network.load(directory, tokens=T, causal=False)
    assert not dropped.architecture.causal and "dropped the decoder's causal mask (--no-causal)" in dropped.model
    r = run_in_process(capsys, "point", str(directory), "-t", "3", "--no-causal", "--as", "lightning", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["architecture"]["causal"] is False
    bert, _ = saved["bert"]
    assert not Network.load(bert, tokens=T).architecture.causal
    assert Network.load(bert, tokens=T, causal=True).architecture.causal


def test_t5_and_a_changed_config_are_refused_by_name(saved, tmp_path, capsys):
    """T5's relative attention bias is refused by name with the reason; a config that contradicts the weights
    (key/value heads, head size) is refused naming both."""
    directory, _ = saved["t5"]
    with pytest.raises(InvalidArgumentError, match="relative_attention_num_buckets = 8: T5's relative_attention_bias"):
        Network.load(directory, tokens=T)
    r = run_in_process(capsys, "point", str(directory), "-t", str(T))
    assert r.returncode == 2 and "relative_attention_bias" in r.stderr and "Traceback" not in r.stderr
    directory, _ = saved["llama_gqa"]
    config = json.loads((directory / "config.json").read_text())
    for name in ("model.safetensors.index.json",) + tuple(
        sorted({v for v in json.loads((directory / "model.safetensors.index.json").read_text())["weight_map"].values()})
    ):
        (tmp_path / name).write_bytes((directory / name).read_bytes())
    (tmp_path / "config.json").write_text(json.dumps({**config, "num_key_value_heads": 4}))
    with pytest.raises(InvalidArgumentError, match="num_key_value_heads=4, the weights give"):
        Network.load(tmp_path, tokens=T)


@pytest.mark.parametrize("family", ["qwen2", "gpt2"])
def test_the_point_report_and_the_per_head_table_of_a_real_checkpoint(family, saved):
    """The full report decides (lightning, exact) and the per-head table reads the same directory, its notes (the
    rotary positions, the biases) with it; rotary heads count their live frequency pairs."""
    directory, _ = saved[family]
    g = point_geometry(Network.load(directory, tokens=3, normalized=False), timeout=120)
    assert g.exact and g.critical is False and g.local_rank == g.generic_dimension
    table = load_head_table(directory)
    assert len(table.heads) == hf.HEADS * hf.LAYERS and not table.critical()
    if family in ROTARY:
        assert all(h.pairs == (2, 2) for h in table.heads) and any("rotary" in n for n in table.notes)
    if family == "gpt2":
        assert all(h.affine_A is not None for h in table.heads) and any("bias" in n for n in table.notes)
