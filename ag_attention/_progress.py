"""Progress of long work, on standard error: k of N done, the time elapsed, an estimate of the time left.

Where standard error is a terminal (or in a notebook) it is a tqdm bar, shown
once its work has run for :data:`DELAY` seconds.  Elsewhere (a log file, CI,
``make reproduce > log``) it is a plain line (:class:`Lines`:
``Macaulay2: 3/7 jobs finished, 04:10 elapsed, about 05:30 left``) at most
every :func:`interval` seconds (10, or ``AG_ATTENTION_PROGRESS_INTERVAL``),
the first one after that long, and one more at the end.  Nothing shows inside
:func:`quiet` (the CLI's ``--quiet`` and every ``--json`` run) or with
``AG_ATTENTION_QUIET=1``; standard output is never touched.

>>> with quiet():
...     with bar(total=3, desc="ranks") as b:
...         for _ in range(3):
...             b.update()
...     is_quiet()
True
>>> is_quiet()
False
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from tqdm import autonotebook
from tqdm import std as tqdm_std
from tqdm.auto import tqdm

from ._errors import InvalidArgumentError

T = TypeVar("T")

__all__ = [
    "bar",
    "track",
    "Steps",
    "elapsed",
    "quiet",
    "is_quiet",
    "interval",
    "Lines",
    "on_terminal",
    "ticking",
    "DELAY",
    "INTERVAL",
]

#: seconds of work before a bar shows
DELAY = 2.0

#: seconds between two progress lines off a terminal (``AG_ATTENTION_PROGRESS_INTERVAL`` overrides it)
INTERVAL = 10.0

#: tqdm draws in a notebook's widget (standard error is no terminal there, but a bar is wanted)
_NOTEBOOK = autonotebook.tqdm is not tqdm_std.tqdm

_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("ag_attention_quiet", default=False)


@contextlib.contextmanager
def quiet(on: bool = True) -> Iterator[None]:
    """No progress bars inside this block (``on=False``: no change)."""
    token = _QUIET.set(on or _QUIET.get())
    try:
        yield
    finally:
        _QUIET.reset(token)


def is_quiet() -> bool:
    """Whether progress is silenced here: inside :func:`quiet`, or everywhere with ``AG_ATTENTION_QUIET`` set
    (to anything but ``0``)."""
    return _QUIET.get() or os.environ.get("AG_ATTENTION_QUIET", "0") not in ("", "0")


def interval() -> float:
    """Seconds between two progress lines off a terminal: ``AG_ATTENTION_PROGRESS_INTERVAL``, else
    :data:`INTERVAL`; a value that is not a number of seconds >= 0 is refused by name."""
    env = os.environ.get("AG_ATTENTION_PROGRESS_INTERVAL", "")
    if not env:
        return INTERVAL
    try:
        value = float(env)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1e7:
        raise InvalidArgumentError(
            f"AG_ATTENTION_PROGRESS_INTERVAL={env!r}: must be a number of seconds between two progress lines, >= 0"
        )
    return value


def _clock_text(seconds: float) -> str:
    return str(tqdm_std.tqdm.format_interval(seconds))


class Lines:
    """Progress off a terminal: one plain line on ``stream`` (standard error) at most every ``every`` seconds
    (:func:`interval`; the first after that long), and one at the end when a line was shown or the work took that
    long; with ``each``, also a line as each one finishes (few long jobs); ``verb``: what the count did.  It
    answers what the code calls on a tqdm bar (``update``, ``total``, ``n``, ``set_postfix_str``, ``refresh``,
    ``close``); ``clock`` is injectable.

    >>> import io
    >>> t = iter([0.0, 5.0, 12.0, 30.0, 30.0])
    >>> out = io.StringIO()
    >>> with Lines(total=4, desc="Macaulay2", unit="job", every=10, clock=lambda: next(t), stream=out) as b:
    ...     b.update(1)  # 5 s: too soon
    ...     b.update(1)  # 12 s
    ...     b.update(2)  # 30 s
    >>> print(out.getvalue(), end="")
    Macaulay2: 2/4 jobs finished, 00:12 elapsed, about 00:12 left
    Macaulay2: 4/4 jobs finished, 00:30 elapsed
    """

    def __init__(
        self,
        total: int | None = None,
        desc: str = "",
        unit: str = "it",
        *,
        every: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        stream: Any = None,
        limit: float | None = None,
        each: bool = False,
        verb: str = "finished",
        initial: int = 0,
    ) -> None:
        self.total, self.desc, self.unit, self.n, self.each, self.verb = total, desc, unit, initial, each, verb
        self.initial = initial  # finished before this run (a resumed one): no part of its rate
        self.every = interval() if every is None else every
        self.clock, self.stream, self.limit = clock, stream, limit
        self.start = self._shown_at = self._moved_at = clock()
        self._moved = False
        self.postfix = ""
        self._shown: tuple[int, int | None] | None = None  # (n, total) of the last line
        self._lock = threading.Lock()
        self._closed = False

    def line(self, now: float) -> str:
        """The line for now: k/N finished, elapsed, about how long is left (a timer only: the time and the limit)."""
        spent = now - self.start
        if self.unit == "s" and self.total is None:  # a job waited on (:func:`elapsed`)
            text = f"{self.desc}: {_clock_text(spent)} elapsed"
            return text + ("" if self.limit is None else f" of at most {self.limit:.0f} s")
        units = self.unit if self.unit.endswith("s") or self.unit == "it" else self.unit + "s"
        count = f"{self.n:,}" if self.total is None else f"{self.n:,}/{self.total:,}"
        text = f"{self.desc}: {count} {units} {self.verb}, {_clock_text(spent)} elapsed"
        if self.total is not None and self.initial < self.n < self.total:
            left, still = spent * (self.total - self.n) / (self.n - self.initial), now - self._moved_at
            # the rate so far says how long is left, unless the count stood still for longer than that (the last
            # solutions of a monodromy: the hunt takes longer than all the others did)
            if still > max(left, self.every):
                text += f", the last one {_clock_text(still)} ago, no estimate of the time left"
            else:
                text += f", about {_clock_text(left)} left"
        return text + (f" ({self.postfix})" if self.postfix else "")

    def _now(self) -> float:
        """The clock's reading, also the time of the count's last move if it moved since the last reading."""
        now = self.clock()
        if self._moved:
            self._moved_at, self._moved = now, False
        return now

    def _show(self, now: float) -> None:
        print(self.line(now), file=self.stream or sys.stderr, flush=True)
        self._shown_at, self._shown = now, (self.n, self.total)

    def refresh(self, *args: Any, **kwargs: Any) -> None:
        """A line if the last one (or the start) is :attr:`every` seconds old and not all are finished."""
        with self._lock:
            now = self._now()
            finished = self.total is not None and self.n >= self.total
            if not self._closed and not finished and now - self._shown_at >= self.every:
                self._show(now)

    def update(self, n: int = 1) -> None:
        """``n`` more finished (a line if one is due, or with :attr:`each`)."""
        with self._lock:
            self.n += n
            self._moved |= n > 0  # when: the clock's next reading (one reading a call, as before)
            if self.each and not self._closed:
                self._show(self._now())
                return
        self.refresh()

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """What is under way (the line's end)."""
        self.postfix = s
        if refresh:
            self.refresh()

    def close(self) -> None:
        """The last line: when a line was shown and the count moved since, or when the work took :attr:`every`."""
        with self._lock:
            if self._closed:
                return
            now = self._now()
            moved = self._shown is not None and self._shown != (self.n, self.total)
            if moved or (self._shown is None and now - self.start >= self.every):
                self._show(now)
            self._closed = True

    def __enter__(self) -> Lines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _size() -> dict[str, Any]:
    """tqdm's size arguments: the terminal's own (``dynamic_ncols``), or 80 x 24 where standard error is a
    terminal that reports a size of 0 x 0 (a pty nobody sized: tqdm would then draw nothing at all)."""
    try:
        shape = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return {"dynamic_ncols": True}
    if shape.columns == 0 or shape.lines == 0:
        return {"ncols": shape.columns or 80, "nrows": shape.lines or 24}
    return {"dynamic_ncols": True}


def on_terminal() -> bool:
    """Whether progress is a bar (standard error is a terminal, or a notebook's), not :class:`Lines`."""
    try:
        return _NOTEBOOK or bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no standard error, or a closed one
        return False


def bar(
    total: int | None = None,
    desc: str = "",
    unit: str = "it",
    each: bool = False,
    verb: str = "finished",
    **kwargs: Any,
) -> Any:
    """Progress on standard error: a tqdm bar on a terminal (after :data:`DELAY` seconds), else :class:`Lines`
    (``each``: a line also as each one finishes; ``verb``: ``k/N jobs finished``; ``initial``: the count done
    before, a resumed run's, which the rate leaves out); nothing under :func:`quiet`."""
    if not is_quiet() and not on_terminal():
        return Lines(total, desc, unit, each=each, verb=verb, initial=int(kwargs.get("initial", 0)))
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        delay=DELAY,
        leave=False,
        disable=True if is_quiet() else None,
        **_size(),
        **kwargs,
    )


