"""The square system's derivatives in the weights ``u = (A, V)``, compiled: :func:`u_space`.

docs/math/landscape.md (landscape-square).  With ``x(u)`` the reduced coordinates (bilinear: ``x_i = sum_t c_t
u_(p_t) u_(q_t)`` over the terms ``t`` of coordinate ``i = i_t``, ``p_t != q_t``), ``r = G x - w`` and ``J_x =
dx/du``, a batch of points gets

    g = J_x^T r,      M = J_x^T G J_x + sum_i r_i d^2 x_i / du^2,      g_w = J_x^T (D x - dw),

the gradient of ``L/2``, its Hessian and its derivative along ``dw`` (``D``: the form's own derivative along the
path, zero for a fixed form); :class:`~ag_attention._landscape.square.SquareSystem` takes them to its chart.  Each
point's ``J_x`` is never formed: ``G J_x`` is ``2 n_x`` products a term and ``J_x^T (G J_x)`` ``2 n_u`` (at
(4,1,4), 64 terms: 7,680 complex products for the Hessian against numpy's 28,800 with the padded columns it
needed), one compiled loop over the points (numba, :func:`ag_attention._numeric.kernels.compiled`).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .._numeric import kernels

__all__ = ["u_space", "warm"]


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


_LOCK = threading.Lock()
_u_space_c: list[Any] = []


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


def u_space(
    u: np.ndarray,
    w: np.ndarray,
    dw: np.ndarray | None,
    G: np.ndarray,
    D: np.ndarray | None,
    terms: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    jacobian: bool,
    M_out: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``g``, ``M`` (None without ``jacobian``) and ``g_w`` (None without ``dw``) of the module docstring at the
    points ``u`` (``(B, n_u)``) for targets ``w`` and directions ``dw`` (``(B, n_x)`` or ``(n_x,)``), the form
    ``G`` (symmetric: a row is read as its column; ``(n_x, n_x)`` or one per point ``(B, n_x, n_x)``) and its
    derivative ``D`` (one per point, or None); ``terms``: ``(i, p, q, c)`` of ``x``; ``M_out``: where ``M`` goes
    (a ``(B, n_u, n_u)`` complex view, e.g. the block of a Jacobian: no copy)."""
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
    i, p, q = (np.require(v, np.int64, ("C", "W")) for v in terms[:3])
    c = arr(terms[3])
    # the kernel reads without bounds checks: every shape is checked here (one row, or one per point)
    bad = [
        f"{name} {x.shape}"
        for name, x, ok in (
            ("w", W, W.shape[0] in (1, B)),
            ("dw", DW, DW.shape[0] in (0, 1, B)),
            ("G", Gs, Gs.shape[0] in (1, B) and G.ndim in (2, 3)),
            ("D", Ds, Ds.shape[0] in (0, B) and Ds.shape[1:] == (n_x, n_x)),
            ("M_out", M, M.shape == ((B if jacobian else 0), n_u, n_u)),
            ("terms", c, i.shape == p.shape == q.shape == c.shape and i.ndim == 1),
        )
        if not ok
    ]
    if i.size and (i.min() < 0 or i.max() >= n_x or min(p.min(), q.min()) < 0 or max(p.max(), q.max()) >= n_u):
        bad.append("terms (an index out of range)")
    if bad:
        raise ValueError(f"u_space: {B} points of {n_u} weights and {n_x} coordinates; wrong shapes: {', '.join(bad)}")
    g = np.empty((B, n_u), dtype=c128)
    gw = np.empty((B if dw is not None else 0, n_u), dtype=c128)
    if B:
        if not _u_space_c:
            warm()
        Gr, Gi = np.ascontiguousarray(Gs.real), np.ascontiguousarray(Gs.imag)
        _u_space_c[0](U, W, DW, Gr, Gi, Ds, i, p, q, c, bool(jacobian), g, M, gw)
    return g, (M if jacobian else None), (gw if dw is not None else None)
