"""``ag-attention reproduce variants``: affine and rotary attention, certified on a grid (docs/math/affine.md,
docs/math/rotary.md).

For every network of the grid the dimension is computed with its certificate and compared with the formula where
one applies:

* one lightning layer with biases and/or rotary positions: the exact engine (a GF(p) rank, at the true
  frequencies by Lindemann-Weierstrass, meeting the symmetry bound) against Prop. affine / Prop. rotary (proven);
* one softmax layer: a ball-arithmetic minor meeting the symmetry bound against the softmax formulas (the formula
  is the proven upper bound; the grid is the evidence for the lower bound);
* several heads, several layers, causal masks: no formula; the certified value, or the interval where the bounds do
  not meet, and a cross-check: the float64 rank at the true frequencies lies in the exact interval.

The report opens with one verdict per statement ("holds (N checks)") and the sizes it covers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._architecture import Architecture
from .._exact import dimension
from .._models import expected_dimension
from .._numeric import certify_dimension, numerical_dimension
from .._positions import Rotary
from .._progress import track
from .report import Check, Report, Table, Verdict
from .sources import Source

__all__ = ["Case", "GRID", "QUICK_GRID", "reproduce_variants"]

#: the sets of biases checkpoints have: GPT-2, BERT, OPT, ViT, CLIP, GPT-NeoX (qkvo), Qwen2 (qkv), and one of each
BIAS_SETS = ("", "q", "k", "v", "o", "qkv", "qkvo")
#: no positions, full rotary (LLaMA's rotate_half, base 10^4), half the head turning (GPT-NeoX, Phi)
POSITIONS: tuple[Rotary | None, ...] = (None, Rotary(), Rotary(dims=2))


@dataclass(frozen=True)
class Case:
    widths: tuple[int, ...]
    ranks: tuple[int, ...]
    tokens: int
    bias: str = ""
    positions: Rotary | None = None
    normalized: bool = False
    heads: int = 1
    causal: bool = False

    def architecture(self) -> Architecture:
        return Architecture(
            self.widths,
            self.ranks,
            tokens=self.tokens,
            heads=self.heads,
            bias=self.bias,
            positions=self.positions,
            normalized=self.normalized,
            causal=self.causal,
        )


def _one_layer(sizes: tuple[tuple[int, int, int, int], ...]) -> tuple[Case, ...]:
    cases = []
    for d, d_out, a, t in sizes:
        for positions in POSITIONS:
            if positions is not None and positions.rotated(a) > a:
                continue
            for bias in BIAS_SETS:
                if not bias and positions is None:
                    continue  # the paper's layer: reproduce corollary-3.8
                for normalized in (False, True):
                    cases.append(Case((d, d_out), (a,), t, bias, positions, normalized))
    return tuple(cases)


_SIZES = ((2, 2, 2, 2), (3, 2, 2, 3), (3, 1, 2, 2), (4, 3, 4, 2), (5, 2, 4, 3), (6, 3, 4, 2))
_BEYOND = tuple(
    Case(w, r, t, bias, pos, norm, heads, causal)
    for w, r, t, heads, causal in (
        ((3, 3), (2,), 3, 2, False),
        ((4, 4), (4,), 2, 2, False),
        ((3, 3), (2,), 3, 1, True),
        ((3, 3, 2), (2, 2), 3, 1, False),
        ((4, 4, 4), (2, 2), 3, 1, False),
        ((3, 3, 3), (2, 2), 2, 2, True),
    )
    for bias in ("", "qkv", "qkvo")
    for pos in (None, Rotary())
    for norm in (False, True)
    if bias or pos is not None
)

#: the full grid: one layer on six sizes (every bias set, three position encodings, both models), then several
#: heads, layers and causal masks
GRID: tuple[Case, ...] = _one_layer(_SIZES) + _BEYOND
#: ``--quick``: two sizes of one layer and the first networks beyond
QUICK_GRID: tuple[Case, ...] = _one_layer(_SIZES[:2]) + _BEYOND[:8]


def _label(arch: Architecture) -> str:
    if arch.positions is not None:
        return "Prop. rotary" + (" (softmax)" if arch.normalized else "")
    return "Prop. affine" + (" (softmax)" if arch.normalized else "")


STATEMENTS = {
    "Prop. affine": "one lightning layer with biases B: dim = a(2d - a) + d d' - 1 + the bias parameters (proven)",
    "Prop. rotary": "one lightning layer with rotary positions: dim = P - D - (a - D)^2 - 1 (proven)",
    "Prop. affine (softmax)": "one softmax layer with biases: dim = a(2d - a) + d d' + a[q] + d'[v or o] "
    "(the symmetry bound; lower bound certified here)",
    "Prop. rotary (softmax)": "one softmax layer with rotary positions: dim = P - D - (a - D)^2 - the value-bias "
    "family (the symmetry bound; lower bound certified here)",
    "float64 = exact": "beyond one layer: the float64 rank at the true frequencies lies in the exact interval",
}


def _measure(case: Case, seed: int) -> tuple[int | None, int, bool, str, float]:
    """``(lower, upper, certified, method, seconds)`` of one network: the exact engine (lightning) or the ball
    certificate (softmax)."""
    arch = case.architecture()
    t0 = time.perf_counter()
    if arch.normalized:
        c = certify_dimension(arch, seed=seed)
        return c.lower, c.upper, c.lower == c.upper, "ball-arithmetic minor + symmetry bound", time.perf_counter() - t0
    r = dimension(arch, seed=seed)
    method = "GF(p) Jacobian rank" + (" at a torus point (rotary)" if arch.positions else "") + " + symmetry bound"
    return r.dimension, r.upper_bound, r.certified, method, time.perf_counter() - t0


def _row(case: Case, arch: Architecture, lower: int | None, upper: int, exp: Any, seconds: float) -> list[Any]:
    return [
        list(case.widths),
        list(case.ranks),
        case.tokens,
        case.heads,
        case.bias or "-",
        "-" if case.positions is None else case.positions.describe(),
        "softmax" if case.normalized else "lightning",
        "causal" if case.causal else "-",
        arch.parameter_count,
        lower,
        upper,
        exp.formula,
        exp.value,
        round(seconds, 3),
    ]


def _case(case: Case, seed: int, report: Report, by_label: dict[str, list[Check]]) -> list[Any]:
    """One network of the grid: its row, and its check (the formula where one applies, else float64 inside the
    exact interval) added to ``report`` and to its statement's list."""
    arch = case.architecture()
    exp = expected_dimension(arch)
    lower, upper, certified, method, seconds = _measure(case, seed)
    size = (case.widths[0], case.widths[-1], case.ranks[0])
    if exp.applies:
        label = _label(arch)
        check = Check(
            f"{label}: dim = {exp.value}",
            arch.describe(),
            method,
            exp.value,
            lower,
            certified and lower == exp.value,
            seconds,
            {"upper": upper, "seed": seed},
            size=size,
            techniques=(method,),
        )
        by_label[label].append(report.add(check))
        if not check.passed:
            report.findings.append(f"{arch.describe()}: {label} gives {exp.value}, the computation {lower}..{upper}")
    elif arch.depth > 1 or arch.heads > 1 or arch.causal:
        num = numerical_dimension(arch, seed=seed).dimension
        check = Check(
            "float64 rank within the exact interval",
            arch.describe(),
            "float64 gap rank at the true frequencies vs " + method,
            f"{lower}..{upper}",
            num,
            num is not None and lower is not None and lower <= num <= upper,
            seconds,
            {"lower": lower, "upper": upper, "certified": certified},
            size=size,
            techniques=("float64 gap rank", method),
        )
        by_label["float64 = exact"].append(report.add(check))
    return _row(case, arch, lower, upper, exp, seconds)


