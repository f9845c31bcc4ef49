"""The landscape of any polynomial model: :func:`model_ed_degree` and :func:`model_critical_points`.

docs/math/landscape.md (landscape-models).  The model, its slice and its critical equations are
:mod:`.model`'s.  Two routes give the ED degree, and they must agree when both run:

* ``parametric``: the critical equations on a slice, with the ramification removed, counted by msolve modulo two
  primes, divided by the fiber degree (counted the same way): *probabilistic* (a bad prime or an unlucky random
  choice changes a count with probability about degree / p);
* ``implicit``: Macaulay2 eliminates the parameters (the ideal of ``X``, modulo each prime), writes the Lagrange
  conditions of the distance (``edSystem``, :func:`~ag_attention.ideal_ed_degree`'s code) and msolve counts them:
  probabilistic in the same sense.

The critical points of a given loss (:func:`model_critical_points`) are solved over QQ on a slice: msolve isolates
the real ones (a proof: each box holds exactly one real solution), counts the complex ones modulo two primes, and
each real one is classified by its Hessian on the slice in ball arithmetic (a minimum when every eigenvalue is
proven positive).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._errors import AgAttentionError, ComputationError, InvalidArgumentError
from .._results import ResultMixin
from .critical import Route, hessian_class
from .ideal_ed import _metric, _one_count, _rational_metric, draw_primes
from .model import PolynomialModel
from .model_system import (
    Slice,
    fiber_system,
    gauge_slice,
    generic_rank,
    identity_slice,
    model_system,
    parse_exclusions,
    random_slice,
)

__all__ = [
    "ModelEDDegree",
    "ModelCriticalPoint",
    "ModelCriticalPoints",
    "model_ed_degree",
    "model_critical_points",
    "MODEL_METHODS",
]

MODEL_METHODS = ("auto", "parametric", "implicit", "both")


@dataclass(frozen=True)
class ModelEDDegree(ResultMixin):
    """The ED degree of a model's image closure for a metric: the value (None when not decided), what it proves,
    and every count behind it."""

    model: str
    parameters: int
    coordinates: int
    dimension: int | None  # of X: the generic rank of J (modulo a prime)
    metric: str  # "euclidean", "generic" or "given"
    ed_degree: int | None
    fiber_degree: int | None  # points of the slice over a generic point of X
    counts: tuple[dict[str, Any], ...]  # per prime: prime, seed, solutions, fiber (parametric); value (implicit)
    routes: tuple[Route, ...]
    seed: int
    seconds: float
    gauge: tuple[str, ...] = ()
    closure: dict[str, int] | None = None  # Macaulay2's dimension, codimension, degree of X (implicit route)
    notes: tuple[str, ...] = field(default=())
    status: str = "decided"

    @property
    def final(self) -> bool:
        return self.ed_degree is not None

    @property
    def certificate(self) -> str:
        if not self.final:
            return f"not decided: {self.status}"
        runs = "; ".join(
            f"GF({c['prime']}), seed {c['seed']}: "
            + (f"{c['solutions']} solutions / fiber {c['fiber']}" if c["route"] == "parametric" else f"{c['value']}")
            + f" ({c['route']})"
            for c in self.counts
        )
        return (
            "probabilistic: the critical points of the squared distance to random data, counted over the "
            f"algebraic closure of GF(p) ({runs}); every count agrees (a bad prime or unlucky random choice "
            "changes a count with probability about degree / p)"
        )

    def headline(self) -> str:
        what = f"ED degree of {self.model} ({self.metric} metric)"
        return f"{what}: {self.ed_degree}" if self.final else f"{what}: NOT DECIDED ({self.status})"

    def to_dict(self) -> dict[str, Any]:
        from .._provenance import provenance

        return {
            "model": self.model,
            "parameters": self.parameters,
            "coordinates": self.coordinates,
            "dimension": self.dimension,
            "metric": self.metric,
            "final": self.final,
            "ed_degree": self.ed_degree,
            "status": self.status,
            "certificate": self.certificate,
            "fiber_degree": self.fiber_degree,
            "gauge": list(self.gauge),
            "counts": list(self.counts),
            "closure": self.closure,
            "routes": [r.to_dict() for r in self.routes],
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "notes": list(self.notes),
            "provenance": provenance(),
        }

    def __str__(self) -> str:
        lines = [
            self.headline(),
            f"  model            {self.parameters} parameters, {self.coordinates} coordinates, image of "
            f"dimension {self.dimension}",
            f"  certificate      {self.certificate}",
        ]
        if self.fiber_degree is not None:
            lines.append(
                f"  fiber            {self.fiber_degree} points of the slice per point of the image"
                + (f" (gauge {', '.join(self.gauge)})" if self.gauge else " (random slice)")
            )
        if self.closure is not None:
            lines.append(
                f"  closure          dimension {self.closure['dimension']}, codimension "
                f"{self.closure['codimension']}, degree {self.closure['degree']} (Macaulay2)"
            )
        lines += [f"  route            {r.name}: {r.outcome} ({r.seconds:.1f} s)" for r in self.routes]
        lines.append(f"  seed {self.seed}, {self.seconds:.2f} s")
        lines += [f"  note             {n}" for n in self.notes]
        return "\n".join(lines)


def _check_model(model: Any, what: str) -> PolynomialModel:
    if not isinstance(model, PolynomialModel):
        raise InvalidArgumentError(
            f"{what}: model={model!r} is not a PolynomialModel (make one with "
            "polynomial_model, PolynomialModel.from_layer, .deep_linear or "
            ".linear_convolutional)"
        )
    return model


def _check_common(seed: Any, timeout: Any, gauge: Any) -> tuple[int, float, tuple[str, ...]]:
    from .._m2.backend import check_timeout

    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidArgumentError(f"seed={seed!r}: must be a non-negative integer")
    if gauge is None:
        return seed, check_timeout(timeout), ()
    if isinstance(gauge, str) or not isinstance(gauge, Sequence):
        raise InvalidArgumentError(f"gauge={gauge!r}: a list of linear equations (text) is expected")
    return seed, check_timeout(timeout), tuple(gauge)


def _left(end: float, label: str) -> float:
    from .._errors import MSolveTimeoutError

    left = end - time.monotonic()
    if left < 1.0:
        raise MSolveTimeoutError(label, max(0.0, left))
    return left


def _slice_for(model: PolynomialModel, gauge: tuple[str, ...], r: int, rng: random.Random, p: int) -> Slice:
    if not gauge:
        return random_slice(model, r, rng, p)
    sl = gauge_slice(model, gauge)
    free = len(sl.directions[0]) if sl.directions else 0
    if free != r:
        raise InvalidArgumentError(
            f"gauge: leaves {free} free parameters, but the image has dimension {r}: a gauge "
            f"must fix the {model.m - r}-dimensional fibers with exactly {model.m - r} "
            "independent linear equations"
        )
    return sl


def _parametric(
    model: PolynomialModel,
    metric: Any,
    gauge: tuple[str, ...],
    primes: Sequence[int],
    seed: int,
    end: float,
    backend: Any,
) -> tuple[list[dict[str, Any]], int]:
    from .._algebra.msolve import count_solutions

    counts, dims = [], []
    for i, p in enumerate(primes):
        rng = random.Random((seed + i) * 1_000_003 + p)
        r = generic_rank(model, p, rng)
        dims.append(r)
        sl = _slice_for(model, gauge, r, rng, p)
        kind, Q = _metric(metric, model.n, p, rng)
        u0 = [rng.randrange(p) for _ in range(model.n)]
        u = [sum(Q[a][b] * u0[b] for b in range(model.n)) % p for a in range(model.n)]
        label = f"critical equations of {model.name} (GF({p}))"
        S = model_system(model, sl, Q, u, prime=p, rng=rng, end=end)
        sol = count_solutions(S.variables, S.polynomials, p, timeout=_left(end, label), label=label, backend=backend)
        F = fiber_system(model, sl, prime=p, rng=rng, end=end)
        fib = count_solutions(
            F.variables,
            F.polynomials,
            p,
            timeout=_left(end, label),
            label=f"fiber of {model.name} (GF({p}))",
            backend=backend,
        )
        if sol.count is None:
            raise ComputationError(
                f"{label}: not zero-dimensional (the slice or the data are special for this "
                "model, or the critical points form a family off the ramification): another "
                "seed, or method='implicit'",
                prime=p,
                seed=seed + i,
            )
        if fib.count is None or fib.count == 0:
            raise ComputationError(
                f"the fiber of {model.name} on the slice is not finite (modulo {p}): the slice "
                "is not transversal to the fibers",
                prime=p,
                seed=seed + i,
            )
        if sol.count % fib.count:
            raise ComputationError(
                f"{label}: {sol.count} solutions is not a multiple of the fiber degree "
                f"{fib.count}: a bad prime or an unlucky choice; no value is reported",
                prime=p,
                seed=seed + i,
            )
        counts.append(
            {
                "route": "parametric",
                "prime": p,
                "seed": seed + i,
                "solutions": int(sol.count),
                "fiber": int(fib.count),
                "value": int(sol.count) // int(fib.count),
                "metric": kind,
            }
        )
    if len(set(dims)) != 1:
        raise ComputationError(
            f"the Jacobian's generic rank differs modulo {primes[0]} and {primes[1]} ({dims}): "
            "an unlucky point; rerun with another seed",
            seed=seed,
        )
    return counts, dims[0]


def _implicit_prelude(model: PolynomialModel, p: int) -> str:
    m, n = model.m, model.n
    ts = [f"t{j}" for j in range(m)]

    def text(f: Any) -> str:
        terms = []
        for e, c in f.items():
            r = c.numerator % p * pow(c.denominator, -1, p) % p
            mono = "*".join(f"t{j}^{k}" for j, k in enumerate(e) if k)
            terms.append(f"{r}*{mono}" if mono else str(r))
        return " + ".join(terms) if terms else "0"

    xs = ", ".join(f"x{i}" for i in range(n))
    gens = ", ".join(f"x{i} - ({text(f)})" for i, f in enumerate(model.polynomials))
    return (
        f"kk = ZZ/{p};\nS = kk[{', '.join(ts)}, {xs}, MonomialOrder => Eliminate {m}];\n"
        f"I0 = ideal({gens});\nR = kk[{xs}];\nI = sub(ideal selectInSubring(1, gens gb I0), R);\n"
    )


def _implicit(
    model: PolynomialModel, metric: Any, primes: Sequence[int], seed: int, end: float, backend: Any, cache: bool
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    counts: list[dict[str, Any]] = []
    variety: dict[str, int] = {}
    names = tuple(f"x{i}" for i in range(model.n))
    for i, p in enumerate(primes):
        label = f"{model.name}"
        kind, c, variety = _one_count(
            names,
            [],
            metric,
            p,
            seed + i,
            "msolve",
            _left(end, label),
            backend,
            cache,
            model.name,
            ideal=_implicit_prelude(model, p),
        )
        counts.append({"route": "implicit", "prime": p, "seed": seed + i, "value": int(c), "metric": kind})
    return counts, variety


def model_ed_degree(
    model: PolynomialModel,
    *,
    metric: Any = "euclidean",
    method: str = "auto",
    gauge: Sequence[str] | None = None,
    seed: int = 0,
    timeout: float = 300.0,
    backend: Any = "auto",
    cache: bool = True,
) -> ModelEDDegree:
    """The ED degree of the closure ``X`` of a model's image: the number of critical points of
    ``x -> (x - u)^T Q (x - u)`` on its smooth points for generic data ``u`` (module docstring).

    ``metric``: ``"euclidean"`` (the identity on the model's coordinates), ``"generic"`` (a random symmetric form:
    the generic ED degree, an invariant of ``X``), or a symmetric ``n x n`` matrix of rationals (e.g. a data Gram
    form).  ``method``: ``"parametric"``, ``"implicit"``, ``"both"`` (each must give the same value), or
    ``"auto"`` (parametric within half the time; implicit when that is too large, fails or runs out of its half).
    ``gauge``: linear equations in the parameters that fix the fibers (default: a random affine slice).
    ``timeout`` bounds the call: a run that ends at it returns a result that is not final and says why.

    >>> from ag_attention import PolynomialModel
    >>> r = model_ed_degree(PolynomialModel.deep_linear([2, 1, 2]), metric="generic")   # 2 x 2 of rank 1
    >>> r.ed_degree, r.dimension, r.fiber_degree, r.final
    (6, 3, 2, True)
    """
    model = _check_model(model, "model_ed_degree")
    if method not in MODEL_METHODS:
        raise InvalidArgumentError(f"method={method!r}: must be one of {', '.join(MODEL_METHODS)}")
    seed, timeout, gauge_ = _check_common(seed, timeout, gauge)
    metric = _rational_metric(metric, model.n)
    t0 = time.perf_counter()
    end = time.monotonic() + timeout
    notes: list[str] = []
    primes = draw_primes(list(model.polynomials), metric, seed, notes, "model")
    routes: list[Route] = []
    counts: list[dict[str, Any]] = []
    dimension: int | None = None
    closure = None
    fiber = None
    values: dict[str, int] = {}
    status = "decided"
    order = {
        "auto": ["parametric"],
        "parametric": ["parametric"],
        "implicit": ["implicit"],
        "both": ["parametric", "implicit"],
    }[method]
    k = 0
    while k < len(order):
        route = order[k]
        k += 1
        t1 = time.perf_counter()
        try:
            if route == "parametric":  # auto: half the time, the other half for the implicit route
                share = time.monotonic() + timeout / 2 if method == "auto" else end
                got, dimension = _parametric(model, metric, gauge_, primes, seed, share, backend)
                fiber = got[0]["fiber"]
            else:
                got, closure = _implicit(model, metric, primes, seed, end, backend, cache)
                dimension = dimension if dimension is not None else closure.get("dimension")
        except InvalidArgumentError as exc:
            if route == "parametric" and method == "auto" and "too large" in str(exc):
                routes.append(Route(route, time.perf_counter() - t1, f"not run: {exc}"))
                order.append("implicit")
                continue
            raise
        except AgAttentionError as exc:
            routes.append(Route(route, time.perf_counter() - t1, f"failed: {exc}"))
            status = f"{route} route: {exc}"
            if route == "parametric" and method == "auto" and "implicit" not in order:
                order.append("implicit")
            continue
        counts += got
        vals = {c["value"] for c in got}
        if len(vals) != 1:
            raise ComputationError(
                f"{route} route: the counts modulo {primes[0]} and {primes[1]} differ "
                f"({[c['value'] for c in got]}): an unlucky prime or choice; no value is "
                "reported (another seed draws other primes)",
                seed=seed,
            )
        values[route] = vals.pop()
        routes.append(Route(route, time.perf_counter() - t1, f"ok: {values[route]}"))
    if len(set(values.values())) > 1:
        raise ComputationError(f"the routes disagree: {values}: no value is reported", seed=seed)
    value = next(iter(values.values()), None)
    if value is not None:
        status = "decided"
    kind = counts[0]["metric"] if counts else ("given" if not isinstance(metric, str) else metric)
    return ModelEDDegree(
        model.name,
        model.m,
        model.n,
        dimension,
        kind,
        value,
        fiber,
        tuple(counts),
        tuple(routes),
        seed,
        time.perf_counter() - t0,
        gauge_,
        closure,
        tuple(notes),
        status if value is None else "decided",
    )


# ------------------------------------------------------------------ critical points of one loss
@dataclass(frozen=True)
class ModelCriticalPoint:
    """One real critical point on the slice: the parameters (midpoints of msolve's box), its image, the loss
    (a proven interval), and the Hessian's signature on the slice (proven signs; ``undecided`` eigenvalues)."""

    parameters: dict[str, float]
    image: tuple[float, ...]
    loss: tuple[float, float]
    positive: int
    negative: int
    undecided: int

    @property
    def signature(self) -> str:
        return hessian_class(self.positive, self.negative, self.undecided)

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameters": self.parameters,
            "image": list(self.image),
            "loss": list(self.loss),
            "signature": self.signature,
            "hessian": {"positive": self.positive, "negative": self.negative, "undecided": self.undecided},
        }


