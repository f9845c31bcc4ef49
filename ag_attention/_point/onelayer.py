"""One lightning layer at its own weights: stratum, Theorem 3.4's verdicts, the fiber, the distance to the critical set.

For one plain layer (one head, no mask, no skip, lightning, ``t >= 2``), with
``(A, V)`` the network's weights (``A = Q^T K`` in the QKV parametrization):

* the **stratum**: ``rank A``, ``rank V`` and the ``GL_d x GL_d x GL_{d'}``
  orbit type (docs/math/geometry.md; :mod:`ag_attention._models.orbits`):
  the multiplicities of the indecomposables ``W -> U`` (``A`` only),
  ``W -> U'`` (``V`` only) and ``U <- W -> U'`` (both), read off
  ``rank A``, ``rank V`` and ``rank [A; V]``;
* **singular or smooth**: :func:`ag_attention._exact.singular.certify` with
  ``dim M`` computed by :func:`ag_attention.dimension` (never typed by the
  user) and the rank bound of the architecture;
* **the critical form** (Lemma A.3, ``A`` free): ``A = 0``, ``V = 0``, or
  ``A = u v^T``, ``V = w v^T``, exactly where the differential drops rank (at
  ``V = 0`` the derivative in ``A`` vanishes, and at ``A = 0`` the one in ``V``,
  whatever the other factor); the rank itself is computed exactly
  (:mod:`.geometry`) and compared;
* **boundary** (Theorem 3.4.2, real points, ``A`` free, ``d' > 1`` or
  ``a > 1``): ``phi_{A,V}`` is a relative boundary point of ``M`` exactly when
  it has a preimage of the critical form: ``A = 0`` or ``V = 0`` (the point
  0: Cor. A.6, ``q_11 = eps (z_1^2 + z_2^2)`` and every other ``q = 0`` lies on
  the closure, not in the real image, and tends to 0), or ``rank A = rank V = 1``
  with the same row space (the swap has the same row-space relation); outside
  those hypotheses: not decided (None);
* the **preimages**: every rational ``(A', V')`` with the same function (one
  representative of each class of the rescaling ``(c A', V' / c)``) (:func:`ag_attention._exact.onelayer.fiber`:
  one for a generic point; two, pair and swap, for ``rank A = rank V = 1`` with
  different row spaces); over the point 0 the fiber is the whole of
  ``{A = 0} u {V = 0}``, described (``fiber``) rather than listed;
* the **distance to the critical set** ``C = {A = 0} u {V = 0} u {(u v^T, w v^T)}``
  in the Frobenius norm of ``(A, V)``: ``||V||`` to ``{V = 0}``, ``||A||`` to
  ``{A = 0}``, and to the pairs: for a unit ``v`` the best ``u, w`` are
  ``A v, V v``, so ``dist^2 = ||A||^2 + ||V||^2 - lambda_max(A^T A + V^T V)``,
  a closed form; ``lambda_max`` and the square roots are enclosed with ball
  arithmetic (python-flint's ``acb_mat.eig``), so the distance comes as a
  certified interval, the least of the three.  (The
  distance depends on the representative: ``(c A, V / c)`` is the same
  function at another distance.)
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._checks import check_int
from .._errors import InvalidArgumentError
from .._exact import PointVerdict, balls, exact_rank, fiber, reduced_point, top_eigenvalue
from .._exact import certify as certify_exact
from .._exact import dimension as exact_dimension
from .._models import check_one_layer
from .weights import Network

__all__ = ["OneLayerPoint", "one_layer_point", "critical_distance", "plain_one_layer", "certify"]


def plain_one_layer(net: Network) -> bool:
    arch = net.architecture
    return (
        arch.depth == 1
        and arch.heads == 1
        and not arch.skip
        and not arch.causal
        and not arch.normalized
        and arch.tokens >= 2
        and arch.is_linear_attention
    )


@dataclass(frozen=True)
class OneLayerPoint:
    """Theorem 3.4's questions at one layer's weights, each computed."""

    A: np.ndarray  # object array of Fractions (Q^T K in the QKV parametrization)
    V: np.ndarray
    rank_bound: int | None  # a < d, or None (A free)
    rank_A: int
    rank_V: int
    to_a: int
    to_v: int
    to_both: int
    dimension: int  # dim M, computed
    verdict: PointVerdict  # singular / smooth, with its certificate
    critical_form: bool  # A = 0, V = 0, or A = u v^T, V = w v^T (Lemma A.3's critical set, A free)
    boundary: bool | None  # Theorem 3.4.2 (None: outside its hypotheses: A rank-bounded, or d' = 1 and a = 1)
    preimages: tuple[tuple[np.ndarray, np.ndarray], ...]  # rational preimages up to rescaling
    irrational_preimages: int  # preimages not defined over QQ (conjugate pairs)
    distance: tuple[float, float] | None  # enclosure of the distance to the critical set
    fiber: str = ""  # the fiber described where it is not a finite list (over the point 0)

    @property
    def stratum(self) -> str:
        return f"rank A = {self.rank_A}, rank V = {self.rank_V} (orbit [{self.to_a},{self.to_v},{self.to_both}])"

    @property
    def singular(self) -> bool | None:
        return self.verdict.singular

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank_A": self.rank_A,
            "rank_V": self.rank_V,
            "orbit": [self.to_a, self.to_v, self.to_both],
            "stratum": self.stratum,
            "rank_bound": self.rank_bound,
            "dimension": self.dimension,
            "singular": self.singular,
            "certificate": self.verdict.to_dict(),
            "critical_form": self.critical_form,
            "boundary": self.boundary,
            "preimages": [{"A": _strings(A), "V": _strings(V)} for A, V in self.preimages],
            "irrational_preimages": self.irrational_preimages,
            "distance_to_critical": None if self.distance is None else list(self.distance),
            "fiber": self.fiber or None,
        }


def _strings(M: np.ndarray) -> list[list[str]]:
    return [[str(Fraction(v)) for v in row] for row in M]


#: entries beyond 2^±this are scaled by a power of two before the distance is enclosed (their squares would
#: leave float64's range: 1e200 overflowed, 1e-200 gave the enclosure [0, 0])
_SCALE_BITS = 256


def _exponent(M: np.ndarray) -> int | None:
    """About ``log2`` of the largest entry of ``M`` (exact rationals), or None when ``M`` is zero."""
    exps = [
        abs(q.numerator).bit_length() - q.denominator.bit_length()
        for q in (Fraction(v) for v in np.asarray(M, dtype=object).ravel())
        if q != 0
    ]
    return max(exps) if exps else None


def _ldexp(x: float, e: int, up: bool) -> float:
    """``x 2^e`` rounded outward (``up``: not below, else not above), past float64's range included."""
    try:
        y = math.ldexp(x, e)
    except OverflowError:
        return math.inf if up else sys.float_info.max
    if y < sys.float_info.min:  # subnormal or zero: ldexp rounded
        y = math.nextafter(y, math.inf if up else 0.0)
    return y


