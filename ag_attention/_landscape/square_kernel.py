"""The square system, compiled: its derivatives in the weights ``u = (A, V)`` (:func:`u_space`) and the whole
system in a chart's unknowns (:func:`system`).

docs/math/landscape.md (landscape-square).  With ``x(u)`` the reduced coordinates (bilinear: ``x_i = sum_t c_t
u_(p_t) u_(q_t)`` over the terms ``t`` of coordinate ``i = i_t``, ``p_t != q_t``), ``r = G x - w`` and ``J_x =
dx/du``, a batch of points gets

    g = J_x^T r,      M = J_x^T G J_x + sum_i r_i d^2 x_i / du^2,      g_w = J_x^T (D x - dw),

the gradient of ``L/2``, its Hessian and its derivative along ``dw`` (``D``: the form's own derivative along the
path, zero for a fixed form).  Each point's ``J_x`` is never formed: ``G J_x`` is ``2 n_x`` products a term and
``J_x^T (G J_x)`` ``2 n_u`` (at (4,1,4), 64 terms: 7,680 complex products for the Hessian against numpy's 28,800
with the padded columns it needed), one compiled loop over the points (numba,
:func:`ag_attention._numeric.kernels.compiled`).  :func:`system` adds the chart (the reference is
:class:`~ag_attention._landscape.square.SquareSystem`, whose unknowns and order it keeps): ``u`` from the chart's
unknowns, then ``F = J_u^T g + lambda (0, l)``, ``l . V - 1`` and its Jacobian ``J_u^T M J_u`` plus the chart's
second derivatives against ``g``, bordered by ``(0, l)``, in compiled loops too (measured at (3,1,1), the numpy
chart map was 40 % of a tracker's step).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._numeric import kernels

__all__ = ["Terms", "u_space", "system", "warm"]


# long: one compiled loop over the points, each quantity of the module docstring in turn
def _u_space(U: Any, W: Any, DW: Any, Gr: Any, Gi: Any, D: Any, ti: Any, tp: Any, tq: Any, tc: Any, jac: bool,
             g_out: Any, M_out: Any, gw_out: Any) -> None:  # fmt: skip
    # G and the long rows (x, r, J_x^T G, G J_x, M) are held as real and imaginary parts apart: the loops along a
    # row are then plain real multiply-adds, which the compiler vectorizes (complex numbers side by side it did
    # not: measured at (4,1,4), the Jacobian 10.3 -> 5.8 us a point); the products are the same, term by term
    B, n_u = U.shape
    n_x = Gr.shape[1]
    nt = ti.size
    xr = np.empty(n_x)
    xi = np.empty(n_x)
    rr = np.empty(n_x)
    ri = np.empty(n_x)
    Ar = np.empty((n_u, n_x))  # J_x^T G
    Ai = np.empty((n_u, n_x))
    Tr = np.empty((n_x, n_u))  # G J_x
    Ti = np.empty((n_x, n_u))
    Mr = np.empty((n_u, n_u))
    Mi = np.empty((n_u, n_u))
    for b in range(B):
        gb = b if Gr.shape[0] > 1 else 0
        wb = W[b] if W.shape[0] > 1 else W[0]
        u = U[b]
        xr[:] = 0.0
        xi[:] = 0.0
        for t in range(nt):
            v = tc[t] * u[tp[t]] * u[tq[t]]
            xr[ti[t]] += v.real
            xi[ti[t]] += v.imag
        for i in range(n_x):
            rr[i] = -wb[i].real
            ri[i] = -wb[i].imag
        for k in range(n_x):  # r += x_k G[:, k], G's column k read as its row k (G symmetric)
            a, c = xr[k], xi[k]
            for i in range(n_x):
                gr, gi = Gr[gb, k, i], Gi[gb, k, i]
                rr[i] += a * gr - c * gi
                ri[i] += a * gi + c * gr
        g = g_out[b]
        g[:] = 0
        for t in range(nt):
            ci = tc[t] * complex(rr[ti[t]], ri[ti[t]])
            g[tp[t]] += ci * u[tq[t]]
            g[tq[t]] += ci * u[tp[t]]
        if DW.shape[0]:
            dwb = DW[b] if DW.shape[0] > 1 else DW[0]
            gw = gw_out[b]
            gw[:] = 0
            for t in range(nt):
                i = ti[t]
                dr = -dwb[i]
                if D.shape[0]:
                    for k in range(n_x):
                        dr += D[b, i, k] * complex(xr[k], xi[k])
                cd = tc[t] * dr
                gw[tp[t]] += cd * u[tq[t]]
                gw[tq[t]] += cd * u[tp[t]]
        if jac:
            # J_x^T G by rows (G symmetric: row i of G is its column i), then transposed: rows of G J_x
            Ar[:, :] = 0.0
            Ai[:, :] = 0.0
            for t in range(nt):
                i, p, q = ti[t], tp[t], tq[t]
                a1, a2 = tc[t] * u[q], tc[t] * u[p]
                for k in range(n_x):  # one loop a row written: the compiler vectorizes each
                    Ar[p, k] += a1.real * Gr[gb, i, k] - a1.imag * Gi[gb, i, k]
                    Ai[p, k] += a1.real * Gi[gb, i, k] + a1.imag * Gr[gb, i, k]
                for k in range(n_x):
                    Ar[q, k] += a2.real * Gr[gb, i, k] - a2.imag * Gi[gb, i, k]
                    Ai[q, k] += a2.real * Gi[gb, i, k] + a2.imag * Gr[gb, i, k]
            for k in range(n_x):
                for col in range(n_u):
                    Tr[k, col] = Ar[col, k]
                    Ti[k, col] = Ai[col, k]
            Mr[:, :] = 0.0
            Mi[:, :] = 0.0
            for t in range(nt):
                i, p, q = ti[t], tp[t], tq[t]
                a1, a2 = tc[t] * u[q], tc[t] * u[p]
                for col in range(n_u):
                    Mr[p, col] += a1.real * Tr[i, col] - a1.imag * Ti[i, col]
                    Mi[p, col] += a1.real * Ti[i, col] + a1.imag * Tr[i, col]
                for col in range(n_u):
                    Mr[q, col] += a2.real * Tr[i, col] - a2.imag * Ti[i, col]
                    Mi[q, col] += a2.real * Ti[i, col] + a2.imag * Tr[i, col]
                cr = tc[t] * complex(rr[i], ri[i])
                Mr[p, q] += cr.real
                Mi[p, q] += cr.imag
                Mr[q, p] += cr.real
                Mi[q, p] += cr.imag
            M = M_out[b]
            for row in range(n_u):
                for col in range(n_u):
                    M[row, col] = complex(Mr[row, col], Mi[row, col])


@dataclass(frozen=True)
class Terms:
    """The terms ``(i, p, q, c)`` of ``x`` as the kernel reads them (int64 and complex, C-contiguous), checked
    once (:meth:`of`): a system's evaluation pays no check of them a call.  The arrays are copies made by :meth:`of`
    and never written (the kernel reads them without bounds checks)."""

    i: np.ndarray
    p: np.ndarray
    q: np.ndarray
    c: np.ndarray
    x_needed: int  # the coordinates and weights the indices reach (1 + the largest)
    u_needed: int

    @classmethod
    def of(cls, i: Any, p: Any, q: Any, c: Any) -> Terms:
        ii, pp, qq = (np.array(v, dtype=np.int64, order="C") for v in (i, p, q))
        cc = np.array(c, dtype=np.complex128, order="C")
        if not (ii.shape == pp.shape == qq.shape == cc.shape and ii.ndim == 1):
            raise ValueError(f"terms: four vectors of one length expected, got {[v.shape for v in (ii, pp, qq, cc)]}")
        if ii.size and min(ii.min(), pp.min(), qq.min()) < 0:
            raise ValueError("terms: a negative index")
        if np.any(pp == qq):
            raise ValueError("terms: a term with p = q (x is bilinear in distinct weights)")
        top = (int(ii.max()) + 1, int(max(pp.max(), qq.max())) + 1) if ii.size else (0, 0)
        return cls(ii, pp, qq, cc, *top)


_LOCK = threading.Lock()
_u_space_c: list[Any] = []
_u_of_c: list[Any] = []
_to_system_c: list[Any] = []


def warm() -> None:
    """Compile the kernel and the tracker's (or read them from numba's cache: :func:`kernels.warm`)."""
    kernels.warm()
    with _LOCK:
        if not _u_space_c:
            from numba import types as T

            c2, c3, i1, f3 = T.complex128[:, ::1], T.complex128[:, :, ::1], T.int64[::1], T.float64[:, :, ::1]
            # M: the Jacobian's block where A is free (a view, any layout)
            signature = T.void(
                c2, c2, c2, f3, f3, c3, i1, i1, i1, T.complex128[::1], T.boolean, c2, T.complex128[:, :, :], c2
            )
            _u_space_c.append(kernels.compiled(_u_space, signature))
            _u_of_c.append(kernels.compiled(_u_of, T.void(c2, c2, T.int64, T.int64, T.int64, c2, c3)))
            signature = T.void(c2, c2, c3, c2, c3, c2, T.int64, T.int64, T.int64, T.boolean, c2, c3, c2)
            _to_system_c.append(kernels.compiled(_to_system, signature))


def u_space(
    u: np.ndarray,
    w: np.ndarray,
    dw: np.ndarray | None,
    G: np.ndarray,
    D: np.ndarray | None,
    terms: Terms | tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    jacobian: bool,
    M_out: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``g``, ``M`` (None without ``jacobian``) and ``g_w`` (None without ``dw``) of the module docstring at the
    points ``u`` (``(B, n_u)``) for targets ``w`` and directions ``dw`` (``(B, n_x)`` or ``(n_x,)``), the form
    ``G`` (symmetric: a row is read as its column; ``(n_x, n_x)`` or one per point ``(B, n_x, n_x)``) and its
    derivative ``D`` (one per point, or None); ``terms``: ``(i, p, q, c)`` of ``x`` (or :class:`Terms`: checked
    once); ``M_out``: where ``M`` goes (a ``(B, n_u, n_u)`` complex view, e.g. the block of a Jacobian: no copy)."""
    B, n_u = u.shape
    n_x = G.shape[-1]
    c128 = np.complex128

    def arr(x: Any) -> np.ndarray:  # complex, C-contiguous and writeable, as the kernel is compiled
        return np.require(x, c128, ("C", "W"))

    def rows(x: Any) -> np.ndarray:  # one row for every point (not copied B times), or one per point
        return arr(np.asarray(x).reshape(-1, n_x))

    U, W, Gs = arr(u), rows(w), arr(G).reshape(-1, n_x, n_x)
    DW = rows(dw) if dw is not None else np.empty((0, n_x), c128)
    Ds = arr(D) if D is not None and dw is not None else np.empty((0, n_x, n_x), c128)
    M = M_out if jacobian and M_out is not None else np.empty((B if jacobian else 0, n_u, n_u), dtype=c128)
    t = terms if isinstance(terms, Terms) else Terms.of(*terms)
    # the kernel reads without bounds checks: every shape is checked here (one row, or one per point)
    bad = [
        f"{name} {x.shape}"
        for name, x, ok in (
            ("w", W, W.shape[0] in (1, B)),
            ("dw", DW, DW.shape[0] in (0, 1, B)),
            ("G", Gs, Gs.shape[0] in (1, B) and G.ndim in (2, 3)),
            ("D", Ds, Ds.shape[0] in (0, B) and Ds.shape[1:] == (n_x, n_x)),
            ("M_out", M, M.shape == ((B if jacobian else 0), n_u, n_u)),
        )
        if not ok
    ]
    if t.x_needed > n_x or t.u_needed > n_u:
        bad.append("terms (an index out of range)")
    if bad:
        raise ValueError(f"u_space: {B} points of {n_u} weights and {n_x} coordinates; wrong shapes: {', '.join(bad)}")
    g = np.empty((B, n_u), dtype=c128)
    gw = np.empty((B if dw is not None else 0, n_u), dtype=c128)
    if B:
        if not _u_space_c:
            warm()
        Gr, Gi = np.ascontiguousarray(Gs.real), np.ascontiguousarray(Gs.imag)
        _u_space_c[0](U, W, DW, Gr, Gi, Ds, t.i, t.p, t.q, t.c, bool(jacobian), g, M, gw)
    return g, (M if jacobian else None), (gw if dw is not None else None)


