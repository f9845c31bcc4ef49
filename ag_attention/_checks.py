"""Argument checks shared by every room: each error names the argument and the value it got.

The package's functions check what callers pass before any work starts; these helpers say it once::

    seed = check_int(seed, "seed", minimum=0)
    timeout = check_seconds(timeout)
    metric = check_choice(metric, "metric", METRICS)
    arch = check_type(arch, "arch", Architecture, "an Architecture")

Each raises :class:`~ag_attention.InvalidArgumentError` (exit 2 on the command line) with a message that
starts ``name=value:``.  A ``bool`` is never an integer or a number here (``True`` is a mistake, not 1), and
NumPy's integer scalars are integers.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable
from typing import TypeVar

from ._errors import InvalidArgumentError

__all__ = [
    "MAX_SECONDS",
    "check_choice",
    "check_int",
    "check_path",
    "check_real",
    "check_seconds",
    "check_type",
    "shown",
]

#: the longest time limit accepted (below it, every job's timer is exact)
MAX_SECONDS = 1e7

T = TypeVar("T")


def _bounds(minimum: float | None, maximum: float | None, strict: bool = False) -> str:
    if minimum is not None and maximum is not None:
        return f" strictly between {minimum} and {maximum}" if strict else f" from {minimum} to {maximum}"
    if minimum is not None:
        return f" {'>' if strict else '>='} {minimum}"
    if maximum is not None:
        return f" {'<' if strict else '<='} {maximum}"
    return ""


def check_int(value: object, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an ``int`` within ``[minimum, maximum]`` (either bound may be left open).

    >>> check_int(3, "heads", minimum=1)
    3
    >>> check_int(True, "heads")
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: heads=True: must be an integer
    >>> check_int(0, "heads", minimum=1)
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: heads=0: must be an integer >= 1
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentError(f"{name}={value!r}: must be an integer{_bounds(minimum, maximum)}")
    number = int(value)
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        raise InvalidArgumentError(f"{name}={value!r}: must be an integer{_bounds(minimum, maximum)}")
    return number


def check_real(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict: bool = False,
) -> float:
    """``value`` as a finite ``float`` within ``[minimum, maximum]`` (``strict``: the open interval).

    >>> check_real(0.5, "tolerance", minimum=0, strict=True)
    0.5
    >>> check_real(float("nan"), "tolerance")
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: tolerance=nan: must be a finite number
    """
    where = _bounds(minimum, maximum, strict)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError(f"{name}={value!r}: must be a finite number{where}")
    number = float(value)
    low = minimum is not None and (number <= minimum if strict else number < minimum)
    high = maximum is not None and (number >= maximum if strict else number > maximum)
    if not math.isfinite(number) or low or high:
        raise InvalidArgumentError(f"{name}={value!r}: must be a finite number{where}")
    return number


def check_seconds(value: object, name: str = "timeout") -> float:
    """A time limit in seconds: a number above 0 and below :data:`MAX_SECONDS` (1e7).

    >>> check_seconds(2)
    2.0
    >>> check_seconds("10")
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: timeout='10': must be a number of seconds
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError(f"{name}={value!r}: must be a number of seconds")
    seconds = float(value)
    if not (seconds > 0 and seconds < MAX_SECONDS):
        raise InvalidArgumentError(f"{name}={value!r}: must be a number of seconds, above 0 and below 1e7")
    return seconds


def check_choice(value: T, name: str, choices: Iterable[T]) -> T:
    """``value`` if it is one of ``choices`` (a table's keys, say), else an error listing them.

    >>> check_choice("generic", "metric", ("euclidean", "generic"))
    'generic'
    >>> check_choice("cosine", "metric", ("euclidean", "generic"))
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: metric='cosine': must be one of euclidean, generic
    """
    options = list(choices)
    try:
        if value in options:
            return value
    except TypeError:  # an unhashable or incomparable value is not a choice
        pass
    raise InvalidArgumentError(f"{name}={value!r}: must be one of {', '.join(map(str, options))}")


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters (a message quotes what it got, not a whole data set).

    >>> shown(list(range(100)), 20)
    '[0, 1, 2, 3, 4, 5...'
    """
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ is no reason to lose the error being raised
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_type(value: object, name: str, kind: type[T], expected: str) -> T:
    """``value`` if it is a ``kind``, else an error naming the argument, what is expected and what came.

    Every public function calls it (or a checker built on it, such as
    :func:`~ag_attention._architecture.check_architecture`) on its first argument before any work.

    >>> check_type(3, "arch", str, "a string")
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: arch=3: must be a string, not int
    """
    if not isinstance(value, kind):
        raise InvalidArgumentError(f"{name}={shown(value)}: must be {expected}, not {type(value).__name__}")
    return value


def check_path(value: object, name: str) -> str | os.PathLike[str]:
    """``value`` if it names a file or directory: a non-empty ``str`` or ``os.PathLike`` (of ``str``) without NUL.

    >>> check_path(b"out", "out")
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: out=b'out': must be a path (a str or os.PathLike), not bytes
    >>> check_path("", "out")
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: out='': must be a path, not empty
    """
    if isinstance(value, str):
        text = value
    elif isinstance(value, os.PathLike) and isinstance(os.fspath(value), str):
        text = os.fspath(value)
    else:
        raise InvalidArgumentError(
            f"{name}={shown(value)}: must be a path (a str or os.PathLike), not {type(value).__name__}"
        )
    if not text:
        raise InvalidArgumentError(f"{name}={shown(value)}: must be a path, not empty")
    if "\0" in text:
        raise InvalidArgumentError(f"{name}={shown(value)}: a path cannot hold the character NUL")
    return value
