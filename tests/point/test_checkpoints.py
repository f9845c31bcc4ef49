"""Checkpoints as saved: MultiheadAttention, q/k/v/o projections, query/key/value, a mapping; the forward pass."""

import json
import math

import numpy as np
import pytest

from ag_attention import Network, point_geometry
from ag_attention._errors import InvalidArgumentError
from ag_attention._point.checkpoints import BERT, MHA, PROJ
from ag_attention._point.checkpoints import translate as _translate
from ag_attention._point.safetensors import write_safetensors
from ag_attention._point.weights import to_fraction
from tests.cli import run_in_process
from tests.helpers import generator

E, H = 4, 2
DH = E // H


def _projections(seed=1):
    rng = generator(seed)
    return {n: rng.standard_normal((E, E)) for n in ("q", "k", "v", "o")}


def translate(arrays, **kwargs):
    def convert(value, name):
        arr = np.asarray(value)
        out = np.empty(arr.shape, dtype=object)
        for idx, v in np.ndenumerate(arr):
            out[idx] = to_fraction(v.item(), name)
        return out

    return _translate(arrays, convert, **kwargs)


def _reference_mha(P, X):
    """torch's MultiheadAttention in NumPy with the softmax removed (no biases): the checkpoint's own function."""
    q, k, v = X @ P["q"].T, X @ P["k"].T, X @ P["v"].T
    heads = []
    for h in range(H):
        s = slice(h * DH, (h + 1) * DH)
        scores = q[:, s] @ k[:, s].T / math.sqrt(DH)
        heads.append(scores @ v[:, s])
    return np.concatenate(heads, axis=1) @ P["o"].T


def _layouts(P):
    mha = {
        "attn.in_proj_weight": np.vstack([P["q"], P["k"], P["v"]]),
        "attn.in_proj_bias": np.zeros(3 * E),
        "attn.out_proj.weight": P["o"],
        "attn.out_proj.bias": np.zeros(E),
        "embed.weight": np.ones((10, E)),
        "norm.weight": np.ones(E),
    }
    proj = {f"model.layers.0.self_attn.{r}_proj.weight": P[r] for r in "qkvo"}
    bert = {
        "encoder.layer.0.attention.self.query.weight": P["q"],
        "encoder.layer.0.attention.self.key.weight": P["k"],
        "encoder.layer.0.attention.self.value.weight": P["v"],
        "encoder.layer.0.attention.output.dense.weight": P["o"],
        "encoder.layer.0.output.dense.weight": np.ones((E, 3 * E)),
    }  # the MLP's, not attention's
    return {MHA: mha, PROJ: proj, BERT: bert}


def test_the_same_network_saved_three_ways_gives_the_same_report():
    P = _projections()
    reports = []
    for layout, arrays in _layouts(P).items():
        # --as lightning; --no-biases: the MHA's zero biases dropped, the paper's model as the other two layouts
        net = Network.from_checkpoint(arrays, heads=H, tokens=2, normalized=False, biases=False)
        assert layout in net.source and net.architecture.heads == H and net.architecture.ranks == (DH,)
        assert "dropped the softmax, the score scale 1/sqrt(d_h)" in net.model
        assert net.conversion.startswith("exact binary value")
        g = point_geometry(net).to_dict()
        reports.append({k: g[k] for k in ("local_rank", "generic_dimension", "critical", "fiber_dimension")})
        X = generator(5).standard_normal((3, 2, E))
        # the package's function is the checkpoint's times sqrt(d_h) (the score scale dropped)
        assert np.allclose(net.forward(X) / math.sqrt(DH), np.stack([_reference_mha(P, x) for x in X]), rtol=1e-12)
    assert reports[0] == reports[1] == reports[2]
    # in the package's own names: W_O,h W_v,h per head
    own = {}
    for h in range(H):
        s = slice(h * DH, (h + 1) * DH)
        own[f"layers.0.heads.{h}.Q"], own[f"layers.0.heads.{h}.K"] = P["q"][s], P["k"][s]
        own[f"layers.0.heads.{h}.V"] = P["o"][:, s] @ P["v"][s]
    g = point_geometry(Network.from_weights(own)).to_dict()
    assert {k: g[k] for k in reports[0]} == reports[0]
    # by default the MHA's biases are part of the model it was trained as (affine attention), zero or not: the
    # same function, another neuromanifold (every bias parameter adds a dimension here)
    affine = Network.from_checkpoint(_layouts(P)[MHA], heads=H, tokens=2, normalized=False)
    P_plain = net.architecture.parameter_count
    assert affine.architecture.bias == "qkvo" and affine.architecture.parameter_count == P_plain + H * (2 * DH + E) + E
    assert np.allclose(affine.forward(X), net.forward(X), rtol=1e-12)
    g = point_geometry(affine).to_dict()
    assert g["local_rank"] > reports[0]["local_rank"] and g["critical"] is False


