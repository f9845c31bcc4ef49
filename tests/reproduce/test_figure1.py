"""Figure 1 (ag_attention._reproduce.figure1): the slice's claims, checked even under ``python -O``, and the picture."""

import os
import subprocess
import sys

from ag_attention._reproduce.figure1 import draw_figure1, render_figure1, verify_slice
from ag_attention._reproduce.report import FIGURE_FORMATS

from tests.helpers import ROOT


def test_figure1_checks_survive_python_O():
    """``verify_slice`` raises ComputationError on a wrong claim even under ``python -O`` (no bare assert)."""
    code = (
        "from ag_attention._reproduce import figure1\n"
        "figure1.F = lambda x, y, w: 1\n"
        "from ag_attention._errors import ComputationError\n"
        "try:\n    figure1.verify_slice()\nexcept ComputationError as e:\n    print('refused:', e)\n"
    )
    r = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
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


def test_figure_1_legend_names_every_surface_and_the_title_no_function(tmp_path):
    fig = draw_figure1(resolution=20)
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sum("sheet" in t for t in legend) == 2 == sum(1 for c in ax.collections if c.__class__.__name__ == "Poly3DCollection") // 2
    assert "verify_slice" not in ax.get_title() and "figure1" not in ax.get_title()
    path = render_figure1(tmp_path / "figure1.png", resolution=20)
    assert path.name == "figure1.png"
    _assert_figure_files(tmp_path, "figure1")
