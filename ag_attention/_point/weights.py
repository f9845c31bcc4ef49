"""A network with its weights: :class:`Network`, from arrays, numbers, ``.npz``, ``.safetensors`` or PyTorch.

Names.  Weights are matrices named ``layers.{l}.heads.{h}.{Q,K,V}`` (``l``
and ``h`` from 0), or ``layers.{l}.heads.{h}.A`` with ``.V`` (the attention
matrix itself, with a rank bound ``rank=``).  Shapes, as in
docs/math/model.md: ``Q``, ``K`` are ``a x d_in``, ``V`` is ``d_out x d_in``,
``A`` is ``d_in x d_in``.  The architecture is inferred from the shapes
(widths, ranks, heads) and the flags given (``tokens``, ``causal``, ``skip``,
``normalized``, ``temperature``), and checked: every array present once, no
other, consistent shapes, finite values.

Exact values.  Every entry becomes an exact rational (``fractions.Fraction``):

* integers and ``Fraction``\\ s as they are;
* floats (Python, NumPy float16/32/64 and float128, a tensor's values; a
  ``.safetensors`` file's BF16 and 8-bit floats) by default
  as the *exact binary value* of the float in its own format
  (``Fraction(0.1)`` is ``3602879701896397/36028797018963968``: the point the
  float stands for; a float128 keeps its 64-bit mantissa);
* with ``denominator=N``, rounded to the nearest multiple of ``1/N`` (ties to
  even), for smaller numbers where the exact binary value is not wanted.

Every result computed from a :class:`Network` says which rational point it
is about (:attr:`Network.conversion`).  ``A`` with ``rank < d_in`` is factored
exactly, ``A = Q^T K`` (a rank factorization over QQ, padded with zero rows
up to ``rank``), so the network is a point of the QKV parametrization with
the same function; ``A`` of rank above ``rank`` is refused, naming it.

PyTorch is duck-typed: an object with ``state_dict()`` (a module) or a
mapping of name to tensor (a state dict); a tensor is read through
``.detach().cpu().numpy()``.  The package never imports torch.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._architecture import Architecture, check_architecture
from .._checks import check_int, check_type
from .._errors import InvalidArgumentError
from .._network import ObjectArithmetic
from .._network import forward as network_forward
from .._numeric import Float64
from .._positions import Rotary, rotary_from_dict
from .._resources import memory_limit
from .checkpoints import (
    attention_entries,
    model_line,
    recognize,
    settle_arguments,
    trained_softmax,
    translate,
)
from .configs import module_arguments, read_config
from .files import read_weights_file as read
from .grouped import GroupedLayer
from .layouts import read_layouts
from .matrices import (  # NAME, WEIGHT_NAMES, to_fraction: re-exported
    EXACT_BYTES_PER_SQUARE,
    NAME,
    WEIGHT_NAMES,
    by_head,
    check_size,
    chosen_names,
    converted,
    factored_a,
    has_floats,
    matrix,
    shapes,
    to_fraction,
)
from .safetensors import shown_name

__all__ = ["Network", "check_network", "NAME", "WEIGHT_NAMES", "to_fraction", "read_arrays", "read_weights_file"]

#: a weights file above this size is refused before it is read
MAX_FILE_BYTES = 2 * 2**30


def exact_parameter_limit() -> int | None:
    """The most parameters whose exact local rank fits in the memory available now (None: no limit known)."""

    room = memory_limit().bytes
    return None if room is None else math.isqrt(int(room) // EXACT_BYTES_PER_SQUARE)


@dataclass(frozen=True, eq=False)
class Network:
    """A network with its weights: the :class:`~ag_attention.Architecture` and exact rational weights.

    ``weights[l][h]`` maps ``"Q"``, ``"K"``, ``"V"`` (or ``"A"``, ``"V"`` for
    the AV parametrization) to object arrays of :class:`fractions.Fraction`.
    ``conversion`` says how floats became rationals; ``floats`` whether any
    entry was a float (the float64 point then exists too); ``source`` where the
    weights came from; ``factored`` the layers whose ``A`` was factored into
    ``Q^T K``.  Build one with :meth:`from_weights`, :meth:`load` or
    :meth:`from_torch`.

    >>> net = Network.from_weights({"layers.0.heads.0.Q": [[1, 0]], "layers.0.heads.0.K": [[0, 1]],
    ...                             "layers.0.heads.0.V": [[1, 1]]})
    >>> net.architecture.describe(), net.conversion
    ('widths 2,1 ranks 1 t=2', 'exact (no floats)')
    """

    architecture: Architecture
    weights: tuple[tuple[dict[str, np.ndarray], ...], ...]
    conversion: str
    floats: bool
    source: str = "arrays"
    factored: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()  # how a checkpoint's layout was mapped (docs/math/point.md, point-checkpoints)
    ignored: tuple[str, ...] = ()  # a checkpoint's tensors read but not used (zero biases, embeddings, norms, ...)
    layout: str = ""  # a checkpoint's layout read and its heads ("GPT-2 Conv1D c_attn/c_proj, 12 heads")
    grouped: tuple[GroupedLayer, ...] = ()  # a grouped-query checkpoint in its own parametrization (grouped.py)
    model: str = ""  # a checkpoint's model analysed, its layout and what was dropped (the report's first line)
    head_sizes: tuple[int, ...] = ()  # a checkpoint's d_h per layer: V_h = W_O,h W_v,h has rank <= d_h
    factors: tuple[GroupedLayer, ...] = ()  # a checkpoint's factors per layer (W_q,h, W_k,g, W_O,h, W_v,g)

    def __post_init__(self) -> None:
        """The fields the engines read, checked by their types (the class methods build them right)."""
        check_architecture(self.architecture, "architecture")
        check_type(self.weights, "weights", tuple, "a tuple of layers (build a Network with Network.from_weights)")
        check_type(self.conversion, "conversion", str, "a string")
        check_type(self.floats, "floats", bool, "True or False")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_weights(
        cls,
        weights: Mapping[str, Any],
        *,
        tokens: int = 2,
        rank: int | None = None,
        causal: bool = False,
        skip: bool = False,
        normalized: bool = False,
        temperature: float = 1.0,
        denominator: int | None = None,
        source: str = "arrays",
        max_parameters: int | None = None,
        positions: Rotary | str | dict[str, Any] | None = None,
    ) -> Network:
        """The network of ``weights``, a mapping ``layers.{l}.heads.{h}.{Q,K,V}`` (or ``.A``) -> matrix, with biases
        ``layers.{l}.heads.{h}.{bQ,bK,bV}`` and ``layers.{l}.bO`` where the model has them (affine attention,
        docs/math/affine.md).

        ``rank`` is the bound on ``rank A`` when ``A`` is given (default: ``A``
        free).  ``positions``: rotary position embeddings (``"rope"`` or a :class:`~ag_attention.Rotary`,
        docs/math/rotary.md). See the module docstring for the names, shapes and numbers.
        ``max_parameters``: refuse more parameters than this, from the shapes,
        before any weight is converted (the CLI's ``point`` passes
        ``exact_parameter_limit()``, the most parameters whose exact local rank fits in memory).
        """
        if not isinstance(weights, Mapping):
            raise InvalidArgumentError(
                f"weights: a mapping of names to matrices is expected, got {type(weights).__name__}"
            )
        if denominator is not None:
            denominator = check_int(denominator, "denominator", minimum=1)
        if rank is not None:
            rank = check_int(rank, "rank", minimum=1)
        found, depth, heads = by_head(weights)
        use_a, want = chosen_names(found, rank)
        if max_parameters is not None:  # by the shapes alone, before any weight is converted
            check_size(found, want, max_parameters)
        mats, floats = converted(found, want, denominator)
        widths, ranks = shapes(mats, depth, heads, use_a)
        factored: list[int] = []
        if use_a and rank is not None:
            ranks, use_a, factored = factored_a(mats, widths, ranks, rank)
        arch = Architecture(
            widths,
            None if use_a else ranks,
            tokens=tokens,
            parametrization="AV" if use_a else "QKV",
            heads=heads,
            skip=skip,
            normalized=bool(normalized),
            temperature=temperature,
            causal=causal,
            bias="".join(n[1].lower() for n in want if n.startswith("b")),
            positions=positions,
        )
        layers = tuple(tuple(mats[(l, h)] for h in range(heads)) for l in range(depth))
        if not floats:
            conversion = "exact (no floats)"
        elif denominator is None:
            conversion = "exact binary value of each float"
        else:
            conversion = f"floats rounded to multiples of 1/{denominator}"
        return cls(arch, layers, conversion, floats, source, tuple(factored))

    @classmethod
    def from_checkpoint(
        cls,
        arrays: Mapping[str, Any],
        *,
        tokens: int | None = None,
        heads: int | None = None,
        names: dict[str, str] | None = None,
        source: str = "checkpoint",
        metadata: Mapping[str, str] | None = None,
        stored_in: str = "its __metadata__",
        **kwargs: Any,
    ) -> Network:
        """The network of a checkpoint's tensors as people save them: the package's names, or a layout of
        ``ag_attention._point.checkpoints.LAYOUTS`` (``torch.nn.MultiheadAttention``, ``q_proj``/``k_proj``/
        ``v_proj``/``o_proj`` with grouped-query attention, BERT's ``query``/``key``/``value``, GPT-2's ``Conv1D``
        ``c_attn``/``c_proj``, fused ``Wqkv``/``qkv_proj``), or a mapping ``names`` (source name ->
        ``layers.<l>.<q|k|v|o>``); every other tensor listed as ignored. Each head's ``V`` is ``W_O,h W_v,h``
        (exact).

        ``normalized``: None (default) analyses the model the layout was trained as (its ``checkpoints.LAYOUTS``
        entry's ``trained_as``): softmax for every checkpoint layout, the score scale ``1/sqrt(d_h)`` then the
        temperature ``sqrt(d_h)``; lightning for the package's names and a mapping. ``normalized=False`` (the CLI's
        ``--as lightning``) removes the softmax and drops the scale (a constant factor of a lightning layer);
        ``model`` names the model, the layout and what was dropped (docs/math/point.md, point-checkpoints).

        ``tokens`` and ``heads``: from the file (``metadata``, a ``.safetensors`` ``__metadata__``; the heads also
        from the package's names) or given, as in the CLI: a value given that the file contradicts is refused
        naming both, and every one neither stored nor given is named in one message (the heads only when the
        layout leaves them open: one head of 64 and two of 32 are different functions of the same weights);
        ``stored_in`` names where ``metadata`` came from, in those messages.

        ``biases`` (default True): the projections' biases are read into the model, zero or not (affine attention,
        docs/math/affine.md); ``biases=False`` reads the paper's model, dropping exactly zero biases and refusing a
        nonzero one by name."""

        if not isinstance(arrays, Mapping):
            raise InvalidArgumentError(
                f"weights: a mapping of names to matrices is expected, got {type(arrays).__name__}"
            )
        arrays, meta = dict(arrays), dict(metadata or {})
        biases = bool(kwargs.pop("biases", True))
        given_causal = kwargs.pop("causal", None)
        given_positions = kwargs.pop("positions", None)
        if given_positions is not None:
            meta = _given_rope(meta, given_positions, source)
        rec = recognize(arrays, names, meta, biases)  # names and shapes only: nothing converted yet
        tokens, heads = settle_arguments(rec, tokens, heads, meta, source, stored_in)
        positions = _rope_of(meta, tokens, source)
        causal, causal_why = _causal_of(meta, rec.layout, given_causal)
        _check_window(meta, causal, tokens, source)
        kwargs["causal"], kwargs["positions"] = causal, positions
        requested = kwargs.get("normalized") is not None
        if kwargs.get("normalized") is None:  # the model the layout was trained as (LAYOUTS)
            kwargs["normalized"] = not rec.package and trained_softmax(rec.layout)
        denominator = kwargs.get("denominator")
        if not rec.package:
            _check_limit(arrays, names, rec.layout, kwargs.get("max_parameters"))
        tr = translate(
            arrays,
            lambda value, name: matrix(value, name, denominator),
            heads=heads,
            names=names,
            metadata=meta,
            biases=biases,
        )
        if tr.layout == "package names":
            return cls.from_weights(tr.weights, source=source, tokens=tokens, **kwargs)
        floats = any(has_floats(v) for k, v in arrays.items() if k not in tr.ignored)
        if kwargs["normalized"]:  # softmax is not homogeneous: the score scale 1/sqrt(d_h) is a temperature
            kwargs["temperature"] = _temperature(tr.head_sizes, float(kwargs.get("temperature", 1.0)))
        net = cls.from_weights(tr.weights, source=f"{source} ({tr.layout})", tokens=tokens, **kwargs)
        conversion = net.conversion
        if floats:
            d = kwargs.get("denominator")
            conversion = "exact binary value of each float" if d is None else f"floats rounded to multiples of 1/{d}"
            conversion += "; V = W_O,h W_v,h exactly"
        _check_sizes(meta, tr.key_value_heads, tr.head_sizes, source)
        H = net.architecture.heads
        layout = f"{tr.layout}, {H} head{'s' if H > 1 else ''}"
        if min(tr.key_value_heads) < H:
            layout += f" (grouped-query: {'/'.join(str(k) for k in sorted(set(tr.key_value_heads)))} key/value heads)"
        arch = net.architecture
        model = model_line(
            tr.layout, layout, arch.normalized, requested, arch.causal, tr.head_sizes, arch.temperature, causal_why
        )
        if arch.positions is not None:
            model += f"; rotary positions {arch.positions.describe()} ({_rope_source(meta)})"
        return dataclasses.replace(
            net,
            conversion=conversion,
            floats=floats or net.floats,
            notes=tr.notes,
            ignored=tr.ignored,
            layout=layout,
            grouped=tr.grouped,
            model=model,
            head_sizes=tr.head_sizes,
            factors=tr.factors,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str], **kwargs: Any) -> Network:
        """The network stored in a ``.npz``, ``.safetensors``, ``.pt`` or ``.bin`` file (arrays named as in
        :meth:`from_weights`, or a checkpoint's layout: :meth:`from_checkpoint`, with ``tokens=``, ``heads=`` and
        ``names=``); a ``.pt`` / ``.bin`` file only through ``torch.load(weights_only=True)``, where PyTorch is
        installed (``ag_attention/_point/files.py``).

        A directory is read as ``save_pretrained`` writes it: ``config.json`` and ``model.safetensors``, or the shards
        of ``model.safetensors.index.json`` (``pytorch_model.bin`` and its index through torch).

        A ``.safetensors`` file's ``__metadata__`` may give the token count (``"tokens": "4"``) and the number of
        heads (``"heads"``), and so may Hugging Face's ``config.json`` beside the file (``num_attention_heads``,
        ``n_head``), which also gives the rotary positions (``rope_parameters``, ``rope_theta``,
        ``partial_rotary_factor``, ``rotary_pct``; docs/math/rotary.md), the causal mask the model was trained with
        (its ``model_type``, ``is_decoder``) and the key/value heads, each checked against the weights; ALiBi,
        relative position biases and rope types that are not modelled are refused by name. What is neither stored
        nor given is required (``tokens=``, and ``heads=`` when the layout leaves it open), as in the CLI."""

        p = Path(path)
        arrays, metadata = read_weights_file(p)
        config = read_config(p)
        stored_in = "its __metadata__"
        if "heads" in config:
            if "heads" in metadata and metadata["heads"] != config["heads"]:
                raise InvalidArgumentError(
                    f"{p}: its __metadata__ says heads={shown_name(metadata['heads'])}, the "
                    f"config.json beside it heads={config['heads']}"
                )
            if "heads" not in metadata:
                stored_in = "the config.json beside it"
        metadata = {**{k: v for k, v in config.items() if k != "heads" or "heads" not in metadata}, **metadata}
        net = cls.from_checkpoint(arrays, source=str(p), metadata=metadata, stored_in=stored_in, **kwargs)
        if stored_in != "its __metadata__":
            net = dataclasses.replace(
                net, notes=net.notes + (f"heads={config['heads']} from the config.json beside the file",)
            )
        return net

    @classmethod
    def from_torch(cls, module_or_state_dict: Any, **kwargs: Any) -> Network:
        """The network of a PyTorch module (its ``state_dict()``) or a state dict, as in :meth:`from_checkpoint`
        (duck-typed: torch itself is never imported here). A module's own ``num_heads`` (every attention
        submodule's, e.g. ``torch.nn.MultiheadAttention``'s, or its ``config.num_attention_heads`` / ``n_head``)
        gives the heads; a module with rotary position embeddings (a ``rotary_emb`` submodule, an ``inv_freq``
        buffer, ``config.rope_theta``) is refused saying why; ``tokens=`` is required."""

        obj = module_or_state_dict
        state = obj.state_dict() if hasattr(obj, "state_dict") and callable(obj.state_dict) else obj
        if not isinstance(state, Mapping):
            raise InvalidArgumentError(f"from_torch: a module or a state dict is expected, got {type(obj).__name__}")
        metadata = module_arguments(obj) if state is not obj else {}
        return cls.from_checkpoint(
            dict(state),
            source=f"torch {type(obj).__name__}",
            metadata=metadata,
            stored_in="the module's num_heads",
            **kwargs,
        )

    def forward(self, X: Any, *, exact: bool = False) -> np.ndarray:
        """The network's outputs on inputs ``X`` (``(N, t, d_0)``, or one sequence ``(t, d_0)``), in the model of
        docs/math/model.md: per head ``y_i = sum_j (x_i^T A x_j) V x_j`` (``A = Q^T K``; the softmax of the scores
        for softmax attention), heads summed, ``+ x_i`` with skip connections, layer after layer.

        float64 by default (from the exact weights); ``exact=True``: exact rationals (an object array of
        :class:`fractions.Fraction`; inputs by their exact value; lightning attention only).

        >>> net = Network.from_weights({"layers.0.heads.0.A": [[1, 0], [0, 2]], "layers.0.heads.0.V": [[1, 1]]})
        >>> net.forward([[1, 0], [0, 1]], exact=True).tolist()   # y_1 = (1)(1) + (0)(1), y_2 = 0 + 2 * 1
        [[Fraction(1, 1)], [Fraction(2, 1)]]
        """

        arch = self.architecture
        try:
            arr = np.array(X, dtype=object)
        except (ValueError, TypeError) as exc:
            raise InvalidArgumentError(f"X: not an array of numbers ({exc})") from None
        one = arr.ndim == 2
        if one:
            arr = arr[None]
        if arr.ndim != 3 or arr.shape[1:] != (arch.tokens, arch.widths[0]):
            raise InvalidArgumentError(
                f"X: inputs of shape {np.shape(X)}, expected (N, {arch.tokens}, "
                f"{arch.widths[0]}) or ({arch.tokens}, {arch.widths[0]})"
            )
        if exact:
            if arch.normalized:
                raise InvalidArgumentError("exact=True: softmax attention is not rational; use exact=False")
            Xe = np.empty(arr.shape, dtype=object)
            for idx, v in np.ndenumerate(arr):
                Xe[idx] = to_fraction(v.item() if isinstance(v, np.generic) else v, f"X{list(idx)}")
            out = network_forward(arch, ObjectArithmetic(), self.theta(), Xe)
        else:
            Xf = np.array(
                [
                    [
                        [float(to_fraction(v.item() if isinstance(v, np.generic) else v, "X")) for v in row]
                        for row in seq
                    ]
                    for seq in arr
                ],
                dtype=np.float64,
            )
            out = network_forward(arch, Float64(), self.theta_float(), Xf)
        return out[0] if one else out

    # ------------------------------------------------------------------ views
    def theta(self) -> np.ndarray:
        """The flat parameter vector (object array of Fractions) in the order of ``architecture.blocks``."""
        theta = np.empty(self.architecture.parameter_count, dtype=object)
        for b in self.architecture.blocks:
            theta[b.slice] = self.weights[b.layer - 1][b.head][b.name].ravel()
        return theta

    def theta_mod(self, p: int) -> np.ndarray | None:
        """The parameters reduced modulo ``p`` (int64), or None when a denominator is divisible by ``p``."""
        out = np.empty(self.architecture.parameter_count, dtype=np.int64)
        for i, q in enumerate(self.theta()):
            if q.denominator % p == 0:
                return None
            out[i] = q.numerator % p * pow(q.denominator % p, -1, p) % p
        return out

    def theta_float(self) -> np.ndarray:
        """The parameters as float64 (the float point, exactly what was given when it was float64)."""
        return np.array([float(q) for q in self.theta()], dtype=np.float64)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """``layers.{l}.heads.{h}.{name}`` -> float64 matrix (for saving with NumPy or safetensors)."""
        return {
            f"layers.{l}.bO" if n == "bO" else f"layers.{l}.heads.{h}.{n}": np.array(m, dtype=np.float64)
            for l, layer in enumerate(self.weights)
            for h, head in enumerate(layer)
            for n, m in head.items()
        }

    def describe(self) -> str:
        return f"{self.architecture.describe()} from {self.source} ({self.conversion})"

    def __repr__(self) -> str:
        arch = self.architecture
        return f"Network({arch.describe()}, {arch.parameter_count} parameters, {self.conversion})"


def _temperature(sizes: tuple[int, ...], given: float) -> float:
    """The softmax temperature of a checkpoint: ``sqrt(d_h)`` (its score scale) times the one given."""
    if len(set(sizes)) > 1:
        raise InvalidArgumentError(
            f"softmax layers with head sizes {list(sizes)}: one temperature sqrt(d_h) for all layers is needed (the "
            "architecture has one)"
        )
    return given * math.sqrt(sizes[0])


def _check_limit(arrays: dict[str, Any], names: dict[str, str] | None, layout: str, limit: int | None) -> None:
    """More attention weights than ``limit`` parameters refused from the shapes, before any is converted (the
    network has at least 3/4 of these entries as parameters)."""
    if limit is None:
        return
    entries = attention_entries(arrays, names)
    if 3 * entries // 4 > limit:
        raise InvalidArgumentError(
            f"weights: {entries:,} attention weights ({layout}, at least {3 * entries // 4:,} parameters), "
            f"more than the {limit:,} whose local rank fits in the memory available here; refused "
            "before converting them (point --per-head gives every head's geometry at any size)"
        )


def _given_rope(meta: dict[str, str], positions: Any, source: str) -> dict[str, str]:
    """The metadata with the rotary positions given (``positions=``, ``--rope-theta``): a config that says another
    rotation is refused naming both."""
    rotary = Rotary() if positions == "rope" else positions
    if not isinstance(rotary, Rotary):
        rotary = rotary_from_dict(positions)
    if rotary is None:
        return {k: v for k, v in meta.items() if k != "rope"}
    if "rope" in meta:
        stored = rotary_from_dict({k: v for k, v in json.loads(meta["rope"]).items() if k != "dynamic_until"})
        if stored != rotary:
            raise InvalidArgumentError(
                f"{source}: positions {rotary.describe()} given, but its config says "
                + (stored.describe() if stored else "none")
            )
    return {**meta, "rope": json.dumps(rotary.to_dict()), "rope_given": "1"}


def _rope_of(meta: dict[str, str], tokens: int, source: str) -> Rotary | None:
    """The rotary positions the metadata names (a config.json's rope, or given), checked against ``tokens``: a
    ``dynamic`` rope type is the plain rotation only up to its original length."""
    if "rope" not in meta:
        return None
    data = json.loads(meta["rope"])
    until = data.pop("dynamic_until", None)
    if until is not None and tokens > until:
        raise InvalidArgumentError(
            f"{source}: rope_type dynamic scales the frequencies past {until} positions, and t={tokens}: not "
            f"modelled (docs/math/rotary.md); t <= {until} reads the plain rotation"
        )
    return rotary_from_dict(data)


def _rope_source(meta: dict[str, str]) -> str:
    return "given" if meta.get("rope_given") else "from its config"


def _causal_of(meta: dict[str, str], layout: str, given: bool | None) -> tuple[bool, str]:
    """The causal mask the model was trained with and why: given (``causal=``, ``--causal``/``--no-causal``), else
    its config (``model_type``, ``is_decoder``, ``is_causal``: :func:`~ag_attention._point.configs.model_config`),
    else its layout (GPT-2's names are a decoder's), else none."""
    if given is not None:
        return bool(given), "--causal" if given else "--no-causal"
    if "causal" in meta:
        return meta["causal"] == "true", meta.get("causal_why", "its config")
    for entry in read_layouts(layout):
        if entry.causal:
            return True, f"{entry.causal}'s layout is a decoder's"
    return False, ""


def _check_window(meta: dict[str, str], causal: bool, tokens: int, source: str) -> None:
    window = meta.get("sliding_window")
    if causal and window is not None and tokens > int(window):
        raise InvalidArgumentError(
            f"{source}: a sliding window of {window} tokens and t={tokens}: the mask then also drops the keys more "
            f"than {window} back, not modelled (t <= {window} is the causal mask)"
        )


def _check_sizes(meta: dict[str, str], kv: tuple[int, ...], sizes: tuple[int, ...], source: str) -> None:
    """The config's key/value heads and head size against the shapes read: a contradiction refused naming both."""
    if "kv_heads" in meta and any(k != int(meta["kv_heads"]) for k in kv):
        raise InvalidArgumentError(
            f"{source}: its config says num_key_value_heads={meta['kv_heads']}, the weights give {sorted(set(kv))}"
        )
    if "head_dim" in meta and any(d != int(meta["head_dim"]) for d in sizes):
        raise InvalidArgumentError(
            f"{source}: its config says head_dim={meta['head_dim']}, the weights give {sorted(set(sizes))}"
        )


def read_arrays(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a ``.npz`` or ``.safetensors`` file, after checking it is a regular file of sane size."""
    return read_weights_file(path)[0]


def read_weights_file(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """The arrays of a ``.npz``, ``.safetensors``, ``.pt`` or ``.bin`` file and its metadata, the file checked
    first (:func:`ag_attention._point.files.read_weights_file`; at most :data:`MAX_FILE_BYTES`)."""

    return read(path, MAX_FILE_BYTES)


def check_network(value: object, name: str = "net") -> Network:
    """``value`` if it is a :class:`Network`, else an :class:`~ag_attention.InvalidArgumentError` naming ``name``
    and what came: the first check of every public function that takes a network with its weights.

    >>> check_network([[1]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: net=[[1]]: must be a Network (Network.from_weights, ...), not list
    """
    return check_type(value, name, Network, "a Network (Network.from_weights, .load or .from_torch)")