def test_a_bias_is_zero_only_in_its_own_precision():
    """A float128 bias of 1e-4900 (0.0 as a float64) is not zero: with --no-biases it is refused by name."""
    arrays = _layouts(_projections())[MHA]
    tiny = np.zeros(np.asarray(arrays["attn.in_proj_bias"]).shape, dtype=np.longdouble)
    tiny[1] = np.longdouble("1e-4900")
    assert float(tiny[1]) == 0.0 and tiny[1] != 0
    with pytest.raises(InvalidArgumentError, match="attn.in_proj_bias: a nonzero bias"):
        translate(arrays | {"attn.in_proj_bias": tiny}, heads=H, biases=False)


def test_unrelated_tensors_and_zero_biases_are_listed_and_ignored():
    tr = translate(_layouts(_projections())[MHA], heads=H)
    assert set(tr.ignored) == {"embed.weight", "norm.weight"}
    assert any("ignored 2 tensor(s)" in n and "embed.weight, norm.weight" in n for n in tr.notes)
    assert any(
        "2 bias(es) of the attention projections read into the model" in n
        and "2 of them exactly zero" in n
        and "attn.in_proj_bias, attn.out_proj.bias" in n
        for n in tr.notes
    )
    dropped = translate(_layouts(_projections())[MHA], heads=H, biases=False)
    assert set(dropped.ignored) == {"attn.in_proj_bias", "attn.out_proj.bias", "embed.weight", "norm.weight"}
    assert any(
        "2 bias(es) of the attention projections are exactly zero and not used" in n
        and "attn.in_proj_bias, attn.out_proj.bias" in n
        for n in dropped.notes
    )
    bert = translate(_layouts(_projections())[BERT], heads=H)
    assert bert.ignored == ("encoder.layer.0.output.dense.weight",)


def test_what_cannot_be_mapped_is_refused_by_name():
    P = _projections()
    mha = _layouts(P)[MHA]
    with pytest.raises(
        InvalidArgumentError,
        match="the token count t and the number of heads are not stored in the "
        r"file: give tokens= and heads= \(--tokens T --heads H",
    ):
        Network.from_checkpoint(mha)  # both named in one message
    with pytest.raises(InvalidArgumentError, match="the number of heads is not stored"):
        Network.from_checkpoint(mha, tokens=2)
    with pytest.raises(InvalidArgumentError, match="heads=3: does not divide"):
        Network.from_checkpoint(mha, heads=3, tokens=2)
    with pytest.raises(InvalidArgumentError, match=r"attn.in_proj_bias: a nonzero bias .* --no-biases"):
        Network.from_checkpoint({**mha, "attn.in_proj_bias": np.ones(3 * E)}, heads=H, tokens=2, biases=False)
    with pytest.raises(InvalidArgumentError, match=r"attn.in_proj_bias: 5 entries for the 12 rows of its stack"):
        Network.from_checkpoint({**mha, "attn.in_proj_bias": np.ones(5)}, heads=H, tokens=2)
    with pytest.raises(InvalidArgumentError, match="no attention weights found"):
        Network.from_checkpoint({"embed.weight": np.ones((3, 3))}, tokens=2)
    with pytest.raises(InvalidArgumentError, match="no 'v' projection"):
        Network.from_checkpoint({"a.q_proj.weight": P["q"], "a.k_proj.weight": P["k"]}, heads=H, tokens=2)


def test_a_mapping_names_the_tensors_of_any_layout():
    P = _projections()
    arrays = {"blk.wq": P["q"], "blk.wk": P["k"], "blk.wv": P["v"], "blk.wo": P["o"], "tok": np.ones((2, 2))}
    names = {"blk.wq": "layers.0.q", "blk.wk": "layers.0.k", "blk.wv": "layers.0.v", "blk.wo": "layers.0.o"}
    net = Network.from_checkpoint(arrays, heads=H, tokens=2, names=names)
    ref = Network.from_checkpoint(_layouts(P)[MHA], heads=H, tokens=2)
    assert all(np.array_equal(a[n], b[n]) for a, b in zip(net.weights[0], ref.weights[0]) for n in "QKV")
    with pytest.raises(InvalidArgumentError, match="names: blk.wq -> q0: the target"):
        Network.from_checkpoint(arrays, heads=H, tokens=2, names={**names, "blk.wq": "q0"})


