"""Homotopy continuation in float64: parameter homotopies and monodromy, many paths at once.

docs/math/landscape.md (landscape-monodromy).  A *parametric square system*
``F(z; p) = 0`` (``n`` equations, ``n`` unknowns ``z``, parameters ``p``)
provides ``evaluate(z, p) -> (F, dF/dz)`` on batches and
``parameter_derivative(z, dp) -> dF/dp . dp``.  This module only produces
*candidates*: float64 points that Newton's method says are close to solutions.
What they prove is decided elsewhere (:mod:`.certify`, the Krawczyk test in
ball arithmetic): a tracker's mistake (a path that jumps, one that fails) can
only lower a certified count, never raise it.

* :func:`track`: every path along the segment ``p(t) = (1 - t) p_a + t p_b``,
  ``t: 0 -> 1``, with a fourth-order Runge-Kutta predictor on
  ``dz/dt = -F_z^{-1} F_p (p_b - p_a)`` and a Newton corrector at each step;
  the step of each path adapts on its own (halved when Newton does not contract
  to ``tolerance``, doubled after two accepted steps); all paths advance
  together in numpy batches.  A path fails when its step falls below
  ``min_step``, it takes more than ``max_steps`` steps, or it leaves every
  bound (``|z| > 1e8``).  For parameters ``p_a, p_b`` away from the
  discriminant (random complex ones), the solutions are regular along the whole
  segment with probability one.
* :class:`Polylines` and :func:`track_job`: paths along polylines of
  parameters (a monodromy loop ``p0 -> q1 -> q2 -> p0``, a segment), many jobs
  in one batch; ``track_job`` is what a Dask worker runs.  Monodromy, its
  stopping rule and its executors (one process, a Dask cluster) are in
  :mod:`.monodromy`.
* :func:`parameter_homotopy`: the solutions over ``p_a`` carried to ``p_b``
  (every regular isolated solution over ``p_b`` is the end of a path from a
  generic ``p_a``: Morgan and Sommese's parameter homotopy theorem).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._errors import InvalidArgumentError

__all__ = [
    "ParametricSystem",
    "TrackerOptions",
    "TrackResult",
    "track",
    "parameter_homotopy",
    "newton",
    "Deduplicator",
    "random_parameter",
    "CAREFUL",
    "Ends",
    "Polylines",
    "track_job",
    "join_ends",
    "set_threads",
    "one_blas_thread",
    "numpy_friendly_malloc",
    "CONVERGED",
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
    return f(z, chart) if _charts(system) else f(z)


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
        if self.max_steps < 1 or self.batch < 1:
            raise InvalidArgumentError(f"max_steps={self.max_steps}, batch={self.batch}: must be positive")


@dataclass
class TrackResult:
    """The end of each path: its point, whether it reached ``t = 1``, and its number of steps."""

    z: np.ndarray  # (B, n)
    ok: np.ndarray  # (B,) bool
    steps: np.ndarray  # (B,) int
    reason: np.ndarray  # (B,) str: "" for a path that arrived, else why it failed
    chart: np.ndarray | None = None  # (B, n_chart): each end's chart


def _solve(J: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``J^{-1} rhs`` for each of a batch, and which systems were solvable (finite, nonsingular)."""
    good = np.isfinite(J).all(axis=(1, 2)) & np.isfinite(rhs).all(axis=1)
    out = np.full(rhs.shape, np.nan, dtype=complex)
    if good.any():
        Jg, rg = J[good], rhs[good]
        try:
            out[good] = np.linalg.solve(Jg, rg[..., None])[..., 0]
        except np.linalg.LinAlgError:  # one singular matrix fails the whole batch: solve them one by one
            idx = np.flatnonzero(good)
            for k, i in enumerate(idx):
                try:
                    out[i] = np.linalg.solve(Jg[k], rg[k])
                except np.linalg.LinAlgError:
                    good[i] = False
    good &= np.isfinite(out).all(axis=1)
    return out, good


