"""Sweeps: grid files, the Parquet schema, local = Dask, kill -9 and --resume, errors naming the value.

The Dask tests start a real scheduler and two worker processes on 127.0.0.1
(``dask scheduler`` / ``dask worker`` subprocesses in their own process group,
killed with it at teardown); every wait has a timeout.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")
pytest.importorskip("distributed", reason="sweeps need distributed: pip install 'ag-attention[sweep]'")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from ag_attention._errors import ComputationError, InvalidArgumentError  # noqa: E402
from ag_attention._sweep import COLUMNS, Spec, load_grid, parse_grid, read_metadata, read_rows, sweep  # noqa: E402
from ag_attention._sweep.cli import main as sweep_main  # noqa: E402
from ag_attention._sweep.cluster import LocalDaskCluster  # noqa: E402
from ag_attention._sweep.store import JOURNAL  # noqa: E402

from tests.helpers import ROOT, processes_matching  # noqa: E402

#: 400 two-layer networks (t = 2, widths 1..4) and three explicit ones: one token, softmax, a repeat
SMALL = """
description = "test grid"

[[architecture]]
widths = [3, 1]
ranks = [3]
tokens = 1

[[architecture]]
widths = [3, 2]
ranks = [2]
tokens = 3
normalized = true

[[architecture]]
widths = [2, 2, 2]
ranks = [1, 2]
tokens = 2

[product]
depth = 2
width = "1..4"
tokens = 2
"""
SMALL_SIZE = 402  # the third table is also in the product


def _strip(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


@pytest.fixture(scope="module")
def small_grid(tmp_path_factory):
    path = tmp_path_factory.mktemp("grid") / "small.toml"
    path.write_text(SMALL)
    return path


@pytest.fixture(scope="module")
def local_run(small_grid, tmp_path_factory):
    out = tmp_path_factory.mktemp("local")
    return sweep(small_grid, out, workers=2)


@pytest.fixture(scope="module")
def cluster():
    with LocalDaskCluster(workers=2, threads=1, timeout=60) as address:
        yield address


# ------------------------------------------------------------------ grid files
def _error(tmp_path, text):
    path = tmp_path / "g.toml"
    path.write_text(text)
    with pytest.raises(InvalidArgumentError) as info:
        load_grid(path)
    return str(info.value)


@pytest.mark.parametrize(
    "text, named",
    [
        ("colour = 1\n", "colour=1"),
        ("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 2\ndepth = 3\n", "architecture[0].depth=3"),
        ("[product]\ndepth = 1\nwidth = 2\ntokens = 2\nwidht = 3\n", "product.widht=3"),
        ("[product]\ndepth = 2\nwidth = \"0..4\"\ntokens = 2\n", "product.width='0..4'"),
        ("[product]\ndepth = 2\nwidth = [1, 0]\ntokens = 2\n", "product.width[1]=0"),
        ("[product]\ndepth = 2\nwidth = \"4..1\"\ntokens = 2\n", "product.width='4..1'"),
        ("[product]\ndepth = 2\nwidth = \"1-4\"\ntokens = 2\n", "product.width='1-4'"),
        ("[product]\ndepth = 2\nwidth = 3\ntokens = true\n", "product.tokens=True"),
        ("[product]\ndepth = 2\nwidth = 3\n", "missing key 'tokens'"),
        ("[[architecture]]\nwidths = [4, 0]\nranks = [2]\ntokens = 2\n", "architecture[0].widths[1]=0"),
        ("[[architecture]]\nwidths = [4, 2, 4]\nranks = [2, 3]\ntokens = 2\n", "architecture[0].ranks[1]=3"),
        ("[[architecture]]\nwidths = [2, 4]\nranks = [2, 2]\ntokens = 2\n", "architecture[0].ranks=[2, 2]"),
        ("[[architecture]]\nwidths = [2, 3]\nranks = [2]\ntokens = 2\nskip = true\n", "architecture[0].skip=True"),
        ("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 0\n", "architecture[0].tokens=0"),
        ("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 2\ncausal = 1\n", "architecture[0].causal=1"),
        ("[product]\ndepth = 1\nwidth = 2\ntokens = 2\nrank = 3\n", "the grid is empty"),
        ("description = \"nothing\"\n", "the grid is empty"),
        ("", "the grid is empty"),
        ("[product]\ndepth = 3\nwidth = \"1..40\"\ntokens = 2\n", "narrow its ranges"),
        ("[product\n", "not valid TOML"),
    ],
)
def test_grid_errors_name_the_key_and_value(tmp_path, text, named):
    message = _error(tmp_path, text)
    assert named in message
    assert str(tmp_path / "g.toml") in message


def test_unreadable_grid_file_is_named(tmp_path):
    for path in (tmp_path / "missing.toml", tmp_path):
        with pytest.raises(InvalidArgumentError, match="cannot be read") as info:
            load_grid(path)
        assert str(path) in str(info.value)


def test_product_semantics():
    # a list is explicit values, a string an inclusive range; rank "all" = 1..d_{i-1}
    g = parse_grid({"product": {"depth": 1, "width": [1, 3], "tokens": "1..2"}})
    assert {s.widths for s in g} == {(1, 1), (1, 3), (3, 1), (3, 3)}
    assert len(g) == 2 * (1 + 1 + 3 + 3)
    # given ranks: those at most d_{i-1} per layer; skip only with equal widths
    g = parse_grid({"product": {"depth": 2, "width": "2..3", "rank": [2, 3], "tokens": 2, "skip": True}})
    assert [(s.widths, s.ranks) for s in g] == [((2, 2, 2), (2, 2)), ((3, 3, 3), (2, 2)), ((3, 3, 3), (2, 3)),
                                              ((3, 3, 3), (3, 2)), ((3, 3, 3), (3, 3))]
    # the findings grids have the README's sizes; a repeat is computed once
    assert len(load_grid(ROOT / "sweeps" / "findings-t2.toml")) == 4400
    assert len(load_grid(ROOT / "sweeps" / "findings-t1.toml")) == 4440
    g = parse_grid({"architecture": [{"widths": [2, 2], "ranks": [1], "tokens": 2}],
                    "product": {"depth": 1, "width": 2, "tokens": 2}})
    assert len(g) == 2 and g.duplicates == 1


# ------------------------------------------------------------------ results
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


# ------------------------------------------------------------------ Dask
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


# ------------------------------------------------------------------ kill -9 and --resume
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


# ------------------------------------------------------------------ command line
def test_cli_errors_exit_2_naming_the_value(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[product]\ndepth = 2\nwidth = \"1..4\"\ntokens = 2\nheads = 0\n")
    assert sweep_main([str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "product.heads=0" in capsys.readouterr().err
    assert sweep_main([str(tmp_path / "none.toml"), "--out", str(tmp_path / "o")]) == 2
    assert "none.toml" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        sweep_main([str(bad), "--out", "o", "--resume", "--overwrite"])
    assert info.value.code == 2


def test_cli_json(tmp_path, capsys):
    grid = tmp_path / "g.toml"
    grid.write_text("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 2\n")
    assert sweep_main([str(grid), "--out", str(tmp_path / "o"), "--json", "--workers", "1", "--no-plots"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"] == data["computed"] == 1 and data["summary"]["total"]["applies_agrees"] == 1
    assert "provenance" in data
