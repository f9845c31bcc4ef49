"""Reading what a file claims to be, within bounds fixed before it is read.

Every loader of data the package did not just write itself (safetensors headers, ``config.json``, golden files
shipped with the package, their manifest) reads through these, so that a damaged or hostile file costs at most
the bound and ends in an :class:`~ag_attention.InvalidArgumentError` naming the file and the bound, never a
``MemoryError``, a ``RecursionError`` or a hang:

* :func:`read_bounded` reads at most ``limit`` bytes of a file (one more, to tell that it is longer);
* :func:`gunzip_bounded` decompresses gzip data to at most ``limit`` bytes (a 1 MB "gzip bomb" that would expand
  to gigabytes stops at the limit), one member only, nothing after it;
* :func:`loads_json` parses UTF-8 JSON nested at most :data:`MAX_JSON_DEPTH` deep (counted before parsing), no key
  twice in an object, no ``NaN``/``Infinity``;
* :func:`shown_name` prints a name taken from a file so that it can never add a line or pass for report text.
"""

from __future__ import annotations

import json
import re
import zlib
from typing import IO, Any, Literal, Protocol

import numpy as np

from ._errors import InvalidArgumentError

__all__ = ["MAX_JSON_DEPTH", "json_nesting", "loads_json", "shown_name", "read_bounded", "gunzip_bounded"]

#: JSON nested deeper than this is refused before it is parsed (a safetensors header needs 3 levels, a golden file 6)
MAX_JSON_DEPTH = 64

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.:/@+\-\[\]]{1,200}")
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


class _Readable(Protocol):
    def open(self, mode: Literal["rb"]) -> IO[bytes]: ...


def shown_name(name: object) -> str:
    """A name as messages and reports print it: as it is when it is plain (letters, digits, ``._-:/@+[]``), else
    quoted with every control and non-printable character escaped (``repr``), and cut after 160 characters: a name
    can never add a line, move the cursor or pass for text of the report."""
    text = str(name)
    if _PLAIN_NAME.fullmatch(text):
        return text
    if len(text) > 200:
        return f"{text[:160]!r}... ({len(text):,} characters)"
    return repr(text)


def json_nesting(raw: bytes, limit: int) -> int:
    """How deep arrays and objects nest in the JSON text ``raw`` (strings skipped), counted up to past ``limit``
    in chunks (a text of ``[[[[...`` costs a few megabytes, not a Python stack)."""
    brackets = _NOT_BRACKET.sub(b"", _JSON_STRING.sub(b"", raw))
    depth = deepest = 0
    chunk = 1 << 20
    for start in range(0, len(brackets), chunk):
        part = np.frombuffer(brackets, np.uint8, count=min(chunk, len(brackets) - start), offset=start)
        levels = depth + np.cumsum(np.where((part == 0x5B) | (part == 0x7B), 1, -1), dtype=np.int64)
        deepest = max(deepest, int(levels.max()))
        depth = int(levels[-1])
        if deepest > limit:
            break
    return deepest


def _refuse_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


def loads_json(raw: bytes, where: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``raw`` (UTF-8 JSON) parsed strictly, or :class:`InvalidArgumentError` starting with ``where``: nested at
    most ``max_depth`` deep (checked before parsing), no key twice in an object, no ``NaN``/``Infinity``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgumentError(f"{where}: not UTF-8 ({exc})") from None
    depth = json_nesting(raw, max_depth)
    if depth > max_depth:
        raise InvalidArgumentError(f"{where}: JSON nested more than {max_depth} levels deep (refused unparsed)")

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise InvalidArgumentError(
                    f"{where}: the key {shown_name(key)} appears twice in one JSON object "
                    "(readers that keep the first and readers that keep the last would "
                    "disagree)"
                )
            out[key] = value
        return out

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=_refuse_constant)
    except RecursionError:  # pragma: no cover - the depth is checked first
        raise InvalidArgumentError(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, NaN, an integer of more than 4,300 digits
        if isinstance(exc, InvalidArgumentError):
            raise
        raise InvalidArgumentError(f"{where}: not JSON ({exc})") from None


def read_bounded(path: _Readable, limit: int, where: str | None = None) -> bytes:
    """The bytes of ``path`` (a :class:`~pathlib.Path` or an :mod:`importlib.resources` traversable), or
    :class:`InvalidArgumentError` when it holds more than ``limit`` bytes (at most ``limit + 1`` are read)."""
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise InvalidArgumentError(f"{where or path}: longer than {limit:,} bytes, the limit (refused unread)")
    return bytes(data)


def gunzip_bounded(data: bytes, limit: int, where: str) -> bytes:
    """The decompressed content of the gzip data ``data`` (one member, nothing after it), or
    :class:`InvalidArgumentError` starting with ``where`` when it is not gzip or would expand past ``limit`` bytes
    (decompression stops there: the rest is never produced)."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflate.decompress(data, limit + 1)
    except zlib.error as exc:
        raise InvalidArgumentError(f"{where}: not a gzip'd file ({exc})") from None
    if len(out) > limit:
        raise InvalidArgumentError(
            f"{where}: decompresses to more than {limit:,} bytes, the limit (stopped there: a damaged or crafted file)"
        )
    if not inflate.eof:
        raise InvalidArgumentError(f"{where}: not a gzip'd file (truncated: the compressed stream does not end)")
    if inflate.unused_data:
        raise InvalidArgumentError(
            f"{where}: {len(inflate.unused_data):,} bytes after the gzip member (one member expected)"
        )
    return out
