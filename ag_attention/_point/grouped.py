"""Grouped-query attention's own geometry: the dimension of its model and its local rank at a checkpoint's point.

A grouped-query (GQA) layer with ``h`` query heads in ``h_kv`` groups of ``r = h / h_kv``, head size ``d_h``,
inputs of width ``d`` and outputs of width ``d'`` has the parameters (docs/math/point.md, grouped-query attention)

    theta = (Q_i  d_h x d,  W_O,i  d' x d_h  for each query head i;  K_g, W_v,g  d_h x d  for each group g),

and its function is the package's multi-head function at ``psi(theta) = (Q_i, K_g(i), V_i = W_O,i W_v,g(i))``
(``g(i) = i // r``): ``phi_GQA = phi_MHA o psi``. So its Jacobian is ``J_GQA = J_MHA(psi(theta)) D psi(theta)``,
``D psi`` sending ``dQ_i`` to ``dQ_i``, ``dK_g`` to ``dK_i`` for every ``i`` in ``g``, ``dW_v,g`` to
``dV_i = W_O,i dW_v,g`` (``i`` in ``g``) and ``dW_O,i`` to ``dV_i = dW_O,i W_v,g(i)``.

Its symmetries leave ``phi`` unchanged at every ``theta`` (so their tangents lie in ``ker J_GQA``). A group's
output is ``y_i = sum_{h in g} W_O,h M Q_h x_i`` with ``M = W_v,g (sum_j x_j x_j^T) K_g^T`` *shared by the
group*, so per group ``g``: ``GL_{d_h}`` on the keys, ``(M K_g, M^{-T} Q_i for i in g)``; ``GL_{d_h}`` on the
values, ``(N W_v,g, W_O,i N^{-1} for i in g)``; and ``GL_r`` mixing the group's query heads,
``Q'_h = sum_h' G_hh' Q_h'``, ``W'_O = W_O G^{-1}`` (its diagonal: the rescalings ``(c Q_i, W_O,i / c)``; for
multi-head attention, ``r = 1``, only they remain). Their tangents span at most ``h_kv (2 d_h^2 + r^2)``
dimensions, exactly that when every ``K_g``, ``W_v,g`` has rank ``d_h`` and a group's ``Q_h`` (or ``W_O,h``) are
independent (``dK = dW_v = 0`` forces the two ``GL_{d_h}`` parts to vanish, then ``sum G_hh' Q_h' = 0`` the
``GL_r`` part). So the GQA model has dimension at most ``P - h_kv (2 d_h^2 + r^2)``, and it is exactly that in
every case tested (``tests/point/test_grouped.py``: the rank at a random point meets it). Hence, with ``P`` the
number of parameters and ``p`` a prime dividing no denominator,

    rank_p J_GQA(theta mod p, X) <= rank d phi_GQA(theta) <= P - rank_p T(theta mod p)

(a rank mod ``p`` is at most the rational one; ``T`` the tangents), at the checkpoint's ``theta`` (its local
rank) and at a random ``theta_0`` (the generic rank, which is the dimension of the GQA model: *certified* when the
two bounds meet). For one plain layer (``t >= 2``, no mask, no skip) the local rank is exact: the reduced
coordinates determine the function (docs/math/model.md), so ``d phi_GQA`` is the exact differential of the heads'
reduced coordinates (:func:`~ag_attention._exact.onelayer.differential`, summed over the heads) composed with
``dA_i = dQ_i^T K_g + Q_i^T dK_g`` and ``dV_i = dW_O,i W_v,g + W_O,i dW_v,g``, and its rank over ``QQ`` is taken
(up to :data:`EXACT_MAX_PARAMETERS` parameters). Every layer of a network with a GQA layer is taken in this
parametrization (a layer with ``h_kv = h`` is multi-head attention with ``V_i = W_O,i W_v,i`` factored, as the
checkpoint stores it). Lightning
attention only (softmax is not polynomial), and up to :data:`MAX_PARAMETERS` parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._architecture import Architecture
from .._exact import DEFAULT_PRIME, SECOND_PRIME, GFp, differential, exact_rank, linalg
from .._models import attention_algebra
from .._network import jacobian, random_inputs
from .._positions import Rotary

__all__ = ["GroupedLayer", "GroupedGeometry", "grouped_geometry", "MAX_PARAMETERS", "parameters"]

#: larger GQA networks are not analysed in their own parametrization (the report says so)
MAX_PARAMETERS = 4000
#: the exact rank over QQ of one layer up to this many parameters (its rational entries grow); above, the bounds
EXACT_MAX_PARAMETERS = 150


@dataclass(frozen=True)
class GroupedLayer:
    """One layer in the checkpoint's own (GQA) parametrization: exact object arrays of Fractions."""

    Q: tuple[np.ndarray, ...]  # per query head, d_h x d
    W_O: tuple[np.ndarray, ...]  # per query head, d' x d_h
    K: tuple[np.ndarray, ...]  # per group, d_h x d
    W_v: tuple[np.ndarray, ...]  # per group, d_h x d
    # affine attention (docs/math/affine.md): each bias a column, () where the layer has none
    bQ: tuple[np.ndarray, ...] = ()  # per query head, d_h x 1
    bK: tuple[np.ndarray, ...] = ()  # per group, d_h x 1
    bV: tuple[np.ndarray, ...] = ()  # per group, d_h x 1 (the value projection's: head h adds W_O,h b_v,g)
    bO: np.ndarray | None = None  # d' x 1
    rotary: Rotary | None = None  # rotary positions (docs/math/rotary.md)

    @property
    def group(self) -> int:
        return len(self.Q) // len(self.K)

    @property
    def plain(self) -> bool:
        """No biases and no rotary positions: the paper's heads (the GQA model's own geometry is theirs)."""
        return not (self.bQ or self.bK or self.bV) and self.bO is None and self.rotary is None


