"""Ball arithmetic on one box of the square system (:class:`~.square.SquareSystem`): its value and Jacobian for the
Krawczyk test, the weights, coordinates and invariants it holds, and whether it is proven off the critical locus.
The system's ``ball_*`` methods call these."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._exact import balls

if TYPE_CHECKING:  # square.py imports this module (its methods call these functions)
    from .square import SquareSystem

__all__ = ["ball_coordinates", "ball_evaluate", "ball_invariants", "ball_weights", "off_critical_locus"]


def ball_evaluate(
    S: SquareSystem, box: np.ndarray, w: Sequence[Any], jacobian: bool = True, *, chart: np.ndarray
) -> tuple[np.ndarray, Any]:
    """:meth:`SquareSystem.ball_evaluate`."""
    d, e, a = S.d, S.e, S.a
    n, n_x, m = S.n, S.n_x, S.n_A + e * d
    n_u = d * d + e * d
    cb = balls.complex_ball
    zero = cb(0)
    theta = list(box)
    chart = np.asarray(chart, dtype=complex)
    l = [cb(v) for v in chart[: e * d]]
    Vb = theta[S.n_A : m]
    Ju = [[zero] * m for _ in range(n_u)]
    for j in range(e * d):
        Ju[d * d + j][S.n_A + j] = cb(1)
    chart_terms: list[tuple[int, int, int, Any]] = []  # (A entry, unknown 1, unknown 2, coefficient)
    if S.charted:
        R, Bm, CR, A = ball_chart(S, theta, chart)
        for k in range(d):
            for j in range(d):
                for c in range(a):
                    Ju[k * d + j][k * a + c] = CR[c][j]
                    for l_ in range(d - a):
                        col = d * a + c * (d - a) + l_
                        Ju[k * d + j][col] = Bm[k][c] * R[a + l_][j]
                        chart_terms.append((k * d + j, k * a + c, col, R[a + l_][j]))
    else:
        A = [[theta[k * d + j] for j in range(d)] for k in range(d)]
        for k in range(d * d):
            Ju[k][k] = cb(1)
    u = [v for row in A for v in row] + list(Vb)
    i_, p_, q_, c_ = S.x_terms
    x = [zero] * n_x
    Jx = [[zero] * n_u for _ in range(n_x)]
    for i, p, q, c in zip(i_, p_, q_, c_):
        cc = cb(c)
        x[i] = x[i] + cc * u[p] * u[q]
        Jx[i][p] = Jx[i][p] + cc * u[q]
        Jx[i][q] = Jx[i][q] + cc * u[p]
    Gm = balls.complex_matrix(S.G)
    r = Gm * balls.complex_matrix([[v] for v in x]) - balls.complex_matrix([[cb(v)] for v in w])
    Jxm, Jum = balls.complex_matrix(Jx), balls.complex_matrix(Ju)
    g = Jxm.transpose() * r
    Fg = Jum.transpose() * g
    lam = theta[-1]
    F = [Fg[j, 0] for j in range(m)]
    for j in range(e * d):
        F[S.n_A + j] = F[S.n_A + j] + lam * l[j]
    F.append(sum((l[j] * Vb[j] for j in range(e * d)), zero) - cb(1))
    Fv = np.array(F, dtype=object)
    if not jacobian:
        return Fv, None
    Hu = Jxm.transpose() * (Gm * Jxm)
    for i, p, q, c in zip(i_, p_, q_, c_):
        rc = r[i, 0] * cb(c)
        Hu[p, q] = Hu[p, q] + rc
        Hu[q, p] = Hu[q, p] + rc
    H = Jum.transpose() * (Hu * Jum)
    for slot, j1, j2, coeff in chart_terms:
        v = g[slot, 0] * coeff
        H[j1, j2] = H[j1, j2] + v
        H[j2, j1] = H[j2, j1] + v
    JF = balls.complex_matrix(np.zeros((n, n)))
    for i in range(m):
        for j in range(m):
            JF[i, j] = H[i, j]
    for j in range(e * d):
        JF[S.n_A + j, m] = l[j]
        JF[m, S.n_A + j] = l[j]
    return Fv, JF


def ball_weights(
    S: SquareSystem, box: np.ndarray, chart: np.ndarray
) -> tuple[list[list[Any]], list[list[Any]], list[list[Any]] | None]:
    """:meth:`SquareSystem.ball_weights`."""
    d, e = S.d, S.e
    theta = list(box)
    chart = np.asarray(chart, dtype=complex)
    V = [[theta[S.n_A + mm * d + j] for j in range(d)] for mm in range(e)]
    if not S.charted:
        return [[theta[k * d + j] for j in range(d)] for k in range(d)], V, None
    _, Bm, _, A = ball_chart(S, theta, chart)
    return A, V, Bm


def ball_chart(S: SquareSystem, theta: list[Any], chart: np.ndarray) -> tuple[list[list[Any]], ...]:
    """Balls of ``R``, ``B``, ``C R = [I | K] R`` and ``A = B C R`` on a box (the chart ``a < d``)."""
    d, e, a = S.d, S.e, S.a
    cb = balls.complex_ball
    zero = cb(0)
    R = [[cb(v) for v in chart[e * d + i * d : e * d + (i + 1) * d]] for i in range(d)]
    Bm = [[theta[k * a + c] for c in range(a)] for k in range(d)]
    K = [[theta[d * a + c * (d - a) + l_] for l_ in range(d - a)] for c in range(a)]
    CR = [[R[c][j] + sum((K[c][l_] * R[a + l_][j] for l_ in range(d - a)), zero) for j in range(d)] for c in range(a)]
    A = [[sum((Bm[k][c] * CR[c][j] for c in range(a)), zero) for j in range(d)] for k in range(d)]
    return R, Bm, CR, A


def ball_coordinates(S: SquareSystem, box: np.ndarray, chart: np.ndarray) -> list[Any]:
    """:meth:`SquareSystem.ball_coordinates`."""
    A, V, _ = ball_weights(S, box, chart)
    u = [v for row in A for v in row] + [v for row in V for v in row]
    x = [balls.complex_ball(0)] * S.n_x
    for i, p, q, c in zip(*S.x_terms):
        x[i] = x[i] + balls.complex_ball(c) * u[p] * u[q]
    return x


def ball_invariants(S: SquareSystem, box: np.ndarray, chart: np.ndarray) -> list[Any]:
    """:meth:`SquareSystem.ball_invariants`."""
    A, V, _ = ball_weights(S, box, chart)
    return [A[k][l] * V[mm][j] for k in range(S.d) for l in range(S.d) for mm in range(S.e) for j in range(S.d)]


def off_critical_locus(S: SquareSystem, box: np.ndarray, chart: np.ndarray) -> bool:
    """:meth:`SquareSystem.off_critical_locus`."""
    A, V, Bm = ball_weights(S, box, chart)
    if not balls.some_minor_excludes_zero(A + V, 2):
        return False
    if Bm is not None:
        return balls.some_minor_excludes_zero(Bm, S.a)
    return balls.some_minor_excludes_zero(A, 1)
