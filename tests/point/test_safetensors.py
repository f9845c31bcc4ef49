"""Weight files as trained models save them: bf16, fp16, fp8 and float128 by their exact values, metadata, bad files."""

import json
import re
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Network, point_geometry
from ag_attention._errors import InvalidArgumentError
from ag_attention._point.safetensors import fp8_table, read_safetensors, write_safetensors
from tests.cli import run_in_process
from tests.helpers import generator

BIG = 2**31


def _bf16(values: np.ndarray) -> np.ndarray:
    """The raw bfloat16 bits of float32 values (truncated: the test's values are bf16-exact)."""
    return (np.asarray(values, dtype="<f4").view("<u4") >> 16).astype("<u2")


def test_bfloat16_is_read_exactly_and_gives_the_report_of_the_same_float32_values(tmp_path):
    rng = generator(2)
    raw = {n: _bf16(rng.standard_normal(shape)) for n, shape in (("Q", (2, 3)), ("K", (2, 3)), ("V", (2, 3)))}
    exact = {n: (r.astype("<u4") << 16).view("<f4") for n, r in raw.items()}  # the values bf16 stands for
    write_safetensors(tmp_path / "w.safetensors", {f"layers.0.heads.0.{n}": ("BF16", r) for n, r in raw.items()})
    arrays, meta = read_safetensors(tmp_path / "w.safetensors", BIG)
    assert meta == {} and all(arrays[f"layers.0.heads.0.{n}"].dtype == np.float32 for n in raw)
    assert all(np.array_equal(arrays[f"layers.0.heads.0.{n}"], exact[n]) for n in raw)
    net = Network.load(tmp_path / "w.safetensors", tokens=2)
    assert net.weights[0][0]["V"][1, 2] == Fraction(float(exact["V"][1, 2]))
    write_safetensors(tmp_path / "f32.safetensors", {f"layers.0.heads.0.{n}": ("F32", e) for n, e in exact.items()})
    a = point_geometry(net).to_dict()
    b = point_geometry(Network.load(tmp_path / "f32.safetensors", tokens=2)).to_dict()
    keep = ("local_rank", "generic_dimension", "critical", "singular", "boundary", "rank_A", "rank_V")
    assert {k: a[k] for k in keep} == {k: b[k] for k in keep}


def test_the_eight_bit_floats_and_half_precision():
    e4, e5 = fp8_table("F8_E4M3"), fp8_table("F8_E5M2")
    assert np.nanmax(e4) == 448 and e4[1] == 2.0**-9 and np.isnan(e4[0x7F]) and np.isnan(e4[0xFF])
    assert np.sum(np.isnan(e4)) == 2 and not np.isinf(e4).any() and e4[0x38] == 1.0
    assert np.nanmax(e5[np.isfinite(e5)]) == 57344 and e5[1] == 2.0**-16 and e5[0x7C] == np.inf and e5[0x3C] == 1.0
    assert np.sum(np.isnan(e5)) == 6


def test_fp8_and_fp16_files(tmp_path):
    V = np.array([[0x38, 0x40], [0xB8, 0x01]], dtype=np.uint8)  # E4M3: 1, 2, -1, 2^-9
    Q = np.array([[1.5, -0.25]], dtype="<f2")
    write_safetensors(
        tmp_path / "w.safetensors",
        {"layers.0.heads.0.V": ("F8_E4M3", V), "layers.0.heads.0.Q": ("F16", Q), "layers.0.heads.0.K": ("F16", Q)},
    )
    net = Network.load(tmp_path / "w.safetensors", tokens=2)
    assert net.weights[0][0]["V"].tolist() == [[1, 2], [-1, Fraction(1, 512)]]
    bad = np.array([[0x7F]], dtype=np.uint8)  # NaN in E4M3
    write_safetensors(
        tmp_path / "nan.safetensors",
        {"layers.0.heads.0.V": ("F8_E4M3", bad), "layers.0.heads.0.A": ("F32", np.ones((1, 1), "<f4"))},
    )
    with pytest.raises(InvalidArgumentError, match=r"V\[0, 0\] = nan"):
        Network.load(tmp_path / "nan.safetensors", tokens=2)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 62, reason="this platform's long double is a float64")
def test_float128_keeps_its_precision(tmp_path):
    V = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 2]], dtype=np.longdouble)
    V[2, 2] += np.longdouble(2) ** -60  # rank 3 exactly; 2 + 2^-60 rounds to 2 in float64 (rank 2)
    np.savez(tmp_path / "w.npz", **{"layers.0.heads.0.A": np.eye(3, dtype=np.longdouble), "layers.0.heads.0.V": V})
    net = Network.load(tmp_path / "w.npz", tokens=2)
    assert net.weights[0][0]["V"][2, 2] == 2 + Fraction(1, 2**60)
    assert point_geometry(net).to_dict()["rank_V"] == 3


