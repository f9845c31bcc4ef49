"""A ``.safetensors`` file read exactly: every float dtype of trained weights, its metadata, sizes checked first.

The format (huggingface/safetensors): 8 bytes, the little-endian length ``n`` of a JSON header; the header (each
tensor's ``dtype``, ``shape`` and ``data_offsets`` into the bytes that follow, and an optional ``__metadata__`` of
strings); the tensors' bytes. The ``safetensors`` library reads it into NumPy only for NumPy's dtypes, and raises
on ``BF16`` and the 8-bit floats, the usual dtypes of trained weights. This reader:

* checks the header before any tensor is read: its length within the file, valid UTF-8 JSON nested at most
  :data:`~ag_attention._bounded.MAX_JSON_DEPTH` deep (a clear error, never Python's ``RecursionError``), no key
  twice in any object (a tensor named twice is refused: readers that keep the first and readers that keep the last
  would load different weights), each dtype known, each shape a list of non-negative integers, each tensor's bytes
  exactly ``prod(shape) * itemsize``; the tensors' byte ranges, sorted, must tile the data exactly, as the reference
  library requires: no overlap (two tensors sharing bytes), no hole, nothing after the last; the total within
  ``max_bytes``; every failure an :class:`InvalidArgumentError` naming the file and the tensor (its name escaped:
  :func:`~ag_attention._bounded.shown_name`);
* decodes every float dtype to the exact value it stands for: ``F64``, ``F32``, ``F16`` as NumPy reads them;
  ``BF16`` as the top half of a float32 (exact: bfloat16 is float32 with its last 16 mantissa bits dropped);
  ``F8_E4M3`` (the ``fn`` variant: no infinity, ``S.1111.111`` is NaN, bias 7) and ``F8_E5M2`` (IEEE-like, bias
  15) through a table of their 256 values as float32 (exact: every 8-bit float is a float32); integers as they are;
  NaN and infinity are then refused by name where the weights are converted;
* returns the ``__metadata__`` (e.g. ``{"tokens": "4"}``).

The reference library (0.8) also refuses overlaps, holes and trailing bytes, and a field given twice in a tensor's
entry or ``__metadata__`` given twice; it accepts a tensor name given twice (the last wins) when the offsets
still tile the data, which this reader refuses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._bounded import loads_json, shown_name
from .._errors import InvalidArgumentError

__all__ = ["DTYPES", "read_safetensors", "write_safetensors", "fp8_table", "shown_name", "loads_json"]

#: dtype name -> (NumPy dtype of the raw bytes, bytes per entry)
DTYPES: dict[str, tuple[str, int]] = {
    "F64": ("<f8", 8),
    "F32": ("<f4", 4),
    "F16": ("<f2", 2),
    "BF16": ("<u2", 2),
    "F8_E4M3": ("u1", 1),
    "F8_E5M2": ("u1", 1),
    "I64": ("<i8", 8),
    "I32": ("<i4", 4),
    "I16": ("<i2", 2),
    "I8": ("i1", 1),
    "U64": ("<u8", 8),
    "U32": ("<u4", 4),
    "U16": ("<u2", 2),
    "U8": ("u1", 1),
}
#: a header longer than this is refused (the format's own reference implementation caps it at 100 MB)
MAX_HEADER = 100_000_000


def fp8_table(kind: str) -> np.ndarray:
    """The 256 values of an 8-bit float format as float32 (index: the byte), exactly."""
    exp_bits, bias = (4, 7) if kind == "F8_E4M3" else (5, 15)
    man_bits = 7 - exp_bits
    out = np.empty(256, dtype=np.float32)
    for byte in range(256):
        sign = -1.0 if byte & 0x80 else 1.0
        e = (byte >> man_bits) & ((1 << exp_bits) - 1)
        m = byte & ((1 << man_bits) - 1)
        if kind == "F8_E4M3" and e == 15 and m == 7:
            value = float("nan")
        elif kind == "F8_E5M2" and e == 31:
            value = float("inf") if m == 0 else float("nan")
        elif e == 0:
            value = m / (1 << man_bits) * 2.0 ** (1 - bias)
        else:
            value = (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        out[byte] = sign * value
    return out


def _decode(raw: bytes, dtype: str, shape: list[int]) -> np.ndarray:
    code, _ = DTYPES[dtype]
    data = np.frombuffer(raw, dtype=code)
    if dtype == "BF16":
        data = (data.astype("<u4") << 16).view("<f4")
    elif dtype in ("F8_E4M3", "F8_E5M2"):
        data = fp8_table(dtype)[data]
    return data.reshape(shape)


def _cut(value: object) -> str:
    """A header value in a message: its ``repr``, cut after 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text):,} characters)"


