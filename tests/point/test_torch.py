"""Each checkpoint reader against the torch module it reads (PyTorch installed: scripts/setup-torch.sh; skipped
with the reason otherwise): the mapped network's forward pass is the module's. The same readings without torch
are in test_checkpoints.py, test_layouts.py and test_files.py."""

import math
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Network
from ag_attention._errors import InvalidArgumentError

pytestmark = pytest.mark.torch

E, H, T = 8, 2, 3
DH = E // H


def _modules(torch):
    nn = torch.nn

    class Conv1D(nn.Module):
        """GPT-2's Conv1D (transformers.pytorch_utils): weight (in, out), x W + b."""

        def __init__(self, nf, nx):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(nx, nf, dtype=torch.float64) / math.sqrt(nx))
            self.bias = nn.Parameter(torch.zeros(nf, dtype=torch.float64))

        def forward(self, x):
            return x @ self.weight + self.bias

    class GPT2Attention(nn.Module):
        """GPT-2's attention as transformers writes it: c_attn (q|k|v side by side), a causal mask buffer, c_proj."""

        def __init__(self):
            super().__init__()
            self.num_heads, self.head_dim = H, DH
            self.c_attn, self.c_proj = Conv1D(3 * E, E), Conv1D(E, E)
            self.register_buffer("bias", torch.tril(torch.ones(1, 1, 16, 16, dtype=torch.bool)))

        def forward(self, x):
            n, t, _ = x.shape
            q, k, v = self.c_attn(x).split(E, dim=2)
            q, k, v = (z.view(n, t, H, DH).transpose(1, 2) for z in (q, k, v))
            w = q @ k.transpose(-1, -2) / math.sqrt(DH)
            w = torch.where(self.bias[:, :, :t, :t], w, torch.finfo(w.dtype).min).softmax(-1)
            return self.c_proj((w @ v).transpose(1, 2).reshape(n, t, E))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(E, dtype=torch.float64)
            self.attn = GPT2Attention()

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.h = nn.ModuleList([Block()])

    class BertSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.num_attention_heads = H
            self.query, self.key, self.value = (nn.Linear(E, E, dtype=torch.float64) for _ in range(3))
            for lin in (self.query, self.key, self.value):
                nn.init.zeros_(lin.bias)

        def forward(self, x):
            n, t, _ = x.shape
            q, k, v = (lin(x).view(n, t, H, DH).transpose(1, 2) for lin in (self.query, self.key, self.value))
            w = (q @ k.transpose(-1, -2) / math.sqrt(DH)).softmax(-1)
            return (w @ v).transpose(1, 2).reshape(n, t, E)

    class BertSelfOutput(nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = nn.Linear(E, E, dtype=torch.float64)
            nn.init.zeros_(self.dense.bias)
            self.LayerNorm = nn.LayerNorm(E, dtype=torch.float64)

    class BertAttention(nn.Module):
        """BERT's attention: attention.self (query/key/value), attention.output (dense, LayerNorm, residual)."""

        def __init__(self):
            super().__init__()
            self.self = BertSelfAttention()
            self.output = BertSelfOutput()

        def before_norm(self, x):  # what the package models with skip connections: dense(attention(x)) + x
            return self.output.dense(self.self(x)) + x

    class LlamaAttention(nn.Module):
        """LLaMA's attention with grouped-query heads (num_key_value_heads), without the rotary embedding."""

        def __init__(self, heads=4, kv=2, rotary=False):
            super().__init__()
            self.num_heads, self.num_key_value_heads, self.head_dim = heads, kv, E // heads
            d = self.head_dim
            self.q_proj = nn.Linear(E, heads * d, bias=False, dtype=torch.float64)
            self.k_proj = nn.Linear(E, kv * d, bias=False, dtype=torch.float64)
            self.v_proj = nn.Linear(E, kv * d, bias=False, dtype=torch.float64)
            self.o_proj = nn.Linear(heads * d, E, bias=False, dtype=torch.float64)
            if rotary:
                self.rotary_emb = nn.Module()
                self.rotary_emb.register_buffer("inv_freq", torch.ones(d // 2), persistent=False)

        def forward(self, x):
            n, t, _ = x.shape
            h, kv, d = self.num_heads, self.num_key_value_heads, self.head_dim
            q = self.q_proj(x).view(n, t, h, d).transpose(1, 2)
            k, v = (
                p(x).view(n, t, kv, d).transpose(1, 2).repeat_interleave(h // kv, dim=1)
                for p in (self.k_proj, self.v_proj)
            )
            w = q @ k.transpose(-1, -2) / math.sqrt(d)
            w = w.masked_fill(~torch.tril(torch.ones(t, t, dtype=torch.bool)), float("-inf")).softmax(-1)
            return self.o_proj((w @ v).transpose(1, 2).reshape(n, t, h * d))

    return GPT2, BertAttention, LlamaAttention


@pytest.fixture
def modules(torch):
    torch.manual_seed(0)
    return _modules(torch)


def _inputs(torch):
    return torch.randn(4, T, E, dtype=torch.float64)


def test_gpt2_conv1d_attention(torch, modules):
    GPT2, _, _ = modules
    model = GPT2()
    X = _inputs(torch)
    net = Network.from_torch(model, tokens=T, normalized=True, causal=True)  # heads: the module's num_heads
    assert net.layout == "GPT-2 Conv1D c_attn/c_proj, 2 heads"
    assert any("causal mask buffer(s) of GPT-2" in n and "h.0.attn.bias" in n for n in net.notes)
    with torch.no_grad():
        expected = model.h[0].attn(X).numpy()
    assert np.allclose(net.forward(X.numpy()), expected, rtol=1e-10, atol=1e-12)
    with torch.no_grad():  # trained biases: read into the model (affine attention), the same forward pass
        model.h[0].attn.c_attn.bias.copy_(torch.randn(3 * E, dtype=torch.float64))
        model.h[0].attn.c_proj.bias.copy_(torch.randn(E, dtype=torch.float64))
        expected = model.h[0].attn(X).numpy()
    net = Network.from_torch(model, tokens=T, normalized=True, causal=True)
    assert net.architecture.bias == "qkvo"
    assert np.allclose(net.forward(X.numpy()), expected, rtol=1e-10, atol=1e-12)
    with pytest.raises(InvalidArgumentError, match=r"h\.0\.attn\.c_attn\.bias: a nonzero bias"):
        Network.from_torch(model, tokens=T, biases=False)


def test_bert_attention_with_its_residual(torch, modules):
    _, BertAttention, _ = modules
    model = BertAttention()
    X = _inputs(torch)
    net = Network.from_torch(model, tokens=T, normalized=True, skip=True)
    assert net.layout == "BERT query/key/value/output.dense, 2 heads"
    assert {"output.LayerNorm.weight", "output.LayerNorm.bias"} <= set(net.ignored)
    with torch.no_grad():
        expected = model.before_norm(X).numpy()
    assert np.allclose(net.forward(X.numpy()), expected, rtol=1e-10, atol=1e-12)


def test_a_module_s_heads_are_its_own(torch):
    mha = torch.nn.MultiheadAttention(E, H, bias=False, batch_first=True)
    assert Network.from_torch(mha, tokens=T).architecture.heads == H  # its num_heads: no heads= needed
    with pytest.raises(
        InvalidArgumentError,
        match=r"heads=4 given, but the file says heads=2 \(the module's "
        r"num_heads\)",
    ):
        Network.from_torch(mha, tokens=T, heads=4)


def test_llama_grouped_query_attention(torch, modules):
    _, _, LlamaAttention = modules
    model = LlamaAttention()
    X = _inputs(torch)
    net = Network.from_torch(model, tokens=T, normalized=True, causal=True)
    assert net.architecture.heads == 4 and net.layout.endswith("4 heads (grouped-query: 2 key/value heads)")
    with torch.no_grad():
        expected = model(X).numpy()
    assert np.allclose(net.forward(X.numpy()), expected, rtol=1e-10, atol=1e-12)
    # lightning: the same projections without the softmax, times sqrt(d_h)
    light = Network.from_torch(model.state_dict(), tokens=T, heads=4, causal=True, normalized=False)
    with torch.no_grad():
        h, kv, d = 4, 2, E // 4
        q = model.q_proj(X).view(4, T, h, d).transpose(1, 2)
        k, v = (
            p(X).view(4, T, kv, d).transpose(1, 2).repeat_interleave(2, dim=1) for p in (model.k_proj, model.v_proj)
        )
        w = (q @ k.transpose(-1, -2) / math.sqrt(d)) * torch.tril(torch.ones(T, T, dtype=torch.float64))
        lightning = model.o_proj((w @ v).transpose(1, 2).reshape(4, T, E)).numpy()
    assert np.allclose(light.forward(X.numpy()) / math.sqrt(d), lightning, rtol=1e-10, atol=1e-12)


def test_a_module_with_rotary_embeddings_is_refused_saying_why(torch, modules):
    _, _, LlamaAttention = modules
    with pytest.raises(
        InvalidArgumentError,
        match=r"^rotary_emb: rotary position embeddings: .* depends on the "
        "token's position",
    ):
        Network.from_torch(LlamaAttention(rotary=True), tokens=T)
    # its state dict does not hold the rotation (inv_freq is not persistent): read, with a note saying so
    net = Network.from_torch(LlamaAttention(rotary=True, kv=4).state_dict(), tokens=T, heads=4)
    assert any("rotary position embeddings" in n and "not stored in the weights" in n for n in net.notes)


def test_gpt2_small_shaped_twelve_layers_of_twelve_heads(torch):
    """GPT-2 small's shapes (12 layers x 12 heads, d = 768, head 64), random weights: every layer recognized from
    the state dict; two layers mapped to heads (in float64: the exact product is the same map) and checked
    against the module's own attention. The exact analysis refuses this size from the shapes (test_layouts.py)."""
    from ag_attention._point.checkpoints import recognize, translate

    nn = torch.nn

    class Conv1D(nn.Module):
        def __init__(self, nf, nx):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
            self.bias = nn.Parameter(torch.zeros(nf))

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn, self.c_proj = Conv1D(3 * 768, 768), Conv1D(768, 768)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = Attention()

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.h = nn.ModuleList([Block() for _ in range(12)])

    torch.manual_seed(1)
    model = Model()
    sd = model.state_dict()
    rec = recognize(sd)
    assert rec.layout == "GPT-2 Conv1D c_attn/c_proj" and len(rec.order) == 12 and rec.needs_heads
    X = torch.randn(2, 5, 768, dtype=torch.float64)
    for i in (0, 11):
        layer = {k: v for k, v in sd.items() if k.startswith(f"h.{i}.")}
        tr = translate(
            layer,
            lambda value, name: np.asarray(value.double() if hasattr(value, "double") else value, np.float64),
            heads=12,
        )
        assert tr.head_sizes == (64,) and len(tr.weights) == 6 * 12 + 1  # Q, K, V and their biases; b_o
        W = model.h[i].attn
        with torch.no_grad():
            q, k, v = (X @ W.c_attn.weight.double()).split(768, dim=2)
            q, k, v = (z.view(2, 5, 12, 64).transpose(1, 2) for z in (q, k, v))
            w = (q @ k.transpose(-1, -2) / 8).softmax(-1)
            expected = ((w @ v).transpose(1, 2).reshape(2, 5, 768) @ W.c_proj.weight.double()).numpy()
        x = X.numpy()
        got = 0
        for h in range(12):
            Q, K, V = (tr.weights[f"layers.0.heads.{h}.{n}"] for n in "QKV")
            s = np.einsum("nia,nja->nij", x @ Q.T, x @ K.T) / 8
            s = np.exp(s - s.max(-1, keepdims=True))
            got = got + (s / s.sum(-1, keepdims=True)) @ (x @ V.T)
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_a_tiny_float64_bias_is_not_zero(torch):
    """A float64 bias of 1e-300 is nonzero (as float32 it would underflow to 0): read exactly, not called zero, and
    refused by name without biases."""
    sd = {
        "attn.in_proj_weight": torch.randn(3 * E, E, dtype=torch.float64),
        "attn.in_proj_bias": torch.full((3 * E,), 1e-300, dtype=torch.float64),
        "attn.out_proj.weight": torch.randn(E, E, dtype=torch.float64),
    }
    net = Network.from_torch(sd, tokens=T, heads=H)
    assert net.weights[0][0]["bQ"][0, 0] == Fraction(1e-300) and not any("exactly zero" in n for n in net.notes)
    with pytest.raises(InvalidArgumentError, match=r"attn\.in_proj_bias: a nonzero bias"):
        Network.from_torch(sd, tokens=T, heads=H, biases=False)


def test_multihead_attention_with_trained_biases_is_read_as_trained(torch):
    """torch's MultiheadAttention with nonzero in_proj_bias and out_proj.bias: read into the affine model, the
    forward pass equal to the module's (softmax, with and without a causal mask), and lightning the same weights."""
    torch.manual_seed(3)
    m = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        m.in_proj_bias.normal_()
        m.out_proj.bias.normal_()
    X = _inputs(torch)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for causal in (False, True):
        net = Network.from_torch(m, tokens=T, causal=causal)
        assert net.architecture.bias == "qkvo" and net.architecture.normalized
        with torch.no_grad():
            y, _ = m(X, X, X, need_weights=False, attn_mask=mask if causal else None)
        # float64 sums in another order: equal to rounding (1e-15; a wrong bias moves outputs by order one)
        assert np.allclose(net.forward(X.numpy()), y.numpy(), rtol=1e-10, atol=1e-12)
    assert (
        Network.from_torch(m, tokens=T, normalized=False).architecture.parameter_count
        == H * (2 * DH * E + E * E + 2 * DH + E) + E
    )