@dataclass(frozen=True)
class ModelCriticalPoints(ResultMixin):
    """Every critical point of a squared loss on a model, off the ramification (module docstring)."""

    model: str
    complex_count: int | None  # on the slice, msolve modulo two primes (probabilistic)
    fiber_degree: int | None
    points: tuple[ModelCriticalPoint, ...]  # the real ones on the slice, by increasing loss
    real_complete: bool
    routes: tuple[Route, ...]
    gauge: tuple[str, ...]
    seed: int
    seconds: float
    notes: tuple[str, ...] = field(default=())
    regularized: bool = False

    @property
    def final(self) -> bool:
        return self.complex_count is not None and self.real_complete

    @property
    def minima(self) -> int:
        return sum(1 for p in self.points if p.signature == "minimum")

    def headline(self) -> str:
        what = f"critical points of the loss on {self.model}"
        if not self.final:
            return (
                f"{what}: NOT FINAL ("
                + "; ".join(r.outcome for r in self.routes if not r.outcome.startswith("ok"))
                + ")"
            )
        where = "in the parameters" if self.regularized else "on the slice"
        per = (
            f", {self.complex_count // self.fiber_degree} in function space"
            if self.fiber_degree and self.complex_count is not None and not self.regularized
            else ""
        )
        return f"{what}: {self.complex_count} complex {where}{per}; {len(self.points)} real, {self.minima} minima"

    def to_dict(self) -> dict[str, Any]:
        from .._provenance import provenance

        return {
            "model": self.model,
            "final": self.final,
            "complex": self.complex_count,
            "fiber_degree": self.fiber_degree,
            "real": len(self.points),
            "minima": self.minima,
            "real_complete": self.real_complete,
            "points": [p.to_dict() for p in self.points],
            "gauge": list(self.gauge),
            "routes": [r.to_dict() for r in self.routes],
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "notes": list(self.notes),
            "provenance": provenance(),
            "certificate": "complex count: probabilistic (msolve modulo two primes); real points: proven "
            "(msolve's real root isolation over QQ, one real solution per box); loss and "
            "Hessian signs: proven (ball arithmetic on each box)",
        }

    def __str__(self) -> str:
        lines = [self.headline()]
        lines += [
            f"  {i + 1:>3}. loss in [{p.loss[0]:.6g}, {p.loss[1]:.6g}]  {p.signature}"
            for i, p in enumerate(self.points)
        ]
        lines += [f"  route            {r.name}: {r.outcome} ({r.seconds:.1f} s)" for r in self.routes]
        lines += [f"  note             {n}" for n in self.notes]
        return "\n".join(lines)


