"""`ag-attention reproduce training --quick` (ag_attention._reproduce.training): the runs, the checks, the figure."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli


def _passes_and_writes_its_files(d, out, runs):
    assert d["passed"] and d["meta"]["runs"] == runs and d["meta"]["plan"] == "quick"
    names = {c["claim"] for c in d["checks"]}
    assert any(n.startswith("gradient descent with backtracking never increases") for n in names)
    assert any(n.startswith("critical teacher, enough data") for n in names)
    (table,) = [t for t in d["tables"] if t["title"] == "Where the runs end"]
    assert sum(row[3] for row in table["rows"]) == runs
    assert sorted(p.name for p in out.iterdir()) == [
        "report.json",
        "report.md",
        "runs.json",
        "training.pdf",
        "training.png",
        "training.svg",
    ]
    written = json.loads((out / "runs.json").read_text())
    assert len(written) == runs and {r["end"] for r in written} <= {"smooth", "singular", "critical"}


@pytest.mark.slow
def test_the_quick_reproduction_passes_and_writes_its_files(tmp_path):
    r = run_cli("reproduce", "training", "--quick", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    _passes_and_writes_its_files(json.loads(r.stdout), tmp_path, 21)


def test_the_quick_reproductions_first_seed_passes_through_the_command_line(tmp_path, monkeypatch, capsys):
    """``reproduce training --quick`` run in this process on the quick plan's first seed (9 of its 21 runs, the
    same sizes and steps): real training, every check passing, every file written (the slow test above: all 21)."""
    from ag_attention._cli import main
    from ag_attention._reproduce import training as module

    first = module.Plan(tuple((arch, sizes, seeds[:1], steps) for arch, sizes, seeds, steps in module.QUICK.runs), 250)
    assert first.record_every == module.QUICK.record_every
    monkeypatch.setattr(module, "QUICK", first)
    status = main(["reproduce", "training", "--quick", "--out", str(tmp_path), "--json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    _passes_and_writes_its_files(json.loads(out.out), tmp_path, 9)


def test_a_check_fails_when_its_claim_is_false(monkeypatch):
    """The critical-teacher check compares the distance at the end with the start: runs that move away from the
    critical pairs fail it (the claim is not built to pass)."""
    import numpy as np

    from ag_attention import Architecture
    from ag_attention._point.training import Record, TrainingRun
    from ag_attention._reproduce import training as module

    arch = Architecture((3, 2), (3,), tokens=2)

    def away(arch, teacher, samples, *, seed, steps, record_every):
        # the run fits the teacher (loss 1e-6 at the end) but ends farther from the critical pairs
        rec = [
            Record(s, loss, ((1.0, 1.0, 1.0),), ((1.0, 1.0),), 0.1, 14, d)
            for s, loss, d in ((0, 1.0, 0.1), (9, 1e-6, 0.5))
        ]
        return TrainingRun(arch, teacher, samples, seed, steps, 14, tuple(rec), "smooth", 0.0, np.zeros(15))

    monkeypatch.setattr(module, "train", away)
    report = module.reproduce_training(plan=module.Plan(((arch, (30,), (0,), 9),), 9))
    (check,) = [c for c in report.checks if c.claim.startswith("critical teacher")]
    assert not check.passed and check.observed == "0 of 1" and not report.passed


def test_the_trajectory_figure_counts_the_runs_it_draws(tmp_path, monkeypatch):
    """The figure of the reproduction (PNG, PDF and SVG): a legend entry per teacher counting the runs drawn (the
    one-layer runs with the most data), none for a teacher without runs, one line per run in every panel;
    integer ticks on the steps; math as mathtext."""
    import re
    from collections import Counter

    import numpy as np

    from ag_attention import Architecture
    from ag_attention._point.training import Record, TrainingRun
    from ag_attention._reproduce import training as module

    arch = Architecture((3, 2), (3,), tokens=2)
    other = Architecture((2, 2), (2,), tokens=2)  # a second one-layer architecture: not drawn under arch's title

    def fake(arch, teacher, samples, *, seed, steps, record_every):
        rec = tuple(
            Record(s, 1.0 / (s + 1), ((1.0, 0.5, 0.1),), ((1.0, 1.0),), 0.1 / (s + 1), 14, 0.5 / (s + 1))
            for s in range(4)
        )
        return TrainingRun(arch, teacher, samples, seed, steps, 14, rec, "smooth", 0.0, np.zeros(15))

    figures = []
    save = module.save_figure
    monkeypatch.setattr(module, "train", fake)
    monkeypatch.setattr(module, "TEACHERS", ("generic", "critical"))  # no rank-one teacher: no entry for it
    monkeypatch.setattr(module, "save_figure", lambda fig, path: figures.append(fig) or save(fig, path))
    report = module.reproduce_training(
        tmp_path, plan=module.Plan(((arch, (5, 30), (0, 1), 3), (other, (30,), (0, 1), 3)), 1)
    )
    assert report.meta["figures"] == ["training.png", "training.pdf", "training.svg"]
    heads = {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<?xml"}
    for ext, head in heads.items():
        assert (tmp_path / f"training.{ext}").read_bytes().startswith(head), ext
    (fig,) = figures
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    counted = {
        m.group(1): int(m.group(2)) for m in (re.fullmatch(r"(.*) teacher \((\d+) runs?\)", t) for t in labels) if m
    }
    assert counted == {"generic": 2, "critical": 2} and len(labels) == 2  # N = 30 only, 2 seeds each
    for ax in fig.axes:
        drawn = Counter(
            str(line.get_gid()).split(":")[1] for line in ax.get_lines() if str(line.get_gid()).startswith("run:")
        )
        assert drawn == counted
        ticks = [t.get_text().replace("\N{MINUS SIGN}", "-") for t in ax.get_xticklabels() if t.get_text()]
        assert len(ticks) >= 2 and all(re.fullmatch(r"-?\d+", t) for t in ticks), ticks
    outside_math = re.sub(r"\$[^$]*\$", "", fig.get_suptitle() + " ".join(ax.get_ylabel() for ax in fig.axes))
    assert not re.search(r"\^|_|\bt=\d|widths \d", outside_math), outside_math
    assert fig.get_suptitle().endswith(".")
