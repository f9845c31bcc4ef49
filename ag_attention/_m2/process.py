"""One job's process: its own process group, supervised under a timeout, and nothing left alive after it.

:func:`supervise` starts the command in a new session (its process group),
waits at most the timeout (showing an elapsed-time bar, :mod:`ag_attention._progress`),
and on a timeout or an interruption kills the whole group with SIGKILL and
returns or raises only once ``/proc`` shows no live member of it.  While a job
runs, :func:`terminate_with_cleanup` turns SIGTERM and SIGHUP into
``SystemExit`` so that this cleanup runs before Python exits;
:func:`die_with_parent` gives the child a parent-death signal for a Python
killed with SIGKILL.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .. import _clock
from .. import _progress as progress

__all__ = [
    "Finished",
    "supervise",
    "group_members",
    "stat_fields",
    "terminate_with_cleanup",
    "die_with_parent",
    "stop_with_parent",
    "limit_address_space",
    "spawn",
    "kill_all_jobs",
    "track",
    "untrack",
]

log = logging.getLogger(__name__)


def stat_fields(pid: int) -> list[str] | None:
    """Fields of ``/proc/PID/stat`` after ``pid (comm)``: state, ppid, pgrp, ... (None if unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            text = fh.read()
    except OSError:
        return None
    # comm may hold spaces and parentheses
    return text[text.rfind(")") + 2 :].split()


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``, read from ``/proc``.

    Empty where ``/proc`` is missing (the kill is then not verified).
    """
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = stat_fields(int(entry))
        if fields and len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


#: process groups of jobs under way (fresh processes and sessions): :func:`kill_all_jobs` ends them
_live: set[int] = set()
_live_lock = threading.Lock()


def track(pgid: int) -> None:
    with _live_lock:
        _live.add(pgid)


def untrack(pgid: int) -> None:
    with _live_lock:
        _live.discard(pgid)


def kill_all_jobs() -> None:
    """Kill the process group of every job of this process under way (after an interruption of a run that
    waits on several jobs in other threads) and return once none is alive; each job's own thread then sees
    its job end."""
    with _live_lock:
        groups = list(_live)
    for pgid in groups:
        _kill_group(pgid)
    for pgid in groups:  # returns once none of them is alive
        left = _wait_group_gone(pgid)
        if left:  # pragma: no cover - SIGKILL is not ignorable
            log.error("processes %s of a killed job are still alive", left)


_clock.on_interrupt(kill_all_jobs)  # Ctrl-C inside a computation with a deadline: its jobs end now


class _Spawner:
    """One thread, alive as long as the process, that starts the processes meant to outlive their caller's thread.

    A parent-death signal (:func:`die_with_parent`) fires when the *thread*
    that forked the child ends, not the process; a persistent session
    started by a worker thread would die with that thread.  Started from
    here it dies only with Python.
    """

    def __init__(self) -> None:
        import queue

        self._requests: queue.Queue[tuple[list[str], dict[str, object], list[object], threading.Event]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _serve(self) -> None:
        while True:
            cmd, kw, box, done = self._requests.get()
            try:
                # ignore: kw holds Popen's own keywords, passed through from popen (typed object there)
                box.append(subprocess.Popen(cmd, **kw))  # type: ignore[call-overload]
            except BaseException as exc:  # handed to the caller
                box.append(exc)
            done.set()

    def popen(self, cmd: list[str], **kw: object) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="ag-attention-spawner", daemon=True)
                self._thread.start()
        box: list[object] = []
        done = threading.Event()
        self._requests.put((cmd, kw, box, done))
        done.wait()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]  # type: ignore[return-value]  # not an exception: the Popen that _serve appended


_spawner = _Spawner()


def spawn(cmd: list[str], **kw: object) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(cmd, **kw)`` from a thread that lives as long as the process (see :class:`_Spawner`)."""
    return _spawner.popen(cmd, **kw)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _wait_group_gone(pgid: int, seconds: float = 10.0) -> list[int]:
    """Kill ``pgid`` until no live member is left (at most ``seconds``); the survivors."""
    deadline = time.monotonic() + seconds
    while True:
        left = group_members(pgid)
        if not left or time.monotonic() > deadline:
            return left
        _kill_group(pgid)
        time.sleep(0.02)


_PR_SET_PDEATHSIG = 1


def _parent_death_signal(sig: int) -> None:  # pragma: no cover - runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)
    except (OSError, AttributeError):
        pass


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child: SIGKILL when the parent dies (Linux), so a killed Python leaves no M2 behind."""
    _parent_death_signal(signal.SIGKILL)


def stop_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child: SIGTERM when the parent dies (Linux), for a child that closes its own children on SIGTERM
    (``dask scheduler``, ``dask worker``)."""
    _parent_death_signal(signal.SIGTERM)


def limit_address_space(limit: int) -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child: ``RLIMIT_AS`` (soft and hard) of ``limit`` bytes, never above an existing hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@contextlib.contextmanager
def terminate_with_cleanup() -> Iterator[None]:
    """While a job runs, SIGTERM and SIGHUP raise SystemExit (where they would kill Python outright).

    The job's cleanup (kill the process group, kill the container) then runs
    before Python exits.  Handlers set by the application are left alone, and
    signal handlers can only be set from the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    installed = {}

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            installed[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, previous in installed.items():
            signal.signal(sig, previous)


@dataclass(frozen=True)
class Finished:
    """A process that ended by itself: its output (bytes), exit status and wall time."""

    stdout: bytes
    stderr: bytes
    returncode: int
    seconds: float


def supervise(
    cmd: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    preexec: Callable[[], None],
    timeout: float,
    on_kill: Callable[[], None],
    label: str,
    where: str,
) -> Finished | None:
    """Run ``cmd`` in its own process group for at most ``timeout`` seconds; None when it timed out.

    On a timeout or an interruption (KeyboardInterrupt, SIGTERM via
    SystemExit, ...) the group is killed, then ``on_kill()`` runs (the
    container's kill), and this returns or raises only once no live process
    of the group is left.  ``label`` and ``where`` (the backend) name the job
    in the progress bar and the log.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=preexec,
    )
    track(proc.pid)
    try:
        with progress.elapsed(f"{label} ({where})", limit=timeout):
            out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc, on_kill, label)
        return None
    except BaseException:  # interrupted (KeyboardInterrupt, SIGTERM via SystemExit, ...)
        _stop(proc, on_kill, label)
        raise
    finally:
        untrack(proc.pid)
    if proc.returncode < 0 and _clock.interrupted():  # killed at Ctrl-C (:mod:`ag_attention._clock`): a limit
        _stop(proc, on_kill, label)
        return None
    return Finished(out, err, proc.returncode, time.perf_counter() - t0)


def _stop(proc: subprocess.Popen[bytes], on_kill: Callable[[], None], label: str) -> None:
    """Kill the job's process group (and container), and return only once nothing of it is alive."""
    _kill_group(proc.pid)
    on_kill()
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - the kernel did not reap in 30 s
        pass
    left = _wait_group_gone(proc.pid)
    if left:  # pragma: no cover - SIGKILL is not ignorable
        log.error("processes %s of the killed job %s are still alive", left, label)
