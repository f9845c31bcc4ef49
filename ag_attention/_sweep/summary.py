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
``summary.md``, ``summary.json`` and, with matplotlib, the plot of the computed
dimension against the formula, ``dimension-vs-formula.png`` and ``.svg``.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._files import atomic_open, atomic_write
from .._models.formulas import cor38

__all__ = ["summarize", "variant", "write_summary", "markdown", "plot", "COUNTS"]

#: the counts of every variant and of the total, in order
COUNTS = (
    "rows", "errors", "certified", "with_formula", "formula_applies", "applies_agrees", "applies_differs",
    "applies_undecided", "paper_hypotheses_hold", "paper_agrees", "paper_proven_wrong", "effective_eligible",
    "effective_agrees",
)
PLOT_FILES = ("dimension-vs-formula.png", "dimension-vs-formula.svg")


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
    if (not row["normalized"] and row["heads"] == 1 and not row["skip"] and row["tokens"] >= 2
            and all(a >= 2 for a in eff_ranks[:-1])):
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
            {"failed_hypotheses": list(hyps), "rows": f["rows"], "agrees": f["agrees"], "differs": f["differs"],
             "undecided": f["rows"] - f["agrees"] - f["differs"] - f["errors"], "errors": f["errors"]}
            for hyps, f in sorted(failed[v].items(), key=lambda item: (len(item[0]), item[0]))
        ]
        variants.append({"variant": v, "formula": ", ".join(sorted(formulas[v])) or None, **_counts(groups[v]),
                         "certificate_kinds": dict(sorted(kinds[v].items())), "by_failed": by_failed})
    return {**dict(info or {}), "total": _counts(total), "variants": variants}


# ------------------------------------------------------------------ writing
_TABLE = (
    ("variant", "variant"), ("rows", "rows"), ("certified", "certified"), ("formula", "formula"),
    ("formula_applies", "applies"), ("applies_agrees", "applies, agrees"), ("applies_differs", "applies, proven different"),
    ("applies_undecided", "applies, undecided"), ("paper_hypotheses_hold", "paper's hypotheses"),
    ("paper_proven_wrong", "paper's, proven wrong"), ("effective_eligible", "eff. ranks >= 2"),
    ("effective_agrees", "= Cor. 3.8 on eff. widths"), ("errors", "errors"),
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
        lines.append("| " + " | ".join(["**all**"] + [_cell(t.get(key)) if key in t else "" for key, _ in _TABLE[1:]]) + " |")
    lines += ["", "Counts: *applies* = every hypothesis holds (the paper's and those found by ag-attention); "
              "*agrees* = certified exact and equal (float64 rank for normalized attention, not a proof); "
              "*proven different* = an exact value or bound excludes the formula.", ""]
    if details:
        for v in summary["variants"]:
            if not v["by_failed"]:
                continue
            lines += [f"## {v['variant']}: which hypotheses fail ({v['formula']})", "",
                      "| failed hypotheses | rows | agrees | proven different | undecided | errors |",
                      "|---|---|---|---|---|---|"]
            for f in v["by_failed"]:
                hyps = "; ".join(f["failed_hypotheses"]) or "none (the formula applies)"
                lines.append(f"| {hyps} | {f['rows']:,} | {f['agrees']:,} | {f['differs']:,} | {f['undecided']:,} | "
                             f"{f['errors']:,} |")
            lines.append("")
    plots = summary.get("plots")
    if plots:
        lines += ["## Plot", "", f"Dimension against the formula: {', '.join(plots)}.", ""]
    elif summary.get("plot_note"):
        lines += ["## Plot", "", str(summary["plot_note"]), ""]
    return "\n".join(lines).rstrip() + "\n"


def plot(rows: Iterable[Mapping[str, Any]], out: Path, title: str = "") -> list[str] | str:
    """Computed dimension against the formula, one marker per (value, formula, kind) sized by its count.

    Returns the files written, or a note why there is no plot (no matplotlib, nothing to plot).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return "plots skipped: matplotlib is not installed (pip install 'ag-attention[plot]')"
    kinds = {"formula applies": "tab:blue", "formula does not apply": "tab:orange",
             "lower bound / numerical": "tab:gray"}
    points: dict[str, Counter[tuple[int, int]]] = {k: Counter() for k in kinds}
    for row in rows:
        if row["dimension"] is None or row["expected"] is None:
            continue
        kind = ("lower bound / numerical" if not row["certified"]
                else "formula applies" if row["formula_applies"] else "formula does not apply")
        points[kind][(int(row["expected"]), int(row["dimension"]))] += 1
    if not any(points.values()):
        return "no plot: no row has both a dimension and a formula"
    fig = Figure(figsize=(6.4, 5.6), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    top = max(max(max(x, y) for x, y in pts) for pts in points.values() if pts)
    ax.plot([0, top], [0, top], color="black", linewidth=0.8, label="dimension = formula")
    for kind, pts in points.items():
        if not pts:
            continue
        xs, ys = zip(*pts)
        sizes = [12 + 6 * n**0.5 for n in pts.values()]
        ax.scatter(xs, ys, s=sizes, color=kinds[kind], alpha=0.6, edgecolors="none",
                   label=f"{kind} ({sum(pts.values()):,})")
    ax.set_xlabel("formula (Cor. 3.3 / 3.8, Thm. 3.9, Eq. 16)")
    ax.set_ylabel("computed dimension")
    ax.set_title(textwrap.fill(title or "dimension against the formula", 70), fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    written = []
    for name in PLOT_FILES:
        ext = name.rsplit(".", 1)[-1]
        with atomic_open(out / name, "wb") as fh:  # never through a link planted at the name
            fig.savefig(fh, format=ext, dpi=150 if ext == "png" else None)
        written.append(name)
    return written


def write_summary(rows: Sequence[Mapping[str, Any]], out: str | os.PathLike[str], *,
                  info: Mapping[str, Any] | None = None, plots: bool = True) -> dict[str, Any]:
    """Summarize ``rows`` and write ``summary.md``, ``summary.json`` and the plots into ``out``."""
    directory = Path(out)
    summary = summarize(rows, info=info)
    if plots:
        made = plot(rows, directory, title=str((info or {}).get("description") or ""))
        if isinstance(made, str):
            summary["plot_note"] = made
        else:
            summary["plots"] = made
    else:
        summary["plot_note"] = "plots not requested"
    for name, text in (("summary.json", json.dumps(summary, indent=2) + "\n"), ("summary.md", markdown(summary))):
        atomic_write(directory / name, text)
    return summary
