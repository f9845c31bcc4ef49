"""The rows a sweep stores, read back: their Parquet schema, what a valid row is, the journal and results.parquet.

:mod:`ag_attention._sweep.store` writes these files (its docstring describes each); this module reads them, never
through a symbolic link, and sets aside what is not a valid row (a :class:`Rejected` line) instead of refusing the
whole file.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import InvalidArgumentError, OutputError
from .._files import open_nofollow, output_error
from .._m2 import require
from .compute import COLUMNS, row_contradiction
from .grid import Spec, _show, brief, to_architecture

__all__ = [
    "PANDAS_KEY",
    "PROVENANCE_KEY",
    "SWEEP_KEY",
    "Rejected",
    "arrow_schema",
    "merge",
    "open_regular",
    "read_journal",
    "read_metadata",
    "read_regular",
    "read_results",
    "read_rows",
    "require",
    "row_problem",
]

#: metadata keys of results.parquet
PROVENANCE_KEY = b"ag_attention._provenance"
SWEEP_KEY = b"ag_attention._sweep"
PANDAS_KEY = b"pandas"


def arrow_schema(metadata: Mapping[bytes, bytes] | None = None) -> Any:
    """The Arrow schema of :data:`ag_attention._sweep.compute.COLUMNS` (with ``metadata`` and pandas' dtypes)."""
    pa = require("pyarrow")
    types = {
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "string": pa.string(),
        "list<int64>": pa.list_(pa.int64()),
        "list<string>": pa.list_(pa.string()),
    }
    fields = [pa.field(name, types[kind.rstrip("?")], nullable=kind.endswith("?")) for name, kind in COLUMNS]
    meta = {PANDAS_KEY: _pandas_metadata(pa.__version__), **(dict(metadata) if metadata else {})}
    return pa.schema(fields, metadata=meta)


def _pandas_metadata(pyarrow_version: str) -> bytes:
    """pandas' schema metadata: integer columns that may be null read as ``Int64``, booleans as ``boolean``.

    Without it pandas reads an integer column with a null (``prime`` of a softmax row) as float64.
    """
    dtypes = {
        "int64": "int64",
        "int64?": "Int64",
        "float64": "float64",
        "float64?": "float64",
        "bool": "bool",
        "bool?": "boolean",
        "string": "object",
        "string?": "object",
    }
    pandas_types = {
        "int64": "int64",
        "float64": "float64",
        "bool": "bool",
        "string": "unicode",
        "list<int64>": "list[int64]",
        "list<string>": "list[unicode]",
    }
    columns = [
        {
            "name": name,
            "field_name": name,
            "pandas_type": pandas_types[kind.rstrip("?")],
            "numpy_type": dtypes.get(kind, "object"),
            "metadata": None,
        }
        for name, kind in COLUMNS
    ]
    return json.dumps(
        {
            "index_columns": [],
            "column_indexes": [],
            "columns": columns,
            "creator": {"library": "pyarrow", "version": pyarrow_version},
        }
    ).encode()


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"provenance": ..., "sweep": ...}`` from a results.parquet's schema metadata."""
    pq = require("pyarrow.parquet")
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, ValueError) as exc:
        raise InvalidArgumentError(f"{str(path)!r}: not a readable Parquet file: {exc}") from None
    out: dict[str, Any] = {}
    for name, key in (("provenance", PROVENANCE_KEY), ("sweep", SWEEP_KEY)):
        out[name] = json.loads(meta[key]) if key in meta else None
    return out


def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a sweep's results.parquet, as dicts (the columns of ``COLUMNS``)."""
    pq = require("pyarrow.parquet")
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise InvalidArgumentError(f"{str(path)!r}: not a readable Parquet file: {exc}") from None
    if SWEEP_KEY not in (table.schema.metadata or {}):
        raise InvalidArgumentError(f"{str(path)!r}: not the results of an ag-attention sweep (no sweep metadata)")
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


