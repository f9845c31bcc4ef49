"""What a checkpoint's companions say: a names file (``--names``), the Hugging Face ``config.json`` beside the
weights, a torch module's attributes; and attention that depends on positions (rotary embeddings, ALiBi),
refused by the name of the tensor or entry that says so (docs/math/model.md: the package's score is
``x_i^T A x_j`` with one ``A``).

Every file is read only when it is a regular file of at most :data:`MAX_NAMES_BYTES` (1 MiB), checked before a
byte is read, and parsed strictly (:func:`~ag_attention._bounded.loads_json`).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass
from typing import Any

from .._bounded import loads_json, shown_name
from .._checks import check_int
from .._errors import InvalidArgumentError
from .._positions import REFUSED_POSITIONS

__all__ = [
    "MAX_NAMES_BYTES",
    "read_small_json",
    "MODEL_TYPES",
    "ModelType",
    "ROPE_TYPES",
    "model_config",
    "read_names_file",
    "read_config",
    "refuse_rotary",
    "module_arguments",
    "settle_arguments",
]

#: names of rotary position embeddings (refused: the layer is not the paper's attention)
_ROTARY = re.compile(r"(^|[._])(rotary_emb|rotary|inv_freq|rope|freqs_cis)([._]|$)", re.IGNORECASE)


#: a names file larger than this is refused unread (a mapping of thousands of tensor names takes a few hundred kB)
MAX_NAMES_BYTES = 1 << 20


def _bytes(n: int) -> str:
    return f"{n:,} bytes" + (f" ({n >> 20} MiB)" if n >= 1 << 20 and not n % (1 << 20) else "")


def read_small_json(path: str | os.PathLike[str], where: str, what: str, limit: int = MAX_NAMES_BYTES) -> Any:
    """The JSON in a regular file of at most ``limit`` bytes (:data:`MAX_NAMES_BYTES`, 1 MiB): opened without
    blocking and checked (``fstat``) before a byte is read, so a FIFO never hangs and ``/dev/zero`` is never read
    until memory runs out; parsed strictly (:func:`~ag_attention._bounded.loads_json`: nesting limited,
    no key twice). Every failure is an :class:`InvalidArgumentError` starting with ``where``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InvalidArgumentError(f"{where}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InvalidArgumentError(f"{where}: not a regular file (a FIFO, a device or a directory is never read)")
        if st.st_size > limit:
            raise InvalidArgumentError(f"{where}: {st.st_size:,} bytes, more than the {_bytes(limit)} {what} may have")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InvalidArgumentError(f"{where}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > limit:  # it grew while it was read
        raise InvalidArgumentError(f"{where}: more than the {_bytes(limit)} {what} may have")
    return loads_json(b"".join(chunks), where)


def read_names_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """A names file (the CLI's ``--names FILE``): a JSON object of source tensor name -> ``layers.<l>.<q|k|v|o>``,
    read only from a regular file of at most :data:`MAX_NAMES_BYTES` (1 MiB) (:func:`read_small_json`). Every
    failure is an :class:`InvalidArgumentError` naming the path.
    """
    where = f"--names {os.fspath(path)}"
    names = read_small_json(path, where, "a names file")
    if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        raise InvalidArgumentError(f'{where}: a JSON object of tensor name -> "layers.<l>.<q|k|v|o>" is expected')
    return names


#: the keys of a Hugging Face config.json that give the number of heads (GPT-2: n_head; MPT: n_heads)
_CONFIG_HEADS = ("num_attention_heads", "n_head", "n_heads", "num_heads")


def _position_keys(obj: Any, path: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    """Entries of a config (nested objects too: MPT's ``attn_config``) that make attention depend on positions:
    rotary embeddings (a key naming rope or rotary, ``position_embedding_type`` rotary) and ALiBi."""
    found: list[tuple[str, Any]] = []
    if not isinstance(obj, dict) or depth > 4:
        return found
    for key, value in obj.items():
        name = f"{path}{key}"
        if isinstance(value, dict):
            found += _position_keys(value, name + ".", depth + 1)
        elif value not in (None, False) and (
            re.search(r"rope|rotary", key, re.IGNORECASE)
            or (key == "position_embedding_type" and re.search(r"rotary|rope", str(value), re.IGNORECASE))
            or (key == "alibi" and value is True)
        ):
            found.append((name, value))
    return found


@dataclass(frozen=True)
class ModelType:
    """What a Hugging Face ``model_type`` says about its attention (one entry of :data:`MODEL_TYPES`): ``causal``,
    the mask it was trained with (a decoder's); ``rotary``, rotary positions even when the config names no rope
    key; ``refused``: why the package cannot read it as it was trained, and what would make it work."""

    causal: bool
    rotary: bool = False
    refused: str = ""


#: the model types read from a config.json (``model_type``), each with what it implies; a type not listed keeps its
#: layout's defaults (GPT-2's names: causal) and the config's own keys (rope, ``is_decoder``)
MODEL_TYPES: dict[str, ModelType] = {
    "gpt2": ModelType(causal=True),
    "gpt_neox": ModelType(causal=True, rotary=True),  # its config says is_decoder false; the module is causal
    "opt": ModelType(causal=True),
    "llama": ModelType(causal=True, rotary=True),
    "mistral": ModelType(causal=True, rotary=True),
    "mixtral": ModelType(causal=True, rotary=True),
    "qwen2": ModelType(causal=True, rotary=True),
    "qwen3": ModelType(causal=True, rotary=True),
    "phi3": ModelType(causal=True, rotary=True),
    "phi": ModelType(causal=True, rotary=True),
    "gemma": ModelType(causal=True, rotary=True),
    "gptj": ModelType(causal=True, rotary=True),
    "bert": ModelType(causal=False),
    "roberta": ModelType(causal=False),
    "distilbert": ModelType(causal=False),
    "vit": ModelType(causal=False),
    "clip_vision_model": ModelType(causal=False),
    "clip_text_model": ModelType(causal=True),
    "clip": ModelType(
        causal=False,
        refused="a CLIPModel holds two separate stacks (the vision tower and the text tower) that the package would "
        "read as one network: save one tower (CLIPVisionModel, CLIPTextModel) or give a names file (--names)",
    ),
    "t5": ModelType(causal=False),
}

#: the rope_type values modelled (others refused by name, with the reason)
ROPE_TYPES = ("default", "linear", "dynamic")


def _number(config: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        v = config.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return v
    return None


def _rope(config: dict[str, Any], kind: ModelType | None, head_dim: int | None, where: str) -> dict[str, Any] | None:
    """The rotary entry (:meth:`~ag_attention.Rotary.to_dict`) a config describes, or None; a rope
    type that is not modelled refused by name (docs/math/rotary.md, rotary-exact)."""
    params = config.get("rope_parameters")
    params = params if isinstance(params, dict) else {}
    scaling = config.get("rope_scaling")
    scaling = scaling if isinstance(scaling, dict) else {}
    theta = _number(params, "rope_theta")
    theta = theta if theta is not None else _number(config, "rope_theta", "rotary_emb_base")
    partial = _number(params, "partial_rotary_factor")
    partial = partial if partial is not None else _number(config, "partial_rotary_factor", "rotary_pct")
    dims = _number(config, "rotary_dim")
    named = bool(params) or theta is not None or partial is not None or dims is not None or bool(scaling)
    if not named and not (kind is not None and kind.rotary):
        return None
    rope_type = str(params.get("rope_type") or scaling.get("rope_type") or scaling.get("type") or "default")
    factor = _number(params, "factor")
    factor = factor if factor is not None else _number(scaling, "factor")
    if rope_type not in ROPE_TYPES:
        raise InvalidArgumentError(
            f"{where}: rope_type {shown_name(rope_type)}: its frequencies involve pi or the sequence length "
            f"(llama3, yarn, longrope scale them by wavelength or by position), which the exact model does not "
            f"describe; modelled: {', '.join(ROPE_TYPES)} (docs/math/rotary.md, rotary-exact). A config with "
            "rope_type default and the same rope_theta reads the same weights as a model with the plain rotation"
        )
    out: dict[str, Any] = {"kind": "rope", "base": theta if theta is not None else 10000, "pairing": "half"}
    if rope_type == "linear":
        if factor is None or factor <= 0:
            raise InvalidArgumentError(f"{where}: rope_type linear without a positive factor")
        out["scale"] = factor
    if rope_type == "dynamic":  # NTK scaling only past the original length: the default rotation below it
        out["dynamic_until"] = _number(config, "max_position_embeddings", "original_max_position_embeddings")
    if dims is not None:
        out["dims"] = int(dims)
    elif partial is not None and partial < 1 and head_dim is not None:
        rd = int(head_dim * partial)
        out["dims"] = 2 * math.ceil(rd / 2)  # transformers turns 2 ceil(rd / 2) coordinates (GPT-NeoX with odd rd)
    if config.get("model_type") == "gptj":
        out["pairing"] = "interleaved"
    return out


def model_config(config: dict[str, Any], where: str) -> dict[str, str]:
    """What a Hugging Face config (a config.json's object, or a module's ``config.to_dict()``) says about its
    attention, as metadata (strings): ``heads``, ``kv_heads``, ``head_dim``, ``model_type``, ``causal`` (``true`` or
    ``false``, with ``causal_why``), ``rope`` (a JSON rotary entry), ``sliding_window``. Refused by name, saying
    why and what would work: ALiBi, T5's relative attention bias, BERT's relative_key positions, a rope type that
    is not modelled, two heads counts that differ, a CLIPModel's two towers."""
    out: dict[str, str] = {}
    model_type = str(config.get("model_type") or "")
    kind = MODEL_TYPES.get(model_type)
    if model_type:
        out["model_type"] = model_type
    if kind is not None and kind.refused:
        raise InvalidArgumentError(f"{where}: model_type {model_type}: {kind.refused}")
    for key, value in _position_keys(config):
        if key.endswith("alibi"):
            raise InvalidArgumentError(f"{where}: {shown_name(key)} = {value}: {REFUSED_POSITIONS['alibi']}")
    embedding = config.get("position_embedding_type")
    if isinstance(embedding, str) and embedding in REFUSED_POSITIONS:
        raise InvalidArgumentError(
            f"{where}: position_embedding_type = {shown_name(embedding)}: {REFUSED_POSITIONS[embedding]}"
        )
    if _number(config, "relative_attention_num_buckets") is not None:
        raise InvalidArgumentError(
            f"{where}: relative_attention_num_buckets = {config['relative_attention_num_buckets']}: "
            + REFUSED_POSITIONS["t5-relative"]
        )
    if config.get("is_encoder_decoder") is True:
        raise InvalidArgumentError(
            f"{where}: is_encoder_decoder: an encoder and a decoder with cross-attention, which the package would "
            "read as one stack of self-attention: save the encoder alone, or give a names file (--names)"
        )
    heads = {int(config[k]) for k in _CONFIG_HEADS if _number(config, k) is not None and int(config[k]) == config[k]}
    if len(heads) > 1:
        raise InvalidArgumentError(
            f"{where}: two numbers of heads ({sorted(heads)}): which one the model uses is not clear"
        )
    if heads:
        out["heads"] = str(next(iter(heads)))
    kv = _number(config, "num_key_value_heads", "multi_query_group_num")
    if kv is not None:
        out["kv_heads"] = str(int(kv))
    hidden = _number(config, "hidden_size", "n_embd", "d_model", "dim")
    head_dim = _number(config, "head_dim", "d_kv")
    if head_dim is None and hidden is not None and heads:
        head_dim = int(hidden) // next(iter(heads))
    if head_dim is not None:
        out["head_dim"] = str(int(head_dim))
    rope = _rope(config, kind, None if head_dim is None else int(head_dim), where)
    if rope is not None:
        out["rope"] = json.dumps(rope)
    window = _number(config, "sliding_window")
    if window is not None and config.get("use_sliding_window", True) is not False:
        out["sliding_window"] = str(int(window))
    causal, why = None, ""
    if kind is not None:
        causal, why = kind.causal, f"model_type {model_type} is {'a decoder' if kind.causal else 'an encoder'}"
    if config.get("is_decoder") is True and causal is not True:
        causal, why = True, "its config says is_decoder: true"
    if isinstance(config.get("is_causal"), bool):
        causal, why = config["is_causal"], f"its config says is_causal: {str(config['is_causal']).lower()}"
    if causal is not None:
        out["causal"] = "true" if causal else "false"
        out["causal_why"] = why
    return out


def read_config(weights: str | os.PathLike[str]) -> dict[str, str]:
    """What the Hugging Face ``config.json`` beside a weights file (or in a ``save_pretrained`` directory) says, as
    :func:`model_config`'s metadata; none when there is none, or when it has neither ``model_type`` nor
    ``architectures`` (another program's)."""
    base = os.fspath(weights)
    folder = base if os.path.isdir(base) else (os.path.dirname(base) or ".")
    path = os.path.join(folder, "config.json")
    if not os.path.isfile(path):  # none, or no regular file (a FIFO, a link to a device): not a model's config
        return {}
    config = read_small_json(path, path, "a config.json")
    if not isinstance(config, dict) or not ({"model_type", "architectures"} & set(config)):
        return {}  # some other program's config.json: not read further
    return model_config(config, path)


#: tensors that are position terms of the scores, refused by name (the model read would be another one)
_POSITION_TENSORS = (
    (re.compile(r"(^|\.)distance_embedding(\.|$)"), "relative_key"),
    (re.compile(r"(^|\.)relative_attention_bias(\.|$)"), "t5-relative"),
)


def refuse_rotary(arrays: dict[str, Any], metadata: dict[str, str] | None, where: str = "metadata") -> None:
    """Position terms the file holds but the model read would not: a BERT ``distance_embedding`` or a T5
    ``relative_attention_bias`` (refused, with the reason); rotary embeddings named by a tensor
    (``rotary_emb``/``inv_freq``, a buffer) or a metadata entry when no rotation is known (``rope`` in the metadata,
    from a config.json or given: then they are what the model reads, and the buffers are not weights)."""
    for key in arrays:
        for pattern, kind in _POSITION_TENSORS:
            if pattern.search(key):
                raise InvalidArgumentError(f"{shown_name(key)}: {REFUSED_POSITIONS[kind]}")
    meta = metadata or {}
    if "rope" in meta:
        return
    why = (
        "rotary position embeddings: the model turns each query and key by an angle that depends on the token's "
        "position (docs/math/rotary.md), and the file does not say which rotation: put its config.json beside it "
        "(save_pretrained does), or give --rope-theta BASE (positions=Rotary(...)); refused, not read as attention "
        "without them"
    )
    for key in arrays:
        if _ROTARY.search(key):
            raise InvalidArgumentError(f"{shown_name(key)}: {why}")
    for key, value in meta.items():
        if re.search(r"rope|rotary", key, re.IGNORECASE) or (
            "position" in key.lower() and re.search(r"\brope\b|rotary", str(value), re.IGNORECASE)
        ):
            raise InvalidArgumentError(f"{where} {shown_name(key)} = {shown_name(value)}: {why}")


def module_arguments(module: Any) -> dict[str, str]:
    """What a torch module (duck-typed) says beyond its state dict, as metadata: its Hugging Face ``config``
    (:func:`model_config` of ``config.to_dict()``: heads, rotary positions, the causal mask), and its heads
    (``num_heads``, ``num_attention_heads`` or ``n_head`` of its submodules; refused when they differ). A rotary
    submodule (``rotary_emb``, an ``inv_freq`` buffer) without a config saying which rotation is refused."""
    config = getattr(module, "config", None)
    out: dict[str, str] = {}
    if config is not None and callable(getattr(config, "to_dict", None)):
        as_dict = config.to_dict()
        if isinstance(as_dict, dict):
            out = model_config(as_dict, f"{type(module).__name__}.config")
    parts = list(module.named_modules()) if callable(getattr(module, "named_modules", None)) else [("", module)]
    if "rope" not in out:
        for name, sub in parts:
            if _ROTARY.search(name) or hasattr(sub, "inv_freq"):
                refuse_rotary({name or type(sub).__name__ + ".inv_freq": None}, None)
    counts = set()
    for key in ("num_heads", "num_attention_heads", "n_head"):
        counts |= {
            int(getattr(sub, key))
            for _, sub in parts + [("config", config)]
            if isinstance(getattr(sub, key, None), int) and not isinstance(getattr(sub, key), bool)
        }
    if len(counts) > 1:
        raise InvalidArgumentError(
            f"{type(module).__name__}: attention submodules with {sorted(counts)} heads: one "
            "number of heads for every layer is needed (the architecture has one)"
        )
    if counts:
        out["heads"] = str(counts.pop()) if "heads" not in out else out["heads"]
    return out


def _stored(metadata: dict[str, str], name: str, where: str) -> int | None:
    if name not in metadata:
        return None
    try:
        value = int(metadata[name])
    except ValueError:
        value = 0
    if value < 1:
        raise InvalidArgumentError(
            f"{where}: __metadata__ {name}={shown_name(metadata[name])} is not a positive integer"
        )
    return value


def _given(value: Any, name: str) -> int | None:
    return None if value is None else check_int(value, name, minimum=1)


def settle_arguments(
    rec: Any,
    tokens: int | None,
    heads: int | None,
    metadata: dict[str, str],
    where: str,
    stored_in: str = "its __metadata__",
) -> tuple[int, int | None]:
    """The token count and the number of heads: from the file (its metadata; the heads also from the package's
    names) or given, the same convention in the API and the CLI. A value given that the file contradicts, or
    metadata that contradicts the names, is refused naming both; everything neither stored nor given is named
    in one message (the heads only when :attr:`Recognized.needs_heads`)."""
    tokens, heads = _given(tokens, "tokens"), _given(heads, "heads")
    stored_tokens, stored_heads = _stored(metadata, "tokens", where), _stored(metadata, "heads", where)
    if rec.heads is not None and stored_heads is not None and stored_heads != rec.heads:
        raise InvalidArgumentError(
            f"{where}: {stored_in} says heads={stored_heads}, its weights name "
            f"{rec.heads} head(s) per layer (layers.<l>.heads.0 to {rec.heads - 1})"
        )
    for name, given, stored, how in (
        ("tokens", tokens, stored_tokens, "its __metadata__"),
        ("heads", heads, stored_heads, stored_in),
        ("heads", heads, rec.heads, "its weights' names"),
    ):
        if given is not None and stored is not None and given != stored:
            raise InvalidArgumentError(f"{where}: {name}={given} given, but the file says {name}={stored} ({how})")
    tokens = tokens or stored_tokens
    heads = heads or stored_heads or rec.heads
    missing = []
    if tokens is None:
        missing.append(("the token count t", "tokens=", "--tokens T", "the geometry depends on t"))
    if heads is None and rec.needs_heads:
        missing.append(
            (
                "the number of heads",
                "heads=",
                "--heads H",
                "one head of 64 and two of 32 are different functions of the same weights",
            )
        )
    if missing:
        raise InvalidArgumentError(
            f"{where}: {' and '.join(m[0] for m in missing)} {'is' if len(missing) == 1 else 'are'} not stored in "
            f"the file: give {' and '.join(m[1] for m in missing)} ({' '.join(m[2] for m in missing)}; or a "
            f".safetensors __metadata__ {' and '.join(repr(m[1][:-1]) for m in missing)}): "
            + "; ".join(m[3] for m in missing)
        )
    assert tokens is not None
    return tokens, heads