def test_the_token_count_comes_from_the_metadata(tmp_path, capsys):
    rng = generator(4)
    w = {f"layers.0.heads.0.{n}": ("F32", rng.standard_normal((2, 2)).astype("<f4")) for n in ("A", "V")}
    write_safetensors(tmp_path / "w.safetensors", w, metadata={"tokens": "3"})
    assert Network.load(tmp_path / "w.safetensors").architecture.tokens == 3
    assert Network.load(tmp_path / "w.safetensors", tokens=3).architecture.tokens == 3
    with pytest.raises(InvalidArgumentError, match="tokens=2 given, but the file says tokens=3"):
        Network.load(tmp_path / "w.safetensors", tokens=2)
    d = json.loads(run_in_process(capsys, "point", str(tmp_path / "w.safetensors"), "--json").stdout)
    assert d["architecture"]["tokens"] == 3


def _header_file(path, header: dict, body: bytes = b"") -> None:
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + body)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p.write_bytes(b"\x01\x02"), "no header length"),
        (lambda p: p.write_bytes((10**12).to_bytes(8, "little") + b"{}"), "header claims"),
        (
            lambda p: _header_file(p, {"x": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8),
            "dtype 'C64'",
        ),
        (
            lambda p: _header_file(p, {"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8),
            "truncated or corrupt",
        ),
        (
            lambda p: _header_file(
                p, {"x": {"dtype": "F32", "shape": [10**6, 10**6], "data_offsets": [0, 4 * 10**12]}}
            ),
            "truncated or corrupt",
        ),
        (
            lambda p: _header_file(p, {"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}),
            "is not a list of sizes",
        ),
        (lambda p: _header_file(p, {"__metadata__": {"tokens": 3}}), "__metadata__"),
    ],
)
def test_bad_safetensors_files_are_refused_by_name(tmp_path, make, message, capsys):
    path = tmp_path / "bad.safetensors"
    make(path)
    with pytest.raises(InvalidArgumentError, match=message):
        Network.load(path)
    r = run_in_process(capsys, "point", str(path), "-t", "2")
    assert r.returncode == 2 and "bad.safetensors" in r.stderr and "Traceback" not in r.stderr


def test_a_truncated_npz_and_a_renamed_npy_are_refused_by_name(tmp_path, capsys):
    np.savez(tmp_path / "w.npz", **{"layers.0.heads.0.A": np.eye(2), "layers.0.heads.0.V": np.ones((1, 2))})
    data = (tmp_path / "w.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    np.save(tmp_path / "a.npy", np.eye(2))
    (tmp_path / "a.npy").rename(tmp_path / "renamed.npz")
    for name, message in (("cut.npz", "not a readable .npz"), ("renamed.npz", "a .npy array")):
        with pytest.raises(InvalidArgumentError, match=message):
            Network.load(tmp_path / name)
        r = run_in_process(capsys, "point", str(tmp_path / name), "-t", "2")
        assert r.returncode == 2 and name in r.stderr and "Traceback" not in r.stderr


def _raw_header_file(path, text: str, body: bytes) -> None:
    path.write_bytes(len(text.encode()).to_bytes(8, "little") + text.encode() + body)


_A = '"layers.0.heads.0.A": {"dtype": "F32", "shape": [2, 2], "data_offsets": [%d, %d]}'
_V = '"layers.0.heads.0.V": {"dtype": "F32", "shape": [2, 2], "data_offsets": [%d, %d]}'
_BYTES = np.eye(2, dtype="<f4").tobytes() + np.arange(4, dtype="<f4").tobytes()


@pytest.mark.parametrize(
    "text, body, message",
    [
        # two tensors reading the same bytes: the reference library refuses it, another tool would load other weights
        ("{" + _A % (0, 16) + ", " + _V % (0, 16) + "}", _BYTES[:16], r"overlaps tensor layers.0.heads.0.A"),
        ("{" + _A % (0, 16) + ", " + _V % (8, 24) + "}", _BYTES[:24], "overlaps"),
        # bytes that belong to no tensor: a hole, or trailing bytes
        (
            "{" + _A % (0, 16) + ", " + _V % (24, 40) + "}",
            _BYTES + b"\0" * 8,
            r"bytes 16\.\.24 of the data belong to no",
        ),
        ("{" + _A % (0, 16) + ", " + _V % (16, 32) + "}", _BYTES + b"\0" * 4, r"bytes 32\.\.36 .*\(after the last"),
        # a tensor named twice (the reference library keeps the last when the offsets still tile the data)
        (
            "{" + _A % (16, 32) + ", " + _V % (16, 32) + ", " + _A % (0, 16) + "}",
            _BYTES,
            "the key layers.0.heads.0.A appears twice",
        ),
        (
            '{"__metadata__": {"tokens": "2", "tokens": "3"}, ' + _A % (0, 16) + ", " + _V % (16, 32) + "}",
            _BYTES,
            "the key tokens appears twice",
        ),
        # nested deeper than any header: a clear error, never RecursionError (the reference: "recursion limit")
        ("[" * 100_000 + "]" * 100_000, b"", "nested more than 64 levels deep"),
        ('{"x": ' + "{" * 5_000 + "}" * 5_000 + "}", b"", "nested more than 64 levels deep"),
        ('{"x": {"dtype": "F32", "shape": [NaN], "data_offsets": [0, 0]}}', b"", "NaN is not a JSON number"),
    ],
    ids=[
        "same-bytes",
        "overlap",
        "hole",
        "trailing",
        "name-twice",
        "metadata-twice",
        "deep-array",
        "deep-object",
        "nan",
    ],
)
def test_headers_the_reference_library_refuses_are_refused_by_name(tmp_path, text, body, message, capsys):
    path = tmp_path / "bad.safetensors"
    _raw_header_file(path, text, body)
    with pytest.raises(InvalidArgumentError, match=message):
        read_safetensors(path, BIG)
    r = run_in_process(capsys, "point", str(path), "-t", "2")
    assert r.returncode == 2 and "bad.safetensors" in r.stderr and "Traceback" not in r.stderr
    assert re.search(message, r.stderr) and "RecursionError" not in r.stderr


def test_the_reference_library_agrees_on_the_tiling_rules(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    cases = {
        "overlap": ("{" + _A % (0, 16) + ", " + _V % (0, 16) + "}", _BYTES[:16]),
        "hole": ("{" + _A % (0, 16) + ", " + _V % (24, 40) + "}", _BYTES + b"\0" * 8),
        "trailing": ("{" + _A % (0, 16) + ", " + _V % (16, 32) + "}", _BYTES + b"\0" * 4),
    }
    for name, (text, body) in cases.items():
        _raw_header_file(tmp_path / f"{name}.safetensors", text, body)
        with pytest.raises(Exception):  # noqa: B017 - the reference library's own error, whichever it is
            safetensors_numpy.load_file(str(tmp_path / f"{name}.safetensors"))
        with pytest.raises(InvalidArgumentError):
            read_safetensors(tmp_path / f"{name}.safetensors", BIG)
    # what the library writes (empty tensors included) is read, the same values
    arrays = {
        "layers.0.heads.0.A": np.eye(2, dtype="<f4"),
        "empty": np.zeros((0, 3), "<f4"),
        "layers.0.heads.0.V": np.arange(4, dtype="<f8").reshape(2, 2),
    }
    safetensors_numpy.save_file(arrays, str(tmp_path / "ok.safetensors"))
    read, _ = read_safetensors(tmp_path / "ok.safetensors", BIG)
    assert set(read) == set(arrays) and all(np.array_equal(read[k], v) for k, v in arrays.items())


def test_a_bf16_checkpoint_with_biases_and_rotary_positions_reads_as_its_float32_twin(tmp_path):
    """A LLaMA-style q_proj/k_proj/v_proj/o_proj file in bfloat16 with Qwen2's q/k/v biases and a config.json naming
    rope_theta: every weight and bias read at its exact bf16 value (the same network as the float32 file of those
    values), the rotation from the config, the same exact report."""
    import json

    rng = generator(7)
    E = 4
    raw = {}
    for x in "qkvo":
        raw[f"model.layers.0.self_attn.{x}_proj.weight"] = _bf16(rng.standard_normal((E, E)))
        if x != "o":
            raw[f"model.layers.0.self_attn.{x}_proj.bias"] = _bf16(rng.standard_normal(E) * 0.1)
    exact = {k: (r.astype("<u4") << 16).view("<f4") for k, r in raw.items()}
    config = {"model_type": "qwen2", "num_attention_heads": 2, "rope_theta": 1000000.0}
    for name, tensors in (
        ("bf16", {k: ("BF16", r) for k, r in raw.items()}),
        ("f32", {k: ("F32", e) for k, e in exact.items()}),
    ):
        (tmp_path / name).mkdir()
        write_safetensors(tmp_path / name / "model.safetensors", tensors)
        (tmp_path / name / "config.json").write_text(json.dumps(config))
    a, b = (Network.load(tmp_path / name, tokens=3, normalized=False) for name in ("bf16", "f32"))
    assert a.architecture == b.architecture and a.architecture.bias == "qkv" and a.architecture.positions.base == 10**6
    assert all(np.array_equal(x[n], y[n]) for x, y in zip(a.weights[0], b.weights[0]) for n in x)
    ga, gb = point_geometry(a).to_dict(), point_geometry(b).to_dict()
    assert {k: ga[k] for k in ("local_rank", "generic_dimension", "critical")} == {
        k: gb[k] for k in ("local_rank", "generic_dimension", "critical")
    }