# ------------------------------------------------------------------ valid rows
_INT64 = 2**63
_KINDS = {
    "int64": "an integer",
    "float64": "a number",
    "bool": "true or false",
    "string": "a string",
    "list<int64>": "a list of integers",
    "list<string>": "a list of strings",
}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -_INT64 <= value < _INT64


def _fits(value: object, kind: str) -> bool:
    if kind == "int64":
        return _is_int(value)
    if kind == "float64":
        return isinstance(value, float) or _is_int(value)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "list<int64>":
        return isinstance(value, list) and all(_is_int(v) for v in value)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)  # list<string>


def row_problem(row: object, *, types: bool = True) -> str | None:
    """Why ``row`` is not a valid row of a sweep (``None``: it is one).

    A valid row is an object with every column of ``COLUMNS``, each of its
    type (or null where the column may be), whose key is an architecture.
    ``types=False`` checks the key only (rows of a results.parquet whose
    schema already fixes the types).
    """
    if not isinstance(row, dict):
        return f"not a JSON object but {type(row).__name__}"
    for name, kind in COLUMNS:
        if name not in row:
            return f"no column {name!r}"
        if not types:
            continue
        value = row[name]
        if value is None:
            if not kind.endswith("?"):
                return f"{name}=null: must be {_KINDS[kind]}"
        elif not _fits(value, kind.rstrip("?")):
            return f"{name}={_show(value)}: must be {_KINDS[kind.rstrip('?')]}"
    try:
        to_architecture(Spec.from_row(row))
    except InvalidArgumentError as exc:
        return f"not an architecture: {exc}"
    except (TypeError, ValueError) as exc:  # a key column of another type (types=False)
        return f"not an architecture: {exc}"
    try:
        return row_contradiction(row)
    except (TypeError, ValueError, KeyError, InvalidArgumentError) as exc:  # values of another type (types=False)
        return f"not a row of this sweep: {type(exc).__name__}: {brief(exc, 120)}"


@dataclass(frozen=True)
class Rejected:
    """A line of a journal (or a row of results.parquet) that is not a valid row."""

    source: str
    line: int
    reason: str
    text: str

    def to_json(self) -> bytes:
        return (
            json.dumps({"source": self.source, "line": self.line, "reason": self.reason, "text": self.text}).encode()
            + b"\n"
        )


def _check_row(source: str, number: int, row: Any, text: Any, rejected: list[Rejected], types: bool = True) -> bool:
    """Whether ``row`` is valid; if not, it joins ``rejected`` (``text``: what to keep of it)."""
    problem = row_problem(row, types=types)
    if problem is None:
        return True
    rejected.append(Rejected(source, number, problem, text if isinstance(text, str) else _show(text)))
    return False


# ------------------------------------------------------------------ reading files, never through a link
def read_regular(path: Path, limit: int | None = None) -> bytes | None:
    """The bytes of ``path`` (``None`` if missing), opened without following a link; a regular file only."""
    try:
        fd = open_nofollow(path, os.O_RDONLY | os.O_NONBLOCK)
    except OutputError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise OutputError(str(exc).replace("cannot open", "cannot read", 1), path=exc.path, errno=exc.errno) from None
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            _require_regular(path, fd)
            if limit is not None and os.fstat(fd).st_size > limit:
                raise OutputError(f"cannot read {path}: larger than {limit:,} bytes", path=str(path))
            return fh.read()
    except OSError as exc:
        raise output_error(path, exc, "read") from None
    finally:
        os.close(fd)


def _require_regular(path: Path, fd: int) -> None:
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        raise OutputError(f"cannot use {path}: not a regular file (mode {stat.filemode(mode)})", path=str(path))


