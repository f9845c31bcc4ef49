"""Dask clients: the scheduler's address, a client connected within a deadline, its workers, closing it.

The one place that connects to a Dask scheduler (sweeps, :mod:`ag_attention._sweep.distributed`; monodromy's path
batches, :mod:`ag_attention._numeric.executors`).  With ``scheduler="tcp://HOST:PORT"`` the address is first asked
for the scheduler's identity, bounded by ``timeout`` seconds end to end (a listener that accepts and never answers
is refused after ``timeout``, never waited on: a :class:`dask.distributed.Client` alone would wait for its
handshake for ever), then a Client connects, also within ``timeout`` (:func:`connect_client`), and
:func:`wait_for_workers` waits at most ``timeout`` seconds for the workers.  :func:`close_client` closes the client,
quietly when the scheduler is gone.  Dask is optional: it is imported by :func:`require` when a client is asked
for, with an error saying how to install it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import re
import socket
import threading
from typing import Any

from .._errors import ComputationError, InvalidArgumentError, brief

__all__ = [
    "close_client",
    "connect_client",
    "require",
    "scheduler_address",
    "wait_for_workers",
    "worker_threads",
]


def require(module: str) -> Any:
    """Import an optional dependency of sweeps and clusters, or an error saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise InvalidArgumentError(f"sweeps need {top}: pip install {top} (the package's extra 'sweep')") from None


_ADDRESS = re.compile(
    r"(?:(?P<scheme>[a-z][a-z0-9+.-]*)://)?(?P<host>\[[0-9a-fA-F:.]+\]|[^\s/:\[\]]+):(?P<port>[0-9]{1,5})"
)


def scheduler_address(address: object) -> str:
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


def connect_client(address: str, timeout: float) -> Any:
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


def worker_threads(client: Any) -> int:
    return sum(int(w.get("nthreads", 1)) for w in _workers(client).values())


def wait_for_workers(client: Any, address: str, workers: int | None, timeout: float) -> int:
    """Wait for ``workers`` workers (default 1) to join; the worker threads there are then (at least 1)."""
    try:
        try:
            client.wait_for_workers(workers or 1, timeout=timeout)
        except TimeoutError:
            raise ComputationError(
                f"the Dask scheduler at {address} has {len(_workers(client))} "
                f"workers after {timeout:g} s, fewer than the {workers or 1} asked for"
            ) from None
        return max(1, worker_threads(client))
    except ComputationError:
        raise
    except Exception as exc:  # the scheduler went away while we waited
        raise ComputationError(
            f"lost the connection to the Dask scheduler at {address} while waiting for its "
            f"workers ({type(exc).__name__}: {brief(exc)})"
        ) from None


def close_client(client: Any) -> None:
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
