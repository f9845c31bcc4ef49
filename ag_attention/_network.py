"""Evaluation and reverse-mode Jacobian of an attention network.

The code is written once against an *arithmetic* object: :class:`~ag_attention._exact.field.GFp`
(exact residues mod p, int64) or :class:`~ag_attention._numeric.Float64`.  An
arithmetic (the protocol :class:`Arithmetic`) provides ``einsum(spec, a, b)``,
``add``, ``sub``, ``neg``, ``random(rng, shape)``, the array ``dtype`` and the
flag ``exact``.

Conventions.  A batch of ``N`` input sequences is an array ``X`` of shape
``(N, t, d_0)`` (tokens as rows).  For one head of one layer::

    Xq = X Q^T,  Xk = X K^T,  Xv = X V^T          (N, t, a), (N, t, a), (N, t, d')
    S  = Xq Xk^T   (= X A X^T in the AV parametrization)         (N, t, t)
    W  = S  (lightning)   or   softmax_j(S / tau)  (normalized)
    Y  = W Xv                                                    (N, t, d')

With a causal mask ``W[i, j] = 0`` for ``j > i`` (lightning: ``S`` masked;
normalized: the softmax over ``j <= i``).  With biases (``Architecture.bias``, docs/math/affine.md) ``Xq``,
``Xk``, ``Xv`` get ``b_q``, ``b_k``, ``b_v`` added to every token and the layer's output ``b_o``; with rotary
positions (``Architecture.positions``, docs/math/rotary.md) token ``i``'s query and key are turned by ``R_i``
before the scores, ``Xq[i] -> R_i Xq[i]``, the rotations in the arithmetic's own numbers (its ``circle``).

so ``Y[i] = sum_j (x_i^T A x_j) V x_j``, which is the
``phi(X)_i`` of docs/math/model.md (model-one-layer).  Heads are summed and a skip connection adds ``X``.

The Jacobian of the map ``parameters -> outputs on the N samples`` has one row
per (sample, output token, output coordinate) and one column per parameter in
the order of :attr:`Architecture.blocks`.  It is computed in reverse mode with
the rows as the batch: the adjoint of the last layer is the identity and is
pulled back layer by layer, costing a few multiply-adds per Jacobian entry.
Polynomials of degree ``3^L`` are never expanded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ._architecture import Architecture
from ._errors import InvalidArgumentError
from ._positions import Frequencies
from ._resources import MemoryEstimate, require_memory

__all__ = [
    "Arithmetic",
    "OperatorArithmetic",
    "ObjectArithmetic",
    "unflatten",
    "forward",
    "jacobian",
    "random_parameters",
    "random_inputs",
    "random_seeds",
    "jacobian_memory",
    "inputs_memory",
    "attention_weights",
]


class Arithmetic(Protocol):
    """What the network code needs of an arithmetic: :class:`~ag_attention._exact.field.GFp` and
    :class:`~ag_attention._numeric.Float64` implement it.

    Arrays are numpy arrays of :attr:`dtype`; :meth:`einsum` takes two operands
    (no ellipsis).  ``exact``: the arithmetic is exact (residues mod p), so
    non-polynomial operations (the softmax) are refused.
    """

    @property
    def exact(self) -> bool: ...

    @property
    def dtype(self) -> type[np.generic]: ...

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        """Random elements of the given shape."""
        ...

    def einsum(self, spec: str, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    def neg(self, a: np.ndarray) -> np.ndarray: ...

    def circle(self, freqs: Frequencies, tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """``cos(p theta_f)`` and ``sin(p theta_f)``, ``p = 0..tokens-1``, as arrays ``(tokens, F)`` of this
        arithmetic (rotary positions; docs/math/rotary.md)."""
        ...


class OperatorArithmetic:
    """``add``, ``sub``, ``neg``, ``mul``, ``scale`` by numpy's operators: for arithmetics whose elements compute
    what they mean with them (float64, balls); GF(p) reduces modulo p instead."""

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = a + b
        return out

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = a - b
        return out

    def neg(self, a: np.ndarray) -> np.ndarray:
        out: np.ndarray = -a
        return out

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = a * b
        return out

    def scale(self, a: np.ndarray, c: int) -> np.ndarray:
        out: np.ndarray = a * c
        return out


def jacobian_memory(
    arch: Architecture, samples: int, rows_per_sample: int | None = None, *, exact: bool = True
) -> MemoryEstimate:
    """Peak memory of :func:`jacobian` (forward caches, backward adjoints, the Jacobian), from sizes alone.

    ``rows_per_sample`` is the number ``k`` of seeded output combinations
    (None: all ``t d_L`` outputs).  The inputs and the seeds are the
    caller's (see :func:`inputs_memory`).  Python integers throughout, so an
    absurd size gives an absurd estimate, never an overflow.
    """
    N, t = int(samples), arch.tokens
    R = arch.output_size if rows_per_sample is None else int(rows_per_sample)
    B, H = 8, arch.heads
    qkv = arch.parametrization == "QKV"
    jac = N * R * arch.parameter_count * B
    kept = 0  # forward caches, alive through the backward pass
    layer_peaks = []
    for layer in arch.layers:
        a, din, dout = layer.rank, layer.d_in, layer.d_out
        proj = 2 * a if qkv else din
        kept += H * N * t * (dout + proj + t * (2 if arch.normalized else 1)) + N * t * dout
        # backward, one head: Wbar and Sbar (t x t per row), Xvbar, the gradient blocks, Hbar parts
        att = N * R * t * t * (4 if arch.normalized else 1)
        grads = N * R * (dout * din + (t * 2 * a + 2 * a * din if qkv else t * din + din * din))
        hbar = N * R * t * (dout + 5 * din) if layer.index > 1 else N * R * t * dout
        largest = max(N * R * t * t, N * R * dout * din, N * R * (a * din if qkv else din * din), N * R * t * din)
        # GF(p) einsum: the product, its residue and the split operand's halves; float64: one product
        transient = (2 if exact else 1) * largest
        # with several heads, one head's adjoints are still alive while the next head's are made
        layer_peaks.append((2 if H > 1 else 1) * (att + N * R * t * dout + grads) + hbar + transient)
    parts = {
        f"Jacobian {N * R:,} x {arch.parameter_count:,}": jac,
        "forward caches": kept * B,
        "backward adjoints of one layer": max(layer_peaks) * B,
    }
    return MemoryEstimate(sum(parts.values()), parts)


def inputs_memory(arch: Architecture, samples: int, rows_per_sample: int | None = None) -> MemoryEstimate:
    """Random inputs ``(N, t, d_0)`` and, with ``k`` rows per sample, the seeds ``(N, k, t, d_L)``."""
    N = int(samples)
    parts = {f"inputs {N:,} x {arch.tokens} x {arch.widths[0]}": 8 * N * arch.tokens * arch.widths[0]}
    if rows_per_sample is not None and rows_per_sample < arch.output_size:
        parts[f"seeds {N:,} x {rows_per_sample}"] = 8 * N * int(rows_per_sample) * arch.output_size
    return MemoryEstimate(sum(parts.values()), parts)


def unflatten(arch: Architecture, theta: np.ndarray) -> list[list[dict[str, np.ndarray]]]:
    """Split a flat parameter vector into ``weights[layer][head][name]`` matrices."""
    theta = np.asarray(theta)
    if theta.shape != (arch.parameter_count,):
        raise InvalidArgumentError(
            f"theta: parameter vector has shape {theta.shape}, expected ({arch.parameter_count},)"
        )
    weights: list[list[dict[str, np.ndarray]]] = [[dict() for _ in range(arch.heads)] for _ in range(arch.depth)]
    for b in arch.blocks:
        weights[b.layer - 1][b.head][b.name] = theta[b.slice].reshape(b.rows, b.cols)
    return weights


def random_parameters(arch: Architecture, ops: Arithmetic, rng: np.random.Generator) -> np.ndarray:
    return ops.random(rng, arch.parameter_count)


class ObjectArithmetic(OperatorArithmetic):
    """Exact arithmetic on object arrays whose elements compute with Python's operators (``Fraction``, dual numbers
    over polynomials): the exact forward pass of :meth:`ag_attention.Network.forward` and the kernel certificate's
    directional derivatives.  It draws no random elements."""

    exact = True
    dtype = np.object_

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError("ObjectArithmetic draws no random elements")

    def circle(self, freqs: Frequencies, tokens: int) -> tuple[np.ndarray, np.ndarray]:
        raise InvalidArgumentError(
            "positions: the rotations of a rotary layer, cos(p theta) and sin(p theta), are not rational numbers: "
            "exact rational arithmetic cannot evaluate it (float64: Network.forward(); the exact ranks use GF(p), "
            "docs/math/rotary.md)"
        )

    def einsum(self, spec: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.einsum(spec, a, b, optimize=False)
        return out


def random_inputs(arch: Architecture, ops: Arithmetic, rng: np.random.Generator, samples: int) -> np.ndarray:
    return ops.random(rng, (samples, arch.tokens, arch.widths[0]))


def random_seeds(
    arch: Architecture, ops: Arithmetic, rng: np.random.Generator, samples: int, k: int
) -> np.ndarray | None:
    """Backward seeds for :func:`jacobian`: ``k`` random combinations of each sample's ``t d_L`` outputs, or None
    (every output) when ``k`` is at least their number."""
    return None if k >= arch.output_size else ops.random(rng, (samples, k, arch.tokens, arch.widths[-1]))


@dataclass
class _Head:
    """What the backward pass needs of one head's forward pass."""

    Xv: np.ndarray
    W: np.ndarray  # attention weights actually used (S, or softmax(S / tau))


