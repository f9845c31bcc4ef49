"""``reproduce_open_questions``: the quick grids, its files, its counterexamples and its open cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("matplotlib")

from ag_attention import Architecture, dimension  # noqa: E402
from ag_attention._reproduce.open_questions import VARIANTS, certification, reproduce_open_questions  # noqa: E402
from ag_attention._sweep import read_rows  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    out = tmp_path_factory.mktemp("open-questions")
    return reproduce_open_questions(out, quick=True, workers=2), out


def _comparisons(out: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((out / "open-questions.json").read_text())["comparisons"]
    return data


def test_files_and_checks(run: tuple[Any, Path]) -> None:
    report, out = run
    assert report.passed, report.failures
    for name in ("report.md", "report.json", "open-questions.json"):
        assert (out / name).is_file()
    for v in VARIANTS:
        for ext in ("png", "pdf", "svg"):
            assert (out / f"open-questions-{v.name}.{ext}").stat().st_size > 0
        assert (out / "sweeps" / Path(v.quick_grid).stem / "results.parquet").is_file()
    data = json.loads((out / "report.json").read_text())
    assert data["passed"] and data["meta"]["quick"] is True
    assert set(data["meta"]["grids"]) == {v.name for v in VARIANTS}
    assert len(report.findings) == len(_comparisons(out))
    assert all("supported on" in f and "counterexample" in f for f in report.findings)
    assert "proven" not in " ".join(report.findings)


def test_counterexamples_are_certified_disagreements(run: tuple[Any, Path]) -> None:
    _, out = run
    counter = [(c, e) for c in _comparisons(out) for e in c["counterexamples"]]
    assert counter, "the quick grids have counterexamples (skip connections)"
    for c, e in counter:
        assert e["certificate"] is not None and e["computed"] != e["predicted"]
    c, e = next((c, e) for c, e in counter if c["key"] == "skip-translate")
    s = e["spec"]
    r = dimension(Architecture(tuple(s["widths"]), tuple(s["ranks"]), tokens=s["tokens"], heads=s["heads"],
                               skip=s["skip"], causal=s["causal"]))
    assert r.certified and r.dimension == e["computed"] != e["predicted"]
    plain = dimension(Architecture(tuple(s["widths"]), tuple(s["ranks"]), tokens=s["tokens"]))
    assert plain.certified and plain.dimension == e["predicted"]


def test_uncertified_rows_are_open_not_evidence(run: tuple[Any, Path]) -> None:
    _, out = run
    rows = read_rows(out / "sweeps" / "open-heads-quick" / "results.parquet")
    # the bounds of docs/math/bounds.md certify every row of the quick grids: nothing is left open
    uncertified = [r for r in rows if r["heads"] >= 2 and certification(r) is None]
    assert uncertified == []
    symmetry = next(c for c in _comparisons(out) if c["key"] == "heads-symmetry")
    assert symmetry["open"] == [] and symmetry["holds"] + symmetry["counterexamples"]
    for c in _comparisons(out):
        assert all(e["certificate"] is not None for e in c["holds"] + c["counterexamples"])