def critical_distance(A: np.ndarray, V: np.ndarray) -> tuple[float, float]:
    """An interval holding the Frobenius distance from ``(A, V)`` to the critical set
    ``{A = 0} u {V = 0} u {(u v^T, w v^T)}``: the least of ``||V||``, ``||A||`` and the distance to the pairs.

    To the pairs: ``dist^2 = tr M - lambda_max(M)``, ``M = A^T A + V^T V`` (exact rationals), with ``lambda_max``
    enclosed by ball arithmetic; the square roots are enclosed too. The set is a cone, so weights beyond
    ``2^±256`` are scaled by an exact power of two first and the interval scaled back (a distance past float64's
    largest number has the upper end ``inf``).
    """
    e = max((x for x in (_exponent(A), _exponent(V)) if x is not None), default=0)
    if abs(e) > _SCALE_BITS:
        scale = Fraction(2) ** -e
        lo, hi = _critical_distance(A * scale, V * scale)
        return _ldexp(lo, e, up=False), _ldexp(hi, e, up=True)
    return _critical_distance(A, V)


def _critical_distance(A: np.ndarray, V: np.ndarray) -> tuple[float, float]:

    def norm2(X: np.ndarray) -> Fraction:
        return sum((Fraction(v) ** 2 for v in np.asarray(X, dtype=object).ravel()), Fraction(0))

    def root(x: Any) -> tuple[float, float]:  # an enclosure of sqrt(x) for a ball x (clipped at 0)
        return (max(0.0, float(x.lower())) ** 0.5 * (1 - 2**-50), max(0.0, float(x.upper())) ** 0.5 * (1 + 2**-50))

    nA, nV = norm2(A), norm2(V)
    if nA == 0 or nV == 0:
        return (0.0, 0.0)
    M = A.T.dot(A) + V.T.dot(V)
    trace = nA + nV
    top = top_eigenvalue([[Fraction(v) for v in row] for row in M])
    if top is not None:
        pair = root(balls.balls([trace])[0] - top)
    else:  # no enclosure: lambda_max >= the largest diagonal entry (a Rayleigh quotient) still bounds the distance
        top_diag = max(Fraction(M[i, i]) for i in range(M.shape[0]))
        pair = (0.0, float(trace - top_diag) ** 0.5 * (1 + 2**-50))
    candidates = [pair, root(balls.balls([nA])[0]), root(balls.balls([nV])[0])]
    return (min(c[0] for c in candidates), min(c[1] for c in candidates))


