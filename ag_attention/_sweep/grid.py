"""Grid files: which architectures a sweep computes.

A grid file is TOML with these top-level keys (any other key is an error
naming it):

``description``
    Optional free text, copied into the results' metadata and the summary.

``[[architecture]]``
    Zero or more explicit architectures, one table each::

        [[architecture]]
        widths = [4, 2, 4, 4]     # d_0, ..., d_L: required, positive integers, at least two
        ranks = [2, 2, 2]         # a_1, ..., a_L: required, 1 <= a_i <= d_{i-1}
        tokens = 2                # t: required, >= 1
        heads = 1                 # optional (default 1)
        skip = false              # optional (default false); true needs equal widths
        normalized = false        # optional (default false): softmax attention, float64
        causal = false            # optional (default false): token i attends to tokens j <= i only

``[product]`` (or ``[[product]]`` for several)
    Every combination of the values given, in this order (the outermost loop
    first): ``depth``, ``tokens``, ``heads``, ``skip``, ``normalized``,
    ``causal``, the widths ``d_0, ..., d_L`` (lexicographic), the ranks
    ``a_1, ..., a_L`` (lexicographic)::

        [product]
        depth = "2..3"            # L: required
        width = "1..4"            # every d_i independently: required
        rank = "all"              # optional (default "all"): a_i in 1..d_{i-1}
        tokens = 2                # required
        heads = 1                 # optional (default 1)
        skip = false              # optional (default false)
        normalized = false        # optional (default false)
        causal = false            # optional (default false)

    A value of an integer key (``depth``, ``width``, ``rank``, ``tokens``,
    ``heads``) is one integer (``4``), an explicit list of integers
    (``[1, 2, 4]``: exactly these values, in this order, without repeats), or
    an *inclusive* range written as a string ``"LO..HI"`` (``"1..4"`` is 1, 2,
    3, 4).  A list is never read as a range: ``[1, 4]`` is the two values 1
    and 4.  A boolean key takes ``true``, ``false`` or a list of them
    (``[false, true]``).  ``rank`` may also be ``"all"`` (the default): each
    layer's rank runs over ``1..d_{i-1}``, as in ``bench/grid.py``.  Given
    values, layer ``i``'s rank runs over those that are at most ``d_{i-1}``
    (larger ones are skipped for that layer, not an error).  ``skip = true``
    combines only with equal widths (others are skipped).

Every architecture is validated by :class:`ag_attention.Architecture`; a bad
value raises :class:`ag_attention._errors.InvalidArgumentError` naming the file,
the table and the key (``grid.toml: architecture[2].ranks[1]=5: ...``).  The
grid is the explicit architectures, then the products' ones, without
repeats (a repeat is counted in :attr:`Grid.duplicates`, not computed twice).
A grid with no architecture is an error.  Sizes are checked before anything
is read or built, by arithmetic: a grid file must be a regular file of at most
:data:`MAX_GRID_BYTES` bytes (16 MiB; a FIFO or a device is refused, never
read), nested at most as deep as Python's TOML reader can go; a range
``"LO..HI"`` holds at most :data:`MAX_RANGE` values; and a grid holds at most
:data:`MAX_ARCHITECTURES` architectures with at most :data:`MAX_LAYERS` layers
in all.  Each limit is named in its error (an ``InvalidArgumentError``, exit 2).

>>> g = parse_grid({"product": {"depth": 1, "width": "1..2", "tokens": 2}})
>>> [(s.widths, s.ranks) for s in g.specs]
[((1, 1), (1,)), ((1, 2), (1,)), ((2, 1), (1,)), ((2, 1), (2,)), ((2, 2), (1,)), ((2, 2), (2,))]
"""

from __future__ import annotations

import bisect
import hashlib
import importlib
import itertools
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .._architecture import Architecture
from .._errors import InvalidArchitectureError, InvalidArgumentError, brief
from .._progress import bar

__all__ = [
    "Spec",
    "Grid",
    "load_grid",
    "parse_grid",
    "to_architecture",
    "brief",
    "MAX_ARCHITECTURES",
    "MAX_RANGE",
    "MAX_LAYERS",
    "MAX_GRID_BYTES",
    "ARCHITECTURE_KEYS",
    "PRODUCT_KEYS",
    "TOP_LEVEL_KEYS",
]