def _u_of(theta: Any, chart: Any, d: int, e: int, a: int, U: Any, CRs: Any) -> None:
    # u = (A, V) of each point in its chart: A = B (C R), C R = R_:a + K R_a: (a < d; C R kept in CRs), or A
    # itself (free)
    B = theta.shape[0]
    dd, ed = d * d, e * d
    charted = a < d
    nA = d * a + a * (d - a) if charted else dd
    for b in range(B):
        th = theta[b]
        if charted:
            CR = CRs[b]
            for c in range(a):
                for j in range(d):
                    s = chart[b, ed + c * d + j]
                    for k in range(d - a):
                        s += th[d * a + c * (d - a) + k] * chart[b, ed + (a + k) * d + j]
                    CR[c, j] = s
            for k in range(d):
                for j in range(d):
                    s = 0j
                    for c in range(a):
                        s += th[k * a + c] * CR[c, j]
                    U[b, k * d + j] = s
        else:
            for k in range(dd):
                U[b, k] = th[k]
        for k in range(ed):
            U[b, dd + k] = th[nA + k]


# long: the chart's map of one batch, each block of the module docstring's system in turn
def _to_system(theta: Any, chart: Any, CRs: Any, g: Any, M: Any, gw: Any, d: int, e: int, a: int, jac: bool,
               F: Any, JF: Any, Fw: Any) -> None:  # fmt: skip
    # from g, M and gw at u (the kernel above, at _u_of's points): the system in the chart's unknowns
    # theta = (B, K, V, lambda) (A = B (C R)) or (A, V, lambda) where A is free (a = d): F = J_u^T g + lambda (0, l),
    # l.V - 1, and its Jacobian J_u^T M J_u + the chart's second derivatives against g, bordered by (0, l); where A
    # is free, M is already the Jacobian's block (written there) and only the border is written here
    B = theta.shape[0]
    dd, ed = d * d, e * d
    charted = a < d
    nA = d * a + a * (d - a) if charted else dd
    m = nA + ed
    n_u = dd + ed
    JA = np.zeros((dd, nA), np.complex128)  # dA / d(B, K), A row-major
    MJ = np.empty((n_u, nA), np.complex128)  # M's columns of A times J_A
    for b in range(B):
        th, l = theta[b], chart[b]
        lam = th[nA + ed]
        if charted:
            CR = CRs[b]
            JA[:, :] = 0
            for k in range(d):
                for c in range(a):
                    for j in range(d):
                        JA[k * d + j, k * a + c] = CR[c, j]
            for c in range(a):
                for ll in range(d - a):
                    col = d * a + c * (d - a) + ll
                    for k in range(d):
                        for j in range(d):
                            JA[k * d + j, col] = th[k * a + c] * chart[b, ed + (a + ll) * d + j]
            for col in range(nA):
                s = 0j
                t = 0j
                for r in range(dd):
                    s += JA[r, col] * g[b, r]
                    if Fw.shape[0]:
                        t += JA[r, col] * gw[b, r]
                F[b, col] = s
                if Fw.shape[0]:
                    Fw[b, col] = t
        else:
            for col in range(dd):
                F[b, col] = g[b, col]
                if Fw.shape[0]:
                    Fw[b, col] = gw[b, col]
        sv = -1.0 + 0j
        for k in range(ed):
            F[b, nA + k] = g[b, dd + k] + lam * l[k]
            sv += l[k] * th[nA + k]
            if Fw.shape[0]:
                Fw[b, nA + k] = gw[b, dd + k]
        F[b, m] = sv
        if Fw.shape[0]:
            Fw[b, m] = 0
        if not jac:
            continue
        H = JF[b]
        if charted:
            Mb = M[b]
            for r in range(n_u):  # M J_A: M's columns of A mapped
                for col in range(nA):
                    s = 0j
                    for k in range(dd):
                        s += Mb[r, k] * JA[k, col]
                    MJ[r, col] = s
            for i in range(nA):  # J_A^T M J_A, J_A^T M_AV and its transpose
                for col in range(nA):
                    s = 0j
                    for k in range(dd):
                        s += JA[k, i] * MJ[k, col]
                    H[i, col] = s
                for col in range(ed):
                    s = 0j
                    for k in range(dd):
                        s += JA[k, i] * Mb[k, dd + col]
                    H[i, nA + col] = s
                    H[nA + col, i] = MJ[dd + col, i]
            for i in range(ed):
                for col in range(ed):
                    H[nA + i, nA + col] = Mb[dd + i, dd + col]
            for k in range(d):  # the chart's second derivatives: d^2 A / dB_kc dK_cl = e_k R_(a+l)
                for c in range(a):
                    for ll in range(d - a):
                        s = 0j
                        for j in range(d):
                            s += g[b, k * d + j] * chart[b, ed + (a + ll) * d + j]
                        i1, i2 = k * a + c, d * a + c * (d - a) + ll
                        H[i1, i2] += s
                        H[i2, i1] += s
        for col in range(m + 1):
            H[m, col] = 0
            H[col, m] = 0
        for k in range(ed):
            H[nA + k, m] = l[k]
            H[m, nA + k] = l[k]


