"""Named arrays to exact matrices: the package's weight names ``layers.<l>.heads.<h>.<Q|K|V|A>``, the biases
``layers.<l>.heads.<h>.<bQ|bK|bV>`` and ``layers.<l>.bO`` (docs/math/affine.md; a vector or a column), each entry an
exact rational (:func:`to_fraction`), the architecture's widths, ranks and biases from the shapes (every
inconsistency named), and ``A`` of bounded rank factored as ``Q^T K``: the steps of
:meth:`~ag_attention._point.weights.Network.from_weights`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._exact import exact_rank, rank_factorization
from .._resources import format_bytes
from .files import tensor_to_numpy

__all__ = [
    "NAME",
    "LAYER_NAME",
    "WEIGHT_NAMES",
    "BIAS_NAMES",
    "biases_of",
    "MAX_ENTRIES",
    "EXACT_BYTES_PER_SQUARE",
    "to_fraction",
    "matrix",
    "has_floats",
    "by_head",
    "chosen_names",
    "check_size",
    "converted",
    "shapes",
    "factored_a",
]

NAME = re.compile(r"^layers\.(0|[1-9][0-9]{0,5})\.heads\.(0|[1-9][0-9]{0,5})\.(Q|K|V|A|bQ|bK|bV)$")
#: a layer's output bias (one per layer, not per head)
LAYER_NAME = re.compile(r"^layers\.(0|[1-9][0-9]{0,5})\.bO$")
WEIGHT_NAMES = ("Q", "K", "V", "A")
#: the biases' names, in the order of ``Architecture.bias``'s letters q, k, v, o
BIAS_NAMES = ("bQ", "bK", "bV", "bO")
#: arrays above this many entries are refused before they are converted to rationals
MAX_ENTRIES = 10_000_000
#: bytes per squared parameter count of an exact local rank: the int64 Jacobian (about 1.1 P x P) and the BLAS
#: rank's float64 copy and temporaries (3 more copies)
EXACT_BYTES_PER_SQUARE = 36


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 60 else f"{text[:40]!r}... ({len(text):,} characters)"


def to_fraction(value: Any, name: str, denominator: int | None = None) -> Fraction:
    """One entry as an exact rational: an integer or Fraction as it is, a float by its exact binary value
    (or rounded to a multiple of ``1/denominator``); anything else, or nan/inf, is an error naming ``name``."""
    if isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(f"{name}: a boolean {value!r} is not a weight")
    if isinstance(value, (int, np.integer)):
        exact = Fraction(int(value))
    elif isinstance(value, Fraction):
        exact = value
    elif isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            raise InvalidArgumentError(f"{name}: {float(value)!r} is not a finite number")
        # the exact value of the float in its own format (a float128 keeps its 64-bit mantissa)
        exact = Fraction(*value.as_integer_ratio())
    else:
        raise InvalidArgumentError(f"{name}: {type(value).__name__} {value!r} is not a number")
    if denominator is not None and exact.denominator > 1:
        exact = Fraction(round(exact * denominator), denominator)
    return exact


def matrix(value: Any, name: str, denominator: int | None, column: bool = False) -> np.ndarray:
    """A 2-d object array of Fractions from an array, a nested list or a tensor (``column``: a bias, a vector of
    ``n`` entries read as an ``n x 1`` column)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor, duck-typed (bf16: through float32)
        value = tensor_to_numpy(value)
    if column and np.ndim(value) == 1:
        value = np.asarray(value if isinstance(value, np.ndarray) else np.array(value, dtype=object))[:, None]
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf" and value.dtype != object:
            raise InvalidArgumentError(f"{name}: an array of {value.dtype} is not an array of numbers")
        arr = value
    else:
        try:
            arr = np.array(value, dtype=object)
        except (ValueError, TypeError) as exc:
            raise InvalidArgumentError(f"{name}: not a matrix ({exc})") from None
    if arr.ndim != 2:
        raise InvalidArgumentError(f"{name}: a matrix is expected, got an array of shape {arr.shape}")
    if arr.size > MAX_ENTRIES:
        raise InvalidArgumentError(f"{name}: {arr.size:,} entries, more than the {MAX_ENTRIES:,} handled exactly")
    if arr.dtype.kind == "f":
        bad = np.argwhere(~np.isfinite(arr))
        if bad.size:
            i, j = (int(x) for x in bad[0])
            raise InvalidArgumentError(
                f"{name}[{i}, {j}] = {float(arr[i, j])!r}: weights must be finite numbers "
                f"({len(bad)} entr{'y is' if len(bad) == 1 else 'ies are'} not)"
            )
    out = np.empty(arr.shape, dtype=object)
    for (i, j), v in np.ndenumerate(arr):
        out[i, j] = to_fraction(v.item() if isinstance(v, np.generic) else v, f"{name}[{i}, {j}]", denominator)
    return out


def _rank(M: np.ndarray) -> int:

    return int(exact_rank(M)) if M.size else 0


