"""A guard that turns a hang into a test failure: ``bounded(fn, seconds)`` (no test asserts wall-clock time).

The bound is generous (a loaded machine is slow, not hung); it only exists so
that a regression that blocks for ever fails the test instead of the suite.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

#: seconds after which a call that should return promptly counts as hung
HANG = 60.0


def bounded(fn: Callable[[], T], seconds: float = HANG, release: Callable[[], Any] | None = None) -> T:
    """``fn()``'s value (or its exception), run in a daemon thread; a failure if it is still running after ``seconds``.

    ``release`` is called on a hang, to unblock the thread (e.g. open the other end of a FIFO).
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="bounded")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        if release is not None:
            release()
        pytest.fail(f"still running after {seconds:g} s: a hang")
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
