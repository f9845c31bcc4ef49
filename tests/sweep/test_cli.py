"""``ag-attention sweep`` (ag_attention._sweep.cli): errors exit 2 naming the value, JSON output."""

import json
import os

import pytest

pytest.importorskip("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")

from ag_attention._sweep.cli import main as sweep_main  # noqa: E402
from tests.sweep.guards import bounded  # noqa: E402


def test_cli_errors_exit_2_naming_the_value(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[product]\ndepth = 2\nwidth = "1..4"\ntokens = 2\nheads = 0\n')
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


def test_cli_refuses_special_grid_files_with_exit_2(tmp_path, capsys):
    fifo = tmp_path / "grid.toml"
    os.mkfifo(fifo)
    assert bounded(lambda: sweep_main([str(fifo), "--out", str(tmp_path / "o")])) == 2
    assert "not a regular file (a FIFO)" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_says_which_stored_lines_it_set_aside(tmp_path, capsys):
    grid = tmp_path / "g.toml"
    grid.write_text("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 2\n")
    out = tmp_path / "o"
    out.mkdir()
    (out / "journal.jsonl").write_text('{"a":1}\n')
    assert sweep_main([str(grid), "--out", str(out), "--resume", "--workers", "1", "--no-plots", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert (
        captured.err.startswith("ag-attention: warning: 1 line of ")
        and "journal.jsonl line 1: no column" in captured.err
    )
    assert f"set aside in {out / 'journal.rejected'}" in captured.out


def _run(entry, args, capsys):
    """(exit status, stdout, stderr) of ``entry(args)``, argparse's own exits included."""
    try:
        status = entry(args)
    except SystemExit as exc:
        status = exc.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_python_m_sweep_is_ag_attention_sweep(tmp_path, capsys):
    """``python -m ag_attention._sweep`` (without importing ag_attention._cli): the same messages and exit statuses."""
    from ag_attention._cli import main as cli_main

    bad = tmp_path / "bad.toml"
    bad.write_text('[product]\ndepth = 2\nwidth = "1..4"\ntokens = 2\nheads = 0\n')
    grid = tmp_path / "g.toml"
    grid.write_text("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 2\n")
    out = tmp_path / "file"
    out.write_text("not a directory")
    for args in (
        [str(bad), "--out", str(tmp_path / "o")],
        [str(tmp_path / "none.toml"), "--out", str(tmp_path / "o")],
        [str(bad), "--out", "o", "--resume", "--overwrite"],
        [str(bad)],
        ["--help"],
        ["--version"],
        [str(grid), "--out", str(tmp_path / "o"), "--workers", "0"],
        [str(grid), "--out", str(out), "--workers", "1", "--no-plots", "--quiet"],
    ):
        alone = _run(sweep_main, args, capsys)
        assert alone == _run(lambda a: cli_main(["sweep", *a]), args, capsys), args
        assert alone[0] in (0, 2, 4) and (alone[0] == 0) == (args == ["--help"]), (args, alone)
