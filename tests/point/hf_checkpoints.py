"""Tiny real Hugging Face checkpoints, built here from no download, and the attention layer as transformers runs it.

Helpers for the tests (no tests here).  ``build(family, directory)`` makes a tiny random model of one family with
transformers itself (hidden size 16, 4 heads of 4 coordinates, 2 layers, intermediate size 32, a vocabulary of 50,
32 positions), gives every attention bias a nonzero random value (transformers initialises them to zero) and writes
it with ``save_pretrained``: config.json and safetensors, one file or shards with their index, exactly the layout a
checkpoint on the Hub has.  ``attention_forward(model, layer, X)`` is the output of one layer's self-attention block
(its projections, rotary positions and output projection; no residual, layer norm or MLP) on hidden states X, with
or without the softmax.

transformers and torch are imported when a function needs them, so importing this module needs neither; importing
transformers here sets HF_HUB_OFFLINE=1 first (nothing is ever downloaded).  scripts/setup-torch.sh installs both
(requirements/transformers.txt); what each family writes is summed up in docs/manual/checkpoints.md.

How ``attention_forward`` runs the module: every family of transformers 5.x calls its attention kernel through
``ALL_ATTENTION_FUNCTIONS.get_interface(config._attn_implementation, ...)`` with the projected (and, for rotary
families, rotated) queries, keys and values, the family's score scaling (``scaling``; T5 passes 1.0, OPT 1.0 after
scaling q itself) and, for T5, the relative position bias (``position_bias``).  A kernel of our own is registered
(``AttentionInterface.register``) and the model set to it (``model.set_attn_implementation``) for the one call,
then set back; the call fails unless that kernel ran, once.  The kernel computes the scores as the eager kernels
do (``q k^T * scaling`` + position bias; key/value heads repeated for grouped queries), masks them (causal where the
module is causal, or as ``causal`` says; a sliding window when the family passes one) and then either takes the
softmax over the unmasked keys (``softmax=True``, in the tensors' own dtype: float64) or keeps the masked scores as
they are, masked entries zero (``softmax=False``).  Everything else (projections, biases, the split of fused
projections, rotary positions from the model's own rotary embedding for positions 0..t-1, the output projection) is
the module's own code.
"""

from __future__ import annotations

import contextvars
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: sizes shared by every family
HIDDEN, HEADS, KV_HEADS_GROUPED, LAYERS, INTERMEDIATE, VOCAB, POSITIONS = 16, 4, 2, 2, 32, 50, 32
#: the standard deviation of the random attention biases
BIAS_STD = 0.1
#: the name our kernel is registered under in transformers' AttentionInterface
_KERNEL = "ag_attention_test_kernel"


