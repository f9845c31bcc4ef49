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

__all__ = ["FORMATS", "check_plot_path", "plot_point", "plot_heads"]

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


def plot_heads(table: HeadsTable, path: str | os.PathLike[str]) -> Path:
    """The heads x layers figure of a per-head table (``point --per-head --plot FILE``): each head's output scale
    relative to its layer's largest (log colour scale), dead heads marked ``x``, heads critical by their ranks
    ``o``, near-dead ``.``."""
    target = check_plot_path(path)
    try:
        import matplotlib
    except ImportError:
        raise InvalidArgumentError("--plot needs matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    grid = table.grid("scale")
    shown = np.where(grid > 0, grid, np.nan)
    low = float(np.nanmin(shown)) if np.any(np.isfinite(shown)) else table.rtol
    fig, ax = plt.subplots(figsize=(1.2 + 0.45 * grid.shape[1], 1.0 + 0.35 * grid.shape[0]))
    im = ax.imshow(
        shown, origin="lower", aspect="auto", cmap="viridis", norm=LogNorm(vmin=min(low, table.rtol), vmax=1.0)
    )
    for h in table.heads:
        mark = "x" if h.dead else "o" if h.critical else "." if h.near_dead else ""
        if mark:
            ax.plot(h.layer - 1, h.head - 1, mark, color="C3", ms=8, mfc="none")
    ax.set_xticks(range(grid.shape[1]), [str(i + 1) for i in range(grid.shape[1])])
    ax.set_yticks(range(grid.shape[0]), [str(i + 1) for i in range(grid.shape[0])])
    ax.set_xlabel("layer")
    ax.set_ylabel("head")
    ax.set_title(f"output scale per head (x dead, o critical by its ranks, . below rtol {table.rtol:g})", fontsize=8)
    fig.colorbar(im, ax=ax, label="scale / layer's largest")
    fig.tight_layout()
    with atomic_open(target, "wb") as fh:
        fig.savefig(fh, format=target.suffix.lower().lstrip("."))
    plt.close(fig)
    return target