def _check_tiling(where: str, plan: list[tuple[str, str, list[int], int, int]], body: int) -> None:
    """The tensors' byte ranges, sorted, cover ``[0, body)`` exactly: no overlap, no hole, nothing after the last
    (the reference library's rule: another reader would otherwise see other weights in the same bytes)."""
    at, before = 0, ""  # the end of the bytes covered so far, and the tensor they end with
    for name, _, _, begin, end in sorted(plan, key=lambda p: (p[3], p[4])):
        if begin < at:
            raise InvalidArgumentError(
                f"{where}: tensor {shown_name(name)} (bytes {begin:,}..{end:,}) overlaps "
                f"tensor {before}: two tensors may not share bytes"
            )
        if begin > at:
            raise InvalidArgumentError(
                f"{where}: bytes {at:,}..{begin:,} of the data belong to no tensor (a hole "
                f"before tensor {shown_name(name)}): the offsets must tile the data"
            )
        at, before = end, f"{shown_name(name)} (bytes {begin:,}..{end:,})"
    if at != body:
        raise InvalidArgumentError(
            f"{where}: bytes {at:,}..{body:,} of the data belong to no tensor (after the "
            "last one): the offsets must cover the data exactly"
        )


def read_safetensors(path: Path, max_bytes: int) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The tensors and the ``__metadata__`` of a ``.safetensors`` file (see the module docstring)."""
    where = str(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(8)
        if len(head) < 8:
            raise InvalidArgumentError(f"{where}: not a .safetensors file ({size} bytes: no header length)")
        n = int.from_bytes(head, "little")
        if n > size - 8 or n > MAX_HEADER:
            raise InvalidArgumentError(
                f"{where}: not a .safetensors file (its header claims {n:,} bytes, the file "
                f"has {size - 8:,} after the length)"
            )
        header = loads_json(f.read(n), f"{where}: not a .safetensors file (its header)")
        if not isinstance(header, dict):
            raise InvalidArgumentError(f"{where}: not a .safetensors file (its header is not a JSON object)")
        metadata = header.pop("__metadata__", None) or {}
        if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
        ):
            raise InvalidArgumentError(f"{where}: its __metadata__ must map strings to strings")
        body = size - 8 - n
        plan: list[tuple[str, str, list[int], int, int]] = []
        total = 0
        for name, info in header.items():
            shown = shown_name(name)
            if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
                raise InvalidArgumentError(f"{where}: tensor {shown}: a dtype, a shape and data_offsets are expected")
            dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
            if dtype not in DTYPES:
                raise InvalidArgumentError(
                    f"{where}: tensor {shown} has dtype {_cut(dtype)}; read here: " + ", ".join(DTYPES)
                )
            if not isinstance(shape, list) or not all(
                isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in shape
            ):
                raise InvalidArgumentError(f"{where}: tensor {shown}: shape {_cut(shape)} is not a list of sizes")
            if (
                not isinstance(offsets, list)
                or len(offsets) != 2
                or not all(isinstance(k, int) and not isinstance(k, bool) for k in offsets)
            ):
                raise InvalidArgumentError(
                    f"{where}: tensor {shown}: data_offsets {_cut(offsets)} are not two integers"
                )
            begin, end = offsets
            need = int(np.prod(shape, dtype=object)) * DTYPES[dtype][1]
            if not 0 <= begin <= end <= body or end - begin != need:
                raise InvalidArgumentError(
                    f"{where}: tensor {shown} ({dtype} {_cut(shape)}) declares bytes "
                    f"{_cut(begin)}..{_cut(end)} of {body:,}: it needs {need:,} bytes inside "
                    "the file (truncated or corrupt)"
                )
            total += need * (4 if dtype in ("BF16", "F8_E4M3", "F8_E5M2") else 1)  # decoded to float32
            if total > max_bytes:
                raise InvalidArgumentError(f"{where}: its tensors would take more than {max_bytes:,} bytes in memory")
            plan.append((name, dtype, shape, begin, end))
        _check_tiling(where, plan, body)
        out: dict[str, np.ndarray] = {}
        for name, dtype, shape, begin, end in plan:
            f.seek(8 + n + begin)
            raw = f.read(end - begin)
            if len(raw) != end - begin:  # the file changed under us
                raise InvalidArgumentError(f"{where}: tensor {shown_name(name)}: the file ends before its bytes")
            out[name] = _decode(raw, dtype, shape)
    return out, dict(metadata)


def write_safetensors(
    path: Path, tensors: dict[str, tuple[str, np.ndarray]], metadata: dict[str, str] | None = None
) -> None:
    """Write raw tensors ``name -> (dtype, array of the raw dtype)`` (e.g. ``("BF16", uint16 array)``): for tests
    and for saving in the dtypes NumPy has no type for. Written atomically (a temporary file, then a rename)."""
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    blobs = []
    offset = 0
    for name, (dtype, arr) in tensors.items():
        code, _ = DTYPES[dtype]
        raw = np.ascontiguousarray(arr, dtype=code).tobytes()
        header[name] = {"dtype": dtype, "shape": list(np.shape(arr)), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    tmp = Path(path).with_name(f".{Path(path).name}.tmp{os.getpid()}")
    with open(tmp, "xb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
    os.replace(tmp, path)
