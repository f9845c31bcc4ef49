"""Figure 1: a 3-dimensional affine slice of the neuromanifold for d = 2, d' = 1.

Reduced coordinates ``q_1 = c_1 z_1^2 + c_2 z_1 z_2 + c_3 z_2^2`` and
``q_2 = c_4 z_1^2 + c_5 z_1 z_2 + c_6 z_2^2``; the Zariski closure is the
quartic ``Res(q_1, q_2) = 0``.  The slice ``c_1 = c_3 = c_6 = 1`` with
coordinates ``(x, y, w) = (c_4, c_2, c_5)`` gives

    F = (1 - x)^2 + (w - x y)(w - y),   discriminant in w: (1 - x)^2 (y^2 - 4),

so the real surface is two sheets ``w = (y(1 + x) +- |1 - x| sqrt(y^2 - 4)) / 2``
over ``|y| >= 2``, and the singular locus (``[[c1 c2 c3],[c4 c5 c6]]`` of rank
one) is the line ``x = 1, w = y`` with common quadric ``z_1^2 + y z_1 z_2 + z_2^2``:

* ``|y| > 2``: indefinite, a product of two real linear forms: in the
  neuromanifold, where the two sheets cross (pair and swap);
* ``y = +-2``: a perfect square: the boundary points (critical values,
  ``A = u v^T, V = w v^T``);
* ``|y| < 2``: definite: real points of the Zariski closure with no real
  preimage (Cor. A.6), drawn dashed.

:func:`render_figure1` checks each of these statements exactly (fibers by
factorization, exact ranks) before drawing them.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ComputationError
from .._exact import linalg
from .._exact.onelayer import fiber
from .._exact.onelayer import CertificateKind, certify
from .report import pyplot, save_figure

__all__ = ["draw_figure1", "render_figure1", "slice_point", "verify_slice"]


def slice_point(x: Fraction | int, y: Fraction | int, w: Fraction | int) -> list[Fraction]:
    """The point of R^6 with slice coordinates (x, y, w)."""
    return [Fraction(1), Fraction(y), Fraction(1), Fraction(x), Fraction(w), Fraction(1)]


def F(x: Fraction | int, y: Fraction | int, w: Fraction | int) -> Fraction | int:
    """The slice of the quartic: ``(1 - x)^2 + (w - x y)(w - y)``."""
    return (1 - x) ** 2 + (w - x * y) * (w - y)


def _require(condition: bool, message: str) -> None:
    """A check of the picture's claims (not an ``assert``: it must also run under ``python -O``)."""
    if not condition:
        raise ComputationError(f"Figure 1 check failed: {message}")


def verify_slice() -> dict[str, object]:
    """Exact checks of what the picture shows; raises :class:`ComputationError` if one fails."""
    facts: dict[str, object] = {}
    # the quartic: resultant of the two binary quadrics, on the slice
    c = linalg.rational_polynomial_ring(["c1", "c2", "c3", "c4", "c5", "c6"], "lex").gens()
    res = (c[0] * c[5] - c[3] * c[2]) ** 2 - (c[0] * c[4] - c[3] * c[1]) * (c[1] * c[5] - c[4] * c[2])
    points: list[tuple[Fraction | int, Fraction | int, Fraction | int]] = [(0, 3, 2), (2, -3, 5), (Fraction(1, 2), 5, -1)]
    for x, y, w in points:
        got = res(*[linalg.rational(v) for v in slice_point(x, y, w)])
        _require(Fraction(int(got.p), int(got.q)) == F(x, y, w), f"slice formula differs from the resultant at {(x, y, w)}")
    # on the line x = 1, w = y: F = 0 and grad F = 0 (singular), for every y
    line: list[Fraction | int] = [-3, -2, 0, Fraction(3, 2), 2, 5]
    for y in line:
        x, w = 1, y
        grad = (-2 * (1 - x) + y * (y - w), x * (y - w) - (w - x * y), -(y - w) + (w - x * y))
        _require(F(x, y, w) == 0 and grad == (0, 0, 0), f"the line x = 1, w = y is not singular at y = {y}")
    # fibers along the line: 2 real preimages (|y| > 2), 1 critical (y = +-2), none real (|y| < 2)
    counts: dict[str, tuple[int, int]] = {}
    line = [-3, Fraction(-5, 2), -2, 0, 1, 2, Fraction(5, 2), 3]
    for y in line:
        fb = fiber(slice_point(1, y, y), 2, 1)
        counts[str(y)] = (fb.count, fb.real_count)
    for key in ["-3", "-5/2", "5/2", "3"]:
        _require(counts[key] == (2, 2), f"fiber counts {counts}")
    _require(counts["2"] == (1, 1) and counts["-2"] == (1, 1), f"fiber counts {counts}")
    _require(counts["0"] == (2, 0) and counts["1"] == (2, 0), f"fiber counts {counts}")
    facts["fibers on the singular line y -> (preimages, real preimages)"] = counts
    # the boundary points are critical values: A = u v^T, V = w v^T, rank drop 1
    cert = certify([[1, 1], [1, 1]], [[1, 1]], dimension=5)
    _require(cert.kind is CertificateKind.RANK_DROP and cert.singular is True and cert.differential_rank == 4,
             f"boundary point: {cert}")
    facts["boundary point (1,2,1,1,2,1)"] = cert
    # a point of a sheet (y = 5/2, x = 0, w = 2): smooth, one real preimage
    pt = slice_point(0, Fraction(5, 2), 2)
    _require(F(0, Fraction(5, 2), 2) == 0, "(0, 5/2, 2) is not on the slice")
    fb = fiber(pt, 2, 1)
    _require(len(fb.preimages) == 1, f"sheet point has {len(fb.preimages)} preimages")
    A, V = fb.preimages[0]
    cert = certify(A, V, dimension=5)
    _require(cert.kind is CertificateKind.IMMERSION and cert.singular is False, f"sheet point: {cert}")
    facts["sheet point (x, y, w) = (0, 5/2, 2)"] = cert
    return facts