@dataclass
class _QKVHead(_Head):
    Xq: np.ndarray  # the queries as the scores see them (turned by R_i with rotary positions)
    Xk: np.ndarray
    R: np.ndarray | None = None  # the rotations (t, a, a), or None


@dataclass
class _AVHead(_Head):
    XA: np.ndarray  # X A


def _causal_mask(t: int) -> np.ndarray:
    """``mask[i, j]``: token ``i`` attends to token ``j`` (``j <= i``)."""
    return np.tril(np.ones((t, t), dtype=bool))


def _softmax(ops: Arithmetic, S: np.ndarray, tau: float, mask: np.ndarray | None = None) -> np.ndarray:
    """Row softmax of ``S / tau`` (over ``j <= i`` with a mask).

    An arithmetic without an order (ball arithmetic: :class:`ag_attention._exact.balls.Balls`) provides its
    own ``softmax(S, tau, mask)``; float64 subtracts the row maximum first.
    """
    own = getattr(ops, "softmax", None)
    if own is not None:
        out_own: np.ndarray = own(S, tau, mask)
        return out_own
    Z = S / tau if mask is None else np.where(mask, S / tau, -np.inf)
    Z = Z - Z.max(axis=-1, keepdims=True)
    E = np.exp(Z)
    out: np.ndarray = E / E.sum(axis=-1, keepdims=True)
    return out


