"""Weights in (ag_attention._point.weights): names, shapes, exact rationals, files, PyTorch by duck typing."""

from __future__ import annotations

import os
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import InvalidArgumentError, Network
from tests.cli import run_in_process

GOOD = {
    "layers.0.heads.0.Q": [[1, 0, 2], [0, 1, 1]],
    "layers.0.heads.0.K": [[1, 1, 0], [2, 0, 1]],
    "layers.0.heads.0.V": [[1, 0, 1], [0, 1, 1], [1, 1, 0]],
    "layers.1.heads.0.Q": [[1, 2, 0], [0, 1, 3]],
    "layers.1.heads.0.K": [[0, 1, 1], [1, 0, 2]],
    "layers.1.heads.0.V": [[2, 1, 0]],
}


def test_the_architecture_is_inferred_from_the_shapes():
    net = Network.from_weights(GOOD, tokens=3, causal=True)
    a = net.architecture
    assert (a.widths, a.ranks, a.tokens, a.heads, a.causal) == ((3, 3, 1), (2, 2), 3, 1, True)
    assert net.conversion == "exact (no floats)" and not net.floats
    theta = net.theta()
    assert theta.shape == (a.parameter_count,) and all(isinstance(q, Fraction) for q in theta)


def test_floats_become_their_exact_binary_value_or_rounded_multiples():
    w = {**GOOD, "layers.1.heads.0.V": np.array([[0.1, 0.25, -1e-3]])}
    exact = Network.from_weights(w)
    assert exact.weights[1][0]["V"][0, 0] == Fraction(0.1) == Fraction(3602879701896397, 36028797018963968)
    assert exact.conversion == "exact binary value of each float" and exact.floats
    rounded = Network.from_weights(w, denominator=100)
    assert list(rounded.weights[1][0]["V"][0]) == [Fraction(1, 10), Fraction(1, 4), Fraction(0)]
    assert rounded.conversion == "floats rounded to multiples of 1/100"
    f32 = Network.from_weights({**GOOD, "layers.1.heads.0.V": np.array([[0.1, 0.25, -1e-3]], dtype=np.float32)})
    assert f32.weights[1][0]["V"][0, 0] == Fraction(float(np.float32(0.1)))  # the float32 value, exactly


def test_the_same_point_from_every_source_is_the_same_network(tmp_path):
    """Lists of ints, Fractions, NumPy arrays, float arrays of integral values, .npz and .safetensors."""
    from safetensors.numpy import save_file

    arrays = {k: np.array(v, dtype=np.float64) for k, v in GOOD.items()}
    np.savez(tmp_path / "w.npz", **arrays)
    save_file({k: v.astype(np.float32) for k, v in arrays.items()}, str(tmp_path / "w.safetensors"))
    sources = [
        Network.from_weights(GOOD),
        Network.from_weights({k: [[Fraction(x) for x in row] for row in v] for k, v in GOOD.items()}),
        Network.from_weights({k: np.array(v, dtype=np.int64) for k, v in GOOD.items()}),
        Network.from_weights(arrays),
        Network.load(tmp_path / "w.npz", tokens=2),
        Network.load(tmp_path / "w.safetensors", tokens=2),
    ]
    thetas = [list(n.theta()) for n in sources]
    assert all(t == thetas[0] for t in thetas)
    assert len({n.architecture for n in sources}) == 1


BAD = [
    ({**GOOD, "layers.0.heads.0.X": [[1]]}, "layers.0.heads.0.X"),
    ({**GOOD, "layers.0.heads.1.Q": [[1, 0, 0]]}, "layers.1.heads.1.* is missing (2 layers and 2 heads"),
    ({k: v for k, v in GOOD.items() if k != "layers.1.heads.0.K"}, "layers.1.heads.0.K is missing"),
    ({**GOOD, "layers.0.heads.0.V": [[1, 0], [0, 1], [1, 1]]}, "layers.0.heads.0.Q has shape"),
    ({**GOOD, "layers.1.heads.0.V": [[1, 0]]}, "layers.1.heads.0.V has 2 columns"),
    ({**GOOD, "layers.1.heads.0.V": np.array([[1.0, np.nan, 0.0]])}, "layers.1.heads.0.V[0, 1] = nan"),
    ({**GOOD, "layers.1.heads.0.V": np.array([[1.0, np.inf, 0.0]])}, "layers.1.heads.0.V[0, 1] = inf"),
    ({**GOOD, "layers.1.heads.0.V": [[1, "x", 0]]}, "layers.1.heads.0.V[0, 1]"),
    ({**GOOD, "layers.1.heads.0.V": [1, 2, 0]}, "layers.1.heads.0.V: a matrix is expected"),
    ({**GOOD, "layers.1.heads.0.V": [[True, False, True]]}, "boolean"),
    ({**GOOD, "layers.0.heads.0.A": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}, "layers.0.heads.0.A is not expected"),
    (
        {
            "layers.0.heads.0.A": [[1, 0], [0, 1]],
            "layers.0.heads.0.V": [[1, 1]],
            "layers.1.heads.0.Q": [[1]],
            "layers.1.heads.0.K": [[1]],
            "layers.1.heads.0.V": [[1]],
        },
        "some heads give A",
    ),
    ({}, "no arrays"),
]


