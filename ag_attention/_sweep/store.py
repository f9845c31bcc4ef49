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
``journal.rejected``
    Lines of the journal that are not valid rows (garbled bytes, not JSON,
    not an object, a missing column, a value of the wrong type, a key that
    is no architecture), set aside when the journal is read (``--resume``)
    instead of refusing the whole journal: one JSON object per line with the
    ``source`` file, its ``line`` number, the ``reason`` and the line's
    ``text``; a :class:`JournalWarning` names them.  Every valid row is kept.
``results.parquet``
    The compaction: one row per architecture of the grid (the last
    successful row of each key; an errored row only where no successful one
    exists), in grid order, written atomically (``ag_attention._files``).
    Its schema metadata holds ``ag_attention._provenance`` (the
    :func:`ag_attention._provenance` of the run that wrote it),
    ``ag_attention._sweep`` (grid, prime, seed) as JSON, and ``pandas``
    (integer columns that may be null read as ``Int64`` in pandas, never as
    float64).  After a successful compaction the journal is removed; a crash
    in between leaves both, and the next read merges them without duplicates.
``sweep.json``
    The settings the rows were computed with (prime, seed, grid, the grid's
    size and fingerprint): ``--resume`` with another prime, seed or grid is
    refused rather than mixing rows.
``.lock``
    Held (``flock``) while a sweep writes here: a second sweep into the same
    directory is refused instead of interleaving rows.

Every file is written through ``ag_attention._files``: whole files
atomically (an unpredictable temporary created with ``O_EXCL | O_NOFOLLOW``,
renamed over the target), the journal and the lock opened with
``O_NOFOLLOW`` and refused unless they are regular files, so a symbolic link
planted in ``DIR`` is never written (or read) through.  A failed write (a full
disk) is an :class:`~ag_attention._errors.OutputError` naming the file (exit
4); the rows finished so far stay in the journal, and ``--resume`` completes
the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._errors import InvalidArgumentError, OutputError
from .._files import atomic_open, atomic_write, fsync_directory, output_error
from .._progress import bar
from .compute import COLUMNS
from .grid import Spec, brief
from .rows import (  # read_metadata, read_rows, row_problem, require: re-exported (imported from here)
    PROVENANCE_KEY,
    SWEEP_KEY,
    Rejected,
    arrow_schema,
    merge,
    open_regular,
    read_journal,
    read_metadata,
    read_regular,
    read_results,
    read_rows,
    require,
    row_problem,
)

__all__ = [
    "Store",
    "arrow_schema",
    "read_rows",
    "read_metadata",
    "row_problem",
    "grid_fingerprint",
    "JournalWarning",
    "RESULTS",
    "JOURNAL",
    "REJECTED",
    "MANIFEST",
    "FSYNC_SECONDS",
    "OUTPUT_FILES",
    "require",
]

RESULTS = "results.parquet"
JOURNAL = "journal.jsonl"
REJECTED = "journal.rejected"
MANIFEST = "sweep.json"
LOCK = ".lock"
#: every file a sweep writes in its directory (``overwrite`` removes these and nothing else)
OUTPUT_FILES = (
    RESULTS,
    JOURNAL,
    REJECTED,
    MANIFEST,
    "summary.md",
    "summary.json",
    "dimension-vs-formula.png",
    "dimension-vs-formula.svg",
)
#: seconds between two fsyncs of the journal (the first write after this long syncs it)
FSYNC_SECONDS = 1.0
#: the largest sweep.json read (it holds a few settings)
_MAX_MANIFEST = 1 << 20
#: rejected lines named one by one in a JournalWarning (the others counted)
_NAMED = 3
#: what ``--resume`` adds to an error that stopped a run
RESUME_HINT = "the rows finished so far are kept in {journal}: once the problem is fixed, --resume completes the run"


class JournalWarning(UserWarning):
    """Lines of a journal (or rows of results.parquet) that are not valid rows were set aside."""


def grid_fingerprint(specs: Sequence[Spec]) -> str:
    """The architectures of a grid, as a string: equal for the same set in any order, different otherwise."""
    total = 0
    for s in specs:  # the repr of ints, bools and tuples is the same in every Python
        key = repr((s.widths, s.ranks, s.tokens, s.heads, s.skip, s.normalized, s.causal)).encode()
        total = (total + int.from_bytes(hashlib.blake2b(key, digest_size=16).digest(), "big")) % 2**128
    return f"{len(specs)}:{total:032x}"


