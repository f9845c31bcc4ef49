"""Certified bounds on the dimension of a normalized (softmax) network: ball arithmetic below, symmetries above.

The dimension of the neuromanifold is the generic rank of the Jacobian ``J``
of ``parameters -> outputs`` (docs/math/dimension.md (dimension-normalized)).

**Lower bound (proof by ball arithmetic).**  The point (weights) and the
inputs are dyadic rationals (Gaussian draws rounded to multiples of 1/64 and
1/8: exact in float64 and as balls).  The float64 Jacobian there gives a
numerical rank ``r`` (largest singular-value gap) and an ``r x r`` selection
of rows and columns (greedy pivoted Gram-Schmidt, i.e. QR with column
pivoting, first on the columns, then on the rows of the chosen columns).
Only the selected rows are recomputed in ball arithmetic
(:class:`ag_attention._exact.balls.Balls`, python-flint's ``arb``, 128 bits;
``exp`` of balls for the softmax) through the same reverse-mode code
(:func:`ag_attention._network.jacobian`), and the determinant of the selected
``r x r`` submatrix is enclosed in a ball (``arb_mat.det``).  If that ball
excludes 0, the exact Jacobian at that real point has rank ``>= r``.  The rank
at a point is at most the generic rank (the generic rank is the maximum over
all points, a minor nonzero somewhere is nonzero on a dense open set of this
analytic map's parameters), hence ``dim >= r``.

**Upper bound (proof by exact rank).**  The symmetry families that survive
the softmax (families 1 and 2 of docs/math/symmetries.md: ``GL_a`` on queries
and keys of each layer and head, ``GL_{d_i}`` between layers without skip
connections; not the rescaling, which the softmax breaks) give tangent
vectors in the kernel of ``J`` at every point
(:func:`ag_attention._models.symmetries.symmetry_tangents`).  At the dyadic
point scaled to integers their matrix ``T`` has a rank ``rank_p(T)`` over
``GF(p)``, at most its rank over QQ, at most its generic rank, which is the
dimension of a generic orbit, at most the generic fiber dimension.  Hence
``dim <= P - rank_p(T)``.

The dimension is **certified** when the two bounds meet.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._exact import (  # balls: the module (balls.balls)
    DEFAULT_PRIME,
    Balls,
    DeterminantBall,
    balls,
    determinant,
    precision,
)
from .._exact import rank as rank_mod_p
from .._models import new_directions_per_sample, symmetry_tangents
from .._network import jacobian
from . import spectrum as _spectrum
from .float64 import Float64
from .gap import gap_rank

__all__ = [
    "RankCertificate",
    "certify_dimension",
    "default_certificate_samples",
    "CERTIFY_MAX_PARAMETERS",
    "rational_point",
    "pivoted_selection",
    "ball_minor",
    "symmetry_upper_bound",
    "WEIGHT_DENOMINATOR",
    "INPUT_DENOMINATOR",
    "PIVOT_TIE",
]

#: weights are multiples of 1 / WEIGHT_DENOMINATOR, inputs of 1 / INPUT_DENOMINATOR (dyadic: exact in float64)
WEIGHT_DENOMINATOR = 64
INPUT_DENOMINATOR = 8
#: numerical_dimension certifies softmax networks with at most this many parameters unless asked (certify=True):
#: beyond, the ball-arithmetic rows (numpy object arrays of arb) cost seconds to minutes and much memory
CERTIFY_MAX_PARAMETERS = 400


def default_certificate_samples(arch: Architecture) -> int:
    """Enough dyadic input sequences that the directions they can add exceed ``1.5 P`` (all outputs of each)."""
    return max(1, math.ceil(1.5 * arch.parameter_count / new_directions_per_sample(arch)) + 1)


@dataclass(frozen=True)
class RankCertificate:
    """Proven bounds on the dimension of a normalized network (see the module docstring).

    ``lower``: the rank proven by ball arithmetic (``None`` if no minor was proven nonzero), with the
    ``size x size`` determinant ball ``determinant`` at ``bits`` bits; ``upper``: ``P - rank_p(T)`` from the
    symmetry families 1 and 2 (``symmetry_rank`` = ``rank_p(T)`` over ``GF(prime)``).
    """

    lower: int | None
    upper: int
    parameters: int
    numerical_rank: int | None  # float64 rank at the dyadic point (the size tried)
    determinant: DeterminantBall | None
    symmetry_rank: int
    prime: int
    samples: int
    seed: int
    seconds: float
    #: why the lower bound is missing or below the numerical rank, or ""
    note: str = ""

    @property
    def certified(self) -> bool:
        return self.lower is not None and self.lower == self.upper

    @property
    def bits(self) -> int | None:
        return None if self.determinant is None else self.determinant.bits

    def describe(self) -> str:
        low = "none" if self.lower is None else str(self.lower)
        if self.certified:
            return (
                f"certified: lower bound {low} by ball arithmetic = upper bound {self.upper} by the symmetry "
                "families 1 and 2"
            )
        return (
            f"not certified: lower bound {low} by ball arithmetic, upper bound {self.upper} by the symmetry "
            f"families 1 and 2{'; ' + self.note if self.note else ''}"
        )

    def to_dict(self) -> dict[str, Any]:
        d = self.determinant
        return {
            "lower_bound": self.lower,
            "lower_bound_method": "lower bound by ball arithmetic: an r x r minor of the Jacobian at a dyadic "
            "point and dyadic inputs whose determinant ball (python-flint arb) excludes 0",
            "determinant_ball": None if d is None else d.text,
            "determinant_excludes_zero": None if d is None else d.excludes_zero,
            "minor_size": None if d is None else d.size,
            "bits": self.bits,
            "upper_bound": self.upper,
            "upper_bound_method": "upper bound by the symmetry families 1 and 2: P - rank over GF(p) of their "
            "tangents at the same point",
            "symmetry_rank": self.symmetry_rank,
            "symmetry_prime": self.prime,
            "certificate_samples": self.samples,
            "certificate_seconds": round(self.seconds, 4),
            "certificate_note": self.note or None,
        }


def rational_point(arch: Architecture, seed: int, samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Dyadic weights (multiples of 1/64, logits of order one) and inputs (multiples of 1/8), as float64 (exact)."""
    rng = np.random.default_rng([seed, 1729])
    w = _spectrum.sample_weights(arch, rng) * WEIGHT_DENOMINATOR
    # no weight rounds to 0 (a zero value matrix of a width-1 layer makes the whole point degenerate)
    theta = np.where(w < 0, -1.0, 1.0) * np.maximum(1.0, np.round(np.abs(w))) / WEIGHT_DENOMINATOR
    X = np.round(rng.standard_normal((samples, arch.tokens, arch.widths[0])) * INPUT_DENOMINATOR) / INPUT_DENOMINATOR
    return theta, X


