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

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import ComputationError, InvalidArgumentError, NoClearGapError
from .._numeric.strata import NearStrata
from .._resources import Deadline
from .._results import ResultMixin
from .._version import __version__
from .geometry import LocalRank, local_rank
from .grouped import MAX_PARAMETERS as GROUPED_MAX
from .grouped import GroupedGeometry, grouped_geometry
from .heads import HeadsTable, network_head_table, softmax_head_bound, with_head_kernel
from .onelayer import OneLayerPoint, one_layer_point, plain_one_layer
from .trust import check_numerical, check_strata, finite, jacobian_range, strata_range
from .weights import Network

__all__ = ["PointGeometry", "LayerAtPoint", "NumericalAtPoint", "point_geometry"]


@dataclass(frozen=True)
class LayerAtPoint:
    """One layer of the network at its weights: ranks of each head, the layer's own local rank."""

    index: int  # 1-based
    rank_bound: int  # a_i
    ranks_A: tuple[int, ...]  # per head
    ranks_V: tuple[int, ...]
    local: LocalRank | None  # the layer alone (a network of one layer at the same weights)
    generic: int | None  # the generic dimension of that one-layer architecture
    generic_certified: bool

    @property
    def rank_deficient(self) -> bool:
        """Some head has ``rank A`` below ``min(a_i, d_{i-1})`` or ``rank V`` below ``min(d_i, d_{i-1})`` (and below
        the head size for a checkpoint's ``V_h = W_O,h W_v,h``, whose rank is at most that by construction)."""
        return any(r < self.full_a for r in self.ranks_A) or any(r < self.full_v for r in self.ranks_V)

    full_a: int = 0
    full_v: int = 0  # min(d_i, d_{i-1}), and the head size when V_h = W_O,h W_v,h (a checkpoint's factored product)
    factored_v: bool = False

    @property
    def critical(self) -> bool | None:
        if self.local is None or self.generic is None:
            return None
        if self.local.upper < self.generic and self.generic_certified:
            return True
        if self.local.lower >= self.generic:
            return False
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.index,
            "rank_bound": self.rank_bound,
            "rank_A": list(self.ranks_A),
            "rank_V": list(self.ranks_V),
            "full_rank_A": self.full_a,
            "full_rank_V": self.full_v,
            "rank_deficient": self.rank_deficient,
            "local_rank": None if self.local is None else self.local.to_dict(),
            "generic_dimension": self.generic,
            "critical": self.critical,
        }


