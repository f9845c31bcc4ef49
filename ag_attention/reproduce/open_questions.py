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
:func:`ag_attention.models.formulas.symmetry_count`: ``GL_{a_i}`` on the queries and
keys of every head (Thm. 3.7's first family, per head), one rescaling per head and
layer, ``GL_{d_i}`` between layers without skip connections; head permutations are
finite and remove no dimension):

* ``heads-symmetry``: ``dim = P - S`` of the effective architecture
  (:func:`ag_attention.models.formulas.effective_architecture`: hidden widths
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
* ``skip-symmetry``: ``dim(skip) = P - S`` (skip networks are their own effective architecture; no ``GL_{d_i}`` between layers: the
  identity term breaks it).
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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..architecture import Architecture
from ..errors import InvalidArgumentError
from ..models.formulas import effective_architecture, symmetry_count
from ..models.parametrization import Parametrization
from .report import Check, Report, Table, pyplot, save_figure

__all__ = ["VARIANTS", "CONJECTURES", "Conjecture", "Variant", "reproduce_open_questions", "ambient_bound",
           "compare"]

Row = dict[str, Any]
#: the sweeps directory of the repository (the grid files)
SWEEPS = Path(__file__).resolve().parents[2] / "sweeps"


@dataclass(frozen=True)
class Variant:
    """One open question: its grid files (full and quick) and which rows are its cases."""

    name: str
    title: str
    grid: str
    quick_grid: str
    select: Callable[[Row], bool]


VARIANTS: tuple[Variant, ...] = (
    Variant("heads", "several heads (H = 2, 3)", "open-heads.toml", "open-heads-quick.toml",
            lambda r: r["heads"] >= 2),
    Variant("skip", "skip connections", "open-skip.toml", "open-skip-quick.toml", lambda r: bool(r["skip"])),
    Variant("causal", "causal masks", "causal.toml", "open-causal-quick.toml", lambda r: bool(r["causal"])),
    Variant("heads-causal", "two heads with a causal mask", "open-heads-causal.toml",
            "open-heads-causal-quick.toml", lambda r: bool(r["causal"]) and r["heads"] == 2),
)


def _arch(row: Row) -> Architecture:
    return Architecture(tuple(row["widths"]), tuple(row["ranks"]), tokens=row["tokens"], heads=row["heads"],
                        skip=row["skip"], causal=row["causal"], normalized=row["normalized"])


def describe(row: Row) -> str:
    """``widths 3,2 ranks 2 t=2 heads=2 causal``: the architecture of a row."""
    parts = [f"widths {','.join(map(str, row['widths']))}", f"ranks {','.join(map(str, row['ranks']))}",
             f"t={row['tokens']}"]
    if row["heads"] != 1:
        parts.append(f"heads={row['heads']}")
    parts += [k for k in ("skip", "causal") if row[k]]
    return " ".join(parts)


def ambient_bound(row: Row) -> int | None:
    """``N``: the reduced coordinates of one layer (a proven upper bound for any number of heads), else None."""
    if row["depth"] != 1 or row["tokens"] < 2 or row["normalized"] or row["skip"] or row["causal"]:
        return None
    d, d_out = row["widths"]
    one = Architecture((d, d_out), (row["ranks"][0],), tokens=row["tokens"])
    return len(Parametrization(one, coords="reduced").polynomials)


def certification(row: Row) -> str | None:
    """How the row's dimension is proven ('sweep: KIND' or 'ambient bound N'), None if it is not."""
    if row["error"] is not None or row["dimension"] is None:
        return None
    if row["certified"]:
        return f"sweep: {row['certificate_kind']}"
    n = ambient_bound(row)
    if n is not None and row["dimension"] == n:
        return f"ambient bound N = {n}"
    return None


def _partner_key(row: Row, **change: Any) -> tuple[Any, ...]:
    r = {**row, **change}
    return (tuple(r["widths"]), tuple(r["ranks"]), r["tokens"], r["heads"], bool(r["skip"]), bool(r["causal"]))


# ------------------------------------------------------------------ the candidate formulas

#: a prediction: (value or None when the hypotheses fail, the row it copies or None, why not applicable)
Prediction = tuple[int | None, Row | None, str]


def _symmetry(row: Row, ctx: dict[tuple[Any, ...], Row]) -> Prediction:
    if row["tokens"] < 2:
        return None, None, "t = 1"
    eff = effective_architecture(_arch(row))
    value = eff.parameter_count - symmetry_count(eff)
    n = ambient_bound(row)
    return (value if n is None else min(value, n)), None, ""


def _mixing(row: Row, ctx: dict[tuple[Any, ...], Row]) -> Prediction:
    w, a, h = row["widths"], row["ranks"], row["heads"]
    if row["tokens"] < 2:
        return None, None, "t = 1"
    if any(a[i] != w[i] for i in range(len(a))):
        return None, None, "some a_i < d_{i-1}"
    if any(h > min(w[i] ** 2, w[i + 1] * w[i]) for i in range(len(a))):
        return None, None, "H > min(d_{i-1}^2, d_i d_{i-1}) for some i"
    value = sum(h * (w[i] ** 2 + w[i + 1] * w[i]) - h * h for i in range(len(a))) - sum(x * x for x in w[1:-1])
    n = ambient_bound(row)
    return (value if n is None else min(value, n)), None, ""


def _partner(field_name: str, exception: bool = False) -> Callable[[Row, dict[tuple[Any, ...], Row]], Prediction]:
    def predict(row: Row, ctx: dict[tuple[Any, ...], Row]) -> Prediction:
        if exception and row["depth"] >= 2 and row["ranks"][0] == 1 and row["ranks"][1] >= 2 \
                and row["widths"][0] >= 2:
            return None, None, "L >= 2, a_1 = 1, a_2 >= 2, d_0 >= 2 (the README's exception)"
        other = ctx.get(_partner_key(row, **{field_name: False}))
        if other is None:
            return None, None, f"no row without {field_name} in the grid"
        if certification(other) is None:
            return None, other, f"the row without {field_name} is not certified"
        return int(other["dimension"]), other, ""
    return predict


@dataclass(frozen=True)
class Conjecture:
    key: str
    variant: str
    statement: str
    hypotheses: str
    predict: Callable[[Row, dict[tuple[Any, ...], Row]], Prediction] = field(repr=False)


CONJECTURES: tuple[Conjecture, ...] = (
    Conjecture("heads-symmetry", "heads", "dim = P - (symmetry count: GL_{a_i} and a rescaling per head and layer, "
               "GL_{d_i} between layers) on the effective widths, capped at N for one layer", "lightning, t >= 2, no mask", _symmetry),
    Conjecture("heads-mixing", "heads", "dim = sum_i [H (d_{i-1}^2 + d_i d_{i-1}) - H^2] - sum_{0<i<L} d_i^2 "
               "(heads mix by GL_H), capped at N for one layer", "a_i = d_{i-1} and H <= min(d_{i-1}^2, d_i d_{i-1}) for all i, t >= 2, no mask",
               _mixing),
    Conjecture("skip-translate", "skip", "dim(skip) = dim(plain network of the same widths, ranks, tokens)",
               "equal widths; the plain row certified", _partner("skip")),
    Conjecture("skip-symmetry", "skip", "dim(skip) = P - (symmetry count without GL_{d_i} between layers)",
               "equal widths, t >= 2", _symmetry),
    Conjecture("causal-unmasked", "causal", "dim(causal) = dim(unmasked)",
               "not (L >= 2, a_1 = 1, a_2 >= 2, d_0 >= 2); the unmasked row certified", _partner("causal", True)),
    Conjecture("causal-symmetry", "causal", "dim(causal) = P - symmetry count on the effective widths", "t >= 2", _symmetry),
    Conjecture("heads-causal-unmasked", "heads-causal", "dim(2 heads, causal) = dim(2 heads, unmasked)",
               "the unmasked row certified (no exception for a rank-one first layer: two heads do not make the "
               "tokens parallel)", _partner("causal")),
    Conjecture("heads-causal-symmetry", "heads-causal", "dim(2 heads, causal) = P - symmetry count on the effective widths", "t >= 2",
               _symmetry),
)


def compare(conjecture: Conjecture, rows: list[Row], ctx: dict[tuple[Any, ...], Row]) -> dict[str, Any]:
    """Every row of a variant against one conjecture: holds, counterexamples, open and not applicable."""
    holds: list[dict[str, Any]] = []
    counter: list[dict[str, Any]] = []
    open_rows: list[dict[str, Any]] = []
    refuted: list[dict[str, Any]] = []  # uncertified, but the prediction lies outside the proven bounds
    not_applicable: list[dict[str, Any]] = []
    for row in rows:
        predicted, other, why = conjecture.predict(row, ctx)
        entry = {"architecture": describe(row), "spec": _spec(row), "parameters": row["parameters"],
                 "computed": row["dimension"], "lower": row["dimension"], "upper": row["upper_bound"],
                 "predicted": predicted, "certificate": certification(row),
                 "compared_with": None if other is None else describe(other)}
        if predicted is None:
            if other is not None:  # applicable, but the row it copies is not certified
                entry.update(computed=None, reason=why, partner_lower=other["dimension"],
                             partner_upper=other["upper_bound"])
                open_rows.append(entry)
            else:
                not_applicable.append({**entry, "reason": why})
        elif entry["certificate"] is None:
            within = row["dimension"] is not None and row["dimension"] <= predicted <= row["upper_bound"]
            entry.update(computed=None, reason="not certified: lower bound below the upper bound",
                         within_bounds=within)
            (open_rows if within else refuted).append(entry)
        elif row["dimension"] == predicted:
            holds.append(entry)
        else:
            counter.append(entry)
    return {"key": conjecture.key, "variant": conjecture.variant, "statement": conjecture.statement,
            "hypotheses": conjecture.hypotheses, "supported": len(holds), "counterexamples": counter,
            "holds": holds, "open": open_rows, "refuted_by_bounds": refuted, "not_applicable": not_applicable,
            "certified_applicable": len(holds) + len(counter)}


def _spec(row: Row) -> dict[str, Any]:
    return {"widths": list(row["widths"]), "ranks": list(row["ranks"]), "tokens": row["tokens"],
            "heads": row["heads"], "skip": bool(row["skip"]), "causal": bool(row["causal"])}


def _finding(c: dict[str, Any]) -> str:
    n, bad = c["supported"], c["counterexamples"]
    text = (f"{c['key']} ({c['statement']}; hypotheses: {c['hypotheses']}): supported on {n} certified cases, "
            f"{len(bad)} counterexample{'s' if len(bad) != 1 else ''}")
    if bad:
        shown = "; ".join(f"{e['architecture']}: {e['computed']} (predicted {e['predicted']})" for e in bad[:4])
        text += f" ({shown}{'; all in the table' if len(bad) > 4 else ''})"
    depths = {k: sorted({len(e["spec"]["widths"]) - 1 for e in c[k]}) for k in ("holds", "counterexamples")}
    text += "".join(f"; {'holds' if k == 'holds' else 'counterexamples'} at L = {','.join(map(str, v))}"
                    for k, v in depths.items() if v)
    if c["refuted_by_bounds"]:
        text += (f"; {len(c['refuted_by_bounds'])} more uncertified rows whose certified bounds exclude the prediction "
                 "(not counted above)")
    at_lower = sum(e["lower"] == (e["predicted"] if e["predicted"] is not None else e.get("partner_lower"))
                   for e in c["open"])
    text += f"; {len(c['open'])} open (uncertified, the prediction within the bounds"
    text += (f"; the GF(p) lower bound equals the prediction, or the compared row's lower bound, on {at_lower})."
             if c["open"] else ").")
    return text


def _plot(variant: Variant, comparisons: list[dict[str, Any]], path: Path) -> list[str]:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(comparisons), figsize=(5.2 * len(comparisons), 4.6), dpi=120, squeeze=False)
    for ax, c in zip(axes[0], comparisons):
        for kind, color, marker, label in (("holds", "#1b9e77", "o", "certified, holds"),
                                           ("counterexamples", "#d95f02", "x", "certified, counterexample")):
            pts = c[kind]
            ax.plot([e["predicted"] for e in pts], [e["computed"] for e in pts], ls="none", marker=marker,
                    color=color, ms=6, label=f"{label} ({len(pts)})")
        opens: list[dict[str, Any]] = []
        for kind, color, label in (("open", "#7570b3", "open: [lower, upper]"),
                                   ("refuted_by_bounds", "#e7298a", "bounds exclude it: [lower, upper]")):
            sel = [e for e in c[kind] if e["predicted"] is not None and e["lower"] is not None]
            if sel:
                lo = [e["lower"] for e in sel]
                hi = [e["upper"] for e in sel]
                ax.errorbar([e["predicted"] for e in sel], [(a + b) / 2 for a, b in zip(lo, hi)],
                            yerr=[[(b - a) / 2 for a, b in zip(lo, hi)]] * 2, ls="none", color=color, alpha=0.5,
                            capsize=2, label=f"{label} ({len(sel)})")
            opens += sel
        values = [e[k] for kind in ("holds", "counterexamples") for e in c[kind] for k in ("predicted", "computed")]
        values += [e["upper"] for e in opens]
        top = max(values + [1])
        ax.plot([0, top], [0, top], ls="--", color="gray", lw=1)
        ax.set_xlabel(f"predicted ({c['key']})")
        ax.set_ylabel("computed dimension")
        ax.set_title(c["key"], fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Open question: {variant.title}")
    fig.tight_layout()
    written = save_figure(fig, path)
    plt.close(fig)
    return [p.name for p in written]


def reproduce_open_questions(out: Path | str | None, *, quick: bool = False, seed: int = 0,
                             workers: int | None = None) -> Report:
    """Sweep the open questions' grids into ``out/sweeps`` and compare them with the candidate formulas."""
    from ..sweep import load_grid, sweep

    report = Report(
        "Open questions: several heads, skip connections, causal masks",
        summary=("Dimensions of lightning networks outside the paper's setting, swept over the grids below, "
                 "against candidate formulas (module docstring of ag_attention.reproduce.open_questions). "
                 "Only certified rows are evidence (the sweep's certificate, or for one layer the GF(p) lower "
                 "bound meeting N, the number of reduced coordinates); uncertified rows are open, with their "
                 "bounds. 'Supported on N cases' is evidence, not a proof."),
        meta={"quick": quick, "seed": seed},
    )
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
            grid_file = SWEEPS / (variant.quick_grid if quick else variant.grid)
            if not grid_file.is_file():
                raise InvalidArgumentError(f"{grid_file}: grid file not found (the open questions run from a "
                                           "checkout of ag-attention, whose sweeps/ holds their grids)")
            grid = load_grid(grid_file)
            t0 = time.perf_counter()
            result = sweep(grid_file, base / "sweeps" / grid_file.stem, overwrite=True, seed=seed, plots=False,
                           workers=workers)
            rows = result.rows()
            seconds = time.perf_counter() - t0
            grids[variant.name] = {"grid": f"sweeps/{grid_file.name}", "description": grid.description,
                                   "architectures": len(grid), "sha256": grid.sha256,
                                   "results": str(result.results), "seconds": round(seconds, 2)}
            errors = [r for r in rows if r["error"] is not None]
            report.add(Check("every architecture of the grid computed", variant.name, "ag_attention.sweep",
                             len(grid), len(rows) - len(errors), len(rows) == len(grid) and not errors, seconds,
                             {"errors": [f"{describe(r)}: {r['error']}" for r in errors]}))
            ctx = {_partner_key(r): r for r in rows}
            cases = [r for r in rows if variant.select(r) and r["error"] is None]
            comparisons = [compare(c, cases, ctx) for c in CONJECTURES if c.variant == variant.name]
            for c in comparisons:
                certified = [r for r in cases if certification(r) is not None]
                applicable_certified = [r for r in certified
                                        if next(k for k in CONJECTURES if k.key == c["key"]).predict(r, ctx)[0]
                                        is not None]
                report.add(Check(f"{c['key']}: every certified case compared", variant.name,
                                 "certified cases within the hypotheses = holds + counterexamples",
                                 len(applicable_certified), c["certified_applicable"],
                                 len(applicable_certified) == c["certified_applicable"],
                                 details={"supported": c["supported"], "counterexamples": len(c["counterexamples"])}))
                bad = [e for e in c["counterexamples"] if e["certificate"] is None or e["computed"] == e["predicted"]]
                report.add(Check(f"{c['key']}: counterexamples are certified disagreements, all listed",
                                 variant.name, "each listed counterexample certified and != predicted",
                                 len(c["counterexamples"]), len(c["counterexamples"]) - len(bad), not bad))
                leaked = [e for e in c["holds"] + c["counterexamples"] if e["certificate"] is None]
                report.add(Check(f"{c['key']}: uncertified cases are open, not evidence", variant.name,
                                 "no uncertified row among holds or counterexamples",
                                 0, len(leaked), not leaked, details={"open": len(c["open"])}))
                uncertified = [r for r in cases if certification(r) is None]
                report.add(Check(f"{c['key']}: every uncertified case listed with its bounds", variant.name,
                                 "uncertified rows = open + refuted by bounds + not applicable (uncertified)",
                                 len(uncertified),
                                 sum(e["certificate"] is None for k in ("open", "refuted_by_bounds", "not_applicable")
                                     for e in c[k]),
                                 len(uncertified) == sum(e["certificate"] is None for k in
                                                         ("open", "refuted_by_bounds", "not_applicable")
                                                         for e in c[k])))
                report.findings.append(f"[{variant.name}] " + _finding(c))
                report.tables.append(Table(
                    f"{c['key']}: counterexamples ({len(c['counterexamples'])})",
                    ["architecture", "parameters", "computed", "predicted", "certificate"],
                    [[e["architecture"], e["parameters"], e["computed"], e["predicted"], e["certificate"]]
                     for e in c["counterexamples"]], note=f"{c['statement']}; hypotheses: {c['hypotheses']}"))
                report.tables.append(Table(
                    f"{c['key']}: uncertified rows whose bounds exclude the prediction ({len(c['refuted_by_bounds'])})",
                    ["architecture", "lower", "upper", "predicted"],
                    [[e["architecture"], e["lower"], e["upper"], e["predicted"]] for e in c["refuted_by_bounds"]],
                    note="lower <= dim <= upper is proven, so the prediction is wrong here; not counted as "
                         "certified counterexamples"))
                report.tables.append(Table(
                    f"{c['key']}: open cases ({len(c['open'])})",
                    ["architecture", "lower", "upper", "predicted", "reason"],
                    [[e["architecture"], e["lower"], e["upper"], e["predicted"], e["reason"]] for e in c["open"]]))
            everything += comparisons
            if out is not None:
                figures += _plot(variant, comparisons, base / f"open-questions-{variant.name}.png")
    finally:
        if tmp is not None:
            tmp.cleanup()
    report.tables.insert(0, Table(
        "Conjectures", ["conjecture", "variant", "statement", "hypotheses", "supported", "counterexamples",
                        "refuted by bounds", "open", "not applicable"],
        [[c["key"], c["variant"], c["statement"], c["hypotheses"], c["supported"], len(c["counterexamples"]),
          len(c["refuted_by_bounds"]), len(c["open"]), len(c["not_applicable"])] for c in everything]))
    report.meta["grids"] = {k: f"{g['grid']} ({g['architectures']} architectures, {g['seconds']} s)"
                            for k, g in grids.items()}
    if out is not None:
        (base / "open-questions.json").write_text(
            json.dumps({"grids": grids, "comparisons": everything}, indent=2, default=str) + "\n")
        report.meta["figures"] = figures
        report.meta["comparisons"] = "open-questions.json"
        report.write(base)
    return report

