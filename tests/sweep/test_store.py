"""The sweep's store (ag_attention._sweep.store): the Parquet schema and metadata, resuming, kill -9 and --resume."""

import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")

import pyarrow.parquet as pq  # noqa: E402

from ag_attention import _progress as progress  # noqa: E402
from ag_attention._errors import InvalidArgumentError, OutputError  # noqa: E402
from ag_attention._sweep import Spec, parse_grid, read_rows, sweep  # noqa: E402
from ag_attention._sweep.cli import main as sweep_main  # noqa: E402
from ag_attention._sweep.store import JOURNAL, JournalWarning, grid_fingerprint  # noqa: E402
from tests.helpers import ROOT, Terminal  # noqa: E402
from tests.sweep.small_grid import SMALL_SIZE  # noqa: E402


def _strip(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


def test_existing_results_need_resume_or_overwrite(local_run, small_grid):
    with pytest.raises(InvalidArgumentError, match="--resume"):
        sweep(small_grid, local_run.out)
    with pytest.raises(InvalidArgumentError, match="seed=1"):
        sweep(small_grid, local_run.out, resume=True, seed=1)
    again = sweep(small_grid, local_run.out, resume=True, plots=False)
    assert (again.computed, again.skipped) == (0, SMALL_SIZE)


def test_resume_after_kill(local_run, small_grid, tmp_path):
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "ag_attention._sweep",
        str(small_grid),
        "--out",
        str(out),
        "--workers",
        "1",
        "--quiet",
        "--no-plots",
    ]
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
TINY = (
    "[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 2\n\n"
    "[[architecture]]\nwidths = [2, 1]\nranks = [1]\ntokens = 2\n"
)


def _plant(directory, names, victims):
    """A symbolic link at each of ``names`` in ``directory``, to a file of ``victims`` holding its name."""
    directory.mkdir(parents=True, exist_ok=True)
    victims.mkdir(exist_ok=True)
    for name in names:
        victim = victims / name.lstrip(".")
        victim.write_text(f"victim {name}\n")
        (directory / name).symlink_to(victim)


def _victims_untouched(victims):
    for victim in victims.iterdir():
        assert victim.read_text() == f"victim {victim.name}\n" or victim.read_text() == f"victim .{victim.name}\n", (
            victim
        )


