"""The package's clock: every deadline is a reading of :func:`now`, and Ctrl-C is a deadline that arrives now.

One room owns the time limits.  Every in-process deadline of the package is a value of :func:`now` (a
``time.monotonic()`` reading, the same scale), compared with :func:`now` at the checks between pieces of work.
Inside :func:`interruptible` (every landscape computation with a time limit runs in it), the first Ctrl-C (SIGINT)
does not raise: it marks the run interrupted and moves this clock past every deadline, and what
:func:`on_interrupt` registered runs in a thread of its own (the process room kills the external jobs under way),
so the work stops at its next check exactly as at a time limit and returns what it found, said "interrupted"
(:func:`interrupted`).  A second Ctrl-C raises :class:`KeyboardInterrupt` as usual.  SIGTERM (what a batch
system or ``kill`` sends to stop a job) is taken as the first Ctrl-C, when Python's default is in place: the work
stops at its next check, its state is saved (``--save``) and what it found is returned; a second SIGTERM ends the
process at once (exit status 143).

A computation that stops at a limit must stop well-formed wherever the limit comes: the tests move this clock past
every deadline, or interrupt, at the k-th reading for seeded random k (``tests/numeric/test_limits.py``), which is
why no module reads ``time.monotonic()`` for a deadline itself.

>>> d = now() + 60.0
>>> now() < d, interrupted()
(True, False)
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["now", "after", "wall", "interrupted", "interrupt", "on_interrupt", "interruptible", "PAST"]

#: how far the clock moves at an interruption: past every deadline a run can have (time limits are at most 1e7 s)
PAST = 1e9

_offset = 0.0
_interrupted = False
_depth = 0
_lock = threading.Lock()
_on_interrupt: list[Callable[[], None]] = []


def now() -> float:
    """Seconds on the package's clock (``time.monotonic()``, moved past every deadline after an interruption)."""
    return time.monotonic() + _offset


def after(seconds: float) -> float:
    """The deadline ``seconds`` from now; one that has passed if the run was interrupted already (a deadline taken
    after a Ctrl-C must not start a new run of the full time: measured, a Ctrl-C during the set-up before a
    command's deadline was taken ran the command for minutes).

    >>> after(60.0) > now()
    True
    """
    return now() if _interrupted else now() + seconds


def wall(deadline: float | None) -> float | None:
    """``deadline`` (a reading of :func:`now`) as a ``time.time()``: what a Dask worker in another process can
    compare with its own clock.  After an interruption it has passed."""
    return None if deadline is None else time.time() + (deadline - now())


def interrupted() -> bool:
    """Whether the run under way was interrupted (Ctrl-C inside :func:`interruptible`)."""
    return _interrupted


def interrupt() -> None:
    """Mark the run interrupted: every deadline read from now on has passed, and the external jobs under way are
    killed (in a thread of its own, so that this may run in a signal handler)."""
    global _offset, _interrupted
    _interrupted = True
    _offset = PAST
    for action in list(_on_interrupt):
        threading.Thread(target=action, name="ag-attention-interrupt", daemon=True).start()


def on_interrupt(action: Callable[[], None]) -> None:
    """Run ``action`` (in a thread of its own) at every interruption: the process room registers the killing of
    the external jobs under way (:func:`ag_attention._m2.process.kill_all_jobs`)."""
    if action not in _on_interrupt:
        _on_interrupt.append(action)


def _handler(signum: int, frame: Any) -> None:
    if _interrupted:
        if signum == signal.SIGTERM:
            raise SystemExit(128 + signal.SIGTERM)
        raise KeyboardInterrupt
    interrupt()


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Run the body with Ctrl-C as a deadline (module docstring); the clock and the mark are reset at its end.
    Nested uses share the outermost; outside the main thread, or when SIGINT is not Python's default handler (the
    caller handles it), the body runs unchanged and Ctrl-C raises :class:`KeyboardInterrupt` as before."""
    global _depth, _offset, _interrupted
    main = _depth == 0 and threading.current_thread() is threading.main_thread()
    install = main and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    terminate = main and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    previous = signal.signal(signal.SIGINT, _handler) if install else None
    previous_term = signal.signal(signal.SIGTERM, _handler) if terminate else None
    with _lock:
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            outermost = _depth == 0
        if install:
            signal.signal(signal.SIGINT, previous)
        if terminate:
            signal.signal(signal.SIGTERM, previous_term)
        if outermost:
            _offset = 0.0
            _interrupted = False
