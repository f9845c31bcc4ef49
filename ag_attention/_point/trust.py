"""When the float64 parts of a point report can be trusted: the scale of the weights, and the exact verdicts.

A point report has exact parts (ranks over QQ or GF(p), Theorem 3.4's verdicts, certified intervals) and float64
parts (the Jacobian's singular values and their gap rank; one layer's distances to the strata).  Float64 holds
magnitudes from about ``2^-1022`` to ``2^1024``, and the float parts square their values (column norms, Frobenius
norms): weights of ``1e200`` overflowed, weights of ``1e-150`` in ``Q`` and ``K`` underflowed (a zero Jacobian,
"float64 rank 0" beside the exact local rank 7).  So:

* before computing, :func:`jacobian_range` and :func:`strata_range` estimate the magnitudes from the exact
  weights (the largest entry of each block, ``2^e``, carried through the layers: a lightning head's output is
  about ``|A| |V| |x|^3``, a Jacobian column the product of the other factors and of the later layers' gains)
  and give the reason the float part is unavailable when one of them leaves ``2^±FLOAT_BITS``;
* after computing, :func:`check_numerical` and :func:`check_strata` set aside what a proven exact verdict
  contradicts (a float64 rank outside the proven bounds, more singular values above ``rtol`` than the proven
  rank, a point exactly on a stratum measured away from it) and non-finite values;
* :func:`finite` replaces every non-finite float of a report's dictionary by None, with the reason, so its JSON
  is valid (``json.dumps(..., allow_nan=False)``).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from .._architecture import Architecture
from .._network import forward
from .._numeric import Float64

if TYPE_CHECKING:
    from .._numeric import NearStrata
    from .geometry import LocalRank
    from .onelayer import OneLayerPoint
    from .steps import NumericalAtPoint
    from .weights import Network

__all__ = ["FLOAT_BITS", "log2_max", "jacobian_range", "strata_range", "check_numerical", "check_strata", "finite"]

#: the float parts are computed only while the estimated magnitudes of what they square (Jacobian columns, the
#: entries of A and V) stay within 2^±FLOAT_BITS (about 1e±150): squares summed over a few thousand rows then
#: stay inside float64's 2^±1022; values that are not squared (scores, outputs) may reach 2^±(2 FLOAT_BITS)
FLOAT_BITS = 500
_DECIMAL = math.log10(2)


def log2_max(M: Any) -> float:
    """About ``log2`` of the largest ``|entry|`` of an exact matrix (within 1); ``-inf`` when it is zero."""
    best = -math.inf
    for v in np.asarray(M, dtype=object).ravel():
        q = Fraction(v)
        if q:
            best = max(best, abs(q.numerator).bit_length() - q.denominator.bit_length())
    return best


class _Range:
    """The estimated magnitudes that leave their range: the first one past it, with what it is."""

    def __init__(self) -> None:
        self.out: str | None = None

    def see(self, low: float, high: float, what: str, squared: bool = True) -> None:
        """``low``/``high``: the magnitude's estimates (``log2``) for underflow and overflow; ``squared``: the
        computation squares it (its range is then half of float64's)."""
        bits = FLOAT_BITS if squared else 2 * FLOAT_BITS
        for e, side in ((high, "overflows"), (low, "underflows")):
            if self.out is None and math.isfinite(e) and abs(e) > bits and (e > 0) == (side == "overflows"):
                self.out = (
                    f"{side} float64 ({what}: about 2^{e:.0f} = 1e{e * _DECIMAL:+.0f}, beyond the "
                    f"2^±{bits} {'whose squares ' if squared else ''}float64 holds)"
                )

    def reason(self, part: str) -> str | None:
        return None if self.out is None else f"{part}: this scale {self.out}; the exact verdicts stand"


def jacobian_range(net: Network, seed: int = 0) -> str | None:
    """Why the float64 Jacobian at the point would leave float64's range (None: it stays inside), from the
    exact weights before the Jacobian is computed (module docstring): :func:`_lightning_magnitudes` for lightning
    attention (measured), :func:`_softmax_magnitudes` for softmax (bounds)."""
    seen = _Range()
    if not net.architecture.is_linear_attention:
        _affine_magnitudes(net, seen)
    elif net.architecture.normalized:
        _softmax_magnitudes(net, seen)
    else:
        _lightning_magnitudes(net, seed, seen)
    return seen.reason("the Jacobian's spectrum")


#: an affine or rotary network's float parts are computed only while every weight is within 2^±AFFINE_BITS
AFFINE_BITS = 100


def _affine_magnitudes(net: Network, seen: _Range) -> None:
    """Biases and rotations: a layer is not homogeneous in its input (``x~ = (x, 1)``), so the magnitudes are not
    carried through the layers as for :func:`_lightning_magnitudes`; the float parts are computed only while every
    weight stays within ``2^±AFFINE_BITS`` (far inside float64's range for the depths read here), and the checks
    after the computation (:func:`check_numerical`) still set aside what the exact verdicts contradict."""
    for l, heads in enumerate(net.weights):
        for h, w in enumerate(heads):
            for n, M in w.items():
                e = log2_max(M)
                name = f"layers.{l}.bO" if n == "bO" else f"layers.{l}.heads.{h}.{n}"
                if math.isfinite(e) and abs(e) > AFFINE_BITS and seen.out is None:
                    seen.out = (
                        f"is outside the range of an affine or rotary network's float parts ({name}: about "
                        f"2^{e:.0f} = 1e{e * _DECIMAL:+.0f}, beyond 2^±{AFFINE_BITS})"
                    )


def _lightning_magnitudes(net: Network, seed: int, seen: _Range) -> None:
    """The magnitudes of a lightning network's float64 Jacobian, measured without overflow: each layer is run in
    float64 on unit-size inputs with each kind of block (``Q``, ``K``, ``V`` or ``A``, all heads) divided by a
    power of two near its largest entry, and the scales put back in ``log2`` (a lightning layer is homogeneous:
    degree 1 in each kind of block, 3 in its input). A Jacobian column of a block ``B`` of layer ``l`` is about
    ``|y_l| / |B|`` (Euler) times the later layers' gains ``3 |y_j| / |x_j|`` (at least 1 with skip connections)."""

    arch = net.architecture
    X = np.random.default_rng(seed).standard_normal((8, arch.tokens, arch.widths[0]))
    m = 0.0  # log2 of the size of the layer's input (X is unit-size)
    columns: list[tuple[int, float, str]] = []
    gains: list[float] = []
    for l, heads in enumerate(net.weights):
        layer = arch.layers[l]
        kinds = sorted(heads[0])
        scale = {n: max(log2_max(w[n]) for w in heads) for n in kinds}
        if any(math.isinf(e) for e in scale.values()):  # a kind of block all zero: the layer's attention is 0
            y = -math.inf
            Y = np.zeros((X.shape[0], arch.tokens, layer.d_out))
        else:
            sub = Architecture(
                (layer.d_in, layer.d_out),
                None if arch.parametrization == "AV" else (layer.rank,),
                tokens=arch.tokens,
                parametrization=arch.parametrization,
                heads=arch.heads,
                causal=arch.causal,
            )
            theta = np.empty(sub.parameter_count, dtype=np.float64)
            for b in sub.blocks:
                theta[b.slice] = [
                    float(Fraction(q) / Fraction(2) ** int(scale[b.name])) for q in heads[b.head][b.name].ravel()
                ]
            with np.errstate(all="ignore"):
                Y = forward(sub, Float64(), theta, X)
            size = float(np.max(np.abs(Y))) if Y.size else 0.0
            y = sum(scale.values()) + 3 * m + (math.log2(size) if size > 0 else -math.inf)
            Y = Y / size if size > 0 else Y
            a = scale["A"] if "A" in scale else scale["Q"] + scale["K"]
            seen.see(a + 2 * m - 1, a + 2 * m + math.log2(layer.d_in**2), f"the scores of layer {l + 1}", squared=False)
        columns += [(l, y - scale[n], f"the Jacobian's columns of the {n}s of layer {l + 1}") for n in kinds]
        gain = y - m + math.log2(3)
        if arch.skip:  # x + y: the larger of the two, renormalized
            top = max(m, y)
            Y = X * 2.0 ** max(m - top, -1074) + Y * 2.0 ** max(y - top, -1074) if top > -math.inf else X
            size = float(np.max(np.abs(Y))) if Y.size else 0.0
            y = top + (math.log2(size) if size > 0 else -math.inf)
            Y = Y / size if size > 0 else Y
            gain = max(gain, 0.0)
        gains.append(gain)
        seen.see(y, y, f"the output of layer {l + 1}", squared=False)
        X, m = Y, y
    for l, c, what in columns:
        total = c + sum(gains[l + 1 :])
        seen.see(total, total, what)


def _softmax_magnitudes(net: Network, seen: _Range) -> None:
    """Bounds on a softmax network's float64 magnitudes from its largest entries (softmax weights are at most
    1; two estimates: without the sums, for underflow, and with them, times ``t d_in^3``, for overflow)."""
    arch = net.architecture
    lo, hi = 0.0, 2.0  # log2 of the inputs' entries
    columns: list[tuple[int, float, float, str]] = []
    gains: list[tuple[float, float]] = []
    for l, heads in enumerate(net.weights):
        sums = math.log2(arch.tokens * arch.layers[l].d_in ** 3)
        out, gain = [-math.inf, -math.inf], [-math.inf, -math.inf]
        for h, w in enumerate(heads):
            e = {n: log2_max(M) for n, M in w.items()}
            a, v = (e["A"] if "A" in e else e["Q"] + e["K"]), e["V"]
            name = f"layers.{l}.heads.{h}"
            seen.see(a + 2 * lo, a + 2 * hi + sums, f"the scores of {name}", squared=False)
            o = (v + lo, v + hi + sums)
            g = (max(v, a + v + 2 * lo), max(v, a + v + 2 * hi + sums))
            derivs = {"V": (lo, hi + sums)}
            for n, other in (("A", 0.0), ("Q", e.get("K", 0.0)), ("K", e.get("Q", 0.0))):
                if n in e:
                    derivs[n] = (other + v + 3 * lo, other + v + 3 * hi + sums)
            seen.see(*o, f"the output of {name}", squared=False)
            out = [max(out[0], o[0]), max(out[1], o[1])]
            gain = [max(gain[0], g[0]), max(gain[1], g[1])]
            columns += [(l, dl, dh, f"the Jacobian's columns of {name}.{n}") for n, (dl, dh) in derivs.items()]
        if arch.skip:
            out = [max(out[0], lo), max(out[1], hi)]
            gain = [max(gain[0], 0.0), max(gain[1], 0.0)]
        gains.append((gain[0], gain[1]))
        lo, hi = out
    for l, dl, dh, what in columns:
        later = gains[l + 1 :]
        seen.see(dl + sum(g[0] for g in later), dh + sum(g[1] for g in later), what)


def strata_range(A: Any, V: Any) -> str | None:
    """Why one layer's distances to the strata would leave float64's range (None: they stay inside): the
    largest entries of ``A`` and ``V`` (exact), whose squares the distances sum."""
    seen = _Range()
    for M, name in ((A, "A"), (V, "V")):
        e = log2_max(M)
        seen.see(e, e + math.log2(max(1, np.size(M))) / 2, f"the entries of {name}")
    return seen.reason("one layer's distances to the strata")


def check_numerical(num: NumericalAtPoint, local: LocalRank | None) -> tuple[NumericalAtPoint | None, str | None]:
    """The float64 rank checked against the exact one at the same point: ``(num, None)`` when consistent;
    ``(None, reason)`` when its spectrum cannot be (not finite, or more values above ``rtol`` than the proven
    rank); with its gap verdict withdrawn (``rank`` None, said in ``gap``) when only the gap disagrees."""
    values = [*num.singular_values, num.smallest_kept, num.largest_dropped]
    if not all(math.isfinite(x) for x in values if x is not None):
        return None, "the Jacobian's spectrum is not finite in float64 at this point; the exact verdicts stand"
    if local is None:
        return num, None
    if num.rank_at_rtol > local.upper:
        return None, (
            f"the float64 Jacobian has {num.rank_at_rtol} singular values above rtol {num.rtol:g} times "
            f"the largest, more than the proven upper bound {local.upper} on the rank: float64 does not "
            "resolve this point; the exact verdicts stand"
        )
    if num.rank is not None and not local.lower <= num.rank <= local.upper:
        proven = str(local.lower) if local.exact else f"between {local.lower} and {local.upper}"
        return dataclasses.replace(
            num,
            rank=None,
            gap=(
                f"no verdict: the gap ({num.gap}) says rank {num.rank}, the local rank is {proven}, proven; float64 "
                "does not resolve this point"
            ),
        ), None
    return num, None


def check_strata(st: NearStrata, one: OneLayerPoint) -> tuple[NearStrata | None, str | None]:
    """One layer's float64 distances checked against its exact ranks: ``(st, None)`` when consistent, else
    ``(None, reason)``: a value not finite, a numerical rank above the exact one, or a point exactly on the
    singular stratum or the critical set measured away from it."""
    values = [
        st.scale,
        st.norm,
        st.distance_to_singular,
        st.distance_to_critical,
        *st.singular_values_A,
        *st.singular_values_V,
        *(float(x) for M in (*st.nearest_singular, *st.nearest_critical) for x in np.ravel(M)),
    ]
    if not all(math.isfinite(x) for x in values):
        return None, "one layer's distances to the strata are not finite in float64; the exact verdicts stand"
    ra, rv = st.numerical_ranks
    contradiction = None
    if ra > one.rank_A or rv > one.rank_V:
        contradiction = f"numerical ranks A {ra}, V {rv} above the exact ranks {one.rank_A}, {one.rank_V}"
    elif one.rank_A <= 1 and one.rank_V <= 1 and not st.near_singular:
        contradiction = "the point is exactly on the singular stratum (rank A, rank V <= 1), measured away from it"
    elif one.critical_form and not st.near_critical:
        contradiction = "the point is exactly on the critical set, measured away from it"
    if contradiction:
        return None, (
            f"one layer's float64 distances contradict the exact verdicts ({contradiction}): float64 "
            "does not resolve this point; the exact verdicts stand"
        )
    return st, None


def finite(value: Any, reasons: dict[str, str], path: str = "") -> Any:
    """``value`` (a report's dictionary) with every non-finite float replaced by None and its reason recorded in
    ``reasons`` under its path (``one_layer.distance_to_critical[1]``)."""
    if isinstance(value, dict):
        return {k: finite(v, reasons, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v, reasons, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        reasons[path] = f"{float(value)!r} in float64: beyond its range (null in JSON)"
        return None
    return value