class Store:
    """The rows of one output directory: what is finished, the journal to append to, the compaction.

    ``grid`` is the sweep's architectures: ``--resume`` is refused when the rows in ``out`` were computed for
    another grid, and results.parquet only ever holds rows of ``grid``.
    """

    def __init__(
        self,
        out: str | os.PathLike[str],
        settings: Mapping[str, Any],
        *,
        grid: Sequence[Spec] = (),
        resume: bool = False,
        overwrite: bool = False,
    ) -> None:
        self.dir = Path(out)
        self.grid = tuple(grid)
        self.settings = {
            **settings,
            "grid_architectures": len(self.grid),
            "grid_fingerprint": grid_fingerprint(self.grid),
        }
        self.resume = resume
        self.overwrite = overwrite
        self._fd: int | None = None
        self._lock_fd: int | None = None
        self._last_sync = 0.0
        self._dirty = False
        #: rows found at opening (from results.parquet and the journal), by key
        self.previous: dict[Spec, dict[str, Any]] = {}
        #: lines or rows set aside into journal.rejected by this store
        self.rejected = 0

    @property
    def results(self) -> Path:
        return self.dir / RESULTS

    @property
    def journal(self) -> Path:
        return self.dir / JOURNAL

    def hint(self) -> str:
        """What the error that stops a run adds: the rows are kept, ``--resume`` completes it."""
        return RESUME_HINT.format(journal=self.journal)

    # ------------------------------------------------------------- opening
    def open(self) -> Store:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(
                f"--out {str(self.dir)!r}: cannot create the directory: {exc.strerror or exc}",
                path=str(self.dir),
                errno=exc.errno,
            ) from None
        if not self.dir.is_dir():
            raise InvalidArgumentError(f"--out {str(self.dir)!r}: not a directory")
        self._lock()
        try:
            self._prepare()
            self._fd = open_regular(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            fsync_directory(self.dir)
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
        fd = open_regular(self.dir / LOCK, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InvalidArgumentError(
                f"--out {str(self.dir)!r}: another sweep is writing to this directory (its lock is held)"
            ) from None
        self._lock_fd = fd

    def _holds_rows(self) -> bool:
        """Whether results.parquet or a non-empty journal is there; anything but a regular file there is an error."""
        found = False
        for path in (self.results, self.journal):
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(st.st_mode):
                kind = "a symbolic link (not followed)" if stat.S_ISLNK(st.st_mode) else "not a regular file"
                raise OutputError(f"cannot use {path}: it is {kind}: remove it, or pass --overwrite", path=str(path))
            found = found or path == self.results or st.st_size > 0
        return found

    def _prepare(self) -> None:
        existing = False if self.overwrite else self._holds_rows()
        if self.overwrite:
            for name in OUTPUT_FILES:  # a link planted at one of these names is removed, not followed
                try:
                    (self.dir / name).unlink()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise output_error(self.dir / name, exc, "remove") from None
        elif existing and not self.resume:
            raise InvalidArgumentError(
                f"--out {str(self.dir)!r} already holds results of a sweep: pass --resume to complete them, "
                "--overwrite to start over, or choose another directory"
            )
        if self.resume and not self.overwrite:
            self._load(existing)
        atomic_write(self.dir / MANIFEST, json.dumps(self.settings, indent=2) + "\n")

    def _manifest(self) -> dict[str, Any]:
        """The settings of the run that wrote here (``{}`` if none or unreadable)."""
        try:
            data = read_regular(self.dir / MANIFEST, _MAX_MANIFEST)
            old = json.loads(data) if data is not None else {}
        except (OutputError, ValueError, RecursionError):
            return {}
        return old if isinstance(old, dict) else {}

    def _load(self, existing: bool) -> None:
        """Resuming: check the settings and the grid, read the rows, set aside the invalid ones."""
        old = self._manifest() if existing else {}
        for key in ("prime", "seed"):
            if key in old and old[key] != self.settings.get(key):
                raise InvalidArgumentError(
                    f"--resume with {key}={self.settings.get(key)!r}: the rows in {str(self.dir)!r} were computed "
                    f"with {key}={old[key]!r}; use the same {key} (or --overwrite)"
                )
        with bar(desc="sweep: reading the stored rows", unit="row") as progress:
            stored = read_results(self.results, progress)
            rows, rejected = stored if stored is not None else ([], [])
            journal_rows, lines, journal_rejected = read_journal(self.journal, repair=True, progress=progress)
        previous = merge(rows + journal_rows)
        self._check_grid(old, previous)
        if rejected or journal_rejected:
            self._set_aside(rejected + journal_rejected, kept=len(rows) + len(journal_rows))
            if journal_rejected:  # the journal keeps its valid lines only
                atomic_write(self.journal, b"".join(lines))
        self.previous = previous

    def _check_grid(self, old: Mapping[str, Any], previous: Mapping[Spec, Any]) -> None:
        """Refuse to resume rows of another grid (the manifest's fingerprint, or a stored row not in the grid)."""
        in_grid = set(self.grid)
        foreign = sum(1 for key in previous if key not in in_grid)
        other = old.get("grid_fingerprint") not in (None, self.settings["grid_fingerprint"])
        if not (foreign or other):
            return
        here = f"{self.settings.get('grid') or 'the grid'} ({len(self.grid):,} architectures)"
        size = old.get("grid_architectures")
        there = (
            f"{old.get('grid') or 'another grid'} ({size:,} architectures)"
            if isinstance(size, int)
            else f"another grid ({foreign:,} of its {len(previous):,} rows are not in this one)"
        )
        raise InvalidArgumentError(
            f"--resume with {here}: the rows in {str(self.dir)!r} were computed for {there}; resuming would mix "
            "two grids in one table: pass --overwrite to start over with this grid, or choose another --out "
            "(the rows there are kept)"
        )

    def _set_aside(self, rejected: list[Rejected], *, kept: int) -> None:
        """Append ``rejected`` to journal.rejected and say so in a JournalWarning."""
        path = self.dir / REJECTED
        before = read_regular(path) or b""
        atomic_write(path, before + b"".join(r.to_json() for r in rejected))
        self.rejected += len(rejected)
        named = "; ".join(f"{Path(r.source).name} line {r.line}: {brief(r.reason, 120)}" for r in rejected[:_NAMED])
        more = f"; and {len(rejected) - _NAMED:,} more" if len(rejected) > _NAMED else ""
        lines = "line of {} is not a valid row" if len(rejected) == 1 else "lines of {} are not valid rows"
        warnings.warn(
            f"{len(rejected):,} {lines.format(self.dir)} ({named}{more}): moved to {path}; "
            f"the {kept:,} valid rows are kept",
            JournalWarning,
            stacklevel=2,
        )

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
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
        except OSError as exc:
            raise self._failed(exc) from None
        self._dirty = True
        now = time.monotonic()
        if now - self._last_sync >= FSYNC_SECONDS:
            self.sync()

    def _failed(self, exc: OSError) -> OutputError:
        error = output_error(self.journal, exc)
        return OutputError(f"{error}; {self.hint()}", path=error.path, errno=error.errno)

    def sync(self) -> None:
        if self._fd is not None and self._dirty:
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise self._failed(exc) from None
            self._dirty = False
        self._last_sync = time.monotonic()

    def close(self) -> None:
        """Sync and close the journal, release the lock (an error syncing is raised after both are closed)."""
        error: OutputError | None = None
        if self._fd is not None:
            try:
                self.sync()
            except OutputError as exc:
                error = exc
            finally:
                os.close(self._fd)
                self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None
        if error is not None:
            raise error

    # ------------------------------------------------------------- compaction
    def rows(self) -> dict[Spec, dict[str, Any]]:
        """Every valid row stored so far (results.parquet and the journal), one per key."""
        return self._stored()[0]

    def _stored(self, progress: Any = None) -> tuple[dict[Spec, dict[str, Any]], list[Rejected]]:
        stored = read_results(self.results, progress)
        rows, rejected = stored if stored is not None else ([], [])
        journal_rows, _, journal_rejected = read_journal(self.journal, repair=False, progress=progress)
        return merge(rows + journal_rows), rejected + journal_rejected

    def compact(self, order: Iterable[Spec], metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Write results.parquet (the grid's rows, in its order), remove the journal; the rows.

        A stored row of no architecture of ``order`` (only a hand-edited journal has one) is set aside into
        journal.rejected rather than mixed into the table.
        """
        with bar(desc="sweep: writing results.parquet", unit="row") as progress:  # shown after 2 s on a terminal
            return self._compact(order, metadata, progress)

    def _compact(self, order: Iterable[Spec], metadata: Mapping[str, Any], progress: Any) -> list[dict[str, Any]]:
        pa = require("pyarrow")
        pq = require("pyarrow.parquet")
        self.sync()
        by_key, rejected = self._stored(progress)  # a step per row read, then per row written
        progress.total = (progress.total or 0) + len(by_key)
        ordered: list[dict[str, Any]] = []
        for spec in order:
            row = by_key.pop(spec, None)
            if row is not None:
                ordered.append(row)
        rejected += [
            Rejected(str(self.journal), 0, "not an architecture of the grid", json.dumps(row))
            for row in by_key.values()
        ]
        if rejected:
            self._set_aside(rejected, kept=len(ordered))
        meta = {
            PROVENANCE_KEY: json.dumps(metadata.get("provenance")).encode(),
            SWEEP_KEY: json.dumps({k: v for k, v in metadata.items() if k != "provenance"}).encode(),
        }
        schema = arrow_schema(meta)
        names = [name for name, _ in COLUMNS]
        table = pa.Table.from_pylist([{n: row.get(n) for n in names} for row in ordered], schema=schema)
        progress.update(len(ordered) // 2)  # the table is built
        try:
            with atomic_open(self.results, "wb") as fh:
                pq.write_table(table, fh)
            progress.update(len(ordered) - len(ordered) // 2)
        except OutputError as exc:
            raise OutputError(f"{exc}; {self.hint()}", path=exc.path, errno=exc.errno) from None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        try:
            self.journal.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise output_error(self.journal, exc, "remove") from None
        fsync_directory(self.dir)
        return ordered