@dataclass(frozen=True)
class GroupedGeometry:
    """The GQA model's dimension (bounds) and the local rank at the point (bounds), in its own parametrization."""

    parameters: int
    symmetries: int  # rank of the symmetry tangents at a random point
    dimension_lower: int
    dimension_upper: int
    local_lower: int
    local_upper: int
    prime: int

    @property
    def certified(self) -> bool:
        return self.dimension_lower == self.dimension_upper

    @property
    def critical(self) -> bool | None:
        """Critical in the GQA parametrization: True when the local rank is proven below the certified dimension."""
        if self.certified and self.local_upper < self.dimension_lower:
            return True
        return False if self.local_lower >= self.dimension_upper else None

    def dimension_text(self) -> str:
        return (
            f"{self.dimension_lower}"
            if self.certified
            else f"between {self.dimension_lower} and {self.dimension_upper}"
        )

    def summary(self) -> str:
        """One line: the GQA model's dimension, the local rank in it, the verdict."""
        local = (
            f"{self.local_lower}" if self.local_lower == self.local_upper else f"{self.local_lower}..{self.local_upper}"
        )
        crit = {True: "critical", False: "not critical", None: "critical not decided"}[self.critical]
        return (
            f"GQA model: dimension {self.dimension_text()}{' (certified)' if self.certified else ''}, local "
            f"rank {local}, {crit}"
        )

    def note(self) -> str:
        local = (
            f"{self.local_lower}"
            if self.local_lower == self.local_upper
            else f"between {self.local_lower} and {self.local_upper}"
        )
        crit = {True: "critical", False: "not critical", None: "not decided"}[self.critical]
        how = (
            "certified: the rank at a random point meets P minus the symmetries"
            if self.certified
            else "not certified: the bounds differ"
        )
        return (
            f"grouped-query attention in its own parametrization ({self.parameters} parameters, symmetries of "
            f"rank {self.symmetries}): the GQA model has dimension {self.dimension_text()} ({how}); the local "
            f"rank at the point is {local}: {crit} in the GQA model (docs/math/point.md, grouped-query attention)"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "parameters": self.parameters,
            "symmetries": self.symmetries,
            "dimension": [self.dimension_lower, self.dimension_upper],
            "certified": self.certified,
            "local_rank": [self.local_lower, self.local_upper],
            "critical": self.critical,
            "prime": self.prime,
        }


def parameters(layers: tuple[GroupedLayer, ...]) -> int:
    return sum(sum(m.size for m in ly.Q + ly.W_O + ly.K + ly.W_v) for ly in layers)