#: the most architectures one grid may hold (a typo such as ``width = "1..40"`` at depth 3 is refused, not run)
MAX_ARCHITECTURES = 1_000_000
#: the most values one range ``"LO..HI"`` may hold
MAX_RANGE = 10_000
#: the most layers (the sum of the depths) one grid may hold: many deep networks are refused before they are built
MAX_LAYERS = 4_000_000
#: the largest grid file read (16 MiB)
MAX_GRID_BYTES = 16 * 1024 * 1024
#: the longest value quoted in an error message (longer ones are cut, saying how long they were)
_SHOW = 80

TOP_LEVEL_KEYS = ("description", "architecture", "product")
ARCHITECTURE_KEYS = ("widths", "ranks", "tokens", "heads", "skip", "normalized", "causal")
_ARCHITECTURE_REQUIRED = ("widths", "ranks", "tokens")
PRODUCT_KEYS = ("depth", "width", "rank", "tokens", "heads", "skip", "normalized", "causal")
_PRODUCT_REQUIRED = ("depth", "width", "tokens")


@dataclass(frozen=True, order=True)
class Spec:
    """One architecture of a grid: the key of its row in the results (no two rows share one)."""

    widths: tuple[int, ...]
    ranks: tuple[int, ...]
    tokens: int
    heads: int = 1
    skip: bool = False
    normalized: bool = False
    causal: bool = False

    @property
    def depth(self) -> int:
        return len(self.widths) - 1

    def describe(self) -> str:
        """``widths 4,2,4 ranks 2,2 t=3`` (a deep network's lists cut: ``widths 4,4,4,4,4,4,...,4 (1,201 widths)``)."""
        parts = [
            f"widths {_listing(self.widths, 'widths')}",
            f"ranks {_listing(self.ranks, 'ranks')}",
            f"t={self.tokens}",
        ]
        if self.heads != 1:
            parts.append(f"heads={self.heads}")
        parts += [name for name in ("skip", "normalized", "causal") if getattr(self, name)]
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "widths": list(self.widths),
            "ranks": list(self.ranks),
            "tokens": self.tokens,
            "heads": self.heads,
            "skip": self.skip,
            "normalized": self.normalized,
            "causal": self.causal,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Spec:
        """The key of a stored row (the columns of ``to_dict()``)."""
        return cls(
            tuple(int(w) for w in row["widths"]),
            tuple(int(a) for a in row["ranks"]),
            int(row["tokens"]),
            int(row["heads"]),
            bool(row["skip"]),
            bool(row["normalized"]),
            bool(row["causal"]),
        )


def _listing(values: Sequence[int], name: str, head: int = 6) -> str:
    """``4,2,4``; more than ``head + 2`` values: the first ``head``, ``...``, the last, and how many."""
    if len(values) <= head + 2:
        return ",".join(map(str, values))
    return f"{','.join(map(str, values[:head]))},...,{values[-1]} ({len(values):,} {name})"


def to_architecture(spec: Spec) -> Architecture:
    """The :class:`Architecture` of ``spec``."""
    return Architecture(
        spec.widths,
        spec.ranks,
        tokens=spec.tokens,
        heads=spec.heads,
        skip=spec.skip,
        normalized=spec.normalized,
        causal=spec.causal,
    )


@dataclass(frozen=True)
class Grid:
    """The architectures of a grid file, in order and without repeats."""

    specs: tuple[Spec, ...]
    source: str = "<grid>"
    description: str = ""
    #: architectures listed more than once (explicitly or by overlapping products), computed once
    duplicates: int = 0
    #: SHA-256 of the file's bytes ("" for a grid given as data)
    sha256: str = ""
    #: product combinations skipped as documented (rank above its width, skip with unequal widths)
    skipped: int = field(default=0, compare=False)

    def __len__(self) -> int:
        return len(self.specs)

    def __iter__(self) -> Iterator[Spec]:
        return iter(self.specs)


# ------------------------------------------------------------------ reading
def _toml_loads(text: str) -> Any:
    """``tomllib.loads`` (Python 3.11+) or ``tomli.loads`` (3.10), with its decode error type."""
    module = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
    return module.loads(text)