def track(items: Iterable[T], desc: str, unit: str = "it") -> Iterator[T]:
    """``items`` one by one, with a bar of k of N (and ETA) while they are worked on."""
    items = list(items)
    with bar(total=len(items), desc=desc, unit=unit) as b:
        for item in items:
            yield item
            b.update(1)


class Steps:
    """Named steps of long work on one bar: the step under way is the bar's postfix.

    ``add(n)`` announces ``n`` more steps, ``begin(name)`` starts one (drawn at
    once after :data:`DELAY` seconds: tqdm alone would draw it only at the next
    step), ``end()`` finishes it.  Without a bar (``None``) it records nothing.
    """

    def __init__(self, bar: Any = None) -> None:
        self.bar = bar
        self.start = time.monotonic()

    def add(self, n: int) -> None:
        """``n`` more steps to come."""
        if self.bar is not None:
            self.bar.total = (self.bar.total or 0) + n

    def begin(self, step: str) -> None:
        """``step`` is under way."""
        if self.bar is not None:
            self.bar.set_postfix_str(step, refresh=False)
            if time.monotonic() - self.start >= DELAY:  # refresh() ignores tqdm's delay
                self.bar.refresh()

    def end(self) -> None:
        """The step under way is done."""
        if self.bar is not None:
            self.bar.update()