@dataclass(frozen=True)
class NumericalAtPoint:
    """The float64 rank at the float point and its gap (None without a clear gap), the singular values of the
    column-normalized Jacobian, and the numerical rank at ``rtol`` (values above ``rtol`` times the largest)."""

    rank: int | None
    gap: str  # the gap in words ("12.7 orders to the noise level", "no clear gap: ...")
    smallest_kept: float | None
    largest_dropped: float | None
    samples: int
    singular_values: tuple[float, ...] = ()
    rtol: float = 1e-3

    @property
    def rank_at_rtol(self) -> int:
        from .._numeric.strata import numerical_rank

        return numerical_rank(np.array(self.singular_values), self.rtol)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "gap": self.gap,
            "smallest_kept": self.smallest_kept,
            "largest_dropped": self.largest_dropped,
            "samples": self.samples,
            "singular_values": list(self.singular_values),
            "rtol": self.rtol,
            "rank_at_rtol": self.rank_at_rtol,
        }


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
        from .plot import plot_point

        return plot_point(self, path)

    # ------------------------------------------------------------------ views
    def to_dict(self) -> dict[str, Any]:
        from .._provenance import provenance

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
            "fiber_dimension": self.fiber_dimension,
            "kernel": None if self.local is None else list(self.local.kernel),
            "explained_by_symmetries": self.explained,
            "layers": [ly.to_dict() for ly in self.layers],
            "critical_layers": self.critical_layers(),
            "numerical": None if self.numerical is None else self.numerical.to_dict(),
            "rtol": self.rtol,
            "jacobian_singular_values": None if self.numerical is None else list(self.numerical.singular_values),
            "numerical_rank": None if self.numerical is None else self.numerical.rank_at_rtol,
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
        arch = self.network.architecture
        if self.network.model:  # a checkpoint: the model analysed, the layout read, what was dropped
            head = f"Geometry at the point: {self.network.model}: {arch.describe()}, {self.parameters} parameters"
        else:
            read = f" (read as {self.network.layout})" if self.network.layout else ""
            head = f"Geometry at the point: {arch.describe()}, {self.parameters} parameters{read}"
        lines = [head, f"  point            {self.network.source}; {self.network.conversion}"]
        if self.network.grouped:  # the verdicts below are the ambient multi-head model's: say so first
            lines.append(
                f"  grouped-query    {self.grouped.summary() if self.grouped else 'its own model not analysed'}"
                f"; below: the ambient {arch.heads}-head model at this GQA point"
            )
        if self.local is not None:
            lo, hi = self.local.lower, self.local.upper
            rank = (
                f"{lo} (exact)"
                if self.exact
                else f"rank <= {hi} (softmax: no exact lower bound)"
                if self.network.architecture.normalized
                else f"{lo} <= rank <= {hi} (not decided)"
            )
            lines.append(f"  local rank       {rank}: {self.local.method}")
            lines += [f"  {n[:13]:<15}  {n[15:]}" for n in self.local.notes if n.startswith("heads' kernel")]
            sym = self.parameters - self.local.symmetry_rank
            lines.append(
                f"  symmetry bound   {sym} = P - {self.local.symmetry_rank} (symmetry tangents at the point: "
                + ", ".join(f"{f.name} {f.rank}" for f in self.local.families)
                + ")"
            )
            cert = self.local.certificate
            if cert is not None:
                lines.append(f"  kernel proof     rank <= {cert.upper}: {cert.method}")
                for dr in cert.beyond_symmetries[:8]:
                    lines.append(f"  drop {dr.index:<11} beyond the symmetries: {dr.describe()}")
                if len(cert.beyond_symmetries) > 8:
                    lines.append(f"  drop ...         {len(cert.beyond_symmetries) - 8} more (all in the JSON report)")
        cert = "certified" if self.generic_certified else "lower bound"
        lines.append(f"  generic dim      {self.generic_dimension} ({cert}: {self.generic_certificate})")
        crit = {
            True: "yes: the local rank is below the generic dimension",
            False: "no: the local rank reaches it",
            None: "not decided",
        }[self.critical]
        lines.append(
            f"  critical         {crit} (a critical point of the parametrization theta -> phi_theta, not of a loss)"
        )
        if self.fiber_dimension is not None:
            lines.append(
                f"  fiber (tangent)  dimension {self.fiber_dimension}; the symmetries span "
                f"{self.local.symmetry_rank if self.local else '?'}"
                + (" (they explain it)" if self.explained else " (directions beyond the symmetries)")
            )
        for ly in self.layers:
            flag = (" rank-deficient" if ly.rank_deficient else "") + (" critical by itself" if ly.critical else "")
            loc = (
                ""
                if ly.local is None
                else (
                    f"; its own local rank {ly.local.lower}"
                    + ("" if ly.local.exact else f"..{ly.local.upper}")
                    + f" of {ly.generic}"
                )
            )
            fv = (
                f" (V_h = W_O,h W_v,h: at most {ly.full_v}, the head size)"
                if ly.factored_v
                else f" (at most {ly.full_v})"
            )
            lines.append(
                f"  layer {ly.index}          rank A {list(ly.ranks_A)} (at most {ly.full_a}), rank V "
                f"{list(ly.ranks_V)}{fv}{loc}{flag}"
            )
        lines += self.heads.lines() if self.heads is not None else []
        if self.one_layer is not None:
            o = self.one_layer
            lines += [
                f"  stratum          {o.stratum}",
                f"  singular         {o.singular} ({o.verdict})",
                f"  critical form    {o.critical_form} (A = 0, V = 0, or A = u v^T, V = w v^T: Lemma A.3)",
                f"  boundary         {o.boundary}"
                + ("" if o.boundary is not None else " (outside Theorem 3.4's hypotheses: not decided)"),
                (
                    f"  fiber            {o.fiber}"
                    if o.fiber
                    else f"  preimages        {len(o.preimages)} rational up to rescaling"
                    + (f", {o.irrational_preimages} not over QQ" if o.irrational_preimages else "")
                ),
            ]
            if o.distance is not None:
                near, far = o.distance
                lines.append(
                    f"  to critical set  {near:.6g} <= distance <= {far:.6g} (Frobenius, in (A, V))"
                    if math.isfinite(far)
                    else f"  to critical set  distance >= {near:.6g}, beyond float64's range (Frobenius, in (A, V))"
                )
        if self.strata is not None:
            st = self.strata
            ra, rv = st.numerical_ranks
            lines += [
                f"  singular values  A {_values(st.singular_values_A)}, V {_values(st.singular_values_V)} "
                f"(float64; rank at rtol {st.rtol:g}: A {ra}, V {rv})",
                f"  near strata      {st.verdict()}: relative distance {st.relative_to_singular:.3g} to "
                f"rank A, rank V <= 1, {st.relative_to_critical:.3g} to the critical set ({st.critical_part}); "
                "float64 at the balanced representative, beside the exact verdicts above",
            ]
        if self.numerical is not None:
            n = self.numerical
            lines.append(
                f"  float64 rank     {n.rank if n.rank is not None else 'no verdict'} ({n.gap}; "
                f"{n.samples} samples; a measurement, not a proof)"
            )
            if n.singular_values:
                lines.append(
                    f"  Jacobian         {len(n.singular_values)} singular values (column-normalized), "
                    f"{_values(n.singular_values[:3])} .. {_values(n.singular_values[-3:])}; "
                    f"rank at rtol {n.rtol:g}: {n.rank_at_rtol}"
                )
        lines += [f"  float64          unavailable: {why}" for why in self.float_unavailable.values()]
        lines += [f"  note             {x}" for x in self.notes]
        lines.append(f"  seed {self.seed}, {self.seconds:.2f} s, ag-attention {__version__}")
        return "\n".join(_printable(line) for line in lines)


