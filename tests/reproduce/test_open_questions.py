"""``reproduce_open_questions``: the quick grids, its files, its counterexamples and its open cases."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers import skip_unless_installed

skip_unless_installed("pyarrow", "matplotlib")

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
    for _, e in counter:
        assert e["certificate"] is not None and e["computed"] != e["predicted"]
    c, e = next((c, e) for c, e in counter if c["key"] == "skip-translate")
    s = e["spec"]
    r = dimension(
        Architecture(
            tuple(s["widths"]),
            tuple(s["ranks"]),
            tokens=s["tokens"],
            heads=s["heads"],
            skip=s["skip"],
            causal=s["causal"],
        )
    )
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


def _dot_lines(ax: Any) -> dict[tuple[str, int, int], Any]:
    """The lines of certified dots by (outcome, heads, tokens), from their gids."""
    out = {}
    for line in ax.get_lines():
        m = re.fullmatch(r"(holds|counterexamples):heads=(\d+):tokens=(\d+)", str(line.get_gid()))
        if m:
            out[(m.group(1), int(m.group(2)), int(m.group(3)))] = line
    return out


def _network(e: dict[str, Any]) -> tuple[int, int]:
    return e["spec"]["heads"], e["spec"]["tokens"]


def _outside_math(text: str) -> str:
    return re.sub(r"\$[^$]*\$", "", text)


def _check_panels(fig: Any, comparisons: list[dict[str, Any]]) -> None:
    """Each panel against its comparison: legend counts, dots, markers, ticks, titles (see the test below)."""
    fig.canvas.draw()
    markers: dict[tuple[int, int], set[str]] = {}
    for ax, c in zip(fig.axes, comparisons):
        legend = ax.get_legend()
        labels = [t.get_text() for t in legend.get_texts()] if legend else []
        assert not [t for t in labels if re.search(r"\(0[ )]", t)], labels  # no empty entry
        lines = _dot_lines(ax)
        for kind, name in (("holds", "certified, holds"), ("counterexamples", "certified, counterexample")):
            entries = [t for t in labels if t.startswith(name)]
            mine = {k: line for k, line in lines.items() if k[0] == kind}
            if not c[kind]:
                assert entries == [] and mine == {}
                continue
            (entry,) = entries
            assert _count(entry) == len(c[kind]) == sum(len(line.get_xydata()) for line in mine.values()), entry
            for (_, heads, tokens), line in mine.items():
                cases = [e for e in c[kind] if _network(e) == (heads, tokens)]
                xy = line.get_xydata()
                assert len(xy) == len(cases) and len({tuple(p) for p in xy}) == len(xy), "dots hide each other"
                note = " ".join(ax.texts[-1].get_text().split())
                a = float(re.search(r"jittered by at most ([\d.]+) ", note).group(1)) * 1.01  # as the note says
                for (x, y), e in zip(xy, cases):  # each dot near its values
                    assert abs(x - e["predicted"]) <= a and abs(y - e["computed"]) <= a
                markers.setdefault((heads, tokens), set()).add(line.get_marker())
        # heads and tokens told apart: a legend entry per (H, t) counting its dots
        for t in labels:
            m = re.fullmatch(r"\$H = (\d+)\$ heads?, \$t = (\d+)\$ tokens? \((\d+)\)", t)
            if m:
                key = (int(m.group(1)), int(m.group(2)))
                cases = [e for k in ("holds", "counterexamples") for e in c[k] if _network(e) == key]
                assert (
                    int(m.group(3))
                    == len(cases)
                    == sum(len(line.get_xydata()) for k, line in lines.items() if k[1:] == key)
                    > 0
                ), t
        assert len([t for t in labels if t.startswith("$H = ")]) == len(
            {_network(e) for k in ("holds", "counterexamples") for e in c[k]}
        )
        # integer axes, integer ticks; a sentence for a title, not the conjecture's key; no math typed as text
        for axis in (ax.xaxis, ax.yaxis):
            ticks = [t.get_text().replace("\N{MINUS SIGN}", "-") for t in axis.get_ticklabels() if t.get_text()]
            assert ticks and all(re.fullmatch(r"-?\d+", t) for t in ticks), ticks
        assert c["key"] not in ax.get_title() and ax.get_title().endswith(".")
        assert not re.search(r"\^|_|\bH = ", _outside_math(ax.get_title() + " ".join(labels)))
    assert all(len(m) == 1 for m in markers.values())  # one marker per network...
    assert len({m for ms in markers.values() for m in ms}) == len(markers)  # ...and a different one for each
    assert "Open question" in fig.get_suptitle() and fig.get_suptitle().endswith(".")


def test_the_figures_show_every_certified_case_as_its_own_dot(run: tuple[Any, Path]) -> None:
    """Equal (predicted, computed) pairs are jittered apart (seeded): as many dots as the legend counts, told
    apart by outcome (colour and fill) and by heads and tokens (marker); no empty legend entry; integer ticks."""
    _, out = run
    comparisons = _comparisons(out)
    for v in VARIANTS:
        mine = [c for c in comparisons if c["variant"] == v.name]
        fig = comparison_figure(v, mine)
        try:
            _check_panels(fig, mine)
            for ax, c in zip(fig.axes, mine):
                note = " ".join(ax.texts[-1].get_text().split())
                if c["not_applicable"]:
                    assert f"not shown: {len(c['not_applicable'])} not applicable" in note, note
            again = comparison_figure(v, mine)  # seeded: the same picture every time
            assert all(
                np.array_equal(a.get_xydata(), b.get_xydata())
                for ax1, ax2 in zip(fig.axes, again.axes)
                for a, b in zip(ax1.get_lines(), ax2.get_lines())
            )
        finally:
            close_figures()


def test_a_small_panel_has_integer_ticks_and_no_empty_entry() -> None:
    """Dimensions 1 and 2 only (a default locator ticks 1.2, 1.4...), no counterexample (no '(0)' entry), two
    networks told apart."""

    def case(heads: int, tokens: int, value: int) -> dict[str, Any]:
        spec = {"widths": [1, 1], "ranks": [1], "tokens": tokens, "heads": heads, "skip": False, "causal": False}
        return {
            "architecture": f"H={heads} t={tokens}",
            "spec": spec,
            "predicted": value,
            "computed": value,
            "lower": value,
            "upper": value,
            "certificate": "sweep: analytic-bound",
        }

    c = {
        "key": "heads-symmetry",
        "variant": "heads",
        "statement": "dim = P - S",
        "holds": [case(2, 2, 1), case(3, 2, 2)],
        "counterexamples": [],
        "open": [],
        "refuted_by_bounds": [],
        "not_applicable": [],
    }
    (heads,) = [v for v in VARIANTS if v.name == "heads"]
    fig = comparison_figure(heads, [c])
    try:
        _check_panels(fig, [c])
    finally:
        close_figures()
