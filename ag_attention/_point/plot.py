"""The spectrum of a point report as a figure (``ag-attention point --plot FILE``).

Left: the singular values of the column-normalized Jacobian (float64, log scale), with the tolerance line
``rtol * s_1`` and the exact local rank marked (the proven rank beside the measured spectrum). Right, for one plain
layer: the singular values of ``A`` and of ``V`` with their own ``rtol`` lines (near-singular when every value but
the first of each is below it). The index axes have integer ticks, every line a legend entry.

:func:`spectrum_figure` and :func:`heads_figure` build the matplotlib Figures (at least 4 x 3 inches whatever the
number of heads, constrained layout: nothing clipped); :func:`plot_point` and :func:`plot_heads` write them
atomically, in the format of the file's suffix: ``.png`` (150 dpi), or the vector formats ``.pdf`` and ``.svg``
for papers (:func:`ag_attention._figures.write_figure`), never through a link planted at the name. The name is
checked before the work starts (:func:`check_plot_path`), and the CLI prints the report before it draws, so a
figure that fails loses nothing.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import InvalidArgumentError, OutputError
from .._figures import FORMATS, at_least, integer_ticks, wrap, write_figure
from .._files import reserve

if TYPE_CHECKING:
    from .heads import HeadsTable
    from .report import PointGeometry

__all__ = [
    "FORMATS",
    "check_plot_path",
    "spectrum_figure",
    "heads_figure",
    "plot_point",
    "plot_heads",
    "effective_rank",
]


def check_plot_path(path: str | os.PathLike[str]) -> Path:
    """``path`` if a figure can be written there, checked before the work starts, else
    :class:`InvalidArgumentError` naming it: its suffix a format written here, its directory existing and
    writable (a probe file is created and removed there), the name neither a directory nor a symbolic link
    (a link is never written through, nor silently replaced)."""
    p = Path(path)
    where = f"--plot {p}"
    if p.suffix.lower().lstrip(".") not in FORMATS:
        raise InvalidArgumentError(f"{where}: the file name must end in " + ", ".join("." + f for f in FORMATS))
    if p.is_symlink():
        raise InvalidArgumentError(
            f"{where}: a symbolic link is there (never written through): remove it or choose another name"
        )
    if p.is_dir():
        raise InvalidArgumentError(f"{where}: a directory, not a file name")
    parent = p.parent
    if not parent.is_dir():
        raise InvalidArgumentError(
            f"{where}: {parent} " + ("is not a directory" if parent.exists() else "does not exist (no such directory)")
        )
    try:
        reserve(parent, 0)  # creates and removes a probe file: writable in fact, not only by its mode bits
    except OutputError as exc:
        raise InvalidArgumentError(f"{where}: {exc}") from None
    return p


def _figure(width: float, height: float) -> Any:
    """A matplotlib Figure of at least 4 x 3 inches with the constrained layout, on an Agg canvas (no pyplot: nothing
    to close), or the error saying how to install matplotlib."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise InvalidArgumentError("--plot needs matplotlib: pip install matplotlib (extra 'plot')") from None
    fig = at_least(Figure(figsize=(width, height), layout="constrained"))
    FigureCanvasAgg(fig)
    return fig