#: residual norms within this relative distance of the largest are a tie, broken by the smaller index
PIVOT_TIE = 1e-9


def pivoted_selection(A: np.ndarray, r: int) -> list[int]:
    """At most ``r`` column indices of ``A`` by greedy pivoting (QR with column pivoting, modified Gram-Schmidt);
    fewer when the remaining columns are dependent to rounding (residual below ``1e-13`` of the largest column).

    A tie (residuals within a relative ``PIVOT_TIE``) goes to the smaller index, not to the rounding: the unit
    columns of a normalized Jacobian are all ties at the first step, and ``argmax`` would pick among them by the
    last bits of the BLAS kernel's arithmetic, so another machine would prove another minor (another determinant).
    """
    R = np.array(A, dtype=np.float64, copy=True)
    norms = np.einsum("ij,ij->j", R, R)
    # a residual below this is rounding noise of a dependent column: stop (the rank is smaller)
    floor = 1e-13 * math.sqrt(float(norms.max())) if norms.size else 0.0
    chosen: list[int] = []
    for _ in range(min(r, R.shape[1])):
        if chosen:
            norms[chosen] = -1.0
        top = float(norms.max())
        j = int(np.flatnonzero(norms >= top * (1.0 - PIVOT_TIE))[0]) if top > 0 else int(np.argmax(norms))
        length = float(np.linalg.norm(R[:, j]))
        if norms[j] <= 0 or length <= floor:
            break
        q = R[:, j] / length
        c = q @ R
        R -= np.outer(q, c)
        norms -= c * c  # the residual norms, downdated
        chosen.append(j)
    return chosen


