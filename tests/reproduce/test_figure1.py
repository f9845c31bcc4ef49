"""Figure 1 (ag_attention._reproduce.figure1): the slice's claims, checked even under ``python -O``, and the picture."""

import os
import re
import subprocess
import sys

import numpy as np

from ag_attention._reproduce.figure1 import draw_figure1, render_figure1, verify_slice
from ag_attention._reproduce.report import FIGURE_FORMATS
from tests.helpers import ROOT, lazy_import

plt = lazy_import("matplotlib.pyplot")


def test_figure1_checks_survive_python_O():
    """``verify_slice`` raises ComputationError on a wrong claim even under ``python -O`` (no bare assert)."""
    code = (
        "from ag_attention._reproduce import figure1\n"
        "figure1.F = lambda x, y, w: 1\n"
        "from ag_attention._errors import ComputationError\n"
        "try:\n    figure1.verify_slice()\nexcept ComputationError as e:\n    print('refused:', e)\n"
    )
    r = subprocess.run(
        [sys.executable, "-O", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0 and "refused: Figure 1 check failed" in r.stdout, r.stderr


def test_figure1_claims_and_png(tmp_path):
    facts = verify_slice()
    assert facts["fibers on the singular line y -> (preimages, real preimages)"]["0"] == (2, 0)
    path = render_figure1(tmp_path / "figure1.png", resolution=40)
    assert path.stat().st_size > 20000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _assert_figure_files(directory, stem):
    heads = {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<?xml"}
    for ext in FIGURE_FORMATS:
        assert (directory / f"{stem}.{ext}").read_bytes()[:5].startswith(heads[ext]), ext


def _outside_math(text):
    """``text`` without its ``$...$`` parts (mathtext)."""
    return re.sub(r"\$[^$]*\$", "", text)


def _math_as_text(fig):
    """Texts of ``fig`` that type math as plain text (``sqrt(``, ``u v^T``, ``c4``, ``q1``) outside ``$...$``."""
    fig.canvas.draw()
    texts = [t.get_text() for t in fig.findobj(lazy_import("matplotlib.text").Text)]
    return [t for t in texts if re.search(r"\^|_|sqrt|\b[cq]\d", _outside_math(t))]


def _hue(rgb):
    """A colour up to its shade (the sheets are one colour each, shaded by a factor)."""
    rgb = np.asarray(rgb[:3], dtype=float)
    return tuple(np.round(rgb / rgb.max(), 2))


def test_figure_1_legend_names_every_surface_and_the_title_no_function(tmp_path):
    fig = draw_figure1(resolution=20)
    try:
        ax = fig.axes[0]
        legend = ax.get_legend()
        texts = [t.get_text() for t in legend.get_texts()]
        assert "verify_slice" not in ax.get_title() and "figure1" not in ax.get_title()
        assert ax.get_title().rstrip().endswith(".")  # a sentence
        assert not [t for t in texts if re.search(r"\(0[ )]", t)]  # no empty entry
        # the sheets: one opaque collection (sorted by depth together, not blended), one colour per legend entry
        (surface,) = [c for c in ax.collections if c.get_gid() == "sheets"]
        drawn = {_hue(c) for c in surface.get_facecolor()}
        sheets = [h for h, t in zip(legend.legend_handles, texts) if "sheet:" in t]
        assert len(sheets) == 2 and drawn == {_hue(h.get_facecolor()) for h in sheets}
        assert surface.get_alpha() in (None, 1.0) and {c[3] for c in surface.get_facecolor()} == {1.0}
        # the boundary points: as many as the legend says
        (points,) = [c for c in ax.collections if c.get_label().startswith("the two boundary points")]
        assert len(points.get_offsets()) == 2
        assert _math_as_text(fig) == []
    finally:
        plt.close(fig)
    path = render_figure1(tmp_path / "figure1.png", resolution=20)
    assert path.name == "figure1.png"
    _assert_figure_files(tmp_path, "figure1")
