"""Paths of a parametric square system along a segment of parameters, in float64, many at once: :func:`track`.

docs/math/landscape.md (landscape-monodromy).  A *parametric square system* ``F(z; p) = 0``
(:class:`ParametricSystem`) is tracked along ``p(t) = (1 - t) p_a + t p_b``, ``t: 0 -> 1``, with a fourth-order
Runge-Kutta predictor on ``dz/dt = -F_z^{-1} F_p (p_b - p_a)`` whose first stage is the velocity kept from the last
step (three Jacobians a step), and a chord Newton corrector with the last stage's LU factors (three corrections,
up to :data:`EXTRA_CORRECTIONS` more where they still contract), whose last function values give the velocity at
the new point.  The step of each path adapts on its own: the next one aims the first
correction (the predictor's error, ``O(h^5)``) at ``min(max_correction, tolerance^(1/3)) / 10``, at most doubled
after an accepted step, at least halved after a rejected one (Newton did not contract to ``tolerance``); all paths
advance together in numpy batches (:class:`_Paths`), their linear algebra in compiled kernels (:mod:`.kernels`: one
LU factorization a matrix, applied to each right-hand side).  A path fails when its step falls below ``min_step``,
it takes more than ``max_steps`` steps, or it leaves every bound (``|z| > 1e8``).  Here too: :func:`newton`, the
charts of a system's points, and the threads that step a batch.

Measured (issue 45, ``python bench/trackers.py``): one Jacobian a step instead (a cubic Hermite predictor from the
last two points, or the last step's velocity with the stale inverse) took three times the steps: the Jacobians are
ill-conditioned (condition numbers to 1.9e6 at (4,1,4)) and a velocity from an inverse at a point 1e-3 away was off
by a factor 115; complex64 was no faster and the conditioning rules it out; a third-order Runge-Kutta predictor (two
Jacobians a step) took twice the steps.  What paid: compiled evaluation of the landscape's systems, their chart maps
included, with real and imaginary parts apart so that the loops vectorize
(:mod:`ag_attention._landscape.square_kernel`), and compiled LU solves instead of LAPACK's call per small matrix and
an explicit inverse.
"""

from __future__ import annotations

import ctypes
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from threadpoolctl import threadpool_limits

from .. import _clock
from .._checks import check_int
from .._errors import InvalidArgumentError
from . import kernels

__all__ = [
    "ParametricSystem",
    "TrackerOptions",
    "DEFAULT_OPTIONS",
    "TrackResult",
    "track",
    "newton",
    "set_threads",
    "one_blas_thread",
    "numpy_friendly_malloc",
    "EXTRA_CORRECTIONS",
]


class ParametricSystem(Protocol):
    """A square system ``F(z; p)``: ``n`` unknowns, ``n_parameters`` parameters.

    A system may also have *charts* (``n_chart > 0``): per-point coordinates data (``chart``, a complex vector per
    point) that the tracker moves when a point leaves its chart (``chart_quality`` above :data:`CHART_LIMIT`):
    ``adapt(z, chart, real)`` gives the same points in charts centered on them (real charts where ``real``), and
    ``invariants(z, chart)`` numbers that do not depend on the chart (to tell points apart).
    """

    @property
    def n(self) -> int: ...

    @property
    def n_parameters(self) -> int: ...

    def evaluate(
        self, z: np.ndarray, p: np.ndarray, jacobian: bool = True, dp: np.ndarray | None = None, **chart: Any
    ) -> Any:
        """``(F, dF/dz)`` on a batch (``dF/dz`` None without ``jacobian``); with ``dp``, ``(F, dF/dz, dF/dp . dp)``."""


#: a point is moved to a chart centered on it when its chart quality exceeds this
CHART_LIMIT = 4.0


def _charts(system: Any) -> int:
    return int(getattr(system, "n_chart", 0))


