"""A sweep on this machine's cores: a process pool, and the chunks every executor computes.

``_run_local`` runs the chunks on a
:class:`concurrent.futures.ProcessPoolExecutor` of ``workers`` processes,
started with ``spawn``; each worker runs FLINT on one thread, ignores Ctrl-C
(the parent stops them) and dies with its parent (Linux ``PR_SET_PDEATHSIG``),
so a killed sweep leaves no worker behind.  ``_chunks`` cuts the
architectures into the tasks of a local or a Dask sweep (largest networks
first).  ``_worker_init`` runs in the spawned workers, which import it from
this module.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import math
import multiprocessing
import os
import signal
from collections.abc import Sequence

from .._errors import ComputationError
from .compute import Emit, Row, compute_chunk
from .grid import Spec, brief

__all__ = ["local_workers"]

_PR_SET_PDEATHSIG = 1
#: what every error that stops a local run ends with
KEPT = "the finished rows are kept: --resume completes the run"


def local_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _cost(spec: Spec) -> int:
    """Parameters of the network (its Jacobian has about that many columns and rows)."""
    P = sum(2 * a * d + e * d for a, d, e in zip(spec.ranks, spec.widths, spec.widths[1:])) * spec.heads
    return P * spec.tokens


def _chunks(specs: Sequence[Spec], workers: int, size: int | None) -> list[list[Spec]]:
    """Largest networks first, in chunks of at most 16 (about 8 per worker and more at the end)."""
    ordered = sorted(specs, key=_cost, reverse=True)
    if size is None:
        size = max(1, min(16, math.ceil(len(ordered) / (8 * workers))))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def _worker_init() -> None:  # pragma: no cover - runs in the worker processes
    """Ignore Ctrl-C (the parent stops the pool) and die with the parent (Linux); progress bars in the worker lock
    with a thread lock: tqdm's default lock is a multiprocessing one, a named semaphore that a worker terminated
    on Ctrl-C never released ("leaked semaphore objects" at the end of an interrupted sweep, one per worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(ImportError):
        import threading

        from tqdm.auto import tqdm

        tqdm.set_lock(threading.RLock())
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _run_local(chunks: list[list[Spec]], workers: int, prime: int, seed: int, emit: Emit) -> None:
    ctx = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init)
    futures: dict[concurrent.futures.Future[list[Row]], list[Spec]] = {}
    try:
        for chunk in chunks:
            futures[pool.submit(compute_chunk, chunk, prime, seed)] = chunk
        for fut in concurrent.futures.as_completed(futures):
            try:
                rows = fut.result()
            except concurrent.futures.process.BrokenProcessPool:
                running = sum(len(c) for f, c in futures.items() if not f.done() or f is fut)
                raise ComputationError(
                    "a local worker process died (killed, out of memory, or started by a script that calls "
                    'sweep() outside `if __name__ == "__main__":`?) while computing '
                    f"{futures[fut][0].describe()} or another of the {running:,} architectures not finished; "
                    f"{KEPT}",
                    prime=prime,
                    seed=seed,
                ) from None
            except Exception as exc:  # a bug in a worker: name it briefly, keep the rows
                chunk = futures[fut]
                others = f" (or another of the {len(chunk) - 1:,} more of its task)" if len(chunk) > 1 else ""
                raise ComputationError(
                    f"a local worker failed on {chunk[0].describe()}{others}: {type(exc).__name__}: {brief(exc)}; "
                    f"{KEPT}",
                    prime=prime,
                    seed=seed,
                ) from exc
            emit(rows)
        pool.shutdown(wait=True)  # every chunk is done: a clean shutdown releases the pool's queues and locks
    finally:
        for fut in futures:
            fut.cancel()
        processes = dict(getattr(pool, "_processes", None) or {})  # terminated: a running chunk may be long
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in processes.values():
            with contextlib.suppress(Exception):
                proc.terminate()
        for proc in processes.values():
            with contextlib.suppress(Exception):
                proc.join(5)
