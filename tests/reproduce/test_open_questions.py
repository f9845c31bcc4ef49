"""``reproduce_open_questions``: the quick grids, its files, its counterexamples and its open cases."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("matplotlib")

from ag_attention import Architecture, dimension  # noqa: E402
from ag_attention._reproduce.open_questions import (  # noqa: E402
    VARIANTS,
    certification,
    close_figures,
    comparison_figure,
    reproduce_open_questions,
)
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


def _count(label: str) -> int:
    m = re.search(r"\(([\d,]+)\)$", label)
    assert m, label
    return int(m.group(1).replace(",", ""))


def test_the_figures_show_every_certified_case_as_its_own_dot(run: tuple[Any, Path]) -> None:
    """Equal (predicted, computed) pairs are jittered apart (seeded): as many dots as the legend counts."""
    _, out = run
    comparisons = _comparisons(out)
    for v in VARIANTS:
        mine = [c for c in comparisons if c["variant"] == v.name]
        fig = comparison_figure(v, mine)
        try:
            for ax, c in zip(fig.axes, mine):
                for line in ax.get_lines():
                    label = str(line.get_label())
                    if not label.startswith("certified"):
                        continue
                    xy = line.get_xydata()
                    kind = "holds" if "holds" in label else "counterexamples"
                    assert _count(label) == len(c[kind]) == len(xy), label
                    assert len({tuple(p) for p in xy}) == len(xy), f"{c['key']}: {label}: dots hide each other"
                    note = " ".join(ax.texts[-1].get_text().split())
                    a = float(re.search(r"jittered by at most ([\d.]+) ", note).group(1)) * 1.01  # as the note says
                    for (x, y), e in zip(xy, c[kind]):  # each dot near its values
                        assert abs(x - e["predicted"]) <= a and abs(y - e["computed"]) <= a
                note = " ".join(ax.texts[-1].get_text().split())
                if c["not_applicable"]:
                    assert f"not shown: {len(c['not_applicable'])} not applicable" in note, note
            again = comparison_figure(v, mine)  # seeded: the same picture every time
            assert all(np.array_equal(a.get_xydata(), b.get_xydata())
                       for ax1, ax2 in zip(fig.axes, again.axes) for a, b in zip(ax1.get_lines(), ax2.get_lines()))
        finally:
            close_figures()