def import_transformers() -> Any:
    """transformers, imported with HF_HUB_OFFLINE=1 (the tests never reach a hub)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import transformers

    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bars in the test output
    return transformers


# --- configs --------------------------------------------------------------------------------------------------------


def _gpt2() -> Any:
    t = import_transformers()
    return t.GPT2Config(
        vocab_size=VOCAB, n_positions=POSITIONS, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_inner=INTERMEDIATE,
        bos_token_id=0, eos_token_id=0, architectures=["GPT2LMHeadModel"],
    )  # fmt: skip


def _bert() -> Any:
    t = import_transformers()
    return t.BertConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=INTERMEDIATE, max_position_embeddings=POSITIONS, architectures=["BertForMaskedLM"],
    )  # fmt: skip


def _opt() -> Any:
    t = import_transformers()
    return t.OPTConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        ffn_dim=INTERMEDIATE, max_position_embeddings=POSITIONS, word_embed_proj_dim=HIDDEN,
        architectures=["OPTForCausalLM"],
    )  # fmt: skip


def _vit() -> Any:
    t = import_transformers()
    return t.ViTConfig(
        hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=INTERMEDIATE,
        image_size=8, patch_size=4, num_channels=3, architectures=["ViTModel"],
    )  # fmt: skip


def _clip() -> Any:
    t = import_transformers()
    return t.CLIPVisionConfig(
        hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=INTERMEDIATE,
        projection_dim=HIDDEN, image_size=8, patch_size=4, num_channels=3, architectures=["CLIPVisionModel"],
    )  # fmt: skip


def _decoder(config_class: str, architecture: str, kv_heads: int, **extra: Any) -> Callable[[], Any]:
    def make() -> Any:
        t = import_transformers()
        return getattr(t, config_class)(
            vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=INTERMEDIATE, num_hidden_layers=LAYERS,
            num_attention_heads=HEADS, num_key_value_heads=kv_heads, max_position_embeddings=POSITIONS,
            architectures=[architecture], **extra,
        )  # fmt: skip

    return make


def _gpt_neox() -> Any:
    t = import_transformers()
    # rotary_pct 0.5: 2 of each head's 4 coordinates rotate (the default 0.25 would give int(4 * 0.25) = 1)
    return t.GPTNeoXConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=INTERMEDIATE, max_position_embeddings=POSITIONS, rotary_pct=0.5,
        architectures=["GPTNeoXForCausalLM"],
    )  # fmt: skip


def _distilbert() -> Any:
    t = import_transformers()
    return t.DistilBertConfig(
        vocab_size=VOCAB, dim=HIDDEN, n_layers=LAYERS, n_heads=HEADS, hidden_dim=INTERMEDIATE,
        max_position_embeddings=POSITIONS, architectures=["DistilBertForMaskedLM"],
    )  # fmt: skip


def _t5() -> Any:
    t = import_transformers()
    # 8 buckets up to distance 16: with t <= 32 both the exact and the logarithmic buckets are reached
    return t.T5Config(
        vocab_size=VOCAB, d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=INTERMEDIATE, num_layers=LAYERS,
        num_heads=HEADS, relative_attention_num_buckets=8, relative_attention_max_distance=16,
        architectures=["T5EncoderModel"],
    )  # fmt: skip


# Phi-3's default token ids (32000) lie outside the vocabulary of 50
_PHI3_TOKENS = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}

#: family name -> a function making a tiny random config of it (``config.architectures[0]`` is the model class
#: ``build`` instantiates, the class real checkpoints of the family name).  llama, mistral and qwen2 have 4 key/value
#: heads (one per query head); their ``_gqa`` variants 2 (grouped queries: 2 query heads share one).
FAMILIES: dict[str, Callable[[], Any]] = {
    "gpt2": _gpt2,
    "bert": _bert,
    "opt": _opt,
    "vit": _vit,
    "clip": _clip,
    "llama": _decoder("LlamaConfig", "LlamaForCausalLM", HEADS),
    "llama_gqa": _decoder("LlamaConfig", "LlamaForCausalLM", KV_HEADS_GROUPED),
    "mistral": _decoder("MistralConfig", "MistralForCausalLM", HEADS),
    "mistral_gqa": _decoder("MistralConfig", "MistralForCausalLM", KV_HEADS_GROUPED),
    "qwen2": _decoder("Qwen2Config", "Qwen2ForCausalLM", HEADS),
    "qwen2_gqa": _decoder("Qwen2Config", "Qwen2ForCausalLM", KV_HEADS_GROUPED),
    "phi3": _decoder("Phi3Config", "Phi3ForCausalLM", HEADS, **_PHI3_TOKENS),
    # Phi-3 rotates whole heads; its partial rotary (Phi-4-mini, model_type phi3, rotates 0.75 of each head) here
    # rotates the first 2 of each head's 4 coordinates
    "phi3_partial": _decoder("Phi3Config", "Phi3ForCausalLM", HEADS, partial_rotary_factor=0.5, **_PHI3_TOKENS),
    "gpt_neox": _gpt_neox,
    "distilbert": _distilbert,
    "t5": _t5,
}

#: families asked for that transformers 5.x cannot build, and why
UNAVAILABLE: dict[str, str] = {
    "bert_relative_key": (
        "transformers 5.0 removed BERT's position_embedding_type='relative_key' (and 'relative_key_query'; "
        "huggingface/transformers#41170): BertConfig keeps the key as an unused attribute, BertModel has no "
        "distance_embedding and runs absolute positions, and loading a 4.x relative_key checkpoint drops "
        "encoder.layer.N.attention.self.distance_embedding.weight as an unexpected key"
    ),
}


# --- where each family keeps its attention ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    layers: str  # dotted path from the model to its list of layers
    attention: str  # from a layer to the module calling the attention kernel
    projections: tuple[str, ...]  # from a layer to the attention's linear maps (q, k, v or fused; then the output)
    output: str | None = None  # from a layer to the output projection, where the attention module lacks it (BERT)


_LAYOUTS: dict[str, _Layout] = {
    "gpt2": _Layout("transformer.h", "attn", ("attn.c_attn", "attn.c_proj")),
    "bert": _Layout(
        "bert.encoder.layer",
        "attention.self",
        ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"),
        output="attention.output.dense",
    ),
    "opt": _Layout(
        "model.decoder.layers", "self_attn", tuple(f"self_attn.{p}_proj" for p in "qkv") + ("self_attn.out_proj",)
    ),
    "vit": _Layout("layers", "attention", tuple(f"attention.{p}_proj" for p in "qkvo")),
    "clip": _Layout(
        "encoder.layers",  # in memory; the safetensors names say vision_model.encoder.layers
        "self_attn",
        tuple(f"self_attn.{p}_proj" for p in "qkv") + ("self_attn.out_proj",),
    ),
    "llama": _Layout("model.layers", "self_attn", tuple(f"self_attn.{p}_proj" for p in "qkvo")),
    "phi3": _Layout("model.layers", "self_attn", ("self_attn.qkv_proj", "self_attn.o_proj")),
    "gpt_neox": _Layout("gpt_neox.layers", "attention", ("attention.query_key_value", "attention.dense")),
    "distilbert": _Layout(
        "distilbert.transformer.layer", "attention", tuple(f"attention.{p}_lin" for p in "qkv") + ("attention.out_lin",)
    ),
    "t5": _Layout("encoder.block", "layer.0.SelfAttention", tuple(f"layer.0.SelfAttention.{p}" for p in "qkvo")),
}
for _name in ("llama_gqa", "mistral", "mistral_gqa", "qwen2", "qwen2_gqa"):
    _LAYOUTS[_name] = _LAYOUTS["llama"]
_LAYOUTS["phi3_partial"] = _LAYOUTS["phi3"]


def _get(root: Any, path: str) -> Any:
    for part in path.split("."):
        root = root[int(part)] if part.isdigit() else getattr(root, part)
    return root


def family_of(model: Any) -> str:
    """The FAMILIES name of a model built by ``build`` (or read back with from_pretrained), from its config."""
    config = model.config
    kind = config.model_type
    if kind == "clip_vision_model":
        return "clip"
    if kind in ("llama", "mistral", "qwen2"):
        grouped = config.num_key_value_heads != config.num_attention_heads
        return f"{kind}_gqa" if grouped else kind
    if kind == "phi3" and config.rope_parameters.get("partial_rotary_factor", 1.0) != 1.0:
        return "phi3_partial"
    if kind not in _LAYOUTS:
        raise ValueError(f"model_type {kind!r} is none of the families here ({', '.join(FAMILIES)})")
    return str(kind)


def layers(model: Any) -> list[Any]:
    """The model's layers (blocks), in order."""
    return list(_get(model, _LAYOUTS[family_of(model)].layers))


