"""Progress of long work, on standard error, with tqdm (terminal and notebook).

A bar appears only once its work has run for :data:`DELAY` seconds (tqdm's
``delay``), only where standard error is a terminal or in a notebook (tqdm's
``disable=None``), and never inside :func:`quiet` (the CLI's ``--quiet`` and
every ``--json`` run): short calls and piped output stay clean, and standard
output is never touched.

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
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

__all__ = ["bar", "track", "Steps", "elapsed", "quiet", "is_quiet", "DELAY"]

#: seconds of work before a bar shows
DELAY = 2.0

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
    """Whether bars are silenced here."""
    return _QUIET.get()


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


def bar(total: int | None = None, desc: str = "", unit: str = "it", **kwargs: Any) -> Any:
    """A tqdm bar on standard error; silent under :func:`quiet`, shown after :data:`DELAY` seconds."""
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
    limit when it has one (``msolve length test (local): 00:12 of at most 30 s``)."""
    stop = threading.Event()
    start = time.monotonic()
    suffix = "" if limit is None else f" of at most {limit:.0f} s"
    with bar(desc=desc, unit="s", bar_format="{desc}: {elapsed}" + suffix) as b:

        def tick() -> None:
            while not stop.wait(interval):
                if time.monotonic() - start >= DELAY:  # refresh() ignores tqdm's delay
                    b.refresh()

        t = threading.Thread(target=tick, daemon=True)
        t.start()
        try:
            yield
        finally:
            stop.set()
            t.join()
            b.set_postfix_str(f"{time.monotonic() - start:.1f} s", refresh=False)
