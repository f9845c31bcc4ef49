"""Tangent vectors of the continuous parameter symmetries (docs/math/symmetries.md (symmetries-families)).

At a parameter point ``theta`` the three families act infinitesimally by

1. ``GL_{a_i}`` on queries and keys of each head: ``(dQ, dK) = (E Q, -E^T K)``;
2. ``GL_{d_i}`` between layers ``i`` and ``i+1`` (``i = 1..L-1``, not with skip
   connections): ``dV_i = E V_i`` on every head of layer ``i`` and
   ``d(Q, K, V)_{i+1} = -(Q, K, V)_{i+1} E`` on every head of layer ``i+1``
   (in the AV parametrization ``dA_{i+1} = -E^T A_{i+1} - A_{i+1} E``);
3. rescaling of each head (lightning only): ``(dQ, dV) = (Q, -V)``
   (AV: ``(dA, dV) = (A, -V)``).

Every such vector is in the kernel of the Jacobian of the parametrization at
``theta``, whatever the architecture, so ``P - rank`` of the matrix they form
bounds the dimension of the neuromanifold from above.

Affine and rotary attention (docs/math/affine.md, docs/math/rotary.md) change the families:

* family 1 acts on the biases too, ``(d b_q, d b_k) = (E b_q, -E^T b_k)``; with rotary positions only the ``E``
  whose transpose commutes with every rotation survive: on each turning pair of coordinates ``E = I`` and the
  quarter turn ``J``, and all of ``gl`` on the coordinates that do not turn (``D + (a - D)^2`` generators);
* family 2 moves ``b_v`` and ``b_o`` with ``V``: ``(d b_v, d b_o) = (E b_v, E b_o)``, and gains the translations
  ``y -> y + m`` of layer ``i``'s output when it has ``b_o`` and layer ``i + 1`` biases to absorb them:
  ``d b_o = m``, ``d b_{q,k,v} = -(Q, K, V)_{i+1} m`` (the key's not needed under softmax without rotary positions);
* family 3 scales the biases with their weights, ``(d b_q, d b_v) = (b_q, -b_v)``;
* under softmax, two families of their own: a key bias adds ``q_i^T b_k`` to row ``i`` of the scores, a constant
  the softmax removes (every ``b_k`` entry is a kernel direction, without rotary positions), and the rows summing
  to one pass ``b_v`` through unchanged, so only ``sum_h b_{v,h} + b_o`` matters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._architecture import Architecture
from .._network import Arithmetic, unflatten

__all__ = ["SymmetryFamily", "symmetry_generators", "symmetry_tangents"]


@dataclass(frozen=True)
class SymmetryFamily:
    name: str  # e.g. "GL_2 on (Q1, K1)"
    kind: str  # "attention", "interlayer" or "scaling"
    rows: slice  # rows of the tangent matrix


def attention_algebra(arch: Architecture, a: int) -> list[list[tuple[int, int, int]]]:
    """A basis of the Lie algebra acting on a head's queries and keys (size ``a``), each element as its nonzero
    entries ``(row, column, +-1)``: all of ``gl_a``, or with rotary positions the ``E`` whose transpose commutes with
    every rotation (``I`` and the quarter turn ``J`` on each turning pair, ``gl`` on the coordinates that do not
    turn)."""
    rot = arch.positions
    if rot is None:
        return [[(r, c, 1)] for r in range(a) for c in range(a)]
    basis = []
    for c1, c2, _ in rot.pairs(a):
        basis.append([(c1, c1, 1), (c2, c2, 1)])
        basis.append([(c1, c2, -1), (c2, c1, 1)])
    still = list(range(rot.rotated(a), a))
    basis += [[(r, c, 1)] for r in still for c in still]
    return basis


def _translations(arch: Architecture) -> bool:
    """Layer ``i``'s output can move by a constant that layer ``i + 1``'s biases absorb (docs/math/affine.md): an
    output bias moves it (under softmax a value bias too: it passes through), the next layer's query, key and value
    biases absorb it (under softmax without rotary positions the key's is not needed: it cancels)."""
    absorb = "qv" if arch.normalized and arch.positions is None else "qkv"
    moves = "o" in arch.bias or (arch.normalized and "v" in arch.bias)
    return not arch.skip and moves and all(x in arch.bias for x in absorb)


def _shift(arch: Architecture) -> tuple[str, int]:
    """The bias that moves a layer's output: its output bias, or under softmax head 0's value bias."""
    return ("bO", 0) if "o" in arch.bias else ("bV", 0)


def symmetry_generators(arch: Architecture) -> int:
    """Number of rows of :func:`symmetry_tangents` (arithmetic only, for memory estimates)."""
    n = sum(layer.heads * len(attention_algebra(arch, layer.rank)) for layer in arch.layers)
    n = n if arch.parametrization == "QKV" else 0
    if not arch.skip:
        n += sum(d * d + d * _translations(arch) for d in arch.widths[1:-1])
    if not arch.normalized:
        n += arch.depth * arch.heads
    elif arch.bias:
        for layer in arch.layers:
            turning = 0 if arch.positions is None else arch.positions.rotated(layer.rank)
            n += layer.heads * (layer.rank - turning) * ("k" in arch.bias)
            if "v" in arch.bias:
                n += layer.d_out * (layer.heads - ("o" not in arch.bias))
    return n


class _Rows:
    """The tangent matrix under construction: one zero row per generator, written through block views."""

    def __init__(self, arch: Architecture, ops: Arithmetic):
        self.arch, self.ops = arch, ops
        self.rows: list[np.ndarray] = []

    def new(self) -> np.ndarray:
        r = np.zeros(self.arch.parameter_count, dtype=self.ops.dtype)
        self.rows.append(r)
        return r

    def view(self, row: np.ndarray, name: str, layer: int, head: int) -> np.ndarray:
        b = self.arch.block(name, layer, head)
        return row[b.slice].reshape(b.rows, b.cols)

    def start(self) -> int:
        return len(self.rows)


def _attention_families(T: _Rows, weights: list[list[dict[str, np.ndarray]]]) -> list[SymmetryFamily]:
    """1. ``GL_a`` on the queries and keys of each head: ``(dQ, dK) = (E Q, -E^T K)`` (and their biases); with
    rotary positions the subgroup commuting with the rotations (:func:`attention_algebra`)."""
    families = []
    ops = T.ops
    for layer in T.arch.layers:
        basis = attention_algebra(T.arch, layer.rank)
        for h in range(layer.heads):
            w = weights[layer.index - 1][h]
            s = T.start()
            for E in basis:
                row = T.new()
                for name, sign in (("Q", 1), ("K", -1), ("bQ", 1), ("bK", -1)):
                    if name not in w:
                        continue
                    view, M = T.view(row, name, layer.index, h), w[name]
                    for r, c, e in E:  # E_rc: (E M)[r] += e M[c]; -(E^T M)[c] -= e M[r]
                        src, dst = (c, r) if sign > 0 else (r, c)
                        view[dst, :] = (
                            ops.add(view[dst, :], M[src, :]) if sign * e > 0 else ops.sub(view[dst, :], M[src, :])
                        )
            hs = f" head {h + 1}" if layer.heads > 1 else ""
            group = (
                f"GL_{layer.rank}" if T.arch.positions is None else "the rotations' commutant in GL_" + str(layer.rank)
            )
            families.append(
                SymmetryFamily(f"{group} on (Q{layer.index}, K{layer.index}){hs}", "attention", slice(s, T.start()))
            )
    return families


def _interlayer_generator(T: _Rows, weights: list[list[dict[str, np.ndarray]]], i: int, r: int, c: int) -> None:
    """The generator ``E_rc`` of ``GL_{d_i}``: ``dV_i = E V_i``, ``d(Q, K, V)_{i+1} = -(Q, K, V)_{i+1} E``."""
    ops = T.ops
    row = T.new()
    for h in range(T.arch.heads):
        here = weights[i - 1][h]
        for name in ("V", "bV", "bO"):
            if name in here:
                T.view(row, name, i, 0 if name == "bO" else h)[r, :] = here[name][c, :]  # (E V_i)[r] = V_i[c]
        nxt = weights[i][h]
        for name in ("Q", "K", "V"):
            if name in nxt:  # -(M E)[:, c] = -M[:, r]
                T.view(row, name, i + 1, h)[:, c] = ops.neg(nxt[name][:, r])
        if "A" in nxt:
            A = nxt["A"]
            dA = T.view(row, "A", i + 1, h)
            # -E^T A - A E:  row c gets -A[r, :], column c gets -A[:, r]
            dA[c, :] = ops.sub(dA[c, :], A[r, :])
            dA[:, c] = ops.sub(dA[:, c], A[:, r])


def _interlayer_families(T: _Rows, weights: list[list[dict[str, np.ndarray]]]) -> list[SymmetryFamily]:
    """2. ``GL_{d_i}`` between layers ``i`` and ``i + 1``."""
    families = []
    for i in range(1, T.arch.depth):
        d = T.arch.widths[i]
        s = T.start()
        for r in range(d):
            for c in range(d):
                _interlayer_generator(T, weights, i, r, c)
        families.append(SymmetryFamily(f"GL_{d} between layers {i} and {i + 1}", "interlayer", slice(s, T.start())))
        if _translations(T.arch):
            s = T.start()
            for c in range(d):  # y -> y + e_c after layer i, absorbed by layer i + 1's biases
                row = T.new()
                T.view(row, _shift(T.arch)[0], i, 0)[c, 0] = 1
                for h in range(T.arch.heads):
                    nxt = weights[i][h]
                    for name in ("Q", "K", "V"):
                        if "b" + name in nxt:
                            T.view(row, "b" + name, i + 1, h)[:, 0] = T.ops.neg(nxt[name][:, c])
            families.append(
                SymmetryFamily(f"translations R^{d} between layers {i} and {i + 1}", "interlayer", slice(s, T.start()))
            )
    return families


def _scaling_family(T: _Rows, weights: list[list[dict[str, np.ndarray]]]) -> SymmetryFamily:
    """3. Rescaling of each head: ``(dQ, dV) = (Q, -V)`` (AV: ``(dA, dV) = (A, -V)``)."""
    s = T.start()
    first = "Q" if T.arch.parametrization == "QKV" else "A"
    for layer in T.arch.layers:
        for h in range(layer.heads):
            row = T.new()
            w = weights[layer.index - 1][h]
            T.view(row, first, layer.index, h)[:, :] = w[first]
            T.view(row, "V", layer.index, h)[:, :] = T.ops.neg(w["V"])
            if "bQ" in w:
                T.view(row, "bQ", layer.index, h)[:, :] = w["bQ"]
            if "bV" in w:
                T.view(row, "bV", layer.index, h)[:, :] = T.ops.neg(w["bV"])
    return SymmetryFamily("rescaling (c A_i, V_i / c)", "scaling", slice(s, T.start()))


def _softmax_bias_families(T: _Rows) -> list[SymmetryFamily]:
    """Under softmax: every key bias entry on a coordinate that does not turn (``q_i^T b_k`` there is constant
    along row ``i``: all of ``b_k`` without rotary positions),
    and the value biases moved against each other or the output bias (rows summing to one pass ``b_v`` through:
    only ``sum_h b_{v,h} + b_o`` matters)."""
    families = []
    arch = T.arch
    for layer in arch.layers:
        still = range(0 if arch.positions is None else arch.positions.rotated(layer.rank), layer.rank)
        if "k" in arch.bias and still:
            s = T.start()
            for h in range(layer.heads):
                for c in still:
                    T.view(T.new(), "bK", layer.index, h)[c, 0] = 1
            families.append(SymmetryFamily(f"key biases of layer {layer.index} (cancel)", "bias", slice(s, T.start())))
        if "v" in arch.bias and ("o" in arch.bias or layer.heads > 1):
            s = T.start()
            for h in range(0 if "o" in arch.bias else 1, layer.heads):
                for m in range(layer.d_out):
                    row = T.new()
                    T.view(row, "bV", layer.index, h)[m, 0] = 1
                    other = T.view(row, "bO", layer.index, 0) if "o" in arch.bias else T.view(row, "bV", layer.index, 0)
                    other[m, 0] = T.ops.neg(np.ones(1, dtype=T.ops.dtype))[0]
            families.append(
                SymmetryFamily(f"value biases of layer {layer.index} (pass through)", "bias", slice(s, T.start()))
            )
    return families


def symmetry_tangents(
    arch: Architecture, theta: np.ndarray, ops: Arithmetic
) -> tuple[np.ndarray, list[SymmetryFamily]]:
    """Matrix (one row per generator) of symmetry tangents at ``theta``, and the families.

    Entries are in the arithmetic of ``ops`` (residues mod p for GF(p)).
    """
    weights = unflatten(arch, theta)
    T = _Rows(arch, ops)
    families: list[SymmetryFamily] = []
    if arch.parametrization == "QKV":
        families += _attention_families(T, weights)
    if not arch.skip:
        families += _interlayer_families(T, weights)
    if not arch.normalized:
        families.append(_scaling_family(T, weights))
    elif arch.bias:
        families += _softmax_bias_families(T)
    P = arch.parameter_count
    M = np.array(T.rows, dtype=ops.dtype) if T.rows else np.zeros((0, P), dtype=ops.dtype)
    return M, families
