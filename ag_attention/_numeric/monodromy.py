"""Monodromy: every solution over a base parameter of the component through a start solution, and when to stop.

docs/math/landscape.md (landscape-monodromy).  From one start pair ``(z_0, p_0)``, loops
``p_0 -> q_1 -> q_2 -> p_0`` through random complex parameters (at random scales) permute the solutions over
``p_0`` of the irreducible component through ``z_0``; every solution found goes through every loop, so the set
found is closed under the loops' permutations.  The paths run on an *executor* (:mod:`.executors`: this process,
or a Dask cluster), in jobs of many paths; a solution that completes a loop starts its own loops at once.

**When it stops** (:data:`STOPPING_RULE`; nothing else stops it):

* ``"trace test"``: once every solution went through every loop, the trace test (:meth:`Monodromy._trace_test`):
  the solutions carried to ``p_0 + s v`` for two random ``s``; the sum of their linear coordinates is affine in
  ``s`` exactly when the set is a union of whole fibers of the components it meets (Sommese, Verschelde and
  Wampler); it passes on :data:`TRACE_PENCILS` random pencils ``v`` in a row, each below :data:`TRACE_TOLERANCE`.  If
  it fails, a fresh loop is added with random start pairs carried to ``p_0`` (``max(16, N/2)`` of them, doubled for
  each round in a row that found nothing: another way into the fiber), and the round starts again.  A round without
  a new solution is *not* a stop (a stall of 18 loops at 13 of 14 solutions was measured on one BLAS kernel, the
  14th found at the 19th loop);
* ``"known count"``: the solutions found reach a count known otherwise (``known``: msolve's count of the same
  problem, which may arrive while the monodromy runs);
* ``"max_solutions"``: a cap, asked for;
* ``"time limit"``: the deadline (``deadline``, or a function of the solutions found, so that a caller can keep
  the time their certification will need); ``"interrupted"``: Ctrl-C; ``"cluster failed: ..."``: the Dask
  cluster was lost.  These return what was found: the result says it is not final (:attr:`MonodromyResult.final`).

**Kept.** With ``save=FILE`` the state (the base, the solutions and their charts, the loops, the pairs still to
run, the random generator, the counters) is written atomically every ``save_every`` seconds and at the end
(:meth:`Monodromy.save`); :meth:`Monodromy.resume` continues from it, so a long count survives a crash and can be
spread over days.  A file of another problem (another system, form or seed: the ``fingerprint``) is refused.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import _clock, _progress
from .._checks import check_int
from .._errors import ComputationError, InvalidArgumentError, OutputError
from .executors import executor
from .homotopy import CAREFUL, Deduplicator, collisions, random_parameter
from .monodromy_state import FORMAT, read_state, write_state
from .polylines import CONVERGED, Ends
from .tracker import TrackerOptions, _charts, _invariants, _linear, newton

__all__ = [
    "MonodromyResult",
    "Monodromy",
    "monodromy_solve",
    "STOPPING_RULE",
    "TRACE_TOLERANCE",
    "TRACE_PENCILS",
    "LOOP_OPTIONS",
    "FINAL_STOPS",
    "FORMAT",
]

#: the trace test passes below this relative deviation from an affine trace
TRACE_TOLERANCE = 1e-8
#: ... on this many random pencils in a row (measured at (4,1,4), 35,963 solutions: one pencil gave 6.2e-9, two
#: others 5.8e-8 and 6.8e-8: one pencil's pass was luck at that size; the decided sizes give 1e-15 on each)
TRACE_PENCILS = 2
#: the stops after which the set is taken as complete (the others are limits: the result is a lower bound)
FINAL_STOPS = ("trace test", "known count")
#: the stopping rule, as results state it
STOPPING_RULE = (
    "every solution through every loop, then the trace test (the sum of the solutions' coordinates "
    f"affine along {TRACE_PENCILS} random pencils of parameters, each to {TRACE_TOLERANCE:g} relative); if it fails, a "
    "fresh loop and random start pairs carried to the base, and again; it stops only when the trace "
    "test passes, when the solutions found reach a count known otherwise, or at a limit (the time "
    "limit, a cap, an interrupt), which it says"
)
#: the tracker of the loops: Newton's third correction to 1e-6 (the ends are refined to 1e-8 at the base; a path
#: that jumps only finds a solution found anyway: measured on (2,2,2), 1.9 times fewer steps than 1e-9, no jump in
#: 4 x 284 paths against a careful tracker)
LOOP_OPTIONS = TrackerOptions(tolerance=1e-6)
#: seconds before the first save of a run (then every ``save_every``)
FIRST_SAVE = 10.0


@dataclass
class MonodromyResult:
    """The solutions over the base parameter found by monodromy, and how they were found."""

    solutions: np.ndarray  # (N, n) complex, Newton-refined over ``base``
    base: np.ndarray  # the base parameter p_0
    loops: int  # loops used
    paths: int  # paths tracked (one path = one edge of a loop for one solution)
    failures: int  # paths that did not arrive
    seconds: float
    stop: str  # why it stopped: see FINAL_STOPS and the module docstring
    history: list[tuple[int, int, int]] = field(default_factory=list)  # (loops, paths so far, solutions so far)
    charts: np.ndarray | None = None  # (N, n_chart): each solution's chart
    recharts: int = 0  # points moved to a chart centered on them along the way (this process's paths)
    trace: float | None = None  # the last trace test's deviation from an affine trace (None: not run or failed)
    known: int | None = None  # the count known otherwise when it stopped, if any
    executor: str = "one process"
    injected: int = 0  # random start pairs carried to the base
    checkpoint: str | None = None  # the file the state was saved to
    resumed: bool = False
    save_error: str | None = None  # why the last save failed (the result is returned all the same)

    @property
    def count(self) -> int:
        return int(self.solutions.shape[0])

    @property
    def final(self) -> bool:
        """The stopping rule was met (the trace test passed, or a known count was reached); otherwise a limit
        stopped it and more solutions may exist."""
        return self.stop in FINAL_STOPS

    def to_dict(self) -> dict[str, Any]:
        return {
            "solutions": self.count,
            "final": self.final,
            "stop": self.stop,
            "loops": self.loops,
            "paths": self.paths,
            "failures": self.failures,
            "recharts": self.recharts,
            "seconds": round(self.seconds, 3),
            "trace_deviation": self.trace,
            "known_count": self.known,
            "injected": self.injected,
            "executor": self.executor,
            "checkpoint": self.checkpoint,
            "resumed": self.resumed,
            "save_error": self.save_error,
            "stopping_rule": STOPPING_RULE,
        }


Deadline = float | Callable[[int], float] | None
Known = int | Callable[[], int | None] | None


class Monodromy:
    """The state of one monodromy solve (module docstring); :meth:`run` advances it on an executor."""

    def __init__(
        self,
        system: Any,
        z0: np.ndarray,
        p0: np.ndarray,
        *,
        seed: int = 0,
        chart0: np.ndarray | None = None,
        fingerprint: str = "",
        loops: int = 3,
    ) -> None:
        loops = check_int(loops, "loops", minimum=1)
        self.system = system
        self.nc = _charts(system)
        self.fingerprint = fingerprint
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.p0 = np.asarray(p0, dtype=complex)
        c0 = None if not self.nc else np.atleast_2d(np.asarray(chart0, dtype=complex))
        z0r, last = newton(system, np.atleast_2d(z0), self.p0, iterations=3, chart=c0)
        if not np.isfinite(last[0]) or last[0] > 1e-6:
            raise InvalidArgumentError(
                f"monodromy: the start point is not a regular solution over p0 (Newton's last correction {last[0]:.2e})"
            )
        self.found = Deduplicator(system.n, seed=seed)
        self.found.add(z0r[0], _invariants(system, z0r, c0)[0], None if c0 is None else c0[0])
        self.corners: list[np.ndarray] = []  # per loop: (4, m) vertices p0 -> q1 -> q2 -> p0
        self.queue: deque[tuple[int, int]] = deque()
        for _ in range(loops):
            self.queue.append((0, self._new_loop()))
        self._init_counters()

    def _init_counters(self) -> None:
        self.jobs: dict[int, tuple[str, Any, np.ndarray]] = {}  # job -> (kind, payload, rows returned)
        self.next_job = 0
        self.paths = self.failures = self.injected = 0
        self.history: list[tuple[int, int, int]] = []
        self.trace: float | None = None
        self.traced_at = -1
        self.trace_pencils = 0  # the pencils the last trace test passed on (or ran, when it failed)
        self.round_mark: int | None = None  # solutions known when the last round started
        self.quiet = 0  # rounds in a row without a new solution
        self.seconds = 0.0  # of earlier runs (resumed)
        self._run_start: float | None = None  # time.perf_counter() when the run under way started
        self.resumed = False
        self.checkpoint: str | None = None
        self.save_error: str | None = None

    # ------------------------------------------------------------ loops and jobs
    def _new_loop(self) -> int:
        # corners at random scales (a factor e^U(-1.5, 3.5) of |p0|): loops of several sizes go around other
        # branch points (measured: with one scale, one solution of 14 of (2,1,2) was never reached)
        q1 = random_parameter(self.rng, self.p0) * np.exp(self.rng.uniform(-1.5, 3.5))
        q2 = random_parameter(self.rng, self.p0) * np.exp(self.rng.uniform(-1.5, 3.5))
        self.corners.append(np.stack([self.p0, q1, q2, self.p0]))
        return len(self.corners) - 1

    def _job(self, kind: str, payload: Any, rows: int) -> int:
        job = self.next_job
        self.next_job += 1
        self.jobs[job] = (kind, payload, np.zeros(rows, dtype=bool))
        return job

    def _fill(self, ex: Any) -> None:
        """Hand queued (solution, loop) pairs to the executor while it has room."""
        room = ex.wants()
        if room <= 0 or not self.queue:
            return
        take = [self.queue.popleft() for _ in range(min(room, len(self.queue)))]
        rows = np.array([i for i, _ in take], dtype=np.int64)
        loops = np.array([j for _, j in take], dtype=np.int64)
        used, which = np.unique(loops, return_inverse=True)
        pts = self.found.array()[rows]
        charts = self.found.chart_array(self.nc)
        job = self._job("loop", take, len(take))
        ex.submit(
            job,
            pts,
            None if charts is None else charts[rows],
            np.stack([self.corners[j] for j in used]),
            which.astype(np.int64),
        )

    def _inject(self, ex: Any, k: int) -> None:
        """``k`` random start pairs of the system (``random_start``), each carried to ``p0``: solutions there that
        loops may not reach (another way into the fiber)."""
        maker = getattr(self.system, "random_start", None)
        if maker is None or k <= 0:
            return
        starts = [maker(self.rng) for _ in range(k)]
        z = np.array([st[0] for st in starts])
        vs = np.stack([np.stack([st[1], self.p0]) for st in starts])
        charts = np.array([st[2] for st in starts]) if self.nc else None
        job = self._job("inject", None, k)
        ex.submit(job, z, charts, vs, np.arange(k))
        self.injected += k

    def _take(self, ends: Ends) -> int:
        """Add the new solutions among a job's ends; how many were new."""
        kind, payload, returned = self.jobs[ends.job]
        returned[ends.index] = True
        edges = 3 if kind == "loop" else 1
        self.paths += edges * ends.index.size
        self.failures += int((~ends.ok).sum())
        new = 0
        good = np.flatnonzero(ends.ok & (ends.last < CONVERGED))
        if good.size:
            ch = None if not self.nc or ends.chart is None else ends.chart[good]
            keys = _invariants(self.system, ends.z[good], ch)
            for k, row in enumerate(good):
                index = self.found.add(ends.z[row], keys[k], None if ch is None else ch[k])
                if index is not None:
                    new += 1
                    self.queue.extend((index, j) for j in range(len(self.corners)))
        if returned.all():
            del self.jobs[ends.job]
        return new

    def _requeue(self) -> None:
        """The loop pairs of jobs still under way go back to the queue (their ends will not come)."""
        for kind, payload, returned in self.jobs.values():
            if kind == "loop":
                self.queue.extendleft(reversed([pair for pair, r in zip(payload, returned) if not r]))
        self.jobs.clear()

    # ------------------------------------------------------------ the trace test
    def _wait(self, ex: Any, job: int, rows: int, until: Callable[[], bool]) -> list[Ends] | None:
        """Every end of ``job`` (no other job is under way), or None when ``until()`` says stop."""
        parts: list[Ends] = []
        got = 0
        while got < rows:
            if until():
                return None
            for e in ex.poll(0.05):
                parts.append(e)
                got += e.index.size
        return parts

    def _segment(
        self, ex: Any, z: np.ndarray, charts: np.ndarray | None, ends_at: list[np.ndarray], until: Callable[[], bool]
    ) -> list[tuple[np.ndarray, np.ndarray | None]] | None:
        """``z`` (over ``p0``) carried to each parameter of ``ends_at``, refined there: one ``(points, charts)`` per
        parameter, or None when a path failed twice (the second time carefully) or ``until()`` said stop."""
        N, K = z.shape[0], len(ends_at)
        vs = np.stack([np.stack([self.p0, q]) for q in ends_at])
        which = np.repeat(np.arange(K), N)
        Z = np.tile(z, (K, 1))
        C = None if charts is None else np.tile(charts, (K, 1))
        out_z = np.full(Z.shape, np.nan, dtype=complex)
        out_c = None if C is None else np.zeros_like(C)
        todo = np.arange(K * N)
        for careful in (False, True):  # a failed path: the same segment again, in smaller steps
            job = self._job("trace", None, todo.size)
            ex.submit(job, Z[todo], None if C is None else C[todo], vs, which[todo], careful=careful)
            parts = self._wait(ex, job, todo.size, until)
            self.jobs.pop(job, None)
            if parts is None:
                ex.cancel()
                return None
            ok = np.zeros(todo.size, dtype=bool)
            for e in parts:
                self.paths += e.index.size
                rows = todo[e.index]
                out_z[rows] = e.z
                if out_c is not None and e.chart is not None:
                    out_c[rows] = e.chart
                ok[e.index] = e.ok & (e.last < CONVERGED)
            done = np.zeros(K * N, dtype=bool)
            done[todo[ok]] = True
            done[np.setdiff1d(np.arange(K * N), todo)] = True
            todo = np.union1d(todo[~ok], collisions(self.system, self.seed, out_z, out_c, done, N, K))
            if not todo.size:
                break
        if todo.size:
            return None
        return [(out_z[k * N : (k + 1) * N], None if out_c is None else out_c[k * N : (k + 1) * N]) for k in range(K)]

    def _traced(self) -> bool:
        """The trace test passed on the solutions found now, on :data:`TRACE_PENCILS` pencils."""
        return (
            self.trace is not None
            and self.trace < TRACE_TOLERANCE
            and self.trace_pencils >= TRACE_PENCILS
            and self.traced_at == len(self.found)
        )

    def _trace_test(self, ex: Any, until: Callable[[], bool]) -> tuple[float | None, int]:
        """The largest relative deviation of the solutions' trace from affine over :data:`TRACE_PENCILS` random
        pencils ``p0 + s v`` (module docstring), stopped at the first that fails, and the pencils run; None when a
        pencil gave no conclusion (a path failed twice on each of its attempts) or ``until()`` said stop."""
        worst = 0.0
        for k in range(TRACE_PENCILS):
            dev = self._pencil(ex, until)
            if dev is None:
                return None, k
            worst = max(worst, dev)
            if dev >= TRACE_TOLERANCE:
                return worst, k + 1
        return worst, TRACE_PENCILS

    def _pencil(self, ex: Any, until: Callable[[], bool], attempts: int = 3) -> float | None:
        """The relative deviation of the solutions' trace from affine along one random pencil ``p0 + s v``; None
        when no pencil gave a conclusion (a path failed twice on each of ``attempts``) or ``until()`` said stop."""
        z = self.found.array()
        charts = self.found.chart_array(self.nc)
        for _ in range(attempts):
            v = random_parameter(self.rng, self.p0)
            s1 = complex(self.rng.standard_normal(), self.rng.standard_normal()) * 0.3
            s2 = complex(self.rng.standard_normal(), self.rng.standard_normal()) * 0.3
            got = self._segment(ex, z, charts, [self.p0 + s1 * v, self.p0 + s2 * v], until)
            if got is None:
                if until():
                    return None
                continue
            xs = [_linear(self.system, z, charts)] + [_linear(self.system, zz, cc) for zz, cc in got]
            sums = [x.sum(axis=0) for x in xs]
            size = max(float(np.abs(x).sum(axis=0).max()) for x in xs)
            d1, d2 = sums[1] - sums[0], sums[2] - sums[0]
            return float(np.max(np.abs(d2 - (s2 / s1) * d1)) / max(size, 1e-300))
        return None

    # ------------------------------------------------------------ the run
    def run(
        self,
        ex: Any,
        *,
        deadline: Deadline = None,
        known: Known = None,
        max_solutions: int | None = None,
        save: str | Path | None = None,
        save_every: float = 60.0,
        desc: str = "monodromy",
        expected: int | None = None,
    ) -> MonodromyResult:
        """Advance until the stopping rule or a limit (module docstring); the result (its state stays here, so a
        later ``run`` continues).  ``deadline``: ``_clock.now()`` to stop at, or a function of the number of
        solutions found giving it; ``known``: a count known otherwise (or a function returning it, None while
        unknown); ``save``: the checkpoint file; ``expected``: a predicted count, the progress bar's total until
        one is known (solutions found of it, the time left)."""
        t0 = time.perf_counter()
        self._run_start = t0
        stop = "time limit"

        def limit() -> float | None:
            return deadline(len(self.found)) if callable(deadline) else deadline

        def known_now() -> int | None:
            return known() if callable(known) else known

        def over() -> bool:
            end = limit()
            return end is not None and _clock.now() > end

        if hasattr(ex, "deadline"):
            end = limit()
            ex.deadline = None if end is None else _clock.wall(end)
        if self.round_mark is None:
            self.round_mark = len(self.found)
        try:
            stop = self._advance(ex, over, known_now, max_solutions, save, save_every, (desc, expected), t0)
        except KeyboardInterrupt:
            stop = "interrupted"
        except ComputationError as exc:  # the executor lost its cluster: what was found is kept
            stop = f"cluster failed: {exc}"
        finally:
            ex.cancel()
            self._requeue()
            self.seconds += time.perf_counter() - t0
            self._run_start = None
            if save is not None:
                try:  # a failed save loses no result: it is returned, the failure said in it
                    self.save(save)
                    self.save_error = None
                except OutputError as exc:
                    self.save_error = str(exc)
        return self.result(stop, known_now(), ex)

    def _advance(
        self,
        ex: Any,
        over: Callable[[], bool],
        known_now: Callable[[], int | None],
        max_solutions: int | None,
        save: str | Path | None,
        save_every: float,
        shown_as: tuple[str, int | None],
        t0: float,
    ) -> str:
        """The run's loop: jobs handed out, ends taken, a round ended by the trace test; why it stopped.  Its bar
        counts the solutions found (``shown_as``: its name, and the predicted count: of the known one once known)."""
        last_save = t0
        # a resumed run's solutions are counted from the start, its rate from this run's own
        start = len(self.found)
        with (
            _progress.bar(desc=shown_as[0], unit="solution", verb="found", initial=start) as bar,
            _progress.ticking(bar),
        ):
            shown = start
            while True:
                total = known_now() or shown_as[1]
                if total != bar.total:
                    bar.total = total
                stop = self._stop(ex, known_now, max_solutions, over)
                if stop is not None:
                    return stop
                self._fill(ex)
                if not ex.pending() and not self.queue:
                    if self._end_round(ex, over):
                        return "trace test"
                    continue
                for ends in ex.poll(0.05):
                    self._take(ends)
                if len(self.found) != shown:
                    bar.set_postfix_str(
                        f"paths {self.paths}, failures {self.failures}, loops {len(self.corners)}", refresh=False
                    )
                    bar.update(len(self.found) - shown)
                    shown = len(self.found)
                if save is not None and time.perf_counter() - last_save > min(
                    save_every, FIRST_SAVE if last_save == t0 else save_every
                ):
                    try:
                        self._requeue_copy_save(save)
                        self.save_error = None
                    except OutputError as exc:  # the work goes on; the result says the save failed
                        self.save_error = str(exc)
                    last_save = time.perf_counter()

    def _stop(
        self,
        ex: Any,
        known_now: Callable[[], int | None],
        max_solutions: int | None,
        over: Callable[[], bool],
    ) -> str | None:
        """Why the run stops now (the trace test passed before, a known count, the cap, the time), or None."""
        if self._traced() and not self.queue and not ex.pending():  # (a resumed state that had passed it)
            return "trace test"
        k = known_now()
        if k is not None and len(self.found) >= k:
            return "known count"
        if max_solutions is not None and len(self.found) >= max_solutions:
            return "max_solutions"
        if over():
            return "interrupted" if _clock.interrupted() else "time limit"
        return None

    def _end_round(self, ex: Any, over: Callable[[], bool]) -> bool:
        """A round is over (every solution went through every loop): the trace test when new solutions came (True:
        it passed), else a fresh loop for every solution and random start pairs carried to the base."""
        self.history.append((len(self.corners), self.paths, len(self.found)))
        passed_fewer = self.trace is not None and self.trace < TRACE_TOLERANCE and self.trace_pencils < TRACE_PENCILS
        if len(self.found) != self.traced_at or passed_fewer:  # (a state saved when one pencil was the rule)
            self.traced_at = len(self.found)
            self.trace, self.trace_pencils = self._trace_test(ex, over)
            if self._traced():
                return True
            if over():
                return False
        self.quiet = self.quiet + 1 if len(self.found) == self.round_mark else 0
        self.round_mark = len(self.found)
        j = self._new_loop()
        self.queue.extend((i, j) for i in range(len(self.found)))
        n = len(self.found)
        self._inject(ex, min(max(16, n // 2) * 2 ** min(self.quiet, 6), max(64, 4 * n)))
        return False

    def result(self, stop: str, known: int | None = None, ex: Any = None) -> MonodromyResult:
        sols = self.found.array()
        charts = self.found.chart_array(self.nc)
        if len(sols):
            sols, _ = newton(self.system, sols, self.p0, iterations=2, chart=charts)
        return MonodromyResult(
            sols,
            self.p0,
            len(self.corners),
            self.paths,
            self.failures,
            self.seconds,
            stop,
            list(self.history),
            charts,
            0 if ex is None else ex.recharts,
            self.trace,
            known,
            "one process" if ex is None else ex.describe(),
            self.injected,
            self.checkpoint,
            self.resumed,
            self.save_error,
        )

    # ------------------------------------------------------------ checkpoints
    def _requeue_copy_save(self, path: str | Path) -> None:
        """Save with the pairs under way counted as queued (the state itself is not changed)."""
        queued = list(self.queue)
        for kind, payload, returned in self.jobs.values():
            if kind == "loop":
                queued.extend(pair for pair, r in zip(payload, returned) if not r)
        self._write(path, queued)

    def save(self, path: str | Path) -> None:
        """Write the state to ``path`` atomically (module docstring)."""
        self._write(path, list(self.queue))

    def _write(self, path: str | Path, queued: list[tuple[int, int]]) -> None:
        write_state(self, path, queued)

    @classmethod
    def resume(cls, system: Any, path: str | Path, *, fingerprint: str = "") -> Monodromy:
        """The state saved in ``path`` (by :meth:`save`), for ``system``; refused when the file is not such a state
        or belongs to another problem (its fingerprint)."""
        state: Monodromy = read_state(cls, system, path, fingerprint)  # a cls (read_state's docstring)
        return state


def monodromy_solve(
    system: Any,
    z0: np.ndarray,
    p0: np.ndarray,
    *,
    seed: int = 0,
    loops: int = 3,
    max_solutions: int | None = None,
    timeout: float | None = None,
    known: Known = None,
    options: TrackerOptions = LOOP_OPTIONS,
    desc: str = "monodromy",
    chart0: np.ndarray | None = None,
    workers: int | None = 1,
    scheduler: str | None = None,
    save: str | Path | None = None,
    resume: str | Path | None = None,
    fingerprint: str = "",
) -> MonodromyResult:
    """All solutions over ``p0`` of the component through ``z0`` (module docstring), in this process
    (``workers=1``), on a local Dask cluster of ``workers`` processes, or on the cluster at ``scheduler``.
    ``timeout``: seconds, after which what was found is returned (``stop = "time limit"``)."""
    deadline = None if timeout is None else _clock.after(timeout)
    if resume is not None:
        state = Monodromy.resume(system, resume, fingerprint=fingerprint)
    else:
        state = Monodromy(system, z0, p0, seed=seed, chart0=chart0, fingerprint=fingerprint, loops=loops)
    with executor(system, options, CAREFUL, workers=workers, scheduler=scheduler) as ex:
        return state.run(ex, deadline=deadline, known=known, max_solutions=max_solutions, save=save, desc=desc)
