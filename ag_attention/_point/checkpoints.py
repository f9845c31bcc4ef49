"""Checkpoints as people save them: the attention weights found under their usual names, mapped to the model.

Recognized, per attention layer (a *prefix* such as ``layers.0.self_attn.`` or ``encoder.layer.3.attention.``;
layers are ordered by the integers in their prefixes):

* ``torch.nn.MultiheadAttention``: ``in_proj_weight`` (``3E x E``: ``W_q``, ``W_k``, ``W_v`` stacked), or
  ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` (separate key/value sizes); ``out_proj.weight``;
* per-projection modules: ``q_proj``/``k_proj``/``v_proj`` with ``o_proj`` or ``out_proj``, and
  ``query``/``key``/``value`` (with ``output.dense`` or ``output``), each ``.weight``;
* a user mapping ``names`` (source name -> ``q``, ``k``, ``v``, ``o`` of a layer, e.g.
  ``{"blk.attn.wq": "layers.0.q", ...}``), applied first.

Every other tensor (embeddings, norms, MLPs, biases that are exactly zero) is listed as not used, every one by
its name (escaped: :func:`~ag_attention._point.safetensors.shown_name`), never silently dropped or used. A nonzero
bias of a projection (``in_proj_bias``, ``q_proj.bias``, ..., and ``<name>.bias`` beside any weight
``<name>.weight`` used, such as BERT's ``attention.output.dense.bias``) is refused by name: the model has none
(docs/math/model.md), affine attention is not modelled. Two layouts for the same projection of a layer
(``in_proj_weight`` beside ``q_proj_weight``) are refused naming both: which one the model uses is not in the file.

**How the projections enter the model** (docs/math/point.md, checkpoints): with ``h`` heads of size ``d_h = E/h``
and ``W_{q,h}``, ``W_{k,h}``, ``W_{v,h}`` the rows of head ``h`` and ``W_{O,h}`` the columns of head ``h`` of the
output projection, a lightning (softmax removed) multi-head layer computes
``y_i = sum_h W_{O,h} W_{v,h} sum_j (x_i^T W_{q,h}^T W_{k,h} x_j) x_j / sqrt(d_h)``. So head ``h`` is the package's
head with ``Q = W_{q,h}``, ``K = W_{k,h}`` (rank bound ``a = d_h``) and ``V = W_{O,h} W_{v,h}`` (``E x E``, the
product taken exactly in rationals); no output projection is ``W_O = I`` (the heads' outputs concatenated). The
score scale ``1/sqrt(d_h)`` is dropped: it multiplies the function by a constant, and the neuromanifold is a cone
(every verdict at ``phi`` holds at ``c phi``; the forward pass of the mapped network is the checkpoint's times
``sqrt(d_h)``). What the folding changes: the factored layer has ``V`` of rank at most ``d_h`` and the extra
symmetries ``(W_{O,h} M^{-1}, M W_{v,h})``; the package analyses the folded point in the parametrization with ``V``
free (its neuromanifold contains the factored one, equal when ``d_h >= E``), and says so in a note.

The number of heads is not stored in a state dict: it is given (``heads=``), or read from a ``.safetensors``
file's ``__metadata__`` (``"heads"``), or refused when the layout needs it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .safetensors import loads_json, shown_name

__all__ = ["attention_entries", "Translation", "translate", "PACKAGE_NAME", "read_names_file", "MAX_NAMES_BYTES"]

PACKAGE_NAME = re.compile(r"^layers\.\d+\.heads\.\d+\.(Q|K|V|A)$")
_PACKAGE_LAYER = re.compile(r"^layers\.\d+\.heads\.\d+\.")

# suffix -> (role, how): role q/k/v/o/qkv, or a bias of it
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("in_proj_weight", "qkv"), ("in_proj_bias", "qkv bias"),
    ("q_proj_weight", "q"), ("k_proj_weight", "k"), ("v_proj_weight", "v"),
    ("out_proj.weight", "o"), ("out_proj.bias", "o bias"),
    ("q_proj.weight", "q"), ("k_proj.weight", "k"), ("v_proj.weight", "v"), ("o_proj.weight", "o"),
    ("q_proj.bias", "q bias"), ("k_proj.bias", "k bias"), ("v_proj.bias", "v bias"), ("o_proj.bias", "o bias"),
    ("query.weight", "q"), ("key.weight", "k"), ("value.weight", "v"),
    ("query.bias", "q bias"), ("key.bias", "k bias"), ("value.bias", "v bias"),
)


#: a names file larger than this is refused unread (a mapping of thousands of tensor names takes a few hundred kB)
MAX_NAMES_BYTES = 1 << 20


def read_names_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """A names file (the CLI's ``--names FILE``): a JSON object of source tensor name -> ``layers.<l>.<q|k|v|o>``.

    Read only from a regular file of at most :data:`MAX_NAMES_BYTES` (1 MiB): it is opened without blocking and
    checked (``fstat``) before a byte is read, so a FIFO never hangs and ``/dev/zero`` is never read until memory
    runs out; the JSON is parsed strictly (:func:`~ag_attention._point.safetensors.loads_json`: nesting limited,
    no key twice). Every failure is an :class:`InvalidArgumentError` naming the path.
    """
    where = f"--names {os.fspath(path)}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InvalidArgumentError(f"{where}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InvalidArgumentError(f"{where}: not a regular file (a FIFO, a device or a directory is never read)")
        if st.st_size > MAX_NAMES_BYTES:
            raise InvalidArgumentError(f"{where}: {st.st_size:,} bytes, more than the {MAX_NAMES_BYTES:,} (1 MiB) a "
                                       "names file may have")
        chunks, size = [], 0
        while size <= MAX_NAMES_BYTES:
            chunk = os.read(fd, MAX_NAMES_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InvalidArgumentError(f"{where}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > MAX_NAMES_BYTES:  # it grew while it was read
        raise InvalidArgumentError(f"{where}: more than the {MAX_NAMES_BYTES:,} bytes (1 MiB) a names file may have")
    names = loads_json(b"".join(chunks), where)
    if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        raise InvalidArgumentError(f"{where}: a JSON object of tensor name -> \"layers.<l>.<q|k|v|o>\" is expected")
    return names


def attention_entries(arrays: dict[str, Any], names: dict[str, str] | None = None) -> int:
    """Entries of the weight tensors a translation reads (no biases, no ignored tensors), from their shapes alone.

    The parameters of the network they make are at least 3/4 of it: with ``E``
    the embedding and ``H`` heads the four projections hold ``4 E^2`` entries
    and the network ``(2 + H) E^2`` parameters, so a check against this bound
    can refuse a file before any weight is converted without refusing one that fits.
    """
    total = 0
    for key, value in arrays.items():
        role = None
        if names is not None and key in names:
            role = "mapped"
        else:
            for suffix, r in _SUFFIXES:
                if key == suffix or key.endswith("." + suffix):
                    role = r
                    break
        if role is None or role.endswith("bias"):
            continue
        total += int(np.prod(np.shape(value)))
    return total


@dataclass(frozen=True)
class Translation:
    """The package's weights from a checkpoint, with what was recognized and what was ignored."""

    weights: dict[str, np.ndarray]  # layers.{l}.heads.{h}.{Q,K,V}: object arrays of Fractions
    layout: str  # "package names", "MultiheadAttention", "q/k/v/o projections", "query/key/value", "mapping"
    layers: tuple[str, ...]  # the source prefix of each layer, in order
    ignored: tuple[str, ...]  # tensors not used
    notes: tuple[str, ...]
    head_sizes: tuple[int, ...] = ()  # d_h of each layer (the dropped score scale is 1/sqrt(d_h))


def _is_zero(value: Any) -> bool:
    arr = np.asarray(value)
    return bool(arr.size == 0 or not np.any(arr.astype(np.float64) != 0))


def _layer_key(prefix: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", prefix))


#: roles that give the same projection of a layer: two of them is a file with two competing layouts
_SAME_PROJECTION = {"qkv": ("qkv", "q", "k", "v"), "q": ("q", "qkv"), "k": ("k", "qkv"), "v": ("v", "qkv"), "o": ("o",)}
_ROLE_NAMES = {"qkv": "stacked query/key/value", "q": "query", "k": "key", "v": "value", "o": "output"}


def _role_of(key: str, names: dict[str, str] | None) -> tuple[str, str, str] | None:
    """``(layer prefix, role, layout)`` of a tensor name (role ``q``, ``k``, ``v``, ``o``, ``qkv``, or one of
    them followed by `` bias``), or None when it is not an attention weight."""
    if names is not None and key in names:
        m = re.fullmatch(r"layers\.(\d{1,6})\.(q|k|v|o)", names[key])
        if m is None:
            raise InvalidArgumentError(f"names: {key!r} -> {names[key]!r}: the target must be "
                                       "'layers.<l>.<q|k|v|o>'")
        return f"layers.{int(m.group(1)):06d}", m.group(2), "mapping"
    for suffix, role in _SUFFIXES:
        if key == suffix or key.endswith("." + suffix):
            layout = ("MultiheadAttention" if suffix in ("in_proj_weight", "in_proj_bias")
                      or suffix.endswith("_proj_weight") else
                      "query/key/value" if suffix.split(".")[0] in ("query", "key", "value") else
                      "q/k/v/o projections")
            return key[: len(key) - len(suffix)], role, layout
    return None


def _where(prefix: str) -> str:
    return shown_name(prefix) if prefix else "(top level)"


def _add(roles: dict[str, dict[str, Any]], sources: dict[tuple[str, str], str], prefix: str, role: str, key: str,
         value: Any) -> None:
    """Record ``key`` as the ``role`` weight of the layer ``prefix``; a second one, or one of a competing layout
    (``in_proj_weight`` beside ``q_proj_weight``), is refused naming both (never one silently dropped)."""
    layer = roles.setdefault(prefix, {})
    for other in _SAME_PROJECTION[role]:
        if other in layer:
            first = shown_name(sources[(prefix, other)])
            if other == role:
                raise InvalidArgumentError(f"{shown_name(key)}: a second {role!r} weight for the layer "
                                           f"{_where(prefix)} (first: {first})")
            raise InvalidArgumentError(f"layer {_where(prefix)}: two layouts give the {_ROLE_NAMES[role]} "
                                       f"projection: {first} ({_ROLE_NAMES[other]}) and {shown_name(key)} "
                                       f"({_ROLE_NAMES[role]}); which one the model uses is not in the file: keep "
                                       "one")
    layer[role] = value
    sources[(prefix, role)] = key


def _biases(arrays: dict[str, Any], biases: list[tuple[str, str, str]], sources: dict[tuple[str, str], str],
            ignored: list[str]) -> list[str]:
    """The biases of the attention projections, each exactly zero (listed, returned) or refused by name: the
    recognized ones (``in_proj_bias``, ``q_proj.bias``, ...), and ``<name>.bias`` beside every weight
    ``<name>.weight`` used (BERT's ``attention.output.dense.bias``, a mapped tensor's)."""
    found = list(biases)
    for (prefix, role), source in sources.items():
        if source.endswith("weight"):
            sibling = source[: -len("weight")] + "bias"
            if sibling in ignored and all(sibling != b for b, _, _ in found):
                ignored.remove(sibling)
                found.append((sibling, prefix, role))
    zero = []
    for key, prefix, role in found:
        if not _is_zero(arrays[key]):
            raise InvalidArgumentError(
                f"{shown_name(key)}: a nonzero bias of the {_ROLE_NAMES[role]} projection of layer {_where(prefix)}: "
                "the checkpoint's model has biases; affine attention is not modelled (the package's model, "
                "docs/math/model.md, has none): refused, not treated as zero")
        zero.append(key)
    return zero


def translate(arrays: dict[str, Any], convert: Callable[[Any, str], np.ndarray], *, heads: int | None = None,
              names: dict[str, str] | None = None) -> Translation:
    """The package's ``layers.{l}.heads.{h}.{Q,K,V}`` from a checkpoint's tensors (module docstring);
    ``convert(value, name)``: a tensor as an object array of exact Fractions (the caller's conversion)."""
    if names is not None:
        if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
            raise InvalidArgumentError("names: a mapping of source names to 'layers.<l>.<q|k|v|o>' is expected")
        missing = sorted(set(names) - set(arrays))
        if missing:
            raise InvalidArgumentError(f"names: {missing[0]!r} is not in the file")
    if heads is not None and (isinstance(heads, bool) or not isinstance(heads, int) or heads < 1):
        raise InvalidArgumentError(f"heads={heads!r}: must be a positive integer")
    if names is None and any(_PACKAGE_LAYER.match(k) for k in arrays):  # the package's names (checked by the caller)
        return Translation(dict(arrays), "package names", (), (), ())
    roles: dict[str, dict[str, Any]] = {}  # prefix -> role -> tensor
    sources: dict[tuple[str, str], str] = {}
    ignored: list[str] = []
    biases: list[tuple[str, str, str]] = []  # (name, prefix, role)
    layout = set()
    for key, value in arrays.items():
        found = _role_of(key, names)
        if found is None:
            ignored.append(key)
            continue
        prefix, role, kind = found
        layout.add(kind)
        if role.endswith(" bias"):
            biases.append((key, prefix, role[: -len(" bias")]))
        else:
            _add(roles, sources, prefix, role, key, value)
    # "query.weight"-style layers keep their output projection under "output.dense.weight" beside the prefix
    for prefix in list(roles):
        for tail in ("output.dense.weight", "output.weight"):
            parent = prefix[: prefix.rstrip(".").rfind(".") + 1] if prefix.rstrip(".").count(".") else ""
            for candidate in (prefix + tail, parent + tail):
                if candidate in arrays and candidate in ignored and "o" not in roles[prefix]:
                    roles[prefix]["o"] = arrays[candidate]
                    sources[(prefix, "o")] = candidate
                    ignored.remove(candidate)
    zero = _biases(arrays, biases, sources, ignored)
    if not roles:
        raise InvalidArgumentError("weights: no attention weights found (neither layers.<l>.heads.<h>.<Q|K|V|A> nor "
                                   "a known layout: in_proj_weight, q_proj/k_proj/v_proj, query/key/value); "
                                   "give a mapping (names=, --names FILE)")
    order = sorted(roles, key=_layer_key)
    out: dict[str, np.ndarray] = {}
    notes: list[str] = []
    sizes: list[int] = []
    for l, prefix in enumerate(order):
        sizes.append(_layer(l, prefix, roles[prefix], sources, convert, heads, out, notes))
    notes.append("the score scale 1/sqrt(d_h) is dropped for lightning attention (a constant factor of the "
                 "function; the neuromanifold is a cone: every verdict is the same); with softmax it is the "
                 "temperature sqrt(d_h)")
    if zero:
        notes.append(f"{len(zero)} bias(es) of the attention projections are exactly zero (the model has none: the "
                     "function is the same), not used: " + ", ".join(shown_name(k) for k in zero))
    if ignored:
        notes.append(f"ignored {len(ignored)} tensor(s) that are not attention weights: "
                     + ", ".join(shown_name(k) for k in ignored))
    return Translation(out, " + ".join(sorted(layout)), tuple(order), tuple(zero + ignored), tuple(notes),
                       tuple(sizes))


def _layer(l: int, prefix: str, r: dict[str, Any], sources: dict[tuple[str, str], str],
           convert: Callable[[Any, str], np.ndarray], heads: int | None, out: dict[str, np.ndarray],
           notes: list[str]) -> int:
    """Layer ``l`` (its source ``prefix``, its projections ``r`` by role) as the package's heads, into ``out``
    (and ``notes``); its head size ``d_h``."""
    where = _where(prefix)

    def source(role: str) -> str:
        return shown_name(sources[(prefix, role)])

    if "qkv" in r:
        W = convert(r.pop("qkv"), source("qkv"))
        if W.shape[0] % 3:
            raise InvalidArgumentError(f"{source('qkv')}: {W.shape[0]} rows, not 3 E")
        E = W.shape[0] // 3
        r["q"], r["k"], r["v"] = W[:E], W[E:2 * E], W[2 * E:]
        for role in "qkv":
            sources[(prefix, role)] = sources[(prefix, "qkv")]
    missing = [role for role in "qkv" if role not in r]
    if missing:
        raise InvalidArgumentError(f"layer {where}: no {missing[0]!r} projection (found: "
                                   + ", ".join(source(x) for x in sorted(r)) + ")")
    q, k, v = (r[x] if isinstance(r[x], np.ndarray) and r[x].dtype == object
               else convert(r[x], source(x)) for x in "qkv")
    if q.shape != k.shape:
        raise InvalidArgumentError(f"layer {where}: query {q.shape} and key {k.shape} projections differ in shape")
    inner, d_in = q.shape
    h = heads
    if h is None:
        if inner == 1:
            h = 1
        else:
            raise InvalidArgumentError(f"layer {where}: the number of heads is not stored in the weights: give "
                                       "heads= (--heads), or a .safetensors __metadata__ \"heads\"")
    if inner % h or v.shape[0] % h:
        raise InvalidArgumentError(f"heads={h}: does not divide the projections' {inner} (query) and "
                                   f"{v.shape[0]} (value) rows of layer {where}")
    dq, dv = inner // h, v.shape[0] // h
    if "o" in r:
        o = convert(r["o"], source("o"))
        if o.shape[1] != v.shape[0]:
            raise InvalidArgumentError(f"{source('o')}: {o.shape[1]} columns, the value projection "
                                       f"has {v.shape[0]} rows")
    else:
        o = np.array([[Fraction(int(i == j)) for j in range(v.shape[0])] for i in range(v.shape[0])], dtype=object)
        notes.append(f"layer {l + 1} ({where}): no output projection: W_O = I (the heads concatenated)")
    for hh in range(h):
        out[f"layers.{l}.heads.{hh}.Q"] = q[hh * dq:(hh + 1) * dq]
        out[f"layers.{l}.heads.{hh}.K"] = k[hh * dq:(hh + 1) * dq]
        out[f"layers.{l}.heads.{hh}.V"] = o[:, hh * dv:(hh + 1) * dv].dot(v[hh * dv:(hh + 1) * dv])
    if dv < min(o.shape[0], d_in):
        notes.append(f"layer {l + 1} ({where}): V = W_O,h W_v,h has rank <= {dv} (the head size) here; it is "
                     "analysed with V free (a neuromanifold that contains this one)")
    return dq
