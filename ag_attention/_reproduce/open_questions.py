"""Open questions of Section 4: several heads, skip connections, causal masks, and heads with a mask.

``reproduce_open_questions(out)`` runs four sweeps (grid files ``sweeps/open-*.toml``
and ``sweeps/causal.toml``; ``quick`` uses the ``*-quick`` grids) into ``out/sweeps/NAME``,
compares every computed dimension with the candidate formulas below, and writes
``report.md``, ``report.json``, ``open-questions.json`` (every comparison) and one figure
per variant (computed against predicted, PNG, PDF and SVG).

Evidence.  Only *certified* rows count: the sweep's certificate (a GF(p) rank,
a proven lower bound, meeting a proven upper bound), or, for one layer, the lower
bound meeting the *ambient bound* derived here: every head's function is a
polynomial map whose coefficients are the ``N`` reduced coordinates of one layer
(``ag_attention.Parametrization(..., coords="reduced")``), and a sum of heads has
the same monomials, so ``dim <= N`` for any number of heads.  An uncertified row
is listed as *open* with its lower and upper bounds, never as evidence (when its proven
bounds exclude a prediction it is listed apart, as "refuted by bounds", and not
counted among the certified counterexamples).  A
comparison with another row (skip against plain, masked against unmasked) needs
both rows certified.

Candidate formulas (``P`` = parameters, ``S`` =
:func:`ag_attention._models.formulas.symmetry_count`: ``GL_{a_i}`` on the queries and
keys of every head (Thm. 3.7's first family, per head), one rescaling per head and
layer, ``GL_{d_i}`` between layers without skip connections; head permutations are
finite and remove no dimension):

* ``heads-symmetry``: ``dim = P - S`` of the effective architecture
  (:func:`ag_attention._models.bounds.effective_architecture`: hidden widths
  ``min(d_i, H e_{i-1})``, the same neuromanifold), capped at ``N`` for one layer.
  Hypotheses: lightning, ``t >= 2``, no mask.
* ``heads-mixing``: ``A`` of full rank (``a_i = d_{i-1}``) lets heads mix:
  ``sum_h A_h (x) V_h`` is unchanged by ``GL_H`` acting on the pairs, so one layer
  gives ``min(H (d^2 + d d') - H^2, N)``, and ``L`` layers
  ``sum_i [H (d_{i-1}^2 + d_i d_{i-1}) - H^2] - sum_{0<i<L} d_i^2``, capped at ``N``
  for ``L = 1``.  Hypotheses: ``a_i = d_{i-1}`` and ``H <= min(d_{i-1}^2, d_i d_{i-1})``
  (the pairs can be independent) for all ``i``, ``t >= 2``, no mask.
* ``skip-translate``: a skip connection adds a fixed term, so ``dim(skip) = dim(plain)``
  of the same widths, ranks and tokens.  Hypotheses: equal widths.
* ``skip-symmetry``: ``dim(skip) = P - S`` (skip networks are their own effective architecture; no ``GL_{d_i}``
  between layers: the identity term breaks it).
* ``causal-unmasked``: ``dim(causal) = dim(unmasked)``, except where the README's
  finding says otherwise.  Hypotheses: not (``L >= 2``, ``a_1 = 1``, ``a_2 >= 2``,
  ``d_0 >= 2``).
* ``causal-symmetry``: ``dim(causal) = P - S`` on the effective architecture.
* ``heads-causal-unmasked`` and ``heads-causal-symmetry``: the same two for two
  heads with a mask, without the exception (with two heads a rank-one first
  layer no longer makes the tokens parallel).

A conjecture is reported as "supported on N certified cases, M counterexamples",
with every counterexample (architecture, computed, predicted); none is proven here.
The report's checks test that the report is consistent (every row computed, every
certified row compared, every counterexample a certified disagreement, every
uncertified row open); a conjecture that fails is a finding, not a failed check.
"""

