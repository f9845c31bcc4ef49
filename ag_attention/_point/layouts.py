"""One attention layer of a checkpoint as the package's heads: stacked, transposed and grouped projections.

A layer's projections arrive by role (:mod:`.checkpoints`): ``q``, ``k``, ``v``, ``o`` (``torch.nn.Linear``
weights, ``out x in``), ``qkv`` (the three stacked, ``W_q`` square), or ``qkvT`` / ``oT`` (a GPT-2 ``Conv1D``
stores ``W^T``: ``x W + b``). With ``h`` query heads of size ``d_h`` and ``h_kv`` key/value heads:

* ``h_kv = h``: multi-head attention, head ``i`` is ``Q = W_{q,i}``, ``K = W_{k,i}``, ``V = W_{O,i} W_{v,i}``;
* ``h_kv < h`` (``h_kv`` dividing ``h``): *grouped-query attention* (LLaMA 2/3, Mistral, Qwen:
  ``num_key_value_heads``), seen from the shapes: the keys and values have ``h_kv d_h`` rows. Query head ``i``
  uses key/value head ``g(i) = i // (h / h_kv)`` (``repeat_kv`` of the reference implementations), so head ``i``
  is ``Q = W_{q,i}``, ``K = W_{k,g(i)}``, ``V = W_{O,i} W_{v,g(i)}``: exactly the same function as the checkpoint's
  (a GQA layer is the multi-head layer whose heads in one group share ``W_k`` and ``W_v``). The report's
  geometry is then the ambient multi-head model's at a GQA point, and the GQA model's own (its dimension, its
  symmetries, the local rank in its parametrization) is :mod:`.grouped`'s, from the factors returned here
  (docs/math/point.md, grouped-query attention).

The layouts people save are one table, :data:`LAYOUTS` (label -> :class:`Layout`): how a layout's tensors are
named, how its stacked projection splits into ``W_q``, ``W_k``, ``W_v``, the model it was trained as, and what
its report says about it. Adding a layout is one entry (and, when its stack is not ``W_q``, ``W_k``, ``W_v`` in
that order, its own ``split`` function); :mod:`.checkpoints` reads every name and note from the entries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .files import tensor_to_numpy
from .grouped import GroupedLayer
from .safetensors import shown_name

__all__ = [
    "layer_heads",
    "split_stacked",
    "Layout",
    "LAYOUTS",
    "MHA",
    "PROJ",
    "BERT",
    "GPT2",
    "WQKV",
    "QKV_PROJ",
    "NEOX",
    "DISTILBERT",
    "T5",
    "MAPPING",
    "split_per_head",
    "MODELS",
    "suffixes",
    "read_layouts",
]

#: the models ``--as`` chooses from (and a layout's ``trained_as``)
MODELS = ("normalized", "lightning")

#: the split of a stacked projection: ``(W, name, heads) -> (W_q, W_k, W_v)``, ``W`` as ``out x in`` (a ``Conv1D``'s
#: already transposed), ``name`` the tensor's name shown in errors, ``heads`` the query heads
Split = Callable[[np.ndarray, str, int], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _where(prefix: str) -> str:
    return shown_name(prefix) if prefix else "(top level)"


_ROLE_WORDS = {"q": "query", "k": "key", "v": "value", "o": "output"}


def _shape(value: Any) -> tuple[int, ...]:
    shape = getattr(value, "shape", None)
    return tuple(int(n) for n in (np.shape(value) if shape is None else shape))


def split_stacked(W: np.ndarray, name: str, heads: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``W_q``, ``W_k``, ``W_v`` of a stacked projection: ``W_q`` square (``E`` rows for ``E`` inputs), the other
    rows in two equal parts (fewer than ``E`` each: grouped-query attention)."""
    rows, E = W.shape
    rest = rows - E
    if rest <= 0 or rest % 2:
        raise InvalidArgumentError(
            f"{name}: {rows} rows for {E} inputs: not E query rows and two equal key and value parts"
        )
    kv = rest // 2
    return W[:E], W[E : E + kv], W[E + kv :]