@pytest.mark.parametrize("weights, named", BAD, ids=[b[1][:30] for b in BAD])
def test_bad_weights_are_refused_by_name(weights, named):
    with pytest.raises(InvalidArgumentError) as err:
        Network.from_weights(weights)
    assert named in str(err.value)


def test_files_are_checked_before_they_are_read(tmp_path):
    with pytest.raises(
        InvalidArgumentError,
        match="a .npz, .safetensors, .pt or .bin file, or a save_pretrained directory, is expected",
    ):
        Network.load(tmp_path / "w.h5")
    with pytest.raises(InvalidArgumentError, match="No such file"):
        Network.load(tmp_path / "missing.npz")
    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)
    with pytest.raises(InvalidArgumentError, match="not a regular file"):
        Network.load(fifo)  # never opened: a FIFO would block
    (tmp_path / "junk.safetensors").write_bytes(b"\x00" * 100)
    with pytest.raises(InvalidArgumentError, match=r"junk.safetensors: not a .safetensors file \(its header\): not "):
        Network.load(tmp_path / "junk.safetensors")
    (tmp_path / "junk.npz").write_bytes(b"PK junk")
    with pytest.raises(InvalidArgumentError, match=r"junk.npz: not a .npz archive"):
        Network.load(tmp_path / "junk.npz")


class _Tensor:
    """What from_torch uses of a tensor (a real one is tested in test_torch.py)."""

    def __init__(self, a):
        self.a = np.asarray(a, dtype=np.float32)

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a


class _Module:
    def __init__(self, state):
        self.state = state

    def state_dict(self):
        return {k: _Tensor(v) for k, v in self.state.items()}


def test_from_torch_reads_a_module_or_a_state_dict_without_importing_torch():
    import sys

    assert "torch" not in sys.modules or True  # the package itself never imports it (tests/test_packaging.py)
    a = Network.from_torch(_Module(GOOD), tokens=2)
    b = Network.from_torch(_Module(GOOD).state_dict(), tokens=2)
    assert list(a.theta()) == list(b.theta()) == list(Network.from_weights(GOOD).theta())
    with pytest.raises(InvalidArgumentError, match="a module or a state dict"):
        Network.from_torch(42)


@pytest.mark.torch
def test_a_real_torch_module_gives_the_same_point_and_geometry(torch, tmp_path):
    """A torch module with nn.Parameters named as the weights, in float32: the same point as its NumPy arrays,
    its .npz and its .safetensors, and the same geometry report."""
    from safetensors.numpy import save_file

    from ag_attention import point_geometry

    class Lightning(torch.nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            self.layers = torch.nn.ModuleList()
            for d_in, d_out in ((3, 3), (3, 2)):
                head = torch.nn.ParameterDict(
                    {
                        n: torch.nn.Parameter(torch.randn(*shape, generator=g))
                        for n, shape in (("Q", (2, d_in)), ("K", (2, d_in)), ("V", (d_out, d_in)))
                    }
                )
                layer = torch.nn.Module()
                layer.heads = torch.nn.ModuleList([head])
                self.layers.append(layer)

    module = Lightning()
    assert set(module.state_dict()) == {f"layers.{l}.heads.0.{n}" for l in (0, 1) for n in "QKV"}
    arrays = {k: v.detach().numpy() for k, v in module.state_dict().items()}
    np.savez(tmp_path / "m.npz", **arrays)
    save_file(arrays, str(tmp_path / "m.safetensors"))
    nets = [
        Network.from_torch(module, tokens=2),
        Network.from_torch(module.state_dict(), tokens=2),
        Network.from_weights(arrays),
        Network.load(tmp_path / "m.npz", tokens=2),
        Network.load(tmp_path / "m.safetensors", tokens=2),
    ]
    assert all(list(n.theta()) == list(nets[0].theta()) for n in nets)
    reports = [point_geometry(n).to_dict() for n in (nets[0], nets[4])]
    keep = ("local_rank", "local_rank_upper", "generic_dimension", "critical", "fiber_dimension", "critical_layers")
    assert {k: reports[0][k] for k in keep} == {k: reports[1][k] for k in keep}
    assert reports[0]["exact"] and reports[0]["critical"] is False


def test_an_npz_is_refused_by_the_size_it_declares_before_unpacking(tmp_path, monkeypatch):
    from ag_attention._point import weights as weights_module

    path = tmp_path / "big.npz"
    np.savez_compressed(path, a=np.zeros(100_000))  # 800 kB unpacked, a few kB on disk
    monkeypatch.setattr(weights_module, "MAX_FILE_BYTES", 100_000)
    with pytest.raises(InvalidArgumentError, match="would take 800,"):
        weights_module.read_arrays(path)


def _npz_with(path, members: dict[str, bytes]) -> None:
    import zipfile

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)


