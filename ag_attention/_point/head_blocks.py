"""A head's blocks at the point: the exact rank and the spectrum of a product of thin factors
(:class:`FactorAtPoint`), the blocks biases and rotary positions add, the verdict a head's ranks prove, and heads
with proportional functions; what :mod:`.heads` tabulates (docs/math/point.md, point-heads; docs/math/affine.md,
docs/math/rotary.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numeric import numerical_rank
from .factors import GAP_RTOL, near_equal_blocks, product_rank, product_singular_values, residues
from .grouped import GroupedLayer

__all__ = ["FactorAtPoint", "Extra", "TWIN_PROBES", "factor", "extra", "verdict", "variant_verdict", "twins"]


def _tails(s: np.ndarray) -> tuple[float, ...]:
    """The relative distance to ``rank <= j`` for ``j = 0 .. len(s) - 1`` (Eckart-Young)."""
    sq = np.asarray(s, dtype=np.float64) ** 2
    total = float(sq.sum())
    if total <= 0:
        return tuple(0.0 for _ in sq)
    tail = np.cumsum(sq[::-1])[::-1]
    return tuple(float(math.sqrt(x / total)) for x in tail)


@dataclass(frozen=True)
class FactorAtPoint:
    """``A_h`` or ``V_h`` of one head: exact rank, spectrum, blocks, distances to the rank strata."""

    rank: int  # over QQ, exact
    bound: int  # the largest rank the factors allow (d_h, or the matrix's sides)
    method: str  # how the rank was proven
    singular_values: tuple[float, ...]
    error: float  # float64 error bound of the singular values
    numerical_rank: int  # above rtol times the largest
    distances: tuple[float, ...]  # relative distance to rank <= j, j = 0 .. bound - 1
    blocks: tuple[tuple[int, int], ...]

    @property
    def zero(self) -> bool:
        return self.rank == 0

    @property
    def norm(self) -> float:
        return float(math.sqrt(sum(x * x for x in self.singular_values)))

    @property
    def to_lower(self) -> float | None:
        """The relative distance to ``rank <= rank - 1`` (how far the head is from losing one rank)."""
        return self.distances[self.rank - 1] if 0 < self.rank <= len(self.distances) else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "bound": self.bound,
            "method": self.method,
            "singular_values": list(self.singular_values),
            "error": self.error,
            "numerical_rank": self.numerical_rank,
            "distance_to_rank": list(self.distances),
            "distance_to_lower_rank": self.to_lower,
            "near_equal_blocks": [list(b) for b in self.blocks],
        }


def factor(L: np.ndarray, R: np.ndarray, rtol: float, p: int, gap_rtol: float = GAP_RTOL) -> FactorAtPoint:
    rank, bound, method = product_rank(L, R, p)
    s, err = product_singular_values(L, R)
    s = s[:bound]
    return FactorAtPoint(
        rank,
        bound,
        method,
        tuple(float(x) for x in s),
        err,
        numerical_rank(s, rtol),
        _tails(s),
        near_equal_blocks(s, rtol, gap_rtol, err),
    )


@dataclass(frozen=True)
class Extra:
    """What biases and rotary positions add to a head's table row."""

    affine_A: FactorAtPoint | None = None
    affine_V: FactorAtPoint | None = None
    pairs: tuple[int, int] | None = None
    still_rank: int | None = None


def variant_verdict(A: FactorAtPoint, V: FactorAtPoint, x: Extra, size: int, normalized: bool) -> tuple[bool, str, str]:
    """The verdict of an affine or rotary head (docs/math/affine.md, docs/math/rotary.md): ``(critical, reason,
    dead)``. Its values are dead when ``[V_h | c_h] = 0`` (softmax: ``V_h = 0``, ``c_h`` passes through); its scores
    when ``Q~^T K~ = 0`` (rotary: every frequency pair and the block that does not turn are 0); rank deficiency of
    ``Q~^T K~`` without rotary positions as for the paper's heads; with rotary positions only dead heads are
    decided."""
    values = V if normalized or x.affine_V is None else x.affine_V
    if values.zero:
        what = "V_h = 0" if normalized or x.affine_V is None else "V_h = 0 and c_h = 0"
        return True, f"dead ({what}): its queries, keys and their biases are kernel directions", what
    if x.pairs is not None:
        live, total = x.pairs
        if not normalized and live == 0 and not x.still_rank:
            return (
                True,
                "dead (every frequency pair and the still block are 0): V_h and c_h are kernel directions",
                ("scores 0"),
            )
        return (
            False,
            (
                f"{live} of {total} frequency pairs live"
                + ("" if x.still_rank is None else f", still block rank {x.still_rank}")
                + ": with rotary positions only dead heads are decided by their blocks"
            ),
            "",
        )
    scores = x.affine_A if x.affine_A is not None else A
    if scores.zero and not normalized:
        return True, "dead (Q~^T K~ = 0): V_h and c_h are kernel directions", "scores 0"
    if scores.rank < size:
        return (
            True,
            (
                f"rank Q~^T K~ = {scores.rank} < d_h = {size}: [W_q | b_q] or [W_k | b_k] has rank < {size}: kernel "
                f"directions beyond GL_{size}"
            ),
            "",
        )
    return False, "its ranks do not drop: not decided by them (the layer's local rank decides)", ""