def test_two_layers_are_ordered_by_their_indices():
    P, R = _projections(1), _projections(2)
    arrays = {f"layers.{i}.self_attn.{r}_proj.weight": W[r] for i, W in ((10, R), (2, P)) for r in "qkvo"}
    tr = translate(arrays, heads=H)
    assert tr.layers == ("layers.2.self_attn.", "layers.10.self_attn.")
    assert np.array_equal(tr.weights["layers.0.heads.0.Q"].astype(float), P["q"][:DH])


def test_the_cli_reads_a_checkpoint_with_its_heads(tmp_path, capsys):
    P = _projections()
    tensors = {k: ("F32", np.asarray(v, dtype="<f4")) for k, v in _layouts(P)[MHA].items()}
    write_safetensors(tmp_path / "mha.safetensors", tensors, metadata={"heads": "2", "tokens": "2"})
    d = json.loads(run_in_process(capsys, "point", str(tmp_path / "mha.safetensors"), "--json").stdout)
    assert d["architecture"]["heads"] == 2 and any("ignored 2 tensor(s)" in n for n in d["notes"])
    assert set(d["point"]["not_used"]) == {"embed.weight", "norm.weight"} and d["architecture"]["bias"] == "qkvo"
    d = json.loads(run_in_process(capsys, "point", str(tmp_path / "mha.safetensors"), "--json", "--no-biases").stdout)
    assert set(d["point"]["not_used"]) == {"attn.in_proj_bias", "attn.out_proj.bias", "embed.weight", "norm.weight"}
    (tmp_path / "names.json").write_text("[1, 2]")
    bad = run_in_process(capsys, "point", str(tmp_path / "mha.safetensors"), "--names", str(tmp_path / "names.json"))
    assert bad.returncode == 2 and "--names" in bad.stderr and "Traceback" not in bad.stderr
    wrong = run_in_process(capsys, "point", str(tmp_path / "mha.safetensors"), "--heads", "4")
    assert wrong.returncode == 2 and "heads=4 given, but the file says heads=2" in wrong.stderr


def test_the_forward_pass_is_exact_and_checks_its_input():
    net = Network.from_weights({"layers.0.heads.0.A": [[1, 2], [0, 1]], "layers.0.heads.0.V": [[1, -1], [2, 0]]})
    X = np.array([[[0.5, 1.0], [2.0, -1.0]]])
    exact = net.forward(X, exact=True)
    S = X[0] @ np.array([[1, 2], [0, 1]]) @ X[0].T
    assert np.array_equal(exact.astype(float)[0], S @ (X[0] @ np.array([[1, -1], [2, 0]]).T))
    assert np.allclose(net.forward(X[0]), exact.astype(float)[0])
    with pytest.raises(InvalidArgumentError, match=r"expected \(N, 2, 2\)"):
        net.forward(np.ones((3, 2)))


