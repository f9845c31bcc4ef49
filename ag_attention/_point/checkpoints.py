"""Checkpoints as people save them: the attention weights found under their usual names, mapped to the model.

Recognized, per attention layer (a *prefix* such as ``layers.0.self_attn.`` or ``encoder.layer.3.attention.``;
layers are ordered by the integers in their prefixes), each with the label the report's first line shows:

* ``MultiheadAttention in_proj_weight/out_proj`` (``torch.nn.MultiheadAttention``): ``in_proj_weight``
  (``3E x E``: ``W_q``, ``W_k``, ``W_v`` stacked), or ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``;
  ``out_proj.weight``;
* ``q_proj/k_proj/v_proj/o_proj`` (LLaMA, Mistral, Qwen, OPT, BART: ``o_proj`` or ``out_proj``), each
  ``.weight``; keys and values with fewer rows than the queries are grouped-query attention (:mod:`.layouts`);
* ``BERT query/key/value/output.dense`` (``query``/``key``/``value`` with ``output.dense`` or ``output``);
* ``GPT-2 Conv1D c_attn/c_proj``: ``attn.c_attn.weight`` (``E x 3E``: a ``Conv1D`` stores ``W^T``, the
  queries, keys and values side by side) and ``attn.c_proj.weight`` (``W_O^T``); GPT-2's ``attn.bias`` /
  ``attn.masked_bias`` are its causal mask buffers, not weights (named in a note);
* ``fused Wqkv`` (MPT, Phi: ``Wqkv.weight`` with ``out_proj``) and ``fused qkv_proj`` (Phi-3: ``qkv_proj.weight``
  with ``o_proj``): ``W_q``, ``W_k``, ``W_v`` stacked, ``W_q`` square (``E x E``), ``W_k`` and ``W_v`` the rest
  in equal parts (grouped-query attention when they are smaller);
* a user mapping ``names`` (source name -> ``q``, ``k``, ``v``, ``o`` of a layer, e.g.
  ``{"blk.attn.wq": "layers.0.q", ...}``), applied first.

Every other tensor (embeddings, norms, MLPs) is listed as not used, every one by its name (escaped:
:func:`~ag_attention._bounded.shown_name`), never silently dropped or used. The biases of the projections
(``in_proj_bias``, ``q_proj.bias``, ``c_attn.bias``, ..., and ``<name>.bias`` beside any weight ``<name>.weight``
used, such as BERT's ``attention.output.dense.bias``) are read into the model, zero or not: affine attention
(docs/math/affine.md), the model the checkpoint was trained as; ``biases=False`` (``--no-biases``) reads the
paper's model instead, dropping exactly zero biases and refusing a nonzero one by name. Two layouts for the same
projection of a layer (``in_proj_weight`` beside ``q_proj_weight``) are refused naming both: which one the model
uses is not in the file.
Rotary position embeddings (a tensor named ``rotary_emb``/``inv_freq``/``rope``, or a ``rope``/``rotary`` entry
of the metadata) are refused, saying why: the rotation of ``q`` and ``k`` depends on the position, so the layer's
score is not ``x_i^T A x_j`` with one ``A``, and the layer is not the paper's attention.

**How the projections enter the model** (docs/math/point.md, checkpoints): with ``h`` heads of size ``d_h = E/h``
and ``W_{q,h}``, ``W_{k,h}``, ``W_{v,h}`` the rows of head ``h`` and ``W_{O,h}`` the columns of head ``h`` of the
output projection, a lightning (softmax removed) multi-head layer computes
``y_i = sum_h W_{O,h} W_{v,h} sum_j (x_i^T W_{q,h}^T W_{k,h} x_j) x_j / sqrt(d_h)``. So head ``h`` is the package's
head with ``Q = W_{q,h}``, ``K = W_{k,h}`` (rank bound ``a = d_h``) and ``V = W_{O,h} W_{v,h}`` (``E x E``, the
product taken exactly in rationals); no output projection is ``W_O = I`` (the heads' outputs concatenated). The
score scale ``1/sqrt(d_h)`` is dropped (lightning): it multiplies the attention part by a constant, the neuromanifold
is a cone, and with an output bias the constant only scales the Jacobian's columns of the other weights, so every
rank and verdict is the same (the forward pass of the mapped network is the checkpoint's with its attention part
times ``sqrt(d_h)``, the output bias added as it is). What the folding changes: the factored layer has ``V`` of
rank at most ``d_h`` and the extra
symmetries ``(W_{O,h} M^{-1}, M W_{v,h})``; the package analyses the folded point in the parametrization with ``V``
free (its neuromanifold contains the factored one, equal when ``d_h >= E``), and says so in a note.

The number of heads is not stored in a state dict: it comes from the file (the package's names, a ``.safetensors``
``__metadata__`` ``"heads"``, Hugging Face's ``config.json`` beside it:
:func:`~ag_attention._point.configs.read_config`, a torch module's ``num_heads``) or is given (``heads=``), and is
required only when the layout leaves it open (:attr:`Recognized.needs_heads`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._bounded import shown_name
from .._checks import check_int
from .._errors import InvalidArgumentError
from .configs import MAX_NAMES_BYTES, module_arguments, read_config, read_names_file, refuse_rotary, settle_arguments
from .files import tensor_to_numpy
from .grouped import GroupedLayer
from .layouts import (
    BERT,
    GPT2,
    LAYOUTS,
    MAPPING,
    MHA,
    MODELS,
    PROJ,
    QKV_PROJ,
    WQKV,
    Layout,
    layer_heads,
    read_layouts,
    suffixes,
)

__all__ = [
    "attention_entries",
    "Recognized",
    "recognize",
    "Translation",
    "translate",
    "PACKAGE_NAME",
    "read_names_file",
    "read_config",
    "module_arguments",
    "settle_arguments",
    "MAX_NAMES_BYTES",
    "LAYOUTS",
    "Layout",
    "MHA",
    "PROJ",
    "BERT",
    "GPT2",
    "WQKV",
    "QKV_PROJ",
    "MAPPING",
    "TRAINED_AS",
    "MODELS",
    "trained_softmax",
    "model_line",
]

PACKAGE_NAME = re.compile(r"^layers\.\d+\.heads\.\d+\.(Q|K|V|A)$")
_PACKAGE_LAYER = re.compile(r"^layers\.(\d+)\.heads\.(\d+)\.")

#: the model each layout was trained as (``"softmax"``, or None: lightning), a view of :data:`LAYOUTS` (each
#: entry's ``trained_as``) when the package was imported
TRAINED_AS: dict[str, str | None] = {name: "softmax" if entry.softmax else None for name, entry in LAYOUTS.items()}


def _shape(value: Any) -> tuple[int, ...]:
    shape = getattr(value, "shape", None)  # NumPy, torch: no copy
    return tuple(int(n) for n in (np.shape(value) if shape is None else shape))


def attention_entries(arrays: dict[str, Any], names: dict[str, str] | None = None) -> int:
    """Entries of the weight tensors a translation reads (no biases, no ignored tensors), from their shapes alone.

    The parameters of the network they make are at least 3/4 of it: with ``E``
    the embedding and ``H`` heads the four projections hold ``4 E^2`` entries
    and the network ``(2 + H) E^2`` parameters, so a check against this bound
    can refuse a file before any weight is converted without refusing one that fits.
    """
    total = 0
    for key, value in arrays.items():
        found = _role_of(key, names)
        if found is None or found[1].endswith("bias"):
            continue
        total += int(np.prod(_shape(value)))
    return total


@dataclass(frozen=True)
class Translation:
    """The package's weights from a checkpoint, with what was recognized and what was ignored."""

    weights: dict[str, np.ndarray]  # layers.{l}.heads.{h}.{Q,K,V}: object arrays of Fractions
    layout: str  # "package names", or the labels of LAYOUTS read (joined by " + ")
    layers: tuple[str, ...]  # the source prefix of each layer, in order
    ignored: tuple[str, ...]  # tensors not used
    notes: tuple[str, ...]
    head_sizes: tuple[int, ...] = ()  # d_h of each layer (the dropped score scale is 1/sqrt(d_h))
    key_value_heads: tuple[int, ...] = ()  # key/value heads of each layer (fewer than the heads: grouped-query)
    grouped: tuple[GroupedLayer, ...] = ()  # each layer in its own factored parametrization (when grouped-query)
    factors: tuple[GroupedLayer, ...] = ()  # every layer's factors (W_q,h, W_k,g, W_O,h, W_v,g): the per-head table


