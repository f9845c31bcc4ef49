"""argparse converters shared by ``ag-attention`` and ``ag-attention sweep``: errors name the option (exit 2)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from ._architecture import parse_int
from ._checks import MAX_SECONDS
from ._errors import InvalidArgumentError

__all__ = ["integer", "positive_float", "seconds", "nonempty", "shown", "MAX_SECONDS"]


def shown(text: str, limit: int = 40) -> str:
    """``text`` as an error message quotes it: whole when short, else its start and its length."""
    return repr(text) if len(text) <= limit else f"{text[: limit // 2]!r}... ({len(text):,} characters)"


def integer(name: str, minimum: int | None = None) -> Callable[[str], int]:
    """An integer in ASCII digits, at least ``minimum`` when given (argparse reports the error with exit 2)."""

    def conv(text: str) -> int:
        try:
            value = parse_int(text, name)
        except InvalidArgumentError:
            raise argparse.ArgumentTypeError(
                f"{name} must be an integer written with the digits 0-9 (at most 100 of them), got {shown(text)}"
            ) from None
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be at least {minimum}, got {value}")
        return value

    return conv


def positive_float(name: str) -> Callable[[str], float]:
    """A finite positive number (no nan, inf, 0 or negative)."""

    def conv(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {shown(text)}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{name} must be a positive finite number, got {shown(text)}")
        return value

    return conv


def seconds(name: str) -> Callable[[str], float]:
    """A time limit: a finite positive number of seconds below :data:`MAX_SECONDS` (refused before any work)."""
    positive = positive_float(name)

    def conv(text: str) -> float:
        value = positive(text)
        if value >= MAX_SECONDS:
            raise argparse.ArgumentTypeError(f"{name} must be below {MAX_SECONDS:.0e} seconds, got {shown(text)}")
        return value

    return conv


def nonempty(name: str) -> Callable[[str], str]:
    """Any text but an empty or blank one."""

    def conv(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{name} must not be empty")
        return text

    return conv