def _factor(A: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """``(Q, K)`` with ``Q^T K = A`` exactly, ``rank x d`` each (zero rows below ``rank A``)."""

    d = A.shape[0]
    Q = np.full((rank, d), Fraction(0), dtype=object)
    K = np.full((rank, d), Fraction(0), dtype=object)
    if any(v != 0 for v in A.flat):
        q, k = rank_factorization(A.tolist())  # A = q^T k, q and k: rank A x d
        for i in range(len(q)):
            for j in range(d):
                Q[i, j] = Fraction(q[i][j])
                K[i, j] = Fraction(k[i][j])
    return Q, K


def has_floats(value: Any) -> bool:
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = tensor_to_numpy(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f" or (value.dtype == object and any(isinstance(v, float) for v in value.flat))
    try:
        return any(isinstance(v, (float, np.floating)) for v in np.array(value, dtype=object).flat)
    except (ValueError, TypeError):
        return False


def shapes(
    mats: dict[tuple[int, int], dict[str, np.ndarray]], depth: int, heads: int, use_a: bool
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Widths and ranks from the shapes, every inconsistency named."""
    widths: list[int] = []
    ranks: list[int] = []
    for l in range(depth):
        d_in = d_out = a = None
        for h in range(heads):
            m, where = mats[(l, h)], f"layers.{l}.heads.{h}"
            V = m["V"]
            if d_in is None:
                d_out, d_in = V.shape
                if l > 0 and d_in != widths[-1]:
                    raise InvalidArgumentError(
                        f"{where}.V has {d_in} columns, but layer {l - 1} outputs {widths[-1]} features"
                    )
            if V.shape != (d_out, d_in):
                raise InvalidArgumentError(f"{where}.V has shape {V.shape}, head 0 of layer {l} has {(d_out, d_in)}")
            if use_a:
                if m["A"].shape != (d_in, d_in):
                    raise InvalidArgumentError(
                        f"{where}.A has shape {m['A'].shape}, expected {(d_in, d_in)} (d_in = {d_in}, the columns of V)"
                    )
                a = d_in
            else:
                Q, K = m["Q"], m["K"]
                if a is None:
                    a = Q.shape[0]
                for n, M in (("Q", Q), ("K", K)):
                    if M.shape != (a, d_in):
                        raise InvalidArgumentError(
                            f"{where}.{n} has shape {M.shape}, expected {(a, d_in)} "
                            f"(rank {a} from head 0's Q, d_in = {d_in} from V)"
                        )
            for n, rows in (("bQ", a), ("bK", a), ("bV", d_out), ("bO", d_out)):
                if n in m and m[n].shape != (rows, 1):
                    shown = f"layers.{l}.bO" if n == "bO" else f"{where}.{n}"
                    raise InvalidArgumentError(
                        f"{shown} has {m[n].shape[0]} entries (shape {m[n].shape}), expected {rows} (a bias of the "
                        f"{'queries and keys' if n in ('bQ', 'bK') else 'outputs'})"
                    )
        assert d_in is not None and d_out is not None and a is not None
        if l > 0 and d_in != widths[-1]:
            raise InvalidArgumentError(
                f"layers.{l}.heads.0.V has {d_in} columns, but layer {l - 1} outputs {widths[-1]} features"
            )
        if l == 0:
            widths.append(d_in)
        widths.append(d_out)
        ranks.append(a)
    return tuple(widths), tuple(ranks)


def by_head(weights: Mapping[str, Any]) -> tuple[dict[tuple[int, int], dict[str, Any]], int, int]:
    """The weights by ``(layer, head)`` and name, the depth and the heads: every name checked, every head of
    every layer present, ``A`` never beside ``Q`` and ``K``."""
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for key, value in weights.items():
        match = NAME.fullmatch(key) if isinstance(key, str) else None
        layer = LAYER_NAME.fullmatch(key) if isinstance(key, str) and match is None else None
        if match is None and layer is None:
            raise InvalidArgumentError(
                f"weights: {_shown(str(key))} is not a weight name; expected layers.<l>.heads.<h>.<Q|K|V|A>, a "
                "bias layers.<l>.heads.<h>.<bQ|bK|bV> or layers.<l>.bO"
            )
        if layer is not None:  # the layer's output bias rides with head 0 (as in Architecture.blocks)
            found.setdefault((int(layer.group(1)), 0), {})["bO"] = value
        else:
            assert match is not None
            found.setdefault((int(match.group(1)), int(match.group(2))), {})[match.group(3)] = value
    if not found:
        raise InvalidArgumentError("weights: no arrays named layers.<l>.heads.<h>.<Q|K|V|A>")
    depth = 1 + max(l for l, _ in found)
    heads = 1 + max(h for _, h in found)
    for l in range(depth):
        for h in range(heads):
            if (l, h) not in found:
                raise InvalidArgumentError(
                    f"weights: layers.{l}.heads.{h}.* is missing ({depth} layers and {heads} heads are named)"
                )
    for (l, h), names in sorted(found.items()):
        if "A" in names and ("Q" in names or "K" in names):
            raise InvalidArgumentError(
                f"weights: layers.{l}.heads.{h}.A is not expected beside "
                f"layers.{l}.heads.{h}.Q and .K (give A, V or Q, K, V)"
            )
    return found, depth, heads


def biases_of(found: dict[tuple[int, int], dict[str, Any]]) -> str:
    """The biases the weights give, as ``Architecture.bias`` letters (one set for the whole network: every head of
    every layer gives the same ones, every layer its ``bO`` or none)."""
    letters = {n[1].lower() for names in found.values() for n in names if n in BIAS_NAMES}
    for (l, h), names in sorted(found.items()):
        for letter in sorted(letters):
            n = "b" + letter.upper()
            if n not in names and (letter != "o" or h == 0):
                shown = f"layers.{l}.bO" if letter == "o" else f"layers.{l}.heads.{h}.{n}"
                raise InvalidArgumentError(
                    f"weights: {shown} is missing (another layer or head has one): one set of biases for the "
                    "whole network (a zero bias is a bias)"
                )
    return "".join(c for c in "qkvo" if c in letters)


def chosen_names(found: dict[tuple[int, int], dict[str, Any]], rank: int | None) -> tuple[bool, tuple[str, ...]]:
    """Whether the network gives ``A`` (the same for every head) and the names each head needs (the biases
    :func:`biases_of` finds among them; ``bO`` only for head 0)."""
    av = {names.keys() >= {"A"} for names in found.values()}
    if len(av) != 1:
        raise InvalidArgumentError("weights: some heads give A and others Q, K: choose one for the whole network")
    use_a = av.pop()
    if not use_a and rank is not None:
        raise InvalidArgumentError(f"rank={rank}: only with A (the rank of Q^T K is bounded by the rows of Q)")
    bias = biases_of(found)
    if use_a and bias:
        raise InvalidArgumentError(
            "weights: biases with A: an affine layer is read in its queries and keys (give Q, K, V and the biases)"
        )
    return use_a, (("A", "V") if use_a else ("Q", "K", "V")) + tuple("b" + c.upper() for c in bias)


def check_size(found: dict[tuple[int, int], dict[str, Any]], want: tuple[str, ...], max_parameters: int) -> None:
    """More than ``max_parameters`` parameters refused, from the shapes alone (before any weight is converted)."""
    total = sum(int(np.prod(np.shape(names[n]))) for names in found.values() for n in want if n in names)
    if total > max_parameters:
        raise InvalidArgumentError(
            f"weights: {total:,} parameters, more than the {max_parameters:,} whose exact local rank fits in "
            f"the memory available here (its Jacobian and rank take about {EXACT_BYTES_PER_SQUARE} P^2 bytes: "
            f"{format_bytes(EXACT_BYTES_PER_SQUARE * total**2)}); refused before converting them"
        )


def converted(
    found: dict[tuple[int, int], dict[str, Any]], want: tuple[str, ...], denominator: int | None
) -> tuple[dict[tuple[int, int], dict[str, np.ndarray]], bool]:
    """Every head's matrices as exact rationals (a name missing or not expected refused), and whether any
    weight was a float."""
    floats = False
    mats: dict[tuple[int, int], dict[str, np.ndarray]] = {}
    for (l, h), names in sorted(found.items()):
        here = tuple(n for n in want if n != "bO" or h == 0)  # the output bias is the layer's (head 0 carries it)
        extra = sorted(set(names) - set(here))
        missing = [n for n in here if n not in names]
        if extra:
            raise InvalidArgumentError(
                f"weights: layers.{l}.heads.{h}.{extra[0]} is not expected beside {', '.join(want)}"
            )
        if missing:
            raise InvalidArgumentError(f"weights: layers.{l}.heads.{h}.{missing[0]} is missing")
        mats[(l, h)] = {}
        for n in here:
            value = names[n]
            floats = floats or has_floats(value)
            shown = f"layers.{l}.bO" if n == "bO" else f"layers.{l}.heads.{h}.{n}"
            mats[(l, h)][n] = matrix(value, shown, denominator, column=n in BIAS_NAMES)
    return mats, floats


def factored_a(
    mats: dict[tuple[int, int], dict[str, np.ndarray]], widths: tuple[int, ...], ranks: tuple[int, ...], bound: int
) -> tuple[tuple[int, ...], bool, list[int]]:
    """``A`` of rank at most ``bound`` (refused above it): below the widths, each ``A`` factored as ``Q^T K``
    (``rank x d``, in place) and the ranks, ``use_a`` and the 1-based layers factored returned; else unchanged."""
    for (l, h), m in mats.items():
        r = _rank(m["A"])
        if r > bound:
            raise InvalidArgumentError(f"layers.{l}.heads.{h}.A has rank {r}, above the bound rank={bound}")
    if bound >= max(widths[:-1]):
        return ranks, True, []
    factored: list[int] = []
    for (l, _h), m in mats.items():
        m["Q"], m["K"] = _factor(m.pop("A"), min(bound, widths[l]))
        if l + 1 not in factored:
            factored.append(l + 1)
    return tuple(min(bound, w) for w in widths[:-1]), False, factored
