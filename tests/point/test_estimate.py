"""The estimate printed before `point` works, the time limit, and the refusal by size before conversion."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from ag_attention import Architecture, ComputationTimeoutError, InvalidArgumentError, Network, point_geometry
from ag_attention._point.estimate import estimate_point, matrix_product_rate
from tests.cli import run_in_process
from tests.helpers import generator, run_cli


def float_network(widths=(24, 24, 24), rank=4, heads=2, tokens=2, seed=0) -> Network:
    rng = generator(seed)
    arch = Architecture(widths, (rank,) * (len(widths) - 1), tokens=tokens, heads=heads)
    return Network.from_weights(
        {
            f"layers.{b.layer - 1}.heads.{b.head}.{b.name}": (
                rng.standard_normal((b.rows, b.cols)) / np.sqrt(b.cols)
            ).astype(np.float32)
            for b in arch.blocks
        },
        tokens=tokens,
    )


def test_the_estimate_names_its_parts_and_memory():
    net = float_network()
    est = estimate_point(net)
    assert est.seconds > 0 and est.critical_extra > 0 and est.bytes > 8 * net.architecture.parameter_count**2
    assert [name for name, _ in est.parts] == ["local rank", "each layer alone"]
    assert matrix_product_rate() > 1e8
    text = est.describe()
    assert text.startswith("estimated ") and "within a factor 2" in text and "GFLOP/s" in text


def test_a_time_limit_stops_the_work_with_its_step_and_a_partial_result():
    g = point_geometry(float_network(), timeout=1e-6)
    assert not g.final and re.match(r"time limit of .* reached during .*: the local rank, .* not computed", g.stopped)
    assert g.local is None and g.generic_dimension is None and g.layers == () and g.critical is None
    assert "NOT FINISHED     stopped: time limit of" in str(g)
    d = g.to_dict()
    assert d["final"] is False and d["stopped"] == g.stopped and d["critical"] is None
    json.dumps(d)
    full = point_geometry(float_network())
    assert full.final and full.stopped == "" and full.to_dict()["stopped"] is None


def test_the_cli_prints_the_estimate_first_and_honours_timeout(tmp_path):
    from ag_attention._point.safetensors import write_safetensors

    net = float_network()
    path = tmp_path / "net.safetensors"
    write_safetensors(
        path, {k: ("F32", np.asarray(v, dtype=np.float32)) for k, v in net.to_arrays().items()}, {"tokens": "2"}
    )
    r = run_cli("point", str(path), "--timeout", "0.001")
    assert r.returncode == 3 and "estimated " in r.stderr and "time limit of" in r.stderr
    assert r.stderr.index("estimated ") < r.stderr.index("time limit of")
    assert "Traceback" not in r.stderr


def test_too_many_parameters_are_refused_before_conversion():
    huge = {
        "layers.0.heads.0.Q": np.zeros((600, 2000), np.float32),
        "layers.0.heads.0.K": np.zeros((600, 2000), np.float32),
        "layers.0.heads.0.V": np.zeros((2000, 2000), np.float32),
    }
    with pytest.raises(InvalidArgumentError, match="6,400,000 parameters, more than the 1,000 .* before converting"):
        Network.from_weights(huge, max_parameters=1000)


def test_a_large_checkpoint_is_refused_before_conversion():
    """A MultiheadAttention state dict of embedding 2,000 (16,000,000 attention weights): refused from its shapes,
    as the package's names are; a small one under the same limit passes."""
    E = 2000
    big = {
        "attn.in_proj_weight": np.zeros((3 * E, E), np.float32),
        "attn.out_proj.weight": np.zeros((E, E), np.float32),
        "embed.weight": np.zeros((50_000, E), np.float32),
    }
    with pytest.raises(InvalidArgumentError, match="16,000,000 attention weights .* before converting"):
        Network.from_checkpoint(big, heads=2, tokens=2, max_parameters=10_000)
    rng = generator(1)
    small = {
        "attn.in_proj_weight": rng.standard_normal((12, 4)).astype(np.float32),
        "attn.out_proj.weight": rng.standard_normal((4, 4)).astype(np.float32),
    }
    net = Network.from_checkpoint(small, heads=2, tokens=2, max_parameters=64)  # exactly its (2 + H) E^2
    assert net.architecture.parameter_count == 64


def _softmax_gpt2(tmp_path, width=8, heads=2, layers=2):
    """A GPT-2-shaped softmax checkpoint at transformers' initialisation scale (weights of size 0.02, biases 0.1)
    with its config.json: read as trained, softmax, causal, affine (bench/softmax_point.py's network, smaller)."""
    import json

    from ag_attention._point.safetensors import write_safetensors

    rng = generator(11)
    tensors = {}
    for l in range(layers):
        p = f"transformer.h.{l}.attn."
        tensors[p + "c_attn.weight"] = ("F32", (rng.standard_normal((width, 3 * width)) * 0.02).astype("<f4"))
        tensors[p + "c_attn.bias"] = ("F32", (rng.standard_normal(3 * width) * 0.1).astype("<f4"))
        tensors[p + "c_proj.weight"] = ("F32", (rng.standard_normal((width, width)) * 0.02).astype("<f4"))
        tensors[p + "c_proj.bias"] = ("F32", (rng.standard_normal(width) * 0.1).astype("<f4"))
    write_safetensors(tmp_path / "model.safetensors", tensors)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_head": heads, "n_embd": width}))
    return tmp_path


def test_a_softmax_point_is_estimated_decided_and_kept_to_its_deadline(tmp_path, capsys):
    """Issue 44's full point, smaller: the estimate is printed first (softmax too); the float64 rank at the point,
    its inputs scaled out of the near-uniform softmax of small weights, reaches the proven symmetry bound there, so
    dim M is that bound and the point not critical, said as a measurement; a deadline too short for the SVD stops
    before it starts (exit 3, naming the step and the estimate)."""
    path = _softmax_gpt2(tmp_path)
    net = Network.load(path, tokens=3)
    est = estimate_point(net)
    assert [name for name, _ in est.parts] == ["float64 rank at the point"] and "a rank short of" in est.describe()
    g = point_geometry(net)
    assert g.critical is None and g.critical_numerical is False and g.numerical.scale > 1
    assert g.generic_dimension == g.numerical.rank and g.generic_certificate.startswith("numerical")
    assert "no (numerical: the float64 rank at the point" in str(g)
    # a third of the SVD's own estimate (calibrated in this process): 0.5 s was too close once (exit 0 in 0.14 s)
    limit = est.parts[0][1] / 3
    r = run_in_process(capsys, "point", str(path), "-t", "3", "--timeout", f"{limit:.3f}")
    assert r.returncode == 3 and "estimated " in r.stderr and "not started" in r.stderr
    from ag_attention._resources import Deadline

    with pytest.raises(ComputationTimeoutError, match=r"an SVD \(estimated 50 s, .* left: not started\)"):
        Deadline(10.0).fits("an SVD", 50.0)
    Deadline(10.0).fits("an SVD", 1.0)
    Deadline(None).fits("an SVD", 1e9)
