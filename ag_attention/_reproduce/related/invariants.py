"""Algebraic invariants of lightning self-attention (Alexandr, Duan, Montúfar, arXiv:2604.15632), rebuilt from
their definitions and checked: one of the published works of ``ag-attention reproduce related``.

They take one output coordinate ``(V X X^T A X)_j`` of one layer with ``d' = 1`` and ``rank A <= a``, and as
coordinates its coefficients in the cubic monomials of ``X``, each divided by its number of terms as a polynomial in
generic ``(A, V)``.  Their ``A`` is the transpose of ours (``phi(X)_i = sum_j (x_i^T A x_j) V x_j``), and their
coordinates are linear in our reduced ones (:func:`reduced_form`):

* ``y[(u,n),(v,n),(l,j)]`` (``n != j``) ``= c[l, (u,v)] / w(u,v)``, with ``c[l, (u,v)]`` the coefficient of
  ``z_u z_v`` in ``q_l(z) = (A_l . z)(V . z)`` and ``w(u,v) = 1`` if ``u = v``, else 2: the entries of the
  symmetric matrix of the quadric ``q_l``;
* ``y[(a,j),(b,j),(c,j)] = sum_{p} c[p, {a,b,c} - p] / |S_3 . (a,b,c)|`` (``p`` over the distinct entries): the
  symmetric tensor of the cubic ``(z^T A z)(V z)``.  The same formula gives their ``t = 1`` coordinates.

The map is checked exactly (:func:`check_coordinate_map`), their families of equations are rebuilt from the
mathematics (:data:`FAMILIES`; no code of theirs is used here), every member is checked to vanish on the
parametrization (a polynomial identity over QQ in the weights: :func:`check_family`), and their members in our
coordinates are compared with the package's minimal generators per degree and torus multidegree
(:func:`explain_generators`).  What their own code computes is compared in :mod:`.their_code`.  The report's part:
:func:`invariants_section`.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..._architecture import Architecture
from ..._errors import InvalidArgumentError
from ..._exact import linalg
from ..._models.coordinates import full_coordinates, full_structure, reduced_coordinates, reduced_keys, reduced_names
from ..report import Check, Table

__all__ = [
    "REPOSITORY",
    "Label",
    "their_labels",
    "their_coordinates",
    "reduced_form",
    "check_coordinate_map",
    "FAMILIES",
    "family_members",
    "check_family",
    "FamilyCheck",
    "lie_certificate",
    "DEFAULT_LINES",
    "lines_for",
    "explain_generators",
    "Explained",
    "their_ring",
    "reduced_ring",
    "on_image",
    "linear_span",
    "t1_against_m2",
    "reduced_against_m2",
    "invariants_section",
    "m2_section",
    "INVARIANTS",
]

#: where the invariants come from
REPOSITORY = "yuliaalexandr/algebraic-invariants-of-lightning-self-attention"
#: how the checks name the two sources
INVARIANTS = "[invariants, arXiv:2604.15632]"

#: a coordinate of theirs, named by its monomial: sorted ``((feature, token), ...)`` (1-based) for ``t >= 2``,
#: sorted ``(feature, feature, feature)`` for ``t = 1``
Label = tuple[Any, ...]
Poly = Any  # linalg.RationalPolynomial (python-flint's fmpq_mpoly, through the seam)
Value = Callable[[Label], Poly]


# ---------------------------------------------------------------------------------------------- sizes
def _check_size(d: int, t: int, j: int = 1, a: int | None = None) -> int:
    """The rank bound (``a=None``: ``d``) once ``d``, ``t``, ``j``, ``a`` are valid; else an error naming the value."""
    for name, v in (("d", d), ("t", t), ("j", j)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidArgumentError(f"{name}={v!r}: must be a positive integer")
    if j > t:
        raise InvalidArgumentError(f"j={j}: the output token must lie in 1..t={t}")
    if d > 6:
        raise InvalidArgumentError(f"d={d}: the invariant families are built here for d <= 6")
    a = d if a is None else a
    if isinstance(a, bool) or not isinstance(a, int) or a < 1:
        raise InvalidArgumentError(f"a={a!r}: must be a positive integer")
    return min(a, d)


def _orbit3(K: Sequence[int]) -> int:
    """``|S_3 . K|``: the number of distinct orderings of the multiset ``K`` of size 3."""
    return len(set(itertools.permutations(K)))


def _omega(u: int, v: int) -> int:
    return 1 if u == v else 2


def _pairs(d: int) -> list[tuple[int, int]]:
    return [(u, v) for u in range(1, d + 1) for v in range(u, d + 1)]


def _triples(d: int) -> list[tuple[int, int, int]]:
    return list(itertools.combinations_with_replacement(range(1, d + 1), 3))


def _cross(u: int, v: int, l: int, n: int, j: int) -> Label:
    """The coefficient of ``x[u,n] x[v,n] x[l,j]`` (context ``n``, output token ``j``)."""
    return tuple(sorted(((u, n), (v, n), (l, j))))


def _single(K: Sequence[int], j: int) -> Label:
    return tuple(sorted((k, j) for k in K))


def their_labels(d: int, t: int, j: int = 1) -> list[Label]:
    """Their coordinates for output token ``j`` of ``t`` tokens: every cubic monomial with a nonzero coefficient."""
    _check_size(d, t, j)
    if t == 1:
        return sorted(_triples(d))
    out = [_single(K, j) for K in _triples(d)]
    out += [_cross(u, v, l, n, j) for n in range(1, t + 1) if n != j for u, v in _pairs(d) for l in range(1, d + 1)]
    return sorted(set(out))


def reduced_form(label: Label, d: int) -> dict[int, Fraction]:
    """Their coordinate ``label`` as a linear form in our reduced coordinates (index -> coefficient).

    >>> reduced_form(((1, 2), (2, 2), (3, 1)), 3)    # y[(1,2),(2,2),(3,1)] = c[3,(1,2)] / 2
    {13: Fraction(1, 2)}
    >>> sorted(reduced_form((1, 1, 2), 3).items())   # t = 1: (c[1,(1,2)] + c[2,(1,1)]) / 3
    [(1, Fraction(1, 3)), (6, Fraction(1, 3))]
    """
    index = {key: n for n, key in enumerate(reduced_keys(d, 1))}

    def c(row: int, u: int, v: int) -> int:
        u, v = min(u, v), max(u, v)
        return index[(row - 1, 0, u - 1, v - 1)]

    if all(isinstance(x, int) for x in label):  # t = 1
        features = list(label)
    else:
        tokens = Counter(tok for _, tok in label)
        if len(tokens) == 2:  # cross: two entries of the context token, one of the output token
            (ctx, _), (out, _) = sorted(tokens.items(), key=lambda kv: -kv[1])
            (u, v), l = sorted(f for f, tok in label if tok == ctx), next(f for f, tok in label if tok == out)
            return {c(l, u, v): Fraction(1, _omega(u, v))}
        features = [f for f, _ in label]
    form: dict[int, Fraction] = defaultdict(Fraction)
    for p in sorted(set(features)):
        rest = list(features)
        rest.remove(p)
        form[c(p, rest[0], rest[1])] += Fraction(1, _orbit3(features))
    return dict(form)


# ---------------------------------------------------------------------------------------------- their coordinates
@dataclass
class TheirCoordinates:
    """Their parametrization: each coordinate as a polynomial over QQ in the weights (``a_r_c`` their ``A``,
    or ``b_r_s``, ``c_s_c`` with ``A = B C`` when ``a < d``; ``v_c`` the row ``V``)."""

    d: int
    t: int
    j: int
    a: int
    ring: Any
    values: dict[Label, Poly]
    terms: dict[Label, int]  # the number of terms of the coefficient in generic (A, V): their divisor
    A: list[list[Poly]]  # their A, in the weights
    V: list[Poly]


@lru_cache(maxsize=32)
def their_coordinates(d: int, t: int, j: int = 1, a: int | None = None) -> TheirCoordinates:
    """Their scaled coordinates by their definition: expand ``(V X X^T A X)_{1,j}`` with ``X = (x[f,k])``, take the
    coefficient of each cubic monomial in ``X`` (a polynomial in generic ``A``, ``V``), divide it by its number
    of terms; for ``a < d`` substitute ``A = B C``."""
    a = _check_size(d, t, j, a)
    gen_names = [f"a_{r}_{c}" for r in range(1, d + 1) for c in range(1, d + 1)] + [f"v_{c}" for c in range(1, d + 1)]
    x_names = [f"x_{f}_{k}" for f in range(1, d + 1) for k in range(1, t + 1)]
    R = linalg.rational_polynomial_ring(gen_names + x_names)
    g = dict(zip(gen_names + x_names, R.gens()))
    A = [[g[f"a_{r}_{c}"] for c in range(1, d + 1)] for r in range(1, d + 1)]
    V = [g[f"v_{c}"] for c in range(1, d + 1)]
    X = [[g[f"x_{f}_{k}"] for k in range(1, t + 1)] for f in range(1, d + 1)]  # d x t
    zero = R.constant(0)
    VX = [sum((V[f] * X[f][k] for f in range(d)), zero) for k in range(t)]  # 1 x t
    AX_j = [sum((A[r][c] * X[c][j - 1] for c in range(d)), zero) for r in range(d)]  # column j of A X
    XtAX_j = [sum((X[r][k] * AX_j[r] for r in range(d)), zero) for k in range(t)]  # column j of X^T A X
    output = sum((VX[k] * XtAX_j[k] for k in range(t)), zero)
    ngen = len(gen_names)
    coefficients: dict[Label, dict[tuple[int, ...], Any]] = defaultdict(dict)
    for exps, coef in output.to_dict().items():
        weights, xs = tuple(exps[:ngen]), exps[ngen:]
        mono = []
        for idx, e in enumerate(xs):
            f, k = divmod(idx, t)
            mono += [(f + 1, k + 1)] * int(e)
        label: Label = tuple(sorted(f for f, _ in mono)) if t == 1 else tuple(sorted(mono))
        coefficients[label][weights] = coef
    P = linalg.rational_polynomial_ring(gen_names)
    values = {lab: P.from_dict(c) / len(c) for lab, c in coefficients.items()}
    terms = {lab: len(c) for lab, c in coefficients.items()}
    pg = dict(zip(gen_names, P.gens()))
    Aw = [[pg[f"a_{r}_{c}"] for c in range(1, d + 1)] for r in range(1, d + 1)]
    Vw = [pg[f"v_{c}"] for c in range(1, d + 1)]
    if a < d:  # the closure of rank <= a: A = B C
        names = (
            [f"b_{r}_{s}" for r in range(1, d + 1) for s in range(1, a + 1)]
            + [f"c_{s}_{c}" for s in range(1, a + 1) for c in range(1, d + 1)]
            + [f"v_{c}" for c in range(1, d + 1)]
        )
        Q = linalg.rational_polynomial_ring(names)
        q = dict(zip(names, Q.gens()))
        BC = [
            [sum((q[f"b_{r}_{s}"] * q[f"c_{s}_{c}"] for s in range(1, a + 1)), Q.constant(0)) for c in range(1, d + 1)]
            for r in range(1, d + 1)
        ]
        images = [BC[r][c] for r in range(d) for c in range(d)] + [q[f"v_{c}"] for c in range(1, d + 1)]
        values = {lab: v.compose(*images, ctx=Q) for lab, v in values.items()}
        Aw, Vw, P = BC, [q[f"v_{c}"] for c in range(1, d + 1)], Q
    return TheirCoordinates(d, t, j, a, P, values, terms, Aw, Vw)


def check_coordinate_map(d: int, t: int, j: int = 1, a: int | None = None) -> dict[str, Any]:
    """Exactly: each of their coordinates equals :func:`reduced_form` of it evaluated at our reduced coordinates of
    ``(A^T, V)`` (our ``A`` is their transpose), and at ``t = 1`` also our full coordinate divided by the orbit size.

    Returns the counts (``labels``, ``agree``) and the labels that disagree (none, unless the map is wrong).
    """
    th = their_coordinates(d, t, j, a)
    ours_A = [[th.A[c][r] for c in range(d)] for r in range(d)]  # the transpose
    red = reduced_coordinates(ours_A, [th.V])
    bad = []
    for lab, val in th.values.items():
        form = reduced_form(lab, d)
        mapped = sum((red[i] * linalg.rational(q) for i, q in form.items()), th.ring.constant(0))
        if mapped != val:
            bad.append(lab)
    if t == 1:  # our full coordinates of one token: the unscaled coefficients of (x^T A x) V x
        keys, _ = full_structure(d, 1, 1)
        full = dict(zip(keys, full_coordinates(ours_A, [th.V], 1)))
        for lab, val in th.values.items():
            key = (0, 0, tuple(f - 1 for f in lab))
            if full[key] / _orbit3(lab) != val:
                bad.append(lab)
    return {
        "d": d,
        "t": t,
        "j": j,
        "a": th.a,
        "labels": len(th.values),
        "agree": len(th.values) - len(bad),
        "disagree": [str(b) for b in bad],
        "divisors": dict(Counter(th.terms.values())),
    }


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
            add = lambda u, v: tuple(x + z for x, z in zip(u, v))  # noqa: E731
            for L in subsets:
                C = [[D[(L, add(b, g))] for g in gammas] for b in betas]
                parts["internal"] += _minors(C, 2)
            for L1, L2 in itertools.combinations(subsets, 2):
                parts["cross-target"] += _minors([[D[(L1, al)], D[(L2, al)]] for al in alphas], 2)
            big = [[D[(L, add(b, g))] for L in subsets for g in gammas] for b in betas]
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
    for coef in ((lambda u, v: p[u] * p[v]), (lambda u, v: p[u] * q[v] + q[u] * p[v]), (lambda u, v: q[u] * q[v])):
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


# ---------------------------------------------------------------------------------------------- registry and checks
@dataclass(frozen=True)
class Family:
    """One family of their invariants: where it lives (``t >= 2`` or ``t = 1``) and how it is built."""

    name: str
    regime: str  # "t>=2" or "t=1"
    description: str
    build: Callable[[int, int, int, int, Value], list[Poly]] = field(repr=False)
    #: the smallest d (and a) where the family is an invariant by its construction; below, members are checked too
    hypothesis: str = ""


def _veronese(r: int) -> Callable[[int, int, int, int, Value], list[Poly]]:
    def build(d: int, t: int, j: int, a: int, y: Value) -> list[Poly]:
        parts = veronese(d, t, j, a, y, r)
        return parts["internal"] + parts["cross-target"] + parts["block"]

    return build


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "linear",
            "t>=2",
            "linear relations: context copies (t >= 3) and the symmetrization of the output-token coefficients",
            lambda d, t, j, a, y: linear_relations(d, t, j, y),
        ),
        Family(
            "low-rank",
            "t>=2",
            "(a+1)-minors of the flattening F_n (rows u <= v, columns l), a < d",
            low_rank_minors,
            "a < d",
        ),
        Family(
            "cubics",
            "t>=2",
            "cross-column cubics: coefficients of the 3x3 minors of the pencil sum_k c_k M_k",
            lambda d, t, j, a, y: cross_column_cubics(d, t, j, y),
            "d >= 3",
        ),
        Family(
            "syzygies",
            "t>=2",
            "context syzygies: relations among the maximal minors of Phi(V) applied to F_n (degree d)",
            lambda d, t, j, a, y: context_syzygies(d, t, j, y),
        ),
        Family(
            "veronese-2",
            "t>=2",
            "Veronese/catalecticant relations of order r = 2 (quartics): internal, cross-target and block 2x2 minors",
            _veronese(2),
            "2 <= min(d, a)",
        ),
        Family(
            "veronese-3",
            "t>=2",
            "Veronese/catalecticant relations of order r = 3 (degree 6)",
            _veronese(3),
            "3 <= min(d, a)",
        ),
        Family(
            "resultants",
            "t>=2",
            "resultant quartics of the slice quadrics restricted to lines (pairs of slices; "
            "six coefficients for triples)",
            lambda d, t, j, a, y: resultant_quartics(d, t, j, y),
        ),
        Family(
            "t1-low-rank",
            "t=1",
            "(2a+2)-minors of N = (y[k,k,l]), 2a + 2 <= d",
            lambda d, t, j, a, y: t1_low_rank(d, a, y),
            "2a + 2 <= d",
        ),
        Family(
            "t1-lie",
            "t=1",
            "Lie-flattening (Chow-type, split (2,1)) maximal minors of the sl_d action on the cubic",
            lambda d, t, j, a, y: lie_minors(d, y),
            "d >= 3",
        ),
    )
}


def _label_name(label: Label) -> str:
    if all(isinstance(x, int) for x in label):
        return "y_" + "_".join(map(str, label))
    return "y_" + "_".join(f"{f}x{k}" for f, k in label)


@lru_cache(maxsize=32)
def their_ring(d: int, t: int, j: int = 1) -> tuple[Any, dict[Label, Poly]]:
    """The polynomial ring of their coordinates (``y_1x2_2x2_3x1`` is ``y[(1,2),(2,2),(3,1)]``) and its variables."""
    labels = their_labels(d, t, j)
    R = linalg.rational_polynomial_ring([_label_name(lab) for lab in labels])
    return R, dict(zip(labels, R.gens()))


@lru_cache(maxsize=32)
def reduced_ring(d: int) -> tuple[Any, Callable[[Label], Poly]]:
    """Our reduced coordinates' ring (names ``q11z12``, d' = 1) and their coordinates in it (:func:`reduced_form`)."""
    R = linalg.rational_polynomial_ring(list(reduced_names(d, 1)))
    gens = R.gens()
    cache: dict[Label, Poly] = {}

    def value(label: Label) -> Poly:
        if label not in cache:
            cache[label] = sum((gens[i] * linalg.rational(q) for i, q in reduced_form(label, d).items()), R.constant(0))
        return cache[label]

    return R, value


def family_members(name: str, d: int, t: int, a: int | None = None, j: int = 1, ring: str = "theirs") -> list[Poly]:
    """The members of family ``name`` at ``(d, t, a)`` with values in ``ring``: ``"theirs"`` (polynomials in their
    coordinates), ``"reduced"`` (pulled back to our reduced coordinates: :func:`reduced_form`) or ``"weights"``
    (their parametrization substituted: zero exactly when the member vanishes on the image)."""
    if name not in FAMILIES:
        raise InvalidArgumentError(f"family={name!r}: must be one of {', '.join(FAMILIES)}")
    a = _check_size(d, t, j, a)
    fam = FAMILIES[name]
    if (fam.regime == "t=1") != (t == 1):
        raise InvalidArgumentError(f"family={name!r} is for {fam.regime}, got t={t}")
    if ring == "theirs":
        y: Value = their_ring(d, t, j)[1].__getitem__
    elif ring == "reduced":
        y = reduced_ring(d)[1]
    elif ring == "weights":
        y = their_coordinates(d, t, j, a).values.__getitem__
    else:
        raise InvalidArgumentError(f"ring={ring!r}: must be one of theirs, reduced, weights")
    return fam.build(d, t, j, a, y)


@dataclass
class FamilyCheck:
    """One family at one size: how many members, how many are nonzero polynomials, how many vanish on the image."""

    family: str
    d: int
    t: int
    a: int
    members: int  # as built (their constructions keep duplicates and zeros)
    nonzero: int  # nonzero polynomials in their coordinates
    distinct: int  # distinct up to sign among the nonzero ones
    degrees: tuple[int, ...]
    vanishing: int  # nonzero members that vanish on the parametrization (exact)
    method: str
    seconds: float
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.vanishing == self.nonzero

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "d": self.d,
            "t": self.t,
            "a": self.a,
            "members": self.members,
            "nonzero": self.nonzero,
            "distinct": self.distinct,
            "degrees": list(self.degrees),
            "vanishing": self.vanishing,
            "method": self.method,
            "seconds": round(self.seconds, 2),
            "note": self.note,
        }


def check_family(name: str, d: int, t: int, a: int | None = None, j: int = 1) -> FamilyCheck:
    """Build family ``name`` at ``(d, t, a)`` in their coordinates and on the parametrization: every nonzero member
    must be the zero polynomial in the weights (their scaled coefficients of ``V X X^T A X``, ``A = B C`` for
    ``a < d``), which is exactly membership in the ideal of the closure.

    The Lie-flattening minors for ``d >= 4`` (``C(d+2, 3)`` choose ``d^2 - 1`` of them) are decided at once by
    :func:`lie_certificate`: a nonzero kernel vector over QQ[weights] makes every maximal minor zero.
    """
    t0 = time.perf_counter()
    a = _check_size(d, t, j, a)
    if name == "t1-lie" and d >= 3:
        rows, cols = math.comb(d + 2, 3), d * d - 1
        cert = lie_certificate(d)
        ok = all(cert[k] for k in ("depends_on_sym_A_only", "product_zero", "kernel_vector_nonzero", "trace_zero"))
        n = math.comb(rows, cols)
        return FamilyCheck(
            name,
            d,
            t,
            a,
            n,
            n,
            n,
            (cols,),
            n if ok else 0,
            "a kernel vector of the Lie matrix over QQ[weights] (lie_certificate)",
            time.perf_counter() - t0,
            note=f"{rows} x {cols} matrix: every {cols}-minor at once",
        )
    built = family_members(name, d, t, a, j, "theirs")
    on_image = family_members(name, d, t, a, j, "weights")
    if len(built) != len(on_image):  # the same construction in two rings: a mismatch is a bug
        raise AssertionError(f"{name} at {(d, t, a)}: {len(built)} members in their ring, {len(on_image)} on the image")
    keep = [i for i, m in enumerate(built) if not m.is_zero()]
    distinct = {_up_to_sign(built[i]) for i in keep}
    vanishing = sum(on_image[i].is_zero() for i in keep)
    degrees = tuple(sorted({built[i].total_degree() for i in keep}))
    return FamilyCheck(
        name,
        d,
        t,
        a,
        len(built),
        len(keep),
        len(distinct),
        degrees,
        vanishing,
        "exact substitution of their parametrization (python-flint over QQ)",
        time.perf_counter() - t0,
    )


def _up_to_sign(p: Poly) -> str:
    s = str(p)
    return min(s, str(-p))


# ---------------------------------------------------------------------------------------------- explained generators
Sparse = dict[tuple[int, ...], Fraction]  # a polynomial in the reduced coordinates: monomial (sorted indices) -> coef


def _sparse(p: Poly) -> Sparse:
    out: Sparse = {}
    for exps, c in p.to_dict().items():
        mono = tuple(i for i, e in enumerate(exps) for _ in range(int(e)))
        out[mono] = _fraction(c)
    return out


def _weight(mono: tuple[int, ...], weights: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in weights[list(mono)].sum(axis=0)) if mono else ()


class _Space:
    """Subspaces of one multidegree's polynomials, exactly over QQ: ranks and bases by FLINT's ``fmpq_mat``."""

    def __init__(self) -> None:
        self.columns: dict[tuple[int, ...], int] = {}

    def rows(self, polys: Iterable[Sparse]) -> list[list[Fraction]]:
        polys = list(polys)
        for p in polys:
            for m in p:
                self.columns.setdefault(m, len(self.columns))
        return [[p.get(m, Fraction(0)) for m in self.columns] for p in polys]

    def rank(self, *groups: Iterable[Sparse]) -> int:
        rows = self.rows(p for g in groups for p in g)
        return linalg.rank_rational(rows) if rows else 0

    def basis(self, *groups: Iterable[Sparse]) -> list[Sparse]:
        rows = self.rows(p for g in groups for p in g)
        if not rows:
            return []
        R, r = linalg.rref_rational(rows)
        cols = list(self.columns)
        return [{cols[c]: q for c, q in enumerate(R[i]) if q} for i in range(r)]


@dataclass
class Explained:
    """Their families against the package's minimal generators of one size (``d' = 1``, reduced coordinates).

    ``rows``: one per degree and orbit of multidegrees under index permutations (``representative``, how many
    multidegrees, the minimal generators of each, and summed over the orbit: generators, explained by all families
    together, unexplained, explained by each family alone).  A generator of degree ``D`` and multidegree ``mu`` is
    *explained* when it lies in the span of the families' members of degree ``D`` plus the ideal generated in lower
    degrees; the count is ``rank(H_mu + F_mu) - rank(H_mu)`` with ``H = S_1 I_{D-1}``, exact over QQ (members that
    are not torus-homogeneous count through the part of their span that is: :meth:`_inhomogeneous`).
    ``generates_up_to``: the largest ``k`` such that no generator of degree ``<= k`` is unexplained, i.e. (by
    induction on the degree: ``J_{D-1} = I_{D-1}`` makes ``H = S_1 J_{D-1}``) the ideal ``J`` the families generate
    alone equals ``I`` in every degree ``<= k``.
    """

    d: int
    a: int
    max_degree: int
    families: tuple[str, ...]
    rows: list[dict[str, Any]]
    generates_up_to: int
    members: dict[str, dict[str, int]]
    seconds: float
    generators_exact: bool  # rank over QQ of the lifted generators and H equals the modular dimension everywhere
    consistent: bool  # the families' homogeneous members add nothing to I_mu (they lie in the ideal)

    @property
    def generator_count(self) -> dict[int, int]:
        out: dict[int, int] = defaultdict(int)
        for r in self.rows:
            out[r["degree"]] += r["generators"]
        return dict(out)

    @property
    def unexplained(self) -> dict[int, int]:
        out: dict[int, int] = defaultdict(int)
        for r in self.rows:
            out[r["degree"]] += r["unexplained"]
        return dict(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "d": self.d,
            "d_out": 1,
            "a": self.a,
            "max_degree": self.max_degree,
            "families": list(self.families),
            "rows": self.rows,
            "generates_up_to": self.generates_up_to,
            "members": self.members,
            "generators_exact": self.generators_exact,
            "consistent": self.consistent,
            "seconds": round(self.seconds, 2),
        }


def explain_generators(
    d: int, a: int, max_degree: int = 4, families: Sequence[str] | None = None, seed: int = 0, t: int = 2
) -> Explained:
    """Which minimal generators of degree ``<= max_degree`` (:func:`ag_attention.low_degree_equations`) the
    families (their ``t >= 2`` ones, by default all) explain, per degree and multidegree (cached: the same
    arguments give the same object, not to be changed)."""
    a = _check_size(d, t, 1, a)
    if isinstance(max_degree, bool) or not isinstance(max_degree, int) or not 1 <= max_degree <= 6:
        raise InvalidArgumentError(f"max_degree={max_degree!r}: must be an integer in 1..6")
    names = tuple(f for f in FAMILIES if FAMILIES[f].regime == "t>=2") if families is None else tuple(families)
    for name in names:
        if name not in FAMILIES or FAMILIES[name].regime != "t>=2":
            raise InvalidArgumentError(
                f"families: {name!r} is not one of the t >= 2 families "
                f"({', '.join(f for f in FAMILIES if FAMILIES[f].regime == 't>=2')})"
            )
    return _explain(d, a, max_degree, names, seed, t)


@lru_cache(maxsize=16)
def _explain(d: int, a: int, max_degree: int, names: tuple[str, ...], seed: int, t: int) -> Explained:
    from ..._algebra.interpolation import low_degree_equations
    from ..._algebra.multidegrees import torus_weights

    t0 = time.perf_counter()
    eqs = low_degree_equations(Architecture.single_layer(d, 1, a, tokens=2), max_degree=max_degree, seed=seed)
    weights = torus_weights(d, 1)
    members: dict[str, dict[str, int]] = {}
    by_family: dict[str, dict[int, list[Sparse]]] = {}
    for name in names:
        polys = [p for p in family_members(name, d, t, a, 1, "reduced") if not p.is_zero()]
        kept = [_sparse(p) for p in polys if p.total_degree() <= max_degree]
        by_family[name] = defaultdict(list)
        for s in kept:
            by_family[name][len(next(iter(s)))].append(s)
        members[name] = {
            "nonzero_in_reduced": len(polys),
            "up_to_degree": len(kept),
            "homogeneous": sum(len({_weight(m, weights) for m in s}) == 1 for s in kept),
        }
    ideal_basis: dict[tuple[int, ...], list[Sparse]] = {}  # I_{D-1} per multidegree
    rows: dict[tuple[int, tuple], dict[str, Any]] = {}
    exact = consistent = True
    nvars = len(weights)
    for D in range(1, max_degree + 1):
        lower = _products(ideal_basis, nvars, weights)
        F: dict[str, dict[tuple[int, ...], list[Sparse]]] = {name: defaultdict(list) for name in names}
        inhomogeneous: dict[str, list[Sparse]] = defaultdict(list)
        for name in names:
            for s in by_family[name].get(D, []):
                mus = {_weight(m, weights) for m in s}
                if len(mus) == 1:
                    F[name][mus.pop()].append(s)
                else:
                    inhomogeneous[name].append(s)
        new_basis = {}
        explained_all: dict[tuple, int] = {}
        explained_one: dict[tuple, dict[str, int]] = {}
        blocks = {tuple(x for part in b.multidegree for x in part): b for b in eqs.blocks.get(D, [])}
        homogeneous_all = {mu: [s for name in names for s in F[name].get(mu, [])] for mu in blocks}
        extra = _inhomogeneous(
            [s for name in names for s in inhomogeneous[name]], blocks, lower, homogeneous_all, weights
        )
        extra_one = {
            name: _inhomogeneous(
                inhomogeneous[name], blocks, lower, {mu: F[name].get(mu, []) for mu in blocks}, weights
            )
            for name in names
        }
        for mu, blk in blocks.items():
            space = _Space()
            H = lower.get(mu, [])
            h = space.rank(H)
            basis = space.basis(H, blk.generators)
            exact &= len(basis) == blk.ideal_dimension
            consistent &= space.rank(basis, homogeneous_all[mu]) == len(basis)
            new_basis[mu] = basis
            explained_all[mu] = space.rank(H, homogeneous_all[mu]) - h + extra.get(mu, 0)
            explained_one[mu] = {
                name: space.rank(H, F[name].get(mu, [])) - h + extra_one[name].get(mu, 0) for name in names
            }
        for mu, blk in blocks.items():
            a_, b_, g_ = blk.representative
            rep = (a_, b_, g_)
            key = (D, rep)
            row = rows.setdefault(
                key,
                {
                    "degree": D,
                    "representative": [list(a_), list(b_), list(g_)],
                    "multidegrees": 0,
                    "generators_each": len(blk.generators),
                    "generators": 0,
                    "explained": 0,
                    "unexplained": 0,
                    "by_family": {name: 0 for name in names},
                },
            )
            row["multidegrees"] += 1
            row["generators"] += len(blk.generators)
            row["explained"] += explained_all[mu]
            row["unexplained"] += len(blk.generators) - explained_all[mu]
            for name in names:
                row["by_family"][name] += explained_one[mu][name]
        ideal_basis = new_basis
    table = [r for _, r in sorted(rows.items()) if r["generators"] or any(r["by_family"].values())]
    unexplained = {r["degree"] for r in table if r["unexplained"]}
    upto = min(unexplained) - 1 if unexplained else max_degree
    return Explained(d, a, max_degree, names, table, upto, members, time.perf_counter() - t0, exact, consistent)


def _products(
    basis: dict[tuple[int, ...], list[Sparse]], nvars: int, weights: Any
) -> dict[tuple[int, ...], list[Sparse]]:
    """``S_1 . basis``: every ``x_v b``, grouped by multidegree."""
    out: dict[tuple[int, ...], list[Sparse]] = defaultdict(list)
    for mu, polys in basis.items():
        for v in range(nvars):
            nu = tuple(int(x) + int(w) for x, w in zip(mu, weights[v]))
            for p in polys:
                out[nu].append({tuple(sorted(m + (v,))): c for m, c in p.items()})
    return out


def _inhomogeneous(
    polys: list[Sparse],
    blocks: dict[tuple[int, ...], Any],
    lower: dict[tuple[int, ...], list[Sparse]],
    homogeneous: dict[tuple[int, ...], list[Sparse]],
    weights: Any,
) -> dict[tuple[int, ...], int]:
    """What members that are not torus-homogeneous add in each multidegree ``mu``: with ``G = H + F_hom``
    (homogeneous), ``dim((G + F_inh) cap S_mu) - dim G_mu = dim(Fbar cap Q_mu)``, ``Fbar`` the members reduced
    modulo ``G`` block by block, ``Q = S / G``; ``dim(Fbar cap Q_mu) = rank Fbar - rank(Fbar without the columns
    of mu)``, over QQ, per connected component of members sharing multidegrees."""
    if not polys:
        return {}
    reduced: list[dict[tuple[int, ...], Sparse]] = []
    normal: dict[tuple[int, ...], list[Sparse]] = {}
    for p in polys:
        parts: dict[tuple[int, ...], Sparse] = defaultdict(dict)
        for m, c in p.items():
            parts[_weight(m, weights)][m] = c
        red = {}
        for mu, part in parts.items():
            if mu not in normal:
                space = _Space()
                normal[mu] = space.basis(lower.get(mu, []), homogeneous.get(mu, []))
            r = _reduce(part, normal[mu])
            if r:
                red[mu] = r
        if red:
            reduced.append(red)
    out: dict[tuple[int, ...], int] = {}
    for component in _components(reduced):
        mus = sorted({mu for r in component for mu in r})
        cols = [(mu, m) for mu in mus for m in sorted({m for r in component for m in r.get(mu, {})})]
        full = [[r.get(mu, {}).get(m, Fraction(0)) for mu, m in cols] for r in component]
        total = linalg.rank_rational(full)
        for k, mu in enumerate(mus):
            keep = [i for i, (nu, _) in enumerate(cols) if nu != mu]
            out[mu] = total - (linalg.rank_rational([[row[i] for i in keep] for row in full]) if keep else 0)
    return out


def _reduce(p: Sparse, basis: list[Sparse]) -> Sparse:
    """``p`` modulo the span of ``basis`` (rows of a reduced row echelon form: each has a leading monomial no other
    row contains)."""
    out = dict(p)
    for b in basis:
        lead = next(iter(b))
        c = out.get(lead)
        if c:
            for m, q in b.items():
                v = out.get(m, Fraction(0)) - c * q
                if v:
                    out[m] = v
                else:
                    out.pop(m, None)
    return out


def _components(items: list[dict[tuple[int, ...], Sparse]]) -> list[list[dict[tuple[int, ...], Sparse]]]:
    """The items grouped by sharing a multidegree (union-find)."""
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[tuple[int, ...], int] = {}
    for i, item in enumerate(items):
        for mu in item:
            if mu in owner:
                parent[find(i)] = find(owner[mu])
            else:
                owner[mu] = i
    groups: dict[int, list[dict[tuple[int, ...], Sparse]]] = defaultdict(list)
    for i, item in enumerate(items):
        groups[find(i)].append(item)
    return list(groups.values())


# ---------------------------------------------------------------------------------------------- polynomials on the image
def on_image(polys: Sequence[Poly], d: int, t: int, a: int | None = None, j: int = 1) -> list[bool]:
    """For polynomials in their coordinates (:func:`their_ring`): does each vanish on the image (rank ``<= a``),
    i.e. lie in the ideal of the closure?  Exact: their parametrization substituted over QQ."""
    R, gens = their_ring(d, t, j)
    th = their_coordinates(d, t, j, a)
    images = [th.values[lab] for lab in their_labels(d, t, j)]
    out = []
    for p in polys:
        if p.context() != R:
            raise InvalidArgumentError(f"polys: {p} is not in the ring of their coordinates for d={d}, t={t}, j={j}")
        out.append(p.compose(*images, ctx=th.ring).is_zero())
    return out


def linear_span(d: int, t: int, j: int = 1) -> dict[str, int]:
    """The linear relations against every linear relation among their coordinates: the rank of the family
    (coefficient vectors over QQ) and ``#their coordinates - #reduced coordinates`` (the kernel of the map onto
    our coordinates, which is onto for ``t >= 2``: the cross coordinates are our reduced ones, scaled)."""
    R, gens = their_ring(d, t, j)
    members = [p for p in family_members("linear", d, t, None, j, "theirs") if not p.is_zero()]
    rows = []
    for p in members:
        row = [Fraction(0)] * len(gens)
        for exps, c in p.to_dict().items():
            row[list(exps).index(1)] = _fraction(c)
        rows.append(row)
    return {
        "members": len(members),
        "rank": linalg.rank_rational(rows) if rows else 0,
        "kernel": len(gens) - len(reduced_keys(d, 1)),
    }


def _full_value(d: int) -> Callable[[Label], Poly]:
    """Their ``t = 1`` coordinates in our full coordinates of one token (``c_1, ...`` in ``full_structure`` order,
    the names Macaulay2's implicitization uses): ``y_K = full_K / |S_3 K|``."""
    keys, _ = full_structure(d, 1, 1)
    R = linalg.rational_polynomial_ring([f"c_{i + 1}" for i in range(len(keys))])
    position = {key: i for i, key in enumerate(keys)}
    gens = R.gens()

    def value(label: Label) -> Poly:
        return gens[position[(0, 0, tuple(f - 1 for f in label))]] * linalg.rational(Fraction(1, _orbit3(label)))

    return value


def t1_against_m2(a: int, timeout: float, d: int = 3) -> dict[str, Any]:
    """Their ``t = 1`` families at ``(d, 1, a)`` against the minimal generators Macaulay2's kernel gives for the
    closure in our full coordinates: how many of each degree their members span (exact ranks over QQ of the
    coefficient vectors; a generator of degree ``D`` is explained when it lies in the span of the members of degree
    ``D`` plus the ideal generated in lower degrees, here empty: every generator has one degree)."""
    from ..._m2.implicitize import implicitize

    arch = Architecture((d, 1), (a,), tokens=1)
    imp = implicitize(arch, coords="full", field="QQ", timeout=timeout)
    value = _full_value(d)
    members = [
        p
        for name in ("t1-low-rank", "t1-lie")
        for p in FAMILIES[name].build(d, 1, 1, min(a, d), value)
        if not p.is_zero()
    ]
    gens = imp.generators
    degrees = Counter(imp.generator_degrees)
    out: dict[str, Any] = {
        "architecture": arch.describe(),
        "dimension": imp.dimension,
        "degree": imp.degree,
        "generators": dict(degrees),
        "m2_seconds": round(imp.seconds, 1),
        "cached": imp.cached,
        "members": len(members),
        "explained": {},
        "members_in_ideal": True,
    }
    if len(set(degrees)) != 1:
        raise InvalidArgumentError(f"{arch.describe()}: generators of several degrees; this comparison takes one")
    D = next(iter(degrees))
    same = [p for p in members if p.total_degree() == D]

    def vec(p: Poly, cols: dict[tuple[int, ...], int]) -> list[Fraction]:
        row = [Fraction(0)] * len(cols)
        for e, c in p.to_dict().items():
            row[cols[tuple(e)]] = _fraction(c)
        return row

    cols: dict[tuple[int, ...], int] = {}
    for p in list(gens) + same:
        for e in p.to_dict():
            cols.setdefault(tuple(e), len(cols))
    # map the members into the ring of the generators (the same names c_1, ... in the same order)
    g_rows = [vec(p, cols) for p in gens]
    m_rows = [vec(p, cols) for p in same]
    rank_g = linalg.rank_rational(g_rows)
    rank_m = linalg.rank_rational(m_rows) if m_rows else 0
    rank_all = linalg.rank_rational(g_rows + m_rows) if m_rows else rank_g
    out["explained"] = {str(D): rank_m}
    out["unexplained"] = {str(D): rank_g - rank_m}
    out["members_in_ideal"] = rank_all == rank_g
    out["members_of_degree"] = {str(k): v for k, v in sorted(Counter(p.total_degree() for p in members).items())}
    return out


def reduced_against_m2(d: int, a: int, timeout: float) -> dict[str, Any]:
    """Macaulay2's kernel of one layer ``(d, 1, a)``, ``t = 2``, reduced coordinates, against their ``t >= 2``
    families pulled back to our coordinates: the members of each generator degree span (exact ranks over QQ)."""
    from ..._m2.implicitize import implicitize

    arch = Architecture((d, 1), (a,), tokens=2)
    imp = implicitize(arch, coords="reduced", field="QQ", timeout=timeout)
    R, value = reduced_ring(d)
    images = list(R.gens())
    gens = [g.compose(*images, ctx=R) for g in imp.generators]  # Macaulay2's names are ours, in our order
    members = [
        p
        for name, fam in FAMILIES.items()
        if fam.regime == "t>=2"
        for p in family_members(name, d, 2, a, 1, "reduced")
        if not p.is_zero()
    ]
    out: dict[str, Any] = {
        "architecture": arch.describe(),
        "dimension": imp.dimension,
        "degree": imp.degree,
        "generators": dict(Counter(imp.generator_degrees)),
        "m2_seconds": round(imp.seconds, 1),
        "cached": imp.cached,
        "variables": list(imp.variables),
    }
    explained, ok = {}, True
    for D in sorted(set(imp.generator_degrees)):
        g = [_sparse(p) for p in gens if p.total_degree() == D]
        m = [_sparse(p) for p in members if p.total_degree() == D]
        space = _Space()
        rank_g, rank_m, rank_all = space.rank(g), space.rank(m), space.rank(g, m)
        explained[str(D)] = rank_m if D == min(imp.generator_degrees) else None
        ok &= rank_all == rank_g or D != min(imp.generator_degrees)
    out["explained"] = explained
    out["members_in_ideal"] = ok
    return out


# ---------------------------------------------------------------------------------------------- the report
#: (d, t, j, a) where their coordinates are checked against :func:`reduced_form`
MAP_SIZES = (
    (2, 2, 1, 2),
    (3, 2, 1, 3),
    (3, 2, 2, 3),
    (3, 3, 1, 2),
    (4, 3, 2, 4),
    (3, 1, 1, 3),
    (3, 1, 1, 1),
    (4, 1, 1, 2),
)
QUICK_MAP_SIZES = ((2, 2, 1, 2), (3, 2, 1, 3), (3, 3, 2, 1), (3, 1, 1, 3))
#: (d, t, a) per family: their default (3, 2, 3) and the sizes around it the families are defined on
FAMILY_SIZES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "linear": ((3, 2, 3), (3, 3, 3), (2, 3, 2), (4, 3, 4), (2, 4, 1)),
    "low-rank": ((2, 2, 1), (3, 2, 1), (3, 2, 2), (3, 3, 2), (4, 2, 2), (4, 2, 3)),
    "cubics": ((3, 2, 3), (3, 2, 2), (3, 2, 1), (4, 2, 4), (4, 3, 2)),
    "syzygies": ((3, 2, 3), (3, 2, 1), (3, 3, 2), (4, 2, 4), (4, 2, 2)),
    "veronese-2": ((2, 2, 2), (3, 2, 3), (3, 2, 2), (3, 3, 3), (4, 2, 4)),
    "veronese-3": ((3, 2, 3), (3, 3, 3), (4, 2, 3), (4, 2, 4)),
    "resultants": ((2, 2, 2), (2, 2, 1), (3, 2, 3), (3, 2, 1), (3, 3, 3), (4, 2, 4)),
    "t1-low-rank": ((4, 1, 1), (5, 1, 1), (6, 1, 1), (6, 1, 2)),
    "t1-lie": ((3, 1, 3), (3, 1, 1), (4, 1, 4), (4, 1, 2), (5, 1, 5)),
}
#: the sizes of the quick run: three per family, the cheap ones (about 3 s in all)
QUICK_FAMILY_SIZES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "linear": ((3, 2, 3), (3, 3, 3), (2, 3, 2)),
    "low-rank": ((2, 2, 1), (3, 2, 1), (3, 2, 2)),
    "cubics": ((3, 2, 3), (3, 2, 2), (3, 2, 1)),
    "syzygies": ((3, 2, 3), (3, 2, 1), (3, 3, 2)),
    "veronese-2": ((2, 2, 2), (3, 2, 3), (3, 2, 2)),
    "veronese-3": ((3, 2, 3), (3, 3, 3), (4, 2, 4)),
    "resultants": ((2, 2, 2), (2, 2, 1), (3, 2, 3)),
    "t1-low-rank": ((4, 1, 1), (5, 1, 1), (6, 1, 1)),
    "t1-lie": ((3, 1, 3), (3, 1, 1), (4, 1, 4)),
}
#: where a family is not an invariant by its construction, checked to be none (the hypothesis fails)
OUTSIDE = {"t1-lie": ((2, 1, 2),)}
#: (d, a, max_degree) of the generator comparison
EXPLAIN_SIZES = ((2, 2, 4), (2, 1, 4), (3, 3, 4), (3, 2, 4), (3, 1, 4), (4, 4, 3), (4, 3, 3), (4, 2, 3), (4, 1, 3))
QUICK_EXPLAIN_SIZES = ((2, 2, 4), (3, 3, 4), (4, 4, 3))
#: their t = 1 values (the issue's): (d, d', a) -> (dimension, degree)
T1_VALUES = {(3, 1, 1): (7, 15), (3, 1, 3): (8, 21)}
#: seconds per Macaulay2 job of the report ((3,1,3), t = 1: about 190 s here, then cached)
M2_TIMEOUT = 900.0