from __future__ import annotations

import json
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from .._files import atomic_write
from .._sweep import JITTER_SEED, OKABE_ITO, integer_ticks, jitter, jitter_amplitude
from .conjectures import CONJECTURES, Conjecture, Row, ambient_bound, certification, compare, partner_key, sweep_grid
from .report import Check, Report, Table, pyplot, save_figure, written

__all__ = [
    "VARIANTS",
    "CONJECTURES",
    "Conjecture",
    "Variant",
    "reproduce_open_questions",
    "ambient_bound",
    "compare",
    "comparison_figure",
    "close_figures",
]


@dataclass(frozen=True)
class Variant:
    """One open question: its grid files (full and quick) and which rows are its cases."""

    name: str
    title: str
    grid: str
    quick_grid: str
    select: Callable[[Row], bool]


VARIANTS: tuple[Variant, ...] = (
    Variant("heads", "several heads (H = 2, 3)", "open-heads.toml", "open-heads-quick.toml", lambda r: r["heads"] >= 2),
    Variant("skip", "skip connections", "open-skip.toml", "open-skip-quick.toml", lambda r: bool(r["skip"])),
    Variant("causal", "causal masks", "causal.toml", "open-causal-quick.toml", lambda r: bool(r["causal"])),
    Variant(
        "heads-causal",
        "two heads with a causal mask",
        "open-heads-causal.toml",
        "open-heads-causal-quick.toml",
        lambda r: bool(r["causal"]) and r["heads"] == 2,
    ),
)


def _finding(c: dict[str, Any]) -> str:
    n, bad = c["supported"], c["counterexamples"]
    text = (
        f"{c['key']} ({c['statement']}; hypotheses: {c['hypotheses']}): supported on {n} certified cases, "
        f"{len(bad)} counterexample{'s' if len(bad) != 1 else ''}"
    )
    if bad:
        shown = "; ".join(f"{e['architecture']}: {e['computed']} (predicted {e['predicted']})" for e in bad[:4])
        text += f" ({shown}{'; all in the table' if len(bad) > 4 else ''})"
    depths = {k: sorted({len(e["spec"]["widths"]) - 1 for e in c[k]}) for k in ("holds", "counterexamples")}
    text += "".join(
        f"; {'holds' if k == 'holds' else 'counterexamples'} at L = {','.join(map(str, v))}"
        for k, v in depths.items()
        if v
    )
    if c["refuted_by_bounds"]:
        text += (
            f"; {len(c['refuted_by_bounds'])} more uncertified rows whose certified bounds exclude the prediction "
            "(not counted above)"
        )
    at_lower = sum(
        e["lower"] == (e["predicted"] if e["predicted"] is not None else e.get("partner_lower")) for e in c["open"]
    )
    text += f"; {len(c['open'])} open (uncertified, the prediction within the bounds"
    text += (
        f"; the GF(p) lower bound equals the prediction, or the compared row's lower bound, on {at_lower})."
        if c["open"]
        else ")."
    )
    return text


#: each panel's title, a sentence (the conjecture's key names it in the note under the panel)
_PANEL_TITLES = {
    "heads-symmetry": r"The prediction is $P - S$: parameters minus the symmetries of each head.",
    "heads-mixing": r"The prediction is $P - S$ with the heads mixed by $\mathrm{GL}_H$ ($a_i = d_{i-1}$).",
    "skip-translate": "The prediction is the dimension of the network without skip connections.",
    "skip-symmetry": r"The prediction is $P - S$ without $\mathrm{GL}_{d_i}$ between layers.",
    "causal-unmasked": "The prediction is the dimension of the network without the mask.",
    "causal-symmetry": r"The prediction is $P - S$ on the effective widths.",
    "heads-causal-unmasked": "The prediction is the dimension of the network without the mask.",
    "heads-causal-symmetry": r"The prediction is $P - S$ on the effective widths.",
}
#: each figure's title: the question, a sentence
_QUESTIONS = {
    "heads": "What is the dimension of a network with several heads?",
    "skip": "What is the dimension of a network with skip connections?",
    "causal": "What is the dimension of a network with a causal mask?",
    "heads-causal": "What is the dimension of a network with two heads and a causal mask?",
}
#: a marker per (heads, tokens): networks with more heads or tokens are told apart by shape
_NETWORK_MARKERS = ("o", "^", "s", "D", "v", "P", "X", "<", ">", "p", "h", "*")