def rotations(arch: Architecture, ops: Arithmetic, a: int) -> np.ndarray | None:
    """The rotations ``R_i`` (``(t, a, a)``, position ``i``) a head of size ``a`` turns its queries and keys by, in
    the arithmetic's numbers (:meth:`Arithmetic.circle`), or None without rotary positions."""
    rot = arch.positions
    if rot is None:
        return None
    C, S = ops.circle(rot.frequencies(a), arch.tokens)
    R = np.zeros((arch.tokens, a, a), dtype=ops.dtype)
    for c in range(a):
        R[:, c, c] = 1
    for c1, c2, f in rot.pairs(a):
        R[:, c1, c1] = C[:, f]
        R[:, c2, c2] = C[:, f]
        R[:, c1, c2] = ops.neg(S[:, f])
        R[:, c2, c1] = S[:, f]
    return R


def still_coordinates(arch: Architecture, a: int) -> slice:
    """The coordinates of a head of size ``a`` that no rotation turns (all of them without rotary positions)."""
    return slice(0 if arch.positions is None else arch.positions.rotated(a), a)


def _biased(ops: Arithmetic, Z: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    """``Z`` (``(N, t, m)``) with the bias ``name`` (a column ``m x 1``) added to every token, if the head has it."""
    return ops.add(Z, w[name][:, 0]) if name in w else Z


def _head_forward(
    arch: Architecture, ops: Arithmetic, w: dict[str, np.ndarray], X: np.ndarray, R: np.ndarray | None = None
) -> tuple[np.ndarray, _Head]:
    """One head's output ``W Xv`` and its cache (``R``: the rotations, :func:`rotations`)."""
    Xv = _biased(ops, ops.einsum("ntk,mk->ntm", X, w["V"]), w, "bV")
    if arch.parametrization == "QKV":
        Xq = _biased(ops, ops.einsum("ntk,ck->ntc", X, w["Q"]), w, "bQ")
        Xk = _biased(ops, ops.einsum("ntk,ck->ntc", X, w["K"]), w, "bK")
        if R is not None:
            Xq = ops.einsum("icd,nid->nic", R, Xq)
            Xk = ops.einsum("icd,nid->nic", R, Xk)
        S = ops.einsum("nic,njc->nij", Xq, Xk)
    else:
        XA = ops.einsum("ntk,kl->ntl", X, w["A"])
        S = ops.einsum("nil,njl->nij", XA, X)
    mask = _causal_mask(arch.tokens) if arch.causal else None
    if arch.normalized:
        W = _softmax(ops, S, arch.temperature, mask)
    else:
        W = S if mask is None else np.where(mask, S, np.zeros((), dtype=S.dtype))
    Yh = ops.einsum("nij,njm->nim", W, Xv)
    cache = _QKVHead(Xv, W, Xq, Xk, R) if arch.parametrization == "QKV" else _AVHead(Xv, W, XA)
    return Yh, cache


def _layer_forward(
    arch: Architecture, ops: Arithmetic, heads: list[dict[str, np.ndarray]], X: np.ndarray
) -> tuple[np.ndarray, list[_Head]]:
    R = rotations(arch, ops, heads[0]["Q"].shape[0]) if arch.positions is not None else None
    Y, first = _head_forward(arch, ops, heads[0], X, R)
    caches = [first]
    for w in heads[1:]:
        Yh, cache = _head_forward(arch, ops, w, X, R)
        Y = ops.add(Y, Yh)
        caches.append(cache)
    Y = _biased(ops, Y, heads[0], "bO")
    if arch.skip:
        Y = ops.add(Y, X)
    return Y, caches


def forward(arch: Architecture, ops: Arithmetic, theta: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Outputs ``(N, t, d_L)`` of the network with flat parameters ``theta`` on inputs ``X``."""
    _check_inputs(arch, ops, X)
    weights = unflatten(arch, theta)
    for layer_weights in weights:
        X, _ = _layer_forward(arch, ops, layer_weights, X)
    return X


def attention_weights(arch: Architecture, ops: Arithmetic, theta: np.ndarray, X: np.ndarray) -> list[np.ndarray]:
    """The attention weights ``W`` ``(N, t, t)`` of every layer and head, in order, on inputs ``X``."""
    _check_inputs(arch, ops, X)
    out: list[np.ndarray] = []
    for layer_weights in unflatten(arch, theta):
        X, caches = _layer_forward(arch, ops, layer_weights, X)
        out.extend(c.W for c in caches)
    return out


def _check_inputs(arch: Architecture, ops: Arithmetic, X: np.ndarray) -> None:
    if arch.normalized and ops.exact:
        raise InvalidArgumentError(
            "ops: normalized (softmax) attention is not polynomial: use a floating-point arithmetic"
        )
    if X.ndim != 3 or X.shape[1:] != (arch.tokens, arch.widths[0]):
        raise InvalidArgumentError(f"X: inputs have shape {X.shape}, expected (N, {arch.tokens}, {arch.widths[0]})")


def _head_backward(
    arch: Architecture,
    ops: Arithmetic,
    w: dict[str, np.ndarray],
    c: _Head,
    Ybar: np.ndarray,
    Hin: np.ndarray,
    J: np.ndarray,
    li: int,
    h: int,
    rows: int,
) -> list[np.ndarray]:
    """One head's share of the backward pass: its weights' columns of ``J``, and its parts of the adjoint
    of the layer's input (none for the first layer)."""
    Wbar = ops.einsum("nrim,njm->nrij", Ybar, c.Xv)
    Xvbar = ops.einsum("nrim,nij->nrjm", Ybar, c.W)
    if arch.normalized:
        # d softmax: Sbar = W * (Wbar - <W, Wbar>_row) / tau
        inner = (c.W[:, None] * Wbar).sum(axis=-1, keepdims=True)
        Sbar = c.W[:, None] * (Wbar - inner) / arch.temperature
    elif arch.causal:  # W = S on j <= i, 0 elsewhere
        Sbar = np.where(_causal_mask(arch.tokens), Wbar, np.zeros((), dtype=Wbar.dtype))
    else:
        Sbar = Wbar
    grads: dict[str, np.ndarray] = {
        "V": ops.einsum("nrjm,njk->nrmk", Xvbar, Hin),
    }
    ones = np.ones(Hin.shape[1], dtype=ops.dtype)  # a bias's gradient sums its tokens' adjoints
    if "bV" in w:
        grads["bV"] = ops.einsum("nrjm,j->nrm", Xvbar, ones)
    if isinstance(c, _QKVHead):
        Xqbar = ops.einsum("nrij,njc->nric", Sbar, c.Xk)
        Xkbar = ops.einsum("nrij,nic->nrjc", Sbar, c.Xq)
        if c.R is not None:  # back through the rotations: the adjoint of x -> R_i x is R_i^T
            Xqbar = ops.einsum("nric,icd->nrid", Xqbar, c.R)
            Xkbar = ops.einsum("nrjc,jcd->nrjd", Xkbar, c.R)
        grads["Q"] = ops.einsum("nric,nik->nrck", Xqbar, Hin)
        grads["K"] = ops.einsum("nrjc,njk->nrck", Xkbar, Hin)
        if "bQ" in w:
            grads["bQ"] = ops.einsum("nric,i->nrc", Xqbar, ones)
        if "bK" in w:
            grads["bK"] = ops.einsum("nrjc,j->nrc", Xkbar, ones)
            if arch.normalized:
                # q_i^T b_k on the coordinates that do not turn is constant along row i and the softmax removes it:
                # the derivative there is exactly zero (float64 would give rounding noise that a column-normalized
                # rank counts)
                grads["bK"][..., still_coordinates(arch, w["Q"].shape[0])] = 0
    else:
        T = ops.einsum("nrij,njl->nril", Sbar, Hin)
        grads["A"] = ops.einsum("nril,nik->nrkl", T, Hin)
    for name, g in grads.items():
        b = arch.block(name, li + 1, h)
        J[:, b.slice] = g.reshape(rows, b.size)
    if li == 0:
        return []  # the input X has no adjoint to pass on
    parts = [ops.einsum("nrjm,mk->nrjk", Xvbar, w["V"])]
    if isinstance(c, _QKVHead):
        parts.append(ops.einsum("nric,ck->nrik", Xqbar, w["Q"]))
        parts.append(ops.einsum("nrjc,ck->nrjk", Xkbar, w["K"]))
    elif isinstance(c, _AVHead):
        # S = X A X^T:  Xbar = Sbar (X A^T) + Sbar^T (X A)
        XAt = ops.einsum("njl,kl->njk", Hin, w["A"])
        parts.append(ops.einsum("nrij,njk->nrik", Sbar, XAt))
        parts.append(ops.einsum("nrji,njk->nrik", Sbar, c.XA))
    return parts


def jacobian(
    arch: Architecture, ops: Arithmetic, theta: np.ndarray, X: np.ndarray, seeds: np.ndarray | None = None
) -> np.ndarray:
    """Jacobian of ``theta -> forward(theta, X)``, shape ``(N * t * d_L, P)``.

    Row ``(n, i, m)`` (sample, token, coordinate, row-major) holds the
    gradient of output coordinate ``m`` of token ``i`` on sample ``n``.

    With ``seeds`` of shape ``(N, k, t, d_L)`` the backward pass starts from
    these adjoints instead of the identity and returns ``G J`` with ``G``
    block-diagonal (sample ``n``'s block holds ``seeds[n]``): ``N * k`` rows,
    each a combination of one sample's outputs, at ``k / (t d_L)`` of the cost.
    """
    _check_inputs(arch, ops, X)
    weights = unflatten(arch, theta)
    N, t = X.shape[0], arch.tokens
    if seeds is not None and seeds.shape[:1] + seeds.shape[2:] != (N, t, arch.widths[-1]):
        raise InvalidArgumentError(f"seeds have shape {seeds.shape}, expected (N={N}, k, {t}, {arch.widths[-1]})")
    R = arch.output_size if seeds is None else seeds.shape[1]
    require_memory(
        jacobian_memory(arch, N, None if seeds is None else R, exact=ops.exact),
        f"the Jacobian of {arch.describe()} on {N} samples",
        "use fewer samples or a smaller network",
    )
    # forward pass, keeping what the backward pass needs
    inputs: list[np.ndarray] = []
    caches: list[list[_Head]] = []
    H = X
    for layer_weights in weights:
        inputs.append(H)
        H, layer_caches = _layer_forward(arch, ops, layer_weights, H)
        caches.append(layer_caches)
    J = np.zeros((N * R, arch.parameter_count), dtype=ops.dtype)
    if seeds is None:
        # adjoint of the output: identity, rows (i, m) of each sample
        eye = np.eye(R, dtype=ops.dtype).reshape(R, t, arch.widths[-1])
        Ybar = np.broadcast_to(eye, (N, R, t, arch.widths[-1]))
    else:
        Ybar = seeds
    for li in range(arch.depth - 1, -1, -1):
        Hin = inputs[li]
        # the adjoint of layer li's input (not needed, and left None without skip connections, when li == 0)
        Hbar: np.ndarray | None = Ybar if arch.skip else None
        if "bO" in weights[li][0]:
            b = arch.block("bO", li + 1, 0)
            ones = np.ones(t, dtype=ops.dtype)
            J[:, b.slice] = ops.einsum("nrim,i->nrm", Ybar, ones).reshape(N * R, b.size)
        for h, (w, c) in enumerate(zip(weights[li], caches[li])):
            parts = _head_backward(arch, ops, w, c, Ybar, Hin, J, li, h, N * R)
            for part in parts:
                Hbar = part if Hbar is None else ops.add(Hbar, part)
        if Hbar is not None:
            Ybar = Hbar
    return J
