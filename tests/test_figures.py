"""Figures for papers and talks (ag_attention/_figures.py, issue 47 item 6): every figure kind the package draws,
from small real inputs, is large enough, clips no text, has a legend entry for every dashed or dotted line, and is
written as PNG, PDF and SVG."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from ag_attention import Architecture, Network, OutputError, point_geometry
from ag_attention._figures import FORMATS, MIN_INCHES, at_least, integer_ticks, wrap, write_figure
from tests.helpers import (
    MIN_PNG_PIXELS,
    assert_vector_files,
    figure_defects,
    generator,
    lazy_import,
    png_pixels,
    seed,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

if importlib.util.find_spec("matplotlib") is None:
    pytest.skip("could not import 'matplotlib'", allow_module_level=True)
# imported by the first test that draws (not while pytest collects)
agg = lazy_import("matplotlib.backends.backend_agg")
mpl_figure = lazy_import("matplotlib.figure")


def _small() -> Figure:
    fig = mpl_figure.Figure(figsize=(2, 1.5), layout="constrained")
    agg.FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([1, 2, 3], [1, 4, 9], ls="--", label="squares")
    ax.legend()
    ax.set_xlabel("index")
    ax.set_ylabel("value")
    return fig


def test_at_least_enlarges_and_never_shrinks() -> None:
    fig = at_least(_small())
    assert tuple(fig.get_size_inches()) == MIN_INCHES
    big = mpl_figure.Figure(figsize=(9, 2))
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
    fig = mpl_figure.Figure(figsize=(3, 2))
    agg.FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], ls=":")
    ax.set_title("a title far too long to fit the width of a figure three inches wide, clipped at both ends")
    found = " | ".join(figure_defects(fig))
    assert "size 3.00 x 2.00 in" in found and "outside the 300 x 200 canvas" in found
    assert "no x label" in found and "no y label" in found and "has no legend entry" in found


# ------------------------------------------------------------------ every figure kind, from small real inputs
def _grouped(rng: np.random.Generator, width: int, heads: int):
    from ag_attention._point.grouped import GroupedLayer

    d = width // heads
    Q, K, Wo, Wv = (rng.standard_normal((width, width)) for _ in range(4))
    rows = [slice(h * d, (h + 1) * d) for h in range(heads)]
    return GroupedLayer(
        tuple(Q[r] for r in rows), tuple(Wo[:, r] for r in rows), tuple(K[r] for r in rows), tuple(Wv[r] for r in rows)
    )


def _spectrum():
    from ag_attention._point.plot import spectrum_figure

    w = {"layers.0.heads.0.A": np.diag([0.41, 3.2e-5]), "layers.0.heads.0.V": np.eye(2)}
    return spectrum_figure(point_geometry(Network.from_weights(w), numerical=True))


def _heads(layers: int, width: int, heads: int):
    def build():
        from ag_attention._point.heads import head_table
        from ag_attention._point.plot import heads_figure

        rng = generator(47)
        return heads_figure(head_table([_grouped(rng, width, heads) for _ in range(layers)], normalized=False))

    return build


def _figure1():
    from ag_attention._reproduce.figure1 import draw_figure1

    return draw_figure1(resolution=12)


def _figure3():
    from ag_attention._reproduce.figure3 import draw_figure3

    rows = [
        {"delta": d, "normalized": n, "estimated": e, "expected": x, "certified": e is not None}
        for d, n, e, x in ((3, True, 25, 25), (3, False, 23, 23), (4, True, None, 40), (4, False, 38, 38))
    ]
    return draw_figure3(rows, samples=60)


def _training():
    from ag_attention._point.training import train
    from ag_attention._reproduce.training import training_figure

    arch = Architecture((3, 2), (3,), tokens=2)
    runs = [
        train(arch, teacher, 8, seed=seed(s), steps=12, record_every=4)
        for teacher in ("generic", "rank-one A", "critical")
        for s in (0, 1)
    ]
    return training_figure(runs)


def _icl():
    from ag_attention._reproduce.icl import Setting, icl_figure
    from ag_attention._reproduce.icl_dynamics import make_task, train

    setting = Setting(D=2, N=5, train=64, test=64, heads_merged=2, heads_separate=(2, 1), seeds=(seed(),))
    task = make_task(2, 5, 64, 64, seed())
    runs = [
        train(task, "merged", 2, 1e-3, 0.1, 30, seed()),
        train(task, "separate", 2, 1e-2, 0.3, 30, seed()),
        train(task, "separate", 1, 1e-2, 0.3, 30, seed()),
    ]
    return icl_figure(runs, setting)


def _landscape():
    from ag_attention._reproduce.landscape_data import DataSet, draw_data_figure

    # two data sets as the reproduction reports them: critical points, minima, where the gradient descents ended
    sets = [DataSet(0, 12, 4, 2, 2, 0, 1.0, [5, 3], 1, 1), DataSet(1, 12, 6, 3, 3, 0, 1.0, [6, 2, 1], 1, 0)]
    return draw_data_figure(sets)


def _open_questions():
    from ag_attention._reproduce.open_questions import VARIANTS, comparison_figure

    def case(heads: int, tokens: int, value: int, computed: int) -> dict:
        spec = {"widths": [1, 1], "ranks": [1], "tokens": tokens, "heads": heads, "skip": False, "causal": False}
        return {
            "architecture": f"H={heads} t={tokens}",
            "spec": spec,
            "predicted": value,
            "computed": computed,
            "lower": computed,
            "upper": computed,
            "certificate": "sweep: analytic-bound",
        }

    c = {
        "key": "heads-symmetry",
        "variant": "heads",
        "statement": "dim = P - S",
        "holds": [case(2, 2, 1, 1), case(3, 2, 2, 2)],
        "counterexamples": [case(2, 3, 3, 2)],
        "open": [],
        "refuted_by_bounds": [],
        "not_applicable": [],
    }
    (heads,) = [v for v in VARIANTS if v.name == "heads"]
    return comparison_figure(heads, [c])


def _sweep():
    from ag_attention._sweep.compute import compute_row
    from ag_attention._sweep.grid import Spec
    from ag_attention._sweep.summary import plot_figure

    specs = [Spec((4, 4, 4), (2, 2), 3), Spec((3, 1), (3,), 1), Spec((2, 2), (2,), 2, heads=2)]
    made = plot_figure([compute_row(s, 2**31 - 1, 0) for s in specs], title="three rows")
    assert not isinstance(made, str), made
    return made[0]


KINDS = {
    "point spectrum": _spectrum,
    "point per-head, one head": _heads(1, 2, 1),
    "point per-head, 3 layers x 4 heads": _heads(3, 8, 4),
    "reproduce figure1": _figure1,
    "reproduce figure3": _figure3,
    "reproduce training": _training,
    "reproduce icl": _icl,
    "reproduce landscape": _landscape,
    "reproduce open questions": _open_questions,
    "sweep summary": _sweep,
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_figure_kind_is_readable_and_written_as_png_pdf_and_svg(kind: str, tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = KINDS[kind]()
    try:
        assert figure_defects(fig) == []
        paths = [write_figure(fig, tmp_path / f"figure.{fmt}") for fmt in FORMATS]
    finally:
        plt.close(fig)  # a pyplot figure (reproduce's); nothing for the others
    width, height = png_pixels(paths[0])
    assert width >= MIN_PNG_PIXELS[0] and height >= MIN_PNG_PIXELS[1], (width, height)
    assert_vector_files(*paths[1:])


def test_the_spectrums_index_axes_have_integer_ticks_and_each_rtol_line_an_entry() -> None:
    """The audit: the right panel had ticks at 1.2, 1.4... and two unlabelled dashed lines."""
    fig = _spectrum()
    fig.canvas.draw()
    assert len(fig.axes) == 2
    for ax in fig.axes:
        ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert ticks and all(re.fullmatch(r"\d+", t) for t in ticks), ticks
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert [x for x in labels if x.startswith("rtol")] == ["rtol 0.001 x $s_1(A)$", "rtol 0.001 x $s_1(V)$"]