def attention_biases(model: Any, layer: int) -> dict[str, Any]:
    """The attention biases of one layer (q/k/v or fused, output), by module path under the layer; families
    without attention biases (llama, mistral, phi3, t5) give an empty dict."""
    layout = _LAYOUTS[family_of(model)]
    block = layers(model)[layer]
    found = {}
    for path in layout.projections:
        bias = getattr(_get(block, path), "bias", None)
        if bias is not None:
            found[path] = bias
    return found


# --- building ---------------------------------------------------------------------------------------------------------


def build(family: str, directory: str | os.PathLike[str], *, seed: int = 0, nonzero_biases: bool = True,
          sharded: bool = False) -> Any:  # fmt: skip
    """Build a tiny random model of ``family`` (``torch.manual_seed(seed)``), give each attention bias nonzero random
    values (N(0, BIAS_STD), drawn after the model's own initialisation, unless ``nonzero_biases=False``), save it to
    ``directory`` with ``save_pretrained`` (safetensors; ``sharded=True``: a shard size small enough for 2 or more
    shards, model-0000i-of-0000N.safetensors and model.safetensors.index.json) and return the model in eval mode
    (float32, as saved)."""
    if family in UNAVAILABLE:
        raise ValueError(f"{family}: {UNAVAILABLE[family]}")
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; the families: {', '.join(FAMILIES)}")
    import torch

    t = import_transformers()
    config = FAMILIES[family]()
    model_class = getattr(t, config.architectures[0])
    torch.manual_seed(seed)
    model = model_class(config)
    model.eval()
    if nonzero_biases:
        with torch.no_grad():
            for i in range(len(layers(model))):
                for bias in attention_biases(model, i).values():
                    bias.copy_(torch.randn(bias.shape, dtype=bias.dtype) * BIAS_STD)
    directory = Path(directory)
    kwargs: dict[str, Any] = {}
    if sharded:
        sizes = [p.numel() * p.element_size() for p in model.state_dict().values()]
        # a shard holds at least its largest tensor; a third of the total then makes 3 or 4 shards
        kwargs["max_shard_size"] = max(max(sizes), math.ceil(sum(sizes) / 3))
    model.save_pretrained(directory, **kwargs)
    if sharded and not (directory / "model.safetensors.index.json").is_file():
        raise RuntimeError(f"{family}: save_pretrained wrote one file, not shards, in {directory}")
    return model


def load(directory: str | os.PathLike[str]) -> Any:
    """The model saved in ``directory``, read back with from_pretrained (its config's architectures[0]), eval mode."""
    t = import_transformers()
    config = t.AutoConfig.from_pretrained(directory, local_files_only=True)
    model = getattr(t, config.architectures[0]).from_pretrained(directory, local_files_only=True)
    model.eval()
    return model


