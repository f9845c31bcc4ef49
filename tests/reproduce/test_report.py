"""Reports (ag_attention._reproduce.report): checks, tables and statements as Markdown and JSON."""

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ag_attention._reproduce.report import Check, Report, Table, Verdict


def test_verdict_without_checks_and_a_report_without_statements():
    v = Verdict.of("X", "a statement", "nothing", [])
    assert v.passed is None and v.sizes_text() == "-" and v.to_dict()["passed"] is None
    r = Report("plain")
    r.add(Check("c", "case", "m", 1, 1, True, size=(2, 1, 2), techniques=("t",)))
    r.tables.append(Table("t", ["flag"], [[True]]))
    d = r.to_dict()
    assert d["statements"] == [] and d["checks"][0]["size"] == [2, 1, 2] and d["provenance"]
    assert "| claim | case |" in r.to_markdown() and "| yes |" in r.to_markdown()


@contextlib.contextmanager
def _small_disk(where: Path, size: str):
    """A tmpfs of ``size`` at ``where`` (root only; skipped where it cannot be mounted)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    where.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    ).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def _cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "ag_attention._cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def test_a_full_disk_is_refused_before_the_computation(tmp_path):
    """--out on a disk with 64 KiB: an empty test file fits (the old check passed), the reservation does not."""
    with _small_disk(tmp_path / "disk", "64k") as disk:
        r = _cli("reproduce", "corollary-3.8", "--quick", "--out", str(disk / "out"))
        assert r.returncode == 4, r.stderr
        assert "--out=" in r.stderr and "No space left on device" in r.stderr and "16 MiB" in r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""  # nothing was computed
        assert [p.name for p in (disk / "out").iterdir()] == []


def test_a_disk_that_fills_during_the_run_loses_nothing(tmp_path, monkeypatch):
    """The reservation passes (made small here), then the report does not fit: it is written to a new
    temporary directory instead, named on stderr (exit 4), no temporary file is left behind."""
    code = (
        "import sys; import ag_attention._reproduce.report as r; r.OUTPUT_RESERVE = 1024; "
        "r.output_directory.__defaults__ = (1024,); from ag_attention._cli import main; sys.exit(main(sys.argv[1:]))"
    )
    with _small_disk(tmp_path / "disk", "24k") as disk:
        r = subprocess.run(
            [sys.executable, "-c", code, "reproduce", "corollary-3.8", "--quick", "--out", str(disk / "out")],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "TMPDIR": str(tmp_path)},
        )
        assert r.returncode == 4, r.stderr
        assert "No space left on device" in r.stderr and "the report was written to" in r.stderr
        saved = Path(r.stderr.rsplit("the report was written to ", 1)[1].split()[0])
        assert saved.parent == tmp_path and sorted(p.name for p in saved.iterdir()) == ["report.json", "report.md"]
        assert not [p.name for p in (disk / "out").iterdir() if p.name.endswith(".tmp")]


def test_a_link_planted_at_a_figure_is_replaced_not_followed(tmp_path):
    """Figures are written through atomic temporaries: a link at figure1.svg does not redirect the write."""
    from ag_attention._reproduce.report import pyplot, save_figure

    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "figure.svg").symlink_to(victim)
    plt = pyplot()
    fig = plt.figure()
    try:
        written = save_figure(fig, tmp_path / "figure.png")
    finally:
        plt.close(fig)
    assert victim.read_text() == "precious" and not (tmp_path / "figure.svg").is_symlink()
    assert [p.name for p in written] == ["figure.png", "figure.pdf", "figure.svg"]


@pytest.mark.parametrize(
    "expected,observed,bad",
    [
        ("< 3", 3, True),
        ("<= 12 (the symmetries)", 13, True),
        ("> 0", 0, True),
        ("= 5", 4, True),
        ("< 3", 2, False),
        ("<= 12 (the symmetries)", 12, False),
        ("3 (every binary cubic has 3)", 3, False),
        ("< 3", "3", False),
        ("exact", 7, False),
    ],
)
def test_a_passed_check_that_contradicts_its_bound_is_refused(expected, observed, bad):
    """Issue 30: a row "expected < 3 | observed 3 | pass" must never be written: the report refuses it."""
    from ag_attention import ComputationError
    from ag_attention._reproduce.report import Check, Report, contradiction

    c = Check("a claim", "a case", "a method", expected, observed, True)
    assert (contradiction(c) is not None) == bad
    r = Report("t")
    if bad:
        with pytest.raises(ComputationError, match="contradicts itself"):
            r.add(c)
        assert r.checks == []
    else:
        assert r.add(c) is c
    failed = Check("a claim", "a case", "a method", expected, observed, False)
    assert contradiction(failed) is None  # a failed check says what it says
