"""Sweeps on Dask (ag_attention._sweep.distributed): local = Dask, lost workers and bad schedulers fail in time.

The tests start a real scheduler and two worker processes on 127.0.0.1
(``dask scheduler`` / ``dask worker`` subprocesses in their own process group,
killed with it at teardown); every wait has a timeout.
"""

import os
import signal
import socket
import threading
import time

import pytest

from tests.helpers import skip_unless_installed

skip_unless_installed("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")
skip_unless_installed("distributed", reason="sweeps need distributed: pip install 'ag-attention[sweep]'")

from ag_attention._errors import ComputationError, InvalidArgumentError  # noqa: E402
from ag_attention._m2.cluster import LocalDaskCluster  # noqa: E402
from ag_attention._sweep import Spec, read_rows, sweep  # noqa: E402
from ag_attention._sweep.distributed import run_dask  # noqa: E402
from ag_attention._sweep.store import JOURNAL  # noqa: E402
from tests.helpers import processes_matching  # noqa: E402
from tests.sweep.guards import HANG, bounded  # noqa: E402
from tests.sweep.small_grid import SMALL, SMALL_SIZE  # noqa: E402


def _strip(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


def test_distributed_equals_local(local_run, small_grid, cluster, tmp_path):
    r = sweep(small_grid, tmp_path, scheduler=cluster, workers=2, plots=False)
    assert r.scheduler == cluster and r.computed == SMALL_SIZE
    assert _strip(r.rows()) == _strip(local_run.rows())


def test_cluster_without_enough_workers_fails_in_time(small_grid, cluster, tmp_path):
    def run():
        with pytest.raises(ComputationError, match="fewer than the 5 asked for"):
            sweep(small_grid, tmp_path, scheduler=cluster, workers=5, timeout=2)

    bounded(run)  # a hang fails the test; how long it takes is not asserted


@pytest.mark.serial  # bounds wall-clock time: it hung once beside the other tests (stuck at 16 rows, 180 s)
def test_losing_every_worker_fails_in_time(tmp_path):
    """Workers killed mid-sweep: a ComputationError after the timeout, the finished rows kept; no hang."""
    grid = tmp_path / "big.toml"
    grid.write_text(SMALL.replace("depth = 2", "depth = 3"))  # 4,002 networks: far from done when killed
    out = tmp_path / "out"
    cluster = LocalDaskCluster(workers=1, threads=1, timeout=60)
    address = cluster.start()
    try:
        # the `dask worker` command leads the process group of the nannies and their workers
        workers = os.getpgid(int(processes_matching(f"worker {address}")[0].split()[0]))

        def kill_when_rows_arrive():
            deadline = time.monotonic() + 3 * HANG
            while time.monotonic() < deadline:
                if (out / JOURNAL).exists() and (out / JOURNAL).stat().st_size > 0:
                    os.killpg(workers, signal.SIGKILL)
                    return
                time.sleep(0.01)

        killer = threading.Thread(target=kill_when_rows_arrive, daemon=True)
        killer.start()

        def run():
            with pytest.raises(ComputationError, match="no worker for 2 s") as info:
                sweep(grid, out, scheduler=address, timeout=2, plots=False)
            return str(info.value)

        # the first rows may take long on a loaded machine (measured: past 60 s at load 6, once): the hang bound is
        # three times the usual one here, the sweep itself needs far longer than that to finish its 4,002 networks
        assert "--resume completes the run" in bounded(run, seconds=3 * HANG)
        killer.join(5)
    finally:
        cluster.stop()
    assert 0 < len(read_rows(out / "results.parquet")) < 4002


@pytest.mark.parametrize(
    "address, named",
    [
        ("tcp://127.0.0.1:9", "no Dask scheduler answered"),
        ("not an address", "must be an address"),
        ("http://127.0.0.1:8786", "unknown protocol"),
    ],
)
def test_unreachable_or_bad_scheduler(small_grid, tmp_path, address, named):
    def run():
        with pytest.raises(InvalidArgumentError, match=named) as info:
            sweep(small_grid, tmp_path, scheduler=address, timeout=2)
        return str(info.value)

    assert repr(address) in bounded(run)


def test_a_listener_that_never_answers_is_no_scheduler(small_grid, tmp_path):
    """A TCP listener on 127.0.0.1 that accepts and never speaks (H4): refused after the timeout, not waited on."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"

        def run():
            with pytest.raises(InvalidArgumentError) as info:
                sweep(small_grid, tmp_path, scheduler=address, timeout=2, plots=False)
            return str(info.value)

        message = bounded(run)
    assert message.startswith(f"--scheduler={address!r}: no Dask scheduler answered within 2 s"), message
    assert "accepted the connection but did not answer" in message


def test_a_refused_connection_is_said_refused(small_grid, tmp_path):
    """Nothing listening (a port just closed): "connection refused", not "accepted but did not answer" (F11)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed at the end of the block: nothing listens there now

    def run():
        with pytest.raises(InvalidArgumentError) as info:
            sweep(small_grid, tmp_path, scheduler=f"tcp://127.0.0.1:{port}", timeout=2, plots=False)
        return str(info.value)

    message = bounded(run)
    assert f"nothing listens at 127.0.0.1:{port} (connection refused)" in message
    assert "accepted the connection" not in message


def test_the_scheduler_killed_mid_sweep(local_run, small_grid, tmp_path):
    """The scheduler killed while rows arrive (T7): a ComputationError saying the rows are kept; --resume completes."""
    out = tmp_path / "out"
    cluster = LocalDaskCluster(workers=2, threads=1, timeout=60)
    cluster.start()
    try:

        def kill_when_rows_arrive():
            deadline = time.monotonic() + 3 * HANG
            while time.monotonic() < deadline:
                if (out / JOURNAL).exists() and (out / JOURNAL).stat().st_size > 0:
                    os.killpg(cluster.scheduler_pid, signal.SIGKILL)
                    return
                time.sleep(0.01)

        killer = threading.Thread(target=kill_when_rows_arrive, daemon=True)
        killer.start()

        def run():
            with pytest.raises(ComputationError) as info:
                sweep(small_grid, out, scheduler=cluster.address, timeout=2, plots=False)
            return str(info.value)

        message = bounded(run)
        killer.join(5)
    finally:
        cluster.stop()
    assert f"Dask scheduler at {cluster.address}" in message and "--resume completes the run" in message, message
    assert "Traceback" not in message and len(message) < 600
    kept = len(read_rows(out / "results.parquet"))
    assert 0 < kept < SMALL_SIZE
    r = sweep(small_grid, out, resume=True, workers=2, plots=False)  # here, on local processes
    assert (r.skipped, r.computed) == (kept, SMALL_SIZE - kept)
    assert _strip(r.rows()) == _strip(local_run.rows())


def test_a_client_error_is_a_computation_error():
    """Any error of the Dask client mid-run (here CommClosedError, as from a gather) is a ComputationError."""
    comm = pytest.importorskip("distributed.comm.core")

    class LostScheduler:  # a fake for this error path only: the scheduler went away while results were gathered
        status = "running"

        def map(self, *args, **kwargs):
            raise comm.CommClosedError(
                "in <TCP (closed) ConnectionPool.gather local=tcp://127.0.0.1:1 "
                "remote=tcp://127.0.0.1:2>: ConnectionResetError: [Errno 104] Connection reset"
            )

    chunks = [[Spec((2, 2), (2,), 2)], [Spec((2, 1), (1,), 2)]]
    with pytest.raises(ComputationError) as info:
        run_dask(LostScheduler(), "tcp://127.0.0.1:2", chunks, 2**31 - 1, 0, 2.0, lambda rows: None)
    message = str(info.value)
    assert "lost the connection to the Dask scheduler at tcp://127.0.0.1:2 (CommClosedError: " in message
    assert "2 of 2 chunks not finished" in message and "--resume completes the run" in message