def _evaluate(
    system: Any, z: np.ndarray, p: np.ndarray, jacobian: bool, dp: np.ndarray | None, chart: np.ndarray | None
) -> Any:
    if _charts(system):
        return system.evaluate(z, p, jacobian, dp, chart=chart)
    return system.evaluate(z, p, jacobian, dp) if dp is not None else system.evaluate(z, p, jacobian)


def _invariants(system: Any, z: np.ndarray, chart: np.ndarray | None) -> np.ndarray:
    return system.invariants(z, chart) if _charts(system) else z


def _linear(system: Any, z: np.ndarray, chart: np.ndarray | None) -> np.ndarray:
    """Coordinates in which the solutions' trace is affine along a pencil of parameters (the ambient coordinates
    of the correspondence: ``trace_coordinates`` of the system, else ``z``)."""
    f = getattr(system, "trace_coordinates", None)
    if f is None:
        return z
    out: np.ndarray = f(z, chart) if _charts(system) else f(z)  # an array of coordinates (the system's protocol)
    return out


@dataclass(frozen=True)
class TrackerOptions:
    """The path tracker's settings (:func:`track`)."""

    initial_step: float = 0.05
    max_step: float = 0.25
    min_step: float = 1e-9
    max_steps: int = 3000
    tolerance: float = 1e-9  # Newton's last correction, relative to 1 + |z|
    max_correction: float = 1e-2  # the first correction allowed, relative to 1 + |z|
    max_norm: float = 1e8
    batch: int = 1024  # paths evaluated at once (memory: batch * n^2 complex numbers, several times)

    def __post_init__(self) -> None:
        if not (0 < self.min_step < self.initial_step <= self.max_step <= 1):
            raise InvalidArgumentError(
                f"step sizes: need 0 < min_step < initial_step <= max_step <= 1, got "
                f"{self.min_step}, {self.initial_step}, {self.max_step}"
            )
        check_int(self.max_steps, "max_steps", minimum=1)
        check_int(self.batch, "batch", minimum=1)


#: the tracker options by default
DEFAULT_OPTIONS = TrackerOptions()


@dataclass
class TrackResult:
    """The end of each path: its point, whether it reached ``t = 1``, and its number of steps."""

    z: np.ndarray  # (B, n)
    ok: np.ndarray  # (B,) bool
    steps: np.ndarray  # (B,) int
    reason: np.ndarray  # (B,) str: "" for a path that arrived, else why it failed
    chart: np.ndarray | None = None  # (B, n_chart): each end's chart


