"""Where paths are tracked: in this process, or as tasks of a Dask cluster (local, or at a scheduler's address).

Monodromy (:mod:`.monodromy`) hands *jobs* to an executor: start points, each with a polyline of parameters
(:class:`~ag_attention._numeric.polylines.Polylines`), and collects their ends as they come.  Two executors, one
interface (``submit``, ``poll``, ``pending``, ``wants``, ``cancel``, ``close``):

* :class:`LocalExecutor`: one batch in this process (numpy; a batch of 256 paths or more is stepped in two
  threads), the jobs' paths advancing together: a path that ends makes room for the next at once.
* :class:`DaskExecutor`: each job cut into tasks of :func:`~ag_attention._numeric.polylines.track_job` (a chunk of
  paths each, sized to take about :data:`TASK_SECONDS` on a worker), at most two chunks per worker thread in
  flight; the system is sent to every worker once (``scatter``).  A lost scheduler or a failed task is a
  :class:`~ag_attention._errors.ComputationError`; the monodromy keeps what it found.

:func:`executor` chooses: ``scheduler="tcp://HOST:PORT"`` connects to a running cluster (the address is checked
within a time limit first, as for sweeps: :mod:`ag_attention._m2.dask`); ``workers=N > 1`` starts a
local cluster of ``N`` single-threaded worker processes on 127.0.0.1 (:class:`~ag_attention._m2.cluster.
LocalDaskCluster`: every process in its own process group, all killed when the work ends); ``workers=1`` runs in
this process.  Dask is imported only there (it is optional for the rest of the package).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import _clock, _progress
from .._checks import check_int
from .._errors import ComputationError
from .._m2 import (
    LocalDaskCluster,
    close_client,
    connect_client,
    require,
    scheduler_address,
    wait_for_workers,
    worker_threads,
)
from .certify import UNTRIED, certify_each
from .polylines import Ends, Polylines, track_job
from .tracker import TrackerOptions, numpy_friendly_malloc

__all__ = ["LocalExecutor", "DaskExecutor", "executor", "TASK_SECONDS", "default_workers"]

#: seconds of work a Dask task is sized for (long enough to hide the scheduler's overhead, about 1 ms a task,
#: short enough that a deadline or a new solution's loops wait little)
TASK_SECONDS = 4.0
#: paths of the first tasks, before a worker's rate is measured, and the fewest a task gets: a batch of fewer
#: paths pays numpy's overhead per step for few paths (measured at (4,1,4): tasks of 64 paths made two workers
#: track 61 paths/s, one process with a batch of 1,024 144)
FIRST_CHUNK = 512
MIN_CHUNK = 256
MAX_CHUNK = 4096
#: a job is split over idle workers only into tasks of at least this many paths
SPLIT = 64
#: candidates a certification task gets at most (Krawczyk on each: about 30 ms a candidate at (4,1,4), so a task of
#: a few seconds, and the progress line moves)
CERTIFY_CHUNK = 128


def default_workers() -> int:
    """The cores this process may use (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class LocalExecutor:
    """Every job's paths in one batch of this process (module docstring)."""

    kind = "one process"

    def __init__(self, system: Any, options: TrackerOptions, careful: TrackerOptions) -> None:
        numpy_friendly_malloc()
        self.system = system
        self.workers = 1
        self.options = options
        self._pools = {False: Polylines(system, options), True: Polylines(system, careful)}
        self.deadline: float | None = None  # (the driver stops polling at its deadline: nothing to pass on here)
        self.note = ""  # what the choice of workers says (a cap)

    def describe(self) -> str:
        return "one process" + self.note

    def submit(
        self,
        job: int,
        z: np.ndarray,
        charts: np.ndarray | None,
        vertex_sets: np.ndarray,
        which: np.ndarray,
        careful: bool = False,
    ) -> None:
        self._pools[careful].add(job, z, charts, vertex_sets, which)

    def pending(self) -> int:
        return sum(len(p) for p in self._pools.values())

    def wants(self) -> int:
        """Paths it can take now without waiting (room in the batch)."""
        return max(0, self.options.batch - len(self._pools[False]))

    def poll(self, wait: float) -> list[Ends]:
        """Step the batch until some paths end or ``wait`` seconds passed; the ends."""
        out: list[Ends] = []
        until = _clock.now() + wait
        while self.pending():
            for pool in self._pools.values():
                if len(pool):
                    out.extend(pool.step())
            if out or _clock.now() > until:
                break
        return out

    @property
    def recharts(self) -> int:
        return sum(p.paths.recharts for p in self._pools.values())

    def cancel(self) -> list[int]:
        """Stop every path under way; the jobs that had paths left."""
        return sorted(set(self._pools[False].drop()) | set(self._pools[True].drop()))

    def close(self) -> None:
        self.cancel()


class DaskExecutor:
    """Jobs as Dask tasks (module docstring).  ``client``: a connected ``distributed.Client``."""

    kind = "Dask"

    def __init__(
        self, client: Any, address: str, system: Any, options: TrackerOptions, careful: TrackerOptions, *, local: bool
    ) -> None:
        # deferred: the Dask side (dask and distributed are optional) loads only when a cluster is used
        self._distributed = require("distributed")
        self.client = client
        self.address = address
        self.local = local
        self.options = {False: options, True: careful}
        self.workers = max(1, self._threads())
        self._system = client.scatter(system, broadcast=True, hash=False)
        self._sent = system  # certifications of another system send theirs with each task
        self._futures: dict[Any, tuple[int, np.ndarray]] = {}
        self._rate: float | None = None  # paths per second of one worker, measured
        self.deadline: float | None = None  # time.time() at which tasks stop (set by the driver)
        self.note = ""  # what the choice of workers says (a cap)

    def _threads(self) -> int:
        # deferred: the Dask side (dask and distributed are optional) loads only when a cluster is used
        return int(worker_threads(self.client))

    def describe(self) -> str:
        where = "a local Dask cluster on 127.0.0.1" if self.local else f"the Dask cluster at {self.address}"
        return f"{where}, {self.workers} worker thread{'s' if self.workers != 1 else ''}{self.note}"

    @property
    def chunk(self) -> int:
        if self._rate is None:
            return FIRST_CHUNK
        return int(min(MAX_CHUNK, max(MIN_CHUNK, self._rate * TASK_SECONDS)))

    def submit(
        self,
        job: int,
        z: np.ndarray,
        charts: np.ndarray | None,
        vertex_sets: np.ndarray,
        which: np.ndarray,
        careful: bool = False,
    ) -> None:
        z = np.atleast_2d(z)
        B = z.shape[0]
        # over the idle workers, at least SPLIT paths a task (a batch of few paths is slow per path), at most a
        # chunk of the measured size
        idle = max(1, self.workers - len(self._futures))
        size = min(self.chunk, max(SPLIT, -(-B // idle)))
        for start in range(0, B, size):
            rows = np.arange(start, min(B, start + size))
            used = np.unique(which[rows])
            local = np.searchsorted(used, which[rows])  # only the polylines this chunk uses travel with it
            fut = self.client.submit(
                track_job,
                self._system,
                job,
                z[rows],
                None if charts is None else charts[rows],
                vertex_sets[used],
                local,
                self.options[careful],
                self.deadline,
                1,
                pure=False,
            )
            self._futures[fut] = (job, rows)

    def pending(self) -> int:
        return sum(rows.size for _, rows in self._futures.values())

    def wants(self) -> int:
        """Paths it can take now: a chunk for each worker thread without a task (the others' new pairs wait in the
        driver's queue and go out together: a task of many paths, not many tasks of few)."""
        return max(0, self.workers - len(self._futures)) * self.chunk

    def poll(self, wait: float) -> list[Ends]:
        if not self._futures:
            time.sleep(min(wait, 0.01))
            return []
        until = _clock.now() + wait
        while True:  # (distributed.wait needs a default client; this one is not: it is polled)
            done = [f for f in self._futures if f.done()]
            if done or _clock.now() > until:
                break
            if self.client.status not in ("running", "connecting"):
                raise ComputationError(f"lost the Dask cluster at {self.address} (client {self.client.status})")
            time.sleep(0.005)
        out = []
        for fut in done:
            job, rows = self._futures.pop(fut)
            if fut.status != "finished":
                error = fut.exception() if fut.status == "error" else None
                why = f"{type(error).__name__}: {error}" if error is not None else f"task {fut.status}"
                hint = " (is ag-attention installed on the workers?)" if isinstance(error, ImportError) else ""
                raise ComputationError(
                    f"a path-tracking task failed on the Dask cluster at {self.address}: {str(why)[:300]}{hint}"
                )
            ends: Ends = fut.result()
            ends.index = rows[ends.index]
            if ends.seconds > 0.05 and rows.size:
                rate = rows.size / ends.seconds
                self._rate = rate if self._rate is None else 0.7 * self._rate + 0.3 * rate
            out.append(ends)
        return out

    @property
    def recharts(self) -> int:
        return 0

    def map_certify(
        self,
        system: Any,
        candidates: np.ndarray,
        parameter: Any,
        float_parameter: np.ndarray,
        real_system: bool,
        charts: np.ndarray | None,
        keep: Any,
        wall_deadline: float | None,
        desc: str = "certify",
    ) -> list[Any]:
        """:func:`~ag_attention._numeric.certify.certify_each` on chunks of the candidates, on the workers (about
        four chunks per worker thread, at most :data:`CERTIFY_CHUNK` candidates each, so that the progress line
        ``desc`` moves: 35,963 candidates at (4,1,4) took 20 minutes); the results in the candidates' order."""
        N = len(candidates)
        on_workers = self._system if system is self._sent else system
        size = max(1, min(-(-N // (4 * self.workers)), CERTIFY_CHUNK))
        starts: dict[str, int] = {}
        futures = []
        for start in range(0, N, size):
            rows = slice(start, min(N, start + size))
            fut = self.client.submit(
                certify_each,
                on_workers,
                candidates[rows],
                parameter,
                float_parameter,
                real_system,
                None if charts is None else charts[rows],
                keep,
                wall_deadline,
                pure=False,
            )
            futures.append(fut)
            starts[fut.key] = start
        out: list[Any] = [UNTRIED] * N  # a chunk not back (an interruption) stays untried
        try:
            with _progress.bar(total=N, desc=desc, unit="solution") as bar:
                pending = list(futures)
                while pending:  # each chunk taken as it comes back (in any order)
                    done = [fut for fut in pending if fut.done()]
                    if not done:
                        time.sleep(0.05)
                        continue
                    pending = [fut for fut in pending if all(fut is not f for f in done)]
                    for fut in done:
                        try:
                            got = fut.result()
                        except Exception as exc:
                            raise ComputationError(
                                f"a certification task failed on the Dask cluster at {self.address}: "
                                f"{type(exc).__name__}: {str(exc)[:300]}"
                            ) from None
                        start = starts[fut.key]
                        out[start : start + len(got)] = got
                        bar.update(len(got))
        except KeyboardInterrupt:  # what came back is kept: the rest untried
            pass
        finally:
            with contextlib.suppress(Exception):
                self.client.cancel(futures)
        return out

    def cancel(self) -> list[int]:
        jobs = sorted({job for job, _ in self._futures.values()})
        if self._futures:
            with contextlib.suppress(Exception):
                self.client.cancel(list(self._futures))
        self._futures.clear()
        return jobs

    def close(self) -> None:
        self.cancel()


@contextlib.contextmanager
def executor(
    system: Any,
    options: TrackerOptions,
    careful: TrackerOptions,
    *,
    workers: int | None = 1,
    scheduler: str | None = None,
    timeout: float = 60.0,
) -> Iterator[LocalExecutor | DaskExecutor]:
    """The executor for ``workers`` / ``scheduler`` (module docstring), closed (its cluster stopped) on exit.
    ``timeout``: seconds to reach the scheduler or start the local cluster."""
    if workers is not None:
        workers = check_int(workers, "workers", minimum=1)
    if scheduler is not None:
        # deferred: the Dask side (dask and distributed are optional) loads only when a cluster is used
        address = scheduler_address(scheduler)
        client = connect_client(address, timeout)
        try:
            wait_for_workers(client, address, None, timeout)
            ex = DaskExecutor(client, address, system, options, careful, local=False)
            try:
                yield ex
            finally:
                ex.close()
        finally:
            close_client(client)
        return
    if workers is None or workers == 1:
        local = LocalExecutor(system, options, careful)
        try:
            yield local
        finally:
            local.close()
        return
    # more local worker processes than cores only slow each other down: capped, and said in the result
    cores = default_workers()
    capped = f"; --workers {workers} capped at the {cores} cores of this machine" if workers > cores else ""
    workers = min(workers, cores)
    if workers == 1:
        local = LocalExecutor(system, options, careful)
        local.note = capped
        try:
            yield local
        finally:
            local.close()
        return
    with LocalDaskCluster(workers=workers, threads=1, timeout=timeout) as address:
        client = connect_client(address, timeout)
        try:
            ex = DaskExecutor(client, address, system, options, careful, local=True)
            ex.note = capped
            try:
                yield ex
            finally:
                ex.close()
        finally:
            close_client(client)
