"""Figures for papers and talks (ag_attention/_figures.py, issue 47 item 6): every figure kind the package draws,
from small real inputs, is large enough, clips no text, has a legend entry for every dashed or dotted line, and is
written as PNG, PDF and SVG."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from ag_attention import OutputError  # noqa: E402
from ag_attention._figures import FORMATS, MIN_INCHES, at_least, integer_ticks, wrap, write_figure  # noqa: E402
from tests.helpers import assert_vector_files, figure_defects, png_pixels  # noqa: E402


def _small() -> Figure:
    fig = Figure(figsize=(2, 1.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([1, 2, 3], [1, 4, 9], ls="--", label="squares")
    ax.legend()
    ax.set_xlabel("index")
    ax.set_ylabel("value")
    return fig


def test_at_least_enlarges_and_never_shrinks() -> None:
    fig = at_least(_small())
    assert tuple(fig.get_size_inches()) == MIN_INCHES
    big = Figure(figsize=(9, 2))
    assert tuple(at_least(big).get_size_inches()) == (9, MIN_INCHES[1])


def test_wrap_fits_the_width_and_never_breaks_a_formula() -> None:
    text = "the effective rank of $A_h / d_h$ over every head of every layer, " * 3
    lines = wrap(text, 3.0, 10).split("\n")
    assert len(lines) > 1 and all(len(line) <= 36 for line in lines)  # 3 in at 10 pt: 36 characters
    assert all(line.count("$") % 2 == 0 for line in lines) and "$A_h / d_h$" in wrap(text, 1.0, 10)
    assert wrap("first\nsecond", 8.0) == "first\nsecond"


def test_integer_ticks_even_on_a_view_without_two_integers() -> None:
    fig = _small()
    ax = fig.axes[0]
    ax.set_xlim(2.9, 3.1)
    integer_ticks(ax, "x")
    fig.canvas.draw()
    ticks = [t.get_text().replace("\N{MINUS SIGN}", "-") for t in ax.get_xticklabels() if t.get_text()]
    assert len(ticks) >= 2 and all(re.fullmatch(r"-?\d+", t) for t in ticks), ticks


def test_write_figure_writes_each_format_atomically_and_refuses_others(tmp_path: Path) -> None:
    fig = at_least(_small())
    for fmt in FORMATS:
        assert write_figure(fig, tmp_path / f"f.{fmt}") == tmp_path / f"f.{fmt}"
    width, height = png_pixels(tmp_path / "f.png")
    assert (width, height) == (600, 450)  # 4 x 3 inches at 150 dpi
    assert_vector_files(tmp_path / "f.pdf", tmp_path / "f.svg")
    vectors = [(tmp_path / f"f.{fmt}").read_bytes() for fmt in ("pdf", "svg")]
    for fmt in ("pdf", "svg"):  # the same figure, the same bytes (no date, no random ids)
        write_figure(fig, tmp_path / f"f.{fmt}")
    assert [(tmp_path / f"f.{fmt}").read_bytes() for fmt in ("pdf", "svg")] == vectors
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png", "f.svg"]  # no temporary left
    with pytest.raises(ValueError, match=r"f\.jpeg: a figure is written as \.png, \.pdf, \.svg"):
        write_figure(fig, tmp_path / "f.jpeg")
    (tmp_path / "target").write_text("keep")
    (tmp_path / "link.svg").symlink_to(tmp_path / "target")
    write_figure(fig, tmp_path / "link.svg")  # the link replaced, never written through
    assert (tmp_path / "target").read_text() == "keep" and not (tmp_path / "link.svg").is_symlink()
    with pytest.raises(OutputError, match="nodir"):
        write_figure(fig, tmp_path / "nodir" / "f.png")


def test_the_checks_can_fail() -> None:
    """figure_defects finds a small figure, a clipped title, an unlabelled axis and a dashed line not in a legend."""
    fig = Figure(figsize=(3, 2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], ls=":")
    ax.set_title("a title far too long to fit the width of a figure three inches wide, clipped at both ends")
    found = " | ".join(figure_defects(fig))
    assert "size 3.00 x 2.00 in" in found and "outside the 300 x 200 canvas" in found
    assert "no x label" in found and "no y label" in found and "has no legend entry" in found
