"""A checkpoint's companions (ag_attention._point.configs): a names file, the config.json beside the weights."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from ag_attention import Network
from ag_attention._errors import InvalidArgumentError
from ag_attention._point.configs import MAX_NAMES_BYTES, read_names_file
from ag_attention._point.safetensors import write_safetensors
from tests.cli import run_in_process
from tests.helpers import generator

E = 4


def _projections(seed=1):
    rng = generator(seed)
    return {n: rng.standard_normal((E, E)) for n in ("q", "k", "v", "o")}


def _proj(P):
    return {f"model.layers.0.self_attn.{r}_proj.weight": P[r] for r in "qkvo"}


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: os.mkfifo(p), "not a regular file"),  # opened without blocking: it hung waiting for a writer
        (lambda p: p.symlink_to("/dev/zero"), "not a regular file"),  # it was read until memory ran out
        (lambda p: p.mkdir(), "not a regular file"),
        (
            lambda p: p.write_bytes(b" " * (MAX_NAMES_BYTES + 1)),
            r"1,048,577 bytes, more than the 1,048,576 bytes \(1 MiB\)",
        ),
        (lambda p: p.write_text("[" * 50_000 + "]" * 50_000), "nested more than 64 levels deep"),  # was RecursionError
        (lambda p: p.write_text('{"blk.wq": "layers.0.q", "blk.wq": "layers.0.k"}'), "the key blk.wq appears twice"),
        (lambda p: p.write_bytes(b'{"\xff": 1}'), "not UTF-8"),
    ],
    ids=["fifo", "dev-zero", "directory", "too-large", "deep", "key-twice", "not-utf8"],
)
def test_a_names_file_is_read_only_from_a_small_regular_file(tmp_path, make, message):
    path = tmp_path / "names.json"
    make(path)
    with pytest.raises(InvalidArgumentError, match=rf"--names {re.escape(str(path))}: .*{message}"):
        read_names_file(path)
    P = _projections()
    tensors = {k: ("F32", np.asarray(v, dtype="<f4")) for k, v in _proj(P).items()}
    write_safetensors(tmp_path / "w.safetensors", tensors, metadata={"heads": "2", "tokens": "2"})
    r = subprocess.run(
        [sys.executable, "-m", "ag_attention", "point", str(tmp_path / "w.safetensors"), "--names", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and f"--names {path}" in r.stderr and re.search(message, r.stderr)
    assert "Traceback" not in r.stderr


def test_a_names_file_maps_a_checkpoint(tmp_path, capsys):
    P = _projections()
    arrays = {"blk.wq": P["q"], "blk.wk": P["k"], "blk.wv": P["v"], "blk.wo": P["o"]}
    (tmp_path / "names.json").write_text(json.dumps({k: f"layers.0.{k[-1]}" for k in arrays}))
    names = read_names_file(tmp_path / "names.json")
    assert names == {"blk.wq": "layers.0.q", "blk.wk": "layers.0.k", "blk.wv": "layers.0.v", "blk.wo": "layers.0.o"}
    tensors = {k: ("F32", np.asarray(v, dtype="<f4")) for k, v in arrays.items()}
    write_safetensors(tmp_path / "w.safetensors", tensors, metadata={"heads": "2", "tokens": "2"})
    r = run_in_process(
        capsys, "point", str(tmp_path / "w.safetensors"), "--names", str(tmp_path / "names.json"), "--json"
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["point"]["source"].endswith("(mapping)")


def test_a_config_json_beside_the_file_gives_the_heads_and_the_positions(tmp_path, capsys):
    """Hugging Face's config.json beside a checkpoint: its num_attention_heads / n_head are the file's heads (no
    heads= needed), its rotary positions are read (LLaMA's weights do not store them), a rope type that is not
    modelled and ALiBi are refused by name, and a config.json of another program (no model_type, no architectures)
    is not read."""
    P = _projections()
    tensors = {k: ("F32", np.asarray(v, dtype="<f4")) for k, v in _proj(P).items()}
    write_safetensors(tmp_path / "model.safetensors", tensors)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "opt", "num_attention_heads": 2}))
    net = Network.load(tmp_path / "model.safetensors", tokens=2)
    assert net.architecture.heads == 2 and "heads=2 from the config.json beside the file" in net.notes
    with pytest.raises(InvalidArgumentError, match=r"heads=4 given, but the file says heads=2 \(the config.json "):
        Network.load(tmp_path / "model.safetensors", tokens=2, heads=4)
    r = run_in_process(capsys, "point", str(tmp_path / "model.safetensors"), "-t", "2")
    assert r.returncode == 0 and "heads=2" in r.stdout.splitlines()[0], r.stderr
    # rotary positions from the config: modelled (docs/math/rotary.md), said on the first line; a LLaMA is causal
    config.write_text(json.dumps({"model_type": "llama", "num_attention_heads": 2, "rope_theta": 500000.0}))
    net = Network.load(tmp_path / "model.safetensors", tokens=2)
    assert net.architecture.positions.base == 500000 and net.architecture.causal
    assert (
        "rotary positions rope(base 500000) (from its config)" in net.model
        and "causal mask (model_type llama" in net.model
    )
    config.write_text(
        json.dumps(
            {"model_type": "llama", "num_attention_heads": 2, "rope_scaling": {"rope_type": "llama3", "factor": 8}}
        )
    )
    with pytest.raises(InvalidArgumentError, match=r"config\.json: rope_type llama3: its frequencies involve pi"):
        Network.load(tmp_path / "model.safetensors", tokens=2)
    config.write_text(json.dumps({"model_type": "mpt", "n_heads": 2, "attn_config": {"alibi": True}}))
    with pytest.raises(
        InvalidArgumentError, match=r"config\.json: attn_config\.alibi = True: ALiBi adds m_h \(j - i\) to each score"
    ):
        Network.load(tmp_path / "model.safetensors", tokens=2)
    config.write_text(json.dumps({"num_heads": 7, "rope": 1}))  # not a model's config: not read
    with pytest.raises(InvalidArgumentError, match="the number of heads is not stored"):
        Network.load(tmp_path / "model.safetensors", tokens=2)
    write_safetensors(tmp_path / "meta.safetensors", tensors, metadata={"heads": "4"})
    config.write_text(json.dumps({"architectures": ["OPTForCausalLM"], "num_attention_heads": 2}))
    with pytest.raises(InvalidArgumentError, match="its __metadata__ says heads=4, the config.json beside it heads=2"):
        Network.load(tmp_path / "meta.safetensors", tokens=2)