def _loss_form(
    model: PolynomialModel, target: Any, metric: Any, loss: Any
) -> tuple[list[list[Fraction]], list[Fraction], Fraction]:
    n = model.n
    if (target is None) == (loss is None):
        raise InvalidArgumentError("give exactly one of target (with metric) and loss=(G, w, c)")
    if loss is not None:
        if not isinstance(loss, (tuple, list)) or len(loss) != 3:
            raise InvalidArgumentError("loss: a triple (G, w, c) with x^T G x - 2 w^T x + c is expected")
        G = _rational_metric([list(r) for r in np.asarray(loss[0], dtype=object)], n)
        w = _vector(loss[1], n, "loss[1]")
        c = _vector([loss[2]], 1, "loss[2]")[0]
        return G, w, c
    u = _vector(target, n, "target")
    Q = _rational_metric(metric, n)
    if Q == "generic":
        raise InvalidArgumentError("metric='generic' is for ED degrees; critical points need a given metric")
    if Q == "euclidean":
        Q = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    w = [sum((Q[i][j] * u[j] for j in range(n)), Fraction(0)) for i in range(n)]
    c = sum((u[i] * Q[i][j] * u[j] for i in range(n) for j in range(n)), Fraction(0))
    return Q, w, c


def _vector(values: Any, n: int, what: str) -> list[Fraction]:
    try:
        out = [
            Fraction(v) if not isinstance(v, float) else Fraction(v) for v in np.asarray(values, dtype=object).ravel()
        ]
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise InvalidArgumentError(f"{what}: not a vector of numbers ({exc})") from None
    if len(out) != n:
        raise InvalidArgumentError(f"{what}: {n} numbers expected, got {len(out)}")
    return out