def _network(e: dict[str, Any]) -> tuple[int, int]:
    return int(e["spec"]["heads"]), int(e["spec"]["tokens"])


def _network_label(key: tuple[int, int]) -> str:
    heads, tokens = key
    return rf"$H = {heads}$ head{'s' if heads != 1 else ''}, $t = {tokens}$ token{'s' if tokens != 1 else ''}"


def comparison_figure(variant: Variant, comparisons: list[dict[str, Any]]) -> Any:
    """One open question's figure: for each conjecture, the computed dimension against the predicted one.

    Every certified case is its own dot, its colour the outcome (holds, counterexample: Okabe-Ito colours),
    its marker the number of heads ``H`` and of tokens ``t``; every open case (or one whose bounds refute the
    prediction) is a bar from its lower to its upper bound.  Each legend entry counts its cases, and a series
    without cases has none.  Each dot's line has the gid ``"<outcome>:heads=<H>:tokens=<t>"`` (outcome
    ``holds`` or ``counterexamples``), its dots in the order of the comparison's list.  Equal pairs would hide
    each other, so the dots are jittered (:func:`ag_attention._sweep.summary.jitter`: uniform, seeded, at most
    ``jitter_amplitude`` of the panel's span: 0.3 on a span up to 25, else 1.2%), and a note under each panel
    says how far, and which cases are not shown (not applicable, no prediction or no bound).  Both axes count
    dimensions: integer ticks.  A pyplot figure: :func:`close_figures` (or ``plt.close``) releases it.
    """
    plt = pyplot()
    fig, axes = plt.subplots(1, len(comparisons), figsize=(5.6 * len(comparisons), 5.4), dpi=120, squeeze=False)
    networks = sorted({_network(e) for c in comparisons for k in ("holds", "counterexamples") for e in c[k]})
    marker = {n: _NETWORK_MARKERS[i % len(_NETWORK_MARKERS)] for i, n in enumerate(networks)}
    for ax, c in zip(axes[0], comparisons):
        _comparison_panel(ax, c, networks, marker)
    fig.suptitle(
        f"Open question: {_QUESTIONS.get(variant.name, variant.title)}\nEach dot is one network, on the "
        "dashed line where the prediction holds.",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


_Network = tuple[int, int]


def _comparison_panel(ax: Any, c: dict[str, Any], networks: list[_Network], marker: dict[_Network, str]) -> None:
    """One conjecture's panel: its certified dots, its bounds' bars, the diagonal, the legend and the note."""
    from matplotlib.lines import Line2D  # optional: matplotlib

    bounded = {
        kind: [e for e in c[kind] if e["predicted"] is not None and e["lower"] is not None]
        for kind in ("open", "refuted_by_bounds")
    }
    values = [e[k] for kind in ("holds", "counterexamples") for e in c[kind] for k in ("predicted", "computed")]
    values += [e[k] for sel in bounded.values() for e in sel for k in ("predicted", "lower", "upper")]
    top = max(values + [1])
    amplitude = jitter_amplitude(top - min(values + [0]))
    handles = _certified_dots(ax, c, networks, marker, amplitude) + _bound_bars(ax, bounded, amplitude)
    shown = {n: sum(_network(e) == n for k in ("holds", "counterexamples") for e in c[k]) for n in networks}
    handles += [
        Line2D([], [], ls="none", marker=marker[n], color="0.3", label=f"{_network_label(n)} ({shown[n]})")
        for n in networks
        if shown[n]
    ]
    diagonal = ax.plot([0, top], [0, top], ls=(0, (4, 3)), color="0.45", lw=1, label="computed = predicted")
    handles += diagonal
    ax.set_xlabel("predicted dimension")
    ax.set_ylabel("computed dimension")
    ax.set_title(_PANEL_TITLES.get(c["key"], c["statement"]), fontsize=9)
    integer_ticks(ax)
    ax.grid(alpha=0.3)
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper left")
    ax.text(0, -0.14, _not_shown(c, bounded, amplitude), transform=ax.transAxes, fontsize=6.5, va="top")


def _certified_dots(
    ax: Any, c: dict[str, Any], networks: list[_Network], marker: dict[_Network, str], amplitude: float
) -> list[Any]:
    """The certified cases, jittered: colour and fill the outcome, marker the network; their legend handles."""
    from matplotlib.lines import Line2D  # optional: matplotlib

    # outcome by colour and fill (filled: holds, hollow: counterexample), so that it survives printing in grey
    outcomes = (
        ("holds", OKABE_ITO["bluish green"], True, "certified, holds"),
        ("counterexamples", OKABE_ITO["vermillion"], False, "certified, counterexample"),
    )
    handles: list[Any] = []
    for i, (kind, color, filled, label) in enumerate(outcomes):
        pts = c[kind]
        if not pts:
            continue
        xs, ys = jitter([e["predicted"] for e in pts], [e["computed"] for e in pts], amplitude, JITTER_SEED + i)
        for n in networks:
            idx = [j for j, e in enumerate(pts) if _network(e) == n]
            if idx:
                ax.plot(
                    xs[idx],
                    ys[idx],
                    ls="none",
                    marker=marker[n],
                    color=color,
                    mec=color,
                    ms=6,
                    mew=1.2,
                    mfc=color if filled else "none",
                    alpha=0.75,
                    gid=f"{kind}:heads={n[0]}:tokens={n[1]}",
                )
        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker="o",
                color=color,
                mew=1.2,
                mfc=color if filled else "none",
                label=f"{label} ({len(pts)})",
            )
        )
    return handles


