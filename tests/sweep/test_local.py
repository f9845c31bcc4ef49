"""Sweeps on this machine's cores (ag_attention._sweep.local): the workers, and chunks that do not change the rows."""

import os

import pytest

from ag_attention._sweep import parse_grid, sweep
from ag_attention._sweep.local import local_workers

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
