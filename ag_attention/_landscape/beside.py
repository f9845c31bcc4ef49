"""External jobs (msolve) run beside the numerical work, all within one deadline.

The exact route's jobs (msolve's counts, its real root isolation) are external processes on one core each; the
numerical route (monodromy, the homotopy, the Krawczyk test) runs in this process.  :class:`Beside` runs the jobs
one after another in a thread while the caller works: a count that finishes early becomes a *known count* for the
monodromy (:mod:`ag_attention._numeric.monodromy`), and the whole call ends within its deadline.  Each job gets
what is left of the deadline (at most its own cap); one that cannot start in time is recorded as timed out
without being started.  On Ctrl-C (or any error of the caller) every job's process group is killed
(:func:`ag_attention._m2.process.kill_all_jobs`) before the error goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from .. import _clock
from .._errors import AgAttentionError, MSolveTimeoutError
from .._m2 import kill_all_jobs

__all__ = ["Beside", "Outcome"]

#: a job is not started with less than this many seconds left
MIN_SECONDS = 1.0


@dataclass(frozen=True)
class Outcome:
    """How a job ended: ``"ok"`` (with its value), ``"timed out"`` (after ``seconds``), ``"not started"`` (no time
    was left), ``"abandoned"`` (not needed any more; the value says why), ``"failed"`` (with the error), or
    ``"running"``."""

    state: str
    value: Any = None
    seconds: float = 0.0
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.state == "ok"


#: seconds between looks at a job waited for; seconds a job may run past the deadline before it is killed
POLL, GRACE = 0.2, 2.0


class Beside:
    """Jobs in one thread beside the caller, bounded by ``deadline`` (``_clock.now()``); a context manager."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ag-attention-beside")
        self._jobs: dict[str, tuple[Future[Any], list[float]]] = {}
        self._abandoned: dict[str, str] = {}

    def submit(self, name: str, run: Callable[[float], Any], cap: float | None = None) -> None:
        """Queue ``run(timeout)`` under ``name``; ``timeout`` is what is left of the deadline when it starts (at most
        ``cap``)."""
        spent: list[float] = []

        def job() -> Any:
            if name in self._abandoned:  # dropped before it could start
                spent.append(0.0)
                raise _NotStarted()
            left = self.deadline - _clock.now()
            timeout = left if cap is None else min(cap, left)
            if timeout < MIN_SECONDS:
                spent.append(0.0)
                raise _NotStarted()
            t0 = time.perf_counter()
            try:
                return run(timeout)
            finally:
                spent.append(time.perf_counter() - t0)

        self._jobs[name] = (self._pool.submit(job), spent)

    def outcome(self, name: str) -> Outcome:
        """How ``name`` ended, or ``running``."""
        fut, spent = self._jobs[name]
        if not fut.done():
            return Outcome("running")
        seconds = spent[0] if spent else 0.0
        if name in self._abandoned:
            return Outcome("abandoned", self._abandoned[name], seconds)
        exc = fut.exception()
        if exc is None:
            return Outcome("ok", fut.result(), seconds)
        if isinstance(exc, _NotStarted):
            return Outcome("not started", None, 0.0)
        if isinstance(exc, MSolveTimeoutError):
            return Outcome("timed out", None, seconds, exc)
        return Outcome("failed", None, seconds, exc)

    def value(self, name: str) -> Any:
        """The value of ``name`` if it finished, else None (never waits)."""
        o = self.outcome(name)
        return o.value if o.ok else None

    def wait(self, name: str, timeout: float | None = None) -> Outcome:
        """Wait for ``name`` (it ends by the deadline: each job is bounded by it), or at most ``timeout`` seconds
        (then it may still be ``running``)."""
        fut, _ = self._jobs[name]
        until = None if timeout is None else time.monotonic() + timeout
        while not fut.done():
            try:
                fut.exception(timeout=POLL)
            except TimeoutError:
                pass
            except BaseException:  # pragma: no cover - cancelled
                break
            if not fut.done() and _clock.now() > self.deadline + GRACE:
                # past the deadline (or Ctrl-C) and still running: its process goes now, whatever its own limit
                self.abandon(name, "still running past the time limit: killed")
            if until is not None and time.monotonic() >= until:
                break
        return self.outcome(name)

    def names(self) -> list[str]:
        return list(self._jobs)

    def abandon(self, name: str, why: str) -> None:
        """Drop ``name``: not started yet, it never starts; running, its process group is killed (jobs run one at a
        time, so it is the only one alive).  Its outcome is then ``"abandoned"`` with ``why``."""
        fut, spent = self._jobs[name]
        if fut.done():
            return
        self._abandoned[name] = why
        if not fut.cancel():
            while not fut.done():  # (it may be between its start and its process's: kill until it ends)
                kill_all_jobs()
                try:
                    fut.exception(timeout=0.5)  # its thread sees the job end
                except TimeoutError:
                    continue
                except BaseException:  # pragma: no cover - cancelled meanwhile
                    break

    def raise_failures(self) -> None:
        """Raise the first job's error that is not a timeout (a bug or a contradiction must not pass silently)."""
        for name in self._jobs:
            o = self.outcome(name)
            if o.state == "failed" and o.error is not None:
                raise o.error

    def __enter__(self) -> Beside:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is not None:  # interrupted or failed: the jobs' processes go now, not at their time limits
            for fut, _ in self._jobs.values():
                fut.cancel()
            kill_all_jobs()
        self._pool.shutdown(wait=True, cancel_futures=True)


class _NotStarted(AgAttentionError):
    """No time was left to start the job."""