def system(
    theta: np.ndarray,
    chart: np.ndarray,
    shape: tuple[int, int, int],
    w: np.ndarray,
    dw: np.ndarray | None,
    G: np.ndarray,
    D: np.ndarray | None,
    terms: Terms | tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    jacobian: bool,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The square system of a layer of ``shape = (d, e, a)`` at the points ``theta`` (``(B, n)``) in their charts
    ``chart`` (``(B, n_chart)``): ``F`` (``(B, n)``), its Jacobian (``(B, n, n)``; None without ``jacobian``) and
    ``dF/dw . dw`` (None without ``dw``); ``w``, ``dw``, ``G``, ``D`` and ``terms`` as for :func:`u_space`
    (:class:`~ag_attention._landscape.square.SquareSystem` is the reference: its chart's unknowns and order)."""
    d, e, a = shape
    c128 = np.complex128
    dd, ed = d * d, e * d
    nA = d * a + a * (d - a) if a < d else dd
    m = nA + ed
    th, ch = np.require(theta, c128, ("C", "W")), np.require(chart, c128, ("C", "W"))
    B = th.shape[0]
    if th.shape != (B, m + 1) or ch.shape != (B, ed + (dd if a < d else 0)):
        raise ValueError(f"system: points of {m + 1} unknowns in their charts expected, got {th.shape}, {ch.shape}")
    if not _u_space_c:
        warm()
    U = np.empty((B, dd + ed), dtype=c128)
    CRs = np.empty((B if a < d else 0, a, d), dtype=c128)
    _u_of_c[0](th, ch, d, e, a, U, CRs)
    JF = np.empty((B if jacobian else 0, m + 1, m + 1), dtype=c128)  # every entry written below
    block = JF[:, :m, :m] if jacobian and a == d else None  # A free: M is the Jacobian's block, written there
    g, M, gw = u_space(U, w, dw, G, D, terms, jacobian, block)
    F = np.empty((B, m + 1), dtype=c128)
    Fw = np.empty((B if dw is not None else 0, m + 1), dtype=c128)
    Ms = M if M is not None and block is None else np.empty((0, dd + ed, dd + ed), dtype=c128)
    gws = gw if gw is not None else np.empty((0, dd + ed), dtype=c128)
    if B:
        _to_system_c[0](th, ch, CRs, g, Ms, gws, d, e, a, bool(jacobian), F, JF, Fw)
    return F, (JF if jacobian else None), (Fw if dw is not None else None)
