"""Sweeps on Dask (ag_attention._sweep.distributed): local = Dask, lost workers and bad schedulers fail in time.

The tests start a real scheduler and two worker processes on 127.0.0.1
(``dask scheduler`` / ``dask worker`` subprocesses in their own process group,
killed with it at teardown); every wait has a timeout.
"""

import os
import signal
import threading
import time

import pytest

pytest.importorskip("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")
pytest.importorskip("distributed", reason="sweeps need distributed: pip install 'ag-attention[sweep]'")

from ag_attention._errors import ComputationError, InvalidArgumentError  # noqa: E402
from ag_attention._sweep import read_rows, sweep  # noqa: E402
from ag_attention._sweep.cluster import LocalDaskCluster  # noqa: E402
from ag_attention._sweep.store import JOURNAL  # noqa: E402

from tests.helpers import processes_matching  # noqa: E402
from tests.sweep.small_grid import SMALL, SMALL_SIZE  # noqa: E402


def _strip(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


def test_distributed_equals_local(local_run, small_grid, cluster, tmp_path):
    r = sweep(small_grid, tmp_path, scheduler=cluster, workers=2, plots=False)
    assert r.scheduler == cluster and r.computed == SMALL_SIZE
    assert _strip(r.rows()) == _strip(local_run.rows())


def test_cluster_without_enough_workers_fails_in_time(small_grid, cluster, tmp_path):
    t0 = time.monotonic()
    with pytest.raises(ComputationError, match="fewer than the 5"):
        sweep(small_grid, tmp_path, scheduler=cluster, workers=5, timeout=2)
    assert time.monotonic() - t0 < 20


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
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if (out / JOURNAL).exists() and (out / JOURNAL).stat().st_size > 0:
                    os.killpg(workers, signal.SIGKILL)
                    return
                time.sleep(0.01)

        killer = threading.Thread(target=kill_when_rows_arrive, daemon=True)
        killer.start()
        t0 = time.monotonic()
        with pytest.raises(ComputationError, match="no worker for 2 s"):
            sweep(grid, out, scheduler=address, timeout=2, plots=False)
        assert time.monotonic() - t0 < 60
        killer.join(5)
    finally:
        cluster.stop()
    assert 0 < len(read_rows(out / "results.parquet")) < 4002


@pytest.mark.parametrize("address, named", [("tcp://127.0.0.1:9", "no Dask scheduler answered"),
                                             ("not an address", "must be an address"),
                                             ("http://127.0.0.1:8786", "unknown protocol")])
def test_unreachable_or_bad_scheduler(small_grid, tmp_path, address, named):
    t0 = time.monotonic()
    with pytest.raises(InvalidArgumentError, match=named) as info:
        sweep(small_grid, tmp_path, scheduler=address, timeout=2)
    assert repr(address) in str(info.value)
    assert time.monotonic() - t0 < 20
