"""The conjectures of ``reproduce open-questions``: row helpers, predictions and their comparison with rows.

A row is a sweep row (:data:`ag_attention._sweep.COLUMNS`).  Only certified rows
count as evidence (:func:`certification`); :func:`compare` sorts the rows of a
variant into the cases where a :class:`Conjecture` holds, its counterexamples,
the rows whose proven bounds refute it, and the open ones.  The statements and
their hypotheses are in the docstring of :mod:`ag_attention._reproduce.open_questions`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._models import Parametrization, effective_architecture, symmetry_count
from .._sweep import load_grid, sweep
from .report import Check, Report

__all__ = [
    "Row",
    "Prediction",
    "Conjecture",
    "CONJECTURES",
    "compare",
    "certification",
    "ambient_bound",
    "describe",
    "partner_key",
]

Row = dict[str, Any]


def _spec(row: Row) -> dict[str, Any]:
    return {
        "widths": list(row["widths"]),
        "ranks": list(row["ranks"]),
        "tokens": row["tokens"],
        "heads": row["heads"],
        "skip": bool(row["skip"]),
        "causal": bool(row["causal"]),
    }


def _arch(row: Row) -> Architecture:
    return Architecture(
        tuple(row["widths"]),
        tuple(row["ranks"]),
        tokens=row["tokens"],
        heads=row["heads"],
        skip=row["skip"],
        causal=row["causal"],
        normalized=row["normalized"],
    )


def describe(row: Row) -> str:
    """``widths 3,2 ranks 2 t=2 heads=2 causal``: the architecture of a row."""
    parts = [
        f"widths {','.join(map(str, row['widths']))}",
        f"ranks {','.join(map(str, row['ranks']))}",
        f"t={row['tokens']}",
    ]
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


def partner_key(row: Row, **change: Any) -> tuple[Any, ...]:
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
        if exception and row["depth"] >= 2 and row["ranks"][0] == 1 and row["ranks"][1] >= 2 and row["widths"][0] >= 2:
            return None, None, "L >= 2, a_1 = 1, a_2 >= 2, d_0 >= 2 (the README's exception)"
        other = ctx.get(partner_key(row, **{field_name: False}))
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
    Conjecture(
        "heads-symmetry",
        "heads",
        "dim = P - (symmetry count: GL_{a_i} and a rescaling per head and layer, "
        "GL_{d_i} between layers) on the effective widths, capped at N for one layer",
        "lightning, t >= 2, no mask",
        _symmetry,
    ),
    Conjecture(
        "heads-mixing",
        "heads",
        "dim = sum_i [H (d_{i-1}^2 + d_i d_{i-1}) - H^2] - sum_{0<i<L} d_i^2 "
        "(heads mix by GL_H), capped at N for one layer",
        "a_i = d_{i-1} and H <= min(d_{i-1}^2, d_i d_{i-1}) for all i, t >= 2, no mask",
        _mixing,
    ),
    Conjecture(
        "skip-translate",
        "skip",
        "dim(skip) = dim(plain network of the same widths, ranks, tokens)",
        "equal widths; the plain row certified",
        _partner("skip"),
    ),
    Conjecture(
        "skip-symmetry",
        "skip",
        "dim(skip) = P - (symmetry count without GL_{d_i} between layers)",
        "equal widths, t >= 2",
        _symmetry,
    ),
    Conjecture(
        "causal-unmasked",
        "causal",
        "dim(causal) = dim(unmasked)",
        "not (L >= 2, a_1 = 1, a_2 >= 2, d_0 >= 2); the unmasked row certified",
        _partner("causal", True),
    ),
    Conjecture(
        "causal-symmetry", "causal", "dim(causal) = P - symmetry count on the effective widths", "t >= 2", _symmetry
    ),
    Conjecture(
        "heads-causal-unmasked",
        "heads-causal",
        "dim(2 heads, causal) = dim(2 heads, unmasked)",
        "the unmasked row certified (no exception for a rank-one first layer: two heads do not make the "
        "tokens parallel)",
        _partner("causal"),
    ),
    Conjecture(
        "heads-causal-symmetry",
        "heads-causal",
        "dim(2 heads, causal) = P - symmetry count on the effective widths",
        "t >= 2",
        _symmetry,
    ),
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
        entry = {
            "architecture": describe(row),
            "spec": _spec(row),
            "parameters": row["parameters"],
            "computed": row["dimension"],
            "lower": row["dimension"],
            "upper": row["upper_bound"],
            "predicted": predicted,
            "certificate": certification(row),
            "compared_with": None if other is None else describe(other),
        }
        if predicted is None:
            if other is not None:  # applicable, but the row it copies is not certified
                entry.update(
                    computed=None, reason=why, partner_lower=other["dimension"], partner_upper=other["upper_bound"]
                )
                open_rows.append(entry)
            else:
                not_applicable.append({**entry, "reason": why})
        elif entry["certificate"] is None:
            within = row["dimension"] is not None and row["dimension"] <= predicted <= row["upper_bound"]
            entry.update(computed=None, reason="not certified: lower bound below the upper bound", within_bounds=within)
            (open_rows if within else refuted).append(entry)
        elif row["dimension"] == predicted:
            holds.append(entry)
        else:
            counter.append(entry)
    return {
        "key": conjecture.key,
        "variant": conjecture.variant,
        "statement": conjecture.statement,
        "hypotheses": conjecture.hypotheses,
        "supported": len(holds),
        "counterexamples": counter,
        "holds": holds,
        "open": open_rows,
        "refuted_by_bounds": refuted,
        "not_applicable": not_applicable,
        "certified_applicable": len(holds) + len(counter),
    }


#: the sweeps directory of the repository (the grid files of the open questions and the certification report)
#: the grid files of the reproductions: package data (the checkout's sweeps/ is a link to this directory)
SWEEPS = Path(__file__).resolve().parent / "sweeps"


def sweep_grid(
    name: str, base: Path, *, seed: int, workers: int | None, report: Report, case: str, who: str
) -> tuple[dict[str, Any], list[Row]]:
    """Sweep ``sweeps/NAME`` into ``base/sweeps``; its grid's description and rows, with a check that all computed.

    ``who`` names the report in the error for a missing grid file (the grids are package data: a missing one is a
    damaged install).
    """

    grid_file = SWEEPS / name
    if not grid_file.is_file():
        raise InvalidArgumentError(
            f"{grid_file}: grid file not found ({who} reads the grid files shipped in ag_attention/_reproduce/sweeps/: "
            "reinstall ag-attention)"
        )
    grid = load_grid(grid_file)
    t0 = time.perf_counter()
    result = sweep(grid_file, base / "sweeps" / grid_file.stem, overwrite=True, seed=seed, plots=False, workers=workers)
    rows = result.rows()
    seconds = time.perf_counter() - t0
    info = {
        "grid": f"sweeps/{grid_file.name}",
        "description": grid.description,
        "architectures": len(grid),
        "sha256": grid.sha256,
        "results": str(result.results),
        "seconds": round(seconds, 2),
    }
    errors = [r for r in rows if r["error"] is not None]
    report.add(
        Check(
            "every architecture of the grid computed",
            case,
            "ag_attention.sweep",
            len(grid),
            len(rows) - len(errors),
            len(rows) == len(grid) and not errors,
            seconds,
            {"errors": [f"{describe(r)}: {r['error']}" for r in errors]},
        )
    )
    return info, rows
