"""``point`` (ag_attention._cli.point): contradictory options refused by name before any file is read (exit 2).
The command end to end: tests/point/ (test_report.py, test_plot.py, test_heads.py, test_checkpoints.py)."""

import pytest

from tests.cli import exit_of


@pytest.mark.parametrize(
    "argv, text",
    [
        (["--normalized", "--as", "lightning"], "--normalized and --as lightning: choose one"),
        (["--temperature", "2"], "--temperature: only with softmax attention"),
        (["--as", "lightning", "--temperature", "2"], "--temperature: only with softmax attention"),
        (["--as", "softmax"], "argument --as: invalid choice: 'softmax'"),
    ],
)
def test_point_refuses_contradictory_options_by_name(argv, text, tmp_path, capsys):
    missing = tmp_path / "never-read.npz"
    status, out, err = exit_of(["point", str(missing), *argv], capsys)
    assert status == 2 and text in err and "Traceback" not in err and out == ""
    assert "never-read.npz" not in err  # refused before the file is opened