@dataclass
class Recognized:
    """What a checkpoint holds, from its names and shapes alone (no weight converted): the layers and their
    projections by role, the tensors not used, the zero biases; or the package's own names."""

    package: bool
    layout: str = "package names"
    order: tuple[str, ...] = ()
    roles: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[tuple[str, str], str] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    zero: list[str] = field(default_factory=list)  # the biases read that are exactly zero
    notes: list[str] = field(default_factory=list)
    heads: int | None = None  # the heads the file's names give (the package's names)
    kinds: dict[str, str] = field(default_factory=dict)  # prefix -> the layout of its queries (a LAYOUTS label)

    def layout_of(self, prefix: str) -> Layout:
        """The entry of :data:`LAYOUTS` a layer was read as (a layer with only an output projection: ``PROJ``)."""
        return LAYOUTS[self.kinds.get(prefix, PROJ)]

    @property
    def needs_heads(self) -> bool:
        """The number of heads is open: some layer's queries have more than one row (one head of 64 and two of
        32 are different functions of the same weights)."""
        if self.package:
            return False
        for prefix in self.order:
            r = self.roles[prefix]
            rows = (
                _shape(r["q"])[0]
                if "q" in r
                else _shape(r["qkv"])[1]
                if "qkv" in r
                else _shape(r["qkvT"])[0]
                if "qkvT" in r
                else 1
            )
            if rows > 1:
                return True
        return False


