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
from .._exact import CertificateKind, certify, fiber, linalg
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
    points: list[tuple[Fraction | int, Fraction | int, Fraction | int]] = [
        (0, 3, 2),
        (2, -3, 5),
        (Fraction(1, 2), 5, -1),
    ]
    for x, y, w in points:
        got = res(*[linalg.rational(v) for v in slice_point(x, y, w)])
        _require(
            Fraction(int(got.p), int(got.q)) == F(x, y, w), f"slice formula differs from the resultant at {(x, y, w)}"
        )
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
    _require(
        cert.kind is CertificateKind.RANK_DROP and cert.singular is True and cert.differential_rank == 4,
        f"boundary point: {cert}",
    )
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


#: Okabe-Ito colours (distinguishable with every common colour-vision deficiency)
_BLUE, _ORANGE, _VERMILLION, _PURPLE, _BLACK = "#56B4E9", "#E69F00", "#D55E00", "#CC79A7", "#000000"

_SHEETS = (  # (sign of the root, colour, legend label)
    (1, _BLUE, r"$\mathcal{M}$, upper sheet: $w = \frac{1}{2}\left(y(1 + x) + |1 - x|\sqrt{y^2 - 4}\right)$"),
    (-1, _ORANGE, r"$\mathcal{M}$, lower sheet: $w = \frac{1}{2}\left(y(1 + x) - |1 - x|\sqrt{y^2 - 4}\right)$"),
)


def _quads(X: Any, Y: Any, W: Any) -> Any:
    """The quadrilaterals of a grid surface, shape (n, 4, 3)."""
    P = np.stack([X, Y, W], axis=-1)
    return np.stack([P[:-1, :-1], P[1:, :-1], P[1:, 1:], P[:-1, 1:]], axis=2).reshape(-1, 4, 3)


def _draw_sheets(ax: Any, resolution: int) -> list[Any]:
    """The two real sheets over |y| >= 2, crossing along the singular line; legend handles for them.

    Both sheets (and both halves, y >= 2 and y <= -2) are one opaque collection of quadrilaterals, so that
    matplotlib sorts them by depth together: where one sheet passes behind the other it is hidden, not blended
    into it.  Each sheet has one colour, shaded by its normal (a light from the upper left).
    """
    from matplotlib.colors import LightSource, to_rgb
    from matplotlib.patches import Patch
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection  # type: ignore[import-untyped]

    light = LightSource(azdeg=315, altdeg=45)
    n = max(8, resolution // 2)
    xs = np.linspace(-0.5, 2.5, n)
    polygons, colours = [], []
    for sign_y in (1, -1):
        X, Y = np.meshgrid(xs, sign_y * np.linspace(2.0, 3.5, n))
        root = np.abs(1 - X) * np.sqrt(np.maximum(Y**2 - 4, 0))
        for s, colour, _ in _SHEETS:
            quads = _quads(X, Y, (Y * (1 + X) + s * root) / 2)
            normals = np.cross(quads[:, 2] - quads[:, 0], quads[:, 3] - quads[:, 1])
            normals /= np.linalg.norm(normals, axis=1, keepdims=True)
            normals *= np.sign(normals[:, 2:3] + 1e-12)  # the side facing up, whatever the grid's orientation
            shade = light.shade_normals(normals, fraction=1.0)
            polygons.append(quads)
            colours.append(np.array(to_rgb(colour)) * (0.62 + 0.38 * shade[:, None]))
    faces = np.concatenate(colours)
    # edges in the face's colour: no light seams between neighbouring quadrilaterals
    surface = Poly3DCollection(
        np.concatenate(polygons), facecolors=faces, edgecolors=faces, linewidths=0.3, rasterized=True
    )  # vector lines and text, raster surfaces: small PDF and SVG
    surface.set_gid("sheets")
    ax.add_collection3d(surface)
    return [Patch(facecolor=colour, edgecolor="none", label=label) for _, colour, label in _SHEETS]


def _draw_lines(ax: Any) -> None:
    """The singular line x = 1, w = y: in M for |y| >= 2, in the closure only for |y| < 2; the boundary points."""
    y_in = np.linspace(2.0, 3.5, 50)
    for sgn in (1, -1):
        ax.plot(
            np.ones_like(y_in),
            sgn * y_in,
            sgn * y_in,
            color=_BLACK,
            lw=2.8,
            ls="-",
            zorder=10,
            label=(
                r"singular locus in $\mathcal{M}$, where the sheets cross ($|y| > 2$, "
                r"$\mathrm{rank}\,A = \mathrm{rank}\,V = 1$)"
            )
            if sgn == 1
            else None,
        )
    y_out = np.linspace(-2.0, 2.0, 60)
    ax.plot(
        np.ones_like(y_out),
        y_out,
        y_out,
        color=_VERMILLION,
        lw=2.4,
        ls=(0, (4, 2)),
        zorder=10,
        label=r"in the Zariski closure, not in $\mathcal{M}$ ($|y| < 2$: a definite quadric, Cor. A.6)",
    )
    ax.scatter(
        [1, 1],
        [2, -2],
        [2, -2],
        s=80,
        marker="o",
        facecolor=_PURPLE,
        edgecolor=_BLACK,
        linewidths=1.2,
        depthshade=False,
        zorder=11,
        label=r"the two boundary points $y = \pm 2$: critical values $A = uv^\top$, $V = wv^\top$",
    )


def draw_figure1(*, resolution: int = 160) -> Any:
    """The picture as a matplotlib figure (after :func:`verify_slice`); the caller saves and closes it."""
    plt = pyplot()
    verify_slice()
    fig = plt.figure(figsize=(8.5, 7.5), dpi=130)
    ax = fig.add_subplot(111, projection="3d")
    ax.computed_zorder = False  # the lines lie on the sheets (their crossing): drawn over them, not sorted
    sheets = _draw_sheets(ax, resolution)
    _draw_lines(ax)
    ax.set_xlabel(r"$x = c_4$")
    ax.set_ylabel(r"$y = c_2$")
    ax.set_zlabel(r"$w = c_5$")
    ax.set_xlim(-0.5, 2.5)
    ax.set_ylim(-3.5, 3.5)
    ax.set_zlim(-9, 9)
    ax.view_init(elev=22, azim=-58)
    ax.set_title(
        r"The quartic $\mathrm{Res}(q_1, q_2) = 0$ of lightning self-attention with $d = 2$, $d' = 1$, "
        "\n"
        r"in the affine slice $c_1 = c_3 = c_6 = 1$.  Every feature drawn is checked exactly.",
        fontsize=10,
    )
    lines, labels = ax.get_legend_handles_labels()
    ax.legend(
        handles=sheets + lines,
        labels=[h.get_label() for h in sheets] + labels,
        loc="upper left",
        fontsize=7.5,
        framealpha=0.95,
    )
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