def _mod(layer: GroupedLayer, p: int) -> GroupedLayer | None:
    """The layer's entries mod ``p`` (int64), or None when a denominator is divisible by ``p``."""

    def reduce(M: np.ndarray) -> np.ndarray | None:
        out = np.empty(M.shape, dtype=np.int64)
        for idx, q in np.ndenumerate(M):
            q = Fraction(q)
            if q.denominator % p == 0:
                return None
            out[idx] = q.numerator % p * pow(q.denominator % p, -1, p) % p
        return out

    parts = []
    for group in (layer.Q, layer.W_O, layer.K, layer.W_v):
        mats = tuple(reduce(M) for M in group)
        if any(m is None for m in mats):
            return None
        parts.append(mats)
    return GroupedLayer(*parts)  # type: ignore[arg-type]


def _random(like: GroupedLayer, F: GFp, rng: np.random.Generator) -> GroupedLayer:
    Q, W_O, K, W_v = (tuple(F.random(rng, M.shape) for M in group) for group in (like.Q, like.W_O, like.K, like.W_v))
    return GroupedLayer(Q, W_O, K, W_v)


def _psi(arch: Architecture, layers: tuple[GroupedLayer, ...], F: GFp) -> np.ndarray:
    """The multi-head parameters ``(Q_i, K_g(i), W_O,i W_v,g(i))`` mod p, in the order of ``arch.blocks``."""
    theta = np.zeros(arch.parameter_count, dtype=np.int64)
    for l, ly in enumerate(layers):
        for i in range(len(ly.Q)):
            g = i // ly.group
            theta[arch.block("Q", l + 1, i).slice] = ly.Q[i].ravel()
            theta[arch.block("K", l + 1, i).slice] = ly.K[g].ravel()
            theta[arch.block("V", l + 1, i).slice] = F.einsum("ca,ab->cb", ly.W_O[i], ly.W_v[g]).ravel()
    return theta


