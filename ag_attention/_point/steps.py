"""The steps of :func:`~ag_attention._point.report.point_geometry`, each a named part of the report.

* :func:`ranks_at_point`: the local rank at the point (:mod:`.geometry`) and the generic dimension, the upper
  bound sharpened by dim M's, the heads' kernel directions (:mod:`.heads`) and verified kernel vectors
  (:mod:`.certificate`: :func:`certify_kernel`);
* :func:`layers_at_point`: each layer alone (:class:`LayerAtPoint`), a one-layer network at the same weights
  (:func:`layer_network`); :func:`sharpen`: the composition's upper bound from them;
* :func:`float_parts`: the float64 parts (:class:`NumericalAtPoint`, one layer's distances to the strata) and why
  a part is unavailable (:mod:`.trust`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import ComputationError, InvalidArgumentError, NoClearGapError
from .._exact import dimension, exact_rank, output_span
from .._models import prove
from .._numeric import NearStrata, input_scale, numerical_rank, one_layer_strata
from .._numeric import softmax_spectrum as spectrum
from .._resources import Deadline
from .certificate import kernel_certificate
from .geometry import LocalRank, composition_at_point, local_rank, output_span_at, primes_for
from .kernel import with_head_kernel
from .onelayer import OneLayerPoint
from .trust import check_numerical, check_strata, jacobian_range, strata_range
from .weights import Network

__all__ = [
    "LayerAtPoint",
    "NumericalAtPoint",
    "layer_network",
    "ranks_at_point",
    "certify_kernel",
    "layers_at_point",
    "sharpen",
    "float_parts",
    "numerical_at",
]


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
    scale: float = 1.0  # the inputs' factor (softmax: the first layer's rows brought to a responsive spread)

    @property
    def rank_at_rtol(self) -> int:

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
            "input_scale": self.scale,
            "rank_at_rtol": self.rank_at_rtol,
        }


#: rows of the float64 Jacobian at the point, in multiples of ``P`` (random combinations of each sample's outputs)
POINT_ROWS = 1.5


def numerical_at(net: Network, seed: int, samples: int | None, rtol: float = 1e-3) -> NumericalAtPoint:
    """The float64 rank at the float point: :data:`POINT_ROWS` times ``P`` rows, the inputs scaled so that the first
    layer's softmax rows are neither near uniform nor saturated (:func:`~ag_attention._numeric.input_scale`: the
    rank is that of almost every input, the conditioning is not)."""
    arch = net.architecture
    n = samples if samples is not None else max(4, (3 * arch.parameter_count) // max(1, arch.output_size) + 4)
    theta = net.theta_float()
    scale = input_scale(arch, theta, seed)
    try:
        spec = spectrum(arch, seed, n, 4.0, theta=theta, rows_factor=POINT_ROWS, scale=scale)  # 4 orders
    except NoClearGapError as exc:
        return NumericalAtPoint(None, f"no clear gap: {exc}", None, None, n, rtol=rtol, scale=scale)
    g = spec.gap
    return NumericalAtPoint(
        g.rank,
        g.describe(),
        g.smallest_kept,
        g.largest_dropped,
        n,
        tuple(float(x) for x in spec.singular_values),
        rtol,
        scale,
    )


def layer_network(net: Network, i: int) -> Network:
    """Layer ``i`` (0-based) alone: a one-layer network at the same weights (same heads, mask, tokens)."""

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
        bias=arch.bias,
        positions=arch.positions,
    )
    return Network(sub, (net.weights[i],), net.conversion, net.floats, f"layer {i + 1} of {net.source}")


def ranks_at_point(
    net: Network, seed: int, samples: int | None, deadline: Deadline, what: str
) -> tuple[LocalRank, int | None, bool, str]:
    """The local rank at the point, and the generic dimension: ``(local, dim M, certified, certificate)``.

    The local rank is bounded above by the architecture's proven upper bound
    on ``dim M`` (:func:`ag_attention._models.formulas.prove`, from sizes
    alone).  When its proven lower bound reaches that bound, or the point's
    own symmetry bound ``P - rank T(theta)`` (also an upper bound on ``dim M``:
    the tangents' rank is lowest at special points), ``dim M`` is that
    number, proven, without a rank at a random point; otherwise
    :func:`ag_attention.dimension` decides it (with the primes of
    :func:`~ag_attention._point.geometry.primes_for`), and its upper bound
    bounds the local rank too.
    """
    import dataclasses

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
    symmetry = arch.parameter_count - local.symmetry_rank
    if local.lower >= symmetry:  # the point's own symmetry bound also bounds dim M (docs/math/point.md)
        return (
            local,
            local.lower,
            True,
            (
                f"dim M = {local.lower}: the local rank at the point, {local.lower} (proven lower bound), reaches "
                f"the symmetry bound there, P - rank T(theta) = {symmetry}, which bounds dim M (the tangents' rank "
                "is lowest at special points)"
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
        local = certify_kernel(net, local, seed, deadline)
    return local, dim.dimension, dim.certified, dim.certificate


def certify_kernel(net: Network, local: LocalRank, seed: int, deadline: Deadline) -> LocalRank:
    """The local rank's upper bound from verified kernel vectors (:mod:`ag_attention._point.certificate`), or
    the reason there is none in its notes."""
    import dataclasses

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


def layers_at_point(net: Network, seed: int, deep: bool, deadline: Deadline) -> tuple[LayerAtPoint, ...]:

    arch = net.architecture
    out = []
    for i, layer in enumerate(arch.layers):
        heads = net.weights[i]
        ranks_a = tuple(exact_rank(h["A"] if "A" in h else h["Q"].T.dot(h["K"])) for h in heads)
        ranks_v = tuple(exact_rank(h["V"]) for h in heads)
        local = generic = None
        certified = False
        if deep and not arch.normalized:
            sub = layer_network(net, i)
            local, generic, certified, _ = ranks_at_point(sub, seed, None, deadline, f"layer {layer.index}")
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


def sharpen(net: Network, local: LocalRank, layers: tuple[LayerAtPoint, ...], seed: int, notes: list[str]) -> LocalRank:
    """The upper bound of the composition at the point (its layers' own local ranks, minus the free ``GL``
    between them), where it is below the symmetry bound."""
    import dataclasses

    spans = [output_span_at(layer_network(net, i), seed) for i in range(net.architecture.depth)]
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


def float_parts(
    net: Network,
    local: LocalRank | None,
    one: OneLayerPoint | None,
    want_numeric: bool,
    seed: int,
    samples: int | None,
    rtol: float,
    early: NumericalAtPoint | None = None,
) -> tuple[NumericalAtPoint | None, NearStrata | None, dict[str, str]]:
    """The float64 parts (the Jacobian's spectrum when ``want_numeric``; one layer's distances to the strata) and
    why a part is unavailable: its values would leave float64's range at the weights' scale (checked first), or
    it contradicts a proven exact verdict or is not finite (checked after): :mod:`.trust`. A float verdict is
    never reported beside an exact one it contradicts."""

    unavailable: dict[str, str] = {}
    num_at = strata = None
    if want_numeric:
        why = jacobian_range(net, seed)
        if why is None:
            try:
                with np.errstate(all="ignore"):
                    num_at = early if early is not None else numerical_at(net, seed, samples, rtol)
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