def _bound_bars(ax: Any, bounded: dict[str, list[dict[str, Any]]], amplitude: float) -> list[Any]:
    """The open cases and those the bounds refute: a bar from the lower to the upper bound; their handles."""
    handles: list[Any] = []
    for i, (kind, color, label) in enumerate(
        (
            ("open", OKABE_ITO["blue"], "open: [lower, upper]"),
            ("refuted_by_bounds", OKABE_ITO["reddish purple"], "bounds exclude it: [lower, upper]"),
        )
    ):
        sel = bounded[kind]
        if sel:
            lo = [e["lower"] for e in sel]
            hi = [e["upper"] for e in sel]
            xs, _ = jitter([e["predicted"] for e in sel], lo, amplitude, JITTER_SEED + 2 + i)
            bars = ax.errorbar(
                xs,
                [(a + b) / 2 for a, b in zip(lo, hi)],
                yerr=[[(b - a) / 2 for a, b in zip(lo, hi)]] * 2,
                ls="none",
                color=color,
                alpha=0.6,
                capsize=2,
                label=f"{label} ({len(sel)})",
            )
            handles.append(bars)
    return handles


def _not_shown(c: dict[str, Any], bounded: dict[str, list[dict[str, Any]]], amplitude: float) -> str:
    """The note under a panel: the conjecture's name in the report, the jitter, and the cases it does not show."""
    missing = [f"{len(c['not_applicable'])} not applicable (outside the hypotheses)"] if c["not_applicable"] else []
    for kind, name in (("open", "open"), ("refuted_by_bounds", "refuted by bounds")):
        left = len(c[kind]) - len(bounded[kind])
        if left:
            missing.append(f"{left} {name} without a prediction or a lower bound")
    symbols = (
        " $P$: parameters, $S$: the dimension of the symmetries." if "P - S" in _PANEL_TITLES.get(c["key"], "") else ""
    )
    note = (
        f"Conjecture {c['key']} of the report.{symbols} Each dot jittered by at most {amplitude:.3g} "
        "(seeded) so that equal values stay visible"
    )
    return textwrap.fill(note + ("; not shown: " + ", ".join(missing) if missing else "") + ".", 85)


