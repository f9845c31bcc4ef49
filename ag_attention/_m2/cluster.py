"""A throw-away Dask cluster on 127.0.0.1: a scheduler and workers as subprocesses (tests, benchmarks).

Example (not a doctest: it starts processes)::

    with LocalDaskCluster(workers=2) as address:
        sweep("sweeps/findings-t2.toml", "results/findings-t2-dask", scheduler=address)

Each process is started with ``dask scheduler`` / ``dask worker`` in its own
session (process group), and on exit the whole group is killed (SIGKILL), so
nannies and their worker processes go too.  When the Python that started them
dies without that exit (SIGKILL, or a SIGTERM it does not handle), each gets
SIGTERM from the kernel (a parent-death signal): the scheduler stops, ``dask
worker`` closes its nannies and their workers (measured: a killed parent's
cluster ran on for 80 minutes, beside the benchmarks, before this); the workers
also stop within ``DEATH_TIMEOUT`` seconds of losing the scheduler.  Starting fails with a
:class:`ag_attention._errors.ComputationError` (with the processes' output)
rather than waiting for ever.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from .._errors import ComputationError
from .dask import require
from .process import stop_with_parent

__all__ = ["LocalDaskCluster", "dask_command", "DEATH_TIMEOUT"]

#: seconds a worker waits for a scheduler it lost before it stops
DEATH_TIMEOUT = 30


def dask_command() -> list[str]:
    """The ``dask`` command of this Python (the script beside it, else ``python -m dask``)."""
    script = Path(sys.executable).with_name("dask")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dask"]


class LocalDaskCluster:
    """``dask scheduler`` on 127.0.0.1 (port 0: any free port) and ``dask worker --nworkers N --nthreads 1``."""

    def __init__(self, workers: int = 2, threads: int = 1, timeout: float = 60.0) -> None:
        self.workers = workers
        self.threads = threads
        self.timeout = timeout
        self.address = ""
        self._dir: Path | None = None
        self._procs: list[subprocess.Popen[bytes]] = []

    def _start(self, args: list[str], log: str) -> subprocess.Popen[bytes]:
        assert self._dir is not None
        env = dict(os.environ)
        # the workers import the same ag_attention as this process
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
        with open(self._dir / log, "wb") as out:
            proc = subprocess.Popen(
                dask_command() + args,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self._dir,
                start_new_session=True,
                preexec_fn=stop_with_parent,
            )
        self._procs.append(proc)
        return proc

    @property
    def process_groups(self) -> list[int]:
        """The process groups of the scheduler and the workers (each started in a session of its own)."""
        return [p.pid for p in self._procs]

    @property
    def scheduler_pid(self) -> int | None:
        """The process id of ``dask scheduler`` (the leader of its process group), while it runs."""
        return self._procs[0].pid if self._procs else None

    def _output(self) -> str:
        assert self._dir is not None
        return "\n".join(
            f"--- {p.name} ---\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(self._dir.glob("*.log"))
        )

    def start(self) -> str:
        """Start the scheduler and the workers; their address once every worker has joined."""
        require("distributed")
        self._dir = Path(tempfile.mkdtemp(prefix="ag-attention-dask-"))
        try:
            file = self._dir / "scheduler.json"
            sched = self._start(
                ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
                "scheduler.log",
            )
            deadline = time.monotonic() + self.timeout
            while not file.exists():
                if sched.poll() is not None or time.monotonic() > deadline:
                    raise ComputationError(
                        f"the Dask scheduler did not start within {self.timeout:g} s:\n{self._output()}"
                    )
                time.sleep(0.05)
            while True:
                try:
                    self.address = str(json.loads(file.read_text())["address"])
                    break
                except (ValueError, KeyError):  # written but not complete yet
                    if time.monotonic() > deadline:
                        raise ComputationError(f"unreadable scheduler file {file}:\n{self._output()}") from None
                    time.sleep(0.05)
            self._start(
                [
                    "worker",
                    self.address,
                    "--nworkers",
                    str(self.workers),
                    "--nthreads",
                    str(self.threads),
                    "--no-dashboard",
                    "--local-directory",
                    str(self._dir / "work"),
                    "--death-timeout",
                    str(DEATH_TIMEOUT),
                ],
                "workers.log",
            )
            self._wait_for_workers(deadline)
        except BaseException:
            self.stop()
            raise
        return self.address

    def _wait_for_workers(self, deadline: float) -> None:
        distributed = require("distributed")
        left = max(1.0, deadline - time.monotonic())
        try:
            with distributed.Client(self.address, timeout=left, set_as_default=False) as client:
                client.wait_for_workers(self.workers, timeout=max(1.0, deadline - time.monotonic()))
        except (OSError, TimeoutError) as exc:
            raise ComputationError(
                f"the Dask workers did not join within {self.timeout:g} s ({exc}):\n{self._output()}"
            ) from None

    def stop(self) -> None:
        """Kill every process group (scheduler, nannies, workers) and remove the working directory."""
        for proc in self._procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        for proc in self._procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        self._procs.clear()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