def _printable(line: str) -> str:
    """``line`` with every control or non-printable character escaped (``\\n``, ``\\x1b``, ``\\u202e``): text
    from a file (a tensor name, a path) can never add a line to the report or move the cursor."""
    if line.isprintable():
        return line
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)


def _values(xs: Any) -> str:
    return "(" + ", ".join(f"{x:.3g}" for x in xs) + ")"


def _numerical(net: Network, seed: int, samples: int | None, rtol: float = 1e-3) -> NumericalAtPoint:
    from .._numeric.spectrum import spectrum

    arch = net.architecture
    n = samples if samples is not None else max(4, (3 * arch.parameter_count) // max(1, arch.output_size) + 4)
    try:
        spec = spectrum(arch, seed, n, 4.0, theta=net.theta_float())  # 4 orders: numerical_dimension's default
    except NoClearGapError as exc:
        return NumericalAtPoint(None, f"no clear gap: {exc}", None, None, n, rtol=rtol)
    g = spec.gap
    return NumericalAtPoint(
        g.rank, g.describe(), g.smallest_kept, g.largest_dropped, n, tuple(float(x) for x in spec.singular_values), rtol
    )


def _layer_network(net: Network, i: int) -> Network:
    """Layer ``i`` (0-based) alone: a one-layer network at the same weights (same heads, mask, tokens)."""
    from .._architecture import Architecture

    arch = net.architecture
    layer = arch.layers[i]
    sub = Architecture(
        (layer.d_in, layer.d_out),
        None if arch.parametrization == "AV" else (layer.rank,),
        tokens=arch.tokens,
        parametrization=arch.parametrization,
        heads=arch.heads,
        skip=arch.skip,
        normalized=arch.normalized,
        temperature=arch.temperature,
        causal=arch.causal,
    )
    return Network(sub, (net.weights[i],), net.conversion, net.floats, f"layer {i + 1} of {net.source}")


def _ranks(
    net: Network, seed: int, samples: int | None, deadline: Deadline, what: str
) -> tuple[LocalRank, int | None, bool, str]:
    """The local rank at the point, and the generic dimension: ``(local, dim M, certified, certificate)``.

    The local rank is bounded above by the architecture's proven upper bound
    on ``dim M`` (:func:`ag_attention._models.formulas.prove`, from sizes
    alone).  When its proven lower bound reaches that bound, ``dim M`` is that
    number, proven, without a rank at a random point; otherwise
    :func:`ag_attention.dimension` decides it (with the primes of
    :func:`~ag_attention._point.geometry.primes_for`), and its upper bound
    bounds the local rank too.
    """
    import dataclasses

    from .._exact.dimension import dimension
    from .._exact.spans import output_span
    from .._models.formulas import prove
    from .geometry import primes_for

    arch = net.architecture
    proven = prove(arch, output_span)
    bound = proven.bound.value if proven.bound is not None else None
    local = local_rank(net, seed=seed, samples=samples, dimension_bound=bound, deadline=deadline)
    if proven.bound is not None and local.lower == proven.bound.value:
        return (
            local,
            bound,
            True,
            (
                f"dim M = {bound}: the local rank at the point, {local.lower} (proven lower "
                f"bound), reaches the proven upper bound {bound} ({proven.bound.name}: "
                f"{proven.bound.detail})"
            ),
        )
    deadline.check(f"{what}: dimension at a random point")
    dim = dimension(arch, seed=seed, prime=primes_for(arch)[0])
    if dim.upper_bound < local.upper:
        local = dataclasses.replace(
            local,
            upper=dim.upper_bound,
            notes=local.notes
            + (f"upper bound {dim.upper_bound}: dim M's proven upper bound (the rank is at most the generic rank)",),
        )
    if not local.exact:  # a dead or rank-deficient head: its own kernel directions, exact (heads.py)
        local = with_head_kernel(net, local)
    if not local.exact:
        local = _certify(net, local, seed, deadline)
    return local, dim.dimension, dim.certified, dim.certificate


def _certify(net: Network, local: LocalRank, seed: int, deadline: Deadline) -> LocalRank:
    """The local rank's upper bound from verified kernel vectors (:mod:`ag_attention._point.certificate`), or
    the reason there is none in its notes."""
    import dataclasses

    from .certificate import kernel_certificate

    cert = kernel_certificate(net, local.lower, seed=seed, deadline=deadline)
    if isinstance(cert, str):
        return dataclasses.replace(local, notes=local.notes + (f"no kernel certificate: {cert}",))
    if cert.upper >= local.upper:
        return local
    if cert.upper < local.lower:  # pragma: no cover - both bounds are proven
        raise ComputationError(
            f"verified kernel vectors bound the rank by {cert.upper}, below the proven rank {local.lower} (bug)"
        )
    note = (
        f"upper bound {cert.upper}: {len(cert.vectors)} verified kernel vectors over QQ "
        f"({len(cert.beyond_symmetries)} beyond the symmetry tangents)"
    )
    return dataclasses.replace(local, upper=cert.upper, certificate=cert, notes=local.notes + (note,))


def _layers(net: Network, seed: int, deep: bool, deadline: Deadline) -> tuple[LayerAtPoint, ...]:
    from .._exact.rational import exact_rank

    arch = net.architecture
    out = []
    for i, layer in enumerate(arch.layers):
        heads = net.weights[i]
        ranks_a = tuple(exact_rank(h["A"] if "A" in h else h["Q"].T.dot(h["K"])) for h in heads)
        ranks_v = tuple(exact_rank(h["V"]) for h in heads)
        local = generic = None
        certified = False
        if deep and not arch.normalized:
            sub = _layer_network(net, i)
            local, generic, certified, _ = _ranks(sub, seed, None, deadline, f"layer {layer.index}")
        full_v = min(layer.d_out, layer.d_in)
        factored = len(net.head_sizes) > i
        if factored:  # V_h = W_O,h W_v,h has rank at most the head size by construction: not a deficiency
            full_v = min(full_v, net.head_sizes[i])
        out.append(
            LayerAtPoint(
                layer.index,
                layer.rank,
                ranks_a,
                ranks_v,
                local,
                generic,
                certified,
                full_a=min(layer.rank, layer.d_in),
                full_v=full_v,
                factored_v=factored,
            )
        )
    return tuple(out)


def _sharpen(
    net: Network, local: LocalRank, layers: tuple[LayerAtPoint, ...], seed: int, notes: list[str]
) -> LocalRank:
    """The upper bound of the composition at the point (its layers' own local ranks, minus the free ``GL``
    between them), where it is below the symmetry bound."""
    import dataclasses

    from .geometry import composition_at_point, output_span_at

    spans = [output_span_at(_layer_network(net, i), seed) for i in range(net.architecture.depth)]
    found = composition_at_point(net, [ly.local.upper for ly in layers if ly.local is not None], spans)
    if found is None or found[0] >= local.upper:
        return local
    value, detail = found
    if value < local.lower:  # pragma: no cover - both bounds are proven
        raise ComputationError(f"the composition bound {value} is below the proven rank {local.lower} (bug)")
    notes.append(f"upper bound {value} from the layers at the point: {detail} (docs/math/point.md)")
    return dataclasses.replace(
        local, upper=value, notes=local.notes + (f"composition at the point: {value} ({detail})",)
    )


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
    steps and inside each large rank; past it
    :class:`~ag_attention.ComputationTimeoutError` is raised.  A float64 part
    that cannot be trusted at the weights' scale is not computed, and one
    that contradicts a proven exact verdict is set aside: ``float_unavailable``
    says why (the exact verdicts hold at every scale).
    """
    from .._numeric.strata import check_rtol

    rtol = check_rtol(rtol)
    if timeout is not None:
        from .._m2.backend import check_timeout

        timeout = check_timeout(timeout)
    deadline = Deadline(timeout)
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, int) or samples < 1):
        raise InvalidArgumentError(
            f"samples={samples!r}: must be a positive integer (input sequences), or None for the automatic number"
        )
    from .._numeric import numerical_dimension

    if not isinstance(net, Network):
        raise TypeError(f"point_geometry: a Network is expected, got {type(net).__name__}")
    t0 = time.perf_counter()
    arch = net.architecture
    notes: list[str] = list(net.notes)  # how a checkpoint was mapped
    if arch.normalized:
        num = numerical_dimension(arch, seed=seed)
        generic, certified = num.dimension, bool(num.certified)
        cert = "float64 rank with a clear gap" + (", certified by ball arithmetic" if certified else "")
        local = softmax_head_bound(net)  # None, or the upper bound a dead or rank-deficient head proves
        notes.append("softmax attention: the local rank is float64 (numerical), never a proof")
    else:
        local, generic, certified, cert = _ranks(net, seed, samples, deadline, "the network")
    one = None
    if plain_one_layer(net) and generic is not None:
        one = one_layer_point(net, generic)
    deadline.check("each layer alone")
    layers = _layers(net, seed, deep=arch.depth > 1, deadline=deadline)
    if local is not None and arch.depth > 1 and not local.exact and all(ly.local is not None for ly in layers):
        local = _sharpen(net, local, layers, seed, notes)
    want_numeric = (net.floats or arch.normalized) if numerical is None else numerical
    if (
        numerical is None
        and want_numeric
        and not arch.normalized
        and local is not None
        and local.exact
        and arch.parameter_count > NUMERICAL_DEFAULT_MAX_PARAMETERS
    ):
        want_numeric = False  # the exact rank is proven; the float64 SVD of a large Jacobian only repeats it
        notes.append(
            f"the float64 rank is skipped ({arch.parameter_count:,} parameters > "
            f"{NUMERICAL_DEFAULT_MAX_PARAMETERS:,} and the exact local rank is proven): numerical=True "
            "computes it (an SVD of the whole Jacobian)"
        )
    num_at, strata, unavailable = _float_parts(net, local, one, want_numeric, seed, samples, rtol)
    if one is not None and local is not None and local.exact and generic is not None:
        by_rank = local.lower < generic
        if arch.parametrization == "AV" or arch.ranks[0] >= arch.widths[0]:
            if by_rank != one.critical_form:  # pragma: no cover - Lemma A.3 says they agree
                notes.append(f"Lemma A.3 predicts critical={one.critical_form}, the exact rank says {by_rank}")
    grouped = grouped_geometry(arch, net.grouped, seed) if net.grouped else None
    if net.grouped:
        notes.append(
            grouped.note()
            if grouped is not None
            else "grouped-query attention: its own model is not "
            f"analysed (softmax, or more than {GROUPED_MAX:,} parameters)"
        )
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


def _float_parts(
    net: Network,
    local: LocalRank | None,
    one: OneLayerPoint | None,
    want_numeric: bool,
    seed: int,
    samples: int | None,
    rtol: float,
) -> tuple[NumericalAtPoint | None, NearStrata | None, dict[str, str]]:
    """The float64 parts (the Jacobian's spectrum when ``want_numeric``; one layer's distances to the strata) and
    why a part is unavailable: its values would leave float64's range at the weights' scale (checked first), or
    it contradicts a proven exact verdict or is not finite (checked after): :mod:`.trust`. A float verdict is
    never reported beside an exact one it contradicts."""
    from .._numeric.strata import one_layer_strata

    unavailable: dict[str, str] = {}
    num_at = strata = None
    if want_numeric:
        why = jacobian_range(net, seed)
        if why is None:
            try:
                with np.errstate(all="ignore"):
                    num_at = _numerical(net, seed, samples, rtol)
            except (np.linalg.LinAlgError, FloatingPointError, OverflowError) as exc:
                why = (
                    f"the Jacobian's spectrum failed in float64 ({type(exc).__name__}: {exc}); the exact verdicts stand"
                )
            else:
                num_at, why = check_numerical(num_at, local)
        if why is not None:
            unavailable["numerical"] = why
    if one is not None:
        why = strata_range(one.A, one.V)
        if why is None:
            try:
                with np.errstate(all="ignore"):
                    strata = one_layer_strata(one.A, one.V, rtol)
            except (np.linalg.LinAlgError, FloatingPointError, OverflowError, InvalidArgumentError) as exc:
                why = f"one layer's distances to the strata failed in float64 ({exc}); the exact verdicts stand"
            else:
                strata, why = check_strata(strata, one)
        if why is not None:
            unavailable["strata"] = why
    return num_at, strata, unavailable
