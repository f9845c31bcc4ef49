"""The per-head table of a file, a ``save_pretrained`` directory or a :class:`~ag_attention.Network`: the factors
read as :mod:`.checkpoints` reads them, in float64 (the stored values exactly), for :func:`.heads.head_table`."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .._positions import Rotary, rotary_from_dict
from .checkpoints import read_config, recognize, trained_softmax, translate
from .factors import GAP_RTOL
from .files import tensor_to_numpy
from .grouped import GroupedLayer
from .heads import HeadsTable, head_table
from .safetensors import shown_name
from .weights import read_weights_file

__all__ = ["load_head_table", "network_head_table"]


def _floats(value: Any, name: str) -> np.ndarray:
    """A tensor as a float64 matrix, exactly (float16, bf16 and float32 are exact in float64); non-finite refused."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = tensor_to_numpy(value)
    arr = np.asarray(value)
    if arr.dtype == object:
        return arr
    if arr.dtype.kind not in "iuf" or arr.ndim != 2:
        raise InvalidArgumentError(f"{name}: a matrix of numbers is expected, got {arr.dtype} of shape {arr.shape}")
    out = arr.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise InvalidArgumentError(f"{name}: weights must be finite numbers")
    return out


_OWN = re.compile(r"^layers\.(\d+)\.heads\.(\d+)\.(Q|K|V|A|bQ|bK|bV)$")
_OWN_LAYER = re.compile(r"^layers\.(\d+)\.bO$")


def _own_layers(arrays: dict[str, Any]) -> list[GroupedLayer]:
    """The package's names as factors: ``A_h = Q^T K`` (or ``A^T`` times ``I``), ``V_h = I V``, the biases as
    they are (a column each)."""
    found: dict[int, dict[int, dict[str, np.ndarray]]] = {}
    outputs: dict[int, np.ndarray] = {}
    for key, value in arrays.items():
        m, layer = _OWN.match(key), _OWN_LAYER.match(key)
        if layer is not None:
            outputs[int(layer.group(1))] = _floats(np.asarray(value).reshape(-1, 1), key)
            continue
        if m is None:
            raise InvalidArgumentError(
                f"{shown_name(key)}: not a weight name layers.<l>.heads.<h>.<Q|K|V|A|bQ|bK|bV> or layers.<l>.bO"
            )
        value = np.asarray(value).reshape(-1, 1) if m.group(3).startswith("b") else value
        found.setdefault(int(m.group(1)), {}).setdefault(int(m.group(2)), {})[m.group(3)] = _floats(value, key)
    out = []
    for l in sorted(found):
        heads = [found[l][h] for h in sorted(found[l])]
        d, e = heads[0]["V"].shape[1], heads[0]["V"].shape[0]
        eye = np.eye(d)
        out.append(
            GroupedLayer(
                tuple(h["A"].T if "A" in h else h["Q"] for h in heads),
                tuple(np.eye(e) for _ in heads),
                tuple(eye if "A" in h else h["K"] for h in heads),
                tuple(h["V"] for h in heads),
                tuple(h["bQ"] for h in heads) if all("bQ" in h for h in heads) else (),
                tuple(h["bK"] for h in heads) if all("bK" in h for h in heads) else (),
                tuple(h["bV"] for h in heads) if all("bV" in h for h in heads) else (),
                outputs.get(l),
            )
        )
    return out


