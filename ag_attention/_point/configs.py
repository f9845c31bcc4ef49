"""What a checkpoint's companions say: a names file (``--names``), the Hugging Face ``config.json`` beside the
weights, a torch module's attributes; and attention that depends on positions (rotary embeddings, ALiBi),
refused by the name of the tensor or entry that says so (docs/math/model.md: the package's score is
``x_i^T A x_j`` with one ``A``).

Every file is read only when it is a regular file of at most :data:`MAX_NAMES_BYTES` (1 MiB), checked before a
byte is read, and parsed strictly (:func:`~ag_attention._point.safetensors.loads_json`).
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any

from .._errors import InvalidArgumentError
from .safetensors import loads_json, shown_name

__all__ = ["MAX_NAMES_BYTES", "read_names_file", "read_config", "refuse_rotary", "module_arguments"]

#: names of rotary position embeddings (refused: the layer is not the paper's attention)
_ROTARY = re.compile(r"(^|[._])(rotary_emb|rotary|inv_freq|rope|freqs_cis)([._]|$)", re.IGNORECASE)


#: a names file larger than this is refused unread (a mapping of thousands of tensor names takes a few hundred kB)
MAX_NAMES_BYTES = 1 << 20


def _read_small_json(path: str | os.PathLike[str], where: str, what: str) -> Any:
    """The JSON in a regular file of at most :data:`MAX_NAMES_BYTES` (1 MiB): opened without blocking and checked
    (``fstat``) before a byte is read, so a FIFO never hangs and ``/dev/zero`` is never read until memory runs
    out; parsed strictly (:func:`~ag_attention._point.safetensors.loads_json`: nesting limited, no key twice).
    Every failure is an :class:`InvalidArgumentError` starting with ``where``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InvalidArgumentError(f"{where}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InvalidArgumentError(f"{where}: not a regular file (a FIFO, a device or a directory is never read)")
        if st.st_size > MAX_NAMES_BYTES:
            raise InvalidArgumentError(
                f"{where}: {st.st_size:,} bytes, more than the {MAX_NAMES_BYTES:,} (1 MiB) {what} may have"
            )
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
        raise InvalidArgumentError(f"{where}: more than the {MAX_NAMES_BYTES:,} bytes (1 MiB) {what} may have")
    return loads_json(b"".join(chunks), where)


def read_names_file(path: str | os.PathLike[str]) -> dict[str, str]:
    """A names file (the CLI's ``--names FILE``): a JSON object of source tensor name -> ``layers.<l>.<q|k|v|o>``,
    read only from a regular file of at most :data:`MAX_NAMES_BYTES` (1 MiB) (:func:`_read_small_json`). Every
    failure is an :class:`InvalidArgumentError` naming the path.
    """
    where = f"--names {os.fspath(path)}"
    names = _read_small_json(path, where, "a names file")
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


def read_config(weights: str | os.PathLike[str]) -> dict[str, str]:
    """What the Hugging Face ``config.json`` beside a weights file says (none when there is none, or when it has
    neither ``model_type`` nor ``architectures``: another program's), as metadata: the number of heads
    (``num_attention_heads``, ``n_head``, ...). Attention that depends on positions is refused,
    naming the entry: rotary embeddings (``rope_theta``, ``rotary_dim``, ``partial_rotary_factor``, ...; LLaMA's
    weights do not store them) and ALiBi (``alibi``: a bias ``m (j - i)`` added to each score)."""
    path = os.path.join(os.path.dirname(os.fspath(weights)) or ".", "config.json")
    if not os.path.isfile(path):  # none, or no regular file (a FIFO, a link to a device): not a model's config
        return {}
    config = _read_small_json(path, path, "a config.json")
    if not isinstance(config, dict) or not ({"model_type", "architectures"} & set(config)):
        return {}  # some other program's config.json: not read further
    for key, value in _position_keys(config):
        if key.endswith("alibi"):
            raise InvalidArgumentError(
                f"{path}: {shown_name(key)} = {value}: ALiBi adds to each score a bias that "
                "depends on the positions of the two tokens, so the layer is not the attention "
                "of the package's model (docs/math/model.md); refused"
            )
        refuse_rotary({}, {key: str(value)}, where=path)
    heads = {
        int(config[k]) for k in _CONFIG_HEADS if isinstance(config.get(k), int) and not isinstance(config[k], bool)
    }
    if len(heads) > 1:
        raise InvalidArgumentError(
            f"{path}: two numbers of heads ({sorted(heads)}): which one the model uses is not clear"
        )
    return {"heads": str(heads.pop())} if heads else {}


def refuse_rotary(arrays: dict[str, Any], metadata: dict[str, str] | None, where: str = "metadata") -> None:
    """Rotary position embeddings, by a tensor's name or a metadata entry, refused saying why."""
    why = (
        "rotary position embeddings: the model rotates each query and key by an angle that depends on the "
        "token's position, so its score is not x_i^T A x_j with one matrix A and the layer is not the attention "
        "of the package's model (docs/math/model.md); refused, not read as attention without them"
    )
    for key in arrays:
        if _ROTARY.search(key):
            raise InvalidArgumentError(f"{shown_name(key)}: {why}")
    for key, value in (metadata or {}).items():
        if re.search(r"rope|rotary", key, re.IGNORECASE) or (
            "position" in key.lower() and re.search(r"\brope\b|rotary", str(value), re.IGNORECASE)
        ):
            raise InvalidArgumentError(f"{where} {shown_name(key)} = {shown_name(value)}: {why}")


def module_arguments(module: Any) -> dict[str, str]:
    """What a torch module (duck-typed) says beyond its state dict, as metadata: its heads (``num_heads``,
    ``num_attention_heads`` or ``n_head`` of its submodules or its ``config``; refused when they differ); rotary
    position embeddings (a ``rotary_emb`` submodule, an ``inv_freq`` buffer, ``config.rope_theta``) refused."""
    config = getattr(module, "config", None)
    parts = list(module.named_modules()) if callable(getattr(module, "named_modules", None)) else [("", module)]
    for name, sub in parts:
        if _ROTARY.search(name) or hasattr(sub, "inv_freq"):
            refuse_rotary({name or type(sub).__name__ + ".inv_freq": None}, None)
    for key in ("rope_theta", "rotary_dim", "rope_scaling"):
        if config is not None and getattr(config, key, None) is not None:
            refuse_rotary({}, {f"config.{key}": str(getattr(config, key))})
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
    return {"heads": str(counts.pop())} if counts else {}
