"""Generic fibers and functional dimension of multi-head attention (ICML 2026 workshop poster, OpenReview
7vPmnHdAPl), against the package's certified dimensions: one of the published works of ``ag-attention reproduce
related``.

The poster: no hidden symmetries beyond the change of basis inside each head's Q-K and O-V products and the
permutation of heads, hence the functional dimension ``P - (dimension of those symmetries)``.  A head here has
``Q, K`` (``a x d_in``) and ``V`` (``d_out x d_in``) and the heads are summed: ``V`` is the O-V product (no separate
``O``), so its change of basis is already divided out, and lightning attention has one more known symmetry per
head, the rescaling ``(c A_h, V_h / c)``.  The claim then reads ``dim = P - symmetry_count``
(:func:`poster_formula`), compared with every certified multi-head row of the certification grids
(:func:`compare_heads`) and, in the poster's own setting (softmax), on a grid certified by ball arithmetic
(:func:`softmax_heads`).  The report's part: :func:`heads_section`.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..._architecture import Architecture
from ..._errors import InvalidArgumentError
from ..._models import one_layer_bounds, symmetry_count
from ..._numeric import numerical_dimension
from ..._sweep import Grid, load_grid, sweep
from ..conjectures import SWEEPS, describe
from ..report import Check, Table
from ..sources import Source

__all__ = [
    "POSTER",
    "HEADS",
    "HEADS_SOURCE",
    "poster_formula",
    "one_layer_criterion",
    "compare_heads",
    "heads_grid",
    "SOFTMAX_GRID",
    "QUICK_SOFTMAX_GRID",
    "softmax_heads",
    "heads_section",
]

POSTER = "openreview.net/forum?id=7vPmnHdAPl"
HEADS = "[multi-head poster, OpenReview 7vPmnHdAPl]"
#: the poster's count is a published formula the package evaluates (:func:`poster_formula`), not a number it printed
HEADS_SOURCE = Source.theorem(
    "multi-head poster (OpenReview 7vPmnHdAPl): P minus the change of basis inside each head, evaluated by "
    "poster_formula"
)

# ---------------------------------------------------------------------------------------------- multi-head fibers
#: the certification grids whose multi-head rows item 2 compares (the wide grid contains the other two)
CERTIFICATION_GRIDS = ("certification-quick.toml", "certification.toml", "certification-wide.toml")


def poster_formula(arch: Architecture) -> int:
    """The poster's functional dimension in this package's parametrization: ``P`` minus the dimension of the known
    symmetries (``ag_attention._models.formulas.symmetry_count``): ``GL_{a_i}`` on each head's ``(Q, K)`` (the Q-K
    change of basis), one rescaling ``(c A_h, V_h / c)`` per head (lightning only: softmax is not homogeneous),
    ``GL_{d_i}`` between layers (Henry et al.'s; not with skip connections); the O-V change of basis is already
    divided out (``V`` is the product) and the permutations of heads are finite.  One lightning layer with
    ``a <= d``: ``H [a(2d - a) + d d' - 1]``.

    >>> poster_formula(Architecture((2, 3), (2,), tokens=2, heads=2))   # the computed dimension is 16
    18
    """
    if not isinstance(arch, Architecture):
        raise InvalidArgumentError(f"arch={arch!r}: must be an Architecture")
    return arch.parameter_count - symmetry_count(arch)


def one_layer_criterion(row: dict[str, Any]) -> list[str]:
    """Why the poster's count can fail for one lightning layer with several heads, from its sizes alone: the names
    of the proven upper bounds of one layer (:func:`ag_attention._models.bounds.one_layer_bounds`,
    docs/math/bounds.md; they hold with a skip connection or a causal mask too) whose value lies *below*
    :func:`poster_formula`.  ``heads`` (the one-head count times ``H``) is below it only for ``t = 1``, where one
    head sees ``A + A^T`` only; ``head-mixing`` (``f`` is linear in ``sum_h A_h (x) V_h``, a matrix of rank
    ``<= H``) is below it exactly when ``H >= (d_in - a)^2 + 2`` (for ``t >= 2``: the difference is
    ``H (H - 1 - (d_in - a)^2)``); ``span`` (all of ``C^d' (x) C^d (x) Sym^2 C^d``) and ``value-space``
    (``H d' < d_in``) when the heads together fill what they can reach.

    >>> one_layer_criterion({"widths": [2, 3], "ranks": [2], "heads": 2, "tokens": 2, "skip": False})
    ['head-mixing']
    >>> one_layer_criterion({"widths": [3, 2], "ranks": [2], "heads": 2, "tokens": 2, "skip": False})
    []
    """
    (d, e), (a,), H, t = row["widths"], row["ranks"], row["heads"], row["tokens"]
    count = poster_formula(Architecture((d, e), (a,), tokens=t, heads=H, skip=bool(row["skip"])))
    return sorted({b.name for b in one_layer_bounds(d, e, a, H, t) if b.value < count})


def _group(row: dict[str, Any]) -> str:
    return f"{'one layer' if row['depth'] == 1 else 'deep'}, {'t = 1' if row['tokens'] == 1 else 't >= 2'}" + (
        ", skip" if row["skip"] else ""
    )


def compare_heads(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every multi-head lightning row (sweep rows: :data:`ag_attention._sweep.COLUMNS`) against
    :func:`poster_formula`.  A certified row (its GF(p) rank, a proven lower bound, met a proven upper bound)
    *holds* when its dimension equals the count and *fails* when below (the bound that closed it says why); an
    uncertified row is *refuted* when the count exceeds its proven upper bound, else *open*.  For one layer the
    outcome is compared with :func:`one_layer_criterion`: ``reason_mismatches`` lists the rows where a certified
    failure has no bound below the count or a certified agreement has one (none: the criterion is exact there)."""
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    failures: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    open_rows, refuted, mismatch, entries = [], [], [], []
    one_head = {
        (tuple(r["widths"]), tuple(r["ranks"]), r["tokens"], bool(r["skip"]), bool(r["causal"])): r
        for r in rows
        if r["heads"] == 1 and not r["normalized"] and r["error"] is None
    }
    partners: Counter[str] = Counter()
    for r in rows:
        if r["heads"] < 2 or r["normalized"] or r["error"] is not None:
            continue
        arch = Architecture(
            tuple(r["widths"]),
            tuple(r["ranks"]),
            tokens=r["tokens"],
            heads=r["heads"],
            skip=r["skip"],
            causal=r["causal"],
        )
        f = poster_formula(arch)
        group = _group(r)
        entry: dict[str, Any] = {
            "architecture": describe(r),
            "group": group,
            "formula": f,
            "lower": r["dimension"],
            "upper": r["upper_bound"],
            "certified": bool(r["certified"]),
            "closed_by": r["bound"],
        }
        entries.append(entry)
        if not r["certified"]:
            if r["upper_bound"] is not None and f > r["upper_bound"]:
                entry["outcome"] = "fails (refuted by the bounds)"
                refuted.append(entry)
            else:
                entry["outcome"] = "open"
                open_rows.append(entry)
            groups[group][entry["outcome"]] += 1
            continue
        dim = r["dimension"]
        outcome = "holds" if dim == f else ("fails: below" if dim < f else "fails: above")
        groups[group][outcome] += 1
        entry["outcome"] = outcome
        if outcome != "holds":
            closer = r["bound"] or "?"
            failures[group][closer] += 1
            if len(examples[(group, closer)]) < 3:
                examples[(group, closer)].append(f"{describe(r)}: {dim} < {f}")
            if r["depth"] > 1:
                partners[_partner(r, one_head)] += 1
        if r["depth"] == 1:
            reasons = one_layer_criterion(r)
            entry["reasons"] = reasons
            if bool(reasons) != (outcome != "holds"):
                mismatch.append(f"{describe(r)}: {outcome}, bounds below the count: {reasons or 'none'}")
    return {
        "groups": {g: dict(c) for g, c in sorted(groups.items())},
        "failures_by_bound": {g: dict(c.most_common()) for g, c in sorted(failures.items())},
        "examples": {f"{g} / {b}": v for (g, b), v in sorted(examples.items())},
        "open": open_rows,
        "refuted": refuted,
        "reason_mismatches": mismatch,
        "rows": entries,
        "certified": sum(e["certified"] for e in entries),
        "multi_head_rows": len(entries),
        "deep_failures_one_head": dict(partners.most_common()),
    }


def _partner(row: dict[str, Any], one_head: dict[tuple[Any, ...], dict[str, Any]]) -> str:
    """A deep multi-head failure against the same network with one head: does the count fail there too?"""
    key = (tuple(row["widths"]), tuple(row["ranks"]), row["tokens"], bool(row["skip"]), bool(row["causal"]))
    r = one_head.get(key)
    if r is None or not r["certified"]:
        return "no certified one-head row"
    arch = Architecture(key[0], key[1], tokens=key[2], skip=key[3], causal=key[4])
    return "one head fails too" if r["dimension"] < poster_formula(arch) else "one head holds"


def heads_grid(quick: bool) -> Any:
    """Every architecture of the certification grids (quick: of ``certification-quick.toml``) as one
    :class:`~ag_attention._sweep.grid.Grid` without repeats (the wide grid contains the others): the multi-head
    rows and, for the comparison of a deep multi-head failure with the same network with one head, the one-head
    rows."""
    names = CERTIFICATION_GRIDS[:1] if quick else CERTIFICATION_GRIDS
    specs: dict[Any, None] = {}
    for name in names:
        path = SWEEPS / name
        if not path.is_file():
            raise InvalidArgumentError(
                f"{path}: grid file not found (the related report reads the grid files shipped in "
                "ag_attention/_reproduce/sweeps/: reinstall ag-attention)"
            )
        for s in load_grid(path).specs:
            specs.setdefault(s, None)
    return Grid(
        tuple(specs),
        source=" + ".join(f"sweeps/{n}" for n in names),
        description="the architectures of the certification grids",
    )


#: the poster's own setting: one softmax layer, several heads (quick: the first rows only)
SOFTMAX_GRID = tuple(
    Architecture((d, e), (a,), tokens=t, heads=H, normalized=True)
    for t in (2, 3)
    for H in (2, 3)
    for d in (1, 2, 3)
    for e in (1, 2, 3)
    for a in range(1, d + 1)
)
QUICK_SOFTMAX_GRID = (
    Architecture((2, 3), (2,), tokens=2, heads=2, normalized=True),
    Architecture((3, 2), (2,), tokens=3, heads=2, normalized=True),
    Architecture((3, 3), (3,), tokens=3, heads=3, normalized=True),
)


def softmax_heads(archs: Sequence[Architecture], seed: int = 0) -> list[dict[str, Any]]:
    """:func:`poster_formula` against the dimension of multi-head *softmax* layers: a float64 rank, proven where
    a lower bound by ball arithmetic meets the symmetry bound (``NumericalResult.certified``)."""
    out = []
    for arch in archs:
        if not arch.normalized or arch.heads < 2:
            raise InvalidArgumentError(
                f"arch={arch.describe()}: the softmax comparison is for normalized multi-head architectures"
            )
        n = numerical_dimension(arch, seed=seed, raise_on_no_gap=False)
        out.append(
            {
                "architecture": arch.describe(),
                "parameters": arch.parameter_count,
                "formula": poster_formula(arch),
                "dimension": n.dimension,
                "certified": n.certified,
                "gap": None if n.gap is None else round(float(n.gap.gap), 2),
            }
        )
    return out


def heads_section(report: Any, base: Path, quick: bool, seed: int, workers: int | None) -> dict[str, Any]:
    """Item 2: the multi-head rows of the certification grids and the softmax grid against the poster's count."""
    grid = heads_grid(quick)
    rows, seconds = _sweep_check(report, grid, base, seed, workers)
    cmp = compare_heads(rows)
    one = _one_layer_check(report, cmp)
    soft, agree = _softmax_check(report, quick, seed)
    _heads_tables(report, cmp, one, soft)
    _heads_finding(report, cmp, one, soft, agree)
    summary = {k: v for k, v in cmp.items() if k != "rows"}
    summary["one_layer_rows"] = [e for e in cmp["rows"] if e["group"].startswith("one layer")]
    return {
        "grid": grid.source,
        "architectures": len(grid.specs),
        "seconds": round(seconds, 1),
        **summary,
        "softmax": soft,
    }


def _sweep_check(report: Any, grid: Any, base: Path, seed: int, workers: int | None) -> tuple[list[Any], float]:
    """Sweep every architecture of ``grid`` (under ``base``): its rows, the seconds, and the check that none failed."""
    t0 = time.perf_counter()
    result = sweep(grid, base / "sweeps" / "related-heads", overwrite=True, seed=seed, plots=False, workers=workers)
    rows = result.rows()
    seconds = time.perf_counter() - t0
    errors = [r for r in rows if r["error"] is not None]
    report.add(
        Check(
            "every architecture of the certification grids computed",
            grid.source,
            "ag_attention.sweep (GF(p) ranks, proven upper bounds)",
            len(grid.specs),
            len(rows) - len(errors),
            len(rows) == len(grid.specs) and not errors,
            seconds,
            {"errors": [f"{describe(r)}: {r['error']}" for r in errors]},
        )
    )
    return rows, seconds


def _one_layer_check(report: Any, cmp: dict[str, Any]) -> list[dict[str, Any]]:
    """The certified one-layer rows, checked against :func:`one_layer_criterion`."""
    one = [e for e in cmp["rows"] if e["group"].startswith("one layer") and e["certified"]]
    report.add(
        Check(
            f"{HEADS} on one lightning layer the count fails exactly where a proven bound of one layer lies below it",
            f"{len(one)} certified one-layer multi-head rows (t = 1 and t >= 2, with and without skip)",
            "one_layer_criterion: span, head-mixing, value-space, heads (t = 1) below the count",
            len(one),
            len(one) - len(cmp["reason_mismatches"]),
            bool(one) and not cmp["reason_mismatches"],
            details={"disagreements": cmp["reason_mismatches"]},
        )
    )
    return one


def _softmax_check(report: Any, quick: bool, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The poster's own setting (softmax): the rows, and those certified and equal to the count."""
    soft = softmax_heads(QUICK_SOFTMAX_GRID if quick else SOFTMAX_GRID, seed=seed)
    certified = [s for s in soft if s["certified"]]
    agree = [s for s in certified if s["dimension"] == s["formula"]]
    report.add(
        Check(
            f"{HEADS} in its own setting (softmax, several heads, t >= 2) dim = P - H a^2 (no hidden symmetries)",
            f"{len(soft)} one-layer softmax architectures",
            "numerical_dimension: float64 rank, proven by ball arithmetic against the symmetry bound",
            f"{len(soft)} certified, all equal",
            f"{len(certified)} certified, {len(agree)} equal",
            len(certified) == len(soft) and len(agree) == len(certified),
            details={"rows": soft},
        )
    )
    return soft, agree


def _heads_tables(report: Any, cmp: dict[str, Any], one: list[dict[str, Any]], soft: list[dict[str, Any]]) -> None:
    """The three tables of item 2: the groups of the grids, one lightning layer, one softmax layer."""
    table = []
    for group, counts in cmp["groups"].items():
        fails = cmp["failures_by_bound"].get(group, {})
        table.append(
            [
                group,
                sum(counts.values()),
                counts.get("holds", 0),
                sum(v for k, v in counts.items() if k.startswith("fails:")),
                ", ".join(f"{k} {v}" for k, v in fails.items()) or "-",
                counts.get("fails (refuted by the bounds)", 0),
                counts.get("open", 0),
            ]
        )
    report.tables.append(
        Table(
            "The poster's count against the multi-head lightning rows of the certification grids (item 2)",
            [
                "group",
                "rows",
                "holds",
                "fails (certified)",
                "fails: closed by",
                "fails (refuted by the bounds)",
                "open",
            ],
            table,
            note="count = P - symmetry_count (GL_a per head, a rescaling per head, GL_{d_i} between layers). "
            "Certified: the GF(p) rank met a proven upper bound, named by 'closed by'; refuted: not certified, "
            "but the count exceeds the proven upper bound; open: the count lies within the bounds. "
            "Deep certified failures against the same network with one head: "
            + (", ".join(f"{k} {v}" for k, v in cmp["deep_failures_one_head"].items()) or "none")
            + ".",
            source=HEADS_SOURCE,
        )
    )
    layer_rows = []
    for e in sorted(one, key=lambda e: e["architecture"]):
        layer_rows.append(
            [
                e["architecture"],
                e["lower"],
                e["formula"],
                "holds" if e["outcome"] == "holds" else "fails",
                e["closed_by"],
                ", ".join(e.get("reasons", [])) or "-",
            ]
        )
    report.tables.append(
        Table(
            "One lightning layer, several heads (item 2)",
            ["architecture", "dimension (certified)", "count", "claim", "closed by", "proven bounds below the count"],
            layer_rows,
            source=HEADS_SOURCE,
        )
    )
    report.tables.append(
        Table(
            "The poster's own setting: one softmax layer, several heads (item 2)",
            ["architecture", "parameters", "count", "dimension", "certified", "gap (orders)"],
            [
                [s["architecture"], s["parameters"], s["formula"], s["dimension"], s["certified"], s["gap"]]
                for s in soft
            ],
            source=HEADS_SOURCE,
        )
    )


def _heads_finding(
    report: Any, cmp: dict[str, Any], one: list[dict[str, Any]], soft: list[dict[str, Any]], agree: list[Any]
) -> None:
    """The finding of item 2."""
    held = sum(e["outcome"] == "holds" for e in one)
    report.findings.append(
        f"Multi-head ({HEADS}): in its own setting, softmax attention, the count P - H a^2 is the proven dimension "
        f"of {len(agree)} of {len(soft)} one-layer architectures. Transported to lightning attention (plus the "
        f"rescaling of each head) it holds on {held} and fails on {len(one) - held} of the {len(one)} certified "
        "one-layer multi-head rows, exactly where a proven bound of one layer lies below it: the heads mix "
        "(f is linear in sum_h A_h (x) V_h, a matrix of rank <= H: H >= (d_in - a)^2 + 2 for t >= 2), the heads "
        "fill the span, the values see a subspace (H d' < d_in), or one token (t = 1). Deep certified failures: "
        + (", ".join(f"{k} {v}" for k, v in cmp["deep_failures_one_head"].items()) or "none")
        + "."
    )
