"""Where a sweep's rows live: an append-only journal while it runs, ``results.parquet`` after.

Files in the output directory ``DIR``:

``journal.jsonl``
    One JSON object per finished row, appended with a single ``write`` as
    soon as the row reaches the parent process (so killing the process, even
    with SIGKILL, loses no row it had received), and ``fsync``'ed by the
    first write at least :data:`FSYNC_SECONDS` after the previous ``fsync``,
    and at the end (so an operating-system crash or power loss loses only
    the rows written since the last ``fsync``).  A torn last line (a crash
    inside a write) is dropped when the journal is read again.
``results.parquet``
    The compaction: one row per architecture (the last successful row of
    each key; an errored row only where no successful one exists), in grid
    order, written to a temporary file, ``fsync``'ed and renamed over the old
    one.  Its schema metadata holds ``ag_attention._provenance`` (the
    :func:`ag_attention._provenance` of the run that wrote it),
    ``ag_attention._sweep`` (grid, prime, seed), as JSON, and ``pandas``
    (integer columns that may be null read as ``Int64`` in pandas, never as
    float64).  After a successful
    compaction the journal is removed; a crash in between leaves both, and the
    next read merges them without duplicates.
``sweep.json``
    The settings the rows were computed with (prime, seed, grid): ``--resume``
    with other settings is refused rather than mixing rows.
``.lock``
    Held (``flock``) while a sweep writes here: a second sweep into the same
    directory is refused instead of interleaving rows.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .._errors import InvalidArgumentError
from .compute import COLUMNS
from .grid import Spec

__all__ = [
    "Store",
    "arrow_schema",
    "read_rows",
    "read_metadata",
    "RESULTS",
    "JOURNAL",
    "MANIFEST",
    "FSYNC_SECONDS",
    "OUTPUT_FILES",
    "require",
]

RESULTS = "results.parquet"
JOURNAL = "journal.jsonl"
MANIFEST = "sweep.json"
LOCK = ".lock"
#: every file a sweep writes in its directory (``overwrite`` removes these and nothing else)
OUTPUT_FILES = (RESULTS, JOURNAL, MANIFEST, "summary.md", "summary.json", "dimension-vs-formula.png",
                "dimension-vs-formula.svg")
#: seconds between two fsyncs of the journal (the first write after this long syncs it)
FSYNC_SECONDS = 1.0
#: metadata keys of results.parquet
PROVENANCE_KEY = b"ag_attention._provenance"
SWEEP_KEY = b"ag_attention._sweep"
PANDAS_KEY = b"pandas"


def require(module: str) -> Any:
    """Import an optional dependency of sweeps, or an error saying how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise InvalidArgumentError(
            f"sweeps need {top}: pip install 'ag-attention[sweep]' (or pip install {top})"
        ) from None


def arrow_schema(metadata: Mapping[bytes, bytes] | None = None) -> Any:
    """The Arrow schema of :data:`ag_attention._sweep.compute.COLUMNS` (with ``metadata`` and pandas' dtypes)."""
    pa = require("pyarrow")
    types = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "string": pa.string(),
             "list<int64>": pa.list_(pa.int64()), "list<string>": pa.list_(pa.string())}
    fields = [pa.field(name, types[kind.rstrip("?")], nullable=kind.endswith("?")) for name, kind in COLUMNS]
    meta = {PANDAS_KEY: _pandas_metadata(pa.__version__), **(dict(metadata) if metadata else {})}
    return pa.schema(fields, metadata=meta)


def _pandas_metadata(pyarrow_version: str) -> bytes:
    """pandas' schema metadata: integer columns that may be null read as ``Int64``, booleans as ``boolean``.

    Without it pandas reads an integer column with a null (``prime`` of a softmax row) as float64.
    """
    dtypes = {"int64": "int64", "int64?": "Int64", "float64": "float64", "float64?": "float64", "bool": "bool",
              "bool?": "boolean", "string": "object", "string?": "object"}
    pandas_types = {"int64": "int64", "float64": "float64", "bool": "bool", "string": "unicode",
                    "list<int64>": "list[int64]", "list<string>": "list[unicode]"}
    columns = [{"name": name, "field_name": name, "pandas_type": pandas_types[kind.rstrip("?")],
                "numpy_type": dtypes.get(kind, "object"), "metadata": None} for name, kind in COLUMNS]
    return json.dumps({"index_columns": [], "column_indexes": [], "columns": columns,
                       "creator": {"library": "pyarrow", "version": pyarrow_version}}).encode()


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


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


