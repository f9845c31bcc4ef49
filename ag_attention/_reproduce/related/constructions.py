"""Their families of invariants (Alexandr, Duan, Montúfar, arXiv:2604.15632), each built from its definition:
the constructions behind :data:`.families.FAMILIES` (no code of theirs is used here).

Each builder takes the size and ``y``, a function from their coordinates (:data:`.coordinates.Label`) to
polynomials in any ring (their coordinates, our reduced ones, or the weights of their parametrization), and returns
the members as they are constructed (duplicates and zeros kept).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..._errors import InvalidArgumentError
from ..._exact import linalg
from .coordinates import Poly, Value, _cross, _omega, _orbit3, _pairs, _single, _triples, their_coordinates

__all__ = [
    "DEFAULT_LINES",
    "lines_for",
    "linear_relations",
    "low_rank_minors",
    "cross_column_cubics",
    "syzygy_kernel",
    "context_syzygies",
    "veronese",
    "resultant_quartics",
    "t1_low_rank",
    "lie_matrix",
    "lie_minors",
    "lie_certificate",
]


# ---------------------------------------------------------------------------------------------- determinants
def _zero(x: Poly) -> Poly:
    return x - x


def _det(M: Sequence[Sequence[Poly]]) -> Poly:
    """The determinant by expansion along the rows with memoized column subsets (exact in any ring)."""
    n = len(M)
    prev: dict[tuple[int, ...], Poly] = {(): None}
    for r in range(n):
        cur = {}
        for cols in itertools.combinations(range(n), r + 1):
            total = None
            for idx, c in enumerate(cols):
                rest = cols[:idx] + cols[idx + 1 :]
                term = M[r][c] if prev[rest] is None else M[r][c] * prev[rest]
                term = term if (r + idx) % 2 == 0 else -term
                total = term if total is None else total + term
            cur[cols] = total
        prev = cur
    return prev[tuple(range(n))]


def _minors(M: Sequence[Sequence[Poly]], k: int) -> list[Poly]:
    """All ``k x k`` minors (row subsets within column subsets, lexicographic), by expansion along the columns
    with memoized row subsets: each column subset costs ``sum_i C(m, i) i`` products."""
    m, n = len(M), len(M[0]) if M else 0
    if k > min(m, n):
        return []
    out = []
    for cols in itertools.combinations(range(n), k):
        prev: dict[tuple[int, ...], Poly] = {(): None}
        for i, c in enumerate(cols):
            cur = {}
            for rows in itertools.combinations(range(m), i + 1):
                total = None
                for idx, r in enumerate(rows):
                    rest = rows[:idx] + rows[idx + 1 :]
                    term = M[r][c] if prev[rest] is None else M[r][c] * prev[rest]
                    term = term if (i + idx) % 2 == 0 else -term
                    total = term if total is None else total + term
                cur[rows] = total
            prev = cur
        out += [prev[rows] for rows in itertools.combinations(range(m), k)]
    return out


# ---------------------------------------------------------------------------------------------- the families
#: lines of their driver for d = 3 (``generateInvariants(t>1).m2``): pairs of points spanning the lines to which the
#: slice quadrics are restricted (data, quoted with the repository)
DEFAULT_LINES: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = (
    ((2, 2, 1), (2, 2, -1)),
    ((2, 2, 1), (2, 1, 2)),
    ((2, 2, 1), (2, 1, 1)),
    ((2, 2, 1), (2, 1, 0)),
    ((2, 2, 1), (2, 1, -1)),
    ((2, 2, -1), (2, 1, 2)),
    ((2, 2, -1), (2, 1, 1)),
    ((2, 2, -1), (2, 1, 0)),
    ((2, 2, -1), (2, 1, -1)),
    ((2, 1, 2), (2, 1, 1)),
    ((2, 1, 2), (2, 0, 1)),
    ((2, 1, 2), (2, 0, -1)),
)


def lines_for(d: int, count: int = 12) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """The lines of the resultant family: their list for ``d = 3``; for other ``d``, ``count`` lines of the same
    kind (ours): the points ``(2, *rest)``, ``rest`` in ``{2, 1, 0, -1}^(d-1)`` in lexicographic order, the ``i``-th
    paired with the ``i``-th from the end, then further pairs in order (two distinct such points span a line)."""
    if d == 3:
        return DEFAULT_LINES
    points = [(2, *rest) for rest in itertools.product((2, 1, 0, -1), repeat=d - 1)]
    pairs = [(points[i], points[-1 - i]) for i in range(len(points) // 2)]
    pairs += [pq for pq in itertools.combinations(points, 2) if pq not in pairs]
    return tuple(pairs[:count])


def _contexts(t: int, j: int) -> list[int]:
    return [n for n in range(1, t + 1) if n != j]


def linear_relations(d: int, t: int, j: int, y: Value) -> list[Poly]:
    """Copies: the same coefficient seen through two context tokens (``t >= 3``); symmetrization: the pure
    output-token coefficient is the sum of the cross coefficients it is made of (weighted by orbit sizes)."""
    out = []
    for n, n2 in itertools.combinations(_contexts(t, j), 2):
        out += [y(_cross(u, v, l, n, j)) - y(_cross(u, v, l, n2, j)) for u, v in _pairs(d) for l in range(1, d + 1)]
    for n in _contexts(t, j):
        for K in _triples(d):
            rest = [y(_cross(*_without(K, b), b, n, j)) * _omega(*_without(K, b)) for b in sorted(set(K))]
            out.append(y(_single(K, j)) * _orbit3(K) - sum(rest[1:], rest[0]))
    return out


def _without(K: Sequence[int], b: int) -> tuple[int, int]:
    rest = list(K)
    rest.remove(b)
    return rest[0], rest[1]


def _flattening(d: int, n: int, j: int, y: Value) -> list[list[Poly]]:
    """``F_n``: rows the pairs ``u <= v``, columns ``l``; entry ``y[(u,n),(v,n),(l,j)]`` (column ``l`` is the
    symmetric matrix of the slice quadric ``q_l``)."""
    return [[y(_cross(u, v, l, n, j)) for l in range(1, d + 1)] for u, v in _pairs(d)]


def low_rank_minors(d: int, t: int, j: int, a: int, y: Value) -> list[Poly]:
    """The ``(a+1)``-minors of ``F_n`` for each context ``n`` (``F_n = Phi(V) A`` has rank ``<= rank A``)."""
    if a >= d:
        return []
    return [m for n in _contexts(t, j) for m in _minors(_flattening(d, n, j, y), a + 1)]


def cross_column_cubics(d: int, t: int, j: int, y: Value) -> list[Poly]:
    """The coefficients, in ``c``, of the 3x3 minors of the pencil ``sum_k c_k M_k`` of the slice matrices
    ``M_k = (y[(r,n),(s,n),(k,j)])_{r,s}`` (each ``sum_k c_k M_k`` is the symmetric matrix of
    ``((sum_k c_k A_k) . z)(V . z)``, of rank <= 2): for rows ``R``, columns ``S`` and a multiset ``m`` of three
    slices, the sum over the orderings ``(k_1, k_2, k_3)`` of ``m`` of the determinant whose row ``i`` is row
    ``R_i`` of ``M_{k_i}``."""
    if d < 3:
        return []
    out = []
    for n in _contexts(t, j):
        M = {k: [[y(_cross(r, s, k, n, j)) for s in range(1, d + 1)] for r in range(1, d + 1)] for k in range(1, d + 1)}
        for R in itertools.combinations(range(d), 3):
            for S in itertools.combinations(range(d), 3):
                for m in itertools.combinations_with_replacement(range(1, d + 1), 3):
                    dets = [
                        _det([[M[k][R[i]][s] for s in S] for i, k in enumerate(order)])
                        for order in sorted(set(itertools.permutations(m)))
                    ]
                    out.append(sum(dets[1:], dets[0]))
    return out


@lru_cache(maxsize=8)
def syzygy_kernel(d: int) -> tuple[tuple[tuple[tuple[int, ...], ...], tuple[tuple[Fraction, ...], ...]], ...]:
    """The linear relations among the maximal minors of ``Phi(v)`` (``D x d``, ``D = d(d+1)/2``), the matrix with
    ``F_n = Phi(V) A^T`` entrywise in the slice matrices: ``Phi[(a,a), a] = v_a``, ``Phi[(a,b), a] = v_b / 2``,
    ``Phi[(a,b), b] = v_a / 2``.  By Cauchy-Binet every maximal minor of ``F_n`` is ``det A`` times the same
    minor of ``Phi(V)``, so each relation gives one of ``F_n``'s minors.

    Per group of row subsets with the same weight in ``z`` (their minors share no monomial of ``v`` with another
    group's): ``(row subsets, kernel basis)``, the basis from the reduced row echelon form over QQ.  A minor of
    ``Phi`` that is zero gives the unit vector: that minor of ``F_n`` itself.
    """
    names = [f"v{c}" for c in range(1, d + 1)]
    R = linalg.rational_polynomial_ring(names)
    v = R.gens()
    half = linalg.rational(Fraction(1, 2))
    zero = R.constant(0)
    Phi = []
    for a_, b_ in _pairs(d):
        row = [zero] * d
        if a_ == b_:
            row[a_ - 1] = v[a_ - 1]
        else:
            row[a_ - 1], row[b_ - 1] = v[b_ - 1] * half, v[a_ - 1] * half
        Phi.append(row)
    pairs = _pairs(d)
    subsets = list(itertools.combinations(range(len(pairs)), d))
    minors = dict(zip(subsets, _minors(Phi, d)))
    groups: dict[tuple[int, ...], list[tuple[int, ...]]] = defaultdict(list)
    for rows in subsets:
        weight = [0] * d
        for r in rows:
            for f in pairs[r]:
                weight[f - 1] += 1
        groups[tuple(weight)].append(rows)
    out = []
    for _, members in sorted(groups.items()):
        coefficients = {rows: minors[rows].to_dict() for rows in members}
        monos = sorted({m for rows in members for m in coefficients[rows]})  # none: every minor is 0
        C = [[_fraction(coefficients[rows].get(mono, 0)) for rows in members] for mono in monos]
        basis = _nullspace(C, len(members))
        if basis:
            out.append((tuple(members), tuple(tuple(b) for b in basis)))
    return tuple(out)


def _fraction(q: Any) -> Fraction:
    """An exact rational of :mod:`ag_attention._exact.linalg` (or an int) as a ``Fraction``."""
    q = linalg.rational(q)
    return Fraction(int(q.p), int(q.q))


def _nullspace(rows: list[list[Fraction]], n: int) -> list[list[Fraction]]:
    """A basis of ``{x : rows . x = 0}`` over QQ: one vector per free column of the reduced row echelon form."""
    if not rows:
        return [[Fraction(int(i == k)) for i in range(n)] for k in range(n)]
    R, rank = linalg.rref_rational(rows)
    pivots = []
    for r in range(rank):
        pivots.append(next(c for c in range(n) if R[r][c] != 0))
    free = [c for c in range(n) if c not in pivots]
    basis = []
    for f in free:
        x = [Fraction(0)] * n
        x[f] = Fraction(1)
        for r, p in enumerate(pivots):
            x[p] = -R[r][f]
        basis.append(x)
    return basis


def context_syzygies(d: int, t: int, j: int, y: Value) -> list[Poly]:
    """For each context ``n`` and each relation ``k`` of :func:`syzygy_kernel`: ``sum_R k_R det F_n[R]``."""
    out = []
    for n in _contexts(t, j):
        F = _flattening(d, n, j, y)
        subsets = list(itertools.combinations(range(len(F)), d))
        minors = dict(zip(subsets, _minors(F, d)))
        for members, basis in syzygy_kernel(d):
            for vec in basis:
                terms = [minors[rows] * linalg.rational(q) for rows, q in zip(members, vec) if q]
                out.append(sum(terms[1:], terms[0]))
    return out


def _acyclic(alpha: Sequence[int]) -> list[int]:
    """A map ``f: [r] -> [r]`` with ``|f^{-1}(m)| = alpha_m``: ``f(p) = p`` when ``alpha_p > 0``, the other ``p``
    in increasing order onto the values ``m`` repeated ``alpha_m - 1`` times in increasing order (0-based)."""
    extra = [m for m, k in enumerate(alpha) for _ in range(max(0, k - 1))]
    it = iter(extra)
    return [p if alpha[p] > 0 else next(it) for p in range(len(alpha))]


def _add(u: tuple[int, ...], v: tuple[int, ...]) -> tuple[int, ...]:
    """The entrywise sum of two compositions."""
    return tuple(x + z for x, z in zip(u, v))


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    return [c for c in itertools.product(range(total + 1), repeat=parts) if sum(c) == total]


def veronese(d: int, t: int, j: int, a: int, y: Value, r: int) -> dict[str, list[Poly]]:
    """The Veronese (catalecticant) relations of order ``r`` (``2 <= r <= min(d, a)``).

    For ``r``-subsets ``K`` (variables) and ``L`` (slices) and ``alpha`` with ``|alpha| = r``:
    ``D_alpha(K, L) = det[ c[L_q, (K_f(p), K_p)] ]_{p,q}`` with ``f`` of :func:`_acyclic` and ``c = w y`` the
    unscaled coefficient.  On the image ``D_alpha(K, L) = det(A[L, K]) prod_m V_{K_m}^alpha_m`` (row-reduce the
    rows with ``f(p) != p`` by the fixed points), so the catalecticant ``C_{K,L}`` (rows ``e_m``, columns
    ``|gamma| = r - 1``, entry ``D_{e_m + gamma}``) has rank one, the vectors ``(D_alpha(K, L))_alpha`` for two
    ``L`` are proportional, and so are all blocks ``C_{K,L}`` side by side: their 2x2 minors are the three parts
    ``internal``, ``cross-target`` and ``block``."""
    if not 2 <= r <= min(d, a):
        return {"internal": [], "cross-target": [], "block": []}
    alphas, betas, gammas = _compositions(r, r), _compositions(1, r), _compositions(r - 1, r)
    subsets = list(itertools.combinations(range(1, d + 1), r))
    parts: dict[str, list[Poly]] = {"internal": [], "cross-target": [], "block": []}
    for n in _contexts(t, j):
        for K in subsets:
            D: dict[tuple[tuple[int, ...], tuple[int, ...]], Poly] = {}
            for L in subsets:
                for alpha in alphas:
                    f = _acyclic(alpha)
                    D[(L, alpha)] = _det(
                        [
                            [y(_cross(K[f[p]], K[p], L[q], n, j)) * _omega(K[f[p]], K[p]) for q in range(r)]
                            for p in range(r)
                        ]
                    )
            for L in subsets:
                C = [[D[(L, _add(b, g))] for g in gammas] for b in betas]
                parts["internal"] += _minors(C, 2)
            for L1, L2 in itertools.combinations(subsets, 2):
                parts["cross-target"] += _minors([[D[(L1, al)], D[(L2, al)]] for al in alphas], 2)
            big = [[D[(L, _add(b, g))] for L in subsets for g in gammas] for b in betas]
            parts["block"] += _minors(big, 2)
    return parts


def _binary_resultant_terms(P: Sequence[Poly], Q: Sequence[Poly]) -> Poly:
    """``Res(P0 s^2 + P1 s t + P2 t^2, Q0 s^2 + Q1 s t + Q2 t^2)`` = det of the 4x4 Sylvester matrix."""
    z = _zero(P[0])
    return _det([[P[0], P[1], P[2], z], [z, P[0], P[1], P[2]], [Q[0], Q[1], Q[2], z], [z, Q[0], Q[1], Q[2]]])


def _restricted(d: int, n: int, j: int, s: int, line: tuple[Sequence[int], Sequence[int]], y: Value) -> list[Poly]:
    """The slice quadric ``q_s(x) = sum_{u <= v} w(u,v) y[(u,n),(v,n),(s,j)] x_u x_v`` on ``x = p s + q t``: its
    coefficients of ``s^2``, ``s t``, ``t^2``."""
    p, q = line
    z = _zero(y(_cross(1, 1, s, n, j)))
    out = []
    coefficients: tuple[Callable[[int, int], int], ...] = (
        lambda u, v: p[u] * p[v],
        lambda u, v: p[u] * q[v] + q[u] * p[v],
        lambda u, v: q[u] * q[v],
    )
    for coef in coefficients:
        out.append(sum((y(_cross(u, v, s, n, j)) * (_omega(u, v) * coef(u - 1, v - 1)) for u, v in _pairs(d)), z))
    return out


def resultant_quartics(
    d: int, t: int, j: int, y: Value, lines: Sequence[tuple[Sequence[int], Sequence[int]]] | None = None
) -> list[Poly]:
    """On each line: the resultants of two restricted slice quadrics (they share the root of ``V . x``), and for
    three slices ``i < k < l`` the coefficients of ``u_i^2 v_k v_l``, ``u_k^2 v_i v_l``, ``u_l^2 v_i v_k``,
    ``u_i u_k v_l^2``, ``u_i u_l v_k^2``, ``u_k u_l v_i^2`` in ``Res(sum_r u_r q_r, sum_r v_r q_r)``."""
    lines = lines_for(d) if lines is None else lines
    out = []
    for n in _contexts(t, j):
        for line in lines:
            Q = {s: _restricted(d, n, j, s, line, y) for s in range(1, d + 1)}
            for i, k in itertools.combinations(range(1, d + 1), 2):
                out.append(_binary_resultant_terms(Q[i], Q[k]))
            for i, k, l in itertools.combinations(range(1, d + 1), 3):
                for u_mono, v_mono in (
                    ((i, i), (k, l)),
                    ((k, k), (i, l)),
                    ((l, l), (i, k)),
                    ((i, k), (l, l)),
                    ((i, l), (k, k)),
                    ((k, l), (i, i)),
                ):
                    out.append(_mixed_resultant(Q, u_mono, v_mono))
    return out


def _mixed_resultant(Q: dict[int, list[Poly]], u_mono: tuple[int, int], v_mono: tuple[int, int]) -> Poly:
    """The coefficient of ``u^u_mono v^v_mono`` in ``Res(sum_r u_r Q_r, sum_r v_r Q_r)``: the resultant is
    ``(P0 R2 - P2 R0)^2 - (P0 R1 - P1 R0)(P1 R2 - P2 R1)``, bilinear brackets in ``(u, v)``, so the coefficient is
    the sum over the orderings of the two multisets of the product of two brackets of single slices."""

    def bracket(r: int, s: int, x: int, w: int) -> Poly:
        return Q[r][x] * Q[s][w] - Q[r][w] * Q[s][x]

    total = None
    for r1, r2 in sorted(set(itertools.permutations(u_mono))):
        for s1, s2 in sorted(set(itertools.permutations(v_mono))):
            term = bracket(r1, s1, 0, 2) * bracket(r2, s2, 0, 2) - bracket(r1, s1, 0, 1) * bracket(r2, s2, 1, 2)
            total = term if total is None else total + term
    assert total is not None
    return total


# ---------------------------------------------------------------------------------------------- t = 1
def t1_low_rank(d: int, a: int, y: Value) -> list[Poly]:
    """``N = (y[k,k,l])_{k,l}`` has rank ``<= 2a + 1`` (``N = (diag S) V^T / 3 + 2 diag(V) S / 3`` with
    ``S = (A + A^T)/2`` of rank ``<= 2a``): its ``(2a+2)``-minors, when ``2a + 2 <= d``."""
    N = [[y(tuple(sorted((k, k, l)))) for l in range(1, d + 1)] for k in range(1, d + 1)]
    return _minors(N, 2 * a + 2) if 2 * a + 2 <= d else []


def lie_matrix(d: int, y: Value) -> list[list[Poly]]:
    """The cubic ``f = sum_K |S_3 K| y_K x^K`` under ``sl_d``: one column per basis element
    (``x_u d/dx_u - x_d d/dx_d`` for ``u < d``, then ``x_u d/dx_v`` for ``u != v``), the coefficients of the
    image in the cubic monomials (rows, sorted).  A product ``Q L`` of a quadric and a linear form has a
    stabilizer in ``sl_d`` of positive dimension for ``d >= 3``, so the rank is below ``d^2 - 1``."""
    monos = _triples(d)
    row: dict[tuple[int, ...], int] = {K: i for i, K in enumerate(monos)}

    def derivation(u: int, v: int) -> dict[int, Poly]:  # x_u d/dx_v f, as {row: coefficient}
        col: dict[int, Poly] = {}
        for K in monos:
            if v in K:
                e = K.count(v)
                rest = list(K)
                rest.remove(v)
                image = tuple(sorted(rest + [u]))
                val = y(K) * (_orbit3(K) * e)
                col[row[image]] = col[row[image]] + val if row[image] in col else val
        return col

    z: Poly = _zero(y(monos[0]))
    cols: list[dict[int, Poly]] = []
    for u in range(1, d):
        a_, b_ = derivation(u, u), derivation(d, d)
        cols.append({k: (a_[k] if k in a_ else z) - (b_[k] if k in b_ else z) for k in set(a_) | set(b_)})
    cols += [derivation(u, v) for u in range(1, d + 1) for v in range(1, d + 1) if u != v]
    return [[c.get(i, z) for c in cols] for i in range(len(monos))]


def lie_minors(d: int, y: Value) -> list[Poly]:
    """The maximal minors (size ``d^2 - 1``) of :func:`lie_matrix`, when it has at least as many rows."""
    M = lie_matrix(d, y)
    return _minors(M, d * d - 1) if len(M) >= d * d - 1 else []


def lie_certificate(d: int) -> dict[str, Any]:
    """Every maximal minor of :func:`lie_matrix` vanishes on the ``t = 1`` image (any rank bound ``a``: the image
    for ``rank A <= a`` lies in the one for ``A`` free), proven by polynomial identities over QQ:

    1. their coordinates depend on ``A`` only through ``S = (A + A^T)/2`` (substituting ``A -> (A + A^T)/2`` changes
       none), so the image is that of ``(S, V)`` with ``S`` symmetric;
    2. with ``w = adj(S) V^T``, ``u = (w_2, -w_1, 0, ...)``, ``u' = (0, w_3, -w_2, 0, ...)`` (both orthogonal to
       ``w``), ``K = u u'^T - u' u^T`` (skew, ``K w = 0``) and ``G = adj(S) K``: ``S G = det(S) K`` is skew and
       ``V G = -(K w)^T = 0``, so ``x -> G x`` kills ``f = (x^T S x)(V x)``; the combination of the columns of the
       Lie matrix with weights ``G_{uu}`` (``u < d``) and ``G_{vu}`` (``x_u d/dx_v``) is zero, and ``G`` is not.
    """
    if d < 3:
        raise InvalidArgumentError(f"d={d}: the Lie-flattening certificate needs d >= 3")
    th = their_coordinates(d, 1, 1, d)
    half = linalg.rational(Fraction(1, 2))
    sym = [(th.A[r][c] + th.A[c][r]) * half for r in range(d) for c in range(d)]
    only_sym = all(v.compose(*sym, *th.V, ctx=th.ring) == v for v in th.values.values())
    names = [f"s_{r}_{c}" for r in range(1, d + 1) for c in range(r, d + 1)] + [f"v_{c}" for c in range(1, d + 1)]
    R = linalg.rational_polynomial_ring(names)
    g = dict(zip(names, R.gens()))
    S = [[g[f"s_{min(r, c)}_{max(r, c)}"] for c in range(1, d + 1)] for r in range(1, d + 1)]
    V = [g[f"v_{c}"] for c in range(1, d + 1)]
    images = [S[r][c] for r in range(d) for c in range(d)] + V
    y = {lab: v.compose(*images, ctx=R) for lab, v in th.values.items()}
    M = lie_matrix(d, y.__getitem__)
    z = R.constant(0)
    adj = [[_cofactor(S, c, r) for c in range(d)] for r in range(d)]  # adj(S)[r][c] = cofactor (c, r)
    w = [sum((adj[r][c] * V[c] for c in range(d)), z) for r in range(d)]
    u = [w[1], -w[0]] + [z] * (d - 2)
    u2 = [z, w[2], -w[1]] + [z] * (d - 3)
    K = [[u[r] * u2[c] - u2[r] * u[c] for c in range(d)] for r in range(d)]
    G = _matmul(adj, K)
    weights = [G[k][k] for k in range(d - 1)] + [
        G[v - 1][k - 1] for k in range(1, d + 1) for v in range(1, d + 1) if k != v
    ]
    product = [sum((M[i][c] * weights[c] for c in range(len(weights))), z) for i in range(len(M))]
    return {
        "d": d,
        "rows": len(M),
        "columns": len(M[0]),
        "depends_on_sym_A_only": only_sym,
        "kernel_vector_nonzero": any(not x.is_zero() for x in weights),
        "product_zero": all(x.is_zero() for x in product),
        "trace_zero": sum((G[k][k] for k in range(d)), z).is_zero(),
    }


def _cofactor(S: list[list[Poly]], r: int, c: int) -> Poly:
    sub = [[S[i][k] for k in range(len(S)) if k != c] for i in range(len(S)) if i != r]
    val = _det(sub) if sub else S[0][0] - S[0][0] + 1
    return val if (r + c) % 2 == 0 else -val


def _matmul(X: list[list[Poly]], Y: list[list[Poly]]) -> list[list[Poly]]:
    z = _zero(X[0][0])
    return [[sum((X[i][k] * Y[k][c] for k in range(len(Y))), z) for c in range(len(Y[0]))] for i in range(len(X))]
