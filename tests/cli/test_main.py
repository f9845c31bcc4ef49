"""The front door (ag_attention._cli: build_parser, main): odd input to any command refused by name (exit 2),
closed pipes."""

import os
import subprocess
import sys

import pytest

from tests.cli import exit_of
from tests.helpers import ROOT


@pytest.mark.parametrize(
    "argv, named",
    [
        (["dim", "--widths", "4,4", "--ranks", ""], "ranks"),  # not "A free"
        (["dim", "--widths", "1_0,4", "--ranks", "2"], "widths[0]"),
        (["dim", "--widths", "٣,4", "--ranks", "2"], "widths[0]"),  # Arabic-Indic digit three
        (["dim", "--widths", "4,4", "--ranks", "2", "--tokens", "1_0"], "--tokens"),
        (["dim", "--widths", "4,4", "--ranks", "2", "--compact"], "--compact"),
        (["dim", "--widths", "4,4", "--ranks", "2", "--normalized", "--temperature", "nan"], "--temperature"),
        (["dim", "--widths", "4,4", "--ranks", "2", "--normalized", "--temperature", "-1"], "--temperature"),
        (["implicitize", "--widths", "2,1", "--ranks", "2", "--timeout", "nan"], "--timeout"),
        (["implicitize", "--widths", "2,1", "--ranks", "2", "--timeout", "inf"], "--timeout"),
        (["reproduce", "theorem-3.4", "--m2-timeout", "nan"], "--m2-timeout"),
        (["reproduce", "theorem-3.4", "--m2-timeout", "0"], "--m2-timeout"),
        (["reproduce", "corollary-3.8", "--quick", "--out", ""], "--out"),
        (["reproduce", "corollary-3.8", "--quick", "--m2-timeout", "10"], "--m2-timeout"),
        (["reproduce", "corollary-3.8", "--quick", "--backend", "local"], "--backend"),
        (["reproduce", "figure-3", "--quick", "--no-m2"], "--no-m2"),
        (["reproduce", "corollary-3.8", "--quick", "--max-m2-size", "3"], "--max-m2-size"),
        # refused before any job starts (a review saw it refused after jobs had started, naming `timeout=`)
        (["reproduce", "theorem-3.4", "--m2-timeout", "1e9"], "--m2-timeout"),
        (["implicitize", "--widths", "2,1", "--ranks", "2", "--timeout", "1e7"], "--timeout"),
        (["implicitize", "--widths", "2,1", "--ranks", "2", "--no-completeness"], "--no-completeness"),
        (
            [
                "implicitize",
                "--widths",
                "2,1",
                "--ranks",
                "2",
                "--method",
                "interpolate",
                "--completeness-timeout",
                "0",
            ],
            "--completeness-timeout",
        ),
        # more digits than Python converts (4,300): named, short, no ValueError
        (["dim", "--widths", "7" * 5000 + ",2", "--ranks", "1"], "widths[0]"),
        (["dim", "--widths", "2,2", "--ranks", "1", "--seed", "7" * 5000], "--seed"),
        (["implicitize", "--widths", "2,1", "--ranks", "1", "--field", "ZZ/" + "7" * 5000], "field"),
    ],
)
def test_odd_input_is_refused_naming_the_argument(argv, named, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written into the current directory either
    status, out, err = exit_of(argv, capsys)
    assert status == 2, (status, err)
    assert named in err and "Traceback" not in err
    assert len(err) < 2000  # the value is quoted by its start and length, not whole
    assert list(tmp_path.iterdir()) == []


def test_a_closed_pipe_ends_quietly():
    """`... --json | head -1`: no BrokenPipeError traceback."""
    cmd = (
        f"{sys.executable} -m ag_attention reproduce corollary-3.8 --quick --json --out {ROOT}/.pytest-out-pipe"
        " | head -1"
    )
    r = subprocess.run(
        ["bash", "-c", cmd],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.stdout.strip() == "{"
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr
    subprocess.run(["rm", "-rf", f"{ROOT}/.pytest-out-pipe"])


@pytest.mark.parametrize(
    "redirect, said",
    [("> /dev/full", "cannot write to standard output: No space left on device"), (">&-", "standard output is closed")],
)
def test_a_full_or_closed_standard_output_is_said_with_exit_4(redirect, said):
    """`> /dev/full` (a full disk) and a closed standard output: exit 4 and one line on stderr, no traceback."""
    r = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m ag_attention dim --widths 2,1 --ranks 2 --json {redirect}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 4 and said in r.stderr and "Traceback" not in r.stderr, r.stderr