def _show(value: Any) -> str:
    """``repr(value)``, cut to :data:`_SHOW` characters (a grid's values can be long or deeply nested)."""
    try:
        text = repr(value)
    except RecursionError:
        return f"<a value nested too deeply to print ({type(value).__name__})>"
    if len(text) <= _SHOW:
        return text
    return f"{text[:_SHOW]}... ({len(text):,} characters)"


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _read_grid_file(p: Path) -> bytes:
    """The bytes of ``p``: a regular file of at most MAX_GRID_BYTES, opened without blocking (a FIFO does not wait)."""
    where = f"grid file {str(p)!r}"
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InvalidArgumentError(f"{where}: cannot be read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "a special file")
            raise InvalidArgumentError(f"{where}: cannot be read: not a regular file ({kind})")
        size = os.fstat(fd).st_size
        if size > MAX_GRID_BYTES:
            raise InvalidArgumentError(
                f"{where}: {size:,} bytes, larger than the {MAX_GRID_BYTES // 2**20} MiB a grid file may have"
            )
        chunks = []
        left = MAX_GRID_BYTES + 1  # a file that grows while read is refused too
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise InvalidArgumentError(f"{where}: cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > MAX_GRID_BYTES:
        raise InvalidArgumentError(f"{where}: larger than the {MAX_GRID_BYTES // 2**20} MiB a grid file may have")
    return raw


def load_grid(path: str | os.PathLike[str]) -> Grid:
    """Read and expand the grid file ``path`` (errors name the file, the key and the value)."""
    p = Path(path)
    raw = _read_grid_file(p)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgumentError(f"grid file {str(p)!r}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        data = _toml_loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError derives from ValueError
        raise InvalidArgumentError(f"grid file {str(p)!r}: not valid TOML: {exc}") from None
    except RecursionError:
        raise InvalidArgumentError(
            f"grid file {str(p)!r}: arrays or tables nested too deeply for the TOML reader (a grid needs two levels)"
        ) from None
    return parse_grid(data, source=str(p), sha256=hashlib.sha256(raw).hexdigest())


def parse_grid(data: Mapping[str, Any], *, source: str = "<grid>", sha256: str = "") -> Grid:
    """Expand a grid given as data (what a grid file's TOML reads as)."""
    where = source
    if not isinstance(data, Mapping):
        raise InvalidArgumentError(f"{where}: must be a table of keys {', '.join(TOP_LEVEL_KEYS)}")
    _check_keys(where, "", data, TOP_LEVEL_KEYS)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise InvalidArgumentError(f"{where}: description={_show(description)}: must be a string")
    specs: list[Spec] = []
    explicit = data.get("architecture", [])
    if isinstance(explicit, Mapping):
        explicit = [explicit]  # [architecture] (one table) as well as [[architecture]]
    if not isinstance(explicit, list):
        raise InvalidArgumentError(f"{where}: architecture={_show(explicit)}: must be [[architecture]] tables")
    products = data.get("product", [])
    if isinstance(products, Mapping):
        products = [products]
    if not isinstance(products, list):
        raise InvalidArgumentError(f"{where}: product={_show(products)}: must be a [product] table")
    # sizes first, by arithmetic: nothing is built before the whole grid is known to fit
    total = len(explicit)
    layers = sum(
        len(t["widths"]) - 1
        for t in explicit
        if isinstance(t, Mapping) and isinstance(t.get("widths"), list) and t["widths"]
    )
    _check_size(where, "architecture", len(explicit), total, layers)
    names = ["product" if len(products) == 1 else f"product[{j}]" for j in range(len(products))]
    axes = [_product_axes(where, name, table) for name, table in zip(names, products)]
    for name, ax in zip(names, axes):
        count, deep = _product_count(ax, MAX_ARCHITECTURES)
        total += count
        layers += deep
        _check_size(where, name, count, total, layers)
    skipped = 0
    # near the limits this takes seconds (820,125 networks: about 5 s): a bar after 2 s on a terminal
    with bar(total=total, desc=f"{where}: expanding", unit="network") as progress:
        for i, table in enumerate(explicit):
            specs.append(_explicit(where, f"architecture[{i}]", table))
            progress.update()
        for name, ax in zip(names, axes):
            made, skip_count = _expand(where, name, ax, progress)
            specs.extend(made)
            skipped += skip_count
    unique = list(dict.fromkeys(specs))
    if not unique:
        if not explicit and not products:
            raise InvalidArgumentError(f"{where}: the grid is empty: no [[architecture]] table and no [product] table")
        raise InvalidArgumentError(
            f"{where}: the grid is empty: its products give no architecture "
            f"({skipped} combinations skipped: ranks above their widths, or skip with unequal widths)"
        )
    return Grid(tuple(unique), source, description, len(specs) - len(unique), sha256, skipped)


def _check_size(where: str, name: str, count: int, total: int, layers: int) -> None:
    """Refuse a grid of more than MAX_ARCHITECTURES architectures or MAX_LAYERS layers (``count``: ``name``'s)."""
    if total > MAX_ARCHITECTURES:
        # a count above the limit is not computed further (it comes out as the limit + 1)
        size = "" if count > MAX_ARCHITECTURES else f" {count:,} architectures (grid total {total:,}),"
        raise InvalidArgumentError(
            f"{where}: {name} expands to{size} more than the {MAX_ARCHITECTURES:,} architectures a sweep takes: "
            "narrow its ranges"
        )
    if layers > MAX_LAYERS:
        raise InvalidArgumentError(
            f"{where}: {name}: the grid's architectures have {layers:,} layers in all, more than the "
            f"{MAX_LAYERS:,} layers a sweep takes: fewer or shallower networks"
        )


def _check_keys(where: str, table: str, data: Mapping[str, Any], known: Sequence[str]) -> None:
    for key in data:
        if key not in known:
            name = f"{table}.{key}" if table else str(key)
            scope = " in " + table.split("[")[0] if table else ""
            raise InvalidArgumentError(
                f"{where}: {name}={_show(data[key])}: unknown key (known{scope}: {', '.join(known)})"
            )


def _int(where: str, name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{where}: {name}={_show(value)}: must be an integer")
    if value < minimum:
        raise InvalidArgumentError(f"{where}: {name}={_show(value)}: must be at least {minimum}")
    return value


def _bool(where: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(f"{where}: {name}={_show(value)}: must be true or false")
    return value


def _check_table(where: str, name: str, table: Any, known: Sequence[str], required: Sequence[str]) -> None:
    """``table`` is a table with only ``known`` keys and every ``required`` one."""
    if not isinstance(table, Mapping):
        raise InvalidArgumentError(f"{where}: {name}={_show(table)}: must be a table")
    _check_keys(where, name, table, known)
    for key in required:
        if key not in table:
            raise InvalidArgumentError(f"{where}: {name}: missing key {key!r} (required: {', '.join(required)})")


def _explicit(where: str, name: str, table: Any) -> Spec:
    _check_table(where, name, table, ARCHITECTURE_KEYS, _ARCHITECTURE_REQUIRED)
    sizes: dict[str, tuple[int, ...]] = {}
    for key in ("widths", "ranks"):
        value = table[key]
        if not isinstance(value, list) or not value:
            raise InvalidArgumentError(
                f"{where}: {name}.{key}={_show(value)}: must be a non-empty list of positive integers"
            )
        sizes[key] = tuple(_int(where, f"{name}.{key}[{i}]", v) for i, v in enumerate(value))
    widths, ranks = sizes["widths"], sizes["ranks"]
    if len(widths) < 2:
        raise InvalidArgumentError(
            f"{where}: {name}.widths={list(widths)}: needs at least two entries d_0, d_1 (one layer)"
        )
    if len(ranks) != len(widths) - 1:
        raise InvalidArgumentError(
            f"{where}: {name}.ranks={list(ranks)}: needs one rank per layer, "
            f"{len(widths) - 1} for widths {list(widths)}"
        )
    for i, (a, d) in enumerate(zip(ranks, widths)):
        if a > d:
            raise InvalidArgumentError(
                f"{where}: {name}.ranks[{i}]={a}: the rank of layer {i + 1} exceeds its input width d_{i}={d} "
                "(a grid needs a_i <= d_{i-1})"
            )
    spec = Spec(
        widths,
        ranks,
        _int(where, f"{name}.tokens", table["tokens"]),
        _int(where, f"{name}.heads", table.get("heads", 1)),
        _bool(where, f"{name}.skip", table.get("skip", False)),
        _bool(where, f"{name}.normalized", table.get("normalized", False)),
        _bool(where, f"{name}.causal", table.get("causal", False)),
    )
    _validate(where, name, spec)
    return spec


def _validate(where: str, name: str, spec: Spec) -> None:
    """Build the architecture once, so that every error names the table it came from."""
    try:
        to_architecture(spec)
    except InvalidArchitectureError as exc:
        raise InvalidArgumentError(f"{where}: {name}.{exc.field}={_show(exc.value)}: {exc.reason}") from None
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(f"{where}: {name}.{exc}") from None


# ------------------------------------------------------------------ products
# The [product] tables: their values (_product_axes), how many architectures by arithmetic (_product_count), and
# the architectures (_expand), in the order the module docstring gives.

T = TypeVar("T")

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
                f"{where}: {name}={_show(value)}: must be an integer, a list of integers, "
                'or an inclusive range "LO..HI"'
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
