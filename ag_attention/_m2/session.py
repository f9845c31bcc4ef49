"""Persistent Macaulay2 sessions for runs of many small jobs, and how many jobs may run at once.

A fresh ``M2`` process with LightningAttention loaded costs about half a
second before the job's first line; a run of many small jobs is mostly that.
A :class:`Session` is one ``M2`` process (the local backend's executable,
limits and environment: its own process group and job directory,
``RLIMIT_AS``, a parent-death signal) reading commands on standard input.
Each job is written to a fresh subdirectory as ``job.m2`` and run with::

    setRandomSeed 0; load ".../job.m2";

after which the session prints an end marker made of a random token (built
by string concatenation in Macaulay2, so neither the echoed input nor the
job can forge it).  ``clearAll`` forgets every user symbol of the previous
job and the seed is the one every fresh job starts from too (the job
preamble of :mod:`ag_attention._m2.jobs` sets it), so a job computes the same
in a session as in a fresh process.

What a fresh process guarantees still holds:

* the timeout: a job that overruns kills the session's whole process group
  (the session is restarted for the next job) and raises
  :class:`~ag_attention.M2TimeoutError`;
* memory: the session runs under the backend's limit, and is replaced when
  the limit setting changes or its resident size passes half the limit;
* errors: a job that does not end with its result in the session (a
  Macaulay2 error, the session dying, running out of memory) is run again
  in a fresh process, so the error raised, its message and its location are
  exactly a fresh process's.

:class:`SessionPool` hands out at most :func:`job_slots` sessions at once
(the usable cores, and no more jobs than fit the memory next to each other
at the job's memory limit); :func:`job_slots` also bounds the concurrent
Macaulay2 jobs of ``reproduce theorem-3.4``.  ``AG_ATTENTION_M2_SESSIONS=0``
turns sessions off (every job a fresh process).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import secrets
import selectors
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .. import _clock
from .._resources import memory_limit
from .backend import M2Output
from .jobdir import job_directory
from .parse import END
from .process import _kill_group, _wait_group_gone, spawn, track, untrack

if TYPE_CHECKING:  # pragma: no cover
    from .backend import M2Output
    from .local import LocalBackend

__all__ = ["Session", "SessionPool", "job_slots", "usable_cores", "sessions_enabled", "SESSIONS_ENV", "close_all"]

log = logging.getLogger(__name__)

SESSIONS_ENV = "AG_ATTENTION_M2_SESSIONS"
#: seconds a session may take to start and load the package (taken from the first job's limit)
START_TIMEOUT = 60.0
#: a session is replaced once its resident memory passes this fraction of its memory limit
RSS_FRACTION = 0.5
#: an unlimited job is assumed to need this much memory when counting how many fit side by side
UNLIMITED_JOB = 4 * 2**30


def sessions_enabled() -> bool:
    return os.environ.get(SESSIONS_ENV, "1").strip().lower() not in ("0", "no", "false", "off")


def usable_cores() -> int:
    """CPUs this process may run on: its affinity, capped by a cgroup v2 CPU quota (``cpu.max``)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            n = min(n, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return max(1, n)


def job_slots(job_memory: int | None) -> int:
    """How many Macaulay2 jobs may run at once: the usable cores, and as many as fit the available memory
    at ``job_memory`` bytes each (4 GiB for an unlimited job); at least 1."""
    room = memory_limit().bytes
    per_job = job_memory if job_memory is not None else UNLIMITED_JOB
    fit = max(1, room // per_job) if room is not None and per_job > 0 else usable_cores()
    return max(1, min(usable_cores(), fit))


class SessionUnusable(Exception):
    """The session could not run the job to its end (it died, or it could not start): run it fresh."""


class Session:
    """One persistent ``M2`` process of a :class:`~ag_attention._m2.local.LocalBackend`; one job at a time."""

    def __init__(self, backend: LocalBackend, timeout: float) -> None:
        self.backend = backend
        self.limit = backend.memory_limit()[0]
        self.jobs = 0
        self._stack = contextlib.ExitStack()
        self.dir = self._stack.enter_context(job_directory({}, with_package=True))
        cmd = [str(backend.executable), "-q", "--silent", "--no-debug", "--no-readline", "--no-randomize"]
        # started from a thread that lives as long as Python: its parent-death signal fires only when Python dies
        self.proc = spawn(
            cmd,
            cwd=self.dir,
            env=backend._environment(self.dir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=backend._preexec(),
        )
        track(self.proc.pid)
        self._out = b""
        self._err = b""
        try:
            pkg = str(self.dir).replace("\\", "\\\\").replace('"', '\\"')
            out, err, alive = self._command(
                f'path = prepend("{pkg}/", path); needsPackage "LightningAttention";', min(timeout, START_TIMEOUT)
            )
        except BaseException:
            self.close()
            raise
        if not alive or b"error:" in err:
            self.close()
            raise SessionUnusable(f"the session did not start: {err.decode('utf-8', 'replace')[-300:]}")

    # ------------------------------------------------------------------ the protocol
    def _command(self, line: str, timeout: float) -> tuple[bytes, bytes, bool]:
        """Send ``line``, then the end marker; (stdout, stderr, alive) up to the marker.

        Raises :class:`TimeoutError` (the session is then dead) when the marker
        does not come within ``timeout`` seconds.
        """
        token = secrets.token_hex(8)
        marker = f"<<ag-attention-done-{token}>>".encode()
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.write(f'print concatenate("<<ag-attention-", "done-{token}>>");\n'.encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._drain(), b"", False
        return self._read_until(marker, _clock.now() + timeout)

    def _read_until(self, marker: bytes, deadline: float) -> tuple[bytes, bytes, bool]:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        out_fd, err_fd = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        out, err = bytearray(), bytearray()
        line_marker = b"\n" + marker + b"\n"
        with selectors.DefaultSelector() as sel:
            sel.register(out_fd, selectors.EVENT_READ)
            sel.register(err_fd, selectors.EVENT_READ)
            open_fds = 2
            searched = 0  # out[:searched] holds no marker line
            while True:
                at = (b"\n" + bytes(out[max(0, searched - len(line_marker)) :])).find(line_marker)
                if at >= 0:
                    text = bytes(out)
                    return text[: text.rfind(marker)], bytes(err), True
                searched = len(out)
                remaining = deadline - _clock.now()
                if remaining <= 0:
                    self.kill()
                    raise TimeoutError
                events = sel.select(timeout=min(remaining, 1.0))
                for key, _ in events:
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fd)
                        open_fds -= 1
                    elif key.fd == out_fd:
                        out += chunk
                    else:
                        err += chunk
                if open_fds == 0:  # the session ended
                    self.proc.wait()
                    return bytes(out), bytes(err), False

    def _drain(self) -> bytes:
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        return b""

    # ------------------------------------------------------------------ one job
    def run(self, script: str, *, timeout: float, label: str) -> M2Output | None:
        """Run ``script``; its output, or None when the session did not bring it to its end (run it fresh).

        Raises :class:`TimeoutError` after ``timeout`` seconds (the session is killed).
        """

        self.jobs += 1
        jobdir = self.dir / f"job{self.jobs}"
        jobdir.mkdir()
        (jobdir / "job.m2").write_text(script)
        path = str(jobdir / "job.m2").replace("\\", "\\\\").replace('"', '\\"')
        t0 = time.perf_counter()
        try:
            out, err, alive = self._command(f'clearAll; setRandomSeed 0; load "{path}";', timeout)
        finally:
            with contextlib.suppress(OSError):
                for f in jobdir.iterdir():
                    f.unlink()
                jobdir.rmdir()
        seconds = time.perf_counter() - t0
        stdout = out.decode("utf-8", "surrogateescape")
        stderr = err.decode("utf-8", "backslashreplace")
        if not alive or stderr.strip() or END not in stdout:
            log.debug("session job %s did not end with its result (alive %s): %s", label, alive, stderr[-300:])
            if not alive:
                self.close()
            return None
        return M2Output(stdout, stderr, 0, seconds, self.backend.name)

    def healthy(self) -> bool:
        """Alive, under the same memory setting, and well below its memory limit."""
        if self.proc.poll() is not None or self.backend.memory_limit()[0] != self.limit:
            return False
        if self.limit is None:
            return True
        try:
            with open(f"/proc/{self.proc.pid}/statm") as fh:
                rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return True
        return rss < RSS_FRACTION * self.limit

    def kill(self) -> None:
        """Kill the session's whole process group and return once none of it is alive."""
        _kill_group(self.proc.pid)
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=30)
        left = _wait_group_gone(self.proc.pid)
        untrack(self.proc.pid)
        if left:  # pragma: no cover - SIGKILL is not ignorable
            log.error("processes %s of a killed Macaulay2 session are still alive", left)

    def close(self) -> None:
        """End the session (idempotent): kill its process group, remove its directory."""
        if self.proc.poll() is None:
            self.kill()
        untrack(self.proc.pid)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.close()
        self._stack.close()


class SessionPool:
    """Sessions of one backend: at most ``size`` at once, idle ones kept for the next job."""

    def __init__(self, backend: LocalBackend, size: int) -> None:
        self.backend = backend
        self.size = size
        self._idle: list[Session] = []
        self.started = 0  # sessions started so far
        self.pids: list[int] = []  # their process ids (the process group of each)
        self.fallbacks = 0  # jobs handed back to a fresh process (no result in the session)
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()

    def run(self, script: str, *, timeout: float, label: str) -> M2Output | None:
        """Run ``script`` in a session; None when it must run in a fresh process (see :meth:`Session.run`).

        Raises :class:`TimeoutError` when it overran ``timeout`` (the session was killed).
        """
        deadline = _clock.now() + timeout
        with self._slots:
            session = self._take()
            try:
                if session is None:
                    self.started += 1
                    session = Session(self.backend, timeout)
                    self.pids.append(session.proc.pid)
                out = session.run(script, timeout=max(0.001, deadline - _clock.now()), label=label)
            except SessionUnusable as exc:
                log.debug("no session for %s: %s", label, exc)
                self.fallbacks += 1
                return None
            except BaseException:
                if session is not None:
                    session.close()
                raise
            if out is None:
                self.fallbacks += 1
            if out is not None and session.healthy():
                with self._lock:
                    self._idle.append(session)
            elif out is not None or session.proc.poll() is not None:
                session.close()
            else:
                with self._lock:  # a job that failed in a live session: the session is still good
                    self._idle.append(session)
            return out

    def _take(self) -> Session | None:
        with self._lock:
            while self._idle:
                s = self._idle.pop()
                if s.healthy():
                    return s
                s.close()
        return None

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for s in idle:
            s.close()


_pools: list[SessionPool] = []
_pools_lock = threading.Lock()


def pool_for(backend: LocalBackend) -> SessionPool:
    """The session pool of ``backend`` (one per backend object, sized by :func:`job_slots` at creation)."""
    with _pools_lock:
        for p in _pools:
            if p.backend is backend:
                return p
        p = SessionPool(backend, job_slots(backend.memory_limit()[0]))
        _pools.append(p)
        return p


def close_all() -> None:
    """End every session of this process (also run at exit)."""
    with _pools_lock:
        pools = list(_pools)
    for p in pools:
        p.close()


atexit.register(close_all)
