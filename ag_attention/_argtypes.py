"""argparse converters shared by ``ag-attention`` and ``ag-attention sweep``: errors name the option (exit 2)."""

from __future__ import annotations

import argparse
import math
from typing import Callable

from ._architecture import parse_int
from ._errors import InvalidArgumentError

__all__ = ["integer", "positive_float", "nonempty"]


def integer(name: str) -> Callable[[str], int]:
    """An integer in ASCII digits (argparse reports the error with exit 2)."""

    def conv(text: str) -> int:
        try:
            return parse_int(text, name)
        except InvalidArgumentError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer written with the digits 0-9, got {text!r}") from None

    return conv


def positive_float(name: str) -> Callable[[str], float]:
    """A finite positive number (no nan, inf, 0 or negative)."""

    def conv(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{name} must be a positive finite number, got {text!r}")
        return value

    return conv


def nonempty(name: str) -> Callable[[str], str]:
    """Any text but an empty or blank one."""

    def conv(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{name} must not be empty")
        return text

    return conv
