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
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .grouped import GroupedLayer
from .safetensors import shown_name

__all__ = ["layer_heads"]


def _where(prefix: str) -> str:
    return shown_name(prefix) if prefix else "(top level)"


def _split_stacked(W: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
) -> tuple[int, int, GroupedLayer]:
    """Layer ``l`` (its source ``prefix``, its projections ``r`` by role) as ``h`` package heads, into ``out``
    (and ``notes``); its head size ``d_h``, its number of key/value heads, and the layer in its own factored
    parametrization (:class:`~ag_attention._point.grouped.GroupedLayer`). ``products=False``: the factors only,
    nothing written into ``out`` (the per-head table at real sizes never forms ``W_O,h W_v,h``)."""
    where = _where(prefix)
    r = dict(r)

    def source(role: str) -> str:
        return shown_name(sources[(prefix, role)])

    for stacked in ("qkv", "qkvT"):
        if stacked in r:
            W = convert(r.pop(stacked), source(stacked))
            r["q"], r["k"], r["v"] = _split_stacked(W.T if stacked == "qkvT" else W, source(stacked))
            for role in "qkv":
                sources[(prefix, role)] = sources[(prefix, stacked)]
    if "oT" in r:
        r["o"] = convert(r.pop("oT"), source("oT")).T
        sources[(prefix, "o")] = sources[(prefix, "oT")]
    missing = [role for role in "qkv" if role not in r]
    if missing:
        raise InvalidArgumentError(
            f"layer {where}: no {missing[0]!r} projection (found: " + ", ".join(source(x) for x in sorted(r)) + ")"
        )
    q, k, v = (
        r[x] if isinstance(r[x], np.ndarray) and r[x].dtype == object else convert(r[x], source(x)) for x in "qkv"
    )
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
    dv = v.shape[0] // kv
    group = h // kv
    if "o" in r:
        o = convert(r["o"], source("o")) if not (isinstance(r["o"], np.ndarray) and r["o"].dtype == object) else r["o"]
        if o.shape[1] != h * dv:
            raise InvalidArgumentError(f"{source('o')}: {o.shape[1]} columns, the {h} heads give {h * dv} values")
    else:
        if kv != h:
            raise InvalidArgumentError(f"layer {where}: grouped-query attention without an output projection")
        o = np.array([[Fraction(int(i == j)) for j in range(v.shape[0])] for i in range(v.shape[0])], dtype=object)
        notes.append(f"layer {l + 1} ({where}): no output projection: W_O = I (the heads concatenated)")
    for i in range(h if products else 0):
        g = i // group
        out[f"layers.{l}.heads.{i}.Q"] = q[i * dq : (i + 1) * dq]
        out[f"layers.{l}.heads.{i}.K"] = k[g * dq : (g + 1) * dq]
        out[f"layers.{l}.heads.{i}.V"] = o[:, i * dv : (i + 1) * dv].dot(v[g * dv : (g + 1) * dv])
    if kv < h:
        notes.append(
            f"layer {l + 1} ({where}): grouped-query attention, {h} query heads sharing {kv} key/value "
            f"heads (groups of {group}): read exactly as {h} heads with W_k and W_v of a group repeated; the "
            f"ambient geometry reported is that of the {h}-head model at this GQA point (where a GQA point "
            "is critical as a rule: its function lies in the smaller GQA model), the GQA model's own in "
            "the note on grouped-query attention"
        )
    if dv < min(o.shape[0], d_in):
        notes.append(
            f"layer {l + 1} ({where}): V = W_O,h W_v,h has rank <= {dv} (the head size) here; it is "
            "analysed with V free (a neuromanifold that contains this one)"
        )
    own = GroupedLayer(
        tuple(q[i * dq : (i + 1) * dq] for i in range(h)),
        tuple(o[:, i * dv : (i + 1) * dv] for i in range(h)),
        tuple(k[g * dq : (g + 1) * dq] for g in range(kv)),
        tuple(v[g * dv : (g + 1) * dv] for g in range(kv)),
    )
    return dq, kv, own