def reproduce_variants(out: Path | str | None = None, *, quick: bool = False, seed: int = 0) -> Report:
    """Run the grid (:data:`QUICK_GRID` with ``quick``) and return the report."""
    report = Report(
        "Affine and rotary attention: dimensions certified on a grid",
        summary=(
            "Biases on queries, keys, values and output (docs/math/affine.md) and rotary position embeddings "
            "(docs/math/rotary.md). Lightning: a GF(p) rank of the Jacobian (a proven lower bound, at the true "
            "rotary frequencies by Lindemann-Weierstrass) meeting the symmetry bound (proven). Softmax: a ball-"
            "arithmetic minor (a proven lower bound) meeting the symmetry bound. 'holds' counts the sizes where "
            "the computation equals the formula; beyond one layer and one head no formula is claimed."
        ),
        meta={"seed": seed, "quick": quick},
    )
    rows: list[list[Any]] = []
    by_label: dict[str, list[Check]] = {k: [] for k in STATEMENTS}
    for case in track(QUICK_GRID if quick else GRID, desc="variants", unit="network"):
        rows.append(_case(case, seed, report, by_label))
    for label, statement in STATEMENTS.items():
        checks = by_label[label]
        report.verdicts.append(Verdict.of(label, statement, "docs/math/affine.md, docs/math/rotary.md", checks))
    report.tables.append(
        Table(
            "Dimensions",
            [
                "widths",
                "ranks",
                "t",
                "heads",
                "bias",
                "positions",
                "model",
                "mask",
                "P",
                "dim",
                "upper",
                "formula",
                "value",
                "s",
            ],  # fmt: skip
            rows,
            note="dim: the proven lower bound; upper: the symmetry bound (proven); equal: the dimension (certified).",
            formats={"dim": lambda v, row: f"{v}" if v == row["upper"] else f">= {v}"},
            source=Source.theorem(
                "the package's formulas for biases and rotary positions, proven in "
                "docs/math/affine.md and docs/math/rotary.md"
            ),
        )
    )
    return report