def _read_journal(path: Path, *, repair: bool) -> list[dict[str, Any]]:
    """The journal's rows; a torn last line is dropped (and cut off the file when ``repair``)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise InvalidArgumentError(f"{str(path)!r}: cannot be read: {exc.strerror or exc}") from None
    end = data.rfind(b"\n") + 1  # everything after the last newline is a torn write
    if end < len(data) and repair:
        with open(path, "r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
    rows = []
    for number, line in enumerate(data[:end].splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InvalidArgumentError(f"{str(path)!r}: line {number} is not a JSON row ({exc}); "
                                       "move the file away to start over") from None
        if not isinstance(row, dict):
            raise InvalidArgumentError(f"{str(path)!r}: line {number} is not a JSON object")
        rows.append(row)
    return rows


def merge(rows: Iterable[Mapping[str, Any]]) -> dict[Spec, dict[str, Any]]:
    """One row per key: the last successful one, else the last errored one."""
    out: dict[Spec, dict[str, Any]] = {}
    for row in rows:
        key = Spec.from_row(row)
        old = out.get(key)
        if old is None or row.get("error") is None or old.get("error") is not None:
            out[key] = dict(row)
    return out


class Store:
    """The rows of one output directory: what is finished, the journal to append to, the compaction."""

    def __init__(self, out: str | os.PathLike[str], settings: Mapping[str, Any], *, resume: bool = False,
                 overwrite: bool = False) -> None:
        self.dir = Path(out)
        self.settings = dict(settings)
        self.resume = resume
        self.overwrite = overwrite
        self._fd: int | None = None
        self._lock_fd: int | None = None
        self._last_sync = 0.0
        self._dirty = False
        #: rows found at opening (from results.parquet and the journal), by key
        self.previous: dict[Spec, dict[str, Any]] = {}

    @property
    def results(self) -> Path:
        return self.dir / RESULTS

    @property
    def journal(self) -> Path:
        return self.dir / JOURNAL

    # ------------------------------------------------------------- opening
    def open(self) -> Store:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidArgumentError(f"--out {str(self.dir)!r}: cannot create the directory: {exc.strerror or exc}") from None
        if not self.dir.is_dir():
            raise InvalidArgumentError(f"--out {str(self.dir)!r}: not a directory")
        self._lock()
        try:
            self._prepare()
            self._fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            _fsync_dir(self.dir)
        except BaseException:
            self.close()
            raise
        return self

    def __enter__(self) -> Store:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return
        try:
            fd = os.open(self.dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise InvalidArgumentError(f"--out {str(self.dir)!r}: cannot write there: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InvalidArgumentError(
                f"--out {str(self.dir)!r}: another sweep is writing to this directory (its lock is held)"
            ) from None
        self._lock_fd = fd

    def _prepare(self) -> None:
        manifest = self.dir / MANIFEST
        existing = self.results.exists() or (self.journal.exists() and self.journal.stat().st_size > 0)
        if self.overwrite:
            for name in OUTPUT_FILES:
                with contextlib.suppress(FileNotFoundError):
                    (self.dir / name).unlink()
        elif existing and not self.resume:
            raise InvalidArgumentError(
                f"--out {str(self.dir)!r} already holds results of a sweep: pass --resume to complete them, "
                "--overwrite to start over, or choose another directory"
            )
        elif existing and manifest.exists():
            try:
                old = json.loads(manifest.read_text())
            except (OSError, ValueError):
                old = {}
            for key in ("prime", "seed"):
                if key in old and old[key] != self.settings.get(key):
                    raise InvalidArgumentError(
                        f"--resume with {key}={self.settings.get(key)!r}: the rows in {str(self.dir)!r} were computed "
                        f"with {key}={old[key]!r}; use the same {key} (or --overwrite)"
                    )
        if self.resume and not self.overwrite:
            rows: list[dict[str, Any]] = []
            if self.results.exists():
                rows.extend(read_rows(self.results))
            rows.extend(_read_journal(self.journal, repair=True))
            self.previous = merge(rows)
        tmp = manifest.with_name(MANIFEST + ".tmp")
        tmp.write_text(json.dumps(self.settings, indent=2) + "\n")
        os.replace(tmp, manifest)

    # ------------------------------------------------------------- writing
    def finished(self) -> set[Spec]:
        """Keys with a successful row already (``--resume`` skips them)."""
        return {k for k, row in self.previous.items() if row.get("error") is None}

    def append(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Append rows to the journal: one write per call, an fsync at most every FSYNC_SECONDS."""
        if self._fd is None:
            raise InvalidArgumentError("the store is not open")
        data = b"".join(json.dumps(row, separators=(",", ":"), allow_nan=False).encode() + b"\n" for row in rows)
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        self._dirty = True
        now = time.monotonic()
        if now - self._last_sync >= FSYNC_SECONDS:
            self.sync()

    def sync(self) -> None:
        if self._fd is not None and self._dirty:
            os.fsync(self._fd)
            self._dirty = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if self._fd is not None:
            try:
                self.sync()
            finally:
                os.close(self._fd)
                self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    # ------------------------------------------------------------- compaction
    def rows(self) -> dict[Spec, dict[str, Any]]:
        """Every row stored so far (results.parquet and the journal), one per key."""
        rows: list[dict[str, Any]] = []
        if self.results.exists():
            rows.extend(read_rows(self.results))
        rows.extend(_read_journal(self.journal, repair=False))
        return merge(rows)

    def compact(self, order: Iterable[Spec], metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Write results.parquet (grid order, then rows of other grids), remove the journal; the rows."""
        pa = require("pyarrow")
        pq = require("pyarrow.parquet")
        self.sync()
        by_key = self.rows()
        ordered: list[dict[str, Any]] = []
        for spec in order:
            row = by_key.pop(spec, None)
            if row is not None:
                ordered.append(row)
        ordered.extend(by_key.values())  # rows of an earlier grid in this directory are kept, after
        meta = {PROVENANCE_KEY: json.dumps(metadata.get("provenance")).encode(),
                SWEEP_KEY: json.dumps({k: v for k, v in metadata.items() if k != "provenance"}).encode()}
        schema = arrow_schema(meta)
        names = [name for name, _ in COLUMNS]
        table = pa.Table.from_pylist([{n: row.get(n) for n in names} for row in ordered], schema=schema)
        tmp = self.results.with_name(RESULTS + ".tmp")
        pq.write_table(table, tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, self.results)
        _fsync_dir(self.dir)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        with contextlib.suppress(FileNotFoundError):
            self.journal.unlink()
        _fsync_dir(self.dir)
        return ordered

