"""One row of a sweep: the dimension of one architecture, as plain data (what a worker sends back).

Lightning rows come from :func:`ag_attention.dimension` (exact over GF(p),
FLINT on one thread: the sweep runs one architecture per core); normalized
rows from :func:`ag_attention.numerical_dimension` (float64, ``certified``
always false, no verdict without a clear gap).  A row is a dict of the
columns in :data:`COLUMNS`: JSON-safe values only (ints, floats, bools,
strings, lists, ``None``), so that it goes through the journal unchanged.

An architecture that fails (too large for memory, no clear gap, a
computation error) still gives a row: ``error`` names the failure,
``dimension`` is null, and a resumed sweep computes it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from .._architecture import Architecture
from .._errors import AgAttentionError
from .._exact import dimension
from .._models import effective_architecture, expected_dimension
from .._numeric import numerical_dimension
from .._progress import quiet
from .grid import Spec, to_architecture

__all__ = ["COLUMNS", "KEY_COLUMNS", "compute_row", "compute_chunk", "certificate_kind"]

#: one row of results (the columns of :data:`COLUMNS`)
Row = dict[str, Any]
#: what an executor calls with each finished chunk's rows
Emit = Callable[[list[Row]], None]

#: the columns of a sweep's rows, in order, with their Arrow types (``?``: may be null)
COLUMNS: tuple[tuple[str, str], ...] = (
    ("widths", "list<int64>"),
    ("ranks", "list<int64>"),
    ("tokens", "int64"),
    ("heads", "int64"),
    ("skip", "bool"),
    ("causal", "bool"),
    ("normalized", "bool"),
    ("depth", "int64"),
    ("parameters", "int64"),
    ("dimension", "int64?"),
    ("upper_bound", "int64?"),
    ("expected", "int64?"),
    ("formula", "string?"),
    ("formula_applies", "bool"),
    ("paper_hypotheses_hold", "bool"),
    ("failed_hypotheses", "list<string>"),
    ("agrees", "bool?"),
    ("certified", "bool"),
    ("certificate_kind", "string"),
    ("bound", "string?"),
    ("certificate", "string"),
    ("numerical", "bool"),
    ("singular_value_gap", "float64?"),
    ("effective_widths", "list<int64>"),
    ("effective_ranks", "list<int64>"),
    ("prime", "int64?"),
    ("seed", "int64"),
    ("samples", "int64?"),
    ("runs", "int64?"),
    ("error", "string?"),
    ("seconds", "float64"),
)

#: the columns that identify a row (:class:`ag_attention._sweep.grid.Spec`)
KEY_COLUMNS = ("widths", "ranks", "tokens", "heads", "skip", "normalized", "causal")

#: certificate kinds: how a lightning dimension is known (``certified`` is true for the first three); the column
#: ``bound`` names the upper bound the rank met (``symmetries``, ``effective-architecture`` or a bound of
#: docs/math/bounds.md)
CERTIFICATE_KINDS = (
    "symmetry-bound",
    "analytic-bound",
    "effective-architecture",
    "lower-bound",
    "ball-arithmetic",
    "numerical",
    "error",
)


def certificate_kind(result: Any) -> str:
    """Which proof backs a :class:`ag_attention.DimensionResult` (as in its ``certificate`` text)."""
    closed = result.closed_by
    if closed is None:
        return "lower-bound"
    return {"symmetries": "symmetry-bound", "effective-architecture": "effective-architecture"}.get(
        closed, "analytic-bound"
    )


#: the kinds whose rows are certified (``certified`` true)
CERTIFIED_KINDS = ("symmetry-bound", "analytic-bound", "effective-architecture", "ball-arithmetic")


def row_contradiction(row: dict[str, Any]) -> str | None:
    """What a well-typed row with a valid key contradicts in itself or in its key (``None``: nothing).

    Everything checked follows from the row alone, without recomputing the rank: the parameters, depth, formula
    value and effective architecture of its key; ``0 <= dimension <= upper_bound <= parameters``; a certified row
    has a dimension equal to its upper bound and a certified kind; an error row has no dimension and is not
    certified; a lightning row names its prime.  A journal row that fails is recomputed on ``--resume``, never
    published (a row with ``dimension: -5`` was kept as certified).
    """
    spec = Spec.from_row(row)
    arch = to_architecture(spec)
    P, dim, upper = arch.parameter_count, row["dimension"], row["upper_bound"]
    if row["parameters"] != P:
        return f"parameters={row['parameters']}, its architecture has {P}"
    if row["depth"] != spec.depth:
        return f"depth={row['depth']}, its architecture has {spec.depth} layers"
    if dim is not None and not 0 <= dim <= P:
        return f"dimension={dim}: not between 0 and the {P} parameters"
    if upper is not None and not 0 <= upper <= P:
        return f"upper_bound={upper}: not between 0 and the {P} parameters"
    if dim is not None and upper is not None and dim > upper:
        return f"dimension={dim} above its upper_bound={upper}"
    expected = expected_dimension(arch)
    if row["expected"] != expected.value or row["formula_applies"] != expected.applies:
        return (
            f"expected={row['expected']} (formula_applies={row['formula_applies']}): the formula gives "
            f"{expected.value} (applies={expected.applies})"
        )
    eff = effective_architecture(arch)
    if list(row["effective_widths"]) != list(eff.widths) or list(row["effective_ranks"]) != list(eff.ranks):
        return "effective_widths/effective_ranks: not the effective architecture of its key"
    if row["certificate_kind"] not in CERTIFICATE_KINDS:
        return f"certificate_kind={row['certificate_kind']!r}: one of {', '.join(CERTIFICATE_KINDS)}"
    if row["certified"]:
        if dim is None or row["certificate_kind"] not in CERTIFIED_KINDS:
            return f"certified with dimension={dim} and certificate_kind={row['certificate_kind']!r}"
        if upper is not None and upper != dim:
            return f"certified, but dimension={dim} is below its upper_bound={upper}"
    if row["error"] is not None and (dim is not None or row["certified"]):
        return "an error row with a dimension or a certificate"
    if (
        row["dimension"] is not None
        and row["expected"] is not None
        and row["agrees"] is not None
        and row["agrees"] != (dim == row["expected"])
    ):
        return f"agrees={row['agrees']} for dimension={dim} and expected={row['expected']}"
    if not spec.normalized and row["error"] is None and row["prime"] is None:
        return "a lightning row without its prime"
    if row["seconds"] < 0:
        return f"seconds={row['seconds']}: negative"
    return None


def compute_row(spec: Spec, prime: int, seed: int) -> dict[str, Any]:
    """The row of ``spec``: its dimension with the formula, hypotheses and certificate."""
    t0 = time.perf_counter()
    arch = to_architecture(spec)
    expected = expected_dimension(arch)
    eff = effective_architecture(arch)
    row: dict[str, Any] = {
        **spec.to_dict(),
        "depth": spec.depth,
        "parameters": arch.parameter_count,
        "dimension": None,
        "upper_bound": None,
        "expected": expected.value,
        "formula": expected.formula,
        "formula_applies": expected.applies,
        "paper_hypotheses_hold": expected.paper_hypotheses_hold,
        "failed_hypotheses": list(expected.failed_hypotheses),
        "agrees": None,
        "certified": False,
        "certificate_kind": "error",
        "bound": None,
        "certificate": "",
        "numerical": spec.normalized,
        "singular_value_gap": None,
        "effective_widths": list(eff.widths),
        "effective_ranks": list(eff.ranks),
        "prime": None if spec.normalized else prime,
        "seed": seed,
        "samples": None,
        "runs": None,
        "error": None,
    }
    try:
        with quiet():  # one row is one step of the sweep's own bar (workers do not inherit the caller's quiet())
            _compute(row, arch, spec, prime, seed)
    except AgAttentionError as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"
        row["certificate"] = "no result: " + row["error"]
    row["seconds"] = round(time.perf_counter() - t0, 6)
    return row


def _compute(row: dict[str, Any], arch: Architecture, spec: Spec, prime: int, seed: int) -> None:
    """Fill ``row`` with the dimension of ``arch``: float64 for softmax, exact over GF(p) otherwise."""

    if spec.normalized:
        n = numerical_dimension(arch, seed=seed, raise_on_no_gap=False)
        d = n.to_dict()
        # certified: a ball-arithmetic lower bound meets the bound of the symmetry families 1 and 2
        row.update(
            dimension=n.dimension,
            agrees=n.agrees,
            certified=n.certified,
            upper_bound=n.upper_bound,
            certificate_kind="ball-arithmetic" if n.certified else "numerical",
            certificate=(
                d["certificate"]
                if n.dimension is not None
                else "numerical, no verdict: " + (n.undecided or n.gap.reason)
            ),
            singular_value_gap=d["singular_value_gap"],
            samples=n.samples,
            runs=len(n.history) or 1,
        )
    else:
        r = dimension(arch, prime=prime, seed=seed, threads=1)
        row.update(
            dimension=r.dimension,
            upper_bound=r.upper_bound,
            agrees=r.agrees,
            certified=r.certified,
            certificate_kind=certificate_kind(r),
            bound=r.closed_by,
            certificate=r.certificate,
            prime=r.prime,
            samples=r.samples,
            runs=len(r.runs),
        )


def compute_chunk(specs: Sequence[Spec], prime: int, seed: int) -> list[dict[str, Any]]:
    """The rows of ``specs``, in order (one task of a local or Dask sweep)."""
    return [compute_row(spec, prime, seed) for spec in specs]
