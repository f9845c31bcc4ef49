"""The kernel directions a dead or rank-deficient head exhibits at a network's exact weights, and the upper
bound they prove on the local rank with the symmetry tangents (issue 37; docs/math/point.md, point-heads):
:func:`head_kernel`, :func:`with_head_kernel` (lightning), :func:`softmax_head_bound` (softmax)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import ComputationError
from .._exact import GFp, linalg
from .._models import symmetry_tangents
from .factors import integer_rows, product_rank, residues
from .geometry import PRIMES, LocalRank, _families

__all__ = ["head_kernel", "with_head_kernel", "softmax_head_bound"]


def _left_null(M: np.ndarray) -> list[list[Fraction]]:
    """A basis of ``{n : n^T M = 0}`` over QQ (``M`` exact, ``a x d``): FLINT's integer nullspace of ``M^T``."""
    rows = integer_rows(np.asarray(M.T, dtype=object))
    if not rows or not rows[0]:
        return []
    return [[Fraction(v) for v in vector] for vector in linalg.integer_nullspace(rows)]


def head_kernel(net: Any, p: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Kernel vectors of ``d phi_theta`` that the heads' own ranks exhibit, exact rationals reduced mod ``p`` (rows
    of a ``k x P`` int64 array), and what each head contributes, in words:

    * ``V_h = 0``: every entry of ``Q_h`` and ``K_h`` (or ``A_h``): ``phi`` is linear in ``V_h``, so moving the
      head's scores changes nothing to first order (softmax too);
    * ``A_h = 0`` (lightning): every entry of ``V_h`` (``phi`` is linear in ``A_h`` as well);
    * ``rank A_h < a``: ``(dQ, dK) = (n e_j^T, 0)`` for ``n^T K_h = 0`` and ``(0, n e_j^T)`` for ``n^T Q_h = 0``
      (``dQ^T K + Q^T dK = 0``: ``A_h`` does not move), beyond ``GL_a`` when a factor has rank below ``a``.

    Each is a kernel vector at every input (``phi`` depends on the head through ``(A_h, V_h)`` only), so with the
    symmetry tangents their GF(p) rank ``r`` proves ``rank d phi_theta <= P - r`` (docs/math/point.md,
    point-heads)."""
    arch = net.architecture
    P = arch.parameter_count
    where = {(b.layer, b.head, b.name): b.slice for b in arch.blocks}
    rows: list[np.ndarray] = []
    said: list[str] = []

    def unit(sl: slice) -> None:
        for i in range(sl.start, sl.stop):
            v = np.zeros(P, dtype=np.int64)
            v[i] = 1
            rows.append(v)

    for l, layer in enumerate(net.weights):
        for h, w in enumerate(layer):
            blocks = {n: where[(l + 1, h, n)] for n in w}
            A = w["A"] if "A" in w else w["Q"].T.dot(w["K"])
            if not any(v != 0 for v in w["V"].flat):
                names = [n for n in ("A", "Q", "K") if n in blocks]
                for n in names:
                    unit(blocks[n])
                said.append(
                    f"layer {l + 1} head {h + 1}: V = 0, so {' and '.join(names)} "
                    f"({sum(blocks[n].stop - blocks[n].start for n in names)} entries)"
                )
            elif not arch.normalized and not any(v != 0 for v in A.flat):
                unit(blocks["V"])
                said.append(f"layer {l + 1} head {h + 1}: A = 0, so V ({blocks['V'].stop - blocks['V'].start} entries)")
            elif "Q" in w and (rank := product_rank(np.asarray(w["Q"].T, dtype=object), w["K"])[0]) < w["Q"].shape[0]:
                a, d = w["Q"].shape
                found = 0
                for other, name in ((w["K"], "Q"), (w["Q"], "K")):
                    for null in _left_null(other):
                        for j in range(d):
                            v = np.zeros(P, dtype=np.int64)
                            block = np.zeros((a, d), dtype=object)
                            block[:, j] = null
                            v[blocks[name]] = residues(np.asarray(block, dtype=object), p).ravel()
                            rows.append(v)
                            found += 1
                said.append(
                    f"layer {l + 1} head {h + 1}: rank A = {rank} < {a}, so {found} directions of Q and K that keep A"
                )
    return (np.array(rows, dtype=np.int64) if rows else np.zeros((0, P), dtype=np.int64)), tuple(said)


def with_head_kernel(net: Any, local: Any) -> Any:
    """``local`` (a :class:`~ag_attention._point.geometry.LocalRank`) with the upper bound of :func:`head_kernel`
    and the symmetry tangents, where it is lower (a dead or rank-deficient head decided: issue 37)."""
    import dataclasses

    p = local.primes[0]
    S, said = head_kernel(net, p)
    theta = net.theta_mod(p)
    if not S.shape[0] or theta is None:
        return local
    T, _ = symmetry_tangents(net.architecture, theta, GFp(p))
    r = int(linalg.rank(np.remainder(np.vstack([np.asarray(T, dtype=np.int64), S]), p), p))
    upper = net.architecture.parameter_count - r
    if upper >= local.upper:
        return local
    note = (
        f"heads' kernel: rank <= {upper} = P - {r}, the GF({p}) rank of the symmetry tangents with the "
        f"directions the heads' ranks exhibit ({'; '.join(said)})"
    )
    if upper < local.lower:  # pragma: no cover - both bounds are proven
        raise ComputationError(
            f"the heads' kernel directions bound the rank by {upper}, below the proven rank {local.lower} (bug)"
        )
    return dataclasses.replace(local, upper=upper, notes=local.notes + (note,))


def softmax_head_bound(net: Any) -> Any:
    """For softmax attention (no exact local rank), the proven upper bound :func:`head_kernel` and the symmetry
    tangents give when a head is dead (``V_h = 0``) or rank-deficient, as a
    :class:`~ag_attention._point.geometry.LocalRank` with the trivial lower bound 0; None otherwise. Below a
    certified generic dimension it decides the point critical (issue 37: a dead head of a softmax checkpoint)."""
    p = PRIMES[0]
    theta = net.theta_mod(p)
    if theta is None or not head_kernel(net, p)[0].shape[0]:
        return None
    P = net.architecture.parameter_count
    rank, shares = _families(net.architecture, GFp(p), theta)  # the families softmax keeps (no rescaling)
    start = LocalRank(0, P - rank, P, "an upper bound only (the float64 rank below measures it)", (p,), 0, rank, shares)
    bound = with_head_kernel(net, start)
    return None if bound is start else bound
