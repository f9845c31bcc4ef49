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


def symmetry_generators(arch: Architecture) -> int:
    """Number of rows of :func:`symmetry_tangents` (arithmetic only, for memory estimates)."""
    n = sum(layer.heads * layer.rank**2 for layer in arch.layers) if arch.parametrization == "QKV" else 0
    if not arch.skip:
        n += sum(d * d for d in arch.widths[1:-1])
    if not arch.normalized:
        n += arch.depth * arch.heads
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
    """1. ``GL_a`` on the queries and keys of each head: ``(dQ, dK) = (E Q, -E^T K)``."""
    families = []
    for layer in T.arch.layers:
        for h in range(layer.heads):
            Q = weights[layer.index - 1][h]["Q"]
            K = weights[layer.index - 1][h]["K"]
            s = T.start()
            for r in range(layer.rank):
                for c in range(layer.rank):
                    row = T.new()
                    T.view(row, "Q", layer.index, h)[r, :] = Q[c, :]  # (E_rc Q)[r] = Q[c]
                    T.view(row, "K", layer.index, h)[c, :] = T.ops.neg(K[r, :])  # -(E_rc^T K)[c] = -K[r]
            hs = f" head {h + 1}" if layer.heads > 1 else ""
            families.append(
                SymmetryFamily(
                    f"GL_{layer.rank} on (Q{layer.index}, K{layer.index}){hs}", "attention", slice(s, T.start())
                )
            )
    return families


def _interlayer_generator(T: _Rows, weights: list[list[dict[str, np.ndarray]]], i: int, r: int, c: int) -> None:
    """The generator ``E_rc`` of ``GL_{d_i}``: ``dV_i = E V_i``, ``d(Q, K, V)_{i+1} = -(Q, K, V)_{i+1} E``."""
    ops = T.ops
    row = T.new()
    for h in range(T.arch.heads):
        V = weights[i - 1][h]["V"]
        T.view(row, "V", i, h)[r, :] = V[c, :]  # (E V_i)[r] = V_i[c]
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
    return SymmetryFamily("rescaling (c A_i, V_i / c)", "scaling", slice(s, T.start()))


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
    P = arch.parameter_count
    M = np.array(T.rows, dtype=ops.dtype) if T.rows else np.zeros((0, P), dtype=ops.dtype)
    return M, families
