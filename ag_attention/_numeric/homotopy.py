"""Homotopy continuation in float64: parameter homotopies and monodromy, many paths at once.

docs/math/landscape.md (landscape-monodromy).  A *parametric square system*
``F(z; p) = 0`` (``n`` equations, ``n`` unknowns ``z``, parameters ``p``)
provides ``evaluate(z, p) -> (F, dF/dz)`` on batches and
``parameter_derivative(z, dp) -> dF/dp . dp``.  This module only produces
*candidates*: float64 points that Newton's method says are close to solutions.
What they prove is decided elsewhere (:mod:`.certify`, the Krawczyk test in
ball arithmetic): a tracker's mistake (a path that jumps, one that fails) can
only lower a certified count, never raise it.

* :func:`track` (:mod:`.tracker`, with :func:`newton`): every path along the segment ``p(t) = (1 - t) p_a + t p_b``,
  ``t: 0 -> 1``, with a fourth-order Runge-Kutta predictor on
  ``dz/dt = -F_z^{-1} F_p (p_b - p_a)`` and a Newton corrector at each step;
  the step of each path adapts on its own (from the predictor's error: at most
  doubled after an accepted step, at most halved when Newton does not contract
  to ``tolerance``); all paths advance
  together in numpy batches.  A path fails when its step falls below
  ``min_step``, it takes more than ``max_steps`` steps, or it leaves every
  bound (``|z| > 1e8``).  For parameters ``p_a, p_b`` away from the
  discriminant (random complex ones), the solutions are regular along the whole
  segment with probability one.
* :class:`Polylines` and :func:`track_job` (:mod:`.polylines`): paths along polylines of
  parameters (a monodromy loop ``p0 -> q1 -> q2 -> p0``, a segment), many jobs
  in one batch; ``track_job`` is what a Dask worker runs.  Monodromy, its
  stopping rule and its executors (one process, a Dask cluster) are in
  :mod:`.monodromy`.
* :func:`parameter_homotopy`: the solutions over ``p_a`` carried to ``p_b``
  (every regular isolated solution over ``p_b`` is the end of a path from a
  generic ``p_a``: Morgan and Sommese's parameter homotopy theorem), here with
  :class:`Deduplicator` (distinct points); the names of :mod:`.tracker` and
  :mod:`.polylines` are importable from here too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _clock, _progress
from .polylines import CONVERGED, Ends, Polylines, join_ends, track_job
from .tracker import (
    DEFAULT_OPTIONS,
    ParametricSystem,
    TrackerOptions,
    TrackResult,
    _charts,
    _invariants,
    newton,
    numpy_friendly_malloc,
    one_blas_thread,
    set_threads,
    track,
)

__all__ = [
    "ParametricSystem",
    "TrackerOptions",
    "TrackResult",
    "track",
    "parameter_homotopy",
    "newton",
    "Deduplicator",
    "collisions",
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
    return np.asarray(scale * (rng.standard_normal(like.size) + 1j * rng.standard_normal(like.size)) / np.sqrt(2))


#: the tracker's settings for a path tried again along the same segment
CAREFUL = TrackerOptions(initial_step=0.005, max_step=0.02, max_steps=40000, max_correction=1e-3)


def parameter_homotopy(
    system: Any,
    z: np.ndarray,
    pa: np.ndarray,
    pb: np.ndarray,
    *,
    options: TrackerOptions = DEFAULT_OPTIONS,
    timeout: float | None = None,
    retries: int = 3,
    seed: int = 0,
    chart: np.ndarray | None = None,
    real: bool = False,
    desc: str = "homotopy",
) -> TrackResult:
    """The solutions ``z`` over ``pa`` (in the charts ``chart``) carried to ``pb`` (then refined by Newton there),
    on a progress bar named ``desc`` (paths ended of all, the time left).

    ``real``: the target ``pb`` is real and every point is first moved to a real chart (and stays in real charts),
    so the system has real coefficients at the end, where the realness of solutions can be proven.

    Along one route the paths map the solutions over ``pa`` one to one onto the regular solutions over ``pb`` they
    reach; which one goes where depends on the route.  When some paths fail, *all* of them are tracked again along
    another route, through a random complex parameter (``pa -> q -> pb``), up to ``retries`` times, and the ends
    of every route are pooled (distinct ones kept): a failed path's end is found by the other route (a single path
    retried alone would land on an end that another path already holds).  Row ``i`` of the result is then one of
    the distinct ends found (no longer the end of start ``i``), the rows without one marked failed.
    """
    deadline = None if timeout is None else _clock.after(timeout)
    pa = np.asarray(pa, dtype=complex)
    pb = np.asarray(pb, dtype=complex)
    z = np.atleast_2d(np.asarray(z, dtype=complex))
    nc = _charts(system)
    if nc:
        chart = np.atleast_2d(np.asarray(chart, dtype=complex))
        if real:
            z, chart = system.adapt(z, chart, np.ones(z.shape[0], dtype=bool))
    with _progress.bar(total=z.shape[0], desc=desc, unit="path") as b:
        return _routes(system, z, pa, pb, options, deadline, retries, seed, chart, b)


def _routes(
    system: Any,
    z: np.ndarray,
    pa: np.ndarray,
    pb: np.ndarray,
    options: TrackerOptions,
    deadline: float | None,
    retries: int,
    seed: int,
    chart: np.ndarray | None,
    b: Any,
) -> TrackResult:
    """:func:`parameter_homotopy` once the charts are set: the direct route, then the retries (its docstring)."""
    nc = _charts(system)
    res = _refine(system, track(system, z, pa, pb, options, deadline, chart, b.update), pb)
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
        if len(ends) >= z.shape[0] or (deadline is not None and _clock.now() > deadline):
            break
        q = random_parameter(rng, pa)
        b.total += z.shape[0]
        mid = track(system, z, pa, q, options, deadline, chart, b.update)
        ok = np.flatnonzero(mid.ok)
        b.total += ok.size
        mid_chart = None if not nc or mid.chart is None else mid.chart[ok]
        end = _refine(system, track(system, mid.z[ok], q, pb, options, deadline, mid_chart, b.update), pb)
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


def collisions(
    system: Any, seed: int, z: np.ndarray, charts: np.ndarray | None, done: np.ndarray, N: int, K: int
) -> np.ndarray:
    """Rows of ``z`` (``K`` blocks of ``N`` ends, one block a parameter; ``done``: the rows to compare) whose end
    another path of the same parameter also reached (a path jumped: both are retracked), by ``system``'s
    invariants within :class:`Deduplicator`'s tolerance (``seed``: its hash's)."""
    bad: list[int] = []
    for k in range(K):
        rows = np.arange(k * N, (k + 1) * N)
        rows = rows[done[rows]]
        if rows.size < 2:
            continue
        keys = _invariants(system, z[rows], None if charts is None else charts[rows])
        seen = Deduplicator(keys.shape[1], seed=seed)
        first: dict[int, int] = {}
        for r, key in zip(rows, keys):
            index = seen.add(key)
            if index is None:  # within tolerance of an earlier end: find which, mark both
                scale = 1 + np.max(np.abs(key))
                for idx, other in first.items():
                    if np.max(np.abs(seen.key_list[idx] - key)) <= seen.tol * max(
                        scale, 1 + np.max(np.abs(seen.key_list[idx]))
                    ):
                        bad.extend([other, int(r)])
                        break
            else:
                first[index] = int(r)
    return np.array(sorted(set(bad)), dtype=np.int64)
