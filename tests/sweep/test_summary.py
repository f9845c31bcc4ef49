"""What a sweep found (ag_attention._sweep.summary): counts per variant, Markdown, JSON and the plot."""

import json
import re
import sys

import numpy as np
import pytest

from ag_attention import _progress as progress
from ag_attention._sweep.compute import compute_row
from ag_attention._sweep.grid import Spec
from ag_attention._sweep.summary import (
    COUNTS,
    OKABE_ITO,
    markdown,
    plot,
    plot_figure,
    summarize,
    variant,
    write_summary,
)
from tests.helpers import Terminal, assert_vector_files

P = 2**31 - 1


@pytest.fixture(scope="module")
def rows():
    specs = [
        Spec((4, 4, 4), (2, 2), 3),  # Cor. 3.8 applies and agrees
        Spec((4, 2, 4, 4), (2, 2, 2), 2),  # the paper's hypotheses hold, but the formula is proven wrong (29 < 37)
        Spec((2, 3, 3), (2, 2), 2),  # a hidden layer wider than the input: Cor. 3.8 on the effective widths
        Spec((3, 1), (3,), 1),  # one token: t >= 2 fails
        Spec((3, 2), (2,), 3, normalized=True),  # Thm. 3.9 in float64, certified by balls
        Spec((2, 2), (2,), 2, heads=2),  # no formula
    ]
    return [compute_row(s, P, 0) for s in specs]


def test_variant_names():
    base = {"normalized": False, "tokens": 2, "depth": 3, "heads": 1, "skip": False, "causal": False}
    assert variant(base) == "lightning, t=2, L=3"
    assert variant({**base, "normalized": True, "heads": 2, "skip": True, "causal": True}) == (
        "normalized, t=2, L=3, heads=2, skip, causal"
    )


def test_counts_per_variant_and_in_total(rows):
    s = summarize(rows, info={"grid": "g.toml", "seed": 0})
    assert (s["grid"], s["seed"]) == ("g.toml", 0) and list(s["total"]) == list(COUNTS)
    t = s["total"]
    assert (t["rows"], t["errors"], t["with_formula"]) == (6, 0, 5)
    assert t["certified"] == sum(r["certified"] for r in rows) >= 5
    assert (t["formula_applies"], t["applies_agrees"], t["applies_differs"], t["applies_undecided"]) == (2, 2, 0, 0)
    assert (t["paper_hypotheses_hold"], t["paper_agrees"], t["paper_proven_wrong"]) == (4, 2, 2)
    by_name = {v["variant"]: v for v in s["variants"]}
    deep = by_name["lightning, t=2, L=2"]
    assert deep["rows"] == 1 and deep["effective_eligible"] == deep["effective_agrees"] == 1
    assert deep["by_failed"] == [
        {
            "failed_hypotheses": ["no hidden layer wider than an earlier one (d_0 >= ... >= d_{L-1})"],
            "rows": 1,
            "agrees": 0,
            "differs": 1,
            "undecided": 0,
            "errors": 0,
        }
    ]
    assert by_name["lightning, t=1, L=1"]["certificate_kinds"] == {"analytic-bound": 1}
    assert by_name["normalized, t=3, L=1"]["formula"] == "Thm. 3.9"
    assert by_name["lightning, t=2, L=1, heads=2"]["formula"] is None
    # variants in the order lightning before normalized, then heads, tokens, depth
    names = [v["variant"] for v in s["variants"]]
    assert names.index("lightning, t=2, L=1, heads=2") > names.index("lightning, t=3, L=2")
    assert names[-1] == "normalized, t=3, L=1"
    assert sum(v["rows"] for v in s["variants"]) == 6


def test_errors_are_counted_not_compared(rows):
    failed = {
        **rows[0],
        "dimension": None,
        "agrees": None,
        "certified": False,
        "certificate_kind": "error",
        "error": "InsufficientMemoryError: too large",
    }
    s = summarize([failed])
    assert (s["total"]["errors"], s["total"]["applies_agrees"], s["total"]["applies_undecided"]) == (1, 0, 1)
    assert s["variants"][0]["by_failed"][0]["errors"] == 1 and s["variants"][0]["by_failed"][0]["undecided"] == 0