def spectrum_figure(g: PointGeometry) -> Any:
    """The spectra of ``g`` as a matplotlib Figure (see the module docstring)."""
    if g.numerical is None or not g.numerical.singular_values:
        why = g.float_unavailable.get("numerical") or "point_geometry(numerical=True) computes it"
        raise InvalidArgumentError(f"the report has no float64 spectrum to draw: {why}")
    n = g.numerical
    s = np.asarray(n.singular_values, dtype=float)
    panels = 2 if g.strata is not None else 1
    fig = _figure(5.2 * panels, 4.2)
    axes = fig.subplots(1, panels, squeeze=False)
    ax: Any = axes[0][0]
    floor = max(float(s[0]) * 1e-18, 1e-300)
    ax.semilogy(np.arange(1, len(s) + 1), np.maximum(s, floor), "o-", ms=3, lw=1, label="singular values $s_i$")
    ax.axhline(n.rtol * s[0], color="C3", ls="--", lw=1, label=f"rtol {n.rtol:g} x $s_1$: rank {n.rank_at_rtol}")
    if g.local_rank is not None:
        ax.axvline(
            g.local_rank + 0.5,
            color="C2",
            ls=":",
            lw=1,
            label=f"local rank {g.local_rank} ({'exact' if g.exact else 'lower bound'})",
        )
    ax.set_xlabel("index $i$ (largest first)")
    ax.set_ylabel("singular value (column-normalized Jacobian)")
    ax.set_title(wrap(f"{g.network.architecture.describe()}: {g.parameters} parameters", 5.0, 9), fontsize=9)
    integer_ticks(ax, "x")
    ax.legend(fontsize=7)
    if g.strata is not None:
        _strata_panel(axes[0][1], g.strata)
    return fig


def _strata_panel(bx: Any, st: Any) -> None:
    """The right panel: the singular values of ``A`` and ``V``, each with its dashed ``rtol`` line."""
    for values, name, marker, color in ((st.singular_values_A, "A", "s", "C0"), (st.singular_values_V, "V", "^", "C1")):
        v = np.asarray(values, dtype=float)
        if v.size:
            bx.semilogy(
                np.arange(1, v.size + 1),
                np.maximum(v, max(float(v[0]) * 1e-18, 1e-300)),
                marker + "-",
                color=color,
                ms=4,
                lw=1,
                label=f"{name}: {', '.join(f'{x:.2g}' for x in v[:4])}",
            )
            bx.axhline(st.rtol * v[0], ls="--", lw=0.8, color=color, label=f"rtol {st.rtol:g} x $s_1({name})$")
    bx.set_xlabel("index $i$ (largest first)")
    bx.set_ylabel("singular value of $A$, $V$")
    bx.set_title(wrap(f"{st.verdict()}; relative distance {st.relative_to_singular:.2g}", 5.0, 9), fontsize=9)
    integer_ticks(bx, "x")
    bx.legend(fontsize=7)


def plot_point(g: PointGeometry, path: str | os.PathLike[str]) -> Path:
    """Draw the spectra of ``g`` into ``path`` (:func:`spectrum_figure`, in the suffix's format); the path."""
    target = check_plot_path(path)
    try:
        fig = spectrum_figure(g)
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(f"{target}: {exc}") from None
    return write_figure(fig, target)


