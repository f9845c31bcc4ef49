"""Reproduce Figure 3: normalized and lightning networks, L = 2, t = 3, a_i = 2, d_i = delta.

``delta`` is the common width of the network: input, hidden layer and output
all have dimension ``d_0 = d_1 = d_2 = delta``.  For ``delta = 3..10`` and
``N = 250`` input sequences: the dimension of the normalized (softmax)
network, estimated from float64 singular values (rank at the largest gap, the
gap reported) and certified (a lower bound by ball arithmetic, an upper bound
by the symmetry families 1 and 2, see ``ag_attention/_numeric/certified.py``),
against Eq. 16 (Conjecture 3.10); and the dimension of the lightning network,
exact over GF(p), against Cor. 3.8. Writes ``figure3.png``, ``.pdf`` and
``.svg`` (estimated and expected as separate series, from the computed
values), ``figure3.json`` (rows ``delta, normalized, estimated, expected, gap,
certified, lower, upper``) and the report.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._architecture import Architecture
from .._exact import dimension
from .._files import atomic_write, output_error
from .._models import expected_dimension
from .._numeric import NoClearGapError, numerical_dimension
from .._progress import bar
from .._sweep import integer_ticks
from .claims import Claim
from .report import FIGURE_FORMATS, Check, Report, Table, pyplot, save_figure, written
from .sources import Source

__all__ = ["figure3_rows", "reproduce_figure_3", "draw_figure3", "plot_figure3"]

_NORMALIZED_METHOD = "ball-arithmetic lower bound + symmetry upper bound (float64 SVD for the rank)"


#: the column "expected": the paper's formulas, evaluated by the package (not numbers the paper printed)
EXPECTED = Source.theorem(
    "Henry, Marchetti, Kohn, Geometry of Lightning Self-Attention: Eq. 16 (Conjecture 3.10) for normalized "
    "networks, Cor. 3.8 for lightning ones, evaluated by expected_dimension"
)


def figure3_rows(deltas: Iterable[int] = range(3, 11), samples: int = 250, seed: int = 0) -> list[dict[str, Any]]:
    rows = []
    deltas = list(deltas)
    with bar(total=2 * len(deltas), desc="Figure 3", unit="network") as b:
        for delta in deltas:
            for normalized in (True, False):
                rows.append(_row(delta, normalized, samples, seed))
                b.update(1)
    return rows


def _row(delta: int, normalized: bool, samples: int, seed: int) -> dict[str, Any]:
    """One network of Figure 3: its dimension (certified bounds for softmax, exact for lightning) against Eq. 16.

    ``lower`` and ``upper`` are the proven bounds (softmax: ball arithmetic and the symmetry families 1 and 2;
    lightning: the GF(p) rank and the exact upper bound); ``certified`` when they meet.
    """
    arch = Architecture((delta,) * 3, (2, 2), tokens=3, normalized=normalized)
    t0 = time.perf_counter()
    if normalized:
        try:
            num = numerical_dimension(arch, seed=seed, samples=samples)
            reported = num.gap.reported  # to the noise level where the smaller side is noise: reproducible
            est, gap = num.dimension, None if reported is None else round(reported, 2)
            certified, lower, upper = num.certified, num.lower_bound, num.upper_bound
        except NoClearGapError:
            est, gap, certified, lower, upper = None, None, False, None, None
        return {
            "delta": delta,
            "normalized": True,
            "estimated": est,
            "expected": expected_dimension(arch).value,
            "gap": gap,
            "certified": certified,
            "lower": lower,
            "upper": upper,
            "seconds": round(time.perf_counter() - t0, 3),
        }
    exact = dimension(arch, seed=seed, samples=samples)
    return {
        "delta": delta,
        "normalized": False,
        "estimated": exact.dimension,
        "expected": exact.expected.value,
        "gap": None,
        "certified": exact.certified,
        "lower": exact.dimension,
        "upper": exact.upper_bound,
        "seconds": round(time.perf_counter() - t0, 3),
    }


def _normalized_label(rows: list[dict[str, Any]]) -> str:
    done = sum(bool(r["certified"]) for r in rows)
    if done == len(rows):
        return "certified by ball arithmetic and symmetries"
    return f"float64 SVD at the largest gap, {done} of {len(rows)} certified"


#: (normalized, colour, line style of the expected value, marker, its size, filled, name, formula): Okabe-Ito
#: colours, and a line style and a marker of its own for each network, so that the two curves (2 apart on a
#: scale of 170) stay apart in grey too
_SERIES = (
    (True, "#0072B2", "-", "o", 8, False, "normalized (softmax)", "Eq. 16, Conjecture 3.10"),
    (False, "#D55E00", (0, (5, 2)), "s", 5, True, "lightning", "Cor. 3.8"),
)


def draw_figure3(rows: list[dict[str, Any]], *, samples: int | None = None) -> Any:
    """Figure 3 of ``rows`` (:func:`figure3_rows`) as a matplotlib figure; the caller saves and closes it.

    Upper panel: the dimension against ``delta``, expected (a line per network) and computed (markers; each
    legend entry counts the networks it shows).  Lower panel: the difference to Cor. 3.8, where the two curves,
    2 apart on a scale of 170 above, are far apart (Eq. 16's ``+ L``).  Integer axes have integer ticks.
    ``samples``: the number of input sequences, named in the title when given.
    """

    plt = pyplot()
    fig, (ax, ax2) = plt.subplots(
        2, 1, figsize=(7.5, 7.6), dpi=130, gridspec_kw={"height_ratios": [2.2, 1]}, sharex=True
    )
    lightning_expected = {r["delta"]: r["expected"] for r in rows if not r["normalized"]}
    for normalized, color, ls, marker, size, filled, name, formula in _SERIES:
        sel = [r for r in rows if r["normalized"] is normalized]
        if not sel:
            continue
        deltas = [r["delta"] for r in sel]
        est = [(r["delta"], r["estimated"]) for r in sel if r["estimated"] is not None]
        computed = _normalized_label(sel) if normalized else r"exact rank over $\mathrm{GF}(p)$, certified"
        style = {
            "ls": "none",
            "marker": marker,
            "ms": size,
            "mec": color,
            "mew": 1.4,
            "mfc": color if filled else "white",
        }
        expected_style = {"ls": ls, "lw": 1.6, "color": color}
        ax.plot(deltas, [r["expected"] for r in sel], **expected_style, label=f"{name}, expected: {formula}")
        if est:
            ax.plot(
                [d for d, _ in est],
                [e for _, e in est],
                **style,
                label=f"{name}, computed: {computed} ({len(est)} network{'s' if len(est) != 1 else ''})",
            )
        # the difference to Cor. 3.8 makes the "+ L" of Eq. 16 visible
        ax2.plot(deltas, [r["expected"] - lightning_expected[r["delta"]] for r in sel], **expected_style)
        if est:
            ax2.plot([d for d, _ in est], [e - lightning_expected[d] for d, e in est], **style)
    ax2.set_xlabel(r"$\delta = d_0 = d_1 = d_2$, the width of input, hidden layer and output")
    ax2.set_ylabel(r"dimension $-$ Cor. 3.8")
    diffs = [r[k] - lightning_expected[r["delta"]] for r in rows for k in ("expected", "estimated") if r[k] is not None]
    ax2.set_ylim(min(diffs + [0]) - 0.6, max(diffs + [3]) + 0.4)
    ax2.grid(alpha=0.3)
    ax.set_ylabel(r"dimension of the neuromanifold $\mathcal{M}$")
    n = "" if samples is None else f", $N = {samples}$ input sequences"
    ax.set_title(rf"Figure 3: two layers ($L = 2$) with $t = 3$ tokens and $a_1 = a_2 = 2${n}.", fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper left")
    integer_ticks(ax, "y")
    integer_ticks(ax2, "xy")  # the shared delta axis too (one delta alone: 2, 3, 4 rather than 2.8, 3.0...)
    fig.tight_layout()
    return fig


def plot_figure3(rows: list[dict[str, Any]], path: Path, *, samples: int | None = None) -> Path:
    """Save :func:`draw_figure3` as PNG, PDF and SVG (atomically); the PNG's path."""
    fig = draw_figure3(rows, samples=samples)
    try:
        return save_figure(fig, path.with_suffix(".png"))[0]
    finally:
        pyplot().close(fig)


def reproduce_figure_3(
    out: str | Path | None = None, *, seed: int = 0, samples: int = 250, deltas: Iterable[int] = range(3, 11)
) -> Report:
    report = Report(
        "Figure 3: dimension of normalized and lightning two-layer networks",
        summary=(
            "Two-layer networks (L = 2) with t = 3 tokens and attention ranks a_1 = a_2 = 2, all widths equal: "
            "delta = d_0 = d_1 = d_2 is the dimension of the input, the hidden layer and the output. "
            "Normalized rows: float64 Jacobian on N Gaussian input sequences, rank at the largest gap of the "
            "singular values (the gap is in orders of magnitude), and certified: a lower bound by ball "
            "arithmetic (a minor of the Jacobian at a dyadic point whose arb determinant ball excludes 0) "
            "and an upper bound by the symmetry families 1 and 2 (P minus the GF(p) rank of their tangents); "
            "'certified' when they meet. Lightning rows: exact rank over GF(p) with the symmetry upper bound."
        ),
        meta={"seed": seed, "samples": samples, "delta": "d_0 = d_1 = d_2 (input, hidden and output width)"},
    )
    rows = figure3_rows(deltas, samples, seed)
    for r in rows:
        kind = "normalized" if r["normalized"] else "lightning"
        report.add(
            Check(
                "Eq. 16 (Conjecture 3.10)" if r["normalized"] else "Cor. 3.8",
                f"{kind}, delta={r['delta']}",
                _NORMALIZED_METHOD if r["normalized"] else "GF(p) rank + symmetry bound",
                r["expected"],
                r["estimated"] if r["estimated"] is not None else "no clear gap",
                r["estimated"] == r["expected"] and r["certified"],
                r["seconds"],
                {
                    "gap_orders_of_magnitude": r["gap"],
                    "lower_bound": r["lower"],
                    "upper_bound": r["upper"],
                    "certified": r["certified"],
                },
                topic=Claim.EQ_16 if r["normalized"] else Claim.COR_38,
                techniques=(
                    ("ball arithmetic (arb) minor", "symmetry families 1 and 2 over GF(p)", "float64 SVD, largest gap")
                    if r["normalized"]
                    else ("GF(p) rank + symmetry bound",)
                ),
            )
        )
    report.tables.append(
        Table(
            "Figure 3",
            ["delta", "normalized", "estimated", "expected", "gap", "lower", "upper", "certified", "s"],
            [
                [
                    r["delta"],
                    r["normalized"],
                    r["estimated"],
                    r["expected"],
                    r["gap"],
                    r["lower"],
                    r["upper"],
                    r["certified"],
                    r["seconds"],
                ]
                for r in rows
            ],
            source=EXPECTED,
        )
    )
    if out is not None:
        target = Path(out)

        def save_json() -> Path:
            try:
                target.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise output_error(target, exc, "create the directory") from None
            return atomic_write(target / "figure3.json", json.dumps(rows, indent=2) + "\n")

        written(report, save_json)
        if written(report, lambda: plot_figure3(rows, target / "figure3.png", samples=samples)) is not None:
            report.meta["picture"] = "figure3.png"
            report.meta["figures"] = [f"figure3.{ext}" for ext in FIGURE_FORMATS]
    return report