def close_figures() -> None:
    """Close every pyplot figure (those of :func:`comparison_figure`)."""
    pyplot().close("all")


def _plot(variant: Variant, comparisons: list[dict[str, Any]], path: Path) -> list[str]:
    fig = comparison_figure(variant, comparisons)
    try:
        written = save_figure(fig, path)
    finally:
        pyplot().close(fig)
    return [p.name for p in written]


def _new_report(quick: bool, seed: int) -> Report:
    return Report(
        "Open questions: several heads, skip connections, causal masks",
        summary=(
            "Dimensions of lightning networks outside the paper's setting, swept over the grids below, "
            "against candidate formulas (module docstring of ag_attention._reproduce.open_questions). "
            "Only certified rows are evidence (the sweep's certificate, or for one layer the GF(p) lower "
            "bound meeting N, the number of reduced coordinates); uncertified rows are open, with their "
            "bounds. 'Supported on N cases' is evidence, not a proof."
        ),
        meta={"quick": quick, "seed": seed},
    )


def _consistency_checks(
    report: Report, variant: Variant, c: dict[str, Any], cases: list[Row], ctx: dict[tuple[Any, ...], Row]
) -> None:
    """The report is consistent: every certified case compared, counterexamples real, uncertified rows open."""
    certified = [r for r in cases if certification(r) is not None]
    conjecture = next(k for k in CONJECTURES if k.key == c["key"])
    applicable_certified = [r for r in certified if conjecture.predict(r, ctx)[0] is not None]
    report.add(
        Check(
            f"{c['key']}: every certified case compared",
            variant.name,
            "certified cases within the hypotheses = holds + counterexamples",
            len(applicable_certified),
            c["certified_applicable"],
            len(applicable_certified) == c["certified_applicable"],
            details={"supported": c["supported"], "counterexamples": len(c["counterexamples"])},
        )
    )
    bad = [e for e in c["counterexamples"] if e["certificate"] is None or e["computed"] == e["predicted"]]
    report.add(
        Check(
            f"{c['key']}: counterexamples are certified disagreements, all listed",
            variant.name,
            "each listed counterexample certified and != predicted",
            len(c["counterexamples"]),
            len(c["counterexamples"]) - len(bad),
            not bad,
        )
    )
    leaked = [e for e in c["holds"] + c["counterexamples"] if e["certificate"] is None]
    report.add(
        Check(
            f"{c['key']}: uncertified cases are open, not evidence",
            variant.name,
            "no uncertified row among holds or counterexamples",
            0,
            len(leaked),
            not leaked,
            details={"open": len(c["open"])},
        )
    )
    uncertified = [r for r in cases if certification(r) is None]
    listed = sum(e["certificate"] is None for k in ("open", "refuted_by_bounds", "not_applicable") for e in c[k])
    report.add(
        Check(
            f"{c['key']}: every uncertified case listed with its bounds",
            variant.name,
            "uncertified rows = open + refuted by bounds + not applicable (uncertified)",
            len(uncertified),
            listed,
            len(uncertified) == listed,
        )
    )


