"""What a sweep found: counts per variant of where the formulas' hypotheses hold and agree, and a plot.

A *variant* is what the paper's formulas distinguish besides the sizes:
lightning or normalized attention, the number of tokens ``t``, the depth
``L``, heads, skip connections and causal masking.  For each variant (and in
total) :func:`summarize` counts, over the rows of ``results.parquet``:

``rows``, ``errors``, ``certified``
    architectures; rows whose computation failed; exact (certified) values.
``formula_applies``
    the formula's hypotheses all hold (the paper's and those found by
    ag-attention; see :mod:`ag_attention._models.formulas`).
``applies_agrees``
    it applies and equals the value: certified exact values for lightning
    attention, float64 ranks (not a proof) for normalized attention.
``applies_differs``, ``applies_undecided``
    it applies and is proven different; neither proven equal nor different.
``paper_hypotheses_hold``, ``paper_agrees``, ``paper_proven_wrong``
    the same with only the hypotheses the paper states.
``effective_eligible``, ``effective_agrees``
    (plain lightning, ``t >= 2``) the effective ranks before the last layer
    are at least 2; of those, the certified dimension equals Cor. 3.8 on the
    effective widths (:func:`ag_attention._models.bounds.effective_architecture`).

and, per variant, the rows grouped by which hypotheses fail (``by_failed``),
which shows where each hypothesis is needed.  :func:`write_summary` writes
``summary.md``, ``summary.json`` and, with matplotlib, the plot of every row's
computed dimension against the formula (or, where there is none, against its
proven upper bound), ``dimension-vs-formula.png``, ``.pdf`` and ``.svg``: one marker per
variant, legend entries counting the rows they stand for, a small seeded
jitter so that equal points stay visible, and a note (also in summary.md)
saying which rows are left out and why (:func:`plot_figure`).
"""

from __future__ import annotations

import json
import os
import textwrap
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._figures import integer_ticks, write_figure
from .._files import atomic_write
from .._models import cor38
from .._progress import Steps, bar

__all__ = [
    "summarize",
    "variant",
    "write_summary",
    "markdown",
    "plot",
    "plot_figure",
    "family",
    "jitter",
    "jitter_amplitude",
    "left_out_note",
    "COUNTS",
    "OKABE_ITO",
    "integer_ticks",
]

#: the counts of every variant and of the total, in order
COUNTS = (
    "rows",
    "errors",
    "certified",
    "with_formula",
    "formula_applies",
    "applies_agrees",
    "applies_differs",
    "applies_undecided",
    "paper_hypotheses_hold",
    "paper_agrees",
    "paper_proven_wrong",
    "effective_eligible",
    "effective_agrees",
)
PLOT_FILES = ("dimension-vs-formula.png", "dimension-vs-formula.pdf", "dimension-vs-formula.svg")


def variant(row: Mapping[str, Any]) -> str:
    """``"lightning, t=2, L=3"`` (and heads, skip, causal where not the paper's setting)."""
    parts = ["normalized" if row["normalized"] else "lightning", f"t={row['tokens']}", f"L={row['depth']}"]
    if row["heads"] != 1:
        parts.append(f"heads={row['heads']}")
    if row["skip"]:
        parts.append("skip")
    if row["causal"]:
        parts.append("causal")
    return ", ".join(parts)


def _variant_order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row["normalized"], row["causal"], row["skip"], row["heads"], row["tokens"], row["depth"])


def _agrees(row: Mapping[str, Any]) -> bool:
    """Equal to the formula: a certified exact value, or a float64 rank (never certified, counted as such)."""
    equal = row["dimension"] is not None and row["expected"] is not None and row["dimension"] == row["expected"]
    return bool(equal and (row["certified"] or row["numerical"]))


def _count(row: Mapping[str, Any]) -> Counter[str]:
    c: Counter[str] = Counter(rows=1)
    error = row.get("error") is not None
    agree = _agrees(row)
    c["errors"] += error
    c["certified"] += bool(row["certified"])
    c["with_formula"] += row["expected"] is not None
    if row["formula_applies"]:
        c["formula_applies"] += 1
        c["applies_agrees"] += agree
        c["applies_differs"] += row["agrees"] is False
        c["applies_undecided"] += not agree and row["agrees"] is not False
    if row["paper_hypotheses_hold"]:
        c["paper_hypotheses_hold"] += 1
        c["paper_agrees"] += agree
        c["paper_proven_wrong"] += row["agrees"] is False
    eff_ranks = row["effective_ranks"]
    if (
        not row["normalized"]
        and row["heads"] == 1
        and not row["skip"]
        and row["tokens"] >= 2
        and all(a >= 2 for a in eff_ranks[:-1])
    ):
        c["effective_eligible"] += 1
        value = cor38(tuple(row["effective_widths"]), tuple(eff_ranks))
        c["effective_agrees"] += bool(row["certified"]) and row["dimension"] == value
    return c


