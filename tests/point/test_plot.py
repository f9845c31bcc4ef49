"""ag-attention point --plot: the Jacobian's spectrum and one layer's singular values, drawn atomically."""

import json
import re

import numpy as np
import pytest

from ag_attention import Network, point_geometry
from ag_attention._errors import InvalidArgumentError
from ag_attention._point.plot import check_plot_path, plot_point
from tests.cli import run_in_process
from tests.helpers import MIN_PNG_PIXELS, assert_vector_files, png_pixels


def test_plot_point_draws_a_report_and_needs_a_spectrum(tmp_path):
    w = {"layers.0.heads.0.A": np.diag([0.41, 3.2e-5]), "layers.0.heads.0.V": np.eye(2)}
    g = point_geometry(Network.from_weights(w), numerical=True)
    out = plot_point(g, tmp_path / "spectrum.svg")
    assert out.read_text().lstrip().startswith("<?xml") and "<svg" in out.read_text()
    exact = point_geometry(
        Network.from_weights({"layers.0.heads.0.A": [[1, 0], [0, 2]], "layers.0.heads.0.V": [[1, 1]]})
    )
    with pytest.raises(InvalidArgumentError, match="no float64 spectrum"):
        plot_point(exact, tmp_path / "x.png")
    with pytest.raises(InvalidArgumentError, match=r"must end in \.png, \.pdf, \.svg"):
        check_plot_path(tmp_path / "x.jpeg")


def test_cli_point_plot_writes_the_spectrum_and_refuses_bad_names(tmp_path, capsys):
    path = tmp_path / "w.npz"
    np.savez(path, **{"layers.0.heads.0.A": np.diag([0.41, 3.2e-5]), "layers.0.heads.0.V": np.eye(2)})
    r = run_in_process(capsys, "point", str(path), "-t", "2", "--plot", str(tmp_path / "s.png"), "--json")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "spectrum plot written" in r.stderr
    assert json.loads(r.stdout)["jacobian_singular_values"]
    r = run_in_process(capsys, "point", str(path), "-t", "2", "--plot", str(tmp_path / "s.txt"))
    assert r.returncode == 2 and "s.txt" in r.stderr and not (tmp_path / "s.txt").exists()
    (tmp_path / "target").write_text("keep")
    (tmp_path / "link.svg").symlink_to(tmp_path / "target")
    r = run_in_process(capsys, "point", str(path), "-t", "2", "--plot", str(tmp_path / "link.svg"))
    assert (tmp_path / "target").read_text() == "keep"  # never written through the link, nor replaced silently
    assert r.returncode == 2 and "a symbolic link is there" in r.stderr


def _student(tmp_path):
    path = tmp_path / "w.npz"
    np.savez(path, **{"layers.0.heads.0.A": np.diag([0.41, 3.2e-5]), "layers.0.heads.0.V": np.eye(2)})
    return path


@pytest.mark.parametrize(
    "name, message",
    [
        ("nodir/x.png", r"nodir does not exist"),
        ("file.txt/x.png", r"file.txt is not a directory"),
        ("adir.png", "a directory, not a file name"),
        ("link.svg", "a symbolic link is there"),
    ],
)
def test_cli_point_checks_the_plot_path_before_the_work(tmp_path, name, message, capsys):
    """`point --plot nodir/x.png` computed everything, then failed with a traceback and lost the result: the
    path is checked first (exit 2, nothing computed)."""
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "adir.png").mkdir()
    (tmp_path / "target").write_text("keep")
    (tmp_path / "link.svg").symlink_to(tmp_path / "target")
    r = run_in_process(capsys, "point", str(_student(tmp_path)), "-t", "2", "--plot", str(tmp_path / name))
    assert r.returncode == 2 and re.search(message, r.stderr) and "Traceback" not in r.stderr
    assert r.stdout == "" and (tmp_path / "target").read_text() == "keep"


def test_a_plot_that_fails_after_the_work_loses_nothing(tmp_path, monkeypatch, capsys):
    """matplotlib failing (here: made to fail) after the computation: the report is printed first, then the
    failure as an exit-2 message."""
    from ag_attention._cli import main
    from ag_attention._point import plot as plot_module

    def broken(g, path):
        raise RuntimeError("Agg cannot draw here")

    monkeypatch.setattr(plot_module, "plot_point", broken)
    status = main(["point", str(_student(tmp_path)), "-t", "2", "--json", "--plot", str(tmp_path / "s.png")])
    out, err = capsys.readouterr()
    assert status == 2 and json.loads(out)["local_rank"] == 7
    assert "--plot" in err and "RuntimeError: Agg cannot draw here" in err and "the report above is complete" in err
    # no spectrum at this scale: the report, then why there is no figure (matplotlib as it is)
    monkeypatch.undo()
    np.savez(tmp_path / "big.npz", **{"layers.0.heads.0.A": np.eye(2) * 1e200, "layers.0.heads.0.V": np.eye(2)})
    r = run_in_process(capsys, "point", str(tmp_path / "big.npz"), "-t", "2", "--plot", str(tmp_path / "big.png"))
    assert r.returncode == 2 and "Geometry at the point" in r.stdout and "no float64 spectrum to draw" in r.stderr
    assert "this scale overflows float64" in r.stderr and not (tmp_path / "big.png").exists()


def test_the_one_head_figure_is_readable_and_written_in_every_format(tmp_path, capsys):
    """The audit: `point --per-head --plot` of one head was 150 x 120 px, its title and colour-bar label clipped.
    Now at least 4 x 3 inches (tests/test_figures.py checks every text inside the canvas), in the suffix's format."""
    from ag_attention._cli import main

    path = _student(tmp_path)
    for name in ("heads.png", "heads.pdf", "heads.svg"):
        assert main(["point", str(path), "--per-head", "--plot", str(tmp_path / name)]) == 0, capsys.readouterr().err
        assert f"heads x layers figure written to {tmp_path / name}" in capsys.readouterr().err
    width, height = png_pixels(tmp_path / "heads.png")
    assert width >= 2 * MIN_PNG_PIXELS[0] and height >= MIN_PNG_PIXELS[1], (width, height)  # two panels
    assert_vector_files(tmp_path / "heads.pdf", tmp_path / "heads.svg")