def _classify(box: list[tuple[Fraction, Fraction]], S: Any, model: PolynomialModel) -> ModelCriticalPoint:
    from .._exact.balls import evaluate, interval, signature

    r = len(S.variables) - (1 if S.variables[-1] == "s" else 0)
    vals = [interval(lo, hi) for lo, hi in box]
    value = evaluate(S.loss.to_dict(), vals)
    H = [[evaluate(S.loss.derivative(i).derivative(j).to_dict(), vals) for j in range(r)] for i in range(r)]
    pos, neg, und = signature(H) if r else (0, 0, 0)
    y = [float((lo + hi) / 2) for lo, hi in box[:r]]
    theta = [float(b) + sum(float(d) * yy for d, yy in zip(row, y)) for b, row in zip(S.slice.base, S.slice.directions)]
    image = tuple(float(v) for v in model.evaluate(theta))
    return ModelCriticalPoint(
        dict(zip(model.parameters, theta)), image, (float(value.lower()), float(value.upper())), pos, neg, und
    )


def model_critical_points(
    model: PolynomialModel,
    *,
    target: Any = None,
    metric: Any = "euclidean",
    loss: Any = None,
    regularization: Any = None,
    gauge: Sequence[str] | None = None,
    exclude: Any = None,
    seed: int = 0,
    timeout: float = 300.0,
    backend: Any = "auto",
) -> ModelCriticalPoints:
    """Every critical point of ``(x - u)^T Q (x - u)`` (``target=u``, ``metric=Q``) or of ``x^T G x - 2 w^T x + c``
    (``loss=(G, w, c)``, e.g. a squared loss on data: :meth:`PolynomialModel.regression_loss`): the complex count
    (msolve, two primes), the real points (msolve's isolation over QQ) and their Hessian signatures (ball
    arithmetic).  Numbers are exact rationals (floats by their exact binary value).

    Without ``regularization`` the critical points are counted on a slice of the parameters (module docstring),
    random or given by ``gauge`` (linear equations, e.g. ``["w1_1_1 - 1"]``; a random real slice may miss a real
    fiber, a gauge meets every real fiber it is transversal to).  With ``regularization`` (a positive number, or
    one nonnegative weight per parameter) the loss gains ``sum_j lambda_j theta_j^2`` and the critical points are
    counted in all the parameters (what Mehta et al. 2018 and Bharadwaj, Hoşten 2023 count).  ``exclude``: what is
    removed (``s h = 1``): ``"ramification"`` (the default without regularization: the critical locus of the
    parametrization on the slice), ``"none"`` (the default with regularization: every critical point), ``"torus"``
    (every parameter nonzero), or polynomials in the parameters that must not vanish.

    >>> from ag_attention import PolynomialModel
    >>> M = PolynomialModel.deep_linear([1, 1, 1])                  # x = w2 * w1
    >>> r = model_critical_points(M, target=[3], gauge=["w1_1_1 - 1"])
    >>> r.complex_count, [p.signature for p in r.points], r.points[0].image
    (1, ['minimum'], (3.0,))
    >>> r = model_critical_points(M, target=[3], regularization=1)   # + |w|^2: 0 and two minima (w1 = w2 = +-sqrt 2)
    >>> r.complex_count, sorted(p.signature for p in r.points)
    (5, ['minimum', 'minimum', 'saddle'])
    """
    from .._exact.field import DEFAULT_PRIME, SECOND_PRIME
    from .critical import _real_boxes

    model = _check_model(model, "model_critical_points")
    seed, timeout, gauge_ = _check_common(seed, timeout, gauge)
    G, w, c = _loss_form(model, target, metric, loss)
    lam = _regularization(regularization, model.m)
    if lam is not None and gauge_:
        raise InvalidArgumentError("gauge: not with regularization (the regularized loss has no symmetry to fix)")
    remove = parse_exclusions(
        model, exclude if exclude is not None else ("none" if lam is not None else "ramification")
    )
    t0 = time.perf_counter()
    end = time.monotonic() + timeout
    rng = random.Random(seed)
    if lam is None:
        r = generic_rank(model, DEFAULT_PRIME, rng)
        sl = _slice_for(model, gauge_, r, rng, 0)
    else:
        sl = identity_slice(model)
    S = model_system(model, sl, G, w, prime=0, rng=rng, constant=c, end=end, remove=remove, regularization=lam)
    label = f"critical points of {model.name}"
    routes: list[Route] = []
    boxes = None
    t1 = time.perf_counter()
    try:
        boxes = _real_boxes(S.variables, S.polynomials, _left(end, label), label, backend)
        routes.append(
            Route(
                "msolve real root isolation over QQ",
                time.perf_counter() - t1,
                "positive-dimensional" if boxes is None else f"ok: {len(boxes)} real",
            )
        )
    except AgAttentionError as exc:
        routes.append(Route("msolve real root isolation over QQ", time.perf_counter() - t1, f"failed: {exc}"))
    counts, fiber = _complex_count(S, model, lam is None and remove == "ramification", rng, end, label, backend, routes)
    if len(counts) == 2 and counts[0] != counts[1]:
        raise ComputationError(
            f"{label}: msolve counts {counts[0]} modulo {DEFAULT_PRIME} and {counts[1]} modulo "
            f"{SECOND_PRIME}: an unlucky prime; no count is reported",
            seed=seed,
        )
    count = counts[0] if counts else None
    if boxes is not None and count is not None and len(boxes) > count:
        raise ComputationError(
            f"{label}: {len(boxes)} real solutions isolated but {count} complex counted: a "
            "contradiction; no result is reported",
            seed=seed,
        )
    points = sorted((_classify(b, S, model) for b in (boxes or [])), key=lambda p: p.loss[0])
    notes = _critical_notes(lam, remove, gauge_, count, fiber)
    return ModelCriticalPoints(
        model.name,
        count,
        fiber,
        tuple(points),
        boxes is not None,
        tuple(routes),
        gauge_,
        seed,
        time.perf_counter() - t0,
        tuple(notes),
        lam is not None,
    )