def _counts(c: Counter[str]) -> dict[str, int]:
    return {k: int(c[k]) for k in COUNTS}


def summarize(rows: Sequence[Mapping[str, Any]], *, info: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Counts per variant and in total (see the module's docstring), plus ``info`` (grid, prime, seed, ...)."""
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    formulas: dict[str, Counter[str]] = defaultdict(Counter)
    failed: dict[str, dict[tuple[str, ...], Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    order: dict[str, tuple[Any, ...]] = {}
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    total: Counter[str] = Counter()
    for row in rows:
        v = variant(row)
        order.setdefault(v, _variant_order(row))
        c = _count(row)
        groups[v].update(c)
        total.update(c)
        kinds[v][row["certificate_kind"]] += 1
        if row["formula"] is not None:
            formulas[v][row["formula"]] += 1
            f = failed[v][tuple(row["failed_hypotheses"])]
            f["rows"] += 1
            f["agrees"] += _agrees(row)
            f["differs"] += row["agrees"] is False
            f["errors"] += c["errors"]
    variants = []
    for v in sorted(groups, key=lambda name: order[name]):
        by_failed = [
            {
                "failed_hypotheses": list(hyps),
                "rows": f["rows"],
                "agrees": f["agrees"],
                "differs": f["differs"],
                "undecided": f["rows"] - f["agrees"] - f["differs"] - f["errors"],
                "errors": f["errors"],
            }
            for hyps, f in sorted(failed[v].items(), key=lambda item: (len(item[0]), item[0]))
        ]
        variants.append(
            {
                "variant": v,
                "formula": ", ".join(sorted(formulas[v])) or None,
                **_counts(groups[v]),
                "certificate_kinds": dict(sorted(kinds[v].items())),
                "by_failed": by_failed,
            }
        )
    return {**dict(info or {}), "total": _counts(total), "variants": variants}


# ------------------------------------------------------------------ writing
_TABLE = (
    ("variant", "variant"),
    ("rows", "rows"),
    ("certified", "certified"),
    ("formula", "formula"),
    ("formula_applies", "applies"),
    ("applies_agrees", "applies, agrees"),
    ("applies_differs", "applies, proven different"),
    ("applies_undecided", "applies, undecided"),
    ("paper_hypotheses_hold", "paper's hypotheses"),
    ("paper_proven_wrong", "paper's, proven wrong"),
    ("effective_eligible", "eff. ranks >= 2"),
    ("effective_agrees", "= Cor. 3.8 on eff. widths"),
    ("errors", "errors"),
)


def _cell(value: Any) -> str:
    return "-" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def markdown(summary: Mapping[str, Any], *, details: bool = True) -> str:
    """The summary as Markdown: one table of counts per variant, then where the hypotheses fail."""
    lines = ["# Sweep summary", ""]
    if summary.get("description"):
        lines += [str(summary["description"]), ""]
    t = summary["total"]
    facts = [f"{t['rows']:,} architectures", f"{t['certified']:,} certified exact"]
    if t["errors"]:
        facts.append(f"{t['errors']:,} failed (see the `error` column)")
    for key, label in (("grid", "grid"), ("prime", "prime"), ("seed", "seed"), ("seconds", "seconds")):
        if summary.get(key) is not None:
            facts.append(f"{label} {summary[key]}")
    lines += ["; ".join(facts) + ".", ""]
    lines += ["| " + " | ".join(label for _, label in _TABLE) + " |", "|" + "---|" * len(_TABLE)]
    for v in summary["variants"]:
        lines.append("| " + " | ".join(_cell(v.get(key)) for key, _ in _TABLE) + " |")
    if len(summary["variants"]) > 1:
        lines.append(
            "| " + " | ".join(["**all**"] + [_cell(t.get(key)) if key in t else "" for key, _ in _TABLE[1:]]) + " |"
        )
    lines += [
        "",
        "Counts: *applies* = every hypothesis holds (the paper's and those found by ag-attention); "
        "*agrees* = certified exact and equal (float64 rank for normalized attention, not a proof); "
        "*proven different* = an exact value or bound excludes the formula.",
        "",
    ]
    if details:
        for v in summary["variants"]:
            if not v["by_failed"]:
                continue
            lines += [
                f"## {v['variant']}: which hypotheses fail ({v['formula']})",
                "",
                "| failed hypotheses | rows | agrees | proven different | undecided | errors |",
                "|---|---|---|---|---|---|",
            ]
            for f in v["by_failed"]:
                hyps = "; ".join(f["failed_hypotheses"]) or "none (the formula applies)"
                lines.append(
                    f"| {hyps} | {f['rows']:,} | {f['agrees']:,} | {f['differs']:,} | {f['undecided']:,} | "
                    f"{f['errors']:,} |"
                )
            lines.append("")
    plots = summary.get("plots")
    if plots:
        lines += ["## Plot", "", f"Dimension against the formula: {', '.join(plots)}."]
        shown = summary.get("plot")
        if shown:
            text = (
                f"It shows {shown['plotted']:,} of {shown['rows']:,} rows ({shown['against_formula']:,} against "
                f"the formula, {shown['against_upper_bound']:,} without one against their proven upper bound), "
                "one marker per variant, each dot jittered a little (seeded) so that equal values stay visible"
            )
            note = left_out_note(shown["left_out"])
            lines[-1] += " " + text + (f"; {note}." if note else ".")
        lines.append("")
    elif summary.get("plot_note"):
        lines += ["## Plot", "", str(summary["plot_note"]), ""]
    return "\n".join(lines).rstrip() + "\n"


# ------------------------------------------------------------------ the plot
#: the largest jitter in data units on an axis spanning at most JITTER_SPAN (the values are integers: a dot never
#: moves halfway to the next one)
JITTER_UNITS = 0.3
JITTER_SPAN = 25
#: the jitter as a fraction of the span of a wider axis (where single units are not visible anyway)
JITTER_FRACTION = 0.012
#: the seed of the jitter's generator: the same picture on every run
JITTER_SEED = 0
#: the Okabe-Ito palette: colours told apart with every common colour-vision deficiency (Okabe & Ito 2002)
OKABE_ITO = {
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "black": "#000000",
}
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
_STATUS = (
    ("certified, formula applies", OKABE_ITO["blue"]),
    ("certified, formula does not apply", OKABE_ITO["orange"]),
    ("certified, no formula", OKABE_ITO["bluish green"]),
    ("not certified (lower bound or float64 rank)", "#999999"),
)


def family(row: Mapping[str, Any]) -> str:
    """The plot's marker of a row: ``"lightning"``, ``"lightning, 2 heads, causal"``, ``"normalized, skip"``..."""
    parts = ["normalized" if row["normalized"] else "lightning"]
    if row["heads"] != 1:
        parts.append(f"{row['heads']} heads")
    parts += [name for name in ("skip", "causal") if row[name]]
    return ", ".join(parts)


def _family_order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (bool(row["normalized"]), int(row["heads"]), bool(row["skip"]), bool(row["causal"]))


def jitter_amplitude(span: float) -> float:
    """How far (at most, along each axis) the plot moves a dot on an axis spanning ``span``."""
    return JITTER_UNITS if span <= JITTER_SPAN else JITTER_FRACTION * span


def jitter(xs: Sequence[float], ys: Sequence[float], amplitude: float, seed: int = JITTER_SEED) -> tuple[Any, Any]:
    """``xs`` and ``ys`` each moved by a uniform amount in ``[-amplitude, amplitude]`` (seeded: deterministic).

    Identical points become a small cloud of as many dots, so none hides another.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    return x + rng.uniform(-amplitude, amplitude, len(x)), y + rng.uniform(-amplitude, amplitude, len(y))


def _status(row: Mapping[str, Any]) -> str:
    if not row["certified"]:
        return _STATUS[3][0]
    if row["expected"] is None:
        return _STATUS[2][0]
    return _STATUS[0][0] if row["formula_applies"] else _STATUS[1][0]


def _placed(rows: Iterable[Mapping[str, Any]]) -> tuple[list[Any], list[Any], Counter[str], int]:
    """Rows against the formula, rows without one against their proven upper bound, what is left out, how many."""
    formula: list[Any] = []
    bound: list[Any] = []
    left: Counter[str] = Counter()
    total = 0
    for row in rows:
        total += 1
        if row["dimension"] is None:
            left["computation failed" if row.get("error") is not None else "no float64 verdict (no clear gap)"] += 1
        elif row["expected"] is not None:
            formula.append((int(row["expected"]), int(row["dimension"]), row))
        elif row["upper_bound"] is not None:
            bound.append((int(row["upper_bound"]), int(row["dimension"]), row))
        else:
            left["no formula and no upper bound"] += 1
    return formula, bound, left, total


_LEFT_OUT = {
    "computation failed": "its computation failed",
    "no float64 verdict (no clear gap)": "no float64 verdict",
    "no formula and no upper bound": "no formula and no upper bound to plot against",
}


def left_out_note(left: Mapping[str, int]) -> str:
    """``"left out: 1 row without a dimension (its computation failed)"`` (``""`` when nothing is)."""
    parts = []
    no_dimension = {k: v for k, v in left.items() if k != "no formula and no upper bound"}
    if no_dimension:
        n = sum(no_dimension.values())
        why = ", ".join(
            f"{v:,} {_LEFT_OUT[k]}" if len(no_dimension) > 1 else _LEFT_OUT[k] for k, v in no_dimension.items()
        )
        parts.append(f"{n:,} row{'s' if n != 1 else ''} without a dimension ({why})")
    if left.get("no formula and no upper bound"):
        n = left["no formula and no upper bound"]
        parts.append(f"{n:,} row{'s' if n != 1 else ''} with no formula and no upper bound to plot against")
    return "left out: " + "; ".join(parts) if parts else ""


def plot_figure(rows: Iterable[Mapping[str, Any]], title: str = "") -> tuple[Any, dict[str, Any]] | str:
    """The plot of ``rows`` (a matplotlib Figure) and what it shows; or a note why there is none.

    Every row with a dimension is a dot: against the formula where there is one (left panel), else against
    its proven upper bound (right panel: several heads, causal masks...).  The marker says the variant
    (:func:`family`), the colour whether the value is certified and the formula applies; each legend entry
    gives how many rows it stands for.  Dots are jittered (:func:`jitter`, at most
    :func:`jitter_amplitude` along each axis, seeded) so that identical points stay visible.  Rows without a
    dimension (failed, no float64 verdict) are counted in a note under the plot.  The dict: ``rows``,
    ``plotted``, ``against_formula``, ``against_upper_bound``, ``left_out`` (reason: rows), ``legend``
    (label: rows), ``jitter`` (``amplitudes``, one per panel, and ``seed``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return "plots skipped: matplotlib is not installed (pip install matplotlib: the package's extra 'plot')"
    formula, bound, left, total = _placed(rows)
    if not formula and not bound:
        return "no plot: no row has a dimension" + (f" ({left_out_note(left)})" if left else "")
    panels = _panels(formula, bound)
    everything = [p for pts, _, _ in panels for p in pts]
    families = sorted(
        {family(r) for _, _, r in everything},
        key=lambda name: next(_family_order(r) for _, _, r in everything if family(r) == name),
    )
    marker = {name: _MARKERS[i % len(_MARKERS)] for i, name in enumerate(families)}
    fig = Figure(figsize=(5.4 * len(panels) + 2.6, 5.4), layout="constrained")
    FigureCanvasAgg(fig)
    amplitudes = [
        _draw_panel(fig.add_subplot(1, len(panels), i + 1), i, *panel, marker) for i, panel in enumerate(panels)
    ]
    by_family, by_status = _legends(fig, everything, families, marker)
    fig.suptitle(textwrap.fill(title or "The computed dimension of every row against the formula.", 90), fontsize=9)
    note = [
        f"{len(everything):,} of {total:,} rows shown, each a dot jittered by at most "
        f"{' / '.join(f'{a:.2g}' for a in amplitudes)} (seeded) so that equal values stay visible"
    ]
    if left:
        note.append(left_out_note(left))
    fig.supxlabel(textwrap.fill("; ".join(note), 130), fontsize=7)
    info = {
        "rows": total,
        "plotted": len(everything),
        "against_formula": len(formula),
        "against_upper_bound": len(bound),
        "left_out": dict(left),
        "legend": {**{n: by_family[n] for n in families}, **{n: by_status[n] for n, _ in _STATUS if by_status[n]}},
        "jitter": {"amplitudes": amplitudes, "seed": JITTER_SEED},
    }
    return fig, info


_Placed = list[tuple[float, float, Mapping[str, Any]]]


def _panels(formula: _Placed, bound: _Placed) -> list[tuple[_Placed, str, str]]:
    """The panels with points: against the formula, against the upper bound (x label, what the line means)."""
    return [
        (pts, xlabel, diagonal)
        for pts, xlabel, diagonal in (
            (
                formula,
                "dimension predicted by the formula (Cor. 3.3, Cor. 3.8, Thm. 3.9, Eq. 16)",
                "against the formula; on the line the dimension equals it.",
            ),
            (
                bound,
                "proven upper bound on the dimension",
                "without a formula, against their proven upper bound; on the line the dimension meets it.",
            ),
        )
        if pts
    ]


def _draw_panel(ax: Any, i: int, pts: _Placed, xlabel: str, diagonal: str, marker: Mapping[str, str]) -> float:
    """Panel ``i``: its jittered dots (marker: the variant, colour: the status) and the diagonal; the jitter."""
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    lo, hi = min(xs + ys), max(xs + ys)
    a = jitter_amplitude(hi - lo)
    jx, jy = jitter(xs, ys, a, seed=JITTER_SEED + i)
    ax.axline((lo, lo), slope=1, color="black", linewidth=0.8, zorder=0)  # across the panel, even where lo = hi
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, (_, _, row) in enumerate(pts):
        groups[(family(row), _status(row))].append(k)
    for (name, status), idx in sorted(groups.items()):
        ax.scatter(jx[idx], jy[idx], s=14, marker=marker[name], color=dict(_STATUS)[status], alpha=0.55, linewidths=0.6)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("computed dimension")
    ax.set_title(textwrap.fill(f"{len(pts):,} row{'s' if len(pts) != 1 else ''} {diagonal}", 70), fontsize=8)
    integer_ticks(ax)  # dimensions
    return a


def _legends(
    fig: Any, everything: _Placed, families: list[str], marker: Mapping[str, str]
) -> tuple[Counter[str], Counter[str]]:
    """The two legends (variants, statuses), each entry with its number of rows; those numbers."""
    from matplotlib.lines import Line2D  # optional: matplotlib

    by_family = Counter(family(r) for _, _, r in everything)
    by_status = Counter(_status(r) for _, _, r in everything)
    variants = [
        (
            Line2D([], [], marker=marker[n], linestyle="none", color="black", markerfacecolor="none"),
            f"{n} ({by_family[n]:,})",
        )
        for n in families
    ]
    statuses = [
        (Line2D([], [], marker="s", linestyle="none", color=c), f"{n} ({by_status[n]:,})")
        for n, c in _STATUS
        if by_status[n]
    ]
    fig.legend(*zip(*variants), loc="outside right upper", fontsize=7, title="variant (rows)", title_fontsize=7)
    fig.legend(*zip(*statuses), loc="outside right lower", fontsize=7, title="value (rows)", title_fontsize=7)
    return by_family, by_status


def plot(rows: Iterable[Mapping[str, Any]], out: Path, title: str = "") -> list[str] | str:
    """Write :func:`plot_figure` of ``rows`` to ``out``/dimension-vs-formula.png, .pdf and .svg, atomically.

    Returns the files written, or a note why there is no plot (no matplotlib, nothing to plot).
    """
    made = plot_figure(rows, title)
    if isinstance(made, str):
        return made
    return _save(made[0], out)


def _save(fig: Any, out: Path, steps: Steps | None = None) -> list[str]:
    written = []
    steps = steps or Steps()
    for name in PLOT_FILES:
        ext = name.rsplit(".", 1)[-1]
        steps.begin(f"writing {name}")
        write_figure(fig, out / name, ext)  # atomically, never through a link planted at the name
        written.append(name)
        steps.end()
    return written


def write_summary(
    rows: Sequence[Mapping[str, Any]],
    out: str | os.PathLike[str],
    *,
    info: Mapping[str, Any] | None = None,
    plots: bool = True,
) -> dict[str, Any]:
    """Summarize ``rows`` and write ``summary.md``, ``summary.json`` and the plots into ``out``.

    ``summary["plot"]`` says what the plot shows (see :func:`plot_figure`): how many rows, which are left out,
    the legend's counts and the jitter.
    """
    directory = Path(out)
    # a big sweep's summary takes seconds (41,000 rows: about 4 s, most in the SVG): a bar after 2 s on a terminal
    with bar(total=2 + (1 + len(PLOT_FILES) if plots else 0), desc="sweep: summary", unit="step") as b:
        steps = Steps(b)
        steps.begin("counting")
        summary = summarize(rows, info=info)
        steps.end()
        if plots:
            steps.begin("drawing the plot")
            made = plot_figure(rows, title=str((info or {}).get("description") or ""))
            steps.end()
            if isinstance(made, str):
                summary["plot_note"] = made
            else:
                summary["plots"] = _save(made[0], directory, steps)
                summary["plot"] = made[1]
        else:
            summary["plot_note"] = "plots not requested"
        steps.begin("writing summary.md and summary.json")
        for name, text in (("summary.json", json.dumps(summary, indent=2) + "\n"), ("summary.md", markdown(summary))):
            atomic_write(directory / name, text)
        steps.end()
    return summary
