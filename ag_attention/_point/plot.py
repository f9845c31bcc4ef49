"""The spectrum of a point report as a figure (``ag-attention point --plot FILE``).

Left: the singular values of the column-normalized Jacobian (float64, log scale), with the tolerance line
``rtol * s_1`` and the exact local rank marked (the proven rank beside the measured spectrum). Right, for one plain
layer: the singular values of ``A`` and of ``V`` with their own ``rtol`` lines (near-singular when every value but
the first of each is below it). Written atomically, in the format of the file's suffix (``.png``, ``.pdf``,
``.svg``), never through a link planted at the name; the name is checked before the work starts
(:func:`check_plot_path`), and the CLI prints the report before it draws, so a figure that fails loses nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import InvalidArgumentError, OutputError
from .._files import atomic_open, reserve

if TYPE_CHECKING:
    from .heads import HeadsTable
    from .report import PointGeometry

__all__ = ["FORMATS", "check_plot_path", "plot_point", "plot_heads", "effective_rank"]

FORMATS = ("png", "pdf", "svg")


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


def plot_point(g: PointGeometry, path: str | os.PathLike[str]) -> Path:
    """Draw the spectra of ``g`` into ``path`` (see the module docstring); the path written."""
    target = check_plot_path(path)
    if g.numerical is None or not g.numerical.singular_values:
        why = g.float_unavailable.get("numerical") or "point_geometry(numerical=True) computes it"
        raise InvalidArgumentError(f"{target}: the report has no float64 spectrum to draw: {why}")
    try:
        import matplotlib
    except ImportError:
        raise InvalidArgumentError("--plot needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = g.numerical
    s = np.asarray(n.singular_values, dtype=float)
    panels = 2 if g.strata is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 3.8), squeeze=False)
    ax: Any = axes[0][0]
    floor = max(float(s[0]) * 1e-18, 1e-300)
    ax.semilogy(np.arange(1, len(s) + 1), np.maximum(s, floor), "o-", ms=3, lw=1, label="singular values")
    ax.axhline(n.rtol * s[0], color="C3", ls="--", lw=1, label=f"rtol {n.rtol:g} x s_1: rank {n.rank_at_rtol}")
    if g.local_rank is not None:
        ax.axvline(
            g.local_rank + 0.5,
            color="C2",
            ls=":",
            lw=1,
            label=f"local rank {g.local_rank} ({'exact' if g.exact else 'lower bound'})",
        )
    ax.set_xlabel("index")
    ax.set_ylabel("singular value (column-normalized Jacobian)")
    ax.set_title(f"{g.network.architecture.describe()}: {g.parameters} parameters", fontsize=9)
    ax.legend(fontsize=7)
    if g.strata is not None:
        st = g.strata
        bx: Any = axes[0][1]
        for values, name, marker in ((st.singular_values_A, "A", "s"), (st.singular_values_V, "V", "^")):
            v = np.asarray(values, dtype=float)
            if v.size:
                bx.semilogy(
                    np.arange(1, v.size + 1),
                    np.maximum(v, max(float(v[0]) * 1e-18, 1e-300)),
                    marker + "-",
                    ms=4,
                    lw=1,
                    label=f"{name}: {', '.join(f'{x:.2g}' for x in v[:4])}",
                )
                bx.axhline(st.rtol * v[0], ls="--", lw=0.8, color="C0" if name == "A" else "C1")
        bx.set_xlabel("index")
        bx.set_ylabel("singular value")
        bx.set_title(f"{st.verdict()}; relative distance {st.relative_to_singular:.2g}", fontsize=8)
        bx.legend(fontsize=7)
    fig.tight_layout()
    with atomic_open(target, "wb") as fh:  # never through a planted link; a full disk is an OutputError
        fig.savefig(fh, format=target.suffix.lower().lstrip("."))
    plt.close(fig)
    return target


def effective_rank(values: Any) -> float:
    """``exp`` of the entropy of the normalized singular values (Roy and Vetterli): 1 for a rank-one matrix, ``r``
    for ``r`` equal values, 0 for a zero matrix; a continuous measure of how many directions a head uses."""
    s = np.asarray(values, dtype=np.float64)
    s = s[s > 0]
    if s.size == 0:
        return 0.0
    p = s / s.sum()
    return float(np.exp(-(p * np.log(p)).sum()))


def plot_heads(table: HeadsTable, path: str | os.PathLike[str]) -> Path:
    """The heads x layers figure of a per-head table (``point --per-head --plot FILE``), two panels that carry
    information at any initialisation: the effective rank of each head's ``A_h`` relative to its size (how many of
    its ``d_h`` directions the scores use; random heads spread over it, trained ones concentrate) and its output
    scale relative to its layer's largest, both on log colour scales. Dead heads are marked ``x``, heads critical by
    their ranks ``o``, near-dead ``.``, heads with proportional functions ``+``; heads and layers are numbered from 0
    (as Hugging Face and TransformerLens)."""
    target = check_plot_path(path)
    try:
        import matplotlib
    except ImportError:
        raise InvalidArgumentError("--plot needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    scale = table.grid("scale")
    ranks = np.full(scale.shape, np.nan)
    for h in table.heads:
        f = h.affine_A if h.affine_A is not None else h.A
        ranks[h.head - 1, h.layer - 1] = effective_rank(f.singular_values) / max(1, f.bound)
    twins = {(l, x) for l, a, b, _ in table.twins for x in (a, b)}
    rows, cols = scale.shape
    # at least 10 x 3.2 inches: the titles of a small network's panels (a layer or two) overlapped and were cut
    fig, axes = plt.subplots(1, 2, figsize=(max(10.0, 2.5 + 0.9 * cols), max(3.2, 1.8 + 0.32 * rows)), squeeze=False)
    panels = (
        (axes[0][0], ranks, "effective rank of A_h / d_h", "viridis"),
        (axes[0][1], scale, "output scale / layer's largest", "magma"),
    )
    for ax, grid, title, cmap in panels:
        shown = np.where(grid > 0, grid, np.nan)
        finite = shown[np.isfinite(shown)]
        # the colours span the values shown (at random initialisation they differ by a few percent, and those
        # differences are the information): a log scale from the smallest to the largest
        low = float(finite.min()) if finite.size else table.rtol
        high = max(float(finite.max()) if finite.size else 1.0, low * 1.001)
        im = ax.imshow(shown, origin="lower", aspect="auto", cmap=cmap, norm=LogNorm(vmin=low, vmax=high))
        for h in table.heads:
            mark = (
                "x"
                if h.dead
                else "o"
                if h.critical
                else "."
                if h.near_dead
                else "+"
                if (h.layer, h.head) in twins
                else ""
            )
            if mark:
                ax.plot(h.layer - 1, h.head - 1, mark, color="red", ms=9, mew=2, mfc="none")
        step = max(1, cols // 12)
        ax.set_xticks(range(0, cols, step), [str(i) for i in range(0, cols, step)], fontsize=10)
        step = max(1, rows // 16)
        ax.set_yticks(range(0, rows, step), [str(i) for i in range(0, rows, step)], fontsize=10)
        ax.set_xlabel("layer (from 0)", fontsize=11)
        ax.set_ylabel("head (from 0)", fontsize=11)
        ax.set_title(title + " (log scale)", fontsize=12)
        bar = fig.colorbar(im, ax=ax)
        bar.ax.tick_params(labelsize=9)
    fig.suptitle(
        f"{len(table.heads)} heads: x dead, o critical by its ranks, . below rtol {table.rtol:g}, + proportional "
        "to another head",
        fontsize=11,
    )
    fig.tight_layout()
    with atomic_open(target, "wb") as fh:
        fig.savefig(fh, format=target.suffix.lower().lstrip("."), dpi=120)
    plt.close(fig)
    return target