def _is_zero(value: Any) -> bool:
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor, duck-typed (bf16: as float32, exact)
        value = tensor_to_numpy(value)
    arr = np.asarray(value)
    if arr.size == 0:
        return True
    try:  # in the array's own precision: a float128 of 1e-4900 is nonzero, although 0.0 as a float64
        return bool(not np.any(arr != 0))
    except TypeError:  # pragma: no cover - a dtype without comparisons: through float64
        return bool(not np.any(arr.astype(np.float64) != 0))


def _layer_key(prefix: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", prefix))


#: roles that give the same projection of a layer: two of them is a file with two competing layouts
_SAME_PROJECTION = {
    "qkv": ("qkv", "qkvT", "q", "k", "v"),
    "qkvT": ("qkvT", "qkv", "q", "k", "v"),
    "q": ("q", "qkv", "qkvT"),
    "k": ("k", "qkv", "qkvT"),
    "v": ("v", "qkv", "qkvT"),
    "o": ("o", "oT"),
    "oT": ("oT", "o"),
}
_ROLE_NAMES = {
    "qkv": "stacked query/key/value",
    "qkvT": "stacked query/key/value",
    "q": "query",
    "k": "key",
    "v": "value",
    "o": "output",
    "oT": "output",
}


def _role_of(key: str, names: dict[str, str] | None) -> tuple[str, str, str | None] | None:
    """``(layer prefix, role, layout)`` of a tensor name (role ``q``, ``k``, ``v``, ``o``, ``qkv``, ``qkvT``,
    ``oT``, or one of them followed by `` bias``), or None when it is not an attention weight."""
    if names is not None and key in names:
        m = re.fullmatch(r"layers\.(\d{1,6})\.(q|k|v|o)", names[key])
        if m is None:
            raise InvalidArgumentError(
                f"names: {shown_name(key)} -> {shown_name(names[key])}: the target must be 'layers.<l>.<q|k|v|o>'"
            )
        return f"layers.{int(m.group(1)):06d}", m.group(2), MAPPING
    for suffix, role, layout, keep in suffixes():  # keep: the layer's module (GPT-2's attn.)
        if key == suffix or key.endswith("." + suffix):
            return key[: len(key) - len(suffix) + keep], role, layout
    return None


def _where(prefix: str) -> str:
    return shown_name(prefix) if prefix else "(top level)"


def _add(
    roles: dict[str, dict[str, Any]], sources: dict[tuple[str, str], str], prefix: str, role: str, key: str, value: Any
) -> None:
    """Record ``key`` as the ``role`` weight of the layer ``prefix``; a second one, or one of a competing layout
    (``in_proj_weight`` beside ``q_proj_weight``), is refused naming both (never one silently dropped)."""
    layer = roles.setdefault(prefix, {})
    for other in _SAME_PROJECTION[role]:
        if other in layer:
            first = shown_name(sources[(prefix, other)])
            if other == role:
                raise InvalidArgumentError(
                    f"{shown_name(key)}: a second {role.rstrip('T')!r} weight for the layer "
                    f"{_where(prefix)} (first: {first})"
                )
            raise InvalidArgumentError(
                f"layer {_where(prefix)}: two layouts give the {_ROLE_NAMES[role]} "
                f"projection: {first} ({_ROLE_NAMES[other]}) and {shown_name(key)} "
                f"({_ROLE_NAMES[role]}); which one the model uses is not in the file: keep "
                "one"
            )
    layer[role] = value
    sources[(prefix, role)] = key


def _biases(
    arrays: dict[str, Any], biases: list[tuple[str, str, str]], rec: Recognized, keep: bool = True
) -> list[str]:
    """The biases of the attention projections, read into the model (affine attention, docs/math/affine.md): the
    recognized ones (``in_proj_bias``, ``q_proj.bias``, ``c_attn.bias``, ...) and ``<name>.bias`` beside every
    weight ``<name>.weight`` used (BERT's ``attention.output.dense.bias``, a mapped tensor's), each recorded as the
    ``"<role> bias"`` of its layer; the names of those exactly zero returned (for a note). A second bias for one
    projection is refused naming both. ``keep=False`` (``--no-biases``): the paper's model, the exactly zero biases
    listed as not used and a nonzero one refused by name."""
    found = list(biases)
    for (prefix, role), source in list(rec.sources.items()):
        if source.endswith("weight"):
            sibling = source[: -len("weight")] + "bias"
            if sibling in rec.ignored and all(sibling != b for b, _, _ in found):
                rec.ignored.remove(sibling)
                found.append((sibling, prefix, role))
    zero = []
    for key, prefix, role in found:
        if not keep:
            if not _is_zero(arrays[key]):
                raise InvalidArgumentError(
                    f"{shown_name(key)}: a nonzero bias of the {_ROLE_NAMES[role]} projection of layer "
                    f"{_where(prefix)}: without biases (biases=False, --no-biases) only exactly zero ones are "
                    "dropped; the model with biases reads it (docs/math/affine.md)"
                )
            zero.append(key)
            continue
        layer, name = rec.roles.setdefault(prefix, {}), role.rstrip("T") + " bias"
        if name in layer or (name == "qkv bias" and any(f"{x} bias" in layer for x in "qkv")):
            raise InvalidArgumentError(
                f"{shown_name(key)}: a second bias of the {_ROLE_NAMES[role]} projection of layer {_where(prefix)} "
                f"(first: {shown_name(rec.sources[(prefix, name)])})"
            )
        layer[name] = arrays[key]
        rec.sources[(prefix, name)] = key
        if _is_zero(arrays[key]):
            zero.append(key)
    return zero


def recognize(
    arrays: dict[str, Any],
    names: dict[str, str] | None = None,
    metadata: dict[str, str] | None = None,
    biases: bool = True,
) -> Recognized:
    """The layers and projections of a checkpoint from its names and shapes (module docstring); nonzero biases,
    rotary embeddings and competing layouts refused by name before any weight is converted."""
    if names is not None:
        if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
            raise InvalidArgumentError("names: a mapping of source names to 'layers.<l>.<q|k|v|o>' is expected")
        missing = sorted(set(names) - set(arrays))
        if missing:
            raise InvalidArgumentError(f"names: {shown_name(missing[0])} is not in the file")
    if names is None and any(_PACKAGE_LAYER.match(k) for k in arrays):  # the package's names (checked by the caller)
        heads = {int(m.group(2)) for k in arrays if (m := _PACKAGE_LAYER.match(k))}
        return Recognized(True, heads=1 + max(heads))
    refuse_rotary(arrays, metadata)
    rec = Recognized(False, "")
    found_biases: list[tuple[str, str, str]] = []  # (name, prefix, role)
    kinds = rec.kinds  # prefix -> layout of its queries
    for key, value in arrays.items():
        found = _role_of(key, names)
        if found is None:
            rec.ignored.append(key)
            continue
        prefix, role, kind = found
        if kind is not None:
            kinds[prefix] = kind
        if role.endswith(" bias"):
            found_biases.append((key, prefix, role[: -len(" bias")]))
        else:
            _add(rec.roles, rec.sources, prefix, role, key, value)
    _output_dense(arrays, rec)
    rec.zero = _biases(arrays, found_biases, rec, keep=biases)
    if not rec.roles:
        raise InvalidArgumentError(
            "weights: no attention weights found (neither layers.<l>.heads.<h>.<Q|K|V|A> nor "
            "a known layout: "
            + ", ".join(name for name, entry in LAYOUTS.items() if entry.tensors)
            + "); give a mapping (names=, "
            "--names FILE)"
        )
    rec.order = tuple(sorted(rec.roles, key=_layer_key))
    rec.layout = " + ".join(sorted({kinds.get(p, PROJ) for p in rec.order}))
    for entry in read_layouts(rec.layout):
        masks = [k for k in rec.ignored if entry.buffers and re.search(entry.buffers, k)]
        if masks:
            rec.notes.append(
                f"{len(masks)} causal mask buffer(s) of {entry.causal}, not weights: "
                + ", ".join(shown_name(k) for k in masks)
                + f"; {entry.causal} is causal (causal=True, --causal)"
            )
    return rec


def _output_dense(arrays: dict[str, Any], rec: Recognized) -> None:
    """``query.weight``-style layers keep their output projection under ``output.dense.weight`` beside the prefix
    (BERT: ``attention.self.query`` and ``attention.output.dense``)."""
    tails = dict.fromkeys(tail for entry in LAYOUTS.values() for tail in entry.beside)
    for prefix in list(rec.roles):
        for tail in tails:
            parent = prefix[: prefix.rstrip(".").rfind(".") + 1] if prefix.rstrip(".").count(".") else ""
            for candidate in (prefix + tail, parent + tail):
                if (
                    candidate in arrays
                    and candidate in rec.ignored
                    and "o" not in rec.roles[prefix]
                    and "oT" not in rec.roles[prefix]
                ):
                    rec.roles[prefix]["o"] = arrays[candidate]
                    rec.sources[(prefix, "o")] = candidate
                    rec.ignored.remove(candidate)


def translate(
    arrays: dict[str, Any],
    convert: Callable[[Any, str], np.ndarray],
    *,
    heads: int | None = None,
    names: dict[str, str] | None = None,
    metadata: dict[str, str] | None = None,
    products: bool = True,
    biases: bool = True,
) -> Translation:
    """The package's ``layers.{l}.heads.{h}.{Q,K,V}`` from a checkpoint's tensors (module docstring);
    ``convert(value, name)``: a tensor as an object array of exact Fractions (the caller's conversion).
    ``products=False``: only the factors (``Translation.factors``), no ``V = W_O,h W_v,h`` formed.
    ``biases=False``: the paper's model, exactly zero biases dropped (a nonzero one refused by name)."""
    if heads is not None:
        heads = check_int(heads, "heads", minimum=1)
    rec = recognize(arrays, names, metadata, biases)
    if rec.package:
        return Translation(dict(arrays), "package names", (), (), ())
    if heads is None and rec.needs_heads:
        raise InvalidArgumentError(
            f"layer {_where(rec.order[0])}: the number of heads is not stored in the weights: "
            'give heads= (--heads), or a .safetensors __metadata__ "heads"'
        )
    out: dict[str, np.ndarray] = {}
    notes: list[str] = list(rec.notes)
    sizes: list[int] = []
    groups: list[int] = []
    own: list[GroupedLayer] = []
    for l, prefix in enumerate(rec.order):
        d_h, kv, layer = layer_heads(
            l,
            prefix,
            rec.roles[prefix],
            rec.sources,
            convert,
            heads or 1,
            out,
            notes,
            products,
            rec.layout_of(prefix).split,
        )
        sizes.append(d_h)
        groups.append(kv)
        own.append(layer)
    notes += [entry.note for entry in read_layouts(rec.layout) if entry.note]
    read = sorted({k for (_, role), k in rec.sources.items() if role.endswith(" bias")})
    if not biases and rec.zero:
        notes.append(
            f"{len(rec.zero)} bias(es) of the attention projections are exactly zero and not used (biases=False, "
            "--no-biases: the paper's model, the same function): " + ", ".join(shown_name(k) for k in rec.zero)
        )
    if read:
        roles = {role[0] if role != "qkv bias" else "qkv" for (_, role), _k in rec.sources.items() if "bias" in role}
        letters = "".join(c for c in "qkvo" if any(c in r for r in roles))
        if products:
            _fill_biases(out, own, rec.order, letters, notes)
        notes.append(
            f"{len(read)} bias(es) of the attention projections read into the model (affine attention, biases "
            f"{letters}: docs/math/affine.md)"
            + (
                f"; {len(rec.zero)} of them exactly zero (a point of the model with biases, where they are 0): "
                + ", ".join(shown_name(k) for k in rec.zero)
                if rec.zero
                else ""
            )
        )
    if rec.ignored:
        notes.append(
            f"ignored {len(rec.ignored)} tensor(s) that are not attention weights: "
            + ", ".join(shown_name(k) for k in rec.ignored)
        )
    grouped = tuple(own) if any(kv < len(layer.Q) for kv, layer in zip(groups, own)) else ()
    return Translation(
        out,
        rec.layout,
        rec.order,
        tuple(rec.ignored) if biases else tuple(rec.zero + rec.ignored),
        tuple(notes),
        tuple(sizes),
        tuple(groups),
        grouped,
        tuple(own),
    )


def _fill_biases(
    out: dict[str, np.ndarray], own: list[GroupedLayer], order: tuple[str, ...], letters: str, notes: list[str]
) -> None:
    """One set of biases for the network (``Architecture.bias``, ``letters``): a layer without a bias the others
    have gets an exact zero there, said in a note."""
    for l, layer in enumerate(own):
        H = len(layer.Q)
        missing = []
        for c, name in zip("qkvo", ("bQ", "bK", "bV", "bO")):
            key = f"layers.{l}.bO" if c == "o" else f"layers.{l}.heads.0.{name}"
            if c in letters and key not in out:
                missing.append(name)
                for h in range(1 if c == "o" else H):
                    rows = {"q": layer.Q[h].shape[0], "k": layer.Q[h].shape[0], "v": layer.W_O[h].shape[0]}
                    size = layer.W_O[0].shape[0] if c == "o" else rows[c]
                    zero = np.array([[Fraction(0)] for _ in range(size)], dtype=object)
                    out[key if c == "o" else f"layers.{l}.heads.{h}.{name}"] = zero
        if missing:
            notes.append(
                f"layer {l + 1} ({_where(order[l])}): no {', '.join(missing)} where other layers have them: read as "
                "exact zeros (one set of biases for the network)"
            )


def trained_softmax(layout: str) -> bool:
    """Whether every layout read (``Recognized.layout``, labels joined by `` + ``) was trained with softmax
    (each :data:`LAYOUTS` entry's ``trained_as``); the package's own names and a mapping keep lightning."""
    if not layout or layout == "package names":
        return False
    return all(name in LAYOUTS and LAYOUTS[name].softmax for name in layout.split(" + "))


def model_line(
    layout: str,
    shown: str,
    normalized: bool,
    requested: bool,
    causal: bool,
    head_sizes: tuple[int, ...],
    temperature: float,
    causal_why: str = "",
) -> str:
    """The report's first words: the model analysed, the layout read (``shown``: with its heads), the causal mask
    and why (``causal_why``: its config, its layout, an option), and what was dropped or folded (the score scale
    ``1/sqrt(d_h)``, the softmax, a decoder's causal mask). ``layout``: the labels read (``Recognized.layout``);
    ``requested``: the model was chosen (``--as``, ``normalized=``), not the layout's default (its :data:`LAYOUTS`
    entry's ``trained_as``)."""
    softmax = trained_softmax(layout)
    sizes = sorted(set(head_sizes))
    scale = "1/sqrt(d_h)" + (f" (d_h = {sizes[0]})" if len(sizes) == 1 else "")
    dropped: list[str] = []
    kept = ""
    if normalized:
        model = "softmax (normalized) attention, " + ("as trained" if softmax and not requested else "requested")
        kept = f"the score scale {scale} kept as the temperature {temperature:.6g}"
    else:
        if softmax:
            model = "lightning attention (--as lightning: the trained model's softmax removed)"
            dropped.append("the softmax")
        else:
            whys = [entry.lightning_why for entry in read_layouts(layout) if entry.lightning_why]
            model = "lightning attention" + (f" ({whys[0]})" if whys else "")
        dropped.append(f"the score scale {scale} (a constant factor of a lightning layer: the same verdicts)")
    mask = ""
    if causal:
        mask = "causal mask" + (f" ({causal_why}; --no-causal drops it)" if causal_why != "--causal" else " (--causal)")
    elif causal_why == "--no-causal":
        dropped.append("the decoder's causal mask (--no-causal)")
    elif causal_why:
        mask = f"no causal mask ({causal_why})"
    tail = "; ".join(x for x in (mask, kept, ("dropped " + ", ".join(dropped)) if dropped else "") if x)
    return f"{model}, read as {shown}" + (f"; {tail}" if tail else "")