def _complex_count(
    S: Any,
    model: PolynomialModel,
    with_fiber: bool,
    rng: random.Random,
    end: float,
    label: str,
    backend: Any,
    routes: list[Route],
) -> tuple[list[int | None], int | None]:
    """msolve's counts of ``S`` modulo two primes (empty when a job failed, said in ``routes``) and, ``with_fiber``,
    the fiber degree on ``S``'s slice (1 without a slice)."""
    from .._algebra.msolve import count_solutions
    from .._exact.field import DEFAULT_PRIME, SECOND_PRIME
    from .critical import _count_mod

    t1 = time.perf_counter()
    counts: list[int | None] = []
    fiber: int | None = None if with_fiber else 1
    try:
        for p in (DEFAULT_PRIME, SECOND_PRIME):
            counts.append(_count_mod(S.variables, S.polynomials, p, _left(end, label), label, backend)[0])
        if with_fiber:
            F = fiber_system(model, S.slice, prime=DEFAULT_PRIME, rng=rng, end=end)
            fiber = count_solutions(
                F.variables,
                F.polynomials,
                DEFAULT_PRIME,
                timeout=_left(end, label),
                label=f"fiber of {model.name}",
                backend=backend,
            ).count
        routes.append(
            Route(
                "msolve count modulo two primes",
                time.perf_counter() - t1,
                f"ok: {counts[0]} complex" if counts[0] is not None else "not zero-dimensional",
            )
        )
    except AgAttentionError as exc:
        routes.append(Route("msolve count modulo two primes", time.perf_counter() - t1, f"failed: {exc}"))
        counts = []
    return counts, fiber