def _compose(arch: Architecture, J: np.ndarray, layers: tuple[GroupedLayer, ...], F: GFp) -> np.ndarray:
    """``J_MHA D psi``: the columns of the GQA parameters (per layer: Q_i, W_O,i, then K_g, W_v,g)."""
    cols = []
    for l, ly in enumerate(layers):
        r = J.shape[0]

        def block(name: str, i: int, l: int = l, r: int = r) -> np.ndarray:  # bound: called in this iteration
            b = arch.block(name, l + 1, i)
            return J[:, b.slice].reshape(r, b.rows, b.cols)

        for i in range(len(ly.Q)):
            cols.append(block("Q", i).reshape(r, -1))
        for i in range(len(ly.Q)):  # dV_i = dW_O,i W_v,g: column (c, a) is sum_b J_V[c, b] W_v[a, b]
            cols.append(F.einsum("rcb,ab->rca", block("V", i), ly.W_v[i // ly.group]).reshape(r, -1))
        for g in range(len(ly.K)):
            heads = range(g * ly.group, (g + 1) * ly.group)
            total = block("K", heads[0])
            for i in heads[1:]:
                total = F.add(total, block("K", i))
            cols.append(total.reshape(r, -1))
        for g in range(len(ly.K)):  # dV_i = W_O,i dW_v,g: column (a, b) is sum_c J_V[c, b] W_O,i[c, a]
            first = g * ly.group
            values = F.einsum("rcb,ca->rab", block("V", first), ly.W_O[first])
            for i in range(first + 1, (g + 1) * ly.group):
                values = F.add(values, F.einsum("rcb,ca->rab", block("V", i), ly.W_O[i]))
            cols.append(values.reshape(r, -1))
    return np.concatenate(cols, axis=1)


def _starts(layers: tuple[GroupedLayer, ...]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per layer, the first column of each ``Q_i``, ``W_O,i``, ``K_g``, ``W_v,g`` in :func:`_compose`'s order."""
    out = []
    offset = 0
    for ly in layers:
        h, kv = len(ly.Q), len(ly.K)
        sizes = [M.size for M in ly.Q] + [M.size for M in ly.W_O] + [M.size for M in ly.K] + [M.size for M in ly.W_v]
        starts = np.concatenate([[0], np.cumsum(sizes)])[:-1] + offset
        out.append((starts[:h], starts[h : 2 * h], starts[2 * h : 2 * h + kv], starts[2 * h + kv :]))
        offset += sum(sizes)
    return out


def _tangents(arch: Architecture, layers: tuple[GroupedLayer, ...], F: GFp) -> np.ndarray:
    """The symmetry tangents (rows) at the point, in the column order of :func:`_compose`: per group the mixing
    of its query heads, the keys' group (with rotary positions the rotations' commutant,
    :func:`~ag_attention._models.attention_algebra`; docs/math/rotary.md, rotary-identifiable) and the values'
    ``GL_{d_h}``; between layers ``l`` and ``l + 1`` (no skip connections) ``GL_{d_l}``: ``dW_O,i = E W_O,i`` in layer
    ``l``, ``d(Q_i, K_g, W_v,g) = -(Q_i, K_g, W_v,g) E`` in layer ``l + 1``."""
    P = parameters(layers)
    rows = []
    starts = _starts(layers)
    for ly, (q0, o0, k0, v0) in zip(layers, starts):
        kv, r = len(ly.K), ly.group
        d_h = ly.K[0].shape[0]
        for g in range(kv):
            for a in range(g * r, (g + 1) * r):  # GL_r mixing the group's heads: dQ_a = Q_b, dW_O,b = -W_O,a
                for b in range(g * r, (g + 1) * r):
                    row = np.zeros(P, dtype=np.int64)
                    row[q0[a] : q0[a] + ly.Q[a].size] = ly.Q[b].ravel()
                    row[o0[b] : o0[b] + ly.W_O[b].size] = F.sub(row[o0[b] : o0[b] + ly.W_O[b].size], ly.W_O[a].ravel())
                    rows.append(row)
            for entries in attention_algebra(arch, d_h):  # the keys' group: (E K_g, -E^T Q_i)
                E = np.zeros((d_h, d_h), dtype=np.int64)
                for a, b, e in entries:
                    E[a, b] = e % F.p
                key = np.zeros(P, dtype=np.int64)
                key[k0[g] : k0[g] + ly.K[g].size] = F.einsum("ab,bc->ac", E, ly.K[g]).ravel()
                for i in range(g * r, (g + 1) * r):
                    key[q0[i] : q0[i] + ly.Q[i].size] = F.neg(F.einsum("ba,bc->ac", E, ly.Q[i])).ravel()
                rows.append(key)
            for a in range(d_h):  # the values' GL_{d_h}: (E W_v,g, -W_O,i E)
                for b in range(d_h):
                    E = np.zeros((d_h, d_h), dtype=np.int64)
                    E[a, b] = 1
                    value = np.zeros(P, dtype=np.int64)
                    value[v0[g] : v0[g] + ly.W_v[g].size] = F.einsum("ab,bc->ac", E, ly.W_v[g]).ravel()
                    for i in range(g * r, (g + 1) * r):
                        value[o0[i] : o0[i] + ly.W_O[i].size] = F.neg(F.einsum("ca,ab->cb", ly.W_O[i], E)).ravel()
                    rows.append(value)
    for l in range(len(layers) - 1 if not arch.skip else 0):
        here, nxt = layers[l], layers[l + 1]
        (_, o0, _, _), (q1, _, k1, v1) = starts[l], starts[l + 1]
        d = here.W_O[0].shape[0]
        for a in range(d):
            for b in range(d):
                E = np.zeros((d, d), dtype=np.int64)
                E[a, b] = 1
                row = np.zeros(P, dtype=np.int64)
                for i, W in enumerate(here.W_O):
                    row[o0[i] : o0[i] + W.size] = F.einsum("ab,bc->ac", E, W).ravel()
                for group, first in ((nxt.Q, q1), (nxt.K, k1), (nxt.W_v, v1)):
                    for i, M in enumerate(group):
                        row[first[i] : first[i] + M.size] = F.neg(F.einsum("ca,ab->cb", M, E)).ravel()
                rows.append(row)
    return np.array(rows, dtype=np.int64)


def _ranks(arch: Architecture, layers: tuple[GroupedLayer, ...], F: GFp, rng: np.random.Generator) -> tuple[int, int]:
    """``(rank_p J_GQA, rank_p T)`` at ``layers`` (mod p) on enough random inputs."""
    P = parameters(layers)
    samples = math.ceil((P + 8) / (arch.tokens * arch.widths[-1])) + 1
    X = random_inputs(arch, F, rng, samples)
    J = _compose(arch, jacobian(arch, F, _psi(arch, layers, F), X), layers, F)
    return linalg.rank(J, F.p), linalg.rank(_tangents(arch, layers, F), F.p)


def _exact_local_rank(arch: Architecture, layers: tuple[GroupedLayer, ...]) -> int | None:
    """The local rank over QQ for one plain layer (module docstring); None otherwise."""
    if not (
        arch.depth == 1
        and not arch.skip
        and not arch.causal
        and arch.tokens >= 2
        and arch.is_linear_attention
        and parameters(layers) <= EXACT_MAX_PARAMETERS
    ):
        return None

    ly = layers[0]
    d = ly.Q[0].shape[1]
    blocks = []  # per head: its reduced-coordinate differential's A columns (d x d) and V columns (d' x d)
    for i in range(len(ly.Q)):
        g = i // ly.group
        A, V = ly.Q[i].T.dot(ly.K[g]), ly.W_O[i].dot(ly.W_v[g])
        D = np.asarray(differential(A.tolist(), V.tolist()), dtype=object)
        blocks.append((D[:, : d * d].reshape(-1, d, d), D[:, d * d :].reshape(D.shape[0], V.shape[0], d)))
    cols: list[np.ndarray] = []
    for i, (DA, _) in enumerate(blocks):  # dQ_i[c, a]: dA[a, b] += K[c, b]
        cols += [DA[:, a, :].dot(ly.K[i // ly.group][c]) for c in range(ly.Q[i].shape[0]) for a in range(d)]
    for i, (_, DV) in enumerate(blocks):  # dW_O,i[c, a]: dV[c, b] += W_v[a, b]
        cols += [
            DV[:, c, :].dot(ly.W_v[i // ly.group][a]) for c in range(DV.shape[1]) for a in range(ly.W_O[i].shape[1])
        ]
    for g in range(len(ly.K)):  # dK_g[c, b]: dA_i[a, b] += Q_i[c, a] for i in g
        heads = range(g * ly.group, (g + 1) * ly.group)
        cols += [
            sum(blocks[i][0][:, :, b].dot(ly.Q[i][c]) for i in heads) for c in range(ly.K[g].shape[0]) for b in range(d)
        ]
    for g in range(len(ly.K)):  # dW_v,g[a, b]: dV_i[c, b] += W_O,i[c, a] for i in g
        heads = range(g * ly.group, (g + 1) * ly.group)
        cols += [
            sum(blocks[i][1][:, :, b].dot(ly.W_O[i][:, a]) for i in heads)
            for a in range(ly.W_v[g].shape[0])
            for b in range(d)
        ]
    return int(exact_rank(np.column_stack(cols)))


def grouped_geometry(arch: Architecture, layers: tuple[GroupedLayer, ...], seed: int = 0) -> GroupedGeometry | None:
    """The GQA model's dimension and the local rank at ``layers`` (module docstring), rotary positions included
    (the keys' group the rotations' commutant); None for softmax attention, biases, or more than
    :data:`MAX_PARAMETERS` parameters."""
    P = parameters(layers)
    biased = arch.bias or any(ly.bQ or ly.bK or ly.bV or ly.bO is not None for ly in layers)
    if arch.normalized or P > MAX_PARAMETERS or biased:
        return None
    for p in (DEFAULT_PRIME, SECOND_PRIME):
        point = tuple(_mod(ly, p) for ly in layers)
        if all(ly is not None for ly in point):
            break
    else:  # pragma: no cover - a denominator divisible by both primes
        return None
    F = GFp(p)
    rng = np.random.default_rng(seed)
    generic, sym = _ranks(arch, tuple(_random(ly, F, rng) for ly in layers), F, rng)
    local, sym_here = _ranks(arch, point, F, rng)  # type: ignore[arg-type]
    upper = P - sym_here
    exact = _exact_local_rank(arch, layers)
    if exact is not None:  # the exact rank over QQ: both bounds
        local = upper = exact
    return GroupedGeometry(P, sym, generic, P - sym, local, upper, p)
