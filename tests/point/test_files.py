"""Weight files (ag_attention._point.files): .pt / .bin only through torch.load(weights_only=True), refused without
PyTorch naming how to convert; .npz and .safetensors are tested through Network.load in test_weights.py and
test_safetensors.py."""

import subprocess
import sys

import numpy as np
import pytest

from ag_attention import Network
from ag_attention._errors import InvalidArgumentError
from ag_attention._point.files import read_torch_file, read_weights_file, tensor_to_numpy
from tests.helpers import ROOT, generator

E, H = 4, 2


class _BFloat16:
    """What tensor_to_numpy uses of a torch tensor in bf16: numpy() raises, float() is exact."""

    def __init__(self, values):
        self.values = np.asarray(values, np.float32)

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        raise TypeError("Got unsupported ScalarType BFloat16")

    def float(self):
        return _Float32(self.values)


class _Float32(_BFloat16):
    def numpy(self):
        return self.values


def test_a_tensor_numpy_lacks_is_read_through_float32():
    assert tensor_to_numpy(_BFloat16([1.5, -2.0])).tolist() == [1.5, -2.0]
    assert tensor_to_numpy(_Float32([0.25])).dtype == np.float32


def _state(rng):
    return {
        "attn.in_proj_weight": rng.standard_normal((3 * E, E)).astype(np.float32),
        "attn.out_proj.weight": rng.standard_normal((E, E)).astype(np.float32),
    }


def test_a_torch_file_without_torch_is_refused_naming_how_to_convert(tmp_path, monkeypatch):
    path = tmp_path / "model.pt"
    path.write_bytes(b"PK\x03\x04 a torch.save archive, never unpickled here")
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    with pytest.raises(
        InvalidArgumentError,
        match=r"model\.pt: a PyTorch file is read only by torch\.load\("
        r"weights_only=True\), and PyTorch is not installed here .*"
        r"convert the file to \.safetensors: .*save_file",
    ):
        Network.load(path, tokens=2, heads=H)
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from ag_attention._cli import main\n"
        f"sys.exit(main(['point', {str(path)!r}, '-t', '2', '--heads', '2']))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 2 and "PyTorch is not installed" in r.stderr and ".safetensors" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1


@pytest.mark.torch
def test_a_pt_file_is_read_through_weights_only_torch_load(torch, tmp_path):
    state = _state(generator(1))
    torch.save({k: torch.from_numpy(v) for k, v in state.items()}, tmp_path / "model.pt")
    net = Network.load(tmp_path / "model.pt", tokens=2, heads=H)
    ref = Network.from_checkpoint(state, tokens=2, heads=H)
    assert list(net.theta()) == list(ref.theta()) and net.layout.startswith("MultiheadAttention")
    # a Lightning checkpoint keeps the state dict under "state_dict"; a .bin file (Hugging Face) is the same format
    torch.save({"state_dict": {k: torch.from_numpy(v) for k, v in state.items()}, "epoch": 3}, tmp_path / "m.bin")
    assert list(Network.load(tmp_path / "m.bin", tokens=2, heads=H).theta()) == list(ref.theta())
    # bf16, which NumPy lacks: every value exactly, through float32
    bf = {k: torch.from_numpy(v).to(torch.bfloat16) for k, v in state.items()}
    torch.save(bf, tmp_path / "bf16.pt")
    arrays = read_torch_file(tmp_path / "bf16.pt")
    assert all(np.array_equal(arrays[k], bf[k].float().numpy()) for k in bf)


class _Payload:
    """An object whose unpickling would run code: weights_only refuses it."""

    def __reduce__(self):
        return (print, ("unpickled: code ran",))


@pytest.mark.torch
def test_a_pickle_with_objects_is_refused_never_unpickled(torch, tmp_path, capfd):
    torch.save({"attn.in_proj_weight": torch.zeros(3 * E, E), "x": _Payload()}, tmp_path / "evil.pt")
    with pytest.raises(InvalidArgumentError, match=r"evil\.pt: not readable by torch\.load\(weights_only=True\)"):
        Network.load(tmp_path / "evil.pt", tokens=2, heads=H)
    assert "code ran" not in capfd.readouterr().out
    torch.save([torch.zeros(2, 2)], tmp_path / "list.pt")
    with pytest.raises(InvalidArgumentError, match=r"list\.pt: holds a list, not a state dict"):
        Network.load(tmp_path / "list.pt", tokens=2)
    torch.save({"w": torch.zeros(2, 2), "step": 3}, tmp_path / "mixed.pt")
    with pytest.raises(InvalidArgumentError, match=r"mixed\.pt: entry step: int, not a tensor"):
        Network.load(tmp_path / "mixed.pt", tokens=2)


def test_a_pt_archive_is_sized_before_torch_load(tmp_path):
    """A 3 MB-like .pt zip whose members unpack to far more than the budget: refused from the zip's directory,
    before torch.load unpacks anything (no torch needed to refuse it)."""
    import zipfile

    path = tmp_path / "bomb.pt"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data/0", b"\0" * 50_000_000)
    assert path.stat().st_size < 1_000_000
    with pytest.raises(InvalidArgumentError, match=r"50,000,000 bytes unpacked, more than the 10,000,000"):
        read_weights_file(path, 10_000_000)
