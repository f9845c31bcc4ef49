"""`ag-attention reproduce training --quick` (ag_attention._reproduce.training): the runs, the checks, the figure."""

from __future__ import annotations

import json

from tests.helpers import run_cli


def test_the_quick_reproduction_passes_and_writes_its_files(tmp_path):
    r = run_cli("reproduce", "training", "--quick", "--out", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["passed"] and d["meta"]["runs"] == 21
    names = {c["claim"] for c in d["checks"]}
    assert any(n.startswith("gradient descent with backtracking never increases") for n in names)
    assert any(n.startswith("critical teacher, enough data") for n in names)
    (table,) = [t for t in d["tables"] if t["title"] == "Where the runs end"]
    assert sum(row[3] for row in table["rows"]) == 21
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "report.md", "runs.json", "training.pdf",
                                                          "training.png", "training.svg"]
    runs = json.loads((tmp_path / "runs.json").read_text())
    assert len(runs) == 21 and {r["end"] for r in runs} <= {"smooth", "singular", "critical"}


def test_a_check_fails_when_its_claim_is_false(monkeypatch):
    """The critical-teacher check compares the distance at the end with the start: runs that move away from the
    critical pairs fail it (the claim is not built to pass)."""
    import numpy as np

    from ag_attention import Architecture
    from ag_attention._point.training import Record, TrainingRun
    from ag_attention._reproduce import training as module

    arch = Architecture((3, 2), (3,), tokens=2)

    def away(arch, teacher, samples, *, seed, steps, record_every):
        rec = [Record(s, 1.0 / (s + 1), ((1.0, 1.0, 1.0),), ((1.0, 1.0),), 0.1, 14, d) for s, d in ((0, 0.1), (9, 0.5))]
        return TrainingRun(arch, teacher, samples, seed, steps, 14, tuple(rec), "smooth", 0.0, np.zeros(15))

    monkeypatch.setattr(module, "train", away)
    report = module.reproduce_training(plan=module.Plan(((arch, (30,), (0,), 9),), 9))
    (check,) = [c for c in report.checks if c.claim.startswith("critical teacher")]
    assert not check.passed and check.observed == "0 of 1" and not report.passed