def _family_checks(report: Any, quick: bool) -> list[FamilyCheck]:
    sizes = QUICK_FAMILY_SIZES if quick else FAMILY_SIZES
    found = []
    for name, grid in sizes.items():
        for d, t, a in grid:
            c = check_family(name, d, t, a)
            found.append(c)
            report.add(
                Check(
                    f"{INVARIANTS} every member of '{name}' vanishes on the image",
                    f"d={d}, t={t}, a={a}",
                    c.method,
                    f"{c.nonzero} of {c.nonzero}",
                    f"{c.vanishing} of {c.nonzero} (members built {c.members}, distinct {c.distinct}, "
                    f"degrees {','.join(map(str, c.degrees)) or '-'})",
                    c.passed and c.nonzero > 0,
                    c.seconds,
                    c.to_dict(),
                    size=(d, 1, a),
                )
            )
        for d, t, a in OUTSIDE.get(name, ()):
            c = check_family(name, d, t, a)
            found.append(c)
            report.add(
                Check(
                    f"{INVARIANTS} '{name}' outside its hypothesis ({FAMILIES[name].hypothesis}) is not an invariant",
                    f"d={d}, t={t}, a={a}",
                    c.method,
                    "no member vanishes",
                    f"{c.vanishing} of {c.nonzero} vanish",
                    c.vanishing == 0 and c.nonzero > 0,
                    c.seconds,
                    c.to_dict(),
                    size=(d, 1, a),
                )
            )
    return found


