"""The real critical points of :func:`~ag_attention._landscape.critical.critical_points` in ball arithmetic.

Each real solution, an isolating box of msolve's (:func:`_point`) or a box the Krawczyk test certified
(:func:`_certified_point`), is evaluated on its box with python-flint's ``arb``: the loss (an interval), the ranks
of ``A`` and ``V`` as far as proven (an ``r x r`` minor whose ball excludes 0 proves rank >= r), and the Hessian's
signature on the slice (its eigenvalues enclosed): a *minimum* when all are proven positive, a *saddle* when proven
of both signs, otherwise undecided.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import ComputationError
from .._exact import ball, balls, determinant, evaluate, interval, signature
from .._numeric import BITS
from .critical_result import CriticalPoint
from .square import SquareSystem


def _rank_text(M: list[list[Any]], at_most: int | None = None) -> str:
    """The rank of a ball matrix as far as proven: the largest ``r`` with an ``r x r`` minor whose ball excludes 0
    (every matrix in the balls, the exact one included, has rank ``>= r``); exact when ``r`` is the full rank or
    reaches ``at_most``, a bound the matrix has by construction (``A = B [I | K] R`` has rank at most ``a``)."""
    rows, cols = len(M), len(M[0]) if M else 0
    proven = 0
    for r in range(min(rows, cols), 0, -1):
        for I in itertools.combinations(range(rows), r):
            for J in itertools.combinations(range(cols), r):
                if determinant(np.array([[M[i][j] for j in J] for i in I], dtype=object), 200).excludes_zero:
                    proven = r
                    break
            if proven:
                break
        if proven:
            break
    top = min(rows, cols) if at_most is None else min(rows, cols, at_most)
    return str(proven) if proven == top else f">= {proven}"


_HESSIANS: dict[int, tuple[Any, tuple[str, ...], list[list[Any]]]] = {}


def _hessian_terms(loss: Any, names: tuple[str, ...]) -> list[list[Any]]:
    """The second derivatives of ``loss`` as term dictionaries (computed once per loss polynomial)."""
    hit = _HESSIANS.get(id(loss))
    if hit is not None and hit[0] is loss and hit[1] == names:
        return hit[2]
    terms = [[loss.derivative(i).derivative(j).to_dict() for j in names] for i in names]
    _HESSIANS.clear()
    _HESSIANS[id(loss)] = (loss, names, terms)
    return terms


def _point(
    box: list[tuple[Fraction, Fraction]],
    variables: Sequence[str],
    loss: Any,
    names: list[str],
    ring: Any,
    cut: Sequence[int],
    d: int,
    e: int,
    a: int,
) -> CriticalPoint:
    """One real solution: ball arithmetic on its box (see the module docstring).

    The Hessian is taken at the balanced point of the same rescaling orbit (``|A| = |V|``: the loss is
    invariant, so the point stays critical; the slice's scale would make it ill-conditioned) on the
    coordinate hyperplane transversal to the orbit (its signature is that of the quotient's Hessian)."""
    named = dict(zip(variables, box))
    mids = {n: (lo + hi) / 2 for n, (lo, hi) in named.items()}
    norm_a = sum(float(mids[n]) ** 2 for n in names if n[0] in "ab")
    norm_v = sum(float(mids[n]) ** 2 for n in names if n[0] == "v")
    c = Fraction((norm_v / norm_a) ** 0.25 if norm_a > 0 else 1.0).limit_denominator(10**12)

    def scaled(n: str) -> Any:
        lo, hi = named[n]
        f = c if n[0] in "ab" else (1 / c if n[0] == "v" else Fraction(1))
        return interval(min(lo * f, hi * f), max(lo * f, hi * f))

    vals = [scaled(n) for n in names]
    value = evaluate(loss.to_dict(), vals)
    H = [[evaluate(t, vals) for t in row] for row in _hessian_terms(loss, tuple(names))]
    direction = [
        float(v.mid()) if n[0] in "ab" else -float(v.mid()) if n[0] == "v" else 0.0 for n, v in zip(names, vals)
    ]
    drop = int(np.argmax(np.abs(direction)))  # the coordinate plane without it is transversal to the orbit
    keep = [k for k in range(len(names)) if k != drop]
    pos, neg, und = signature([[H[i][j] for j in keep] for i in keep])
    vdict = dict(zip(names, vals))
    if a < d:
        B = [[vdict[f"b{k}_{cc}"] for cc in range(1, a + 1)] for k in range(1, d + 1)]
        Cm = [
            [ball(1 if cc == l else 0) if l <= a else vdict[f"k{cc}_{l}"] for l in range(1, d + 1)]
            for cc in range(1, a + 1)
        ]
        Am = [[sum((B[k][cc] * Cm[cc][l] for cc in range(a)), ball(0)) for l in range(d)] for k in range(d)]
    else:
        Am = [[vdict[f"a{k}_{l}"] for l in range(1, d + 1)] for k in range(1, d + 1)]
    Vm = [[vdict[f"v{m}_{l}"] for l in range(1, d + 1)] for m in range(1, e + 1)]
    ra, rv = _rank_text(Am, a), _rank_text(Vm)
    kind = "pure"  # the system's s * h1 * h2 = 1 keeps it off the critical locus of the parametrization
    del cut, ring

    def mid(M: list[list[Any]]) -> np.ndarray:
        return np.array([[float(x.mid()) for x in row] for row in M])

    return CriticalPoint(
        kind, named, mid(Am), mid(Vm), (float(value.lower()), float(value.upper())), ra, rv, pos, neg, und
    )


def _first_of_each(points: Sequence[CriticalPoint]) -> list[CriticalPoint]:
    """One point per image ``x(A, V)`` (to 1e-7 relative): the critical points of the function space."""
    kept: list[CriticalPoint] = []
    for p in points:
        x = p.coordinates
        if all(np.max(np.abs(x - q.coordinates)) > 1e-7 * (1 + np.max(np.abs(x))) for q in kept):
            kept.append(p)
    return kept


def _distinct_functions(points: Sequence[CriticalPoint]) -> int:
    return len(_first_of_each(points))


def _certified_point(S: Any, cert: Any, G: np.ndarray, w: np.ndarray, c: Any) -> CriticalPoint:
    """A real critical point from a certified box (:mod:`ag_attention._numeric.certify`) of the square system
    (:mod:`.square`), all in ball arithmetic on the box: the loss, the ranks of ``A`` and ``V`` as far as proven,
    and the Hessian's signature on the slice, from the bordered Jacobian of the square system (its inertia is
    that of the Hessian on the slice plus one positive and one negative eigenvalue)."""
    with balls.precision(BITS):
        A, V, _ = S.ball_weights(cert.box, cert.chart)
        sx = balls.complex_ball(Fraction(S.scale_x))
        A = [[v.real * sx.real for v in row] for row in A]
        V = [[v.real for v in row] for row in V]
        x = [v.real * sx.real for v in S.ball_coordinates(cert.box, cert.chart)]
        n = len(x)
        Gb = [[balls.ball(G[i, j]) for j in range(n)] for i in range(n)]
        loss = balls.ball(c)
        for i in range(n):
            loss += x[i] * (sum((Gb[i][j] * x[j] for j in range(n)), balls.ball(0)) - 2 * balls.ball(w[i]))
        _, JF = S.ball_evaluate(cert.box, list(_target_of(S, w)), jacobian=True, chart=cert.chart)
        H = [[JF[i, j].real for j in range(S.n)] for i in range(S.n)]
    pos, neg, und = balls.signature(H)
    pos, neg = max(pos - 1, 0), max(neg - 1, 0)  # the border's own pair of eigenvalues
    d, e = S.d, S.e
    box: dict[str, tuple[Fraction, Fraction]] = {}
    for name, enclosure in [(f"a{k + 1}_{l + 1}", A[k][l]) for k in range(d) for l in range(d)] + [
        (f"v{m + 1}_{l + 1}", V[m][l]) for m in range(e) for l in range(d)
    ]:
        box[name] = (Fraction(float(enclosure.lower())), Fraction(float(enclosure.upper())))

    def mid(M: list[list[Any]]) -> np.ndarray:
        return np.array([[float(v.mid()) for v in row] for row in M])

    return CriticalPoint(
        "pure",
        box,
        mid(A),
        mid(V),
        (float(loss.lower()), float(loss.upper())),
        _rank_text(A, S.a),
        _rank_text(V),
        pos,
        neg,
        und,
        "krawczyk",
    )


def _target_of(S: SquareSystem, w: np.ndarray) -> np.ndarray:
    return S.target(list(w))


def _match(arch: Architecture, hom: Any, points: list[CriticalPoint], G: np.ndarray, w: np.ndarray, c: Any) -> None:
    """Each certified real solution is one of msolve's real points (compared in the function space)."""
    if not points:
        return
    xs = [p.coordinates for p in points]
    for s in hom.real:
        q = _certified_point(hom.system, s, G, w, c)
        x = q.coordinates
        scale = 1 + float(np.max(np.abs(x)))
        if min(float(np.max(np.abs(x - y))) for y in xs) > 1e-6 * scale:
            raise ComputationError(
                f"critical_points of {arch.describe()}: a certified real critical point (loss "
                f"{sum(q.loss) / 2:.6g}) is none of msolve's real points: a contradiction; no "
                "result is reported"
            )