# --- one attention layer ----------------------------------------------------------------------------------------------

# [softmax, causal, calls] of the attention_forward call under way (calls: how often the kernel ran); None outside one
_MODE: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("_MODE", default=None)


def _kernel(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    scaling: float | None = None,
    dropout: float = 0.0,
    position_bias: Any = None,
    is_causal: bool | None = None,
    sliding_window: int | None = None,
    **kwargs: Any,
) -> tuple[Any, Any]:
    """The attention kernel attention_forward registers: the eager kernels' arithmetic, the softmax optional."""
    import torch

    mode = _MODE.get()
    if mode is None:
        raise RuntimeError(f"{_KERNEL} only runs inside hf_checkpoints.attention_forward")
    softmax, causal, _ = mode
    mode[2] += 1
    if attention_mask is not None:
        raise ValueError("attention_forward passes no attention mask")
    if scaling is None:  # the eager kernels' default
        scaling = query.shape[-1] ** -0.5
    groups = query.shape[1] // key.shape[1]  # grouped queries: query head h reads key/value head h // groups
    key = key.repeat_interleave(groups, dim=1)
    value = value.repeat_interleave(groups, dim=1)
    scores = torch.matmul(query, key.transpose(-1, -2)) * scaling
    if position_bias is not None:
        scores = scores + position_bias
    if causal is None:
        causal = is_causal if is_causal is not None else bool(getattr(module, "is_causal", False))
    tq, tk = scores.shape[-2], scores.shape[-1]
    i = torch.arange(tq)[:, None] + (tk - tq)
    j = torch.arange(tk)[None, :]
    keep = torch.ones(tq, tk, dtype=torch.bool)
    if causal:
        keep &= j <= i
    if sliding_window is not None:
        keep &= j > i - sliding_window
    if softmax:
        weights = torch.softmax(scores.masked_fill(~keep, -math.inf), dim=-1)
    else:
        weights = scores.masked_fill(~keep, 0.0)
    out = torch.matmul(weights, value)
    return out.transpose(1, 2).contiguous(), weights


def _register_kernel() -> None:
    import_transformers().AttentionInterface.register(_KERNEL, _kernel)  # again: the same function, no harm


def _rotary(model: Any) -> Any:
    for module in model.modules():
        if type(module).__name__.endswith("RotaryEmbedding"):
            return module
    return None


def attention_forward(model: Any, layer: int, X: Any, *, softmax: bool = True, causal: bool | None = None) -> Any:
    """The output of layer ``layer``'s self-attention block (projections, rotary positions, the kernel, the output
    projection; no residual, layer norm or MLP) on hidden states ``X`` (float64, (batch, t, hidden)), run by the
    module itself (module docstring).  Positions are 0..t-1; decoders are causal unless ``causal=False``
    (``causal=True`` makes an encoder causal); no other mask.  ``softmax=False``: the same with the softmax
    removed (scaled scores, plus T5's position bias, masked entries zero).  Converts the model to float64 first
    (``model.double()``, in place)."""
    import torch

    family = family_of(model)
    layout = _LAYOUTS[family]
    model.double()
    X = torch.as_tensor(X, dtype=torch.float64)
    if X.ndim != 3:
        raise ValueError(f"X must be (batch, t, hidden); got shape {tuple(X.shape)}")
    batch, t, _ = X.shape
    _register_kernel()
    block = layers(model)[layer]
    module = _get(block, layout.attention)
    kwargs: dict[str, Any] = {"hidden_states": X}
    if family == "t5":
        # only block 0 holds the relative attention bias; the stack hands its bias to every later block
        first = _get(layers(model)[0], layout.attention)
        kwargs["mask"] = None
        kwargs["position_bias"] = first.compute_bias(t, t)
    else:
        kwargs["attention_mask"] = None
    rotary = _rotary(model)
    if rotary is not None:
        positions = torch.arange(t).unsqueeze(0).expand(batch, t)
        kwargs["position_embeddings"] = rotary(X, positions)
    before = model.config._attn_implementation
    mode: list[Any] = [softmax, causal, 0]
    token = _MODE.set(mode)
    try:
        model.set_attn_implementation(_KERNEL)
        with torch.no_grad():
            out = module(**kwargs)[0]
            if layout.output is not None:
                out = _get(block, layout.output)(out)
    finally:
        model.set_attn_implementation(before)
        _MODE.reset(token)
    if mode[2] != 1:  # the module ran another kernel: its output is not what was asked for
        raise RuntimeError(f"{family} layer {layer}: the attention kernel ran {mode[2]} times, not once")
    return out