def open_regular(path: Path, flags: int) -> int:
    """``open_nofollow`` a regular file (a FIFO or device planted there is refused, never waited on)."""
    fd = open_nofollow(path, flags | os.O_NONBLOCK)
    try:
        _require_regular(path, fd)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_journal(
    path: Path, *, repair: bool, progress: Any = None
) -> tuple[list[dict[str, Any]], list[bytes], list[Rejected]]:
    """The journal's valid rows, their lines, and its invalid lines; a torn last line is dropped.

    With ``repair`` the torn last line (a crash inside a write) is cut off the file.  ``progress``: a bar
    advanced by one per line.
    """
    data = read_regular(path)
    if data is None:
        return [], [], []
    end = data.rfind(b"\n") + 1  # everything after the last newline is a torn write
    if end < len(data) and repair:
        fd = open_regular(path, os.O_RDWR)
        try:
            os.ftruncate(fd, end)
            os.fsync(fd)
        except OSError as exc:
            raise output_error(path, exc) from None
        finally:
            os.close(fd)
    rows: list[dict[str, Any]] = []
    lines: list[bytes] = []
    rejected: list[Rejected] = []
    every = _Ticks(progress, data.count(b"\n", 0, end))
    for number, line in enumerate(data[:end].split(b"\n")[:-1], 1):
        every.tick()
        if not line.strip():
            continue
        text = line.decode("utf-8", errors="backslashreplace")
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            rejected.append(Rejected(str(path), number, f"not a JSON row ({reason})", text))
            continue
        if _check_row(str(path), number, row, text, rejected):
            rows.append(row)
            lines.append(line + b"\n")
    every.done()
    return rows, lines, rejected


def read_results(path: Path, progress: Any = None) -> tuple[list[dict[str, Any]], list[Rejected]] | None:
    """The valid rows of results.parquet and its invalid ones (``None`` if there is none), never through a link.

    When its schema is the sweep's (names, types, no null where none may be), only the rows' keys are checked.
    """
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")
    data = read_regular(path)
    if data is None:
        return None
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (OSError, ValueError) as exc:
        raise InvalidArgumentError(
            f"{str(path)!r}: not a readable Parquet file: {exc}; move it away (or --overwrite)"
        ) from None
    if SWEEP_KEY not in (table.schema.metadata or {}):
        raise InvalidArgumentError(f"{str(path)!r}: not the results of an ag-attention sweep (no sweep metadata)")
    expected = arrow_schema()
    typed = [(f.name, f.type) for f in table.schema] == [(f.name, f.type) for f in expected] and all(
        table.column(f.name).null_count == 0 for f in expected if not f.nullable
    )
    rows: list[dict[str, Any]] = []
    rejected: list[Rejected] = []
    every = _Ticks(progress, table.num_rows)
    for number, row in enumerate(table.to_pylist(), 1):
        every.tick()
        if _check_row(str(path), number, row, json.dumps(row, default=str), rejected, types=not typed):
            rows.append(row)
    every.done()
    return rows, rejected


class _Ticks:
    """Advance ``bar`` (if any) by ``n`` steps in all, in batches (a bar's update per row would cost more)."""

    def __init__(self, bar: Any, n: int, batch: int = 1000) -> None:
        self.bar = bar
        self.batch = batch
        self.count = 0
        if bar is not None:
            bar.total = (bar.total or 0) + n

    def tick(self) -> None:
        self.count += 1
        if self.bar is not None and self.count % self.batch == 0:
            self.bar.update(self.batch)

    def done(self) -> None:
        """The steps not yet shown."""
        if self.bar is not None and self.count % self.batch:
            self.bar.update(self.count % self.batch)
        self.count = 0


def merge(rows: Iterable[Mapping[str, Any]]) -> dict[Spec, dict[str, Any]]:
    """One row per key: the last successful one, else the last errored one (``rows`` are valid rows)."""
    out: dict[Spec, dict[str, Any]] = {}
    for row in rows:
        key = Spec.from_row(row)
        old = out.get(key)
        if old is None or row.get("error") is None or old.get("error") is not None:
            out[key] = dict(row)
    return out