def test_markdown(rows):
    s = summarize(rows, info={"description": "a test grid", "grid": "g.toml", "prime": P, "seed": 0})
    md = markdown(s)
    certified = s["total"]["certified"]
    assert md.startswith(
        f"# Sweep summary\n\na test grid\n\n6 architectures; {certified} certified exact; grid g.toml; "
    )
    assert "| variant | rows | certified | formula | applies |" in md and f"| **all** | 6 | {certified} |" in md
    assert "## lightning, t=2, L=2: which hypotheses fail (Cor. 3.8)" in md
    assert "| none (the formula applies) | 1 | 1 | 0 | 0 | 0 |" in md
    assert "## lightning" not in markdown(s, details=False)
    one = markdown(summarize(rows[:1]))
    assert "**all**" not in one and "1 architectures; 1 certified exact." in one


def test_plot_and_its_absence(rows, tmp_path):
    pytest.importorskip("matplotlib")
    assert plot(rows, tmp_path, title="t") == [
        "dimension-vs-formula.png",
        "dimension-vs-formula.pdf",
        "dimension-vs-formula.svg",
    ]
    assert (tmp_path / "dimension-vs-formula.png").read_bytes()[:4] == b"\x89PNG"
    assert_vector_files(tmp_path / "dimension-vs-formula.pdf", tmp_path / "dimension-vs-formula.svg")
    failed = {**rows[0], "dimension": None, "error": "InsufficientMemoryError: too large"}
    assert plot([failed], tmp_path) == (
        "no plot: no row has a dimension (left out: 1 row without a dimension (its computation failed))"
    )


def test_write_summary(rows, tmp_path):
    s = write_summary(rows, tmp_path, info={"grid": "g.toml"}, plots=False)
    assert s["plot_note"] == "plots not requested" and "plots" not in s
    assert json.loads((tmp_path / "summary.json").read_text()) == s
    assert (tmp_path / "summary.md").read_text() == markdown(s)
    assert "plots not requested" in (tmp_path / "summary.md").read_text()
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob("*.png"))


# ------------------------------------------------------------------ the plot shows every row (issue 20, 1a)
def _counts(labels):
    """``{"lightning, 2 heads": 75, ...}`` from legend texts ``"lightning, 2 heads (75)"``."""
    out = {}
    for label in labels:
        m = re.fullmatch(r"(.*) \(([\d,]+)\)", label)
        if m:
            out[m.group(1)] = int(m.group(2).replace(",", ""))
    return out


def _legends(fig):
    """The figure's legends: the one of the markers (variants) and the one of the colours (status)."""
    return [_counts(t.get_text() for t in legend.get_texts()) for legend in fig.legends]


def _points(fig):
    return np.concatenate([c.get_offsets() for ax in fig.axes for c in ax.collections if len(c.get_offsets())])


@pytest.fixture(scope="module")
def many(rows):
    """301 rows as in the issue: each of the six rows 50 times (identical points), one of them failed."""
    out = [dict(r) for r in rows for _ in range(50)]
    failed = {
        **rows[0],
        "dimension": None,
        "agrees": None,
        "certified": False,
        "certificate_kind": "error",
        "error": "InsufficientMemoryError: too large",
    }
    return out + [failed]


def _family(row):
    parts = ["normalized" if row["normalized"] else "lightning"]
    if row["heads"] != 1:
        parts.append(f"{row['heads']} heads")
    parts += [name for name in ("skip", "causal") if row[name]]
    return ", ".join(parts)


