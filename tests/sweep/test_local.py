"""Sweeps on this machine's cores (ag_attention._sweep.local): the workers, and chunks that do not change the rows."""

import multiprocessing
import os
import signal
import threading
import time

import pytest

from ag_attention._errors import ComputationError
from ag_attention._sweep import parse_grid, sweep
from ag_attention._sweep.local import local_workers
from tests.sweep.guards import bounded

pytest.importorskip("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")


def _strip(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


def test_local_workers_are_the_cores_this_process_may_use():
    n = local_workers()
    assert n >= 1 and n == len(os.sched_getaffinity(0))


def test_rows_do_not_depend_on_workers_or_chunks(tmp_path):
    grid = parse_grid({"product": {"depth": 1, "width": "1..3", "tokens": 2}})  # 3 x 3 widths, every rank: 18
    one = sweep(grid, tmp_path / "one", workers=1, plots=False)
    many = sweep(grid, tmp_path / "many", workers=2, chunk_size=1, plots=False)
    assert (one.workers, many.workers) == (1, 2) and one.computed == many.computed == len(grid) == 18
    assert _strip(one.rows()) == _strip(many.rows())  # results.parquet keeps the grid's order, not the workers'
    assert [row["widths"] for row in one.rows()] == [list(s.widths) for s in grid.specs]


def test_no_more_workers_than_architectures(tmp_path):
    grid = parse_grid({"architecture": [{"widths": [2, 1], "ranks": [1], "tokens": 2}]})
    r = sweep(grid, tmp_path / "out", workers=4, plots=False)
    assert r.workers == 1 and r.computed == 1
    nothing = sweep(grid, tmp_path / "out", resume=True, workers=4, plots=False)  # nothing left to compute
    assert (nothing.computed, nothing.skipped, nothing.workers) == (0, 1, 1)


def test_a_dead_worker_on_a_deep_network_is_said_briefly(tmp_path):
    """A worker killed on a 1,200-layer network (Q5): a message of a few hundred characters, not 5 KB."""
    grid = parse_grid({"architecture": [{"widths": [1] * 1201, "ranks": [1] * 1200, "tokens": 2}]})

    def kill_the_worker():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if multiprocessing.active_children():  # the pool's worker, started with spawn, computing for minutes
                time.sleep(0.5)
                for child in multiprocessing.active_children():
                    os.kill(child.pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_worker, daemon=True)
    killer.start()

    def run():
        with pytest.raises(ComputationError) as info:
            sweep(grid, tmp_path / "out", workers=1, plots=False)
        return str(info.value)

    message = bounded(run)
    killer.join(5)
    assert "a local worker process died" in message and "widths 1,1,1,1,1,1,...,1 (1,201 widths)" in message
    assert "--resume completes the run" in message and len(message) < 600, len(message)


def test_workers_are_capped_by_the_cores_and_the_memory(tmp_path, capfd, monkeypatch):
    # --workers 1000 started 1000 processes (72 on 2 cores took 3.15 GB): now the cores, and the memory, cap it
    grid = parse_grid({"product": {"depth": 1, "width": "1..3", "tokens": 2}})
    r = sweep(grid, tmp_path / "out", workers=1000, plots=False)
    assert 1 <= r.workers <= local_workers() and r.computed == len(grid)
    assert f"--workers 1000: capped to {r.workers}" in capfd.readouterr().err
    from ag_attention._resources import current_rss

    # room for one worker beyond what this process holds (the limit counts the resident size against it)
    monkeypatch.setenv("AG_ATTENTION_MEMORY_LIMIT", str(current_rss() + 200 * 2**20))
    small = sweep(grid, tmp_path / "small", workers=2, plots=False)
    assert small.workers == 1 and "per worker" in capfd.readouterr().err


def test_ctrl_c_on_a_local_sweep_leaves_no_semaphore_behind(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) once rows arrive: exit 130, rows kept, and
    no multiprocessing "leaked semaphore objects" warning (the workers' progress bars locked with a named
    semaphore, which a terminated worker never released: F12)."""
    import subprocess
    import sys

    from tests.helpers import ROOT

    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ag_attention._cli",
            "sweep",
            str(ROOT / "sweeps" / "certification-wide.toml"),
            "--out",
            str(out),
            "--workers",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=ROOT,
        # a runner started in the background (make test under `&`, CI) ignores SIGINT, and an
        # ignored signal stays ignored across exec: the sweep would never see the Ctrl-C
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        journal = out / "journal.jsonl"
        while time.monotonic() < deadline and not (journal.exists() and journal.stat().st_size > 0):
            time.sleep(0.2)
        assert journal.exists() and journal.stat().st_size > 0, "no row within 120 s"
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "leaked semaphore" not in err and "Traceback" not in err
