"""Running a sweep (ag_attention._sweep.run): its arguments checked before any work, what it returns, failed rows."""

import sys

import pytest

from ag_attention import _progress as progress
from ag_attention._errors import InvalidArgumentError
from ag_attention._sweep import parse_grid, sweep
from tests.helpers import Terminal
from tests.sweep.small_grid import SMALL_SIZE

pytest.importorskip("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(prime=4), "prime=4: not a prime"),
        (dict(seed=-1), "seed=-1: must be an integer >= 0"),
        (dict(seed=True), "seed=True: must be an integer >= 0"),
        (dict(workers=0), "workers=0: must be an integer >= 1"),
        (dict(workers=1.5), "workers=1.5: must be an integer >= 1"),
        (dict(chunk_size=0), "chunk_size=0: must be an integer >= 1"),
        (dict(timeout=0), "timeout=0: must be a number of seconds, above 0"),
        (dict(timeout=float("nan")), "timeout=nan: must be a number of seconds, above 0"),
        (dict(timeout=True), "timeout=True: must be a number of seconds"),
        (dict(timeout=1e8), "timeout=100000000.0: must be a number of seconds, above 0 and below 1e7"),
        (dict(resume="yes"), "resume='yes': must be True or False"),
        (dict(plots=None), "plots=None: must be True or False"),
        (dict(resume=True, overwrite=True), "--resume and --overwrite: choose one"),
        (dict(scheduler="x"), "--scheduler='x': must be an address tcp://HOST:PORT"),
    ],
)
def test_bad_arguments_are_refused_before_any_work(kwargs, message, tmp_path):
    with pytest.raises(InvalidArgumentError) as err:
        sweep(tmp_path / "missing.toml", tmp_path / "out", **kwargs)
    assert str(err.value).startswith(message), str(err.value)
    assert not (tmp_path / "out").exists()  # nothing read, nothing written


def test_what_a_sweep_returns(local_run):
    r = local_run
    assert (r.total, r.computed, r.skipped, r.errors, r.scheduler) == (SMALL_SIZE, SMALL_SIZE, 0, 0, None)
    assert 1 <= r.workers <= 2 and r.seconds > 0 and r.results == r.out / "results.parquet"
    files = r.files()
    assert files["results"] == str(r.results) and files["summary_md"] == str(r.out / "summary.md")
    assert {"png", "svg"} <= set(files) if r.summary.get("plots") else "plot_note" in r.summary
    d = r.to_dict()
    assert d["total"] == SMALL_SIZE and d["files"] == files and d["summary"] == r.summary
    text = str(r)
    assert text.startswith(f"sweep: {SMALL_SIZE} architectures, {SMALL_SIZE} computed, 0 already finished, 0 failed; ")
    assert "(local, " in text and "# Sweep summary" in text and text.rstrip().endswith(", ".join(files.values()))
    assert len(r.rows()) == SMALL_SIZE


def test_a_grid_object_and_a_failed_row(tmp_path):
    """An architecture too large for memory is a row with its error, counted; the others are computed."""
    grid = parse_grid(
        {
            "architecture": [
                {"widths": [2, 2], "ranks": [2], "tokens": 2},
                {"widths": [200, 200, 200], "ranks": [100, 100], "tokens": 3},
            ]
        }
    )
    r = sweep(grid, tmp_path / "out", workers=1, plots=False)
    assert (r.total, r.computed, r.errors) == (2, 2, 1) and r.summary["total"]["errors"] == 1
    by_width = {row["widths"][0]: row for row in r.rows()}
    assert by_width[2]["dimension"] == 7 and by_width[2]["error"] is None
    assert by_width[200]["dimension"] is None and by_width[200]["error"].startswith("InsufficientMemoryError: ")
    assert "1 failed" in str(r)
    again = sweep(grid, tmp_path / "out", resume=True, workers=1, plots=False)  # a failed row is computed again
    assert (again.skipped, again.computed, again.errors) == (1, 1, 1)


def test_the_steps_before_the_rows_show_progress(tmp_path, monkeypatch):
    """The grid's fingerprint and planning the tasks take seconds near the limits: bars on a terminal after 2 s."""
    monkeypatch.setattr(progress, "DELAY", 0.0)  # here at once
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    sweep(
        parse_grid({"architecture": [{"widths": [2, 2], "ranks": [2], "tokens": 2}]}),
        tmp_path / "out",
        workers=1,
        plots=False,
    )
    text = err.getvalue()
    assert "sweep: the grid's fingerprint" in text and "sweep: planning the tasks" in text
