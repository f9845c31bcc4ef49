"""A sweep on a Dask cluster: the scheduler's address, the client, its workers, the tasks.

With ``scheduler="tcp://HOST:PORT"``, the sweep first asks the address for
the scheduler's identity, bounded by ``timeout`` seconds end to end (a
listener that accepts and never answers is refused after ``timeout``, never
waited on: a :class:`dask.distributed.Client` alone would wait for its
handshake for ever), then connects a Client, also within ``timeout``
(``_connect``), and waits at most ``timeout`` seconds for ``workers``
workers (default 1) to join (``_wait_for_workers``).  :func:`run_dask`
sends the chunks and fails (never hangs) when the cluster has had no worker,
or the client no connection, for ``timeout`` seconds; any error of the
client on the way (the scheduler killed: ``CommClosedError``) is a
:class:`~ag_attention._errors.ComputationError` saying that the finished
rows are kept and ``--resume`` completes the run.  Messages are capped: the
first line of a worker's error, at most 300 characters, and how many other
architectures the failed task held.  ``_close`` closes the client, quietly
when the scheduler is gone.  The workers need ag-attention importable (the
same version).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import threading
import time
from typing import Any

from .._errors import AgAttentionError, ComputationError, InvalidArgumentError
from .compute import Emit, compute_chunk
from .grid import Spec, brief
from .store import require

__all__ = ["run_dask"]

#: what every error that stops a distributed run ends with
KEPT = "the finished rows are kept: --resume completes the run"

_ADDRESS = re.compile(
    r"(?:(?P<scheme>[a-z][a-z0-9+.-]*)://)?(?P<host>\[[0-9a-fA-F:.]+\]|[^\s/:\[\]]+):(?P<port>[0-9]{1,5})"
)


def _scheduler_address(address: object) -> str:
    """``tcp://HOST:PORT`` (a bare ``HOST:PORT`` means tcp), or an error naming the value."""
    if not isinstance(address, str):
        raise InvalidArgumentError(f"--scheduler={address!r}: must be an address tcp://HOST:PORT")
    m = _ADDRESS.fullmatch(address.strip())
    if m is None or not 0 < int(m.group("port")) < 65536:
        raise InvalidArgumentError(
            f"--scheduler={address!r}: must be an address tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)"
        )
    scheme = m.group("scheme") or "tcp"
    if scheme not in ("tcp", "tls", "ws", "wss", "ucx"):
        raise InvalidArgumentError(f"--scheduler={address!r}: unknown protocol {scheme!r} (tcp, tls, ws, wss, ucx)")
    return f"{scheme}://{m.group('host')}:{int(m.group('port'))}"


def _identity(address: str, timeout: float) -> dict[str, Any]:
    """The identity of the Dask server at ``address``, asked and answered within ``timeout`` seconds in all."""
    connect = require("distributed.comm").connect
    # TLS and the other protocols need the client's connection arguments (certificates), as a Client has them
    args = require("distributed.security").Security().get_connection_args("client")

    async def ask() -> Any:
        comm = await connect(address, timeout=timeout, **args)  # its handshake has no time limit of its own
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded() -> Any:
        return await asyncio.wait_for(ask(), timeout)

    # a thread of its own: asyncio.run needs a thread without a running loop (a notebook's has one)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["identity"] = asyncio.run(bounded())
        except BaseException as exc:  # reported by the caller
            box["error"] = exc

    thread = threading.Thread(target=run, name="ag-attention-dask-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if thread.is_alive() or isinstance(box.get("error"), (asyncio.TimeoutError, TimeoutError)):
        raise TimeoutError(f"no answer within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    identity = box.get("identity")
    return identity if isinstance(identity, dict) else {"type": type(identity).__name__}


def _probe_tcp(address: str, timeout: float, refused: str) -> None:
    """For a ``tcp://host:port`` address: a plain TCP connection first, so that nothing listening (refused) or
    nothing reachable is said as such (distributed retries a refused connection until its timeout, which read as
    "accepted but did not answer")."""
    m = re.fullmatch(r"(?:tcp://)?\[?([^\]/]+?)\]?:(\d+)/?", address)
    if m is None:
        return  # another protocol (tls://, inproc://, ...): distributed's own connection says it
    host, port = m.group(1), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except ConnectionRefusedError:
        raise InvalidArgumentError(f"{refused}: nothing listens at {host}:{port} (connection refused)") from None
    except TimeoutError:
        raise InvalidArgumentError(
            f"{refused}: {host}:{port} did not accept a TCP connection within {timeout:g} s (no route, or a firewall)"
        ) from None
    except OSError as exc:
        raise InvalidArgumentError(f"{refused} ({brief(exc, 200)})") from None


def _connect(address: str, timeout: float) -> Any:
    """A Client of the scheduler at ``address``: ask its identity, then connect, each within ``timeout``."""
    distributed = require("distributed")
    refused = f"--scheduler={address!r}: no Dask scheduler answered within {timeout:g} s"
    _probe_tcp(address, timeout, refused)
    try:
        identity = _identity(address, timeout)
    except (TimeoutError, asyncio.TimeoutError):
        raise InvalidArgumentError(
            f"{refused} (something there accepted the connection but did not answer as a Dask scheduler does)"
        ) from None
    except OSError as exc:
        raise InvalidArgumentError(f"{refused} ({brief(exc, 200)})") from None
    except Exception as exc:  # whatever spoke there, it is not a scheduler
        raise InvalidArgumentError(f"{refused} (it answered {type(exc).__name__}: {brief(exc, 200)})") from None
    if identity.get("type") != "Scheduler":
        raise InvalidArgumentError(f"{refused}: a Dask {identity.get('type')!s} answered there, not a scheduler")
    box: dict[str, Any] = {}

    def make() -> None:
        try:
            box["client"] = distributed.Client(address, timeout=timeout, set_as_default=False)
        except BaseException as exc:  # reported below
            box["error"] = exc

    thread = threading.Thread(target=make, name="ag-attention-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if thread.is_alive():
        raise InvalidArgumentError(f"{refused}: it answered, but the client could not connect within {timeout:g} s")
    error = box.get("error")
    if isinstance(error, (OSError, TimeoutError)):
        raise InvalidArgumentError(f"{refused} ({brief(error, 200)})") from None
    if error is not None:
        raise error
    return box["client"]


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
        try:
            client.wait_for_workers(workers or 1, timeout=timeout)
        except TimeoutError:
            raise ComputationError(
                f"the Dask scheduler at {address} has {len(_workers(client))} "
                f"workers after {timeout:g} s, fewer than the {workers or 1} asked for"
            ) from None
        return max(1, _worker_threads(client))
    except ComputationError:
        raise
    except Exception as exc:  # the scheduler went away while we waited
        raise ComputationError(
            f"lost the connection to the Dask scheduler at {address} while waiting for its "
            f"workers ({type(exc).__name__}: {brief(exc)})"
        ) from None


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
        if client.status == "running" and _worker_threads(client) > 0:
            last_ok = now
        elif now - last_ok > timeout:
            state = "no worker" if client.status == "running" else f"no connection (client {client.status})"
            raise ComputationError(
                f"the Dask cluster at {address} has had {state} for {timeout:g} s with {len(pending):,} chunks "
                f"left; {KEPT}",
                prime=prime,
                seed=seed,
            )


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
