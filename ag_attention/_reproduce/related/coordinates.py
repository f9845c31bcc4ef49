"""Their coordinates (Alexandr, Duan, Montúfar, arXiv:2604.15632) and the map onto ours: the first step of
:mod:`.invariants`.

They take one output coordinate ``(V X X^T A X)_j`` of one layer with ``d' = 1`` and ``rank A <= a``, and as
coordinates its coefficients in the cubic monomials of ``X``, each divided by its number of terms as a polynomial in
generic ``(A, V)``.  Their ``A`` is the transpose of ours (``phi(X)_i = sum_j (x_i^T A x_j) V x_j``), and their
coordinates are linear in our reduced ones (:func:`reduced_form`):

* ``y[(u,n),(v,n),(l,j)]`` (``n != j``) ``= c[l, (u,v)] / w(u,v)``, with ``c[l, (u,v)]`` the coefficient of
  ``z_u z_v`` in ``q_l(z) = (A_l . z)(V . z)`` and ``w(u,v) = 1`` if ``u = v``, else 2: the entries of the
  symmetric matrix of the quadric ``q_l``;
* ``y[(a,j),(b,j),(c,j)] = sum_{p} c[p, {a,b,c} - p] / |S_3 . (a,b,c)|`` (``p`` over the distinct entries): the
  symmetric tensor of the cubic ``(z^T A z)(V z)``.  The same formula gives their ``t = 1`` coordinates.

The map is checked exactly (:func:`check_coordinate_map`); :func:`their_ring` and :func:`reduced_ring` are the rings
the families of :mod:`.families` take their values in.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..._checks import check_int
from ..._errors import InvalidArgumentError
from ..._exact import linalg
from ..._models import full_coordinates, full_structure, reduced_coordinates, reduced_keys, reduced_names

__all__ = [
    "REPOSITORY",
    "INVARIANTS",
    "Label",
    "their_labels",
    "reduced_form",
    "TheirCoordinates",
    "their_coordinates",
    "check_coordinate_map",
    "their_ring",
    "reduced_ring",
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
        check_int(v, name, minimum=1)
    if j > t:
        raise InvalidArgumentError(f"j={j}: the output token must lie in 1..t={t}")
    if d > 6:
        raise InvalidArgumentError(f"d={d}: the invariant families are built here for d <= 6")
    a = d if a is None else check_int(a, "a", minimum=1)
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


# ---------------------------------------------------------------------------------------------- their rings
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