def invariants_section(report: Any, quick: bool, seed: int) -> dict[str, Any]:
    """Item 1: the coordinate map, the families on the image, the generator tables, the t = 1 values."""
    from ..._algebra.closure_degree import degree as closure_degree
    from ..._exact.dimension import dimension as exact_dimension

    out: dict[str, Any] = {}
    maps = []
    for d, t, j, a in QUICK_MAP_SIZES if quick else MAP_SIZES:
        t0 = time.perf_counter()
        m = check_coordinate_map(d, t, j, a)
        maps.append(m)
        report.add(
            Check(
                "their scaled coordinates are the linear forms of reduced_form in ours (A transposed)",
                f"d={d}, t={t}, j={j}, a={a}",
                "their coefficients of V X X^T A X over QQ, divided by their "
                "numbers of terms, against reduced_coordinates(A^T, V) (and full coordinates at t = 1)",
                m["labels"],
                m["agree"],
                not m["disagree"],
                time.perf_counter() - t0,
                m,
                size=(d, 1, a),
            )
        )
    out["coordinate_map"] = maps
    spans = []
    for d, t in ((3, 2), (3, 3), (2, 4), (4, 3)):
        sp = linear_span(d, t)
        spans.append({"d": d, "t": t, **sp})
        report.add(
            Check(
                f"{INVARIANTS} the linear relations span every linear relation of their coordinates",
                f"d={d}, t={t}",
                "rank over QQ of the family's coefficient vectors",
                sp["kernel"],
                sp["rank"],
                sp["rank"] == sp["kernel"],
                details=sp,
                size=(d, 1, d),
            )
        )
    out["linear_span"] = spans
    checks = _family_checks(report, quick)
    out["families"] = [c.to_dict() for c in checks]
    report.tables.append(
        Table(
            "Their families on the image (item 1)",
            ["family", "d", "t", "a", "members", "nonzero", "distinct", "degrees", "vanish on the image", "method"],
            [
                [
                    c.family,
                    c.d,
                    c.t,
                    c.a,
                    c.members,
                    c.nonzero,
                    c.distinct,
                    ",".join(map(str, c.degrees)) or "-",
                    c.vanishing,
                    c.method,
                ]
                for c in checks
            ],
            note="A member vanishes on the image iff it lies in the ideal of the closure (exact substitution over QQ). "
            "t1-lie at d = 2 is outside the construction (d >= 3): a generic binary cubic is a quadric times a "
            "line, the closure is the whole space, and no member vanishes.",
        )
    )
    explained = []
    rows = []
    for d, a, k in QUICK_EXPLAIN_SIZES if quick else EXPLAIN_SIZES:
        e = explain_generators(d, a, k, seed=seed)
        explained.append(e)
        report.add(
            Check(
                "the package's minimal generators are exact and contain their families (consistency)",
                f"d={d}, d'=1, a={a}, degree <= {k}",
                "ranks over QQ per multidegree: lifted generators + "
                "S_1 I_{D-1} against the modular dimension; the families' members added",
                "exact and consistent",
                f"exact={e.generators_exact}, consistent={e.consistent}",
                e.generators_exact and e.consistent,
                e.seconds,
                size=(d, 1, a),
            )
        )
        for r in e.rows:
            fams = ", ".join(f"{n} {v}" for n, v in r["by_family"].items() if v)
            rows.append(
                [
                    f"({d},1,{a})",
                    r["degree"],
                    _multidegree_text(r["representative"]),
                    r["multidegrees"],
                    r["generators_each"],
                    r["generators"],
                    r["explained"],
                    r["unexplained"],
                    fams or "-",
                ]
            )
    out["explained"] = [e.to_dict() for e in explained]
    report.tables.append(
        Table(
            "The package's minimal generators explained by their families (item 1)",
            [
                "size",
                "degree",
                "multidegree (A rows; V rows; z)",
                "multidegrees",
                "generators each",
                "generators",
                "explained",
                "unexplained",
                "explained by one family alone",
            ],
            rows,
            note="Per orbit of multidegrees under permutations of the indices. Explained: in the span of the families' "
            "members of that degree plus the ideal generated in lower degrees (exact ranks over QQ; members that are "
            "not torus-homogeneous, the resultant quartics on their lines, count through the homogeneous part of "
            "their span together with the other families).",
        )
    )
    default = next((e for e in explained if (e.d, e.a) == (3, 3)), None)
    if default is not None:
        report.add(
            Check(
                f"{INVARIANTS} at their default size the families generate the ideal (their candidate "
                "ideal equals the implicit one)",
                f"d=3, d'=1, a=3, degree <= {default.max_degree}",
                "generators not in the span of the families' members plus lower degrees",
                0,
                sum(default.unexplained.values()),
                not sum(default.unexplained.values()),
                default.seconds,
                size=(3, 1, 3),
            )
        )
    for e in explained:
        un = {D: n for D, n in e.unexplained.items() if n}
        if un:
            report.findings.append(
                f"New equations at d={e.d}, d'=1, a={e.a}: "
                + "; ".join(
                    f"{n} of the {e.generator_count[D]} minimal generators of degree {D} are not explained by "
                    f"their families"
                    for D, n in sorted(un.items())
                )
                + " (multidegrees in the table); their families generate the ideal only up to degree "
                f"{e.generates_up_to}."
            )
    t1 = []
    for (d, e_, a), (dim_theirs, deg_theirs) in T1_VALUES.items():
        t0 = time.perf_counter()
        arch = Architecture((d, e_), (a,), tokens=1)
        dim = exact_dimension(arch)
        deg = closure_degree(arch, timeout=300.0)
        t1.append(
            {
                "architecture": arch.describe(),
                "dimension": dim.dimension,
                "certified": dim.certified,
                "closed_by": dim.closed_by,
                "degree": deg.degree,
                "degree_method": deg.method,
                "confirmed_by": deg.confirmed_by,
                "theirs": [dim_theirs, deg_theirs],
            }
        )
        report.add(
            Check(
                f"{INVARIANTS} t = 1 dimension and degree",
                f"d={d}, d'={e_}, a={a}, t=1",
                "ag_attention.dimension (certified) and ag_attention.degree (formula, msolve counts)",
                f"dim {dim_theirs}, degree {deg_theirs}",
                f"dim {dim.dimension} ({'certified' if dim.certified else 'lower bound'}), degree {deg.degree}",
                dim.dimension == dim_theirs and dim.certified and deg.degree == deg_theirs,
                time.perf_counter() - t0,
                t1[-1],
                size=(d, e_, a),
            )
        )
    out["t1_values"] = t1
    return out