@contextlib.contextmanager
def elapsed(desc: str, interval: float = 0.5, limit: float | None = None) -> Iterator[None]:
    """A bar without a total showing the elapsed time of a job we wait on (Macaulay2, msolve), and its time
    limit when it has one (``msolve length test (local): 00:12 of at most 30 s``; off a terminal the same as a
    line, :class:`Lines`)."""
    start = time.monotonic()
    suffix = "" if limit is None else f" of at most {limit:.0f} s"
    b = (
        Lines(desc=desc, unit="s", limit=limit)
        if not is_quiet() and not on_terminal()
        else bar(desc=desc, unit="s", bar_format="{desc}: {elapsed}" + suffix)
    )
    with b, ticking(b, interval):
        try:
            yield
        finally:
            b.set_postfix_str(f"{time.monotonic() - start:.1f} s", refresh=False)


@contextlib.contextmanager
def ticking(b: Any, every: float = 0.5) -> Iterator[None]:
    """``b`` (a bar or :class:`Lines`) redrawn every ``every`` seconds while the block runs, so that its elapsed
    time (and a line off a terminal) goes on while nothing finishes: a wait on jobs."""
    stop = threading.Event()
    start = time.monotonic()

    def tick() -> None:
        while not stop.wait(every):
            if time.monotonic() - start >= DELAY:  # refresh() ignores tqdm's delay
                b.refresh()

    t = threading.Thread(target=tick, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()
