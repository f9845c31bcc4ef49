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

__all__ = ["head_kernel", "with_head_kernel", "softmax_head_bound", "symmetry_bound_at"]


def _left_null(M: np.ndarray) -> list[list[Fraction]]:
    """A basis of ``{n : n^T M = 0}`` over QQ (``M`` exact, ``a x d``): FLINT's integer nullspace of ``M^T``."""
    rows = integer_rows(np.asarray(M.T, dtype=object))
    if not rows or not rows[0]:
        return []
    return [[Fraction(v) for v in vector] for vector in linalg.integer_nullspace(rows)]


def _augmented(w: dict[str, np.ndarray], name: str) -> np.ndarray:
    """``[M | b]``: a head's ``Q``, ``K`` or ``V`` with its bias as one more column (zero without one): what the
    scores and values see (docs/math/affine.md, affine-model)."""
    M = w[name]
    b = w.get("b" + name)
    column = b if b is not None else np.array([[Fraction(0)] for _ in range(M.shape[0])], dtype=object)
    return np.hstack([M, column])


def _zero(M: np.ndarray) -> bool:
    return not any(v != 0 for v in M.flat)


def head_kernel(net: Any, p: int) -> tuple[np.ndarray, tuple[str, ...]]:
    """Kernel vectors of ``d phi_theta`` that the heads' own ranks exhibit, exact rationals reduced mod ``p`` (rows
    of a ``k x P`` int64 array), and what each head contributes, in words:

    * dead values, ``V_h = 0`` (with biases: ``[V_h | c_h] = 0`` for lightning; under softmax ``c_h`` passes
      through, so ``V_h = 0`` suffices): every entry of ``Q_h``, ``K_h`` and their biases (or ``A_h``): ``phi`` is
      linear in the values, so moving the head's scores changes nothing to first order;
    * dead scores (lightning): ``A_h = 0`` (with biases ``Q~^T K~ = 0``; with rotary positions ``Q~ = 0`` or
      ``K~ = 0``, which kill every offset's form): every entry of ``V_h`` and ``c_h``;
    * ``rank A_h < a`` (no rotary positions; with biases ``rank Q~^T K~ < a``): ``(dQ~, dK~) = (n e_j^T, 0)`` for
      ``n^T K~ = 0`` and ``(0, n e_j^T)`` for ``n^T Q~ = 0``, ``j`` over the columns that are parameters
      (``Q~^T K~`` does not move), beyond ``GL_a`` when a factor has rank below ``a``.

    Each is a kernel vector at every input (``phi`` depends on a head only through its scores and values), so with
    the symmetry tangents their GF(p) rank ``r`` proves ``rank d phi_theta <= P - r`` (docs/math/point.md,
    point-heads). With rotary positions a rank-deficient ``Q~^T K~`` says nothing (the forms ``Q~^T R_p K~``
    differ): no direction is claimed for it."""
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

    def count(names: list[str], blocks: dict[str, slice]) -> int:
        return sum(blocks[n].stop - blocks[n].start for n in names)

    for l, layer in enumerate(net.weights):
        for h, w in enumerate(layer):
            blocks = {n: where[(l + 1, h, n)] for n in w if n != "bO"}
            here = f"layer {l + 1} head {h + 1}"
            values_dead = _zero(w["V"]) if arch.normalized else _zero(_augmented(w, "V"))
            if "A" in w:
                scores_dead = _zero(w["A"])
            elif arch.positions is not None:
                scores_dead = _zero(_augmented(w, "Q")) or _zero(_augmented(w, "K"))
            else:
                scores_dead = _zero(_augmented(w, "Q").T.dot(_augmented(w, "K")))
            if values_dead:
                names = [n for n in ("A", "Q", "K", "bQ", "bK") if n in blocks]
                for n in names:
                    unit(blocks[n])
                what = "V = 0" if "bV" not in w or arch.normalized else "V = 0 and its bias c = 0"
                said.append(f"{here}: {what}, so {' and '.join(names)} ({count(names, blocks)} entries)")
            elif not arch.normalized and scores_dead:
                names = [n for n in ("V", "bV") if n in blocks]
                for n in names:
                    unit(blocks[n])
                what = "A = 0" if arch.is_linear_attention else "its scores are 0 (Q~^T K~ = 0 or a factor 0)"
                said.append(f"{here}: {what}, so {' and '.join(names)} ({count(names, blocks)} entries)")
            elif "Q" in w and arch.positions is None:
                Qt, Kt = _augmented(w, "Q"), _augmented(w, "K")
                rank = product_rank(np.asarray(Qt.T, dtype=object), Kt)[0]
                a, d = w["Q"].shape
                if rank >= a:
                    continue
                found = 0
                for other, name in ((Kt, "Q"), (Qt, "K")):
                    for null in _left_null(other):
                        for j in range(d + ("b" + name in blocks)):
                            v = np.zeros(P, dtype=np.int64)
                            column = residues(np.asarray([[x] for x in null], dtype=object), p).ravel()
                            if j < d:
                                block = np.zeros((a, d), dtype=np.int64)
                                block[:, j] = column
                                v[blocks[name]] = block.ravel()
                            else:
                                v[blocks["b" + name]] = column
                            rows.append(v)
                            found += 1
                said.append(f"{here}: rank A = {rank} < {a}, so {found} directions of Q and K that keep A")
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


def symmetry_bound_at(net: Any) -> int | None:
    """``P - rank T(theta)`` over GF(p) at the network's own weights (its symmetry tangents, the families softmax
    keeps): a proven upper bound on its local rank, and on ``dim M`` (the tangents' rank at ``theta`` is at most
    their generic rank). None when a denominator is divisible by the prime."""
    p = PRIMES[0]
    theta = net.theta_mod(p)
    if theta is None:
        return None
    rank, _ = _families(net.architecture, GFp(p), theta)
    return int(net.architecture.parameter_count - rank)


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