def _solve(J: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``J^{-1} rhs`` for each of a batch, and which systems were solvable (finite, nonsingular; the others NaN)."""
    return kernels.solve(J, rhs)


def newton(
    system: Any, z: np.ndarray, p: np.ndarray, iterations: int = 3, chart: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``iterations`` Newton steps on ``F(.; p)`` from each row of ``z`` (in its chart); the points and the last
    correction's norm (relative to ``1 + |z|``; ``inf`` where a step failed)."""
    z = np.array(z, dtype=complex)
    last = np.full(z.shape[0], np.inf)
    for _ in range(iterations):
        F, J = _evaluate(system, z, p, True, None, chart)
        dz, good = _solve(J, F)
        z = np.where(good[:, None], z - np.nan_to_num(dz), z)
        last = np.where(good, np.linalg.norm(np.nan_to_num(dz), axis=1) / (1 + np.linalg.norm(z, axis=1)), np.inf)
    return z, last


class _Paths:
    """Paths under way, each on its own segment ``(1 - t) p_a + t p_b`` with its own step and chart: one
    predictor-corrector step of all of them at a time (:meth:`step`), paths added and taken out at any time (so a
    batch stays full while single paths take long)."""

    FIELDS = ("z", "pa", "pb", "chart", "t", "h", "steps", "tag", "v", "known")

    def __init__(self, system: Any, options: TrackerOptions) -> None:  # system: a ParametricSystem
        n, m, c = system.n, system.n_parameters, _charts(system)
        self.system, self.options = system, options
        self.z = np.empty((0, n), dtype=complex)
        self.pa = np.empty((0, m), dtype=complex)
        self.pb = np.empty((0, m), dtype=complex)
        self.chart = np.empty((0, c), dtype=complex)
        self.t = np.empty(0)
        self.h = np.empty(0)
        self.steps = np.empty(0, dtype=np.int64)
        self.tag = np.empty(0, dtype=np.int64)
        # each path's velocity dz/dt at z where known (the last step's end; not after a new chart or edge)
        self.v = np.empty((0, n), dtype=complex)
        self.known = np.empty(0, dtype=bool)
        self.recharts = 0

    def __len__(self) -> int:
        return int(self.t.size)

    def add(
        self, z: np.ndarray, pa: np.ndarray, pb: np.ndarray, tag: np.ndarray, chart: np.ndarray | None = None
    ) -> None:
        k = z.shape[0]
        if k == 0:
            return
        c = _charts(self.system)
        chart = np.zeros((k, c), dtype=complex) if chart is None else np.broadcast_to(chart, (k, c))
        self.z = np.concatenate([self.z, z])
        self.pa = np.concatenate([self.pa, np.broadcast_to(pa, (k, self.pa.shape[1]))])
        self.pb = np.concatenate([self.pb, np.broadcast_to(pb, (k, self.pb.shape[1]))])
        self.chart = np.concatenate([self.chart, chart])
        self.t = np.concatenate([self.t, np.zeros(k)])
        self.h = np.concatenate([self.h, np.full(k, self.options.initial_step)])
        self.steps = np.concatenate([self.steps, np.zeros(k, dtype=np.int64)])
        self.tag = np.concatenate([self.tag, np.asarray(tag, dtype=np.int64)])
        self.v = np.concatenate([self.v, np.zeros((k, self.z.shape[1]), dtype=complex)])
        self.known = np.concatenate([self.known, np.zeros(k, dtype=bool)])

    def take(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Remove the paths ``idx``; their points, tags, steps and charts."""
        out = (self.z[idx].copy(), self.tag[idx].copy(), self.steps[idx].copy(), self.chart[idx].copy())
        keep = np.ones(len(self), dtype=bool)
        keep[idx] = False
        for name in self.FIELDS:
            setattr(self, name, getattr(self, name)[keep])
        return out

    def step(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One step of every path (at most ``options.batch`` of them: the first ones); the indices of the paths
        that arrived at ``t = 1`` and of those that failed, with each failure's reason."""
        with np.errstate(all="ignore"):  # a diverging path overflows: it is caught below, not warned about
            return self._step()

    def _step(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        o = self.options
        B = min(len(self), o.batch)
        idx = np.arange(B)
        hh = np.minimum(self.h[:B], 1.0 - self.t[:B])
        if B >= 2 * PARALLEL_MIN and _WORKERS > 1:  # two halves at once: numpy releases the GIL in its loops
            half = B // 2
            # the second half on the pool's thread, the first here; the pool's half is always waited for, also when
            # an interrupt (Ctrl-C) comes meanwhile, which then goes on (no future is left behind)
            other = _pool().submit(self._advance, slice(half, B), hh[half:])
            try:
                first = self._advance(slice(0, half), hh[:half])
            finally:
                second = other.result()
            zp, tn, ok, c1, c2, c3, vn = (np.concatenate([first[k], second[k]]) for k in range(7))
        else:
            zp, tn, ok, c1, c2, c3, vn = self._advance(slice(0, B), hh)
        accept = ok & (c1 < o.max_correction) & (c3 < o.tolerance) & ((c2 <= 0.5 * c1) | (c2 < o.tolerance))
        accept &= np.isfinite(zp).all(axis=1)
        a = idx[accept]
        self.v[a] = vn[accept]  # the velocity at the new point (its last correction's), the next step's first stage
        self.known[a] = True
        self.z[a] = zp[accept]
        self.t[a] = tn[accept]
        self.steps[:B] += 1
        r = idx[~accept]
        # the next step from the first correction (the predictor's error, O(h^5)): aimed at a tenth of the largest
        # correction allowed, and at 0.1 tolerance^(1/3) (the chord's third correction shrinks as c1^3: measured at
        # (2,2,2), 1e-4 for tolerance 1e-9 took 12,036 steps against 13,686 at 1e-3; 1e-3 for 1e-6); at most doubled
        # after an accepted step, at least halved after a rejected one
        aim = min(0.1 * o.max_correction, 0.1 * o.tolerance ** (1 / 3))
        with np.errstate(all="ignore"):
            f = np.nan_to_num(0.9 * (aim / c1) ** 0.2, nan=0.5, posinf=2.0)
        self.h[a] = np.minimum(self.h[a] * np.clip(f[accept], 0.5, 2.0), o.max_step)
        self.h[r] *= np.clip(f[~accept], 0.1, 0.5)
        arrived = a[self.t[a] >= 1.0 - 1e-15]
        system = self.system
        if _charts(system) and a.size:  # points far from their chart's center move to a chart centered on them
            far = a[system.chart_quality(self.z[a], self.chart[a]) > CHART_LIMIT]
            if far.size:
                real = np.all(self.chart[far].imag == 0, axis=1)
                self.z[far], self.chart[far] = system.adapt(self.z[far], self.chart[far], real)
                self.known[far] = False  # the velocity was in the old chart
                self.recharts += far.size
        reasons = np.full(B, "", dtype=object)
        reasons[np.linalg.norm(self.z[:B], axis=1) > o.max_norm] = "diverged"
        reasons[r[self.h[r] < o.min_step]] = "step too small"
        reasons[(self.steps[:B] >= o.max_steps) & (reasons == "")] = "too many steps"
        reasons[arrived] = ""
        failed = np.flatnonzero(reasons != "")
        return arrived, failed, reasons[failed]

    def _advance(self, sl: slice, hh: np.ndarray) -> tuple[np.ndarray, ...]:
        """:func:`_predict_correct` of the paths ``sl`` by ``hh``; a path's velocity, where not known, is computed
        here first and kept (the rows ``sl`` are the caller's own: the two threads of a batch write apart)."""
        system, t, z = self.system, self.t[sl], self.z[sl]
        chart = self.chart[sl] if _charts(system) else None
        pa, dp = self.pa[sl], self.pb[sl] - self.pa[sl]
        v, known, vok = self.v[sl], self.known[sl], np.ones(t.size, dtype=bool)
        need = np.flatnonzero(~known)
        if need.size:  # a path's first step on its segment, or its first in a new chart
            ch = None if chart is None else chart[need]
            _, J, rhs = _evaluate(system, z[need], pa[need] + t[need, None] * dp[need], True, dp[need], ch)
            vv, vok[need] = _solve(J, rhs)
            v[need] = -np.nan_to_num(vv)
            known[need] = vok[need]
        return _predict_correct(system, z, t, hh, pa, dp, chart, v, vok, self.options)


#: a batch of at least twice this many paths is stepped in two threads
PARALLEL_MIN = 128
_WORKERS = min(2, os.cpu_count() or 1)
_POOL: list[Any] = []


def one_blas_thread() -> Any:
    """A context in which BLAS runs one thread (threadpoolctl): the tracker's matrices are small and batched, BLAS
    threads only cost there, and on 2 cores two BLAS threads beside an msolve job stalled one 32 x 160 SVD for more
    than a minute (measured at (4,4))."""
    return threadpool_limits(limits=1, user_api="blas")


_ALLOCATOR: list[bool] = []


def numpy_friendly_malloc() -> None:
    """Once per process (glibc only): keep numpy's temporaries of up to 64 MB on the heap (``M_MMAP_THRESHOLD``)
    and 256 MB of free heap before trimming (``M_TRIM_THRESHOLD``).  A Dask nanny starts its workers with
    ``MALLOC_TRIM_THRESHOLD_=65536``, which turns every temporary above 128 kB into an mmap and munmap: measured at
    (4,1,4), 512 paths around a loop took 13.7 s that way, 5.7 s with these settings (7.4 s with glibc's defaults)."""
    if _ALLOCATOR:
        return
    _ALLOCATOR.append(True)
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 64 * 2**20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 256 * 2**20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):  # pragma: no cover - not glibc: its own allocator's behaviour stands
        pass


def set_threads(n: int) -> None:
    """Threads stepping a batch in this process (1: none; a Dask worker of a cluster with a process per core)."""
    global _WORKERS
    _WORKERS = max(1, min(2, int(n)))


def _pool() -> Any:
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(1, thread_name_prefix="ag-attention-paths"))
    return _POOL[0]


def _predict_correct(
    system: Any,
    z: np.ndarray,
    t: np.ndarray,
    hh: np.ndarray,
    pa: np.ndarray,
    dp: np.ndarray,
    chart: np.ndarray | None,
    v: np.ndarray,
    vok: np.ndarray,
    options: TrackerOptions,
) -> tuple[np.ndarray, ...]:
    """One predictor-corrector step of a batch from the points ``z`` and their velocities ``v`` (``vok``: which
    are known): the corrected points, their ``t``, whether every linear solve succeeded, the three Newton
    corrections (relative to ``1 + |z|``) and the velocity at each new point (the next step's first stage)."""
    with np.errstate(all="ignore"):

        def velocity(zz: np.ndarray, tt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            _, J, rhs = _evaluate(system, zz, pa + tt[:, None] * dp, True, dp, chart)
            w, ok = kernels.solve(J, rhs, 0)  # a failed solve moves nothing (the step is then rejected)
            return -w, ok

        k2, o2 = velocity(z + (hh / 2)[:, None] * v, t + hh / 2)
        k3, o3 = velocity(z + (hh / 2)[:, None] * k2, t + hh / 2)
        tn = t + hh
        p = pa + tn[:, None] * dp
        # the last stage's Jacobian (at the end of the step) is factored once: its velocity, then a chord Newton
        # corrector with it (function values only: a fraction of the cost of a Jacobian), whose last function values
        # give the velocity at the new point
        _, J4, rhs4 = _evaluate(system, z + hh[:, None] * k3, p, True, dp, chart)
        factors = kernels.lu_factor(J4)
        k4, o4 = kernels.lu_solve(factors, rhs4, 0)
        k4 = -k4
        zp = z + (hh / 6)[:, None] * (v + 2 * k2 + 2 * k3 + k4)
        zp, c1, c2, c3, vn = _chord(system, zp, p, factors, dp, chart, options)
        return zp, tn, vok & o2 & o3 & o4, c1, c2, c3, vn


#: chord corrections after the third, for the points whose third correction is above the tolerance but whose
#: corrections still contract (each at most half the one before): the Jacobians' condition numbers reach 1e6, the
#: chord contracts slowly there, and a step rejected for its third correction alone wastes three Jacobians.
#: Measured on 512 random paths (``python bench/trackers.py``'s), steps without / with them: (4,1,4) 16,863 /
#: 13,934 (3,052 / 1,231 rejected for the third correction), (3,1,1) 16,285 / 12,784 (tolerance 1e-6) and
#: 27,828 / 19,898 (1e-9), (2,2,2) 14,309 / 11,896 and 24,237 / 18,893; two instead of four: 14,495 at (4,1,4)
EXTRA_CORRECTIONS = 4


def _chord(
    system: Any,
    zp: np.ndarray,
    p: np.ndarray,
    factors: Any,
    dp: np.ndarray,
    chart: np.ndarray | None,
    options: TrackerOptions,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Three chord Newton corrections of the predicted points ``zp`` with the LU ``factors`` of their Jacobians
    (:func:`kernels.lu_factor`), and up to :data:`EXTRA_CORRECTIONS` more where the third is above
    ``options.tolerance`` but they contract: the corrected points, the first, second and last corrections
    (relative to ``1 + |zp|``) and the velocity ``-J^{-1} F_p dp`` at the points of the last correction (from its
    function values: no further evaluation)."""
    scale = 1 + np.linalg.norm(zp, axis=1)
    corrections = []
    for _ in range(2):
        F, _ = _evaluate(system, zp, p, False, None, chart)
        dz = kernels.lu_solve(factors, F, complex("inf"))[0]  # a failed correction fails the step
        zp = zp - dz
        corrections.append(np.linalg.norm(dz, axis=1) / scale)
    F, _, Fp = _evaluate(system, zp, p, False, dp, chart)
    velocity = -kernels.lu_solve(factors, Fp, 0)[0]
    dz = kernels.lu_solve(factors, F, complex("inf"))[0]
    zp = zp - dz
    c1, c2 = corrections
    last, before = np.linalg.norm(dz, axis=1) / scale, c2.copy()
    for _ in range(EXTRA_CORRECTIONS):
        more = np.flatnonzero((last >= options.tolerance) & (last <= 0.5 * before) & (c1 < options.max_correction))
        if not more.size:
            break
        sub = tuple(f[more] for f in factors)
        F, _, Fp = _evaluate(system, zp[more], p[more], False, dp[more], None if chart is None else chart[more])
        velocity[more] = -kernels.lu_solve(sub, Fp, 0)[0]
        dz = kernels.lu_solve(sub, F, complex("inf"))[0]
        zp[more] -= dz
        before[more] = last[more]
        last[more] = np.linalg.norm(dz, axis=1) / scale[more]
    return zp, c1, c2, last, velocity


def track(
    system: Any,
    z0: np.ndarray,
    pa: np.ndarray,
    pb: np.ndarray,
    options: TrackerOptions = DEFAULT_OPTIONS,
    deadline: float | None = None,
    chart: np.ndarray | None = None,
    done: Any = None,
) -> TrackResult:
    """Every path from ``z0`` (``(B, n)``, solutions over ``pa``, in the charts ``chart``) along
    ``(1 - t) pa + t pb`` (``pa``, ``pb``: ``(m,)`` or ``(B, m)``); see the module docstring.  The result's
    ``chart`` holds each path's chart at its end (moved along the way); ``done(k)``, if given, is told of the ``k``
    paths that ended (arrived or failed) at each step."""
    z0 = np.atleast_2d(np.asarray(z0, dtype=complex))
    B = z0.shape[0]
    paths = _Paths(system, options)
    paths.add(
        z0,
        np.broadcast_to(np.asarray(pa, dtype=complex), (B, system.n_parameters)),
        np.broadcast_to(np.asarray(pb, dtype=complex), (B, system.n_parameters)),
        np.arange(B),
        chart,
    )
    z = z0.copy()
    charts = paths.chart.copy()
    ok = np.zeros(B, dtype=bool)
    steps = np.zeros(B, dtype=np.int64)
    reason = np.array(["time limit"] * B, dtype=object)
    while len(paths):
        if deadline is not None and _clock.now() > deadline:
            break
        arrived, failed, why = paths.step()
        if done is not None and arrived.size + failed.size:
            done(int(arrived.size + failed.size))
        if arrived.size:
            zz, tags, st, ch = paths.take(arrived)
            z[tags], ok[tags], steps[tags], reason[tags], charts[tags] = zz, True, st, "", ch
            failed = _shift(failed, arrived)
        if failed.size:
            zz, tags, st, ch = paths.take(failed)
            z[tags], steps[tags], reason[tags], charts[tags] = zz, st, why, ch
    return TrackResult(z, ok, steps, reason, charts)


def _shift(idx: np.ndarray, removed: np.ndarray) -> np.ndarray:
    """Indices ``idx`` after the rows ``removed`` were taken out (neither set holds the other's rows)."""
    return idx - np.searchsorted(np.sort(removed), idx)