@pytest.mark.torch
def test_a_real_multihead_attention_module(torch):
    """torch.nn.MultiheadAttention (no biases): with softmax, the mapped network's forward pass is the module's own
    output (the score scale becomes the temperature sqrt(d_h)); without softmax, the module's projections and
    out_proj applied by torch give the mapped lightning network's output divided by sqrt(d_h)."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(E, H, bias=False, batch_first=True).double()
    X = torch.randn(3, 2, E, dtype=torch.float64)
    soft = Network.from_torch(mha, heads=H, normalized=True, tokens=2)
    assert soft.architecture.temperature == pytest.approx(math.sqrt(DH))
    with torch.no_grad():
        expected, _ = mha(X, X, X, need_weights=False)
        W = mha.in_proj_weight
        q, k, v = (torch.nn.functional.linear(X, W[i * E : (i + 1) * E]) for i in range(3))
        heads = []
        for h in range(H):
            s = slice(h * DH, (h + 1) * DH)
            heads.append((q[..., s] @ k[..., s].transpose(1, 2) / math.sqrt(DH)) @ v[..., s])
        lightning = mha.out_proj(torch.cat(heads, dim=-1))
    assert np.allclose(soft.forward(X.numpy()), expected.numpy(), rtol=1e-10, atol=1e-12)
    assert Network.from_torch(mha, heads=H, tokens=2).architecture.normalized  # the model trained, by default
    light = Network.from_torch(mha, heads=H, tokens=2, normalized=False)
    assert np.allclose(light.forward(X.numpy()) / math.sqrt(DH), lightning.numpy(), rtol=1e-10, atol=1e-12)


FORGED = "embed\n  critical         YES: forged\x1b[2K\u202e"


def test_a_tensor_name_cannot_add_lines_to_the_report_or_to_an_error(tmp_path, capsys):
    """A name with a newline, an escape sequence and a bidi override is printed escaped: the text report keeps
    its lines (no forged "critical YES"), the JSON has the name itself, and an error naming it is one line."""
    P = _projections()
    tensors = {k: ("F32", np.asarray(v, dtype="<f4")) for k, v in _layouts(P)[MHA].items()}
    tensors[FORGED] = ("F32", np.ones(2, "<f4"))
    write_safetensors(tmp_path / "forged.safetensors", tensors, metadata={"heads": "2", "tokens": "2"})
    r = run_in_process(capsys, "point", str(tmp_path / "forged.safetensors"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [x for x in lines if "critical" in x and "YES" in x] == [x for x in lines if "'embed\\n" in x]
    assert not any(x.startswith("  critical         YES") for x in lines)
    assert "\x1b" not in r.stdout and "\u202e" not in r.stdout and "\\x1b[2K\\u202e'" in r.stdout
    d = json.loads(run_in_process(capsys, "point", str(tmp_path / "forged.safetensors"), "--json").stdout)
    assert FORGED in d["point"]["not_used"]
    net = Network.load(tmp_path / "forged.safetensors")  # the API: the notes name it escaped, one line each
    assert FORGED in net.ignored and any("'embed\\n  critical" in n for n in net.notes)
    assert all(n.isprintable() for n in net.notes) and str(point_geometry(net)).count("\n") == len(lines) - 1
    # in an error: a stacked bias without its weight, a nonzero bias refused by --no-biases, a NaN weight
    bad = {**tensors, FORGED + ".in_proj_bias": ("F32", np.ones(3 * E, "<f4"))}
    write_safetensors(tmp_path / "bias.safetensors", bad, metadata={"heads": "2", "tokens": "2"})
    r = run_in_process(capsys, "point", str(tmp_path / "bias.safetensors"))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "\\x1b[2K" in r.stderr
    assert "a stacked bias without its stacked weight" in r.stderr and "\x1b" not in r.stderr
    bad = {**tensors, "attn.in_proj_bias": ("F32", np.ones(3 * E, "<f4"))}
    write_safetensors(tmp_path / "bias2.safetensors", bad, metadata={"heads": "2", "tokens": "2"})
    r = run_in_process(capsys, "point", str(tmp_path / "bias2.safetensors"), "--no-biases")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "a nonzero bias" in r.stderr
    weight = np.vstack([P["q"], P["k"], P["v"]]).astype("<f4")
    weight[0, 0] = np.nan
    nan = {FORGED + ".in_proj_weight": ("F32", weight), FORGED + ".out_proj.weight": ("F32", P["o"].astype("<f4"))}
    write_safetensors(tmp_path / "nan.safetensors", nan, metadata={"heads": "2", "tokens": "2"})
    r = run_in_process(capsys, "point", str(tmp_path / "nan.safetensors"))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "= nan" in r.stderr and "\x1b" not in r.stderr


def test_two_layouts_for_one_projection_are_refused_naming_both():
    """in_proj_weight beside q_proj_weight: the q_proj_weight was dropped unlisted; which one the model uses is
    not in the file, so both are named and the file refused."""
    P = _projections()
    arrays = {**_layouts(P)[MHA], "attn.q_proj_weight": P["q"]}
    message = (
        r"layer attn\.: two layouts give the query projection: attn\.in_proj_weight \(stacked "
        r"query/key/value\) and attn\.q_proj_weight \(query\)"
    )
    with pytest.raises(InvalidArgumentError, match=message):
        Network.from_checkpoint(arrays, heads=H, tokens=2)
    separate = {
        "attn.q_proj_weight": P["q"],
        "attn.k_proj_weight": P["k"],
        "attn.v_proj_weight": P["v"],
        "attn.in_proj_weight": np.vstack([P["q"], P["k"], P["v"]]),
    }
    with pytest.raises(InvalidArgumentError, match=r"attn\.q_proj_weight \(query\) and attn\.in_proj_weight"):
        Network.from_checkpoint(separate, heads=H, tokens=2)
    separate.pop("attn.in_proj_weight")
    with pytest.raises(InvalidArgumentError, match=r"attn\.q_proj\.weight: a second 'q' weight .* attn\.q_proj_weight"):
        Network.from_checkpoint({**separate, "attn.q_proj.weight": P["q"]}, heads=H, tokens=2)


def test_the_cli_refuses_two_layouts_by_name(tmp_path, capsys):
    P = _projections()
    tensors = {k: ("F32", np.asarray(v, dtype="<f4")) for k, v in _layouts(P)[MHA].items()}
    tensors["attn.q_proj_weight"] = ("F32", P["q"].astype("<f4"))
    write_safetensors(tmp_path / "both.safetensors", tensors, metadata={"heads": "2", "tokens": "2"})
    r = run_in_process(capsys, "point", str(tmp_path / "both.safetensors"))
    assert r.returncode == 2 and "attn.in_proj_weight" in r.stderr and "attn.q_proj_weight" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_bias_of_bert_s_output_projection_is_read_into_the_model(tmp_path, capsys):
    """attention.output.dense.bias (BERT) was once listed as "not attention weights" and treated as zero: it is the
    output projection's bias, read into the model (affine attention), and refused by --no-biases when nonzero."""
    P = _projections()
    bert = _layouts(P)[BERT]
    b = generator(3).standard_normal(E)
    net = Network.from_checkpoint({**bert, "encoder.layer.0.attention.output.dense.bias": b}, heads=H, tokens=2)
    assert net.architecture.bias == "o" and np.array_equal(net.weights[0][0]["bO"].astype(float)[:, 0], b)
    X = generator(4).standard_normal((2, 2, E))
    plain = Network.from_checkpoint(bert, heads=H, tokens=2)
    assert np.allclose(net.forward(X), plain.forward(X) + b, rtol=1e-12)  # the output bias adds to every token
    with pytest.raises(
        InvalidArgumentError,
        match=r"encoder\.layer\.0\.attention\.output\.dense\.bias: a nonzero bias of the output projection .* "
        r"--no-biases",
    ):
        Network.from_checkpoint(
            {**bert, "encoder.layer.0.attention.output.dense.bias": np.ones(E)}, heads=H, tokens=2, biases=False
        )
    zero = Network.from_checkpoint(
        {**bert, "encoder.layer.0.attention.output.dense.bias": np.zeros(E)}, heads=H, tokens=2, biases=False
    )
    assert any("exactly zero" in n and "encoder.layer.0.attention.output.dense.bias" in n for n in zero.notes)
    assert "encoder.layer.0.attention.output.dense.bias" in zero.ignored
    mapped = {"blk.wq.weight": P["q"], "blk.wk.weight": P["k"], "blk.wv.weight": P["v"], "blk.wv.bias": np.ones(E)}
    names = {"blk.wq.weight": "layers.0.q", "blk.wk.weight": "layers.0.k", "blk.wv.weight": "layers.0.v"}
    assert Network.from_checkpoint(mapped, heads=H, tokens=2, names=names).architecture.bias == "v"
    with pytest.raises(InvalidArgumentError, match=r"blk\.wv\.bias: a nonzero bias of the value projection"):
        Network.from_checkpoint(mapped, heads=H, tokens=2, names=names, biases=False)
    tensors = {k: ("F32", np.asarray(v, dtype="<f4")) for k, v in bert.items()}
    tensors["encoder.layer.0.attention.output.dense.bias"] = ("F32", np.full(E, 0.5, "<f4"))
    write_safetensors(tmp_path / "bert.safetensors", tensors, metadata={"heads": "2", "tokens": "2"})
    r = run_in_process(capsys, "point", str(tmp_path / "bert.safetensors"), "--no-biases")
    assert r.returncode == 2 and "attention.output.dense.bias: a nonzero bias" in r.stderr
    r = run_in_process(capsys, "point", str(tmp_path / "bert.safetensors"), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["architecture"]["bias"] == "o"


def test_every_tensor_not_used_is_listed_by_name():
    P = _projections()
    extra = {f"mlp.{i}.weight": np.ones((2, 2)) for i in range(12)}
    tr = translate({**_layouts(P)[PROJ], **extra}, heads=H)
    note = next(n for n in tr.notes if n.startswith("ignored 12 tensor(s)"))
    assert all(name in note for name in extra) and "..." not in note and set(tr.ignored) == set(extra)


def test_tokens_and_heads_come_from_the_file_or_are_required_as_in_the_cli(tmp_path, capsys):
    """One convention (issue 37): the API refuses what the CLI refuses; every missing argument in one message; a
    value given that the file contradicts (its names or its __metadata__) is refused, never ignored."""
    P = _projections()
    mha = _layouts(P)[MHA]
    with pytest.raises(InvalidArgumentError, match="the token count t is not stored"):
        Network.from_torch(mha, heads=H)  # was t = 2, silently
    with pytest.raises(InvalidArgumentError, match="the token count t and the number of heads are not stored"):
        Network.from_torch(mha)
    rng = generator(3)
    two = {
        f"layers.0.heads.{h}.{n}": ("F32", rng.standard_normal((2 if n != "V" else 3, 3)).astype("<f4"))
        for h in range(2)
        for n in "QKV"
    }
    write_safetensors(tmp_path / "two.safetensors", two)
    with pytest.raises(InvalidArgumentError, match=r"heads=5 given, but the file says heads=2 \(its weights' names\)"):
        Network.load(tmp_path / "two.safetensors", tokens=2, heads=5)  # was ignored
    assert Network.load(tmp_path / "two.safetensors", tokens=2, heads=2).architecture.heads == 2
    write_safetensors(tmp_path / "seven.safetensors", two, metadata={"heads": "7", "tokens": "2"})
    with pytest.raises(InvalidArgumentError, match=r"its __metadata__ says heads=7, its weights name 2 head\(s\)"):
        Network.load(tmp_path / "seven.safetensors")  # was ignored
    one = {k: v for k, v in two.items() if ".heads.0." in k}
    write_safetensors(tmp_path / "one.safetensors", one, metadata={"tokens": "2"})
    assert Network.load(tmp_path / "one.safetensors").architecture.heads == 1  # one head needs no heads=
    tensors = {k: ("F32", np.asarray(v, dtype="<f4")) for k, v in mha.items()}
    write_safetensors(tmp_path / "mha.safetensors", tensors, metadata={"heads": "2"})
    with pytest.raises(InvalidArgumentError, match=r"heads=4 given, but the file says heads=2 \(its __metadata__\)"):
        Network.load(tmp_path / "mha.safetensors", tokens=2, heads=4)
    write_safetensors(tmp_path / "bare.safetensors", tensors)
    r = run_in_process(capsys, "point", str(tmp_path / "bare.safetensors"))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "the token count t and the number of heads are not stored" in r.stderr and "--tokens T --heads H" in r.stderr
    r = run_in_process(capsys, "point", str(tmp_path / "two.safetensors"), "-t", "2", "--heads", "5")
    assert r.returncode == 2 and "heads=5 given, but the file says heads=2" in r.stderr


def test_the_report_s_first_line_names_the_model_the_layout_and_what_was_dropped():
    """Issue 37: a softmax layout is analysed as softmax by default, and the first line says so; --as lightning
    names the softmax and the score scale as dropped."""
    net = Network.from_checkpoint(_layouts(_projections())[MHA], heads=H, tokens=2)
    assert net.layout == f"{MHA}, 2 heads" and net.architecture.normalized
    assert net.architecture.temperature == pytest.approx(math.sqrt(DH))
    first = str(point_geometry(net)).splitlines()[0]
    assert first.startswith(
        f"Geometry at the point: softmax (normalized) attention, as trained, read as {MHA}, "
        "2 heads; the score scale 1/sqrt(d_h) (d_h = 2) kept as the temperature 1.41421:"
    )
    d = point_geometry(net).to_dict()
    assert d["point"]["layout"] == net.layout and d["point"]["model"] == net.model
    light = Network.from_checkpoint(_layouts(_projections())[MHA], heads=H, tokens=2, normalized=False)
    first = str(point_geometry(light)).splitlines()[0]
    assert first.startswith(
        "Geometry at the point: lightning attention (--as lightning: the trained model's "
        f"softmax removed), read as {MHA}, 2 heads; dropped the softmax, the score scale"
    )
    own = Network.from_weights(
        {"layers.0.heads.0.Q": [[1, 0]], "layers.0.heads.0.K": [[0, 1]], "layers.0.heads.0.V": [[1, 1]]}
    )
    assert str(point_geometry(own)).splitlines()[0] == "Geometry at the point: widths 2,1 ranks 1 t=2, 6 parameters"
