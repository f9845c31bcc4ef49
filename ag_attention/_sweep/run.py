"""Run a sweep: every architecture of a grid, on this machine's cores or on a Dask cluster.

:func:`sweep` reads the grid (``ag_attention._sweep.grid``), skips the
rows already finished when resuming, sends the rest in small chunks to the
workers (largest networks first, so the last chunks are the quick ones),
appends every finished row to the journal as it arrives
(``ag_attention._sweep.store``), compacts the rows into
``results.parquet`` at the end (also after an error or Ctrl-C), and writes
the summary and plots (``ag_attention._sweep.summary``).

Where it runs:

* locally (the default, ``ag_attention._sweep.local``): a
  :class:`concurrent.futures.ProcessPoolExecutor` of ``workers`` processes
  (default: the cores this process may use), started with ``spawn``; each
  worker runs FLINT on one thread, ignores Ctrl-C (the parent stops them) and
  dies with its parent (Linux ``PR_SET_PDEATHSIG``), so a killed sweep leaves
  no worker behind;
* on a Dask cluster (``ag_attention._sweep.distributed``), with
  ``scheduler="tcp://HOST:PORT"``: a :class:`dask.distributed.Client` that
  waits at most ``timeout`` seconds for the scheduler to answer and for
  ``workers`` workers (default 1) to join, and fails (never hangs) when the
  cluster has had no worker, or the client no connection, for ``timeout``
  seconds.  The workers need ag-attention importable (the same version).

Rows do not depend on where they were computed: the random points come from
``seed`` alone, so a local and a distributed sweep give identical rows
(except ``seconds``).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._checks import check_int, check_path, check_seconds
from .._errors import InvalidArgumentError, OutputError
from .._exact import DEFAULT_PRIME, check_prime
from .._m2 import close_client, connect_client, scheduler_address, wait_for_workers
from .._progress import bar, elapsed, ticking
from .._provenance import provenance
from .._resources import format_bytes, memory_limit
from .._results import ResultMixin
from .compute import Row
from .distributed import run_dask
from .grid import Grid, Spec, load_grid
from .local import _chunks, _run_local, local_workers
from .store import REJECTED, RESULTS, Store, read_rows, require
from .summary import markdown, write_summary

__all__ = ["sweep", "SweepResult", "DEFAULT_TIMEOUT", "local_workers"]

#: seconds to wait for a Dask scheduler, for its workers, and through a loss of all of them
DEFAULT_TIMEOUT = 30.0
#: format of the journal rows and of ``sweep.json``
FORMAT = 1


@dataclass(frozen=True)
class SweepResult(ResultMixin):
    """What :func:`sweep` did, and where its files are."""

    out: Path
    #: architectures in the grid
    total: int
    #: rows computed by this call
    computed: int
    #: rows already finished (``resume``), not computed again
    skipped: int
    #: rows of this grid whose computation failed (their ``error`` column)
    errors: int
    seconds: float
    #: ``ag_attention._sweep.summarize`` of results.parquet
    summary: dict[str, Any] = field(repr=False)
    #: ``None``: local processes; else the Dask scheduler's address
    scheduler: str | None = None
    #: processes (local) or worker threads (Dask) that computed
    workers: int = 0
    #: stored lines or rows that were not valid rows, set aside into journal.rejected by this call
    rejected: int = 0

    @property
    def results(self) -> Path:
        return self.out / RESULTS

    def rows(self) -> list[Row]:
        """The rows of results.parquet, as dicts."""
        return read_rows(self.results)

    def files(self) -> dict[str, str]:
        names = {"results": RESULTS, "summary_md": "summary.md", "summary_json": "summary.json"}
        out = {k: str(self.out / v) for k, v in names.items()}
        for name in self.summary.get("plots") or []:
            out[name.rsplit(".", 1)[-1]] = str(self.out / name)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "total": self.total,
            "computed": self.computed,
            "skipped": self.skipped,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
            "scheduler": self.scheduler,
            "workers": self.workers,
            "rejected": self.rejected,
            "files": self.files(),
            "summary": self.summary,
        }

    def __str__(self) -> str:
        where = f"Dask at {self.scheduler}" if self.scheduler else "local"
        head = (
            f"sweep: {self.total:,} architectures, {self.computed:,} computed, {self.skipped:,} already finished, "
            f"{self.errors:,} failed; {self.seconds:.1f} s ({where}, {self.workers} workers)"
        )
        if self.rejected:
            head += f"\n{self.rejected:,} stored lines were not valid rows: set aside in {self.out / REJECTED}"
        files = ", ".join(self.files().values())
        return f"{head}\n\n{markdown(self.summary, details=False)}\nfiles: {files}"


# ------------------------------------------------------------------ arguments
@dataclass(frozen=True)
class _Options:
    """:func:`sweep`'s arguments, checked (``address``: the scheduler's, ``None`` for local processes)."""

    prime: int
    seed: int
    workers: int | None
    chunk_size: int | None
    timeout: float
    address: str | None


def _check(
    scheduler: str | None,
    workers: int | None,
    resume: bool,
    overwrite: bool,
    prime: int,
    seed: int,
    timeout: float,
    plots: bool,
    chunk_size: int | None,
) -> _Options:
    """The arguments of :func:`sweep` checked, in its order (an InvalidArgumentError names the first bad one)."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        # a spawned worker re-imports the caller's main module: an unguarded sweep() there would recurse
        raise InvalidArgumentError(
            "sweep() was called while a worker process imported the main script: call it under "
            '`if __name__ == "__main__":` (local workers are started with multiprocessing\'s spawn)'
        )
    prime = check_prime(prime)
    seed = check_int(seed, "seed", minimum=0)
    if workers is not None:
        workers = check_int(workers, "workers", minimum=1)
    if chunk_size is not None:
        chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    timeout = check_seconds(timeout)
    for name, flag in (("resume", resume), ("overwrite", overwrite), ("plots", plots)):
        if not isinstance(flag, bool):
            raise InvalidArgumentError(f"{name}={flag!r}: must be True or False")
    if resume and overwrite:
        raise InvalidArgumentError("--resume and --overwrite: choose one")
    address = None if scheduler is None else scheduler_address(scheduler)
    return _Options(prime, seed, workers, chunk_size, timeout, address)