def _multidegree_text(rep: Sequence[Sequence[int]]) -> str:
    return "; ".join(",".join(map(str, part)) for part in rep)


def m2_section(report: Any, quick: bool) -> dict[str, Any]:
    """Macaulay2's kernels against their families (full run only: the quick run needs no external engine):
    (2,1,2) and (2,1,1) at t = 2, the t = 1 ideals of (3,1,3) and (3,1,1)."""
    out: dict[str, Any] = {"reduced": [], "t1": []}
    if quick:
        out["skipped"] = "quick run: no Macaulay2"
        return out
    for d, a in ((2, 2), (2, 1)):
        t0 = time.perf_counter()
        r = reduced_against_m2(d, a, M2_TIMEOUT)
        out["reduced"].append(r)
        D = min(int(k) for k in r["generators"])
        report.add(
            Check(
                f"{INVARIANTS} their families span Macaulay2's generators of the lowest degree",
                f"d={d}, d'=1, a={a}, t=2 (reduced)",
                "implicitize (Macaulay2 kernel) and exact ranks over QQ",
                f"{r['generators'][D]} of degree {D}",
                f"{r['explained'][str(D)]} spanned",
                r["explained"][str(D)] == r["generators"][D] and r["members_in_ideal"],
                time.perf_counter() - t0,
                r,
                size=(d, 1, a),
            )
        )
    for a in (3, 1):
        t0 = time.perf_counter()
        r = t1_against_m2(a, M2_TIMEOUT)
        out["t1"].append(r)
        D = next(iter(r["generators"]))
        if a == 3:
            report.add(
                Check(
                    f"{INVARIANTS} the Lie-flattening minors generate the t = 1 ideal (their candidate "
                    "ideal equals the implicit one)",
                    "d=3, d'=1, a=3, t=1 (full coordinates)",
                    "implicitize (Macaulay2 kernel) and exact ranks over QQ",
                    f"{r['generators'][D]} of degree {D}",
                    f"{r['explained'][str(D)]} spanned",
                    r["explained"][str(D)] == r["generators"][D] and r["members_in_ideal"],
                    time.perf_counter() - t0,
                    r,
                    size=(3, 1, 3),
                )
            )
        else:
            report.findings.append(
                f"t = 1, d=3, a=1 (the totally split cubics, dim {r['dimension']}, degree {r['degree']}): the ideal "
                f"has {r['generators'][D]} minimal generators of degree {D}; their t = 1 families (low-rank: none at "
                f"d = 3; Lie: {r['members']} nonzero minors, all of degree 8) explain {r['explained'][str(D)]} of "
                "them: the equations of this Chow variety (products of three linear forms) are new to their list."
            )
    return out
