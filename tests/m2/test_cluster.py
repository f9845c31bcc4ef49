"""A throw-away Dask cluster of subprocesses (ag_attention._m2.cluster): it starts, serves, and leaves nothing."""

import importlib.util
import re
import sys
import time
from pathlib import Path

import pytest

from ag_attention._m2.cluster import LocalDaskCluster, dask_command
from tests.helpers import lazy_import, processes_matching

if importlib.util.find_spec("distributed") is None:
    pytest.skip("sweeps need distributed: pip install 'ag-attention[sweep]'", allow_module_level=True)
# imported by the test that uses it, not while pytest collects (half a second in every worker)
distributed = lazy_import("distributed")


def test_dask_command_is_this_pythons():
    cmd = dask_command()
    script = Path(sys.executable).with_name("dask")
    assert cmd == ([str(script)] if script.exists() else [sys.executable, "-m", "dask"])


def test_a_cluster_serves_its_workers_and_leaves_nothing_behind():
    cluster = LocalDaskCluster(workers=2, threads=1, timeout=60)
    with cluster as address:
        assert re.fullmatch(r"tcp://127\.0\.0\.1:\d+", address) and cluster.address == address
        assert processes_matching(f"worker {address}")
        with distributed.Client(address, timeout=30, set_as_default=False) as client:
            workers = client.scheduler_info()["workers"]
            assert len(workers) == 2 and all(w["nthreads"] == 1 for w in workers.values())
            assert client.submit(sum, [1, 2, 3]).result(timeout=30) == 6
    # the scheduler, the nannies and their workers: killed with their process groups
    deadline = time.monotonic() + 10
    while processes_matching(address) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_matching(address) == []
    cluster.stop()  # stopping twice is harmless


def test_a_cluster_whose_parent_is_killed_stops_too(tmp_path):
    # the parent killed outright (no exit, no handler): the kernel's parent-death signal stops the scheduler and
    # `dask worker`, which closes its nannies' workers (a killed parent's cluster ran on for 80 minutes before)
    import os
    import signal
    import subprocess

    script = (
        "import sys, time\n"
        "from ag_attention._m2.cluster import LocalDaskCluster\n"
        "c = LocalDaskCluster(workers=2, threads=1, timeout=60)\n"
        "address = c.start()\n"
        "print(address, *c.process_groups, flush=True)\n"
        "time.sleep(600)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        address, *groups = parent.stdout.readline().split()
        assert address.startswith("tcp://127.0.0.1:") and len(groups) == 2
        assert processes_matching(f"worker {address}")
    finally:
        parent.kill()
        parent.wait(timeout=30)

    def alive(group):
        try:
            os.killpg(int(group), 0)
            return True
        except ProcessLookupError:
            return False

    deadline = time.monotonic() + 60
    while any(alive(g) for g in groups) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [g for g in groups if alive(g)]
    for g in left:  # not to leave them running when the test fails
        os.killpg(int(g), signal.SIGKILL)
    assert left == [], f"process groups still running 60 s after their parent was killed: {left}"