_SHEETS = (  # (sign of the root, colour map, legend label)
    (1, "Blues", "M, upper sheet: w = (y(1 + x) + |1 - x| sqrt(y^2 - 4)) / 2"),
    (-1, "Greens", "M, lower sheet: w = (y(1 + x) - |1 - x| sqrt(y^2 - 4)) / 2"),
)


def _draw_sheets(ax: Any, plt: Any, resolution: int) -> list[Any]:
    """The two real sheets over |y| >= 2, crossing along the singular line; legend handles for them."""
    from matplotlib.colors import LightSource
    from matplotlib.patches import Patch

    ls = LightSource(azdeg=35, altdeg=40)
    xs = np.linspace(-0.5, 2.5, resolution)
    for sign_y in (1, -1):
        ys = sign_y * np.linspace(2.0, 3.5, resolution)
        X, Y = np.meshgrid(xs, ys)
        root = np.abs(1 - X) * np.sqrt(np.maximum(Y**2 - 4, 0))
        for s, cmap, _ in _SHEETS:
            W = (Y * (1 + X) + s * root) / 2
            rgb = ls.shade(W, cmap=plt.get_cmap(cmap), vert_exag=0.3, blend_mode="soft", vmin=-14, vmax=14)
            ax.plot_surface(X, Y, W, facecolors=rgb, rstride=2, cstride=2, linewidth=0, antialiased=True, alpha=0.8, shade=False,
                            rasterized=True)  # vector lines and text, raster surfaces: PDF and SVG stay small
    return [Patch(facecolor=plt.get_cmap(cmap)(0.6), alpha=0.8, label=label) for _, cmap, label in _SHEETS]


def _draw_lines(ax: Any) -> None:
    """The singular line x = 1, w = y: in M for |y| >= 2, in the closure only for |y| < 2; the boundary points."""
    y_in = np.linspace(2.0, 3.5, 50)
    for sgn in (1, -1):
        ax.plot(np.ones_like(y_in), sgn * y_in, sgn * y_in, color="#f2b705", lw=3.2, zorder=10,
                label="singular locus in M (rank A = rank V = 1)" if sgn == 1 else None)
    y_out = np.linspace(-2.0, 2.0, 60)
    ax.plot(np.ones_like(y_out), y_out, y_out, color="#d95f02", lw=2.6, ls=(0, (3, 2)), zorder=10,
            label="Zariski closure, not in M (Cor. A.6: definite quadric)")
    ax.scatter([1, 1], [2, -2], [2, -2], color="#c00000", s=70, depthshade=False, zorder=11,
               label="boundary: critical values A = u v^T, V = w v^T")


def draw_figure1(*, resolution: int = 160) -> Any:
    """The picture as a matplotlib figure (after :func:`verify_slice`); the caller saves and closes it."""
    plt = pyplot()
    verify_slice()
    fig = plt.figure(figsize=(8.5, 7.5), dpi=130)
    ax = fig.add_subplot(111, projection="3d")
    sheets = _draw_sheets(ax, plt, resolution)
    _draw_lines(ax)
    ax.set_xlabel("x = c4")
    ax.set_ylabel("y = c2")
    ax.set_zlabel("w = c5")
    ax.set_xlim(-0.5, 2.5)
    ax.set_ylim(-3.5, 3.5)
    ax.set_zlim(-9, 9)
    ax.view_init(elev=22, azim=-58)
    ax.set_title("Lightning self-attention, d = 2, d' = 1: the quartic Res(q1, q2) = 0\n"
                 "in the affine slice c1 = c3 = c6 = 1 (every feature drawn is checked exactly)", fontsize=10)
    lines, labels = ax.get_legend_handles_labels()
    ax.legend(handles=sheets + lines, labels=[h.get_label() for h in sheets] + labels, loc="upper left", fontsize=7.5,
              framealpha=0.9)
    fig.tight_layout()
    return fig


def render_figure1(path: str | Path, *, seed: int = 0, resolution: int = 160) -> Path:
    """Draw the slice (after :func:`verify_slice`) and save it as PNG, PDF and SVG; the PNG's path.

    ``seed`` is unused (the picture is deterministic); it is accepted like every reproduction's.
    """
    fig = draw_figure1(resolution=resolution)
    png = save_figure(fig, Path(path).with_suffix(".png"))[0]
    pyplot().close(fig)
    return png
