"""Weight files read safely: ``.npz``, ``.safetensors``, and ``.pt`` / ``.bin`` through ``torch.load``.

Every file is checked to be a regular file of at most ``max_bytes`` before it is opened for reading.

* ``.safetensors``: :mod:`.safetensors` (the header checked before a byte of data is read);
* ``.npz``: every member's ``.npy`` header read from the archive first, and required to declare the bytes the
  member holds, within the memory available, before its array is allocated (:func:`_npz_members`); pickled
  objects are never read;
* ``.pt`` / ``.bin`` (PyTorch's ``torch.save``, Hugging Face's ``pytorch_model.bin``): only through
  ``torch.load(path, weights_only=True)``, PyTorch's restricted unpickler, which rebuilds tensors and plain
  containers and refuses any other object (never an unrestricted unpickle: a pickle can run any code). Without
  PyTorch such a file is refused (exit 2), saying how to convert it to ``.safetensors``. The file must hold a
  state dict: a mapping of names to tensors, or one under ``"state_dict"`` (a Lightning checkpoint); a tensor in
  bf16 or an 8-bit float becomes float32 (exact: every such value is a float32).
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._resources import MemoryEstimate, require_memory
from .configs import read_small_json
from .safetensors import read_safetensors, shown_name

__all__ = ["read_weights_file", "read_checkpoint_directory", "tensor_to_numpy", "read_torch_file", "SUFFIXES"]

#: the weight files read
SUFFIXES = (".npz", ".safetensors", ".pt", ".pth", ".bin")
#: how a .pt / .bin file becomes a .safetensors file (named when PyTorch is missing here)
CONVERT = (
    "python -c \"import torch, safetensors.torch as s; s.save_file(torch.load('model.pt', "
    "weights_only=True), 'model.safetensors')\" (where PyTorch is installed)"
)


def tensor_to_numpy(tensor: Any) -> np.ndarray:
    """A torch tensor (duck-typed) as a NumPy array of the same values: bf16 and the 8-bit floats, which NumPy
    lacks, through float32 (exact: each of their values is a float32)."""
    t = tensor.detach().cpu()
    try:
        out: np.ndarray = t.numpy()
    except TypeError:  # "Got unsupported ScalarType BFloat16"
        out = t.float().numpy()
    return out


#: what a ``save_pretrained`` directory holds, in the order looked for: a sharded index, or one file
DIRECTORY_FILES = (
    "model.safetensors.index.json",
    "model.safetensors",
    "pytorch_model.bin.index.json",
    "pytorch_model.bin",
)
#: an index file larger than this is refused unread (a 70B model's index has about 80 kB)
MAX_INDEX_BYTES = 16 << 20
_SHARD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.(safetensors|bin)$")


def read_checkpoint_directory(path: Path, max_bytes: int) -> tuple[dict[str, Any], dict[str, str]]:
    """The arrays of a ``save_pretrained`` directory (:data:`DIRECTORY_FILES`): ``model.safetensors``, or the shards
    its ``model.safetensors.index.json`` lists (``pytorch_model.bin`` and its index through ``torch.load``, as
    :func:`read_torch_file`). Every shard is a plain file name of the directory (no path: a name with ``/`` or
    ``..`` is refused), read as :func:`read_weights_file` reads a file; together at most ``max_bytes``; every tensor
    the index lists is in the shard it names and in no other, and no shard holds a tensor the index does not list."""
    found = next((name for name in DIRECTORY_FILES if (path / name).is_file()), None)
    if found is None:
        raise InvalidArgumentError(
            f"{path}: a directory without a checkpoint: expected one of {', '.join(DIRECTORY_FILES)} "
            "(what save_pretrained writes)"
        )
    if not found.endswith(".index.json"):
        return read_weights_file(path / found, max_bytes)
    index = read_small_json(path / found, f"{path / found}", "an index", MAX_INDEX_BYTES)
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if (
        not isinstance(weight_map, dict)
        or not weight_map
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items())
    ):
        raise InvalidArgumentError(f"{path / found}: no weight_map of tensor name -> shard file")
    shards = sorted(set(weight_map.values()))
    for shard in shards:
        if not _SHARD.fullmatch(shard):
            raise InvalidArgumentError(
                f"{path / found}: shard {shown_name(shard)} is not a file name of this directory (no paths)"
            )
    sizes = []
    for shard in shards:
        try:
            sizes.append(os.stat(path / shard).st_size)
        except OSError as exc:
            raise InvalidArgumentError(f"{path / shard}: {exc.strerror or exc} (listed in {found})") from None
    if sum(sizes) > max_bytes:
        raise InvalidArgumentError(
            f"{path}: {len(shards)} shards of {sum(sizes):,} bytes together, more than the {max_bytes:,} read here"
        )
    arrays: dict[str, Any] = {}
    metadata: dict[str, str] = {}
    for shard in shards:
        part, meta = read_weights_file(path / shard, max_bytes)
        for name in part:
            if name in arrays:
                raise InvalidArgumentError(f"{path / shard}: tensor {shown_name(name)} is in two shards")
            listed = weight_map.get(name)
            if listed != shard:
                where = "not listed" if listed is None else f"listed in {shown_name(listed)}"
                raise InvalidArgumentError(f"{path / shard}: tensor {shown_name(name)} is {where} in {found}")
        arrays.update(part)
        metadata.update({k: v for k, v in meta.items() if k != "format"})
    missing = sorted(set(weight_map) - set(arrays))
    if missing:
        raise InvalidArgumentError(
            f"{path / found}: tensor {shown_name(missing[0])} is listed but not in {shown_name(weight_map[missing[0]])}"
        )
    return arrays, metadata


def read_weights_file(path: Path, max_bytes: int) -> tuple[dict[str, Any], dict[str, str]]:
    """The arrays of a weights file (module docstring) and its metadata (a ``.safetensors`` file's
    ``__metadata__``; none for the others), after checking it is a regular file of at most ``max_bytes``;
    every failure an :class:`InvalidArgumentError` naming the file. A directory is read as a ``save_pretrained``
    directory (:func:`read_checkpoint_directory`)."""
    if path.is_dir():
        return read_checkpoint_directory(path, max_bytes)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise InvalidArgumentError(
            f"{path}: a .npz, .safetensors, .pt or .bin file, or a save_pretrained directory, is expected"
        )
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InvalidArgumentError(f"{path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InvalidArgumentError(f"{path}: not a regular file")
    if st.st_size > max_bytes:
        raise InvalidArgumentError(f"{path}: {st.st_size:,} bytes, more than the {max_bytes:,} read here")
    if suffix in (".pt", ".pth", ".bin"):
        return read_torch_file(path, max_bytes), {}
    try:
        if suffix == ".npz":
            with open(path, "rb") as f:
                magic = f.read(4)
            if magic not in (b"PK\x03\x04", b"PK\x05\x06"):  # a zip archive (or an empty one)
                what = "a .npy array" if magic == b"\x93NUM" else f"it starts with {magic!r}"
                raise InvalidArgumentError(f"{path}: not a .npz archive ({what}): save with numpy.savez")
            return _read_npz(path, max_bytes), {}
        return read_safetensors(path, max_bytes)
    except InvalidArgumentError:  # the reader's own message names the file already
        raise
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise InvalidArgumentError(f"{path}: not a readable {suffix} file ({exc})") from None
    except Exception as exc:  # zipfile: BadZipFile (truncated, a bad CRC); zlib.error; NotImplementedError
        if type(exc).__name__ in ("BadZipFile", "error", "NotImplementedError"):
            raise InvalidArgumentError(f"{path}: not a readable {suffix} file ({exc})") from None
        raise


def read_torch_file(path: Path, max_bytes: int | None = None) -> dict[str, np.ndarray]:
    """A ``.pt`` / ``.bin`` state dict through ``torch.load(weights_only=True)`` (module docstring), its tensors as
    NumPy arrays; refused without PyTorch, naming how to convert the file.  A zip archive (``torch.save``'s format)
    whose members declare more than ``max_bytes`` unpacked is refused before ``torch.load`` unpacks anything (a
    3 MB file can declare gigabytes; the zip reader then holds each member to its declared size)."""
    if max_bytes is not None:
        _check_torch_archive(path, max_bytes)
    try:
        import torch  # optional: only a .pt / .bin file needs it (the package never imports it otherwise)
    except ImportError:
        raise InvalidArgumentError(
            f"{path}: a PyTorch file is read only by torch.load(weights_only=True), and PyTorch is not installed "
            f"here (no pickle is ever unpickled without it): install torch, or convert the file to .safetensors: "
            f"{CONVERT}"
        ) from None
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises UnpicklingError, RuntimeError, EOFError, ... with its reason
        reason = " ".join(str(exc).split())[:300]
        raise InvalidArgumentError(
            f"{path}: not readable by torch.load(weights_only=True) ({type(exc).__name__}: {reason})"
        ) from None
    if isinstance(obj, Mapping) and "state_dict" in obj and isinstance(obj["state_dict"], Mapping):
        obj = obj["state_dict"]
    if not isinstance(obj, Mapping):
        raise InvalidArgumentError(
            f"{path}: holds a {type(obj).__name__}, not a state dict (a mapping of names to "
            "tensors): save model.state_dict()"
        )
    out: dict[str, np.ndarray] = {}
    for key, value in obj.items():
        if not isinstance(key, str) or not isinstance(value, torch.Tensor):
            raise InvalidArgumentError(
                f"{path}: entry {shown_name(key)}: {type(value).__name__}, not a tensor "
                "(a state dict maps names to tensors)"
            )
        out[key] = tensor_to_numpy(value)
    return out


def _check_torch_archive(path: Path, max_bytes: int) -> None:
    """A ``torch.save`` zip archive: its members' declared unpacked sizes together at most ``max_bytes``."""
    import zipfile

    try:
        if not zipfile.is_zipfile(path):
            return  # the legacy format (a pickle then raw storages): read within the file's own size
        with zipfile.ZipFile(path) as archive:
            declared = sum(info.file_size for info in archive.infolist())
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise InvalidArgumentError(f"{path}: not a readable zip archive ({type(exc).__name__}: {exc})") from None
    if declared > max_bytes:
        raise InvalidArgumentError(
            f"{path}: its members would take {declared:,} bytes unpacked, more than the {max_bytes:,} read here "
            "(checked before torch.load)"
        )


def _npz_members(
    path: Path, archive: Any, max_bytes: int
) -> list[tuple[Any, str, tuple[int, ...], bool, np.dtype, int]]:
    """Each member of a ``.npz`` archive from its ``.npy`` header alone, before any array is allocated:
    ``(zip info, array name, shape, Fortran order, dtype, header bytes)``; a member whose header declares
    other bytes than it holds (``prod(shape) * itemsize`` against the member's unpacked size), a name given
    twice, pickled objects or a member that is no ``.npy`` array is refused, naming it."""
    from numpy.lib import format as npy

    infos = archive.infolist()
    declared = sum(info.file_size for info in infos)  # as the archive declares them (a small file can claim TBs)
    if declared > max_bytes:
        raise InvalidArgumentError(
            f"{path}: its arrays would take {declared:,} bytes unpacked, more than the {max_bytes:,} read here"
        )
    members = []
    seen: set[str] = set()
    for info in infos:
        where = f"{path}: member {shown_name(info.filename)}"
        if info.filename in seen:  # a zip may hold a name twice: readers would disagree on which is meant
            raise InvalidArgumentError(f"{where} appears twice in the archive")
        seen.add(info.filename)
        if not info.filename.endswith(".npy"):
            raise InvalidArgumentError(f"{where}: not a .npy array (save with numpy.savez)")
        with archive.open(info) as fh:
            try:
                version = npy.read_magic(fh)
                if version == (1, 0):
                    shape, fortran, dtype = npy.read_array_header_1_0(fh)
                elif version == (2, 0):
                    shape, fortran, dtype = npy.read_array_header_2_0(fh)
                else:
                    raise ValueError(f".npy format version {version} (1.0 and 2.0 are read here)")
            except (ValueError, EOFError) as exc:
                raise InvalidArgumentError(f"{where}: not a readable .npy header ({exc})") from None
            header = fh.tell()
        if dtype.hasobject or dtype.itemsize == 0:
            raise InvalidArgumentError(
                f"{where}: an array of {dtype} is not an array of numbers (objects are never unpickled)"
            )
        nbytes = math.prod(shape) * dtype.itemsize
        if header + nbytes != info.file_size:
            raise InvalidArgumentError(
                f"{where} declares shape {shape} of {dtype}, {nbytes:,} bytes, but holds "
                f"{info.file_size - header:,} after its header (corrupt or forged)"
            )
        members.append((info, info.filename[:-4], shape, fortran, dtype, header))
    return members


def _read_npz(path: Path, max_bytes: int) -> dict[str, np.ndarray]:
    """The arrays of a ``.npz`` archive: every member's header checked first (:func:`_npz_members`), their total
    size against the memory available (:func:`ag_attention._resources.require_memory`), then each array read
    into exactly the bytes its header declares."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        members = _npz_members(path, archive, max_bytes)
        sizes = {
            f"{shown_name(info.filename)} ({dtype} {shape})": math.prod(shape) * dtype.itemsize
            for info, _, shape, _, dtype, _ in members
        }
        require_memory(
            MemoryEstimate(sum(sizes.values()), sizes), f"reading {path}", "use a smaller file, or free memory"
        )
        out: dict[str, np.ndarray] = {}
        for info, name, shape, fortran, dtype, header in members:
            buffer = bytearray(math.prod(shape) * dtype.itemsize)
            with archive.open(info) as fh:
                fh.read(header)
                got = fh.readinto(buffer)  # type: ignore[attr-defined]  # a ZipExtFile, typed IO[bytes]
            if got != len(buffer):  # the archive's entry claimed more than its data holds
                raise InvalidArgumentError(f"{path}: member {shown_name(info.filename)} ends before its data")
            out[name] = np.frombuffer(buffer, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return out