# ------------------------------------------------------------------ the sweep
# long: over 80 lines only by its docstring (the API reference); its code is the steps below
def sweep(
    grid: str | os.PathLike[str] | Grid,
    out: str | os.PathLike[str],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    prime: int = DEFAULT_PRIME,
    seed: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
    plots: bool = True,
    chunk_size: int | None = None,
) -> SweepResult:
    """Compute every architecture of ``grid`` into ``out``/results.parquet, with a summary.

    Parameters
    ----------
    grid:
        A grid file (TOML: docs/grid.md) or a parsed grid (``parse_grid`` of the same module).
    out:
        Output directory (created): results.parquet, summary.md, summary.json,
        the plots, and while running journal.jsonl and sweep.json.
    scheduler:
        ``None``: local processes; ``"tcp://HOST:PORT"``: a Dask scheduler.
    workers:
        Local: processes (default: every core this process may use).  Dask:
        how many workers to wait for before starting (default 1).
    resume:
        Keep the rows already in ``out`` and compute only the missing ones
        (and those that failed).  Without it, ``out`` must hold no results.
        Resuming completes the run that was started: the same grid (its set
        of architectures; ``sweep.json`` records it), prime and seed, else an
        InvalidArgumentError naming both grids' sizes (``--overwrite`` starts
        over).  Stored lines that are not valid rows are moved to
        ``journal.rejected`` with a warning (``JournalWarning``, a
        ``UserWarning``); every valid row is kept.
    overwrite:
        Delete the results in ``out`` first.
    prime, seed:
        Of every exact computation (rows record them; resuming needs the same).
    timeout:
        Seconds to wait for the Dask scheduler, for its workers, and through
        a loss of every worker or of the connection (then ComputationError).
    plots:
        Write dimension-vs-formula.png, .pdf and .svg (needs matplotlib; skipped
        with a note in the summary otherwise).
    chunk_size:
        Architectures per task (default: about 8 tasks per worker, at most 16
        architectures each).

    A script that calls :func:`sweep` on local processes must do so under
    ``if __name__ == "__main__":`` (the workers are started with ``spawn``,
    which imports the script again).

    Raises
    ------
    InvalidArgumentError
        A bad grid or argument, an output directory in use or holding
        results (or, resuming, rows of another grid), an unreachable scheduler.
    ComputationError
        A worker or the cluster failed (the finished rows are kept; ``--resume``
        completes the run).
    OutputError
        A file could not be written (a full disk, no permission, a symbolic
        link planted in ``out``, which is never followed); it names the file,
        and the finished rows are kept in the journal for ``--resume``.
    """
    if not isinstance(grid, Grid):
        grid = check_path(grid, "grid")
    out = check_path(out, "out")
    o = _check(scheduler, workers, resume, overwrite, prime, seed, timeout, plots, chunk_size)
    require("pyarrow")
    g = grid if isinstance(grid, Grid) else load_grid(grid)
    settings = {
        "format": FORMAT,
        "grid": g.source,
        "grid_sha256": g.sha256,
        "description": g.description,
        "prime": o.prime,
        "seed": o.seed,
    }
    t0 = time.perf_counter()
    with elapsed("sweep: the grid's fingerprint"):  # about 3 s for 800,000 networks
        store = Store(out, settings, grid=g.specs, resume=resume, overwrite=overwrite)
    store.open()
    todo, computed, n_workers = _compute(store, g, o)
    try:
        rows = store.compact(g.specs, {**store.settings, "provenance": provenance()})
    finally:
        store.close()
    try:
        summary = _summary(rows, store.dir, g, o, t0, plots)
    except OutputError as exc:
        raise OutputError(
            f"{exc}; {store.results} holds every row: once the problem is fixed, --resume writes the "
            "summary and plots again (it computes nothing)",
            path=exc.path,
            errno=exc.errno,
        ) from None
    errors = _errors(rows, g)
    return SweepResult(
        store.dir,
        len(g.specs),
        computed,
        len(g.specs) - todo,
        errors,
        time.perf_counter() - t0,
        summary,
        o.address,
        n_workers,
        store.rejected,
    )