def test_planted_links_are_never_written_through(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text(TINY)
    out, victims = tmp_path / "out", tmp_path / "victims"
    names = [
        "sweep.json.tmp",
        "results.parquet.tmp",
        "summary.md.tmp",
        "summary.json.tmp",  # the old temporaries
        "sweep.json",
        "summary.md",
        "summary.json",
        "dimension-vs-formula.png",
        "dimension-vs-formula.pdf",
        "dimension-vs-formula.svg",
    ]
    _plant(out, names, victims)
    assert sweep_main([str(grid), "--out", str(out), "--workers", "1", "--quiet"]) == 0, capsys.readouterr().err
    _victims_untouched(victims)
    for name in ("sweep.json", "summary.md", "summary.json", "results.parquet"):
        assert (out / name).is_file() and not (out / name).is_symlink(), name  # the link itself was replaced
    if (out / "dimension-vs-formula.png").exists():
        assert not (out / "dimension-vs-formula.png").is_symlink()


@pytest.mark.parametrize("name", [JOURNAL, ".lock"])
def test_a_link_at_the_journal_or_the_lock_is_refused(tmp_path, capsys, name):
    grid = tmp_path / "grid.toml"
    grid.write_text(TINY)
    out, victims = tmp_path / "out", tmp_path / "victims"
    _plant(out, [name], victims)
    assert sweep_main([str(grid), "--out", str(out), "--workers", "1", "--quiet", "--no-plots"]) == 4
    err = capsys.readouterr().err
    assert str(out / name) in err and "symbolic link" in err and "Traceback" not in err
    _victims_untouched(victims)


def test_a_link_at_the_results_is_not_read_on_resume(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text(TINY)
    out, victims = tmp_path / "out", tmp_path / "victims"
    _plant(out, ["results.parquet"], victims)
    for resume in ([], ["--resume"]):
        assert sweep_main([str(grid), "--out", str(out), "--workers", "1", "--quiet", "--no-plots", *resume]) == 4
        err = capsys.readouterr().err
        assert f"{out / 'results.parquet'}: it is a symbolic link (not followed)" in err, err
    _victims_untouched(victims)
    assert sweep_main([str(grid), "--out", str(out), "--workers", "1", "--quiet", "--no-plots", "--overwrite"]) == 0
    assert not (out / "results.parquet").is_symlink()  # --overwrite removes the link itself
    _victims_untouched(victims)


def test_invalid_journal_lines_are_set_aside_and_every_valid_row_kept(local_run, tmp_path):
    """Garbled lines and rows that are not rows (L2, T4): moved to journal.rejected, each named; the rest resume."""
    valid = read_rows(local_run.results)[:128]
    grid = parse_grid({"architecture": [{k: v for k, v in Spec.from_row(r).to_dict().items()} for r in valid]})
    out = tmp_path / "out"
    out.mkdir()
    bad = {
        5: b'{"widths": [1, 2], "ra\x00\xff garbled',
        40: b'{"a":1}',
        80: None,
        100: b"[1, 2]",
        110: b'{"widths": [2, 2], "ranks": [' + b"[" * 3000 + b"]" * 3000 + b"]}",
    }
    lines, rows = [], iter(valid[:127])
    for number in range(1, 127 + len(bad) + 1):
        if number in bad:
            line = bad[number]
            if line is None:  # a row whose tokens are not a number
                line = json.dumps({**valid[0], "tokens": "abc"}).encode()
        else:
            line = json.dumps(next(rows)).encode()
        lines.append(line + b"\n")
    (out / JOURNAL).write_bytes(b"".join(lines))
    with pytest.warns(JournalWarning) as caught:
        r = sweep(grid, out, resume=True, workers=1, plots=False)
    message = str(caught[0].message)
    assert "5 lines" in message and "line 5" in message and str(out / "journal.rejected") in message
    assert "127 valid rows are kept" in message and len(message) < 1500
    assert (r.skipped, r.computed, r.total, r.rejected) == (127, 1, 128, 5)
    assert _strip(r.rows()) == _strip(valid)
    rejected = [json.loads(line) for line in (out / "journal.rejected").read_text().splitlines()]
    assert [e["line"] for e in rejected] == sorted(bad) and all(e["source"] == str(out / JOURNAL) for e in rejected)
    assert "tokens" in rejected[2]["reason"] and "'abc'" in rejected[2]["reason"]


def _two_grids(tmp_path):
    six = tmp_path / "six.toml"
    six.write_text('[product]\ndepth = 1\nwidth = "1..2"\ntokens = 2\n')
    three = tmp_path / "three.toml"
    three.write_text(
        "".join(
            f"[[architecture]]\nwidths = {w}\nranks = {a}\ntokens = 2\n\n"
            for w, a in (([1, 1], [1]), ([2, 2], [2]), ([2, 1], [1]))
        )
    )
    return six, three


def test_resume_with_another_grid_is_refused(tmp_path, capsys):
    """--resume completes the run it started: another grid (smaller or larger) is refused, nothing is mixed."""
    six, three = _two_grids(tmp_path)
    out = tmp_path / "out"
    base = ["--out", str(out), "--workers", "1", "--quiet", "--no-plots"]
    assert sweep_main([str(six), *base]) == 0
    before = (out / "results.parquet").read_bytes()
    capsys.readouterr()
    assert sweep_main([str(three), *base, "--resume"]) == 2  # a smaller grid: its rows are a part of these
    err = capsys.readouterr().err
    assert f"{three} (3 architectures)" in err and f"{six} (6 architectures)" in err and "--overwrite" in err, err
    assert (out / "results.parquet").read_bytes() == before
    with pytest.raises(InvalidArgumentError, match=r"<grid> \(18 architectures\).*six.toml \(6 architectures\)"):
        sweep(parse_grid({"product": {"depth": 1, "width": "1..3", "tokens": 2}}), out, resume=True, plots=False)
    assert sweep_main([str(three), *base, "--overwrite"]) == 0
    assert len(read_rows(out / "results.parquet")) == 3


@pytest.fixture
def tiny_disk(tmp_path):
    """A 128 KiB tmpfs (we are root in the test machine; skipped where mount is not allowed)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_while_rows_arrive(local_run, small_grid, tiny_disk, capsys):
    """ENOSPC on the journal (T5): exit 4 naming it, the rows so far kept, and --resume completes the run."""
    out = tiny_disk / "out"
    status = sweep_main([str(small_grid), "--out", str(out), "--workers", "2", "--quiet", "--no-plots"])
    err = capsys.readouterr().err
    assert status == 4, err
    assert str(out / JOURNAL) in err and "No space left on device" in err and "--resume" in err
    assert "Traceback" not in err
    kept = (out / JOURNAL).read_bytes().count(b"\n")
    assert 0 < kept < SMALL_SIZE
    subprocess.run(["mount", "-o", "remount,size=8m", str(tiny_disk)], check=True)
    r = sweep(small_grid, out, resume=True, workers=2, plots=False)
    assert (r.skipped, r.computed, r.total) == (kept, SMALL_SIZE - kept, SMALL_SIZE)
    assert _strip(r.rows()) == _strip(local_run.rows())


def test_a_full_disk_at_compaction(tmp_path, monkeypatch):
    """ENOSPC while writing results.parquet (T5): an OutputError naming it; the journal keeps every row."""
    grid = parse_grid({"product": {"depth": 1, "width": "1..2", "tokens": 2}})
    out = tmp_path / "out"

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    with pytest.raises(OutputError) as info:
        sweep(grid, out, workers=1, plots=False)
    message = str(info.value)
    assert str(out / "results.parquet") in message and "No space left on device" in message
    assert "--resume" in message and str(out / JOURNAL) in message
    assert (out / JOURNAL).read_bytes().count(b"\n") == len(grid) and not (out / "results.parquet").exists()
    monkeypatch.undo()
    r = sweep(grid, out, resume=True, workers=1, plots=False)
    assert (r.skipped, r.computed) == (len(grid), 0) and len(r.rows()) == len(grid)


def test_reading_and_compacting_show_their_progress(local_run, small_grid, monkeypatch):
    """Reading the stored rows and writing results.parquet are bars of rows (tens of thousands take seconds)."""
    monkeypatch.setattr(progress, "DELAY", 0.0)  # the bars show after 2 s; here at once
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    r = sweep(small_grid, local_run.out, resume=True, plots=False)
    assert (r.computed, r.skipped) == (0, SMALL_SIZE)
    text = err.getvalue()  # tqdm draws at most every 0.1 s: the counts shown depend on the machine's speed
    assert "sweep: reading the stored rows" in text and "sweep: writing results.parquet" in text


def test_the_grid_fingerprint_is_the_set_of_networks():
    specs = parse_grid({"product": {"depth": 1, "width": "1..3", "tokens": 2}}).specs
    assert grid_fingerprint(specs) == grid_fingerprint(specs[::-1])  # the order of a grid file does not matter
    assert grid_fingerprint(specs[:-1]) != grid_fingerprint(specs) != grid_fingerprint(specs[1:])
    assert grid_fingerprint(specs).startswith(f"{len(specs)}:")
