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
* :func:`monodromy_solve`: from one start pair ``(z_0, p_0)``, loops
  ``p_0 -> q_1 -> q_2 -> p_0`` through random complex parameters permute the
  solutions over ``p_0`` of the irreducible component through ``z_0``; every
  solution found is tracked through every loop (the set is closed under the
  loops' permutations), then fresh loops are added until ``stable`` in a row
  find nothing new (the stopping rule, as HomotopyContinuation.jl's
  ``max_loops_no_progress``).  For an irreducible component the group of all
  loops acts transitively, so a closed set is complete once the loops generate
  that group; nothing proves they do, which is why the rule is stated and the
  count is compared with msolve's where both finish.
* :func:`parameter_homotopy`: the solutions over ``p_a`` carried to ``p_b``
  (every regular isolated solution over ``p_b`` is the end of a path from a
  generic ``p_a``: Morgan and Sommese's parameter homotopy theorem).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .. import _progress
from .._errors import InvalidArgumentError

__all__ = ["ParametricSystem", "TrackerOptions", "TrackResult", "track", "MonodromyResult", "monodromy_solve",
           "parameter_homotopy", "newton", "Deduplicator"]


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

    def evaluate(self, z: np.ndarray, p: np.ndarray, jacobian: bool = True, dp: np.ndarray | None = None,
                 **chart: Any) -> Any:
        """``(F, dF/dz)`` on a batch (``dF/dz`` None without ``jacobian``); with ``dp``, ``(F, dF/dz, dF/dp . dp)``."""


#: a point is moved to a chart centered on it when its chart quality exceeds this
CHART_LIMIT = 4.0


def _charts(system: Any) -> int:
    return int(getattr(system, "n_chart", 0))


def _evaluate(system: Any, z: np.ndarray, p: np.ndarray, jacobian: bool, dp: np.ndarray | None,
              chart: np.ndarray | None) -> Any:
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
            raise InvalidArgumentError(f"step sizes: need 0 < min_step < initial_step <= max_step <= 1, got "
                                       f"{self.min_step}, {self.initial_step}, {self.max_step}")
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


def newton(system: Any, z: np.ndarray, p: np.ndarray, iterations: int = 3,
           chart: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
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

    def add(self, z: np.ndarray, pa: np.ndarray, pb: np.ndarray, tag: np.ndarray,
            chart: np.ndarray | None = None) -> None:
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
            parts = list(_pool().map(lambda sl: _predict_correct(system, z[sl], t[sl], hh[sl], pa[sl], dp[sl],
                                                                  None if chart is None else chart[sl]),
                                     (slice(0, half), slice(half, B))))
            zp, tn, ok, c1, c2, c3 = (np.concatenate([p[k] for p in parts]) for k in range(6))
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


def _pool() -> Any:
    if not _POOL:
        from concurrent.futures import ThreadPoolExecutor

        _POOL.append(ThreadPoolExecutor(_WORKERS, thread_name_prefix="ag-attention-paths"))
    return _POOL[0]


def _predict_correct(system: Any, z: np.ndarray, t: np.ndarray, hh: np.ndarray, pa: np.ndarray, dp: np.ndarray,
                     chart: np.ndarray | None) -> tuple[np.ndarray, ...]:
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


def track(system: Any, z0: np.ndarray, pa: np.ndarray, pb: np.ndarray,
          options: TrackerOptions = TrackerOptions(), deadline: float | None = None,
          chart: np.ndarray | None = None) -> TrackResult:
    """Every path from ``z0`` (``(B, n)``, solutions over ``pa``, in the charts ``chart``) along
    ``(1 - t) pa + t pb`` (``pa``, ``pb``: ``(m,)`` or ``(B, m)``); see the module docstring.  The result's
    ``chart`` holds each path's chart at its end (moved along the way)."""
    z0 = np.atleast_2d(np.asarray(z0, dtype=complex))
    B = z0.shape[0]
    paths = _Paths(system, options)
    paths.add(z0, np.broadcast_to(np.asarray(pa, dtype=complex), (B, system.n_parameters)),
              np.broadcast_to(np.asarray(pb, dtype=complex), (B, system.n_parameters)), np.arange(B), chart)
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
        self.points: list[np.ndarray] = []
        self.charts: list[np.ndarray | None] = []
        self.key_list: list[np.ndarray] = []
        self.keys = np.empty(0)
        self.order = np.empty(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.points)

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
        index = len(self.points)
        self.points.append(np.array(z, dtype=complex))
        self.charts.append(None if chart is None else np.array(chart, dtype=complex))
        self.key_list.append(key)
        pos = np.searchsorted(self.keys, proj)
        self.keys = np.insert(self.keys, pos, proj)
        self.order = np.insert(self.order, pos, index)
        return index

    def array(self) -> np.ndarray:
        return np.array(self.points, dtype=complex).reshape(len(self.points), -1)

    def chart_array(self, n_chart: int) -> np.ndarray | None:
        if not n_chart:
            return None
        return np.array(self.charts, dtype=complex).reshape(len(self.charts), n_chart)


# ------------------------------------------------------------------ monodromy
@dataclass
class MonodromyResult:
    """The solutions over the base parameter found by monodromy, and how they were found."""

    solutions: np.ndarray  # (N, n) complex, Newton-refined over ``base``
    base: np.ndarray  # the base parameter p_0
    loops: int  # loops used
    paths: int  # paths tracked (one path = one edge of a loop for one solution)
    failures: int  # paths that did not arrive
    seconds: float
    stop: str  # why it stopped: "trace test", "stable", "max_solutions", "time limit"
    stable: int  # the stopping rule: this many fresh loops in a row found nothing new
    history: list[tuple[int, int, int]] = field(default_factory=list)  # (loops, paths so far, solutions so far)
    charts: np.ndarray | None = None  # (N, n_chart): each solution's chart
    recharts: int = 0  # points moved to a chart centered on them along the way
    trace: float | None = None  # the last trace test's deviation from an affine trace (None: not run or failed)

    @property
    def count(self) -> int:
        return int(self.solutions.shape[0])

    def to_dict(self) -> dict[str, Any]:
        return {"solutions": self.count, "loops": self.loops, "paths": self.paths, "failures": self.failures,
                "recharts": self.recharts, "seconds": round(self.seconds, 3), "stop": self.stop,
                "trace_deviation": self.trace, "stopping_rule": STOPPING_RULE.format(stable=self.stable, twice=2 * self.stable)}


#: the stopping rule of :func:`monodromy_solve`, as results state it
STOPPING_RULE = ("every solution through every loop; then the trace test (the sum of the solutions' coordinates "
                 "affine along a random pencil of parameters, to {tol:g} relative), else fresh loops, at most "
                 "{{stable}} in a row without a new solution ({{twice}} after a failed trace test)").format(tol=1e-8)
TRACE_TOLERANCE = 1e-8
#: the tracker's settings for a path tried again along the same segment
CAREFUL = TrackerOptions(initial_step=0.005, max_step=0.02, max_steps=40000, max_correction=1e-3)


def trace_test(system: Any, z: np.ndarray, p0: np.ndarray, rng: np.random.Generator, *,
               chart: np.ndarray | None = None, options: TrackerOptions = TrackerOptions(),
               deadline: float | None = None, attempts: int = 3) -> float | None:
    """The trace test of a solution set over ``p0``: its points carried to ``p0 + s v`` for two random complex
    ``s`` (``v`` random); the sum of their linear coordinates is affine in ``s`` exactly when the set is a union of
    whole fibers of the components it meets (Sommese, Verschelde and Wampler's trace test, here on the pencil of
    parallel slices ``{p = p0 + s v}`` of the incidence correspondence).  The relative deviation from affine, or
    None when a path failed (no conclusion)."""
    z = np.atleast_2d(z)
    for _ in range(attempts):  # a failed path leaves a pencil without conclusion: another pencil
        v = _random_parameter(rng, p0)
        s1 = complex(rng.standard_normal(), rng.standard_normal()) * 0.3
        s2 = complex(rng.standard_normal(), rng.standard_normal()) * 0.3
        sums = []
        size = 0.0
        ends: np.ndarray | None
        for s in (0.0, s1, s2):
            if s == 0.0:
                ends, ch = z, chart
            else:
                res = track(system, z, p0, p0 + s * v, options, deadline, chart)
                bad = np.flatnonzero(~res.ok)
                if bad.size:  # the same segment again, in smaller steps: the same continuation, more carefully
                    again = track(system, z[bad], p0, p0 + s * v, CAREFUL, deadline,
                                  None if chart is None else chart[bad])
                    res.z[bad], res.ok[bad] = again.z, again.ok
                    if res.chart is not None and again.chart is not None:
                        res.chart[bad] = again.chart
                if not res.ok.all():
                    break
                ends, ch = _refine_points(system, res.z, p0 + s * v, res.chart)
                if ends is None:
                    break
            x = _linear(system, ends, ch)
            sums.append(x.sum(axis=0))
            size = max(size, float(np.abs(x).sum(axis=0).max()))
        if len(sums) == 3:
            d1, d2 = sums[1] - sums[0], sums[2] - sums[0]
            return float(np.max(np.abs(d2 - (s2 / s1) * d1)) / max(size, 1e-300))
    return None


def _refine_points(system: Any, z: np.ndarray, p: np.ndarray,
                   chart: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray | None]:
    zr, last = newton(system, z, p, iterations=2, chart=chart if _charts(system) else None)
    if not np.all(last < 1e-8):
        return None, None
    return zr, chart


def _random_parameter(rng: np.random.Generator, like: np.ndarray) -> np.ndarray:
    scale = np.linalg.norm(like) / np.sqrt(like.size) if np.linalg.norm(like) > 0 else 1.0
    return scale * (rng.standard_normal(like.size) + 1j * rng.standard_normal(like.size)) / np.sqrt(2)


def monodromy_solve(system: Any, z0: np.ndarray, p0: np.ndarray, *, seed: int = 0, loops: int = 3,
                    stable: int = 5, max_solutions: int | None = None, timeout: float | None = None,
                    options: TrackerOptions = TrackerOptions(), desc: str = "monodromy",
                    chart0: np.ndarray | None = None, trace_rule: bool = True) -> MonodromyResult:
    """All solutions over ``p0`` of the component through the start solution ``z0`` (in the chart ``chart0``);
    see the module docstring.

    ``loops``: loops from the start; once every solution went through every loop, the trace test
    (:func:`trace_test`, when ``trace_rule``) stops it if it passes, else a fresh loop is added; ``stable``: fresh
    loops in a row without a new solution before stopping anyway;
    ``max_solutions``: stop once this many are found; ``timeout``: seconds, after which what was found is
    returned (``stop = "time limit"``).  Progress on standard error: paths tracked, solutions, failures.

    Paths run asynchronously: a solution that completes a loop is added at once and its own loops start while
    other paths are still under way, so the batch stays full (no round waits for its slowest path).
    """
    if loops < 1 or stable < 1:
        raise InvalidArgumentError(f"loops={loops}, stable={stable}: must be positive")
    rng = np.random.default_rng(seed)
    t0 = time.monotonic()
    deadline = None if timeout is None else t0 + timeout
    p0 = np.asarray(p0, dtype=complex)
    nc = _charts(system)
    c0 = None if not nc else np.atleast_2d(np.asarray(chart0, dtype=complex))
    z0r, last = newton(system, np.atleast_2d(z0), p0, iterations=3, chart=c0)
    if not np.isfinite(last[0]) or last[0] > 1e-6:
        raise InvalidArgumentError("monodromy_solve: the start point is not a regular solution over p0 "
                                   f"(Newton's last correction {last[0]:.2e})")
    found = Deduplicator(system.n, seed=seed)
    found.add(z0r[0], _invariants(system, z0r, c0)[0], None if c0 is None else c0[0])
    corners: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per loop: p0 -> q1 -> q2 -> p0

    def new_loop() -> int:
        # corners at random scales (a factor e^U(-1.5, 3.5) of |p0|): loops of several sizes go around other
        # branch points (measured: with one scale, one solution of 14 of (2,1,2) was never reached)
        corners.append((p0, _random_parameter(rng, p0) * np.exp(rng.uniform(-1.5, 3.5)),
                        _random_parameter(rng, p0) * np.exp(rng.uniform(-1.5, 3.5))))
        return len(corners) - 1

    queue: list[tuple[int, int]] = []  # (solution, loop) pairs to start
    for _ in range(loops):
        queue.append((0, new_loop()))
    pool = _Paths(system, options)
    meta: dict[int, tuple[int, int, int]] = {}  # tag -> (solution, loop, edge)
    next_tag = 0
    paths = failures = 0
    quiet_loops = 0
    fresh_mark: int | None = None  # solutions known when the last fresh loop started
    traced_at = -1  # solutions known at the last trace test
    trace: float | None = None
    stop = "stable"
    history: list[tuple[int, int, int]] = []

    def start(pairs: list[tuple[int, int]], z: np.ndarray, edge: int, charts: np.ndarray | None) -> None:
        nonlocal next_tag
        tags = np.arange(next_tag, next_tag + len(pairs))
        next_tag += len(pairs)
        pa = np.array([corners[j][edge] for _, j in pairs])
        pb = np.array([corners[j][(edge + 1) % 3] for _, j in pairs])
        for tag, (i, j) in zip(tags, pairs):
            meta[int(tag)] = (i, j, edge)
        pool.add(z, pa, pb, tags, charts)

    def inject(k: int) -> None:
        """``k`` random starts of the system (``random_start``), each carried to ``p0``: a solution there that
        loops may not reach (another way into the fiber)."""
        nonlocal next_tag
        maker = getattr(system, "random_start", None)
        if maker is None:
            return
        starts = [maker(rng) for _ in range(k)]
        tags = np.arange(next_tag, next_tag + k)
        next_tag += k
        for tag in tags:
            meta[int(tag)] = (-1, -1, 3)
        pool.add(np.array([st[0] for st in starts]), np.array([st[1] for st in starts]),
                 np.broadcast_to(p0, (k, p0.size)), tags, np.array([st[2] for st in starts]) if nc else None)

    with _progress.bar(desc=desc, unit="path") as bar:
        while True:
            if max_solutions is not None and len(found) >= max_solutions:
                stop = "max_solutions"
                break
            if deadline is not None and time.monotonic() > deadline:
                stop = "time limit"
                break
            room = options.batch - len(pool)
            if room > 0 and queue:
                take, queue = queue[:room], queue[room:]
                rows = [i for i, _ in take]
                charts = found.chart_array(nc)
                start(take, found.array()[rows], 0, None if charts is None else charts[rows])
            if not len(pool):
                # every solution went through every loop so far: the trace test, else a fresh loop
                if fresh_mark is not None:
                    quiet_loops = quiet_loops + 1 if len(found) == fresh_mark else 0
                history.append((len(corners), paths, len(found)))
                if trace_rule and len(found) != traced_at:
                    traced_at = len(found)
                    trace = trace_test(system, found.array(), p0, rng, chart=found.chart_array(nc), options=options,
                                       deadline=deadline)
                    paths += 2 * len(found)
                    if trace is not None and trace < TRACE_TOLERANCE:
                        stop = "trace test"
                        break
                # a failed trace test says solutions are missing (where it applies): twice the fresh loops
                if quiet_loops >= (2 * stable if trace_rule and trace is not None else stable):
                    break
                j = new_loop()
                fresh_mark = len(found)
                queue = [(i, j) for i in range(len(found))]
                inject(max(16, len(found) // 2))
                continue
            arrived, failed, _ = pool.step()
            done_z: list[np.ndarray] = []
            done_c: list[np.ndarray] = []
            if arrived.size:
                zz, tags, _, cc = pool.take(arrived)
                failed = _shift(failed, arrived)
                paths += tags.size
                bar.update(tags.size)
                onward: dict[int, list[tuple[tuple[int, int], np.ndarray, np.ndarray]]] = {}
                for z, tag, ch in zip(zz, tags, cc):
                    i, j, edge = meta.pop(int(tag))
                    if edge < 2:  # (edge 3: an injected start, now over p0)
                        onward.setdefault(edge + 1, []).append(((i, j), z, ch))
                    else:
                        done_z.append(z)
                        done_c.append(ch)
                for edge, items in onward.items():
                    start([pair for pair, _, _ in items], np.array([z for _, z, _ in items]), edge,
                          np.array([ch for _, _, ch in items]) if nc else None)
            if failed.size:
                _, tags, _, _ = pool.take(failed)
                paths += tags.size
                failures += tags.size
                bar.update(tags.size)
                for tag in tags:
                    meta.pop(int(tag))
            if done_z:
                ch_arr = np.array(done_c) if nc else None
                zr, last = newton(system, np.array(done_z), p0, iterations=2, chart=ch_arr)
                keys = _invariants(system, zr, ch_arr)
                for k in range(zr.shape[0]):
                    if last[k] < 1e-8:
                        index = found.add(zr[k], keys[k], None if ch_arr is None else ch_arr[k])
                        if index is not None:
                            queue.extend((index, jj) for jj in range(len(corners)))
                bar.set_postfix_str(f"solutions {len(found)}, failures {failures}, loops {len(corners)}",
                                    refresh=False)
    sols = found.array()
    charts = found.chart_array(nc)
    if len(sols):
        sols, _ = newton(system, sols, p0, iterations=2, chart=charts)
    return MonodromyResult(sols, p0, len(corners), paths, failures, time.monotonic() - t0, stop, stable, history,
                           charts, pool.recharts, trace)


def parameter_homotopy(system: Any, z: np.ndarray, pa: np.ndarray, pb: np.ndarray, *,
                       options: TrackerOptions = TrackerOptions(), timeout: float | None = None, retries: int = 3,
                       seed: int = 0, chart: np.ndarray | None = None, real: bool = False) -> TrackResult:
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
        q = _random_parameter(rng, pa)
        mid = track(system, z, pa, q, options, deadline, chart)
        ok = np.flatnonzero(mid.ok)
        end = _refine(system, track(system, mid.z[ok], q, pb, options, deadline,
                                    None if not nc or mid.chart is None else mid.chart[ok]), pb)
        steps[ok] += mid.steps[ok] + end.steps
        good = np.flatnonzero(end.ok)
        keys = _invariants(system, end.z[good], None if not nc or end.chart is None else end.chart[good])
        for k, row in enumerate(good):
            ends.add(end.z[row], keys[k], None if not nc or end.chart is None else end.chart[row])
    found = ends.array()
    B = z.shape[0]
    out = TrackResult(np.full((B, system.n), np.nan, dtype=complex), np.zeros(B, dtype=bool), steps,
                      np.array(["no route reached it"] * B, dtype=object),
                      None if not nc else np.zeros((B, nc), dtype=complex))
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
