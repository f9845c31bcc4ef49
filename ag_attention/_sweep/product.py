"""The ``[product]`` tables of a grid file: their values, how many architectures, the architectures.

The format (the keys, their values, the order of the combinations, what is
skipped) is documented in ``ag_attention._sweep.grid``, which expands a grid's
products with ``_product_axes``, ``_product_count`` and ``_expand``.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .._errors import InvalidArgumentError
from .grid import _PRODUCT_REQUIRED, MAX_RANGE, PRODUCT_KEYS, Spec, _bool, _check_table, _int, _show, _validate

T = TypeVar("T")

__all__: list[str] = []

_RANGE = re.compile(r"\s*([0-9]+)\s*\.\.\s*([0-9]+)\s*", flags=re.ASCII)


@dataclass(frozen=True)
class _Axes:
    depth: tuple[int, ...]
    width: tuple[int, ...]
    rank: tuple[int, ...] | None  # None: "all"
    tokens: tuple[int, ...]
    heads: tuple[int, ...]
    skip: tuple[bool, ...]
    normalized: tuple[bool, ...]
    causal: tuple[bool, ...]


def _int_values(where: str, name: str, value: Any) -> tuple[int, ...]:
    """An integer, a list of integers or an inclusive range ``"LO..HI"``: the values, each at least 1."""
    if isinstance(value, str):
        m = _RANGE.fullmatch(value)
        if m is None:
            raise InvalidArgumentError(
                f"{where}: {name}={_show(value)}: must be an integer, a list of integers, or an inclusive range \"LO..HI\""
            )
        lo, hi = int(m.group(1)), int(m.group(2))
        if lo < 1:
            raise InvalidArgumentError(f"{where}: {name}={_show(value)}: must start at 1 or more")
        if hi < lo:
            raise InvalidArgumentError(f"{where}: {name}={_show(value)}: empty range (LO > HI)")
        if hi - lo + 1 > MAX_RANGE:
            raise InvalidArgumentError(
                f"{where}: {name}={_show(value)}: {hi - lo + 1:,} values, more than the {MAX_RANGE:,} a range may hold"
            )
        return tuple(range(lo, hi + 1))
    return _listed(where, name, value, _int)


def _bool_values(where: str, name: str, value: Any) -> tuple[bool, ...]:
    return _listed(where, name, value, _bool)


def _listed(where: str, name: str, value: Any, convert: Callable[[str, str, Any], T]) -> tuple[T, ...]:
    """One value, or a non-empty list of distinct values, each checked by ``convert``."""
    if isinstance(value, list):
        if not value:
            raise InvalidArgumentError(f"{where}: {name}=[]: an empty list gives no architecture")
        out = tuple(convert(where, f"{name}[{i}]", v) for i, v in enumerate(value))
        if len(set(out)) != len(out):
            raise InvalidArgumentError(f"{where}: {name}={_show(value)}: a value is repeated")
        return out
    return (convert(where, name, value),)


def _product_axes(where: str, name: str, table: Any) -> _Axes:
    _check_table(where, name, table, PRODUCT_KEYS, _PRODUCT_REQUIRED)
    rank_value = table.get("rank", "all")
    rank = None if rank_value == "all" else _int_values(where, f"{name}.rank", rank_value)
    causal = _bool_values(where, f"{name}.causal", table.get("causal", False))
    return _Axes(
        _int_values(where, f"{name}.depth", table["depth"]),
        _int_values(where, f"{name}.width", table["width"]),
        rank,
        _int_values(where, f"{name}.tokens", table["tokens"]),
        _int_values(where, f"{name}.heads", table.get("heads", 1)),
        _bool_values(where, f"{name}.skip", table.get("skip", False)),
        _bool_values(where, f"{name}.normalized", table.get("normalized", False)),
        causal,
    )


def _layer_ranks(axes: _Axes, d_in: int) -> list[int]:
    if axes.rank is None:
        return list(range(1, d_in + 1))
    return [a for a in axes.rank if a <= d_in]


def _capped_power(base: int, exponent: int, cap: int) -> int:
    """``base ** exponent``, or ``cap + 1`` when that is larger (never a huge integer)."""
    if base <= 1 or exponent == 0:
        return 1 if exponent == 0 else base
    value = 1
    for _ in range(exponent):  # at most log2(cap) + 1 rounds before the cap is passed
        value *= base
        if value > cap:
            return cap + 1
    return value


def _product_count(axes: _Axes, cap: int) -> tuple[int, int]:
    """(architectures, layers) of the product before skips (upper bounds on what it builds), by arithmetic.

    A count above ``cap`` comes out as ``cap + 1`` (layers accordingly): nothing is enumerated, no huge
    integer computed, whatever the ranges.
    """
    ranks = sorted(axes.rank) if axes.rank is not None else None
    # the ranks a layer of input width d takes: 1..d ("all"), or the given ones at most d
    per_width = sum(d if ranks is None else bisect.bisect_right(ranks, d) for d in axes.width)
    others = len(axes.tokens) * len(axes.heads) * len(axes.skip) * len(axes.normalized) * len(axes.causal)
    count = layers = 0
    for depth in axes.depth:  # d_0..d_{L-1} each with its ranks, d_L free
        n = min(cap + 1, others * len(axes.width) * _capped_power(per_width, depth, cap))
        count = min(cap + 1, count + n)
        layers += n * depth
        if count > cap:
            break
    return count, layers


def _expand(where: str, name: str, axes: _Axes, progress: Any = None) -> tuple[list[Spec], int]:
    """The product's architectures and how many combinations were skipped (``progress``: a bar of them)."""
    specs: list[Spec] = []
    skipped = 0
    for depth, tokens, heads, skip, normalized, causal in itertools.product(
        axes.depth, axes.tokens, axes.heads, axes.skip, axes.normalized, axes.causal
    ):
        for widths in itertools.product(axes.width, repeat=depth + 1):
            if progress is not None:  # one step per combination counted by _product_count
                progress.update(math.prod(len(_layer_ranks(axes, d)) for d in widths[:-1]))
            if skip and len(set(widths)) != 1:
                skipped += math.prod(len(_layer_ranks(axes, d)) for d in widths[:-1]) or 1
                continue
            choices = [_layer_ranks(axes, d) for d in widths[:-1]]
            if not all(choices):
                skipped += 1
                continue
            first = True
            for ranks in itertools.product(*choices):
                spec = Spec(widths, ranks, tokens, heads, skip, normalized, causal)
                if first:  # once per combination of the other keys: the rest differ only in ranks <= widths
                    _validate(where, name, spec)
                    first = False
                specs.append(spec)
    return specs, skipped
