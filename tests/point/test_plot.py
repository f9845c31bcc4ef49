"""ag-attention point --plot: the Jacobian's spectrum and one layer's singular values, drawn atomically."""

import json

import numpy as np
import pytest

from ag_attention import Network, point_geometry
from ag_attention._errors import InvalidArgumentError
from ag_attention._point.plot import check_plot_path, plot_point
from tests.helpers import run_cli


def test_plot_point_draws_a_report_and_needs_a_spectrum(tmp_path):
    w = {"layers.0.heads.0.A": np.diag([0.41, 3.2e-5]), "layers.0.heads.0.V": np.eye(2)}
    g = point_geometry(Network.from_weights(w), numerical=True)
    out = plot_point(g, tmp_path / "spectrum.svg")
    assert out.read_text().lstrip().startswith("<?xml") and "<svg" in out.read_text()
    exact = point_geometry(Network.from_weights({"layers.0.heads.0.A": [[1, 0], [0, 2]],
                                                 "layers.0.heads.0.V": [[1, 1]]}))
    with pytest.raises(InvalidArgumentError, match="no float64 spectrum"):
        plot_point(exact, tmp_path / "x.png")
    with pytest.raises(InvalidArgumentError, match=r"must end in \.png, \.pdf, \.svg"):
        check_plot_path(tmp_path / "x.jpeg")


def test_cli_point_plot_writes_the_spectrum_and_refuses_bad_names(tmp_path):
    path = tmp_path / "w.npz"
    np.savez(path, **{"layers.0.heads.0.A": np.diag([0.41, 3.2e-5]), "layers.0.heads.0.V": np.eye(2)})
    r = run_cli("point", str(path), "-t", "2", "--plot", str(tmp_path / "s.png"), "--json")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "spectrum plot written" in r.stderr
    assert json.loads(r.stdout)["jacobian_singular_values"]
    r = run_cli("point", str(path), "-t", "2", "--plot", str(tmp_path / "s.txt"))
    assert r.returncode == 2 and "s.txt" in r.stderr and not (tmp_path / "s.txt").exists()
    (tmp_path / "target").write_text("keep")
    (tmp_path / "link.svg").symlink_to(tmp_path / "target")
    r = run_cli("point", str(path), "-t", "2", "--plot", str(tmp_path / "link.svg"))
    assert (tmp_path / "target").read_text() == "keep"  # replaced atomically, never written through the link
