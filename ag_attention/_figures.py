"""Figures for papers and talks: the sizes, ticks, wrapped titles and atomic writes every figure shares.

Every figure the package draws (``point --plot``, ``reproduce``'s pictures, a sweep's summary plot) is built as a
matplotlib Figure by one function and written by another, through :func:`write_figure`:

* at least :data:`MIN_INCHES` (4 x 3 inches) whatever it shows (one head or 144: :func:`at_least`), laid out by
  matplotlib's constrained layout so that titles, labels, colour bars and legends stay inside the canvas, long
  titles wrapped to the figure's width (:func:`wrap`);
* axes that count (an index, a dimension, a step) with integer ticks only (:func:`integer_ticks`);
* in the format of the file's suffix, :data:`FORMATS`: PNG at :data:`PNG_DPI` dots per inch or more, and the vector
  formats PDF and SVG (for papers: they scale without blur), without a creation date and with fixed SVG ids, so
  that the same figure gives the same bytes;
* atomically, never through a symbolic link planted at the name (:func:`ag_attention._files.atomic_open`).

matplotlib is optional (``pip install matplotlib``, the extra ``plot``); this module imports it only inside its
functions.
"""

from __future__ import annotations

import math
import os
import re
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._files import atomic_open

__all__ = [
    "FORMATS",
    "VECTOR_FORMATS",
    "MIN_INCHES",
    "PNG_DPI",
    "at_least",
    "wrap",
    "integer_ticks",
    "write_figure",
    "write_figures",
]

#: the formats a figure is written in, by the file's suffix: PNG first, then the vector formats
FORMATS = ("png", "pdf", "svg")
VECTOR_FORMATS = ("pdf", "svg")
#: the smallest figure drawn, width and height in inches
MIN_INCHES = (4.0, 3.0)
#: the smallest resolution of a PNG, dots per inch (a 4 x 3 inch figure: 600 x 450 pixels)
PNG_DPI = 150
#: the width of a character of matplotlib's default font (DejaVu Sans), in ems, rounded up: for :func:`wrap`
_EM_PER_CHAR = 0.6


def at_least(fig: Any, width: float = MIN_INCHES[0], height: float = MIN_INCHES[1]) -> Any:
    """``fig``, enlarged to at least ``width`` x ``height`` inches (never shrunk)."""
    w, h = fig.get_size_inches()
    if w < width or h < height:
        fig.set_size_inches(max(w, width), max(h, height))
    return fig


def wrap(text: str, inches: float, fontsize: float = 10.0) -> str:
    """``text`` broken into lines that fit ``inches`` at ``fontsize`` points (its own line breaks kept); a
    ``$...$`` formula is never broken (mathtext needs both of its dollars on one line)."""
    chars = max(16, int(inches * 72 / (_EM_PER_CHAR * fontsize)))
    glue = "\N{NO-BREAK SPACE}"  # not a space to textwrap: a formula is one word
    kept = re.sub(r"\$[^$]*\$", lambda m: m.group(0).replace(" ", glue), text)
    lines = [textwrap.fill(part, chars, break_long_words=False, break_on_hyphens=False) for part in kept.split("\n")]
    return "\n".join(lines).replace(glue, " ")


def integer_ticks(ax: Any, axes: str = "xy") -> None:
    """Ticks at integers only on the named axes of ``ax`` (``"x"``, ``"y"`` or both): axes that count.

    ``MaxNLocator(integer=True)`` falls back to fractional ticks where its view holds fewer than two integers
    (every dot at 12, jittered by 0.3), so such a view is first widened to hold three.  Call it after plotting.
    """
    from matplotlib.ticker import MaxNLocator

    for name in axes:
        get, set_ = getattr(ax, f"get_{name}lim"), getattr(ax, f"set_{name}lim")
        lo, hi = get()
        if math.floor(hi) - math.ceil(lo) < 1:
            middle = round((lo + hi) / 2)
            set_(min(lo, middle - 1.5), max(hi, middle + 1.5))
        getattr(ax, f"{name}axis").set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))


def write_figure(fig: Any, path: str | os.PathLike[str], fmt: str | None = None) -> Path:
    """Write ``fig`` to ``path`` atomically in ``fmt`` (default: the suffix's, one of :data:`FORMATS`); the path.

    PNG at ``max(PNG_DPI, fig.dpi)``; PDF and SVG as vectors, reproducibly (no creation date, fixed SVG ids).  A
    full disk or a missing directory: :class:`~ag_attention.OutputError` naming the path (the old file kept); a
    link at the name is replaced, never written through.
    """
    target = Path(path)
    kind = (fmt or target.suffix.lstrip(".")).lower()
    if kind not in FORMATS:
        raise ValueError(f"{target}: a figure is written as " + ", ".join("." + f for f in FORMATS))
    import matplotlib

    options: dict[str, Any] = {"format": kind}
    if kind == "png":
        options["dpi"] = max(PNG_DPI, float(fig.dpi))
    else:
        options["metadata"] = {"CreationDate": None} if kind == "pdf" else {"Date": None}
    # the SVG's element ids from a fixed salt, not a random one: the same figure, the same bytes
    with matplotlib.rc_context({"svg.hashsalt": "ag-attention"}), atomic_open(target, "wb") as fh:
        fig.savefig(fh, **options)  # never through a planted link; a full disk is an OutputError
    return target


def write_figures(fig: Any, base: str | os.PathLike[str], formats: Iterable[str] = FORMATS) -> list[Path]:
    """:func:`write_figure` of ``fig`` once per format, ``base`` with each suffix; the paths written."""
    return [write_figure(fig, Path(base).with_suffix("." + f), f) for f in formats]