def split_per_head(W: np.ndarray, name: str, heads: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``W_q``, ``W_k``, ``W_v`` of a projection stacked head by head (GPT-NeoX's ``query_key_value``): row ``r`` is
    head ``r // 3d``, part ``(r mod 3d) // d`` (query, key, value), coordinate ``r mod d``."""
    rows = W.shape[0]
    if rows % (3 * heads):
        raise InvalidArgumentError(f"{name}: {rows} rows are not {heads} heads of a query, a key and a value each")
    d = rows // (3 * heads)
    parts = W.reshape(heads, 3, d, *W.shape[1:])
    q, k, v = (parts[:, i].reshape(heads * d, *W.shape[1:]) for i in range(3))
    return q, k, v


@dataclass(frozen=True)
class Layout:
    """One way people save an attention layer: an entry of :data:`LAYOUTS`.

    ``tensors``: ``(suffix, role)`` of the tensors that make a layer this layout (the layer's prefix is the name
    before the suffix): role ``q``, ``k``, ``v``, ``o``, ``qkv`` (the three stacked, read by ``split``), ``qkvT`` /
    ``oT`` (stored transposed, a ``Conv1D``), or one of them followed by `` bias`` (refused unless exactly zero).
    ``outputs``: the output projection's ``(suffix, role)``, which several layouts share (they do not decide the
    layout). ``trained_as``: the model analysed by default, ``"normalized"`` (trained with softmax) or
    ``"lightning"``; ``lightning_why``: why a lightning default is (said in the report). ``module``: a leading
    part of the suffixes that belongs to the layer's prefix (GPT-2's ``attn.``). ``beside``: output projections
    found beside the layer's prefix or its parent (BERT's ``output.dense.weight``). ``note``: said whenever the
    layout is read. ``causal``: the model's name when it is causal (its mask dropped unless ``--causal``), with
    ``buffers`` the pattern of its mask buffers (not weights, named in a note)."""

    name: str
    description: str
    tensors: tuple[tuple[str, str], ...] = ()
    outputs: tuple[tuple[str, str], ...] = ()
    trained_as: str = "normalized"
    split: Split = split_stacked
    lightning_why: str = ""
    module: str = ""
    beside: tuple[str, ...] = ()
    note: str = ""
    causal: str = ""
    buffers: str = ""

    @property
    def softmax(self) -> bool:
        """Trained with softmax: analysed as normalized attention by default."""
        return self.trained_as == "normalized"


def _with_biases(*pairs: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    """``(name.weight, role)`` pairs and their ``(name.bias, role bias)`` after them."""
    return pairs + tuple((s[: -len("weight")] + "bias", r + " bias") for s, r in pairs if s.endswith(".weight"))


#: the labels of the layouts recognized (the report's first line names the one read)
MHA, PROJ, BERT, GPT2, WQKV, QKV_PROJ, NEOX, DISTILBERT, T5, MAPPING = (
    "MultiheadAttention in_proj_weight/out_proj",
    "q_proj/k_proj/v_proj/o_proj",
    "BERT query/key/value/output.dense",
    "GPT-2 Conv1D c_attn/c_proj",
    "fused Wqkv",
    "fused qkv_proj",
    "GPT-NeoX query_key_value/dense",
    "DistilBERT q_lin/k_lin/v_lin/out_lin",
    "T5 SelfAttention q/k/v/o",
    "mapping",
)
_OUT_PROJ = (("out_proj.weight", "o"), ("out_proj.bias", "o bias"))
_O_PROJ = (("o_proj.weight", "o"), ("o_proj.bias", "o bias"))

#: every layout recognized, label -> entry (iterating gives the labels; the first entry with a suffix wins). Every
#: known layout is a softmax layer (MultiheadAttention, LLaMA, BERT, GPT-2, MPT, Phi), analysed as normalized
#: attention by default (``--as lightning`` removes the softmax); a user's mapping does not say, and is read as
#: lightning
LAYOUTS: dict[str, Layout] = {
    MHA: Layout(
        MHA,
        "torch.nn.MultiheadAttention: in_proj_weight (W_q, W_k, W_v stacked) or q/k/v_proj_weight; out_proj",
        (
            ("in_proj_weight", "qkv"),
            ("in_proj_bias", "qkv bias"),
            ("q_proj_weight", "q"),
            ("k_proj_weight", "k"),
            ("v_proj_weight", "v"),
        ),
        _OUT_PROJ,
    ),
    PROJ: Layout(
        PROJ,
        "LLaMA, Mistral, Qwen, OPT, BART: q_proj, k_proj, v_proj (fewer key/value rows: grouped-query), o_proj",
        _with_biases(("q_proj.weight", "q"), ("k_proj.weight", "k"), ("v_proj.weight", "v")),
        _O_PROJ,
        note="q_proj/k_proj/v_proj are also the names of models with rotary position embeddings (LLaMA, "
        "Mistral, Qwen), whose rotation is not stored in the weights: the network read has none",
    ),
    BERT: Layout(
        BERT,
        "BERT: query, key, value, with output.dense (or output) beside the layer",
        _with_biases(("query.weight", "q"), ("key.weight", "k"), ("value.weight", "v")),
        beside=("output.dense.weight", "output.weight"),
    ),
    GPT2: Layout(
        GPT2,
        "GPT-2: attn.c_attn (a Conv1D: W^T, the queries, keys and values side by side) and attn.c_proj",
        (("attn.c_attn.weight", "qkvT"), ("attn.c_attn.bias", "qkv bias")),
        (("attn.c_proj.weight", "oT"), ("attn.c_proj.bias", "o bias")),
        module="attn.",
        causal="GPT-2",
        buffers=r"(^|\.)attn\.(bias|masked_bias)$",
    ),
    WQKV: Layout(
        WQKV, "MPT, Phi: Wqkv (W_q, W_k, W_v stacked) with out_proj", _with_biases(("Wqkv.weight", "qkv")), _OUT_PROJ
    ),
    QKV_PROJ: Layout(
        QKV_PROJ,
        "Phi-3: qkv_proj (W_q, W_k, W_v stacked) with o_proj",
        _with_biases(("qkv_proj.weight", "qkv")),
        _O_PROJ,
    ),
    NEOX: Layout(
        NEOX,
        "GPT-NeoX, Pythia: attention.query_key_value (queries, keys and values stacked head by head) and "
        "attention.dense",
        _with_biases(("attention.query_key_value.weight", "qkv")),
        (("attention.dense.weight", "o"), ("attention.dense.bias", "o bias")),
        split=split_per_head,
        module="attention.",
    ),
    DISTILBERT: Layout(
        DISTILBERT,
        "DistilBERT: attention.q_lin, k_lin, v_lin and out_lin",
        _with_biases(("q_lin.weight", "q"), ("k_lin.weight", "k"), ("v_lin.weight", "v")),
        (("out_lin.weight", "o"), ("out_lin.bias", "o bias")),
    ),
    T5: Layout(
        T5,
        "T5: SelfAttention.q, k, v and o (no score scale; its relative position bias is refused by name)",
        (("SelfAttention.q.weight", "q"), ("SelfAttention.k.weight", "k"), ("SelfAttention.v.weight", "v")),
        (("SelfAttention.o.weight", "o"),),
        module="SelfAttention.",
    ),
    MAPPING: Layout(
        MAPPING,
        "a user's mapping names= (--names FILE): source tensor name -> layers.<l>.<q|k|v|o>, applied first",
        trained_as="lightning",
        lightning_why="a mapping does not say which model was trained: --as normalized for softmax",
    ),
}


def suffixes() -> Iterator[tuple[str, str, str | None, int]]:
    """``(suffix, role, layout, kept)`` of every tensor name :data:`LAYOUTS` recognizes, in the table's order:
    ``layout`` None for an output projection (the layer's layout is that of its queries), ``kept`` the characters
    of the suffix that belong to the layer's prefix (its ``module``)."""
    for layout in LAYOUTS.values():
        for group, name in ((layout.tensors, layout.name), (layout.outputs, None)):
            for suffix, role in group:
                yield (
                    suffix,
                    role,
                    name,
                    len(layout.module) if layout.module and suffix.startswith(layout.module) else 0,
                )


def read_layouts(layout: str) -> list[Layout]:
    """The entries of the layouts a ``Recognized.layout`` names (labels joined by `` + ``)."""
    return [LAYOUTS[name] for name in layout.split(" + ") if name in LAYOUTS] if layout else []


def _column(value: Any) -> Any:
    """A bias vector (an array, a list, a tensor) as an ``n x 1`` column, for the matrix converters."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor, duck-typed
        value = tensor_to_numpy(value)
    arr = np.asarray(value) if isinstance(value, np.ndarray) else np.array(value, dtype=object)
    return arr.reshape(-1, 1) if arr.ndim == 1 else arr


def _unstacked(
    prefix: str,
    r: dict[str, Any],
    sources: dict[tuple[str, str], str],
    convert: Callable[[Any, str], np.ndarray],
    split: Split,
    heads: int,
) -> dict[str, Any]:
    """The layer's projections by role ``q``, ``k``, ``v`` (``o``) and their biases (``"q bias"``, ...): a stacked
    one split (a ``Conv1D``'s transposed first; a stacked bias as the rows of its stack), each part's source
    recorded as the stack's."""
    r = dict(r)

    def source(role: str) -> str:
        return shown_name(sources[(prefix, role)])

    for name in [n for n in r if n.endswith(" bias")]:
        r[name] = convert(_column(r[name]), source(name))
    if "qkv bias" in r:
        b = r.pop("qkv bias")
        stacked = "qkv" if "qkv" in r else "qkvT" if "qkvT" in r else None
        if stacked is None:
            raise InvalidArgumentError(f"{source('qkv bias')}: a stacked bias without its stacked weight")
        rows = _shape(r[stacked])[1 if stacked == "qkvT" else 0]
        if b.shape[0] != rows:
            raise InvalidArgumentError(f"{source('qkv bias')}: {b.shape[0]} entries for the {rows} rows of its stack")
        width = _shape(r[stacked])[0 if stacked == "qkvT" else 1]
        # the split reads rows: a bias column rides beside a zero block of the stack's width
        padded = np.hstack([b, np.zeros((rows, width - 1), dtype=b.dtype)]) if width > 1 else b
        parts = split(padded, source("qkv bias"), heads)
        for role, part in zip("qkv", parts):
            r[f"{role} bias"] = part[:, :1]
            sources[(prefix, f"{role} bias")] = sources[(prefix, "qkv bias")]

    for stacked in ("qkv", "qkvT"):
        if stacked in r:
            W = convert(r.pop(stacked), source(stacked))
            r["q"], r["k"], r["v"] = split(W.T if stacked == "qkvT" else W, source(stacked), heads)
            for role in "qkv":
                sources[(prefix, role)] = sources[(prefix, stacked)]
    if "oT" in r:
        r["o"] = convert(r.pop("oT"), source("oT")).T
        sources[(prefix, "o")] = sources[(prefix, "oT")]
    missing = [role for role in "qkv" if role not in r]
    if missing:
        raise InvalidArgumentError(
            f"layer {_where(prefix)}: no {missing[0]!r} projection (found: "
            + ", ".join(source(x) for x in sorted(r))
            + ")"
        )
    return r


def _head_sizes(where: str, q: np.ndarray, k: np.ndarray, v: np.ndarray, h: int) -> tuple[int, int, int]:
    """The query head size ``d_h``, the number of key/value heads and the value head size, from the shapes;
    refused when the rows are not heads (multi-head or grouped-query attention)."""
    inner, d_in = q.shape
    if k.shape[1] != d_in or v.shape[1] != d_in:
        raise InvalidArgumentError(
            f"layer {where}: query {q.shape}, key {k.shape} and value {v.shape} projections do not read the same inputs"
        )
    if inner % h:
        raise InvalidArgumentError(f"heads={h}: does not divide the {inner} query rows of layer {where}")
    dq = inner // h
    kv = k.shape[0] // dq
    if not kv or k.shape[0] % dq or h % kv or v.shape[0] % kv:
        raise InvalidArgumentError(
            f"layer {where}: heads={h} of size {dq} ({inner} query rows): the {k.shape[0]} "
            f"key rows and {v.shape[0]} value rows are not key/value heads of size {dq} in a "
            "number dividing the heads (multi-head or grouped-query attention)"
        )
    return dq, kv, v.shape[0] // kv


def _output(
    l: int,
    where: str,
    r: dict[str, Any],
    source: Callable[[str], str],
    convert: Callable[[Any, str], np.ndarray],
    h: int,
    kv: int,
    values: int,
    dv: int,
    notes: list[str],
) -> np.ndarray:
    """The output projection ``W_O`` (its ``h dv`` columns checked), or ``I`` (``values`` rows) with a note when
    the layer has none (refused for grouped-query attention)."""
    if "o" in r:
        o = r["o"] if isinstance(r["o"], np.ndarray) and r["o"].dtype == object else convert(r["o"], source("o"))
        if o.shape[1] != h * dv:
            raise InvalidArgumentError(f"{source('o')}: {o.shape[1]} columns, the {h} heads give {h * dv} values")
        return o
    if kv != h:
        raise InvalidArgumentError(f"layer {where}: grouped-query attention without an output projection")
    notes.append(f"layer {l + 1} ({where}): no output projection: W_O = I (the heads concatenated)")
    return np.array([[Fraction(int(i == j)) for j in range(values)] for i in range(values)], dtype=object)


def layer_heads(
    l: int,
    prefix: str,
    r: dict[str, Any],
    sources: dict[tuple[str, str], str],
    convert: Callable[[Any, str], np.ndarray],
    h: int,
    out: dict[str, np.ndarray],
    notes: list[str],
    products: bool = True,
    split: Split = split_stacked,
) -> tuple[int, int, GroupedLayer]:
    """Layer ``l`` (its source ``prefix``, its projections ``r`` by role) as ``h`` package heads, into ``out``
    (and ``notes``); its head size ``d_h``, its number of key/value heads, and the layer in its own factored
    parametrization (:class:`~ag_attention._point.grouped.GroupedLayer`). ``products=False``: the factors only,
    nothing written into ``out`` (the per-head table at real sizes never forms ``W_O,h W_v,h``). ``split``: the
    layer's layout's reader of a stacked projection (:attr:`Layout.split`)."""
    where = _where(prefix)

    def source(role: str) -> str:
        return shown_name(sources[(prefix, role)])

    r = _unstacked(prefix, r, sources, convert, split, h)
    q, k, v = (
        r[x] if isinstance(r[x], np.ndarray) and r[x].dtype == object else convert(r[x], source(x)) for x in "qkv"
    )
    dq, kv, dv = _head_sizes(where, q, k, v, h)
    group = h // kv
    o = _output(l, where, r, source, convert, h, kv, v.shape[0], dv, notes)
    b: dict[str, Any] = {x: r.get(f"{x} bias") for x in "qkvo"}
    for x, rows in (("q", q.shape[0]), ("k", k.shape[0]), ("v", v.shape[0]), ("o", o.shape[0])):
        if b[x] is not None and b[x].shape != (rows, 1):
            raise InvalidArgumentError(
                f"{source(x + ' bias')}: {b[x].shape[0]} entries, the {_ROLE_WORDS[x]} projection has {rows} rows"
            )
    for i in range(h if products else 0):
        g = i // group
        out[f"layers.{l}.heads.{i}.Q"] = q[i * dq : (i + 1) * dq]
        out[f"layers.{l}.heads.{i}.K"] = k[g * dq : (g + 1) * dq]
        out[f"layers.{l}.heads.{i}.V"] = o[:, i * dv : (i + 1) * dv].dot(v[g * dv : (g + 1) * dv])
        for x, name, rows in (("q", "bQ", slice(i * dq, (i + 1) * dq)), ("k", "bK", slice(g * dq, (g + 1) * dq))):
            if b[x] is not None:
                out[f"layers.{l}.heads.{i}.{name}"] = b[x][rows]
        if b["v"] is not None:  # the value bias through W_O,h: head i adds W_O,i b_v,g to every token
            out[f"layers.{l}.heads.{i}.bV"] = o[:, i * dv : (i + 1) * dv].dot(b["v"][g * dv : (g + 1) * dv])
    if products and b["o"] is not None:
        out[f"layers.{l}.bO"] = b["o"]
    if kv < h:
        notes.append(
            f"layer {l + 1} ({where}): grouped-query attention, {h} query heads sharing {kv} key/value "
            f"heads (groups of {group}): read exactly as {h} heads with W_k and W_v of a group repeated; the "
            f"ambient geometry reported is that of the {h}-head model at this GQA point (where a GQA point "
            "is critical as a rule: its function lies in the smaller GQA model), the GQA model's own in "
            "the note on grouped-query attention"
        )
    if dv < min(o.shape[0], q.shape[1]):
        notes.append(
            f"layer {l + 1} ({where}): V = W_O,h W_v,h has rank <= {dv} (the head size) here; it is "
            "analysed with V free (a neuromanifold that contains this one)"
        )
    own = GroupedLayer(
        tuple(q[i * dq : (i + 1) * dq] for i in range(h)),
        tuple(o[:, i * dv : (i + 1) * dv] for i in range(h)),
        tuple(k[g * dq : (g + 1) * dq] for g in range(kv)),
        tuple(v[g * dv : (g + 1) * dv] for g in range(kv)),
        tuple(b["q"][i * dq : (i + 1) * dq] for i in range(h)) if b["q"] is not None else (),
        tuple(b["k"][g * dq : (g + 1) * dq] for g in range(kv)) if b["k"] is not None else (),
        tuple(b["v"][g * dv : (g + 1) * dv] for g in range(kv)) if b["v"] is not None else (),
        b["o"],
    )
    return dq, kv, own
