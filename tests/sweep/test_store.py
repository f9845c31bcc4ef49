"""The sweep's store (ag_attention._sweep.store): the Parquet schema and metadata, resuming, kill -9 and --resume."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from ag_attention._errors import InvalidArgumentError  # noqa: E402
from ag_attention._sweep import COLUMNS, Spec, read_metadata, read_rows, sweep  # noqa: E402
from ag_attention._sweep.store import JOURNAL  # noqa: E402

from tests.helpers import ROOT  # noqa: E402
from tests.sweep.small_grid import SMALL_SIZE  # noqa: E402


def _strip(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


def test_parquet_schema_and_metadata(local_run):
    path = local_run.results
    schema = pq.read_schema(path)
    types = {f.name: f.type for f in schema}
    assert [f.name for f in schema] == [name for name, _ in COLUMNS]
    for name in ("widths", "ranks", "effective_widths", "effective_ranks"):
        assert types[name] == pa.list_(pa.int64()), name
    for name in ("skip", "causal", "normalized", "formula_applies", "paper_hypotheses_hold", "certified",
                 "numerical", "agrees"):
        assert types[name] == pa.bool_(), name
    for name in ("tokens", "heads", "dimension", "parameters", "expected", "prime", "seed"):
        assert types[name] == pa.int64(), name
    assert types["seconds"] == pa.float64() and types["certificate_kind"] == pa.string()
    meta = read_metadata(path)
    assert {"version", "commit", "date", "python", "flint"} <= set(meta["provenance"])
    assert meta["sweep"]["seed"] == 0 and meta["sweep"]["grid"].endswith("small.toml")
    rows = read_rows(path)
    assert len(rows) == SMALL_SIZE == local_run.total == local_run.computed
    assert len({Spec.from_row(r) for r in rows}) == len(rows)
    one_token, softmax = rows[0], rows[1]
    assert (one_token["dimension"], one_token["expected"], one_token["certified"]) == (8, 11, True)
    assert one_token["certificate_kind"] == "analytic-bound"
    assert softmax["numerical"] and softmax["certified"] and softmax["prime"] is None  # float64, then balls
    assert softmax["certificate_kind"] == "ball-arithmetic" and softmax["upper_bound"] == softmax["dimension"]
    assert softmax["dimension"] == softmax["expected"] == 2 * (2 * 3 - 2) + 3 * 2  # Thm. 3.9
    assert not any(r["error"] for r in rows)
    # the summary counts are consistent, and the files are there
    total = local_run.summary["total"]
    assert total["rows"] == SMALL_SIZE
    assert total["applies_agrees"] + total["applies_differs"] + total["applies_undecided"] == total["formula_applies"]
    assert json.loads((local_run.out / "summary.json").read_text())["total"] == total
    assert "| lightning, t=2, L=2 |" in (local_run.out / "summary.md").read_text()
    assert not (local_run.out / JOURNAL).exists()
    pytest.importorskip("matplotlib")
    assert (local_run.out / "dimension-vs-formula.png").stat().st_size > 0
    assert (local_run.out / "dimension-vs-formula.svg").stat().st_size > 0


def test_existing_results_need_resume_or_overwrite(local_run, small_grid):
    with pytest.raises(InvalidArgumentError, match="--resume"):
        sweep(small_grid, local_run.out)
    with pytest.raises(InvalidArgumentError, match="seed=1"):
        sweep(small_grid, local_run.out, resume=True, seed=1)
    again = sweep(small_grid, local_run.out, resume=True, plots=False)
    assert (again.computed, again.skipped) == (0, SMALL_SIZE)


def test_resume_after_kill(local_run, small_grid, tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "ag_attention._sweep", str(small_grid), "--out", str(out), "--workers", "1",
           "--quiet", "--no-plots"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    journal = out / JOURNAL
    deadline = time.monotonic() + 60
    finished = 0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists():
                finished = journal.read_bytes().count(b"\n")
                if finished >= 16:
                    break
            time.sleep(0.01)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker processes
        except ProcessLookupError:
            pass
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    assert not (out / "results.parquet").exists()
    kept = journal.read_bytes().count(b"\n")
    assert 16 <= kept < SMALL_SIZE
    with open(journal, "ab") as f:  # a write torn by a crash: dropped on reading
        f.write(b'{"widths": [1, ')
    r = sweep(small_grid, out, resume=True, workers=2, plots=False)
    assert (r.skipped, r.computed, r.total) == (kept, SMALL_SIZE - kept, SMALL_SIZE)
    rows = r.rows()
    assert len({Spec.from_row(row) for row in rows}) == len(rows) == SMALL_SIZE
    assert _strip(rows) == _strip(local_run.rows())


# ------------------------------------------------------------------ issue 20: what a sweep writes, and how
def test_integer_columns_have_integer_dtypes(local_run):
    """Every integer column reads as an integer dtype, also in pandas (nullable Int64 where nulls may be)."""
    pd = pytest.importorskip("pandas")
    frame = pd.read_parquet(local_run.results)
    assert frame["prime"].isna().sum() == 1  # the softmax row has no prime: a null in an integer column
    for name, kind in COLUMNS:
        if kind.startswith("int64"):
            assert pd.api.types.is_integer_dtype(frame[name]), (name, frame[name].dtype)
            assert str(frame[name].dtype) == ("Int64" if kind.endswith("?") else "int64"), name
        elif kind.startswith("bool"):
            assert pd.api.types.is_bool_dtype(frame[name]), (name, frame[name].dtype)
    assert frame["prime"].dropna().tolist() == [2**31 - 1] * (SMALL_SIZE - 1)
