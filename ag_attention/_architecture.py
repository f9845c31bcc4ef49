"""Validated description of a lightning (or normalized) self-attention network.

An :class:`Architecture` fixes the sizes of a network and the variant of
attention; it knows nothing about fields, Jacobians or Macaulay2.  It is valid
whenever the network can be built; whether a theorem of the paper applies to
it is a separate question answered by :mod:`ag_attention._models.formulas`.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._checks import check_type
from ._errors import InvalidArchitectureError, InvalidArgumentError
from ._positions import Rotary, rotary_from_dict

__all__ = ["Architecture", "Block", "LayerShape", "PARAMETRIZATIONS", "BIASES", "check_architecture"]

#: ``"QKV"``: queries and keys, ``A = Q^T K`` of rank at most ``a``.
#: ``"AV"``: the attention matrix ``A`` itself, free (``d x d``).
PARAMETRIZATIONS = ("QKV", "AV")

#: the projections that may carry a bias (``bias="qkvo"``): queries, keys, values (each head) and the output (each
#: layer): ``q_i = Q x_i + b_q``, ``k_j = K x_j + b_k``, ``v_j = V x_j + b_v``, ``y_i = sum_h ... + b_o``
#: (docs/math/affine.md)
BIASES = "qkvo"

#: what the constructor accepts for ``widths`` and ``ranks``: an ordered sequence of positive integers
Sizes = Sequence[int] | npt.NDArray[np.integer[Any]]


def _as_int(field_name: str, value: Any) -> int:
    """``value`` as a Python int, or an error naming ``field_name``."""
    if isinstance(value, bool):
        raise InvalidArchitectureError(field_name, value, "must be an integer, not a bool")
    if isinstance(value, float):
        if not value.is_integer():
            raise InvalidArchitectureError(field_name, value, "must be an integer")
        return int(value)
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArchitectureError(field_name, value, "must be an integer") from None


def _as_sizes(field_name: str, values: Any) -> tuple[int, ...]:
    # an ordered sequence only: a set {4, 3} has no order to read widths from
    if isinstance(values, (str, bytes, Set, Mapping)) or not isinstance(values, (Sequence, np.ndarray)):
        raise InvalidArchitectureError(
            field_name, values, "must be an ordered sequence (list or tuple) of positive integers"
        )
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise InvalidArchitectureError(field_name, values, "must be a one-dimensional sequence of positive integers")
    out: list[int] = []
    for i, v in enumerate(values):
        n = _as_int(f"{field_name}[{i}]", v)
        if n < 1:
            raise InvalidArchitectureError(f"{field_name}[{i}]", v, "must be a positive integer")
        out.append(n)
    return tuple(out)


_INTEGER = re.compile(r"[+-]?[0-9]+", flags=re.ASCII)


#: the longest integer a size, a seed or a prime may be written with (sizes far below are refused by value)
MAX_DIGITS = 100


def parse_int(text: str, name: str) -> int:
    """An integer written in ASCII digits (no ``1_0``, no other scripts' digits), or an error naming ``name``."""
    s = str(text).strip()
    if len(s) > MAX_DIGITS:  # before the regex and int(): Python refuses to convert more than 4,300 digits
        raise InvalidArgumentError(
            f"{name}={s[:20]}... ({len(s):,} characters): too large; integers here have at most {MAX_DIGITS} digits"
        )
    if not _INTEGER.fullmatch(s):
        raise InvalidArgumentError(f"{name}={text!r}: must be an integer written with the digits 0-9")
    return int(s)


@dataclass(frozen=True)
class LayerShape:
    """Sizes of one layer: input width, output width, attention rank, heads."""

    index: int  # 1-based, as in the paper
    d_in: int
    d_out: int
    rank: int
    heads: int


@dataclass(frozen=True)
class Block:
    """One weight matrix in the flat parameter vector.

    ``name`` is ``"Q"``, ``"K"``, ``"V"`` or ``"A"``, or a bias ``"bQ"``, ``"bK"``, ``"bV"`` (columns, each head)
    or ``"bO"`` (a column, the layer's: stored as head 0); ``layer`` is 1-based, ``head`` 0-based; entries are
    stored row-major at ``offset``.
    """

    name: str
    layer: int
    head: int
    rows: int
    cols: int
    offset: int

    @property
    def size(self) -> int:
        return self.rows * self.cols

    @property
    def slice(self) -> slice:
        return slice(self.offset, self.offset + self.size)

    @property
    def label(self) -> str:
        h = f"h{self.head + 1}" if self.head else ""
        return f"{self.name}{self.layer}{h}"


def _checked_ranks(sizes: tuple[int, ...], ranks: Sizes | None, parametrization: str) -> tuple[int, ...]:
    """``a_1..a_L``: one per layer; ``None`` only for AV (``a_i = d_{i-1}``); AV's ranks are the widths."""
    depth = len(sizes) - 1
    if ranks is None:
        if parametrization == "QKV":
            raise InvalidArchitectureError("ranks", None, "required for the QKV parametrization")
        rank_sizes = sizes[:-1]
    else:
        rank_sizes = _as_sizes("ranks", ranks)
    if len(rank_sizes) != depth:
        raise InvalidArchitectureError(
            "ranks", ranks, f"needs one rank per layer: {depth} for widths {sizes}, got {len(rank_sizes)}"
        )
    if parametrization == "AV":
        for i, (a, d) in enumerate(zip(rank_sizes, sizes)):
            if a != d:
                raise InvalidArchitectureError(
                    f"ranks[{i}]",
                    a,
                    f"the AV parametrization has A free of rank d_{i}={d}; use parametrization='QKV' for a rank bound",
                )
    return rank_sizes


def _check_flags(sizes: tuple[int, ...], skip: object, normalized: object, causal: object) -> None:
    for name, flag in (("skip", skip), ("normalized", normalized), ("causal", causal)):
        if not isinstance(flag, bool):
            raise InvalidArchitectureError(name, flag, "must be True or False")
    if skip:
        for i in range(len(sizes) - 1):
            if sizes[i] != sizes[i + 1]:
                raise InvalidArchitectureError(
                    "skip", True, f"skip connections need d_{i} = d_{i + 1}, got widths {sizes}"
                )


def _checked_bias(bias: object) -> str:
    """The biased projections as a string in the order of :data:`BIASES` (``True``: all four, ``False``: none)."""
    if bias is True:
        return BIASES
    if bias is False or bias is None:
        return ""
    if not isinstance(bias, str) or any(c not in BIASES for c in bias) or len(set(bias)) != len(bias):
        raise InvalidArchitectureError(
            "bias", bias, f"must be the projections with a bias, a string of distinct letters of {BIASES!r} (or True)"
        )
    return "".join(c for c in BIASES if c in bias)


def _checked_positions(positions: object, parametrization: str, ranks: tuple[int, ...]) -> Rotary | None:
    rotary = rotary_from_dict(positions)
    if rotary is not None:
        if parametrization != "QKV":
            raise InvalidArchitectureError(
                "positions", rotary.describe(), "rotary embeddings turn queries and keys: needs parametrization='QKV'"
            )
        for i, a in enumerate(ranks):
            rotary.check(a, f"ranks[{i}]")
    return rotary


def _checked_temperature(temperature: object) -> float:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.integer, np.floating)):
        raise InvalidArchitectureError("temperature", temperature, "must be a number")
    tau = float(temperature)
    if not (math.isfinite(tau) and tau > 0):
        raise InvalidArchitectureError("temperature", temperature, "must be a positive finite number")
    return tau


