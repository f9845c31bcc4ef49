"""The reproductions ``ag-attention reproduce WHAT`` runs: one table, :data:`REPRODUCTIONS`.

Each :class:`Reproduction` names a result, says in one line what it reproduces, lists the options of
``reproduce`` that apply to it, where its report goes by default, and how to run it: a function of a
:class:`Request` (what the command line asked for) that returns a :class:`~.report.Report`.  The command's
choices, ``reproduce WHAT --help`` and its dispatch read the table, so a new reproduction with the usual signature
``reproduce_x(out, *, quick, seed) -> Report`` is its module and one entry in the table::

    Reproduction(
        "x",
        "what x reproduces, in one line",
        Lazy("ag_attention._reproduce.x", "reproduce_x"),
        figures=True,  # it draws figures: matplotlib is checked before the work
    ),

Options of its own (beyond ``--quick``, ``--seed``, ``--out``, ``--json``, ``--quiet``) are also arguments of the
``reproduce`` parser (``ag_attention._cli.reproduce``), listed in ``options=`` and read from
:attr:`Request.options`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import InvalidArgumentError

if TYPE_CHECKING:
    from .report import Report

__all__ = ["Reproduction", "Request", "Lazy", "REPRODUCTIONS", "M2_TIMEOUT", "STANDARD_OPTIONS"]

#: default seconds per Macaulay2 job of ``reproduce theorem-3.4``
M2_TIMEOUT = 900.0
#: the options every reproduction so far accepts, besides ``--out``, ``--json`` and ``--quiet``
STANDARD_OPTIONS = ("--quick", "--seed")
#: ``reproduce icl``'s sizes (options ``--dims``, ``--heads``, ``--context``, ``--steps``)
ICL_SIZES = ("dims", "heads", "context", "steps")


@dataclass(frozen=True)
class Request:
    """What the command line asks of a reproduction: its output directory, ``--quick``, ``--seed``, the values of
    its own options by name (``"wide"``, ``"max_m2_size"``: None when not given) and, for a log rather than a
    terminal, a function printing one line per item (None: progress bars)."""

    out: str
    quick: bool = False
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    progress: Callable[[str], None] | None = None

    def option(self, name: str) -> Any:
        """The value of option ``name`` (``"m2_timeout"`` for ``--m2-timeout``), None when not given."""
        return self.options.get(name)


@dataclass(frozen=True)
class Lazy:
    """``function(out, quick=..., seed=...)`` of ``module``, imported only when the reproduction runs: importing
    every reproduction module when the command line starts would cost 0.2 to 0.4 s, a third more than the rest of
    its start-up (``python -X importtime -m ag_attention --help``: 0.9 to 1.3 s), for the one reproduction a run
    needs at most."""

    module: str
    function: str

    def load(self) -> Callable[..., Report]:
        # the registry's entries name reproduction functions (tests/reproduce/test_registry.py loads each one)
        function: Callable[..., Report] = getattr(importlib.import_module(self.module), self.function)
        return function

    def __call__(self, request: Request) -> Report:
        return self.load()(request.out, quick=request.quick, seed=request.seed)


@dataclass(frozen=True)
class Reproduction:
    """One entry of :data:`REPRODUCTIONS`.

    ``name`` is the command-line name (``reproduce NAME``), ``help`` what it reproduces (one line), ``run`` the
    function of a :class:`Request` returning the report, ``options`` the options that apply besides ``--out``,
    ``--json`` and ``--quiet`` (in the order ``reproduce NAME --help`` lists them), ``figures`` whether it draws
    figures (matplotlib is then checked before the work), ``out`` its default output directory (default
    ``results/NAME``), ``after`` a check run once the report is written: it raises for what the report records
    but the exit status must say (``theorem-3.4``: a Macaulay2 job that failed or timed out, exit 3).
    """

    name: str
    help: str
    run: Callable[[Request], Report]
    options: tuple[str, ...] = STANDARD_OPTIONS
    figures: bool = False
    out: str = ""
    after: Callable[[Report], None] | None = None

    def __post_init__(self) -> None:
        if not self.out:
            object.__setattr__(self, "out", f"results/{self.name}")


# ----------------------------------------------------------------- the reproductions whose signature is their own
# Each imports its module when it runs (see Lazy: the start-up time of the command line).
def _corollary_38(request: Request) -> Report:
    from .corollary38 import GRID, QUICK_GRID, reproduce_corollary_38  # deferred: loaded when it runs (CLI start-up)

    return reproduce_corollary_38(QUICK_GRID if request.quick else GRID, seed=request.seed)


def _figure_3(request: Request) -> Report:
    from .figure3 import reproduce_figure_3  # deferred: loaded when it runs (CLI start-up)

    return reproduce_figure_3(request.out, seed=request.seed, deltas=range(3, 7) if request.quick else range(3, 11))


def _certification(request: Request) -> Report:
    from .certification import reproduce_certification  # deferred: loaded when it runs (CLI start-up)

    mode = "quick" if request.quick else ("wide" if request.option("wide") else "standard")
    return reproduce_certification(request.out, mode=mode, seed=request.seed)


def _icl(request: Request) -> Report:
    from .icl import LIMITS, reproduce_icl  # deferred: loaded when it runs (CLI start-up)

    sizes = {name: request.option(name) for name in ICL_SIZES}
    for name, value in sizes.items():
        low, high = LIMITS[name]
        if value is not None and not low <= value <= high:
            raise InvalidArgumentError(f"--{name}={value}: must be an integer in {low}..{high:,}")
    return reproduce_icl(request.out, quick=request.quick, seed=request.seed, **sizes)


def _theorem_34(request: Request) -> Report:
    from . import theorem34 as t34  # deferred: loaded when it runs (CLI start-up)

    max_size = request.option("max_m2_size")
    if max_size is None:
        m2_grid = t34.M2_GRID
    elif max_size < 1:
        raise InvalidArgumentError(f"--max-m2-size={max_size}: must be a positive number of coordinates")
    else:
        m2_grid = tuple(s for s in t34.M2_CANDIDATES if s.coordinates <= max_size)
    full, timeout = request.option("full"), request.option("m2_timeout")
    opts = t34.Options(
        m2_grid=t34.QUICK_M2_GRID if request.quick else m2_grid,
        point_grid=t34.QUICK_POINT_GRID if request.quick else t34.POINT_GRID,
        equation_grid=(
            t34.QUICK_EQUATION_GRID if request.quick else t34.FULL_EQUATION_GRID if full else t34.EQUATION_GRID
        ),
        seed=request.seed,
        backend=request.option("backend") or "auto",
        m2_timeout=M2_TIMEOUT if timeout is None else timeout,
        use_m2=not request.option("no_m2"),
        out=Path(request.out),
    )
    return t34.reproduce_theorem_34(opts, progress=request.progress)


def _theorem_34_m2_errors(report: Report) -> None:
    """A Macaulay2 item timed out or failed: :class:`~ag_attention.M2Error` (exit 3), the report written first."""
    from . import theorem34 as t34  # deferred: loaded when it runs (CLI start-up)

    t34.raise_for_m2_errors(report)


#: every reproduction, in the order ``ag-attention reproduce --help`` lists them
REPRODUCTIONS: dict[str, Reproduction] = {
    r.name: r
    for r in (
        Reproduction(
            "theorem-3.4",
            "Theorem 3.4 (singular and boundary points of one layer): pointwise certificates on the candidate "
            "sizes and Macaulay2's closures",
            _theorem_34,
            options=("--quick", "--seed", "--max-m2-size", "--backend", "--m2-timeout", "--no-m2", "--full"),
            figures=True,
            after=_theorem_34_m2_errors,
        ),
        Reproduction(
            "corollary-3.8", "Corollary 3.8 (and Cor. 3.3): exact dimensions against the formula", _corollary_38
        ),
        Reproduction(
            "figure-3",
            "Figure 3: normalized and lightning networks, L = 2, t = 3, a_i = 2, d_i = delta",
            _figure_3,
            figures=True,
        ),
        Reproduction(
            "open-questions",
            "the open questions of Section 4: several heads, skip connections, causal masks, heads with a mask",
            Lazy("ag_attention._reproduce.open_questions", "reproduce_open_questions"),
            figures=True,
        ),
        Reproduction(
            "certification",
            "how many lightning dimensions are certified exact, per variant, and by which bound",
            _certification,
            options=("--quick", "--wide", "--seed"),
        ),
        Reproduction(
            "variants",
            "affine and rotary attention (biases, RoPE): the dimension formulas of one layer and the networks "
            "beyond, certified on a grid",
            Lazy("ag_attention._reproduce.variants", "reproduce_variants"),
        ),
        Reproduction(
            "training",
            "training on the neuromanifold: where gradient descent ends, measured",
            Lazy("ag_attention._reproduce.training", "reproduce_training"),
            figures=True,
        ),
        Reproduction(
            "landscape",
            "the loss landscape of one layer: ED degrees, critical points of 100 data sets, basins",
            Lazy("ag_attention._reproduce.landscape", "reproduce_landscape"),
            figures=True,
        ),
        Reproduction(
            "related",
            "published results about lightning attention, recomputed",
            Lazy("ag_attention._reproduce.related", "reproduce_related"),
        ),
        Reproduction(
            "icl",
            "training dynamics of in-context learning (Zhang, Singh, Latham, Saxe 2025): the plateaus of merged and "
            "separate key-query heads, predicted as critical values on the rank strata; heads added one at a time "
            "(Zhang, Saxe, Latham 2026)",
            _icl,
            options=("--quick", "--seed", "--dims", "--heads", "--context", "--steps"),
            figures=True,
        ),
    )
}