def _inverse(J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of each of a batch of matrices, and which were invertible (finite, nonsingular)."""
    good = np.isfinite(J).all(axis=(1, 2))
    out = np.full(J.shape, np.nan, dtype=complex)
    if good.any():
        try:
            out[good] = np.linalg.inv(J[good])
        except np.linalg.LinAlgError:
            for i in np.flatnonzero(good):
                try:
                    out[i] = np.linalg.inv(J[i])
                except np.linalg.LinAlgError:
                    good[i] = False
    good &= np.isfinite(out).all(axis=(1, 2))
    return out, good


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

    FIELDS = ("z", "pa", "pb", "chart", "t", "h", "good", "steps", "tag")

    def __init__(self, system: Any, options: TrackerOptions) -> None:  # system: a ParametricSystem
        n, m, c = system.n, system.n_parameters, _charts(system)
        self.system, self.options = system, options
        self.z = np.empty((0, n), dtype=complex)
        self.pa = np.empty((0, m), dtype=complex)
        self.pb = np.empty((0, m), dtype=complex)
        self.chart = np.empty((0, c), dtype=complex)
        self.t = np.empty(0)
        self.h = np.empty(0)
        self.good = np.empty(0, dtype=np.int64)
        self.steps = np.empty(0, dtype=np.int64)
        self.tag = np.empty(0, dtype=np.int64)
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
        self.good = np.concatenate([self.good, np.zeros(k, dtype=np.int64)])
        self.steps = np.concatenate([self.steps, np.zeros(k, dtype=np.int64)])
        self.tag = np.concatenate([self.tag, np.asarray(tag, dtype=np.int64)])

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
        o, system = self.options, self.system
        B = min(len(self), o.batch)
        idx = np.arange(B)
        z, t = self.z[:B], self.t[:B]
        chart = self.chart[:B] if _charts(system) else None
        pa, dp = self.pa[:B], self.pb[:B] - self.pa[:B]
        hh = np.minimum(self.h[:B], 1.0 - t)
        if B >= 2 * PARALLEL_MIN and _WORKERS > 1:  # two halves at once: numpy releases the GIL in its loops
            half = B // 2

            def part(sl: slice) -> tuple[np.ndarray, ...]:
                return _predict_correct(
                    system, z[sl], t[sl], hh[sl], pa[sl], dp[sl], None if chart is None else chart[sl]
                )

            # the second half on the pool's thread, the first here; the pool's half is always waited for, also when
            # an interrupt (Ctrl-C) comes meanwhile, which then goes on (no future is left behind)
            other = _pool().submit(part, slice(half, B))
            try:
                first = part(slice(0, half))
            finally:
                second = other.result()
            zp, tn, ok, c1, c2, c3 = (np.concatenate([first[k], second[k]]) for k in range(6))
        else:
            zp, tn, ok, c1, c2, c3 = _predict_correct(system, z, t, hh, pa, dp, chart)
        accept = ok & (c1 < o.max_correction) & (c3 < o.tolerance) & ((c2 <= 0.5 * c1) | (c2 < o.tolerance))
        accept &= np.isfinite(zp).all(axis=1)
        a = idx[accept]
        self.z[a] = zp[accept]
        self.t[a] = tn[accept]
        self.steps[:B] += 1
        self.good[a] += 1
        grow = a[self.good[a] >= 2]
        self.h[grow] = np.minimum(self.h[grow] * 2, o.max_step)
        self.good[grow] = 0
        r = idx[~accept]
        self.h[r] *= 0.5
        self.good[r] = 0
        arrived = a[self.t[a] >= 1.0 - 1e-15]
        if _charts(system) and a.size:  # points far from their chart's center move to a chart centered on them
            far = a[system.chart_quality(self.z[a], self.chart[a]) > CHART_LIMIT]
            if far.size:
                real = np.all(self.chart[far].imag == 0, axis=1)
                self.z[far], self.chart[far] = system.adapt(self.z[far], self.chart[far], real)
                self.recharts += far.size
        reasons = np.full(B, "", dtype=object)
        reasons[np.linalg.norm(self.z[:B], axis=1) > o.max_norm] = "diverged"
        reasons[r[self.h[r] < o.min_step]] = "step too small"
        reasons[(self.steps[:B] >= o.max_steps) & (reasons == "")] = "too many steps"
        reasons[arrived] = ""
        failed = np.flatnonzero(reasons != "")
        return arrived, failed, reasons[failed]


#: a batch of at least twice this many paths is stepped in two threads
PARALLEL_MIN = 128
_WORKERS = min(2, os.cpu_count() or 1)
_POOL: list[Any] = []


def one_blas_thread() -> Any:
    """A context in which BLAS runs one thread (threadpoolctl): the tracker's matrices are small and batched, BLAS
    threads only cost there, and on 2 cores two BLAS threads beside an msolve job stalled one 32 x 160 SVD for more
    than a minute (measured at (4,4))."""
    from threadpoolctl import threadpool_limits

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
        import ctypes

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
        from concurrent.futures import ThreadPoolExecutor

        _POOL.append(ThreadPoolExecutor(1, thread_name_prefix="ag-attention-paths"))
    return _POOL[0]


def _predict_correct(
    system: Any, z: np.ndarray, t: np.ndarray, hh: np.ndarray, pa: np.ndarray, dp: np.ndarray, chart: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    """One predictor-corrector step of a batch: the corrected points, their ``t``, whether every linear solve
    succeeded, and the three Newton corrections (relative to ``1 + |z|``)."""
    with np.errstate(all="ignore"):

        def velocity(zz: np.ndarray, tt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            _, J, rhs = _evaluate(system, zz, pa + tt[:, None] * dp, True, dp, chart)
            v, ok = _solve(J, rhs)
            return -np.nan_to_num(v), ok

        k1, o1 = velocity(z, t)
        k2, o2 = velocity(z + (hh / 2)[:, None] * k1, t + hh / 2)
        k3, o3 = velocity(z + (hh / 2)[:, None] * k2, t + hh / 2)
        tn = t + hh
        p = pa + tn[:, None] * dp
        # the last stage's Jacobian (at the end of the step) is inverted once: its velocity, then a chord Newton
        # corrector with it (function values only: a fraction of the cost of a Jacobian)
        _, J4, rhs4 = _evaluate(system, z + hh[:, None] * k3, p, True, dp, chart)
        Jinv, o4 = _inverse(J4)
        Jinv = np.nan_to_num(Jinv)
        k4 = -np.matmul(Jinv, rhs4[..., None])[..., 0]
        zp = z + (hh / 6)[:, None] * (k1 + 2 * k2 + 2 * k3 + k4)
        ok = o1 & o2 & o3 & o4
        scale = 1 + np.linalg.norm(zp, axis=1)
        corrections = []
        for _ in range(3):
            F, _ = _evaluate(system, zp, p, False, None, chart)
            dz = np.nan_to_num(np.matmul(Jinv, F[..., None])[..., 0])
            zp = zp - dz
            corrections.append(np.linalg.norm(dz, axis=1) / scale)
        return zp, tn, ok, corrections[0], corrections[1], corrections[2]


def track(
    system: Any,
    z0: np.ndarray,
    pa: np.ndarray,
    pb: np.ndarray,
    options: TrackerOptions = TrackerOptions(),
    deadline: float | None = None,
    chart: np.ndarray | None = None,
) -> TrackResult:
    """Every path from ``z0`` (``(B, n)``, solutions over ``pa``, in the charts ``chart``) along
    ``(1 - t) pa + t pb`` (``pa``, ``pb``: ``(m,)`` or ``(B, m)``); see the module docstring.  The result's
    ``chart`` holds each path's chart at its end (moved along the way)."""
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
        if deadline is not None and time.monotonic() > deadline:
            break
        arrived, failed, why = paths.step()
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


# ------------------------------------------------------------------ polylines
@dataclass
class Ends:
    """Where some paths of one job ended: rows ``index`` of the job, their points (Newton-refined at the last
    vertex), charts, whether each arrived and converged there, why not, Newton's last correction, and steps."""

    job: int
    index: np.ndarray  # (k,) rows of the job
    z: np.ndarray  # (k, n)
    chart: np.ndarray | None  # (k, n_chart)
    ok: np.ndarray  # (k,) bool: arrived at the last vertex and Newton converged there (correction < 1e-8)
    reason: np.ndarray  # (k,) str: "" or why the path failed
    last: np.ndarray  # (k,) Newton's last correction at the end (inf where it failed)
    steps: np.ndarray  # (k,) steps over all edges
    seconds: float = 0.0  # the work's seconds, where one task ran the whole job (:func:`track_job`)


#: Newton's last correction (relative to ``1 + |z|``) below which an end counts as converged
CONVERGED = 1e-8


class Polylines:
    """Paths along polylines of parameters ``v_0 -> v_1 -> ... -> v_k`` (a loop: ``p0 -> q1 -> q2 -> p0``; a
    segment: ``pa -> pb``), many jobs at once in one batch (:class:`_Paths`): a path that reaches the end of an edge
    goes on along the next at once, so the batch stays full while single paths take long.  A *job* is a set of
    start points, each with its polyline (``vertex_sets[which[i]]``); its ends come back as :class:`Ends`, a few
    rows at a time, each refined by Newton at its last vertex."""

    def __init__(self, system: Any, options: TrackerOptions = TrackerOptions()) -> None:
        self.system = system
        self.paths = _Paths(system, options)
        self._jobs: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # job -> (vertex_sets, which)
        self._tag_job: list[int] = []
        self._tag_row: list[int] = []
        self._tag_edge: list[int] = []
        self._left: dict[int, int] = {}  # job -> paths under way
        # paths not yet in the batch: (job, first row, points, charts); the batch is topped up from here, so a job of
        # 70,000 paths (a trace test) does not make every step copy 70,000 rows
        self._backlog: list[tuple[int, int, np.ndarray, np.ndarray | None]] = []
        self._waiting = 0

    def __len__(self) -> int:
        return len(self.paths) + self._waiting

    def add(
        self, job: int, z: np.ndarray, charts: np.ndarray | None, vertex_sets: np.ndarray, which: np.ndarray
    ) -> None:
        """Start the paths of ``job``: row ``i`` of ``z`` (in the chart ``charts[i]``) along the polyline
        ``vertex_sets[which[i]]`` (``vertex_sets``: ``(L, k + 1, m)``, ``k >= 1`` edges)."""
        z = np.atleast_2d(np.asarray(z, dtype=complex))
        vertex_sets = np.asarray(vertex_sets, dtype=complex)
        which = np.asarray(which, dtype=np.int64)
        if vertex_sets.ndim != 3 or vertex_sets.shape[1] < 2 or which.shape != (z.shape[0],):
            raise InvalidArgumentError(
                f"a job needs vertex sets (L, k + 1 >= 2, m) and one index per start, got "
                f"{vertex_sets.shape} and {which.shape} for {z.shape[0]} starts"
            )
        if job in self._jobs:
            raise InvalidArgumentError(f"job {job} is already under way")
        self._jobs[job] = (vertex_sets, which)
        B = z.shape[0]
        self._left[job] = B
        self._backlog.append((job, 0, z, None if charts is None else np.asarray(charts)))
        self._waiting += B
        self._top_up()

    def _top_up(self) -> None:
        """Move paths from the backlog into the batch while it has room."""
        room = self.paths.options.batch - len(self.paths)
        while room > 0 and self._backlog:
            job, first, z, charts = self._backlog[0]
            k = min(room, z.shape[0] - first)
            rows = np.arange(first, first + k)
            vertex_sets, which = self._jobs[job]
            tags = np.arange(len(self._tag_job), len(self._tag_job) + k)
            self._tag_job.extend([job] * k)
            self._tag_row.extend(rows.tolist())
            self._tag_edge.extend([0] * k)
            self.paths.add(
                z[rows],
                vertex_sets[which[rows], 0],
                vertex_sets[which[rows], 1],
                tags,
                None if charts is None else charts[rows],
            )
            self._waiting -= k
            room -= k
            if first + k == z.shape[0]:
                self._backlog.pop(0)
            else:
                self._backlog[0] = (job, first + k, z, charts)

    def step(self) -> list[Ends]:
        """One predictor-corrector step of every path under way (:meth:`_Paths.step`); the ends reached."""
        self._top_up()
        arrived, failed, why = self.paths.step()
        out: dict[int, list[tuple[int, np.ndarray, np.ndarray | None, bool, str, int]]] = {}
        if arrived.size:
            zz, tags, st, cc = self.paths.take(arrived)
            failed = _shift(failed, arrived)
            onward: dict[tuple[int, int], list[int]] = {}
            for k, tag in enumerate(tags):
                job, edge = self._tag_job[tag], self._tag_edge[tag]
                vs, which = self._jobs[job]
                if edge + 2 < vs.shape[1]:  # another edge: on at once, same tag
                    onward.setdefault((job, edge + 1), []).append(k)
                else:
                    out.setdefault(job, []).append((self._tag_row[tag], zz[k], cc[k], True, "", int(st[k])))
            for (job, edge), ks in onward.items():
                vs, which = self._jobs[job]
                sel = np.array(ks)
                rows = np.array([self._tag_row[tags[k]] for k in ks])
                for k in ks:
                    self._tag_edge[tags[k]] = edge
                self.paths.add(
                    zz[sel],
                    vs[which[rows], edge],
                    vs[which[rows], edge + 1],
                    tags[sel],
                    cc[sel] if _charts(self.system) else None,
                )
                self.paths.steps[-len(ks) :] = st[sel]  # steps count over the whole polyline
        if failed.size:
            reasons = dict(zip(self.paths.tag[failed].tolist(), why))
            zz, tags, st, cc = self.paths.take(failed)
            for k, tag in enumerate(tags):
                out.setdefault(self._tag_job[tag], []).append(
                    (self._tag_row[tag], zz[k], cc[k], False, str(reasons[int(tag)]), int(st[k]))
                )
        return [self._finish(job, items) for job, items in out.items()]

    def _finish(self, job: int, items: list[tuple[int, np.ndarray, np.ndarray | None, bool, str, int]]) -> Ends:
        vs, which = self._jobs[job]
        rows = np.array([it[0] for it in items], dtype=np.int64)
        z = np.array([it[1] for it in items], dtype=complex).reshape(len(items), -1)
        nc = _charts(self.system)
        chart = np.array([it[2] for it in items], dtype=complex).reshape(len(items), nc) if nc else None
        ok = np.array([it[3] for it in items], dtype=bool)
        reason = np.array([it[4] for it in items], dtype=object)
        steps = np.array([it[5] for it in items], dtype=np.int64)
        last = np.full(len(items), np.inf)
        good = np.flatnonzero(ok)
        if good.size:
            end = vs[which[rows[good]], -1]
            zr, lg = newton(self.system, z[good], end, iterations=2, chart=None if chart is None else chart[good])
            z[good], last[good] = zr, lg
            bad = good[~(lg < CONVERGED)]
            ok[bad] = False
            reason[bad] = "not converged at the end"
        self._left[job] -= len(items)
        if self._left[job] == 0:
            del self._left[job], self._jobs[job]
        return Ends(job, rows, z, chart, ok, reason, last, steps)

    def drop(self) -> list[int]:
        """Stop every path under way; the jobs that had paths left."""
        jobs = sorted(self._left)
        if len(self.paths):
            self.paths.take(np.arange(len(self.paths)))
        self._left.clear()
        self._jobs.clear()
        self._backlog.clear()
        self._waiting = 0
        return jobs


def track_job(
    system: Any,
    job: int,
    z: np.ndarray,
    charts: np.ndarray | None,
    vertex_sets: np.ndarray,
    which: np.ndarray,
    options: TrackerOptions,
    wall_deadline: float | None = None,
    threads: int | None = None,
) -> Ends:
    """Every path of one job to its end (:class:`Polylines`), stopped at ``wall_deadline`` (``time.time()``; the
    unfinished paths are returned as failed with the reason ``"time limit"``): the task a Dask worker runs.
    ``threads``: threads stepping a batch (1 on a worker process: the cluster has a process per core)."""
    if threads is not None:
        set_threads(threads)
    numpy_friendly_malloc()
    t0 = time.perf_counter()
    P = Polylines(system, options)
    P.add(job, z, charts, vertex_sets, which)
    parts: list[Ends] = []
    with one_blas_thread():
        while len(P):
            if wall_deadline is not None and time.time() > wall_deadline:
                break
            parts.extend(P.step())
    B = np.atleast_2d(z).shape[0]
    done = np.zeros(B, dtype=bool)
    for e in parts:
        done[e.index] = True
    nc = _charts(system)
    if not done.all():  # the time limit: the rest as failed, where they were
        rows = np.flatnonzero(~done)
        P.drop()
        parts.append(
            Ends(
                job,
                rows,
                np.atleast_2d(np.asarray(z, dtype=complex))[rows],
                None if not nc or charts is None else np.asarray(charts)[rows],
                np.zeros(rows.size, dtype=bool),
                np.array(["time limit"] * rows.size, dtype=object),
                np.full(rows.size, np.inf),
                np.zeros(rows.size, dtype=np.int64),
            )
        )
    out = join_ends(job, parts, nc)
    out.seconds = time.perf_counter() - t0
    return out


def join_ends(job: int, parts: list[Ends], n_chart: int) -> Ends:
    """Several :class:`Ends` of one job as one, rows sorted."""
    if not parts:
        return Ends(
            job,
            np.zeros(0, dtype=np.int64),
            np.zeros((0, 0), dtype=complex),
            None,
            np.zeros(0, dtype=bool),
            np.zeros(0, dtype=object),
            np.zeros(0),
            np.zeros(0, dtype=np.int64),
        )
    index = np.concatenate([e.index for e in parts])
    order = np.argsort(index, kind="stable")
    chart = None
    if n_chart and all(e.chart is not None for e in parts):
        chart = np.concatenate([e.chart for e in parts if e.chart is not None])[order]
    return Ends(
        job,
        index[order],
        np.concatenate([e.z for e in parts])[order],
        chart,
        np.concatenate([e.ok for e in parts])[order],
        np.concatenate([e.reason for e in parts])[order],
        np.concatenate([e.last for e in parts])[order],
        np.concatenate([e.steps for e in parts])[order],
    )


# ------------------------------------------------------------------ deduplication
class Deduplicator:
    """A growing set of points told apart by a key (the point itself, or invariants that do not depend on its
    chart): ``add`` keeps a point unless a key within ``tol (1 + |key|)`` (max norm) is there.  Candidates are found
    by a random projection kept sorted."""

    def __init__(self, n: int, tol: float = 1e-6, seed: int = 0) -> None:
        self.n = n
        self.tol = tol
        self.seed = seed
        self.direction: np.ndarray | None = None
        self._size = 0
        self._points = np.zeros((16, n), dtype=complex)  # grown by doubling: array() is a view, O(1)
        self._charts: np.ndarray | None = None
        self.key_list: list[np.ndarray] = []
        self.keys = np.empty(0)
        self.order = np.empty(0, dtype=np.int64)

    def __len__(self) -> int:
        return self._size

    def add(self, z: np.ndarray, key: np.ndarray | None = None, chart: np.ndarray | None = None) -> int | None:
        """The index of ``z`` if it is new, else None."""
        key = np.asarray(z if key is None else key)
        if self.direction is None:
            self.direction = np.random.default_rng(self.seed).standard_normal(key.size) / np.sqrt(key.size)
        proj = float(np.real(key @ self.direction))
        size = float(np.max(np.abs(key)))
        radius = self.tol * (1 + size) * np.sqrt(key.size) * 4
        lo = np.searchsorted(self.keys, proj - radius)
        hi = np.searchsorted(self.keys, proj + radius)
        for j in self.order[lo:hi]:
            other = self.key_list[int(j)]
            if np.max(np.abs(other - key)) <= self.tol * (1 + max(size, float(np.max(np.abs(other))))):
                return None
        index = self._size
        if index == self._points.shape[0]:
            self._points = np.concatenate([self._points, np.zeros_like(self._points)])
            if self._charts is not None:
                self._charts = np.concatenate([self._charts, np.zeros_like(self._charts)])
        self._points[index] = z
        if chart is not None:
            chart = np.asarray(chart, dtype=complex).reshape(-1)
            if self._charts is None:
                self._charts = np.zeros((self._points.shape[0], chart.size), dtype=complex)
            self._charts[index] = chart
        self._size += 1
        self.key_list.append(key)
        pos = np.searchsorted(self.keys, proj)
        self.keys = np.insert(self.keys, pos, proj)
        self.order = np.insert(self.order, pos, index)
        return index

    def array(self) -> np.ndarray:
        """The points kept, in the order they were added (a view: do not write to it)."""
        return self._points[: self._size]

    def chart_array(self, n_chart: int) -> np.ndarray | None:
        if not n_chart:
            return None
        if self._charts is None:
            return np.zeros((self._size, n_chart), dtype=complex)
        return self._charts[: self._size]


def random_parameter(rng: np.random.Generator, like: np.ndarray) -> np.ndarray:
    """A random complex parameter of the size of ``like`` (Gaussian, scaled to ``like``'s root mean square)."""
    scale = np.linalg.norm(like) / np.sqrt(like.size) if np.linalg.norm(like) > 0 else 1.0
    return scale * (rng.standard_normal(like.size) + 1j * rng.standard_normal(like.size)) / np.sqrt(2)


#: the tracker's settings for a path tried again along the same segment
CAREFUL = TrackerOptions(initial_step=0.005, max_step=0.02, max_steps=40000, max_correction=1e-3)


def parameter_homotopy(
    system: Any,
    z: np.ndarray,
    pa: np.ndarray,
    pb: np.ndarray,
    *,
    options: TrackerOptions = TrackerOptions(),
    timeout: float | None = None,
    retries: int = 3,
    seed: int = 0,
    chart: np.ndarray | None = None,
    real: bool = False,
) -> TrackResult:
    """The solutions ``z`` over ``pa`` (in the charts ``chart``) carried to ``pb`` (then refined by Newton there).

    ``real``: the target ``pb`` is real and every point is first moved to a real chart (and stays in real charts),
    so the system has real coefficients at the end, where the realness of solutions can be proven.

    Along one route the paths map the solutions over ``pa`` one to one onto the regular solutions over ``pb`` they
    reach; which one goes where depends on the route.  When some paths fail, *all* of them are tracked again along
    another route, through a random complex parameter (``pa -> q -> pb``), up to ``retries`` times, and the ends
    of every route are pooled (distinct ones kept): a failed path's end is found by the other route (a single path
    retried alone would land on an end that another path already holds).  Row ``i`` of the result is then one of
    the distinct ends found (no longer the end of start ``i``), the rows without one marked failed.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    pa = np.asarray(pa, dtype=complex)
    pb = np.asarray(pb, dtype=complex)
    z = np.atleast_2d(np.asarray(z, dtype=complex))
    nc = _charts(system)
    if nc:
        chart = np.atleast_2d(np.asarray(chart, dtype=complex))
        if real:
            z, chart = system.adapt(z, chart, np.ones(z.shape[0], dtype=bool))
    res = _refine(system, track(system, z, pa, pb, options, deadline, chart), pb)
    if res.ok.all() or retries == 0:
        return res
    rng = np.random.default_rng(seed)
    ends = Deduplicator(system.n, seed=seed)
    ok_rows = np.flatnonzero(res.ok)
    keys = _invariants(system, res.z[ok_rows], None if res.chart is None or not nc else res.chart[ok_rows])
    for k, row in enumerate(ok_rows):
        ends.add(res.z[row], keys[k], None if not nc or res.chart is None else res.chart[row])
    steps = res.steps.copy()
    for _ in range(retries):
        if len(ends) >= z.shape[0] or (deadline is not None and time.monotonic() > deadline):
            break
        q = random_parameter(rng, pa)
        mid = track(system, z, pa, q, options, deadline, chart)
        ok = np.flatnonzero(mid.ok)
        end = _refine(
            system,
            track(system, mid.z[ok], q, pb, options, deadline, None if not nc or mid.chart is None else mid.chart[ok]),
            pb,
        )
        steps[ok] += mid.steps[ok] + end.steps
        good = np.flatnonzero(end.ok)
        keys = _invariants(system, end.z[good], None if not nc or end.chart is None else end.chart[good])
        for k, row in enumerate(good):
            ends.add(end.z[row], keys[k], None if not nc or end.chart is None else end.chart[row])
    found = ends.array()
    B = z.shape[0]
    out = TrackResult(
        np.full((B, system.n), np.nan, dtype=complex),
        np.zeros(B, dtype=bool),
        steps,
        np.array(["no route reached it"] * B, dtype=object),
        None if not nc else np.zeros((B, nc), dtype=complex),
    )
    m = min(B, found.shape[0])
    out.z[:m] = found[:m]
    out.ok[:m] = True
    out.reason[:m] = ""
    if nc and out.chart is not None:
        charts = ends.chart_array(nc)
        assert charts is not None
        out.chart[:m] = charts[:m]
    return out


def _refine(system: Any, res: TrackResult, pb: np.ndarray) -> TrackResult:
    """Newton over ``pb`` at the arrived ends; an end that does not converge is marked failed."""
    if res.ok.any():
        rows = np.flatnonzero(res.ok)
        ch = None if res.chart is None or not _charts(system) else res.chart[rows]
        zr, last = newton(system, res.z[rows], pb, iterations=3, chart=ch)
        res.z[rows] = zr
        bad = rows[last > 1e-8]
        res.ok[bad] = False
        res.reason[bad] = "not converged at the target"
    return res