# ------------------------------------------------------------------ its steps
def _compute(store: Store, g: Grid, o: _Options) -> tuple[int, int, int]:
    """Compute the rows ``store`` lacks: (how many were to compute, how many were computed, workers).

    On an error or Ctrl-C the rows finished so far still go to results.parquet
    (the journal keeps them anyway), the store is closed, and the error raised.
    """
    client = None
    try:
        finished = store.finished()
        todo = [s for s in g.specs if s not in finished]
        if o.address is None:
            n_workers = min(local_cap(o.workers), max(1, len(todo)))
        else:
            client = connect_client(o.address, o.timeout)
            n_workers = wait_for_workers(client, o.address, o.workers, o.timeout)
        computed = _execute(store, todo, n_workers, client, o)
    except BaseException:
        close_client(client)
        with contextlib.suppress(Exception):  # e.g. a full disk: the journal keeps the rows anyway
            store.compact(g.specs, {**store.settings, "provenance": provenance()})
        with contextlib.suppress(Exception):  # the error that stopped the run is the one to report
            store.close()
        raise
    close_client(client)
    return len(todo), computed, n_workers


#: the memory one local worker process takes before its first network (Python, numpy, python-flint; measured about
#: 45 MB each with 72 workers: 3.15 GB), with a margin for its networks
WORKER_BYTES = 150 * 2**20


def local_cap(requested: int | None) -> int:
    """Local worker processes: ``requested`` (default: every core) capped by the cores this process may use and
    by the memory available (:data:`WORKER_BYTES` each); a cap is said on standard error."""

    cores = local_workers()
    room = memory_limit()
    by_memory = max(1, room.bytes // WORKER_BYTES) if room.bytes is not None else cores
    cap = max(1, min(cores, by_memory))
    want = requested or cores
    if want > cap:
        why = (
            f"{cores} cores"
            if cap == cores
            else f"{format_bytes(room.bytes or 0)} available ({room.source}), {format_bytes(WORKER_BYTES)} per worker"
        )
        print(f"ag-attention sweep: --workers {want}: capped to {cap} ({why})", file=sys.stderr)
    return min(want, cap)


def _execute(store: Store, todo: list[Spec], n_workers: int, client: Any, o: _Options) -> int:
    """Run the chunks of ``todo`` locally (no ``client``) or on Dask, each row into ``store``: the rows computed."""
    computed = 0
    with elapsed("sweep: planning the tasks"):  # sorting by size: about 2 s for 800,000 networks
        chunks = _chunks(todo, n_workers, o.chunk_size)
    # redrawn while a chunk runs: elapsed time and estimate go on (off a terminal, a line every 10 s)
    with bar(total=len(todo), desc="sweep", unit="arch") as progress, ticking(progress):

        def emit(rows: list[Row]) -> None:
            nonlocal computed
            store.append(rows)
            computed += len(rows)
            progress.update(len(rows))

        if chunks and o.address is None:
            _run_local(chunks, n_workers, o.prime, o.seed, emit)
        elif chunks:
            run_dask(client, str(o.address), chunks, o.prime, o.seed, o.timeout, emit)
    return computed


def _summary(rows: list[Row], out: Path, g: Grid, o: _Options, t0: float, plots: bool) -> dict[str, Any]:
    """Write summary.md, summary.json and the plots of ``rows`` into ``out``: the summary."""
    info = {
        "description": g.description,
        "grid": g.source,
        "prime": o.prime,
        "seed": o.seed,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return write_summary(rows, out, info=info, plots=plots)


def _errors(rows: list[Row], g: Grid) -> int:
    """The rows of ``g``'s architectures whose computation failed."""
    in_grid = set(g.specs)
    return sum(1 for row in rows if row.get("error") is not None and Spec.from_row(row) in in_grid)