def effective_rank(values: Any) -> float:
    """``exp`` of the entropy of the normalized singular values (Roy and Vetterli): 1 for a rank-one matrix, ``r``
    for ``r`` equal values, 0 for a zero matrix; a continuous measure of how many directions a head uses."""
    s = np.asarray(values, dtype=np.float64)
    s = s[s > 0]
    if s.size == 0:
        return 0.0
    p = s / s.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def heads_figure(table: HeadsTable) -> Any:
    """The heads x layers figure of a per-head table (``point --per-head --plot FILE``), two panels that carry
    information at any initialisation: the effective rank of each head's ``A_h`` relative to its size (how many of
    its ``d_h`` directions the scores use; random heads spread over it, trained ones concentrate) and its output
    scale relative to its layer's largest, both on log colour scales. Dead heads are marked ``x``, heads critical by
    their ranks ``o``, near-dead ``.``, heads with proportional functions ``+`` (a legend under the panels); heads
    and layers are numbered from 0 (as Hugging Face and TransformerLens). At least 8 x 4 inches, one head or 144."""
    from matplotlib.colors import LogNorm
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    scale = table.grid("scale")
    ranks = np.full(scale.shape, np.nan)
    for h in table.heads:
        f = h.affine_A if h.affine_A is not None else h.A
        ranks[h.head - 1, h.layer - 1] = effective_rank(f.singular_values) / max(1, f.bound)
    rows, cols = scale.shape
    # at least 10 x 4.2 inches: the titles of a small network's panels (a layer or two) overlapped and were cut
    fig = _figure(max(10.0, 3.0 + 0.9 * cols), max(4.2, 2.6 + 0.32 * rows))
    axes = fig.subplots(1, 2, squeeze=False)
    panels = (
        (axes[0][0], ranks, "effective rank of $A_h$ / $d_h$", "viridis"),
        (axes[0][1], scale, "output scale / its layer's largest", "magma"),
    )
    marks = _marks(table)
    for ax, grid, title, cmap in panels:
        shown = np.where(grid > 0, grid, np.nan)
        finite = shown[np.isfinite(shown)]
        # the colours span the values shown (at random initialisation they differ by a few percent, and those
        # differences are the information): a log scale from the smallest to the largest
        low = float(finite.min()) if finite.size else table.rtol
        high = max(float(finite.max()) if finite.size else 1.0, low * 1.001)
        im = ax.imshow(shown, origin="lower", aspect="auto", cmap=cmap, norm=LogNorm(vmin=low, vmax=high))
        for (layer, head), mark in marks.items():
            ax.plot(layer, head, mark, color="red", ms=9, mew=2, mfc="none")
        step = max(1, cols // 12)
        ax.set_xticks(range(0, cols, step), [str(i) for i in range(0, cols, step)], fontsize=10)
        step = max(1, rows // 16)
        ax.set_yticks(range(0, rows, step), [str(i) for i in range(0, rows, step)], fontsize=10)
        ax.set_xlabel("layer (from 0)", fontsize=11)
        ax.set_ylabel("head (from 0)", fontsize=11)
        ax.set_title(wrap(title, fig.get_figwidth() / 2 - 0.8, 11), fontsize=11)
        bar = fig.colorbar(im, ax=ax)
        bar.set_label(wrap(title + " (log scale)", fig.get_figheight() - 1.6, 9), fontsize=9)
        bar.ax.tick_params(labelsize=9)
        bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))  # 0.667, not 6.667 x 10^-1
        # a range within a decade has minor ticks only: labelled, with the digits that tell them apart
        digits = 2 + max(1, math.ceil(-math.log10((high - low) / high))) if high < 10 * low else 0
        bar.ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _, n=digits: f"{v:.{n}g}" if n else ""))
    legend = [("x", "dead"), ("o", "critical by its ranks"), (".", f"below rtol {table.rtol:g}"), ("+", "proportional")]
    handles = [Line2D([], [], ls="none", marker=m, color="red", ms=9, mew=2, mfc="none") for m, _ in legend]
    fig.legend(handles, [text for _, text in legend], loc="outside lower center", ncols=4, fontsize=9)
    n = len(table.heads)
    what = f" of {table.model}" if table.model else ""
    fig.suptitle(
        wrap(f"{n} head{'s' * (n != 1)}{what}: the geometry of each head", fig.get_figwidth(), 11), fontsize=11
    )
    return fig


def _marks(table: HeadsTable) -> dict[tuple[int, int], str]:
    """``{(layer, head): mark}`` from 0: ``x`` dead, ``o`` critical, ``.`` near-dead, ``+`` proportional."""
    twins = {(l, x) for l, a, b, _ in table.twins for x in (a, b)}
    out = {}
    for h in table.heads:
        mark = (
            "x" if h.dead else "o" if h.critical else "." if h.near_dead else "+" if (h.layer, h.head) in twins else ""
        )
        if mark:
            out[(h.layer - 1, h.head - 1)] = mark
    return out


def plot_heads(table: HeadsTable, path: str | os.PathLike[str]) -> Path:
    """Draw :func:`heads_figure` of ``table`` into ``path`` (in the suffix's format); the path written."""
    target = check_plot_path(path)
    return write_figure(heads_figure(table), target)