def load_head_table(
    path: str | os.PathLike[str],
    *,
    heads: int | None = None,
    names: dict[str, str] | None = None,
    normalized: bool | None = None,
    rtol: float = 1e-3,
    biases: bool = True,
    gap_rtol: float = GAP_RTOL,
    positions: Rotary | None = None,
) -> HeadsTable:
    """The per-head table of a weights file or a ``save_pretrained`` directory at any size (``point --per-head``):
    read as ``point`` reads it (the layouts of :mod:`.checkpoints`, the heads from the file, its ``config.json`` or
    ``heads=``; its rotary positions from the config or ``positions=``), the factors kept in float64 (exactly the
    stored values), no ``d x d`` product formed and no rational converted. ``normalized``: softmax (default: the
    model the layout was trained as)."""

    p = Path(path)
    arrays, metadata = read_weights_file(p)
    metadata = {**read_config(p), **metadata}
    rope = positions
    if rope is None and "rope" in metadata:
        rope = rotary_from_dict({k: v for k, v in json.loads(metadata["rope"]).items() if k != "dynamic_until"})
    if rope is not None:
        metadata["rope"] = json.dumps(rope.to_dict())
    said = () if rope is None else (f"rotary positions {rope.describe()} ({'given' if positions else 'its config'})",)
    rec = recognize(arrays, names, metadata, biases)
    if rec.package:
        softmax = bool(normalized)
        return head_table(
            [dataclasses.replace(ly, rotary=rope) for ly in _own_layers(arrays)],
            normalized=softmax,
            rtol=rtol,
            model=f"{'softmax' if softmax else 'lightning'} attention, package names",
            gap_rtol=gap_rtol,
            notes=said,
            factored_values=False,
        )
    stored = int(metadata["heads"]) if str(metadata.get("heads", "")).isdigit() else None
    if heads is not None and stored is not None and heads != stored:
        raise InvalidArgumentError(f"{p}: heads={heads} given, but the file says heads={stored}")
    heads = heads or stored
    if heads is None and rec.needs_heads:
        raise InvalidArgumentError(f"{p}: the number of heads is not stored in the file: give heads= (--heads)")
    tr = translate(arrays, _floats, heads=heads, names=names, metadata=metadata, products=False, biases=biases)
    softmax = trained_softmax(tr.layout) if normalized is None else normalized
    H = len(tr.factors[0].Q)
    model = (
        f"{'softmax (normalized)' if softmax else 'lightning'} attention, read as {tr.layout}, "
        f"{H} head{'s' if H > 1 else ''}"
    )
    layers = [dataclasses.replace(ly, rotary=rope) for ly in tr.factors]
    return head_table(layers, normalized=softmax, rtol=rtol, model=model, gap_rtol=gap_rtol, notes=tr.notes + said)


def network_head_table(net: Any, rtol: float = 1e-3) -> HeadsTable | None:
    """The per-head table of a :class:`~ag_attention.Network` (its exact weights): a checkpoint's factors, or the
    package's ``Q``, ``K``, ``V``; None when the weights leave float64's range (the exact verdicts stand)."""
    arch = net.architecture
    if net.factors:
        layers = [dataclasses.replace(ly, rotary=arch.positions) for ly in net.factors]
    else:
        layers = []
        for layer in net.weights:
            d, e = layer[0]["V"].shape[1], layer[0]["V"].shape[0]
            eye = np.array([[Fraction(int(i == j)) for j in range(d)] for i in range(d)], dtype=object)
            out = np.array([[Fraction(int(i == j)) for j in range(e)] for i in range(e)], dtype=object)
            layers.append(
                GroupedLayer(
                    tuple(h["A"].T if "A" in h else h["Q"] for h in layer),
                    tuple(out for _ in layer),  # the package's V_h = I V_h (W_O = I, W_v = V_h), c_h = I c_h
                    tuple(eye if "A" in h else h["K"] for h in layer),
                    tuple(h["V"] for h in layer),
                    tuple(h["bQ"] for h in layer) if "q" in arch.bias else (),
                    tuple(h["bK"] for h in layer) if "k" in arch.bias else (),
                    tuple(h["bV"] for h in layer) if "v" in arch.bias else (),
                    layer[0]["bO"] if "o" in arch.bias else None,
                    arch.positions,
                )
            )
    try:
        with np.errstate(all="ignore"):
            # the report's model analyses V_h free: a rank of V_h below d_h is no defect there
            table = head_table(layers, normalized=arch.normalized, rtol=rtol, model=net.model, factored_values=False)
    except (OverflowError, np.linalg.LinAlgError):  # weights past float64's range (trust.py says so)
        return None
    values = [x for h in table.heads for f in (h.A, h.V) for x in f.singular_values]
    return table if all(math.isfinite(x) for x in values) and math.isfinite(sum(h.scale for h in table.heads)) else None
