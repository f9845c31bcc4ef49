"""Paths along polylines of parameters, many jobs in one batch: :class:`Polylines` and :func:`track_job`.

A monodromy loop ``p0 -> q1 -> q2 -> p0`` or a segment ``pa -> pb`` for each start point of a *job*; a path that
reaches the end of an edge goes on along the next at once.  :func:`track_job` runs one job to its end (the task a
Dask worker runs, :mod:`.executors`); its ends come back as :class:`Ends`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .tracker import (
    DEFAULT_OPTIONS,
    TrackerOptions,
    _charts,
    _Paths,
    _shift,
    newton,
    numpy_friendly_malloc,
    one_blas_thread,
    set_threads,
)

__all__ = ["CONVERGED", "Ends", "Polylines", "join_ends", "track_job"]


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

    def __init__(self, system: Any, options: TrackerOptions = DEFAULT_OPTIONS) -> None:
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
        z = np.array([it[1] for it in items], dtype=complex).reshape(len(items), self.system.n)
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