def _tables(report: Report, c: dict[str, Any]) -> None:
    """A conjecture's counterexamples, the rows its bounds refute, and its open cases."""
    report.tables.append(
        Table(
            f"{c['key']}: counterexamples ({len(c['counterexamples'])})",
            ["architecture", "parameters", "computed", "predicted", "certificate"],
            [
                [e["architecture"], e["parameters"], e["computed"], e["predicted"], e["certificate"]]
                for e in c["counterexamples"]
            ],
            note=f"{c['statement']}; hypotheses: {c['hypotheses']}",
            source=None,
        )
    )
    report.tables.append(
        Table(
            f"{c['key']}: uncertified rows whose bounds exclude the prediction ({len(c['refuted_by_bounds'])})",
            ["architecture", "lower", "upper", "predicted"],
            [[e["architecture"], e["lower"], e["upper"], e["predicted"]] for e in c["refuted_by_bounds"]],
            note="lower <= dim <= upper is proven, so the prediction is wrong here; not counted as "
            "certified counterexamples",
            source=None,
        )
    )
    report.tables.append(
        Table(
            f"{c['key']}: open cases ({len(c['open'])})",
            ["architecture", "lower", "upper", "predicted", "reason"],
            [[e["architecture"], e["lower"], e["upper"], e["predicted"], e["reason"]] for e in c["open"]],
            source=None,
        )
    )


def _finish(
    report: Report,
    base: Path,
    out: Path | str | None,
    grids: dict[str, Any],
    everything: list[dict[str, Any]],
    figures: list[str],
) -> None:
    report.tables.insert(
        0,
        Table(
            "Conjectures",
            [
                "conjecture",
                "variant",
                "statement",
                "hypotheses",
                "supported",
                "counterexamples",
                "refuted by bounds",
                "open",
                "not applicable",
            ],
            [
                [
                    c["key"],
                    c["variant"],
                    c["statement"],
                    c["hypotheses"],
                    c["supported"],
                    len(c["counterexamples"]),
                    len(c["refuted_by_bounds"]),
                    len(c["open"]),
                    len(c["not_applicable"]),
                ]
                for c in everything
            ],
            source=None,
        ),
    )
    report.meta["grids"] = {
        k: f"{g['grid']} ({g['architectures']} architectures, {g['seconds']} s)" for k, g in grids.items()
    }
    if out is not None:
        written(
            report,
            lambda: atomic_write(
                base / "open-questions.json",
                json.dumps({"grids": grids, "comparisons": everything}, indent=2, default=str) + "\n",
            ),
        )
        report.meta["figures"] = figures
        report.meta["comparisons"] = "open-questions.json"
        written(report, lambda: report.write(base))


def reproduce_open_questions(
    out: Path | str | None, *, quick: bool = False, seed: int = 0, workers: int | None = None
) -> Report:
    """Sweep the open questions' grids into ``out/sweeps`` and compare them with the candidate formulas."""
    report = _new_report(quick, seed)
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="ag-attention-open-")
        base = Path(tmp.name)
    else:
        base = Path(out)
    base.mkdir(parents=True, exist_ok=True)
    grids: dict[str, Any] = {}
    everything: list[dict[str, Any]] = []
    figures: list[str] = []
    try:
        for variant in VARIANTS:
            grids[variant.name], rows = sweep_grid(
                variant.quick_grid if quick else variant.grid,
                base,
                seed=seed,
                workers=workers,
                report=report,
                case=variant.name,
                who="the open questions run",
            )
            ctx = {partner_key(r): r for r in rows}
            cases = [r for r in rows if variant.select(r) and r["error"] is None]
            comparisons = [compare(c, cases, ctx) for c in CONJECTURES if c.variant == variant.name]
            for c in comparisons:
                _consistency_checks(report, variant, c, cases, ctx)
                report.findings.append(f"[{variant.name}] " + _finding(c))
                _tables(report, c)
            everything += comparisons
            if out is not None:
                path = base / f"open-questions-{variant.name}.png"
                figures += written(report, partial(_plot, variant, comparisons, path)) or []
    finally:
        if tmp is not None:
            tmp.cleanup()
    _finish(report, base, out, grids, everything, figures)
    return report