@dataclass(frozen=True, init=False)
class Architecture:
    """A self-attention network: widths ``d_0..d_L``, ranks ``a_1..a_L``, ``t`` tokens.

    Parameters
    ----------
    widths:
        ``d_0, ..., d_L`` (at least two entries): layer ``i`` maps
        ``R^{d_{i-1}}``-tokens to ``R^{d_i}``-tokens.
    ranks:
        ``a_1, ..., a_L``: query/key dimension of each layer.  Optional for the
        ``"AV"`` parametrization, where ``A`` is free and ``a_i = d_{i-1}``.
    tokens:
        Sequence length ``t >= 1``.
    parametrization:
        ``"QKV"`` (default) or ``"AV"`` (attention matrix free).
    heads:
        Attention heads per layer (outputs summed); 1 in the paper.
    skip:
        Skip connections ``x_i + phi(X)_i`` (needs equal widths).
    normalized:
        Softmax-normalized attention ``s(u) = exp(u / temperature)``.
    causal:
        A causal mask: token ``i`` attends to tokens ``j <= i`` only
        (``phi(X)_i = sum_{j <= i} ...``); with softmax, normalized over ``j <= i``.
    bias:
        The projections with a bias, letters of ``"qkvo"`` (``True``: all four): affine attention,
        ``q_i = Q x_i + b_q`` and so on (docs/math/affine.md); QKV parametrization only.
    positions:
        Position encoding of the scores: ``None`` (the paper's), ``"rope"`` or a :class:`~ag_attention.Rotary` (rotary
        position embeddings, docs/math/rotary.md); QKV parametrization only.

    Examples
    --------
    >>> Architecture((4, 4, 4), (2, 2), tokens=3).parameter_count
    64
    >>> Architecture((4, 4), (0,), tokens=2)
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArchitectureError: invalid architecture: ranks[0]=0: must be a positive integer
    """

    widths: tuple[int, ...]
    #: always a tuple once constructed: ``None`` (the AV parametrization) becomes ``d_0, ..., d_{L-1}``
    ranks: tuple[int, ...]
    tokens: int = 2
    parametrization: str = "QKV"
    heads: int = 1
    skip: bool = False
    normalized: bool = False
    temperature: float = 1.0
    causal: bool = False
    bias: str = ""
    positions: Rotary | None = None

    def __init__(
        self,
        widths: Sizes,
        ranks: Sizes | None = None,
        tokens: int = 2,
        parametrization: str = "QKV",
        heads: int = 1,
        skip: bool = False,
        normalized: bool = False,
        temperature: float = 1.0,
        causal: bool = False,
        bias: str | bool = "",
        positions: Rotary | str | dict[str, Any] | None = None,
    ) -> None:
        # written out (not the dataclass's __init__) so that ``ranks`` accepts None but the field is a tuple
        sizes = _as_sizes("widths", widths)
        if len(sizes) < 2:
            raise InvalidArchitectureError("widths", widths, "needs at least two entries d_0, d_1 (one layer)")
        if not isinstance(parametrization, str) or parametrization not in PARAMETRIZATIONS:
            raise InvalidArchitectureError(
                "parametrization", parametrization, f"must be one of {', '.join(PARAMETRIZATIONS)}"
            )
        rank_sizes = _checked_ranks(sizes, ranks, parametrization)
        n_tokens = _as_int("tokens", tokens)
        if n_tokens < 1:
            raise InvalidArchitectureError("tokens", tokens, "must be at least 1")
        n_heads = _as_int("heads", heads)
        if n_heads < 1:
            raise InvalidArchitectureError("heads", heads, "must be at least 1")
        _check_flags(sizes, skip, normalized, causal)
        tau = _checked_temperature(temperature)
        biases = _checked_bias(bias)
        if biases and parametrization != "QKV":
            raise InvalidArchitectureError("bias", bias, "biases act on queries and keys: needs parametrization='QKV'")
        rotary = _checked_positions(positions, parametrization, rank_sizes)
        object.__setattr__(self, "widths", sizes)
        object.__setattr__(self, "ranks", rank_sizes)
        object.__setattr__(self, "tokens", n_tokens)
        object.__setattr__(self, "parametrization", parametrization)
        object.__setattr__(self, "heads", n_heads)
        object.__setattr__(self, "skip", skip)
        object.__setattr__(self, "normalized", normalized)
        object.__setattr__(self, "temperature", tau)
        object.__setattr__(self, "causal", causal)
        object.__setattr__(self, "bias", biases)
        object.__setattr__(self, "positions", rotary)

    # ----------------------------------------------------------------- shape
    @property
    def depth(self) -> int:
        """Number of layers ``L``."""
        return len(self.widths) - 1

    @property
    def layers(self) -> tuple[LayerShape, ...]:
        """One ``LayerShape`` per layer (built once: engines ask for it per generator, and a network of
        1,000 layers asked for it thousands of times, quadratic in the depth)."""
        cached = self.__dict__.get("_layers")
        if cached is None:
            cached = tuple(
                LayerShape(i + 1, self.widths[i], self.widths[i + 1], self.ranks[i], self.heads)
                for i in range(self.depth)
            )
            object.__setattr__(self, "_layers", cached)
        return cached

    @property
    def blocks(self) -> tuple[Block, ...]:
        """Weight matrices in the order of the flat parameter vector.

        Built on first use (one object per matrix: ``3 L H`` of them), so a
        description of an absurd size costs nothing until an engine, after its
        arithmetic size checks, asks for its blocks.
        """
        cached = self.__dict__.get("_blocks")
        if cached is None:
            blocks = []
            offset = 0
            for layer in self.layers:
                for h in range(layer.heads):
                    if self.parametrization == "QKV":
                        shapes = [("Q", layer.rank, layer.d_in), ("K", layer.rank, layer.d_in)]
                    else:
                        shapes = [("A", layer.d_in, layer.d_in)]
                    shapes.append(("V", layer.d_out, layer.d_in))
                    shapes += [("b" + x.upper(), n, 1) for x, n in zip("qkv", (layer.rank,) * 2 + (layer.d_out,))]
                    for name, r, c in shapes:
                        if name[0] != "b" or name[1].lower() in self.bias:
                            blocks.append(Block(name, layer.index, h, r, c, offset))
                            offset += r * c
                if "o" in self.bias:
                    blocks.append(Block("bO", layer.index, 0, layer.d_out, 1, offset))
                    offset += layer.d_out
            cached = tuple(blocks)
            object.__setattr__(self, "_blocks", cached)
            object.__setattr__(self, "_block_index", {(b.name, b.layer, b.head): b for b in cached})
        return cached

    def block(self, name: str, layer: int, head: int = 0) -> Block:
        """The weight matrix ``name`` (``"Q"``, ``"K"``, ``"V"`` or ``"A"``) of ``layer`` (1-based), ``head``
        (0-based)."""
        self.blocks  # noqa: B018 - builds the index
        index: dict[tuple[str, int, int], Block] = self.__dict__["_block_index"]
        found = index.get((name, layer, head))
        if found is None:
            names = "Q, K, V" if self.parametrization == "QKV" else "A, V"
            raise InvalidArgumentError(
                f"block ({name!r}, layer={layer!r}, head={head!r}): {self.describe()} has blocks {names} "
                f"in layers 1..{self.depth}, heads 0..{self.heads - 1}"
            )
        return found

    @property
    def parameter_count(self) -> int:
        """Number of real parameters (sum of ``2 a_i d_{i-1} + d_i d_{i-1}`` for QKV), by arithmetic (once)."""
        cached = self.__dict__.get("_parameter_count")
        if cached is None:
            cached = 0
            for layer in self.layers:
                attention = 2 * layer.rank * layer.d_in if self.parametrization == "QKV" else layer.d_in**2
                cached += layer.heads * (attention + layer.d_out * layer.d_in)
                cached += layer.heads * (layer.rank * (("q" in self.bias) + ("k" in self.bias)))
                cached += layer.d_out * (layer.heads * ("v" in self.bias) + ("o" in self.bias))
            object.__setattr__(self, "_parameter_count", cached)
        return int(cached)

    @property
    def output_size(self) -> int:
        """Number of outputs per input sequence, ``t * d_L``."""
        return self.tokens * self.widths[-1]

    @property
    def is_lightning(self) -> bool:
        return not self.normalized

    @property
    def is_plain(self) -> bool:
        """The paper's setting: one head, no skip connections, no causal mask, no biases, no positions."""
        return self.heads == 1 and not self.skip and not self.causal and self.is_linear_attention

    @property
    def is_linear_attention(self) -> bool:
        """The scores are ``x_i^T A x_j`` with one ``A`` and the maps linear: no biases, no positions (the model of
        the paper, docs/math/model.md); affine (``bias``) and rotary (``positions``) layers are not."""
        return not self.bias and self.positions is None

    # ------------------------------------------------------------- printing
    def describe(self) -> str:
        parts = [
            "widths " + ",".join(map(str, self.widths)),
            "ranks " + ",".join(map(str, self.ranks)),
            f"t={self.tokens}",
        ]
        if self.parametrization != "QKV":
            parts.append(f"({self.parametrization})")
        if self.heads != 1:
            parts.append(f"heads={self.heads}")
        if self.skip:
            parts.append("skip")
        if self.causal:
            parts.append("causal")
        if self.bias:
            parts.append(f"bias {self.bias}")
        if self.positions is not None:
            parts.append(self.positions.describe())
        if self.normalized:
            parts.append(f"softmax(tau={self.temperature:g})")
        return " ".join(parts)

    def __str__(self) -> str:
        return self.describe()

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain values (``bias`` and ``positions`` only when set: a paper's network keeps its keys)."""
        out: dict[str, Any] = {
            "widths": list(self.widths),
            "ranks": list(self.ranks),
            "tokens": self.tokens,
            "parametrization": self.parametrization,
            "heads": self.heads,
            "skip": self.skip,
            "normalized": self.normalized,
            "temperature": self.temperature,
            "causal": self.causal,
        }
        if self.bias:
            out["bias"] = self.bias
        if self.positions is not None:
            out["positions"] = self.positions.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Architecture:
        if not isinstance(data, Mapping):
            raise InvalidArchitectureError("data", data, "must be a mapping of field names to values")
        known = {
            "widths",
            "ranks",
            "tokens",
            "parametrization",
            "heads",
            "skip",
            "normalized",
            "temperature",
            "causal",
            "bias",
            "positions",
        }
        unknown = set(data) - known
        if unknown:
            first = sorted(unknown, key=str)[0]
            raise InvalidArchitectureError(
                str(first), data[first], f"unknown field (known: {', '.join(sorted(known))})"
            )
        return cls(**data)

    @classmethod
    def single_layer(cls, d: int, d_out: int, a: int | None = None, tokens: int = 2, **kwargs: Any) -> Architecture:
        """One layer ``R^d -> R^{d'}`` (``a=None``: the AV parametrization, A free)."""
        if a is None:
            return cls((d, d_out), None, tokens, parametrization="AV", **kwargs)
        return cls((d, d_out), (a,), tokens, **kwargs)

    def with_(self, **changes: Any) -> Architecture:
        data = self.to_dict()
        data.update(changes)
        if data["parametrization"] == "AV" and "ranks" not in changes:
            data["ranks"] = None  # A free: the ranks follow the (possibly new) widths
        return Architecture.from_dict(data)


def check_architecture(value: object, name: str = "arch") -> Architecture:
    """``value`` if it is an :class:`Architecture`, else an :class:`~ag_attention.InvalidArgumentError` naming
    ``name`` and what came: the first check of every public function that takes an architecture.

    >>> check_architecture((2, 1))
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: arch=(2, 1): must be an Architecture, not tuple
    """
    return check_type(value, name, Architecture, "an Architecture")


def parse_sizes(text: str, field_name: str) -> tuple[int, ...]:
    """Parse ``"4,4,4"`` into ``(4, 4, 4)``, naming ``field_name`` on error."""
    items = [s.strip() for s in str(text).split(",")]
    if not items or any(s == "" for s in items):
        raise InvalidArchitectureError(field_name, text, "must be a comma-separated list of positive integers")
    out = []
    for i, s in enumerate(items):
        if len(s) > MAX_DIGITS:  # Python refuses int() of more than 4,300 digits
            raise InvalidArchitectureError(
                f"{field_name}[{i}]", f"{s[:20]}... ({len(s):,} digits)", f"too large (at most {MAX_DIGITS} digits)"
            )
        if not _INTEGER.fullmatch(s):
            raise InvalidArchitectureError(
                f"{field_name}[{i}]", s, "must be a positive integer written with the digits 0-9"
            )
        out.append(int(s))
    return _as_sizes(field_name, out)


def sizes(values: Sequence[int]) -> str:
    return ",".join(str(v) for v in values)
