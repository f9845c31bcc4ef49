"""A sweep on a Dask cluster: the scheduler's address, the client, its workers, the tasks.

With ``scheduler="tcp://HOST:PORT"``, the sweep connects a
:class:`dask.distributed.Client` that waits at most ``timeout`` seconds for
the scheduler to answer and for ``workers`` workers (default 1) to join
(``_connect``, ``_wait_for_workers``); ``_run_dask`` sends the chunks and
fails (never hangs) when the cluster has had no worker, or the client no
connection, for ``timeout`` seconds; ``_close`` closes the client, quietly
when the scheduler is gone.  The workers need ag-attention importable (the
same version).
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from typing import Any

from .._errors import ComputationError, InvalidArgumentError
from .compute import Emit, compute_chunk
from .grid import Spec
from .store import require

__all__: list[str] = []

_ADDRESS = re.compile(r"(?:(?P<scheme>[a-z][a-z0-9+.-]*)://)?(?P<host>\[[0-9a-fA-F:.]+\]|[^\s/:\[\]]+):(?P<port>[0-9]{1,5})")


def _scheduler_address(address: object) -> str:
    """``tcp://HOST:PORT`` (a bare ``HOST:PORT`` means tcp), or an error naming the value."""
    if not isinstance(address, str):
        raise InvalidArgumentError(f"--scheduler={address!r}: must be an address tcp://HOST:PORT")
    m = _ADDRESS.fullmatch(address.strip())
    if m is None or not 0 < int(m.group("port")) < 65536:
        raise InvalidArgumentError(f"--scheduler={address!r}: must be an address tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)")
    scheme = m.group("scheme") or "tcp"
    if scheme not in ("tcp", "tls", "ws", "wss", "ucx"):
        raise InvalidArgumentError(f"--scheduler={address!r}: unknown protocol {scheme!r} (tcp, tls, ws, wss, ucx)")
    return f"{scheme}://{m.group('host')}:{int(m.group('port'))}"


def _connect(address: str, timeout: float) -> Any:
    distributed = require("distributed")
    try:
        return distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise InvalidArgumentError(
            f"--scheduler={address!r}: no Dask scheduler answered within {timeout:g} s ({exc})"
        ) from None


def _workers(client: Any) -> dict[str, Any]:
    """The scheduler's workers (all of them: ``n_workers=-1`` where distributed limits the list)."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # distributed before 2025: no n_workers, every worker listed
        info = client.scheduler_info()
    workers: dict[str, Any] = info.get("workers", {})
    return workers


def _worker_threads(client: Any) -> int:
    return sum(int(w.get("nthreads", 1)) for w in _workers(client).values())


def _wait_for_workers(client: Any, address: str, workers: int | None, timeout: float) -> int:
    """Wait for ``workers`` workers (default 1) to join; the worker threads there are then (at least 1)."""
    try:
        client.wait_for_workers(workers or 1, timeout=timeout)
    except TimeoutError:
        raise ComputationError(
            f"the Dask scheduler at {address} has {len(_workers(client))} "
            f"workers after {timeout:g} s, fewer than the {workers or 1} asked for"
        ) from None
    return max(1, _worker_threads(client))


def _run_dask(client: Any, address: str, chunks: list[list[Spec]], prime: int, seed: int, timeout: float,
              emit: Emit) -> None:
    distributed = require("distributed")
    futures = client.map(compute_chunk, chunks, prime=prime, seed=seed, pure=False)
    chunk_of = {fut.key: chunk for fut, chunk in zip(futures, chunks)}
    pending = set(futures)
    ready = distributed.as_completed(futures, loop=client.loop, raise_errors=False)
    last_ok = last_check = time.monotonic()
    try:
        while pending:
            done = ready.next_batch(block=False) if ready.has_ready() else []
            if not done:
                time.sleep(0.02)
            for fut in done:
                pending.discard(fut)
                if fut.status == "finished":
                    emit(fut.result())
                    continue
                chunk = chunk_of[fut.key]
                exc = fut.exception() if fut.status == "error" else None
                why = f"{type(exc).__name__}: {exc}" if exc is not None else f"task {fut.status}"
                if fut.status == "cancelled" and client.status != "running":
                    why = f"lost the connection to the scheduler (client {client.status})"
                hint = " (is ag-attention installed on the workers?)" if isinstance(exc, ImportError) else ""
                raise ComputationError(
                    f"the Dask cluster at {address} failed on {chunk[0].describe()} (and {len(chunk) - 1} more): "
                    f"{why}{hint}; the finished rows are kept: resume with --resume", prime=prime, seed=seed,
                )
            now = time.monotonic()
            if now - last_check < 1.0:
                continue
            last_check = now
            if client.status == "running" and _worker_threads(client) > 0:
                last_ok = now
            elif now - last_ok > timeout:
                state = "no worker" if client.status == "running" else f"no connection (client {client.status})"
                raise ComputationError(
                    f"the Dask cluster at {address} has had {state} for {timeout:g} s with {len(pending)} chunks "
                    "left; the finished rows are kept: resume with --resume", prime=prime, seed=seed,
                )
    finally:
        if pending:
            with contextlib.suppress(Exception):
                client.cancel(list(pending))


def _close(client: Any) -> None:
    """Close the Dask client; quietly when the scheduler is gone (distributed logs its cancelled reconnection)."""
    if client is None:
        return
    logger = logging.getLogger("distributed.client")
    level = logger.level
    if client.status != "running":
        logger.setLevel(logging.CRITICAL)
    try:
        with contextlib.suppress(Exception):
            client.close(timeout=5)
    finally:
        logger.setLevel(level)
