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

from ..architecture import Architecture
from ..network import Arithmetic, unflatten

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


def symmetry_tangents(arch: Architecture, theta: np.ndarray, ops: Arithmetic) -> tuple[np.ndarray, list[SymmetryFamily]]:
    """Matrix (one row per generator) of symmetry tangents at ``theta``, and the families.

    Entries are in the arithmetic of ``ops`` (residues mod p for GF(p)).
    """
    weights = unflatten(arch, theta)
    P = arch.parameter_count
    rows: list[np.ndarray] = []
    families: list[SymmetryFamily] = []

    def new_row() -> np.ndarray:
        r = np.zeros(P, dtype=ops.dtype)
        rows.append(r)
        return r

    def view(row: np.ndarray, name: str, layer: int, head: int) -> np.ndarray:
        b = arch.block(name, layer, head)
        return row[b.slice].reshape(b.rows, b.cols)

    def start() -> int:
        return len(rows)

    # 1. GL_a on queries and keys
    if arch.parametrization == "QKV":
        for layer in arch.layers:
            for h in range(layer.heads):
                Q = weights[layer.index - 1][h]["Q"]
                K = weights[layer.index - 1][h]["K"]
                s = start()
                for r in range(layer.rank):
                    for c in range(layer.rank):
                        row = new_row()
                        view(row, "Q", layer.index, h)[r, :] = Q[c, :]  # (E_rc Q)[r] = Q[c]
                        view(row, "K", layer.index, h)[c, :] = ops.neg(K[r, :])  # -(E_rc^T K)[c] = -K[r]
                hs = f" head {h + 1}" if layer.heads > 1 else ""
                families.append(
                    SymmetryFamily(f"GL_{layer.rank} on (Q{layer.index}, K{layer.index}){hs}", "attention", slice(s, start()))
                )
    # 2. GL_{d_i} between layers
    if not arch.skip:
        for i in range(1, arch.depth):
            d = arch.widths[i]
            s = start()
            for r in range(d):
                for c in range(d):
                    row = new_row()
                    for h in range(arch.heads):
                        V = weights[i - 1][h]["V"]
                        view(row, "V", i, h)[r, :] = V[c, :]  # (E V_i)[r] = V_i[c]
                        nxt = weights[i][h]
                        for name in ("Q", "K", "V"):
                            if name in nxt:  # -(M E)[:, c] = -M[:, r]
                                view(row, name, i + 1, h)[:, c] = ops.neg(nxt[name][:, r])
                        if "A" in nxt:
                            A = nxt["A"]
                            dA = view(row, "A", i + 1, h)
                            # -E^T A - A E:  row c gets -A[r, :], column c gets -A[:, r]
                            dA[c, :] = ops.sub(dA[c, :], A[r, :])
                            dA[:, c] = ops.sub(dA[:, c], A[:, r])
            families.append(SymmetryFamily(f"GL_{d} between layers {i} and {i + 1}", "interlayer", slice(s, start())))
    # 3. rescaling of each head
    if not arch.normalized:
        s = start()
        for layer in arch.layers:
            for h in range(layer.heads):
                row = new_row()
                w = weights[layer.index - 1][h]
                first = "Q" if arch.parametrization == "QKV" else "A"
                view(row, first, layer.index, h)[:, :] = w[first]
                view(row, "V", layer.index, h)[:, :] = ops.neg(w["V"])
        families.append(SymmetryFamily("rescaling (c A_i, V_i / c)", "scaling", slice(s, start())))
    T = np.array(rows, dtype=ops.dtype) if rows else np.zeros((0, P), dtype=ops.dtype)
    return T, families
