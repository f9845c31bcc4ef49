"""A sweep on a Dask cluster: the scheduler's address, the client, its workers, the tasks.

With ``scheduler="tcp://HOST:PORT"``, the sweep first asks the address for
the scheduler's identity, bounded by ``timeout`` seconds end to end (a
listener that accepts and never answers is refused after ``timeout``, never
waited on: a :class:`dask.distributed.Client` alone would wait for its
handshake for ever), then connects a Client, also within ``timeout``
(``connect_client``), and waits at most ``timeout`` seconds for ``workers``
workers (default 1) to join (``wait_for_workers``).  :func:`run_dask`
sends the chunks and fails (never hangs) when the cluster has had no worker,
or the client no connection, for ``timeout`` seconds; any error of the
client on the way (the scheduler killed: ``CommClosedError``) is a
:class:`~ag_attention._errors.ComputationError` saying that the finished
rows are kept and ``--resume`` completes the run.  Messages are capped: the
first line of a worker's error, at most 300 characters, and how many other
architectures the failed task held.  ``close_client`` closes the client, quietly
when the scheduler is gone.  The workers need ag-attention importable (the
same version).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from .._errors import AgAttentionError, ComputationError
from .._m2 import require, worker_threads
from .compute import Emit, compute_chunk
from .grid import Spec, brief

__all__ = ["run_dask"]

#: what every error that stops a distributed run ends with
KEPT = "the finished rows are kept: --resume completes the run"


def run_dask(
    client: Any, address: str, chunks: list[list[Spec]], prime: int, seed: int, timeout: float, emit: Emit
) -> None:
    """Compute ``chunks`` on the Dask cluster of ``client``, each chunk's rows to ``emit`` as it finishes.

    Raises :class:`~ag_attention._errors.ComputationError` (never another error of the client) when a task
    fails, when the cluster has had no worker or the client no connection for ``timeout`` seconds, or when
    the client fails on the way (the scheduler killed: ``CommClosedError``); the rows emitted are kept.
    """
    distributed = require("distributed")
    pending: set[Any] = set()
    try:
        futures = client.map(compute_chunk, chunks, prime=prime, seed=seed, pure=False)
        pending = set(futures)
        _wait(
            distributed,
            client,
            address,
            futures,
            dict(zip((f.key for f in futures), chunks)),
            pending,
            prime,
            seed,
            timeout,
            emit,
        )
    except AgAttentionError:  # a failed task, a lost cluster, a full disk while the rows are written
        raise
    except (Exception, asyncio.CancelledError) as exc:  # the client lost its scheduler
        left = len(pending) if pending else len(chunks)
        raise ComputationError(
            f"lost the connection to the Dask scheduler at {address} ({type(exc).__name__}: {brief(exc)}) with "
            f"{left:,} of {len(chunks):,} chunks not finished; {KEPT}",
            prime=prime,
            seed=seed,
        ) from None
    finally:
        if pending:
            with contextlib.suppress(Exception):
                client.cancel(list(pending))


def _wait(
    distributed: Any,
    client: Any,
    address: str,
    futures: list[Any],
    chunk_of: dict[Any, list[Spec]],
    pending: set[Any],
    prime: int,
    seed: int,
    timeout: float,
    emit: Emit,
) -> None:
    """Emit each finished chunk, removing it from ``pending``; a ComputationError when the cluster fails."""
    ready = distributed.as_completed(futures, loop=client.loop, raise_errors=False)
    last_ok = last_check = time.monotonic()
    while pending:
        done = ready.next_batch(block=False) if ready.has_ready() else []
        if not done:
            time.sleep(0.02)
        for fut in done:
            if fut.status == "finished":
                emit(fut.result())
                pending.discard(fut)
                continue
            chunk = chunk_of[fut.key]
            exc = fut.exception() if fut.status == "error" else None
            why = f"{type(exc).__name__}: {brief(exc)}" if exc is not None else f"task {fut.status}"
            if fut.status == "cancelled" and client.status != "running":
                raise ComputationError(
                    f"lost the connection to the Dask scheduler at {address} (client {client.status}) with "
                    f"{len(pending):,} of {len(chunk_of):,} chunks not finished; {KEPT}",
                    prime=prime,
                    seed=seed,
                )
            hint = " (is ag-attention installed on the workers?)" if isinstance(exc, ImportError) else ""
            others = f" (and {len(chunk) - 1:,} more architectures of its task)" if len(chunk) > 1 else ""
            raise ComputationError(
                f"the Dask cluster at {address} failed on {chunk[0].describe()}{others}: {why}{hint}; {KEPT}",
                prime=prime,
                seed=seed,
            )
        now = time.monotonic()
        if now - last_check < 1.0:
            continue
        last_check = now
        if client.status == "running" and worker_threads(client) > 0:
            last_ok = now
        elif now - last_ok > timeout:
            state = "no worker" if client.status == "running" else f"no connection (client {client.status})"
            raise ComputationError(
                f"the Dask cluster at {address} has had {state} for {timeout:g} s with {len(pending):,} chunks "
                f"left; {KEPT}",
                prime=prime,
                seed=seed,
            )