def _npy_header(shape, descr="<f8") -> bytes:
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def test_an_npz_member_is_checked_by_its_npy_header_before_any_allocation(tmp_path, capsys):
    """A 218-byte archive whose .npy header declares 10^12 float64 entries made NumPy allocate 7.28 TiB (a
    traceback): the header is read from the member's stream and refused against the member's size."""
    huge = tmp_path / "huge.npz"
    _npz_with(huge, {"layers.0.heads.0.V.npy": _npy_header((10**6, 10**6))})
    assert huge.stat().st_size < 300
    with pytest.raises(
        InvalidArgumentError,
        match=r"member layers.0.heads.0.V.npy declares shape \(1000000, "
        r"1000000\) of float64, 8,000,000,000,000 bytes, but holds 0",
    ):
        Network.load(huge)
    r = run_in_process(capsys, "point", str(huge), "-t", "2")
    assert r.returncode == 2 and "member layers.0.heads.0.V.npy declares" in r.stderr and "Traceback" not in r.stderr
    short = tmp_path / "short.npz"
    _npz_with(short, {"layers.0.heads.0.V.npy": _npy_header((2, 2)) + b"\0" * 10})
    with pytest.raises(InvalidArgumentError, match="32 bytes, but holds 10 after its header"):
        Network.load(short)
    odd = tmp_path / "odd.npz"
    _npz_with(odd, {"layers.0.heads.0.V.npy\x1b[2K": _npy_header((1, 1)) + b"\0" * 8, "notes.txt": b"hi"})
    with pytest.raises(InvalidArgumentError, match=r"member 'layers.0.heads.0.V.npy\\x1b\[2K': not a .npy array"):
        Network.load(odd)


def test_an_npz_member_twice_pickled_objects_and_memory_are_refused(tmp_path, monkeypatch):
    import warnings
    import zipfile

    from ag_attention._point.weights import read_arrays

    good = np.eye(2)
    twice = tmp_path / "twice.npz"
    np.savez(twice, **{"layers.0.heads.0.A": good, "layers.0.heads.0.V": good})
    with warnings.catch_warnings(), zipfile.ZipFile(twice, "a") as z:
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name: that is the point
        z.writestr("layers.0.heads.0.V.npy", _npy_header((2, 2)) + np.zeros(4).tobytes())
    with pytest.raises(InvalidArgumentError, match="member layers.0.heads.0.V.npy appears twice in the archive"):
        Network.load(twice)
    objects = tmp_path / "objects.npz"
    _npz_with(objects, {"layers.0.heads.0.V.npy": _npy_header((1,), descr="|O") + b"\0" * 8})
    with pytest.raises(InvalidArgumentError, match="an array of object is not an array of numbers"):
        Network.load(objects)
    ok = tmp_path / "ok.npz"
    np.savez(
        ok,
        **{
            "layers.0.heads.0.A": np.asfortranarray(np.arange(4.0).reshape(2, 2)),
            "layers.0.heads.0.V": np.arange(6, dtype=">i4").reshape(3, 2),
        },
    )
    arrays = read_arrays(ok)
    assert arrays["layers.0.heads.0.A"].tolist() == [[0, 1], [2, 3]] and arrays["layers.0.heads.0.V"][2, 1] == 5
    monkeypatch.setenv("AG_ATTENTION_MEMORY_LIMIT", "1K")
    with pytest.raises(InvalidArgumentError, match="reading .*ok.npz needs about"):
        Network.load(ok)
