"""The critical equations of a squared loss on one layer as a *square* system, for the numerical route.

docs/math/landscape.md (landscape-square).  The count of :mod:`.system` adds a
Rabinowitsch variable to remove the critical locus of the parametrization and
keeps every gradient equation (one more equation than unknowns); homotopy
continuation wants a square system, and charts that move with each path.

**Unknowns** ``theta = (A-part, V, lambda)``: the ``A``-part is ``A`` itself
(``a >= d``) or ``(B, K)`` with ``A = B [I_a | K] R`` (``a < d``; ``R`` an
invertible ``d x d`` matrix, the chart); ``V`` all of its entries; ``lambda``
a multiplier.  **Equations** (``L(theta) = x^T G x - 2 w^T x``, ``x`` the
reduced coordinates, ``l`` a vector, the slice; up to a factor 2):

    dL/d(A-part) = 0,      dL/dV + lambda l = 0,      l . V - 1 = 0.

*Why it is right.*  ``L`` is invariant under the rescaling ``(cA, V/c)``, so
``grad L`` is orthogonal to the orbit direction ``o = (A, -V)``; at a solution
``0 = grad L . o = -lambda l . V = -lambda``: ``lambda = 0`` and the point is a
critical point of ``L`` on the slice, hence of ``L``.  Conversely a critical
point on the slice gives a solution with ``lambda = 0``.  The Jacobian there is
the Hessian bordered by ``(0, l)``: nonsingular exactly when the Hessian is
nonsingular on the slice (the orbit direction is in its kernel and meets the
border: ``(0, l) . o = -1``).

**Charts move with the paths.**  ``l`` and ``R`` are per-path data (the
*chart*), not unknowns: a point near the chart's infinity (``l . V`` small
against ``|V|``, or ``K`` large: the first ``a`` columns of ``A R^{-1}`` nearly
dependent) is moved to a chart centered on it (:meth:`SquareSystem.adapt`:
``l = conj(V) / |V|^2`` after balancing ``|A| = |V|``, ``R^{-1}`` the right
singular vectors of ``A``, so ``K = 0``), or to a *real* chart for real targets
(the best real directions), where real solutions have real coordinates and the
system real coefficients (what the realness proof needs).  A fixed chart made
paths through its infinity take thousands of steps or fail (measured: the
missing 2 of the 20 solutions of (2,1,1) were reachable only through such
paths).  Solutions in different charts are compared by invariants of the
rescaling (:meth:`SquareSystem.invariants`: the products ``A_kl V_mj``).

The critical locus of the parametrization is not removed from this system (it
may carry spurious solutions, even whole components): monodromy stays on the
irreducible component of the critical points off that locus, and every
certified solution is *proven* off it by ball arithmetic
(:meth:`SquareSystem.off_critical_locus`).

Two evaluations of the same formulas: :meth:`SquareSystem.evaluate` on a batch
of complex float64 points (numpy), and :meth:`SquareSystem.ball_evaluate` on one
box of complex balls (the Krawczyk test of :mod:`ag_attention._numeric.certify`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._models import Parametrization
from .._resources import MemoryEstimate
from . import square_balls, square_kernel
from .system import check_layer

__all__ = ["SquareSystem", "square_system", "square_memory"]

#: a chart is moved when a path's point is this far from its center (``|K|`` or ``|l| |V|``)
CHART_LIMIT = 4.0


def _power_of_two(x: Any) -> Fraction:
    """The power of two nearest ``x > 0`` (an exact scale; ``x`` a number or an exact rational of any size)."""
    q = Fraction(x)
    if q <= 0:
        return Fraction(1)
    e = q.numerator.bit_length() - q.denominator.bit_length()  # q / 2^e lies in (1/2, 2)
    return min((Fraction(2) ** k for k in (e - 1, e, e + 1)), key=lambda c: abs(math.log2(float(q / c))))


def _rows(x: np.ndarray) -> np.ndarray:
    """``x`` as one row per point: ``(B, rest)``, also for ``B = 0`` (where ``reshape(B, -1)`` fails: no path
    finished before a limit)."""
    return x.reshape(x.shape[0], int(np.prod(x.shape[1:], dtype=np.int64)))


@dataclass
class SquareSystem:
    """The square system of one layer with ``G`` fixed, the target ``w`` as the parameter and a chart per point
    (module docstring).  ``scale_G`` and ``scale_x`` (powers of two) make the float64 numbers of order one: the
    system solved is that of ``G / scale_G`` and ``w / (scale_G scale_x)``, whose ``A`` is the true one divided by
    ``scale_x`` (``V`` on the slice unchanged)."""

    d: int
    e: int
    a: int
    G: np.ndarray  # exact (Fractions), already divided by scale_G
    scale_G: Fraction
    scale_x: Fraction
    x_terms: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # x_i += c u_p u_q: (i, p, q, c)
    n_x: int
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- sizes and names
    @property
    def charted(self) -> bool:
        """``A = B [I | K] R`` (``a < d``); else ``A`` free."""
        return self.a < self.d

    @property
    def n_A(self) -> int:
        return self.d * self.a + self.a * (self.d - self.a) if self.charted else self.d * self.d

    @property
    def n(self) -> int:
        return self.n_A + self.e * self.d + 1

    @property
    def n_parameters(self) -> int:
        return self.n_x

    @property
    def n_chart(self) -> int:
        return self.e * self.d + (self.d * self.d if self.charted else 0)

    @property
    def names(self) -> tuple[str, ...]:
        d, e, a = self.d, self.e, self.a
        if self.charted:
            A = [f"b{k}_{c}" for k in range(1, d + 1) for c in range(1, a + 1)]
            A += [f"k{c}_{l}" for c in range(1, a + 1) for l in range(a + 1, d + 1)]
        else:
            A = [f"a{k}_{l}" for k in range(1, d + 1) for l in range(1, d + 1)]
        return tuple(A + [f"v{m}_{l}" for m in range(1, e + 1) for l in range(1, d + 1)] + ["lambda"])

    def fingerprint(self, seed: int) -> str:
        """A hash of the problem a monodromy state belongs to: the size, the exact form ``G``, the scales and the
        seed (a saved state is refused for another one)."""
        h = hashlib.sha256(
            f"square system {self.d},{self.e},{self.a}; {self.scale_G}; {self.scale_x}; seed {seed}; ".encode()
        )
        for v in self.G.flat:
            h.update(f"{v},".encode())
        return h.hexdigest()

    def target(self, w: Sequence[Any]) -> np.ndarray:
        """The parameter of this system for the target ``w`` of the loss ``x^T G x - 2 w^T x`` (exact)."""
        arr = np.asarray(w, dtype=object)
        if arr.shape != (self.n_x,):
            raise InvalidArgumentError(f"w: {self.n_x} entries expected, got shape {arr.shape}")
        s = self.scale_G * self.scale_x
        return np.array([Fraction(v) / s for v in arr], dtype=object)

    # ---------------------------------------------------------------- charts
    def split_chart(self, chart: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """``(l, R)`` of a batch of charts (``(B, n_chart)``): ``l`` ``(B, e d)``, ``R`` ``(B, d, d)`` or None."""
        ed = self.e * self.d
        l = chart[:, :ed]
        R = chart[:, ed:].reshape(-1, self.d, self.d) if self.charted else None
        return l, R

    def random_chart(self, rng: np.random.Generator, real: bool = True) -> np.ndarray:
        """A random chart: a random unit ``l`` and a random orthogonal (unitary) ``R``."""
        ed = self.e * self.d
        l = rng.standard_normal(ed) + (0 if real else 1j * rng.standard_normal(ed))
        l = l / np.linalg.norm(l)
        parts = [l.astype(complex)]
        if self.charted:
            M = rng.standard_normal((self.d, self.d)) + (0 if real else 1j * rng.standard_normal((self.d, self.d)))
            Q, _ = np.linalg.qr(M)
            parts.append(Q.astype(complex).reshape(-1))
        return np.concatenate(parts)

    def unpack(self, theta: np.ndarray, chart: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(A, V)`` of points (``A`` at this system's scale), batches ``(B, d, d)``, ``(B, e, d)``."""
        theta = np.asarray(theta, dtype=complex)
        B = theta.shape[0]
        d, e, a = self.d, self.e, self.a
        V = theta[:, self.n_A : self.n_A + e * d].reshape(B, e, d)
        if not self.charted:
            return theta[:, : d * d].reshape(B, d, d), V
        _, R = self.split_chart(chart)
        assert R is not None
        Bm = theta[:, : d * a].reshape(B, d, a)
        K = theta[:, d * a : self.n_A].reshape(B, a, d - a)
        CR = R[:, :a, :] + np.matmul(K, R[:, a:, :])
        return np.matmul(Bm, CR), V

    def pack(self, A: np.ndarray, V: np.ndarray, chart: np.ndarray) -> np.ndarray:
        """Points ``theta`` (``lambda = 0``) of given ``(A, V)`` in given charts: ``V`` rescaled onto each slice
        and ``A`` inversely, ``(B, K)`` from ``A R^{-1}`` (least squares: exact for ``rank A = a``)."""
        Bn = A.shape[0]
        l, R = self.split_chart(chart)
        s = np.einsum("bj,bj->b", l, _rows(V))
        V = V / s[:, None, None]
        A = A * s[:, None, None]
        parts = []
        if self.charted:
            assert R is not None
            a = self.a
            AR = np.matmul(A, np.linalg.inv(R))
            Bm = AR[:, :, :a]
            K = np.matmul(np.linalg.pinv(Bm), AR[:, :, a:])
            parts += [_rows(Bm), _rows(K)]
        else:
            parts.append(_rows(A))
        parts += [_rows(V), np.zeros((Bn, 1), dtype=complex)]
        return np.concatenate(parts, axis=1)

    def chart_quality(self, theta: np.ndarray, chart: np.ndarray) -> np.ndarray:
        """How far each point is from its chart's center: ``max(|K|, |l| |V|)`` (1 at the center)."""
        theta = np.asarray(theta, dtype=complex)
        l, _ = self.split_chart(chart)
        V = theta[:, self.n_A : self.n_A + self.e * self.d]
        q = np.linalg.norm(l, axis=1) * np.linalg.norm(V, axis=1)
        if self.charted:
            K = theta[:, self.d * self.a : self.n_A]
            q = np.maximum(q, np.max(np.abs(K), axis=1) if K.shape[1] else 0.0)
        return np.asarray(q)

    def adapt(self, theta: np.ndarray, chart: np.ndarray, real: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The same points in charts centered on them (module docstring): complex charts, or real ones where
        ``real`` (a boolean per point).  ``lambda`` is kept."""
        theta = np.asarray(theta, dtype=complex)
        Bn = theta.shape[0]
        A, V = self.unpack(theta, chart)
        na = np.linalg.norm(_rows(A), axis=1)
        nv = np.linalg.norm(_rows(V), axis=1)
        c = np.sqrt(np.where((na > 0) & (nv > 0), nv / np.where(na > 0, na, 1), 1.0))
        A, V = A * c[:, None, None], V / c[:, None, None]  # balanced: |A| = |V|
        Vf = _rows(V)
        l = np.conj(Vf) / np.sum(np.abs(Vf) ** 2, axis=1, keepdims=True)
        for i in np.flatnonzero(real):  # the real unit direction l maximizing |l . V|
            _, _, vh = np.linalg.svd(np.stack([Vf[i].real, Vf[i].imag]))
            li = vh[0]
            li = li / (li @ Vf[i]).real if abs(li @ Vf[i]) > 0 else li  # (l . V real and positive when V is real)
            l[i] = li / np.linalg.norm(li) * (1 / np.linalg.norm(Vf[i]))
        parts = [l]
        if self.charted:
            Rs = np.empty((Bn, self.d, self.d), dtype=complex)
            for row in range(Bn):
                if real[row]:
                    _, _, vh = np.linalg.svd(np.concatenate([A[row].real, A[row].imag]))
                else:
                    _, _, vh = np.linalg.svd(A[row])
                Rs[row] = vh  # A R^{-1} = A vh^H: its first a columns carry A, the rest ~ 0
            parts.append(_rows(Rs))
        new_chart = np.concatenate(parts, axis=1)
        new = self.pack(A, V, new_chart)
        new[:, -1] = theta[:, -1]
        return new, new_chart

    def invariants(self, theta: np.ndarray, chart: np.ndarray) -> np.ndarray:
        """Invariants of the rescaling: the products ``A_kl V_mj`` (``(B, d^2 e d)``; at this system's scale), equal
        for two points of one orbit whatever their charts (what tells solutions apart across charts)."""
        A, V = self.unpack(theta, chart)
        return np.asarray(_rows(np.einsum("bkl,bmj->bklmj", A, V)))

    def trace_coordinates(self, theta: np.ndarray, chart: np.ndarray) -> np.ndarray:
        """The reduced coordinates ``x`` (this system's scale): ambient linear coordinates of the ED correspondence,
        whose sum over all solutions is affine along a pencil of targets (the trace test)."""
        A, V = self.unpack(np.atleast_2d(theta), np.atleast_2d(chart))
        return self._x(np.concatenate([_rows(A), _rows(V)], axis=1))

    def weights(self, theta: np.ndarray, chart: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(A, V)`` (complex float64, the true scale) of points ``theta`` in charts ``chart`` (batches)."""
        A, V = self.unpack(np.atleast_2d(theta), np.atleast_2d(chart))
        return A * float(self.scale_x), V

    def coordinates(self, theta: np.ndarray, chart: np.ndarray) -> np.ndarray:
        """The reduced coordinates ``x`` (true scale) of points ``theta`` (batches)."""
        A, V = self.unpack(np.atleast_2d(theta), np.atleast_2d(chart))
        u = np.concatenate([_rows(A), _rows(V)], axis=1)
        return self._x(u) * float(self.scale_x)

    # ---------------------------------------------------------------- float64 (batches)
    def _tables(self) -> dict[str, Any]:
        if self._cache:
            return self._cache
        i, p, q, c = self.x_terms
        n_x, n_u = self.n_x, self.d * self.d + self.e * self.d
        cf = np.array([float(v) for v in c])
        nt = len(i)
        Sx = np.zeros((nt, n_x))
        Sx[np.arange(nt), i] = 1.0
        pos1, pos2 = i * n_u + p, i * n_u + q
        if len(set(pos1.tolist()) | set(pos2.tolist())) != 2 * nt:  # pragma: no cover - the parametrization's terms
            raise AssertionError("the reduced coordinates' terms are not in distinct positions")
        Gf = np.array([[float(v) for v in row] for row in self.G])
        self._cache.update(
            {
                "pos1": pos1,
                "pos2": pos2,
                "c": cf,
                "p": np.asarray(p, dtype=np.int64),
                "q": np.asarray(q, dtype=np.int64),
                "Sx": Sx,
                "G": Gf,
                "G_complex": Gf.astype(complex),  # the compiled evaluation's (no conversion a call)
                "terms": square_kernel.Terms.of(i, p, q, cf),  # the compiled evaluation's (checked once)
                "n_u": n_u,
                "i": np.asarray(i, dtype=np.int64),
            }
        )
        return self._cache

    def _x(self, u: np.ndarray) -> np.ndarray:
        T = self._tables()
        return np.asarray((T["c"][None, :] * u[:, T["p"]] * u[:, T["q"]]) @ T["Sx"])

    def _Jx(self, u: np.ndarray) -> np.ndarray:
        T = self._tables()
        B = u.shape[0]
        flat = np.zeros((B, self.n_x * T["n_u"]), dtype=complex)
        flat[:, T["pos1"]] = T["c"][None, :] * u[:, T["q"]]
        flat[:, T["pos2"]] = T["c"][None, :] * u[:, T["p"]]
        return flat.reshape(B, self.n_x, T["n_u"])

    def _chart_maps(
        self, theta: np.ndarray, chart: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """``u = (A, V)``, the chart's map of the ``A``-part ``J_A = dA / d(B, K)`` (``(B, d^2, n_A)``; None where
        ``A`` is free: the identity; the map of ``V`` is always the identity) and the chart's ``R`` (None where
        ``A`` is free)."""
        d, a = self.d, self.a
        Bn = theta.shape[0]
        A, V = self.unpack(theta, chart)
        u = np.concatenate([_rows(A), _rows(V)], axis=1)
        if not self.charted:  # A free: the map is the identity, never formed (measured: 7 % of an evaluation)
            return u, None, None
        _, R = self.split_chart(chart)
        assert R is not None
        Bm = theta[:, : d * a].reshape(Bn, d, a)
        K = theta[:, d * a : self.n_A].reshape(Bn, a, d - a)
        CR = R[:, :a, :] + np.matmul(K, R[:, a:, :])  # (B, a, d)
        J4 = np.zeros((Bn, d, d, self.n_A), dtype=complex)  # [A row k, A column j, unknown]
        for k in range(d):
            for c in range(a):
                J4[:, k, :, k * a + c] = CR[:, c, :]  # dA_k. / dB_kc = (C R)_c.
        for c in range(a):
            for l in range(d - a):
                col = d * a + c * (d - a) + l
                J4[:, :, :, col] = Bm[:, :, c, None] * R[:, None, a + l, :]  # dA / dK_cl = B_.c R_(a+l).
        return u, J4.reshape(Bn, d * d, self.n_A), R

    def evaluate(
        self,
        theta: np.ndarray,
        w: np.ndarray,
        jacobian: bool = True,
        dw: np.ndarray | None = None,
        *,
        chart: np.ndarray,
        form: tuple[np.ndarray, np.ndarray | None, Sequence[np.ndarray]] | None = None,
    ) -> Any:
        """``F`` (``(B, n)``) and its Jacobian (``(B, n, n)`` or None) at points ``theta`` (``(B, n)``) in charts
        ``chart`` (``(B, n_chart)``) for parameters ``w`` (``(B, n_x)`` or ``(n_x,)``); with ``dw``, also
        ``dF/dw . dw`` (a third array).

        ``form``: ``(c, dc, F)``, the form ``sum_k c_k F_k`` instead of ``G`` (``c`` ``(B, K)``, each ``F_k``
        ``n_x x n_x``; with ``dw``, ``dc`` ``(B, K)`` moves the coefficients too): :class:`FormHomotopy`.  Computed
        by the compiled :func:`square_kernel.system` (the derivatives in ``u = (A, V)``, then the chart's map)."""
        T = self._tables()
        if form is None:
            G, D = T["G_complex"], None
        else:  # the form of each point, and its derivative along the path
            G = np.einsum("bk,kij->bij", form[0], np.asarray(form[2]))
            D = None if form[1] is None or dw is None else np.einsum("bk,kij->bij", form[1], np.asarray(form[2]))
        F, JF, Fw = square_kernel.system(theta, chart, (self.d, self.e, self.a), w, dw, G, D, T["terms"], jacobian)
        return (F, JF) if dw is None else (F, JF, Fw)

    def seed(self, rng: np.random.Generator, size: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A start triple ``(theta0, w0, chart0)``: a random complex point, a parameter ``w0`` (this system's scale)
        for which it is a solution (``w0 = G x - eta`` with ``eta`` a random vector of the left kernel of
        ``J = dx / d(A-part, V)``, so that the gradient ``J^T (G x - w0) = J^T eta`` vanishes), and a chart
        centered on it.  ``size``: the point's reduced coordinates are of that order."""
        d, e = self.d, self.e
        A = rng.standard_normal((1, d, d)) + 1j * rng.standard_normal((1, d, d))
        if self.charted:
            A = np.matmul(A[:, :, : self.a], A[:, : self.a, :])  # rank a
        A = A * size
        V = rng.standard_normal((1, e, d)) + 1j * rng.standard_normal((1, e, d))
        chart = self.random_chart(rng, real=False)[None, :]
        theta = self.pack(A, V, chart)
        theta, chart = self.adapt(theta, chart, np.array([False]))
        u, JA, _ = self._chart_maps(theta, chart)
        Jx = self._Jx(u)
        J = (Jx if JA is None else np.concatenate([Jx[:, :, : d * d] @ JA, Jx[:, :, d * d :]], axis=2))[0]
        x = self._x(u)[0]
        _, sv, vh = np.linalg.svd(J.T)
        rank = int(np.sum(sv > 1e-10 * sv[0]))
        kernel = vh[rank:].conj().T
        coeff = rng.standard_normal(kernel.shape[1]) + 1j * rng.standard_normal(kernel.shape[1])
        w0 = self._tables()["G"] @ x - kernel @ coeff
        return theta[0], w0, chart[0]

    def random_start(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A start triple (:meth:`seed`) at a random size (a factor ``e^U(-1, 6)``): monodromy injects such points,
        carried to its base, to reach solutions of every size (measured: loops of one scale and starts of size 1
        never reached the largest critical point of a (2,1,2) data set, 10 times the others)."""
        return self.seed(rng, size=float(np.exp(rng.uniform(-1.0, 6.0))))

    # ---------------------------------------------------------------- balls (one box): square_balls.py
    def ball_evaluate(
        self, box: np.ndarray, w: Sequence[Any], jacobian: bool = True, *, chart: np.ndarray
    ) -> tuple[np.ndarray, Any]:
        """``F`` and its Jacobian on a box (complex balls, :func:`balls.complex_box`), for the exact parameter
        ``w`` (Fractions, complex floats or balls) and chart (complex floats, exact): balls holding the value at
        every point of the box (the Jacobian's: an interval extension, for the Krawczyk test)."""
        return square_balls.ball_evaluate(self, box, w, jacobian, chart=chart)

    def ball_weights(
        self, box: np.ndarray, chart: np.ndarray
    ) -> tuple[list[list[Any]], list[list[Any]], list[list[Any]] | None]:
        """Balls holding ``A`` (this system's scale), ``V`` and, in the chart, ``B`` on a box."""
        return square_balls.ball_weights(self, box, chart)

    def ball_coordinates(self, box: np.ndarray, chart: np.ndarray) -> list[Any]:
        """Balls holding the reduced coordinates ``x`` (this system's scale) on a box."""
        return square_balls.ball_coordinates(self, box, chart)

    def ball_invariants(self, box: np.ndarray, chart: np.ndarray) -> list[Any]:
        """Balls holding :meth:`invariants` on a box."""
        return square_balls.ball_invariants(self, box, chart)

    def off_critical_locus(self, box: np.ndarray, chart: np.ndarray) -> bool:
        """Proven: every point of the box is off the critical locus of the parametrization (Lemma A.3): a
        ``2 x 2`` minor of ``[A; V]`` whose ball excludes 0, and ``A != 0`` (``A`` free) or an ``a x a`` minor
        of ``B`` excluding 0 (the chart)."""
        return square_balls.off_critical_locus(self, box, chart)


def square_memory(d: int, e: int, a: int, batch: int = 1024) -> Any:
    """The memory the numerical route needs at one layer ``(d, d', a)``: the exact form ``G`` (``n_x^2`` rationals,
    about 120 bytes each with their object array), its float tables, and the path tracker's batches (``batch``
    points, each with ``n_x x n_u`` complex Jacobians several times over)."""
    n_x = e * d * d * (d + 1) // 2
    n_u = d * d + e * d
    n = n_u + 1
    exact = 120 * n_x * n_x
    tables = 8 * n_x * n_x * (1 + n_u)  # G, and its rows per column of J_x (at most n_x of them)
    tracker = 16 * batch * (6 * n_x * n_u + 8 * n * n)
    return MemoryEstimate(
        exact + tables + tracker,
        {
            f"the form G, {n_x:,} x {n_x:,} exact rationals": exact,
            f"float64 tables of {n_x:,} coordinates": tables,
            f"{batch} paths' Jacobians": tracker,
        },
    )


def square_system(arch: Architecture, G: Any, *, w_scale: Any = None) -> SquareSystem:
    """The square system of one layer (``t >= 2``) for the form ``G`` (exact, ``n_x x n_x`` symmetric).

    ``w_scale``: a typical size of the targets ``w`` (the float64 solutions are then of order one in the scaled
    weights).
    """
    d, e, a, _ = check_layer(arch)
    P = Parametrization(Architecture.single_layer(d, e, None, tokens=2), coords="reduced", params="AV")
    n_x = len(P.polynomials)
    G = np.asarray(G, dtype=object)
    if G.shape != (n_x, n_x):
        raise InvalidArgumentError(f"G must be {n_x} x {n_x} (the reduced coordinates of ({d},{e})), got {G.shape}")
    G = np.array([[Fraction(v) for v in row] for row in G], dtype=object)
    if any(G[i, j] != G[j, i] for i in range(n_x) for j in range(i)):
        raise InvalidArgumentError("G must be symmetric")
    size_G = max((abs(v) for v in G.flat), default=Fraction(0))
    if size_G == 0:
        raise InvalidArgumentError("G = 0: the loss does not depend on the weights")
    scale_G = _power_of_two(size_G)
    scale_x = Fraction(1)
    if w_scale is not None and Fraction(w_scale) > 0:
        scale_x = _power_of_two(Fraction(w_scale) / size_G)
    G = np.array([[v / scale_G for v in row] for row in G], dtype=object)
    ti, tp, tq, tc = [], [], [], []
    for i, f in enumerate(P.polynomials):  # x_i = sum c u_p u_q over u = (A row-major, V row-major)
        for exps, c in f.to_dict().items():
            idx = [j for j, k in enumerate(exps) for _ in range(k)]
            if len(idx) != 2:  # pragma: no cover - the reduced coordinates are bilinear in (A, V)
                raise AssertionError(f"a reduced coordinate is not quadratic in (A, V): {f}")
            ti.append(i)
            tp.append(idx[0])
            tq.append(idx[1])
            tc.append(Fraction(int(c)))
    x_terms = (
        np.array(ti, dtype=np.int64),
        np.array(tp, dtype=np.int64),
        np.array(tq, dtype=np.int64),
        np.array(tc, dtype=object),
    )
    # its compiled evaluation ready now (read from numba's cache: 0.6 s), not inside what a route times or bounds
    # (measured: a resumed count timed its first certification with it, 1.5 s, and kept too little time for the rest)
    square_kernel.warm()
    return SquareSystem(d, e, a, G, scale_G, scale_x, x_terms, n_x)