def test_the_plot_shows_every_row_and_says_what_it_leaves_out(many):
    pytest.importorskip("matplotlib")
    fig, info = plot_figure(many, title="301 rows")
    markers, status = _legends(fig)
    shown = [r for r in many if r["dimension"] is not None]
    expected = {}
    for r in shown:
        expected[_family(r)] = expected.get(_family(r), 0) + 1
    assert markers == expected and sum(markers.values()) == 300  # the two-head rows too (no formula)
    assert sum(status.values()) == 300 and status["certified, no formula"] == 50
    assert len(_points(fig)) == 300
    note = " ".join(fig.get_supxlabel().split())
    assert "300 of 301 rows" in note and "left out: 1 row without a dimension (its computation failed)" in note
    assert info["plotted"] == 300 and info["rows"] == 301 and info["left_out"] == {"computation failed": 1}
    assert info["legend"] == {**markers, **status}


def test_identical_points_are_all_visible_and_the_jitter_is_seeded(many):
    pytest.importorskip("matplotlib")
    fig, info = plot_figure(many)
    points = _points(fig)
    assert len({tuple(p) for p in points}) == len(points) == 300  # 50 copies of each row: 50 distinct dots
    a = max(info["jitter"]["amplitudes"])
    assert 0 < a <= max(0.3, 0.012 * points.max())  # small: 0.3 units, or 1.2% of a wide axis
    exact = {
        (r["expected"] if r["expected"] is not None else r["upper_bound"], r["dimension"])
        for r in many
        if r["dimension"] is not None
    }
    for x, y in points:  # each dot within the amplitude of the value it stands for
        assert any(abs(x - ex) <= a + 1e-9 and abs(y - ey) <= a + 1e-9 for ex, ey in exact)
    again, _ = plot_figure(many)
    assert np.array_equal(_points(again), points)  # seeded: the same picture on every run


def test_the_summary_says_what_the_plot_shows(many, tmp_path):
    pytest.importorskip("matplotlib")
    s = write_summary(many, tmp_path, info={"grid": "g.toml"})
    sidecar = json.loads((tmp_path / "summary.json").read_text())["plot"]
    assert sidecar["rows"] == 301 and sidecar["plotted"] == 300 and sidecar["left_out"] == {"computation failed": 1}
    assert sum(v for k, v in sidecar["legend"].items() if not k.startswith(("certified", "not certified"))) == 300
    md = (tmp_path / "summary.md").read_text()
    assert "shows 300 of 301 rows" in md and "left out: 1 row without a dimension (its computation failed)" in md
    assert s["plots"] == ["dimension-vs-formula.png", "dimension-vs-formula.pdf", "dimension-vs-formula.svg"]


def test_the_summary_shows_its_progress_on_a_terminal(many, tmp_path, monkeypatch):
    """Counting, drawing and writing each plot are steps of a bar (a big sweep's summary takes seconds)."""
    pytest.importorskip("matplotlib")
    monkeypatch.setattr(progress, "DELAY", 0.0)  # the bar shows after 2 s; here at once
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    write_summary(many, tmp_path)
    text = err.getvalue()
    assert "sweep: summary" in text and "drawing the plot" in text and "writing dimension-vs-formula.svg" in text


def test_the_plot_is_printable_integer_ticks_sentence_titles_colour_blind_safe(many):
    """Dimensions are integers: integer ticks, even on a panel whose dots all sit at 12 (jittered by 0.3); titles
    are sentences; no legend entry counts 0 rows; every colour is the legend's, from the Okabe-Ito palette."""
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    fig, _ = plot_figure(many)
    fig.canvas.draw()
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert labels and not [t for t in labels if re.search(r"\(0[ )]", t)]
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            ticks = [t.get_text().replace("\N{MINUS SIGN}", "-") for t in axis.get_ticklabels() if t.get_text()]
            assert len(ticks) >= 2 and all(re.fullmatch(r"-?\d+", t) for t in ticks), ticks
        assert ax.get_title().endswith(".")
    assert fig.get_suptitle().endswith(".")
    status = fig.legends[1]
    legend_colours = {to_hex(h.get_color()) for h in status.legend_handles}
    drawn = {to_hex(c.get_facecolor()[0], keep_alpha=False) for ax in fig.axes for c in ax.collections}
    assert drawn == legend_colours and len(drawn) == len(status.get_texts()) == 3
    assert drawn <= {c.lower() for c in OKABE_ITO.values()} | {"#999999"}  # grey: not certified
