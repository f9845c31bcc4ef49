"""The geometry of a network at its own weights: :func:`point_geometry` and its result :class:`PointGeometry`.

What is reported, and what each number proves (docs/math/point.md):

* ``local_rank``: bounds on the rank of the differential of
  ``parameters -> function`` at the weights (:mod:`.geometry`): exact when
  they meet, else the proven lower bound with the upper one beside it;
* ``generic_dimension``: :func:`ag_attention.dimension` of the architecture
  (certified or a lower bound; its own certificate); for softmax attention the
  float64 :func:`ag_attention.numerical_dimension`;
* ``critical``: the local rank is below the generic dimension (True when the
  upper bound is below a certified dimension, False when the lower bound
  reaches it, None otherwise);
* ``kernel``: ``P - local rank``, the dimension of the tangent space of the
  fiber through the point, against the symmetry tangents there, family by
  family (which symmetries explain it);
* per layer, the ranks of ``A = Q^T K`` and ``V`` of each head, and the layer's
  own local rank against its own generic dimension (which layer is
  critical);
* for one plain layer, Theorem 3.4's questions (:mod:`.onelayer`);
* ``numerical``: the float64 rank with its singular-value gap at the float
  point (given floats, or softmax attention): a measurement, never a proof;
* ``float_unavailable``: why a float64 part is absent (:mod:`.trust`): at the
  weights' scale its values would leave float64's range (checked before it is
  computed: weights of ``1e200`` or ``1e-150``), or it contradicts a proven
  exact verdict, or it is not finite; a float64 gap rank outside the proven
  bounds is withdrawn ("no verdict").  The JSON never holds NaN or infinity:
  a non-finite float is null, its reason in ``float_unavailable``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .._checks import check_int, check_seconds
from .._errors import ComputationTimeoutError
from .._numeric import NearStrata, check_rtol, numerical_dimension
from .._provenance import provenance
from .._resources import Deadline
from .._results import ResultMixin
from .estimate import softmax_cost
from .geometry import LocalRank
from .grouped import MAX_PARAMETERS as GROUPED_MAX
from .grouped import GroupedGeometry, grouped_geometry
from .head_readers import network_head_table
from .heads import HeadsTable
from .kernel import softmax_head_bound, symmetry_bound_at
from .onelayer import OneLayerPoint, one_layer_point, plain_one_layer
from .plot import plot_point
from .steps import (
    LayerAtPoint,
    NumericalAtPoint,
    float_parts,
    layers_at_point,
    numerical_at,
    ranks_at_point,
    sharpen,
)
from .text import point_text
from .trust import finite
from .weights import Network, check_network

__all__ = ["PointGeometry", "LayerAtPoint", "NumericalAtPoint", "point_geometry"]


@dataclass(frozen=True)
class PointGeometry(ResultMixin):
    """The geometry of a :class:`~ag_attention.Network` at its own weights (see the module docstring)."""

    network: Network
    local: LocalRank | None  # None for softmax attention
    generic_dimension: int | None  # None: softmax without a clear float64 gap
    generic_certified: bool
    generic_certificate: str
    layers: tuple[LayerAtPoint, ...]
    one_layer: OneLayerPoint | None
    numerical: NumericalAtPoint | None
    seed: int
    seconds: float
    notes: tuple[str, ...] = field(default=())
    strata: NearStrata | None = None  # one plain layer: float64 distances to Theorem 3.4's strata at rtol
    rtol: float = 1e-3
    float_unavailable: dict[str, str] = field(default_factory=dict)  # "numerical" / "strata" -> why not computed
    grouped: GroupedGeometry | None = None  # a grouped-query checkpoint in its own parametrization (grouped.py)
    heads: HeadsTable | None = None  # every head's ranks, spectra and verdicts (heads.py)
    #: "" when every step ran; else what the deadline or Ctrl-C stopped and what is missing (a partial result)
    stopped: str = ""

    @property
    def final(self) -> bool:
        """Every step ran (no deadline or Ctrl-C stopped it): False for a partial result (see ``stopped``)."""
        return not self.stopped

    # ------------------------------------------------------------------ what it says
    @property
    def parameters(self) -> int:
        return self.network.architecture.parameter_count

    @property
    def local_rank(self) -> int | None:
        """The local rank when proven, else its proven lower bound (None for softmax: see ``numerical``)."""
        return None if self.local is None or self.network.architecture.normalized else self.local.value

    @property
    def exact(self) -> bool:
        """The local rank is proven exact."""
        return self.local is not None and self.local.exact

    @property
    def critical(self) -> bool | None:
        """The local rank is below the generic dimension: proven True, proven False, or None (undecided)."""
        if self.local is None:  # softmax: float64 only, never a proof
            return None
        if self.generic_dimension is None:
            return None
        if self.local.upper < self.generic_dimension and self.generic_certified:
            return True
        if self.local.lower >= self.generic_dimension:
            return False
        return None

    @property
    def critical_numerical(self) -> bool | None:
        """Softmax attention: the float64 verdict where :attr:`critical` has no proof: False when the float64 rank at
        the point (a clear gap) reaches the generic dimension, True when it stays below a certified one; None
        otherwise (and for lightning, whose verdict is :attr:`critical`)."""
        if not self.network.architecture.normalized or self.critical is not None:
            return None
        num, dim = self.numerical, self.generic_dimension
        if num is None or num.rank is None or dim is None:
            return None
        if num.rank >= dim:
            return False
        return True if self.generic_certified else None

    @property
    def fiber_dimension(self) -> int | None:
        """``P - local rank`` (the tangent space of the fiber through the point) when the rank is exact."""
        return None if not self.exact else self.parameters - self.local_rank  # type: ignore[operator]

    @property
    def explained(self) -> bool | None:
        """The symmetry tangents span the whole kernel (True), or not (False; None when the rank is not exact)."""
        if self.local is None or not self.exact:
            return None
        return self.parameters - self.local.lower == self.local.symmetry_rank

    def critical_layers(self) -> list[int]:
        """The layers (1-based) that are critical by themselves (their own local rank below their own generic
        dimension, proven).  A rank-deficient layer need not be: ``rank V < d`` with ``A`` generic is a smooth
        point of one layer (Lemma A.3); ``rank_deficient`` on each layer says that separately."""
        return [ly.index for ly in self.layers if ly.critical]

    def plot(self, path: Any) -> Any:
        """Draw the spectra into ``path`` (``.png``, ``.pdf`` or ``.svg``): the Jacobian's singular values with
        the rtol line and the local rank, and for one plain layer those of ``A`` and ``V``; returns the path
        written.  Needs the float64 spectrum (``point_geometry(..., numerical=True)``) and matplotlib (the CLI's
        ``--plot``)."""

        return plot_point(self, path)

    # ------------------------------------------------------------------ views
    def to_dict(self) -> dict[str, Any]:

        arch = self.network.architecture
        d: dict[str, Any] = {
            "architecture": arch.to_dict(),
            "parameters": self.parameters,
            "point": {
                "source": self.network.source,
                "layout": self.network.layout,
                "model": self.network.model,
                "conversion": self.network.conversion,
                "floats": self.network.floats,
                "factored_layers": list(self.network.factored),
                "not_used": list(self.network.ignored),
            },
            "local_rank": self.local_rank,
            "local_rank_upper": None if self.local is None else self.local.upper,
            "exact": self.exact,
            "local": None if self.local is None else self.local.to_dict(),
            "generic_dimension": self.generic_dimension,
            "generic_certified": self.generic_certified,
            "generic_certificate": self.generic_certificate,
            "critical": self.critical,
            "critical_numerical": self.critical_numerical,
            "fiber_dimension": self.fiber_dimension,
            "kernel": None if self.local is None else list(self.local.kernel),
            "explained_by_symmetries": self.explained,
            "layers": [ly.to_dict() for ly in self.layers],
            "critical_layers": self.critical_layers(),
            "numerical": None if self.numerical is None else self.numerical.to_dict(),
            "rtol": self.rtol,
            "jacobian_singular_values": None if self.numerical is None else list(self.numerical.singular_values),
            "numerical_rank": None if self.numerical is None else self.numerical.rank_at_rtol,
            "final": self.final,
            "stopped": self.stopped or None,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "notes": list(self.notes),
            "grouped_query": None if self.grouped is None else self.grouped.to_dict(),
            "heads": None if self.heads is None else self.heads.to_dict(),
            "provenance": provenance(),
        }
        if self.one_layer is not None:
            o = self.one_layer
            d.update(
                {
                    "rank_A": o.rank_A,
                    "rank_V": o.rank_V,
                    "singular": o.singular,
                    "boundary": o.boundary,
                    "preimages": len(o.preimages) + o.irrational_preimages,
                    "one_layer": o.to_dict(),
                }
            )
        if self.strata is not None:
            st = self.strata
            d.update(
                {
                    "near_singular": st.near_singular,
                    "distance_to_singular": st.relative_to_singular,
                    "near_critical": st.near_critical,
                    "distance_to_critical": st.relative_to_critical,
                    "strata": st.to_dict(),
                }
            )
        elif "strata" in self.float_unavailable:
            d.update(
                dict.fromkeys(
                    ("near_singular", "distance_to_singular", "near_critical", "distance_to_critical", "strata")
                )
            )
        reasons = dict(self.float_unavailable)
        out: dict[str, Any] = finite(d, reasons)  # valid JSON: a non-finite float is null, with its reason
        out["float_unavailable"] = reasons
        return out

    def __repr__(self) -> str:
        rank = (
            "?"
            if self.local is None
            else (f"{self.local.lower}" if self.exact else f"{self.local.lower}..{self.local.upper}")
        )
        crit = {True: "critical", False: "not critical", None: "critical: undecided"}[self.critical]
        return (
            f"PointGeometry({self.network.architecture.describe()}: local rank {rank} of generic "
            f"{self.generic_dimension}, {crit})"
        )

    def __str__(self) -> str:
        return point_text(self)


#: above this many parameters the float64 rank is not computed by default when the exact one is proven (the SVD
#: of the Jacobian of 4 layers x 4 heads of width 16, 5,120 parameters, took 189 s here: bench/point.py)
NUMERICAL_DEFAULT_MAX_PARAMETERS = 1500


def point_geometry(
    net: Network,
    *,
    seed: int = 0,
    samples: int | None = None,
    numerical: bool | None = None,
    rtol: float = 1e-3,
    timeout: float | None = None,
) -> PointGeometry:
    """The geometry of ``net`` at its weights (see the module docstring).

    ``numerical`` (default: when the weights were floats, and always for
    softmax attention; not above ``NUMERICAL_DEFAULT_MAX_PARAMETERS`` (1,500)
    parameters when the exact local rank is proven) adds the float64 rank at
    the float point and the Jacobian's singular values.  ``rtol``: the relative
    tolerance of the float64 verdicts (the numerical rank, and for one layer
    "near-singular" and "near-critical"); the exact verdicts do not depend on it.
    ``timeout``: seconds for the whole call (None: no limit), checked between
    steps and inside each large rank; past it (or at Ctrl-C, inside a
    computation that takes Ctrl-C as a deadline) the result is partial:
    ``final`` False, ``stopped`` naming the step and what is missing, every
    verdict of the steps that finished kept.  A float64 part
    that cannot be trusted at the weights' scale is not computed, and one
    that contradicts a proven exact verdict is set aside: ``float_unavailable``
    says why (the exact verdicts hold at every scale).
    """

    net = check_network(net)
    rtol = check_rtol(rtol)
    if timeout is not None:
        timeout = check_seconds(timeout)
    deadline = Deadline(timeout)
    if samples is not None:  # input sequences (None: the automatic number)
        samples = check_int(samples, "samples", minimum=1)
    t0 = time.perf_counter()
    arch = net.architecture
    notes: list[str] = list(net.notes)  # how a checkpoint was mapped
    try:
        local, generic, certified, cert, early = _model_ranks(net, seed, samples, deadline, notes, rtol)
    except ComputationTimeoutError as exc:  # a partial result: nothing but what the network is
        missing = "the local rank, the generic dimension, the layers and the float64 parts were not computed"
        return _partial(net, seed, t0, notes, rtol, f"{exc}: {missing}")
    one = one_layer_point(net, generic) if plain_one_layer(net) and generic is not None else None
    try:
        deadline.check("each layer alone")
        layers = layers_at_point(net, seed, deep=arch.depth > 1, deadline=deadline)
    except ComputationTimeoutError as exc:  # the network's verdicts stand; each layer's and the float64 parts not
        missing = "each layer alone and the float64 parts were not computed"
        return _partial(net, seed, t0, notes, rtol, f"{exc}: {missing}", (local, generic, certified, cert), one)
    if local is not None and arch.depth > 1 and not local.exact and all(ly.local is not None for ly in layers):
        local = sharpen(net, local, layers, seed, notes)
    want_numeric = _want_numeric(net, local, numerical, notes)
    num_at, strata, unavailable = float_parts(net, local, one, want_numeric, seed, samples, rtol, early)
    if one is not None and local is not None and local.exact and generic is not None:
        by_rank = local.lower < generic
        if arch.parametrization == "AV" or arch.ranks[0] >= arch.widths[0]:
            if by_rank != one.critical_form:  # pragma: no cover - Lemma A.3 says they agree
                notes.append(f"Lemma A.3 predicts critical={one.critical_form}, the exact rank says {by_rank}")
    grouped = _grouped(net, seed, notes)
    return PointGeometry(
        net,
        local,
        generic,
        certified,
        cert,
        layers,
        one,
        num_at,
        seed,
        time.perf_counter() - t0,
        tuple(notes),
        strata,
        rtol,
        unavailable,
        grouped,
        network_head_table(net, rtol),
    )


def _partial(
    net: Network,
    seed: int,
    t0: float,
    notes: list[str],
    rtol: float,
    stopped: str,
    ranks: tuple[LocalRank | None, int | None, bool, str] = (None, None, False, ""),
    one: OneLayerPoint | None = None,
) -> PointGeometry:
    """What :func:`point_geometry` found before its deadline or Ctrl-C (``stopped`` says what is missing)."""
    local, generic, certified, cert = ranks
    return PointGeometry(
        net,
        local,
        generic,
        certified,
        cert,
        (),
        one,
        None,
        seed,
        time.perf_counter() - t0,
        tuple(notes),
        rtol=rtol,
        stopped=stopped,
    )


def _model_ranks(
    net: Network, seed: int, samples: int | None, deadline: Deadline, notes: list[str], rtol: float
) -> tuple[LocalRank | None, int | None, bool, str, NumericalAtPoint | None]:
    """The local rank and the generic dimension (certified, its certificate), and for softmax the float64 rank at
    the point when it was taken here: exact for lightning attention (:func:`~ag_attention._point.steps.ranks_at_point`),
    float64 for softmax attention (with the upper bound a dead or rank-deficient head proves).

    Softmax: the float64 rank at the point is taken first; where it reaches the proven symmetry bound at the point
    (``P - rank T(theta)``, exact over GF(p), at least ``dim M``: the tangents' rank is lowest at special points),
    ``dim M`` is that bound (numerically: the rank is float64) and the point is not critical, with no second
    Jacobian at a random point; otherwise the dimension is measured at a random point."""

    arch = net.architecture
    if not arch.normalized:
        return (*ranks_at_point(net, seed, samples, deadline, "the network"), None)
    notes.append("softmax attention: the local rank is float64 (numerical), never a proof")
    head = softmax_head_bound(net)
    bound = symmetry_bound_at(net)
    deadline.check("the float64 rank at the point")
    if deadline.remaining() is not None:  # one SVD that cannot stop halfway: started only if it fits
        seconds, extra, _ = softmax_cost(net, samples)
        deadline.fits("the float64 rank at the point", seconds)
    early = numerical_at(net, seed, samples, rtol) if bound is not None else None
    if early is not None and early.rank is not None and early.rank == bound:
        cert = (
            f"numerical: the float64 rank at the point, {early.rank} ({early.gap}), reaches the proven symmetry bound "
            f"there, P - rank T(theta) = {bound}, which bounds dim M: dim M = {bound}, the point not critical "
            "(a float64 rank: not a proof)"
        )
        return head, bound, False, cert, early
    deadline.check("the dimension at a random point")
    if deadline.remaining() is not None:
        deadline.fits("the dimension at a random point", softmax_cost(net, samples)[1] / 3)
    num = numerical_dimension(arch, seed=seed)
    certified = bool(num.certified)
    cert = "float64 rank with a clear gap" + (", certified by ball arithmetic" if certified else "")
    return head, num.dimension, certified, cert, early


def _want_numeric(net: Network, local: LocalRank | None, numerical: bool | None, notes: list[str]) -> bool:
    """Whether the float64 rank is computed: as asked, else for floats and softmax attention, but not above
    :data:`NUMERICAL_DEFAULT_MAX_PARAMETERS` parameters when the exact local rank is proven (said in a note)."""
    arch = net.architecture
    if numerical is not None:
        return numerical
    want = net.floats or arch.normalized
    if (
        want
        and not arch.normalized
        and local is not None
        and local.exact
        and arch.parameter_count > NUMERICAL_DEFAULT_MAX_PARAMETERS
    ):
        notes.append(
            f"the float64 rank is skipped ({arch.parameter_count:,} parameters > "
            f"{NUMERICAL_DEFAULT_MAX_PARAMETERS:,} and the exact local rank is proven): numerical=True "
            "computes it (an SVD of the whole Jacobian)"
        )
        return False  # the exact rank is proven; the float64 SVD of a large Jacobian only repeats it
    return want


def _grouped(net: Network, seed: int, notes: list[str]) -> GroupedGeometry | None:
    """The grouped-query layers' own model (:mod:`.grouped`), and a note on it, when the network has one."""
    if not net.grouped:
        return None
    grouped = grouped_geometry(net.architecture, net.grouped, seed)
    notes.append(
        grouped.note()
        if grouped is not None
        else "grouped-query attention: its own model is not "
        f"analysed (softmax, biases, or more than {GROUPED_MAX:,} parameters)"
    )
    return grouped