def ball_minor(
    arch: Architecture, theta: np.ndarray, X: np.ndarray, rows: list[int], cols: list[int], bits: int
) -> DeterminantBall:
    """The determinant ball of the minor (``rows``, ``cols``) of the Jacobian on ``X`` (rows as in
    :func:`ag_attention._network.jacobian` without seeds), recomputed in ball arithmetic at ``bits`` bits.

    Each selected row ``(sample n, output o)`` is the backward pass of its own sample seeded with the unit
    vector of ``o``: only these rows are evaluated.
    """
    out = arch.output_size
    n = np.array([r // out for r in rows], dtype=np.int64)
    o = [r % out for r in rows]
    with precision(bits):
        ops = Balls()
        zero, one = balls.balls(0.0)[()], balls.balls(1.0)[()]
        unit = np.full((len(rows), 1, out), zero, dtype=object)
        for i, oi in enumerate(o):
            unit[i, 0, oi] = one
        seeds = unit.reshape(len(rows), 1, arch.tokens, arch.widths[-1])
        J = jacobian(arch, ops, balls.balls(theta), balls.balls(X[n]), seeds)
        M = J[:, cols]
    return determinant(M, bits)


def symmetry_upper_bound(arch: Architecture, theta: np.ndarray, prime: int = DEFAULT_PRIME) -> tuple[int, int]:
    """``(P - rank_p(T), rank_p(T))`` for the tangents ``T`` of the surviving symmetry families at dyadic ``theta``.

    ``T`` is linear in ``theta``, so it is computed at ``theta * 64`` (integers: exact in float64) and has the
    same rank.
    """
    scaled = theta * WEIGHT_DENOMINATOR
    if not np.array_equal(scaled, np.round(scaled)):
        raise InvalidArgumentError("theta: the symmetry bound needs weights that are multiples of 1/64")
    T, _ = symmetry_tangents(arch, scaled, Float64())
    rT = rank_mod_p(T.astype(np.int64), prime) if T.size else 0
    return arch.parameter_count - rT, rT


def certify_dimension(
    arch: Architecture,
    *,
    seed: int = 0,
    samples: int | None = None,
    bits: int = 128,
    min_gap: float = 4.0,
    rank: int | None = None,
) -> RankCertificate:
    """Proven lower and upper bounds on the dimension of the normalized network ``arch`` (module docstring).

    ``samples`` defaults to enough dyadic input sequences that the directions they can add exceed ``1.5 P``
    (all ``t d_L`` outputs of each); ``rank`` forces the size of the minor (default: the float64 gap rank
    at the dyadic point).  The temperature only rescales ``A``: the computation is at ``tau = 1``.
    """
    if not arch.normalized:
        raise InvalidArgumentError(
            "certify_dimension: for normalized (softmax) attention; lightning is exact over GF(p)"
        )
    t0 = time.perf_counter()
    work = arch if arch.temperature == 1.0 else arch.with_(temperature=1.0)
    P = work.parameter_count
    if samples is None:
        samples = default_certificate_samples(work)
    theta, X = rational_point(work, seed, samples)
    upper, rT = symmetry_upper_bound(work, theta)
    J = jacobian(work, Float64(), theta, X)
    norms = np.sqrt(np.einsum("ij,ij->j", J, J))
    live = np.flatnonzero(norms > 0)
    Jn = J[:, live] / norms[live]
    note = ""
    # the triangular factor has the singular values and the column Gram matrix of Jn (cheaper to pivot and SVD)
    tri: np.ndarray = np.asarray(np.linalg.qr(Jn, mode="r")) if Jn.shape[0] > Jn.shape[1] else Jn
    r = rank
    fallback: int | None = None
    if r is None:
        # the singular values of Jn are those of its triangular factor (a square SVD, much cheaper)
        sv = np.linalg.svd(tri, compute_uv=False)
        g = gap_rank(sv, min_gap=min_gap, size=max(Jn.shape))
        r = g.rank
        if r is None:
            note = f"no clear float64 gap at the dyadic point ({g.reason})"
            # without a gap, the singular values above 1e-9 of the largest give a size worth trying
            fallback = int(np.count_nonzero(sv > 1e-9 * sv[0])) if sv.size and sv[0] > 0 else None
    det: DeterminantBall | None = None
    lower: int | None = None
    # the gap rank first; if it proves less than the symmetry bound (or there is no gap), a minor of the size of
    # the symmetry bound, then (no gap) one of the size of the singular values above 1e-9 (a singular exact
    # minor can never pass: the balls are rigorous, so trying is safe)
    sizes = [] if r is None else [r]
    if rank is None and (r is None or r < upper):
        sizes.append(upper)
    if fallback is not None and fallback < upper:
        sizes.append(fallback)
    for size in sizes:
        if size == 0:
            lower = 0
            break
        cols = [int(live[c]) for c in pivoted_selection(tri, size)]
        rows = pivoted_selection(Jn[:, [int(np.searchsorted(live, c)) for c in cols]].T, size)
        if len(cols) < size or len(rows) < size:
            note = note or f"the float64 Jacobian has fewer than {size} independent rows or columns"
            continue
        ball = ball_minor(work, theta, X, rows, cols, bits)
        if ball.excludes_zero:
            if lower is None or size > lower:
                det, lower = ball, size
            if lower >= upper:
                break
        elif det is None:
            det = ball
            note = note or f"the determinant ball of the {size} x {size} minor contains 0 at {bits} bits"
    if lower is not None and lower == upper:
        note = ""
    if lower is not None and lower > upper:  # impossible for a correct implementation: say so loudly
        note = f"contradiction: lower bound {lower} above the symmetry bound {upper}"
    return RankCertificate(
        lower, upper, P, r, det, rT, DEFAULT_PRIME, samples, int(seed), time.perf_counter() - t0, note
    )