def _regularization(value: Any, m: int) -> list[Fraction] | None:
    if value is None:
        return None
    many = isinstance(value, (list, tuple, np.ndarray))
    lam = _vector(value if many else [value], m if many else 1, "regularization")
    if any(v < 0 for v in lam) or not any(lam):
        raise InvalidArgumentError(f"regularization={value!r}: weights must be nonnegative and not all zero")
    return lam if many else lam * m


def _critical_notes(
    lam: Sequence[Fraction] | None, remove: Any, gauge: tuple[str, ...], count: int | None, fiber: int | None
) -> list[str]:
    if remove == "ramification":
        removed = (
            "critical points on the ramification (where the parametrization's differential drops rank: e.g. "
            "zero weights) are not enumerated"
        )
    elif remove:
        removed = f"critical points where one of the {len(remove)} excluded polynomials vanishes are not counted"
    else:
        removed = "nothing removed: every critical point counted"
    if lam is not None:
        return [
            f"regularized loss (+ sum_j lambda_j theta_j^2, lambda = {', '.join(map(str, lam[:6]))}"
            + (", ..." if len(lam) > 6 else "")
            + f"): critical points in all the parameters; {removed}"
        ]
    notes = [removed]
    if not gauge:
        notes.append("random slice: a real fiber that misses it is not seen (give a gauge that meets every real fiber)")
    if fiber and count is not None and count % fiber:
        notes.append(
            f"{count} complex points on the slice is not a multiple of the fiber degree {fiber}: the loss "
            "is not generic (some critical points have fewer preimages)"
        )
    return notes