def _exact_preimage(Ap: Any, Vp: Any, x: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(A', V')`` scaled so that ``phi_{A', V'}`` is the point itself (the fiber is computed up to scale)."""

    A2 = np.array([[Fraction(v) for v in row] for row in Ap], dtype=object)
    V2 = np.array([[Fraction(v) for v in row] for row in Vp], dtype=object)
    y = reduced_point(A2.tolist(), V2.tolist())
    i = next(k for k, v in enumerate(x) if v != 0)
    scale = Fraction(x[i]) / Fraction(y[i])
    return A2, V2 * scale


def one_layer_point(net: Network, dimension: int) -> OneLayerPoint:
    """The one-layer report (``dimension``: ``dim M``, computed by the caller with :func:`ag_attention.dimension`)."""
    arch = net.architecture
    w = net.weights[0][0]
    V = w["V"]
    A = w["A"] if "A" in w else w["Q"].T.dot(w["K"])
    d = A.shape[0]
    bound = None if arch.parametrization == "AV" or arch.ranks[0] >= d else arch.ranks[0]
    rank_a = exact_rank(A)
    rank_v = exact_rank(V)
    stacked = exact_rank(np.vstack([A, V]))
    both = rank_a + rank_v - stacked
    verdict = certify_exact(A.tolist(), V.tolist(), dimension=dimension, rank_bound=bound)
    same_rows = both == 1 and rank_a == 1 and rank_v == 1
    # Lemma A.3: A = 0 or V = 0 (whatever the other factor), or a rank-one pair with the same row space
    critical = rank_a == 0 or rank_v == 0 or same_rows
    # Theorem 3.4.2 (A free, d' > 1 or a > 1): the relative boundary points are the images of the critical set;
    # the pair's other preimages (the swap) have the same row-space relation, and A = 0 or V = 0 is the point 0,
    # a relative boundary point (Cor. A.6)
    in_hypotheses = bound is None and (V.shape[0] > 1 or d > 1)
    boundary = critical if in_hypotheses else None
    x = reduced_point(A.tolist(), V.tolist())
    pre: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    irrational = 0
    described = ""
    if not any(v != 0 for v in x):
        dim_a = d * d if bound is None else bound * (2 * d - bound)
        described = (
            f"the point 0: its fiber is all of {{A = 0}} (V free: dimension {V.shape[0] * d}) and "
            f"{{V = 0}} (A free{'' if bound is None else f' of rank <= {bound}'}: dimension {dim_a}), "
            "two linear families (a determinantal one for rank-bounded A) meeting at (0, 0)"
        )
    else:
        fb = fiber(x, d, V.shape[0])
        pre = tuple(
            _exact_preimage(Ap, Vp, x)
            for Ap, Vp in fb.preimages
            if bound is None or exact_rank(np.array(Ap, dtype=object)) <= bound
        )
        irrational = 2 * fb.irrational_pairs
    # on the critical set the distance is 0 exactly (the enclosure would only say "at most 1e-29")
    distance = (0.0, 0.0) if critical else critical_distance(A, V)
    return OneLayerPoint(
        A,
        V,
        bound,
        rank_a,
        rank_v,
        rank_a - both,
        rank_v - both,
        both,
        dimension,
        verdict,
        critical,
        boundary,
        pre,
        irrational,
        distance,
        described,
    )


def certify(
    A: Any,
    V: Any,
    *,
    arch: Architecture | None = None,
    dimension: int | None = None,
    rank_bound: int | None = None,
    tokens: int | None = None,
    prime: int | None = None,
) -> PointVerdict:
    """Is ``phi_{A,V}`` a singular point of the (rank-bounded) neuromanifold of one layer?  With a certificate.

    The public verb (a thin wrapper of :class:`~ag_attention.Network` and
    :func:`ag_attention.point_geometry`'s one-layer part): entries may be
    integers, ``Fraction``\\ s or floats (a float is its exact binary value);
    ``dim M`` is computed (:func:`ag_attention.dimension`), and a
    ``dimension=`` that differs from it is refused, naming both values;
    ``rank_bound`` is the bound ``a`` on ``rank A`` (None: ``A`` free), and an
    ``A`` of higher rank is refused; ``tokens`` is ``t`` (None: 2).

    Unlike the other verbs, ``certify`` takes a *point*, not an architecture:
    the weights ``A`` (``d x d``) and ``V`` (``d' x d``) already fix the
    widths.  ``arch=`` states the rest as an :class:`~ag_attention.Architecture`
    (one plain lightning layer whose widths are the weights' shapes; its rank
    bound and tokens replace ``rank_bound=`` and ``tokens=``, which are then
    refused), for code that carries one.

    >>> certify([[1, 2], [3, 4]], [[1, 1]]).singular     # rank A = 2: smooth
    False
    >>> certify([[0.1, 0.2], [0.3, 0.4]], [[0.5, 0.7]]).kind.name
    'IMMERSION'
    """

    if arch is not None:
        rank_bound, tokens = _from_architecture(arch, A, V, rank_bound, tokens)
    tokens = 2 if tokens is None else tokens
    tokens = check_int(tokens, "tokens")
    if tokens < 2:
        raise InvalidArgumentError(f"tokens={tokens!r}: Theorem 3.4's geometry is that of t >= 2 tokens")
    try:
        net = Network.from_weights(
            {"layers.0.heads.0.A": A, "layers.0.heads.0.V": V}, rank=rank_bound, tokens=tokens, source="certify(A, V)"
        )
    except InvalidArgumentError as exc:  # name the arguments as the caller wrote them
        raise InvalidArgumentError(str(exc).replace("layers.0.heads.0.", "").replace("weights: ", "")) from None
    dim = exact_dimension(net.architecture)
    if dimension is not None and dimension != dim.dimension:
        raise InvalidArgumentError(
            f"dimension={dimension!r}: dim M of this layer is {dim.dimension} ({dim.certificate}); leave dimension= "
            "out (it is computed)"
        )
    w = net.weights[0][0]
    Am = w["A"] if "A" in w else w["Q"].T.dot(w["K"])
    arch = net.architecture
    bound = None if arch.parametrization == "AV" else arch.ranks[0]
    kw = {} if prime is None else {"prime": prime}
    return certify_exact(Am.tolist(), w["V"].tolist(), dimension=dim.dimension, rank_bound=bound, **kw)


def _from_architecture(arch: Any, A: Any, V: Any, rank_bound: int | None, tokens: int | None) -> tuple[int | None, int]:
    """``(rank_bound, tokens)`` from ``certify``'s ``arch=``, checked against the weights' shapes."""

    if rank_bound is not None or tokens is not None:
        given = ", ".join(f"{k}={v!r}" for k, v in (("rank_bound", rank_bound), ("tokens", tokens)) if v is not None)
        raise InvalidArgumentError(f"{given}: arch= gives the rank bound and the tokens; pass one or the other")
    check_one_layer(arch, None, "certify")
    shapes = (np.shape(np.asarray(A, dtype=object)), np.shape(np.asarray(V, dtype=object)))
    d, e = arch.widths
    if len(shapes[0]) != 2 or len(shapes[1]) != 2 or (shapes[0][0], shapes[1][0]) != (d, e):
        raise InvalidArgumentError(
            f"arch={arch.describe()}: widths ({d}, {e}) are not the weights' shapes "
            f"(A {'x'.join(map(str, shapes[0]))}, V {'x'.join(map(str, shapes[1]))}; "
            "A is d x d, V is d' x d)"
        )
    free = arch.parametrization == "AV" or arch.ranks[0] >= d
    return (None if free else arch.ranks[0]), arch.tokens