def verdict(
    A: FactorAtPoint, V: FactorAtPoint, size: int, width: int, normalized: bool, factored_values: bool = False
) -> tuple[bool, str]:
    """Critical of the head's own parametrization, from its exact ranks (module docstring), with the kernel
    directions beyond the symmetries; or why its ranks do not decide it."""
    if V.zero:
        return True, (
            f"dead (V_h = 0): W_q,h and W_k,h ({2 * size * width:,} entries) are kernel directions, "
            f"beyond the {size}^2{'' if normalized else ' + 1'} of the symmetries"
        )
    if A.zero and not normalized:
        return True, "dead (A_h = 0): the entries of V_h (W_O,h and W_v,h) are kernel directions"
    if A.rank < size <= width:
        return True, (
            f"rank A_h = {A.rank} < d_h = {size}: W_q,h or W_k,h has rank < {size}, and (dQ, dK) -> "
            f"dQ^T K + Q^T dK loses rank: kernel directions beyond GL_{size}"
        )
    if factored_values and V.rank < size == V.bound:
        return True, (
            f"rank V_h = {V.rank} < d_h = {size}: W_O,h or W_v,h has rank < {size}, and (dW_O, dW_v) -> "
            f"dW_O W_v + W_O dW_v loses rank: kernel directions beyond GL_{size} (the checkpoint's factors)"
        )
    return False, "its ranks do not drop: not decided by them (the layer's local rank decides)"


def _with_bias(M: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """``[M | b]`` (the bias a column; zero without one)."""
    column = np.zeros((M.shape[0], 1), dtype=M.dtype) if b is None else np.asarray(b, dtype=M.dtype)
    return np.hstack([M, column])


def extra(layer: GroupedLayer, h: int, Q: np.ndarray, K: np.ndarray, W_O: np.ndarray, W_v: np.ndarray,
           rtol: float, p: int) -> Extra:  # fmt: skip
    """The affine blocks (with biases) and the frequency pairs (with rotary positions) of head ``h``."""
    g = h // layer.group
    out = Extra()
    biased = bool(layer.bQ or layer.bK or layer.bV)
    Qt = _with_bias(Q, layer.bQ[h] if layer.bQ else None) if biased else Q
    Kt = _with_bias(K, layer.bK[g] if layer.bK else None) if biased else K
    if biased:
        out = Extra(factor(Qt.T, Kt, rtol, p), factor(W_O, _with_bias(W_v, layer.bV[g] if layer.bV else None), rtol, p))
    if layer.rotary is not None:
        a = Q.shape[0]
        live = sum(
            bool(np.any(Qt[[c1, c2]] != 0)) and bool(np.any(Kt[[c1, c2]] != 0)) for c1, c2, _ in layer.rotary.pairs(a)
        )
        D = layer.rotary.rotated(a)
        still = product_rank(np.asarray(Qt[D:].T), np.asarray(Kt[D:]), p)[0] if D < a else None
        out = Extra(out.affine_A, out.affine_V, (live, D // 2), still)
    return out


#: random probes of the heads' functions compared by :func:`twins`
TWIN_PROBES = 4


def twins(layers: Sequence[GroupedLayer], p: int) -> tuple[tuple[int, int, int, str], ...]:
    """Pairs of heads of one layer with proportional functions, ``(layer, head, head, "identical" or
    "proportional")`` (1-based): the head's function is ``sum_j (x~_i^T A~ x~_j) V~ x~_j``, determined by the
    quadratic forms ``(A~ z)(V~ z)^T``, whose values ``(alpha^T A~ z)(beta^T V~ z)`` at :data:`TWIN_PROBES` random
    points mod ``p`` (exact residues of the stored values) are compared: proportional at every probe means
    proportional functions except with probability at most ``4 / p`` per pair (Schwartz-Zippel; probabilistic).
    Heads with rotary positions are compared at offset 0 only, so they are left out."""
    out: list[tuple[int, int, int, str]] = []
    rng = np.random.default_rng([p, 0x7457])
    for l, ly in enumerate(layers):
        if ly.rotary is not None or len(ly.Q) < 2:
            continue
        d = ly.Q[0].shape[1] + (1 if (ly.bQ or ly.bK or ly.bV) else 0)
        e = ly.W_O[0].shape[0]
        probes = [
            tuple(rng.integers(0, p, n).astype(object) for n in (d, e, d)) for _ in range(TWIN_PROBES)
        ]  # (alpha, beta, z): the forms' value (alpha^T A~ z)(beta^T V~ z)
        biased = d > ly.Q[0].shape[1]
        values = []
        for h in range(len(ly.Q)):
            g = h // ly.group
            Qt = _with_bias(ly.Q[h], ly.bQ[h] if ly.bQ else None) if biased else ly.Q[h]
            Kt = _with_bias(ly.K[g], ly.bK[g] if ly.bK else None) if biased else ly.K[g]
            Wv = _with_bias(ly.W_v[g], ly.bV[g] if ly.bV else None) if biased else ly.W_v[g]
            Qp, Kp, Op, Vp = (residues(np.asarray(M), p).astype(object) for M in (Qt, Kt, ly.W_O[h], Wv))
            row = []
            for alpha, beta, z in probes:
                score = (Qp.dot(alpha) % p).dot(Kp.dot(z) % p) % p  # (Q~ alpha) . (K~ z) = alpha^T A~ z
                value = beta.dot(Op.dot(Vp.dot(z) % p) % p) % p  # beta^T W_O W~_v z
                row.append(int(score) * int(value) % p)
            values.append(row)
        for h in range(len(values)):
            for k in range(h + 1, len(values)):
                a, b = values[h], values[k]
                if not any(a) and not any(b):
                    continue  # two dead heads: said as dead
                if all(x == y for x, y in zip(a, b)):
                    out.append((l + 1, h + 1, k + 1, "identical"))
                elif all((x * b[0] - y * a[0]) % p == 0 for x, y in zip(a, b)) and a[0] and b[0]:
                    out.append((l + 1, h + 1, k + 1, "proportional"))
    return tuple(out)
