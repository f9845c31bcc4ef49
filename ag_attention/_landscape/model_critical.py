"""Every critical point of a squared loss on a polynomial model: :func:`model_critical_points` (the mathematics:
:mod:`.models`' docstring, docs/math/landscape.md landscape-models)."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _clock
from .._algebra import count_solutions
from .._checks import check_int
from .._errors import AgAttentionError, ComputationError, ComputationTimeoutError, InvalidArgumentError
from .._exact import DEFAULT_PRIME, evaluate, interval, signature
from .._numeric import kernels
from .._provenance import provenance
from .._results import ResultMixin
from .critical import Route, _count_mod, _real_boxes, hessian_class
from .ideal_ed import _rational_metric
from .metrics import METRICS, Space
from .model import PolynomialModel
from .model_system import (
    check_common,
    check_model,
    fiber_system,
    generic_rank,
    identity_slice,
    model_system,
    parse_exclusions,
    slice_for,
    time_left,
)
from .primes import PrimeDraw, _canonical, agreeing, draw_for, fresh_seed, text_coefficients

__all__ = ["ModelCriticalPoint", "ModelCriticalPoints", "model_critical_points"]


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
    complex_count: int | None  # on the slice, msolve modulo two primes (probabilistic: ``primes``)
    fiber_degree: int | None
    points: tuple[ModelCriticalPoint, ...]  # the real ones on the slice, by increasing loss
    real_complete: bool
    routes: tuple[Route, ...]
    gauge: tuple[str, ...]
    seed: int
    seconds: float
    notes: tuple[str, ...] = field(default=())
    regularized: bool = False
    primes: tuple[int, ...] = ()  # the primes the complex count rests on (two that agree), drawn for the input
    prime_seed: int | None = None  # the seed of the counting primes (fresh entropy unless given)
    counting: str = ""  # the primes, their seed and the error bound (PrimeDraw.certificate); "" without a count
    error_bound: float | None = None  # on the probability that complex_count is wrong, under ``counting``'s hypotheses

    @property
    def certificate(self) -> str:
        """What each number rests on: the complex count probabilistic (its primes and error bound), the real points,
        the losses and the Hessian signs proven."""
        count = (
            f"probabilistic: {self.counting}"
            if self.complex_count is not None and self.counting
            else "none (msolve's count did not finish)"
        )
        return (
            f"complex count: {count}; real points: proven (msolve's real root isolation over QQ, one real "
            "solution per box); loss and Hessian signs: proven (ball arithmetic on each box)"
        )

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
            "primes": list(self.primes),
            "prime_seed": self.prime_seed,
            "error_bound": self.error_bound,
            "seconds": round(self.seconds, 3),
            "notes": list(self.notes),
            "provenance": provenance(),
            "certificate": self.certificate,
        }

    def __str__(self) -> str:
        lines = [self.headline()]
        lines += [
            f"  {i + 1:>3}. loss in [{p.loss[0]:.6g}, {p.loss[1]:.6g}]  {p.signature}"
            for i, p in enumerate(self.points)
        ]
        lines += [f"  route            {r.name}: {r.outcome} ({r.seconds:.1f} s)" for r in self.routes]
        if self.complex_count is not None and self.counting:
            lines.append(f"  certificate      complex count probabilistic: {self.counting}")
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
    if isinstance(Q, str):
        if METRICS[Q].drawn:
            raise InvalidArgumentError(f"metric={Q!r} is for ED degrees; critical points need a given metric")
        form, _ = METRICS[Q].build(Space(n, coordinates="the model's coordinates"), random.Random(0))
        Q = [[Fraction(q) for q in row] for row in form]
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


@_clock.interruptible()
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
    prime_seed: int | None = None,
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

    ``seed`` chooses the slice and the removal.  msolve's count (and the rank of the parametrization that sizes a
    random slice) is taken modulo primes of ``[2^30, 2^31)`` drawn from SHA-256 of ``prime_seed`` and the exact
    input (the model, the loss, the regularization, the gauge, the exclusions, ``seed``), so that no input can be
    built for them; ``prime_seed=None`` (default) takes it from the system's entropy (recorded in the result:
    passing it reproduces the primes).  A third prime decides where the two counts differ; ``certificate`` states
    the primes and a bound on the error probability (docs/math/landscape.md, landscape-counting-primes).

    >>> from ag_attention import PolynomialModel
    >>> M = PolynomialModel.deep_linear([1, 1, 1])                  # x = w2 * w1
    >>> r = model_critical_points(M, target=[3], gauge=["w1_1_1 - 1"])
    >>> r.complex_count, [p.signature for p in r.points], r.points[0].image
    (1, ['minimum'], (3.0,))
    >>> r = model_critical_points(M, target=[3], regularization=1)   # + |w|^2: 0 and two minima (w1 = w2 = +-sqrt 2)
    >>> r.complex_count, sorted(p.signature for p in r.points)
    (5, ['minimum', 'minimum', 'saddle'])
    """
    model = check_model(model, "model_critical_points")
    seed, timeout, gauge_ = check_common(seed, timeout, gauge)
    prime_seed = fresh_seed() if prime_seed is None else check_int(prime_seed, "prime_seed", minimum=0)
    G, w, c = _loss_form(model, target, metric, loss)
    lam = _regularization(regularization, model.m)
    if lam is not None and gauge_:
        raise InvalidArgumentError("gauge: not with regularization (the regularized loss has no symmetry to fix)")
    kinds = exclude if exclude is not None else ("none" if lam is not None else "ramification")
    remove = parse_exclusions(model, kinds)
    kernels.warm()  # compiled (or read from numba's cache) before the clock starts: as ed.py
    t0 = time.perf_counter()
    end = _clock.after(timeout)
    rng = random.Random(seed)
    label = f"critical points of {model.name}"
    routes: list[Route] = []
    drawn: list[str] = []  # the notes of the counting primes (skipped, a third deciding)
    key = _input_key(model, (G, w, c), lam, gauge_, remove, seed)
    values = [v for f in model.polynomials for v in f.values()] + [v for row in G for v in row] + [*w, c, *(lam or [])]
    S = _build(model, gauge_, (G, w, c), rng, end, remove, lam, routes, t0, (key, values, prime_seed, drawn))
    if S is None:  # a limit (or Ctrl-C) before the system was built: what is known
        notes = tuple(_critical_notes(lam, remove, gauge_, None, None) + drawn)
        return ModelCriticalPoints(
            model.name, None, None, (), False, tuple(routes), gauge_, seed, 0.0, notes, prime_seed=prime_seed
        )
    boxes = None
    t1 = time.perf_counter()
    try:
        boxes = _real_boxes(S.variables, S.polynomials, time_left(end, label), label, backend)
        routes.append(
            Route(
                "msolve real root isolation over QQ",
                time.perf_counter() - t1,
                "positive-dimensional" if boxes is None else f"ok: {len(boxes)} real",
            )
        )
    except AgAttentionError as exc:
        routes.append(Route("msolve real root isolation over QQ", time.perf_counter() - t1, f"failed: {exc}"))
    draw = draw_for(key, [*values, *text_coefficients(S.polynomials)], prime_seed, drawn, label)
    count, fiber, used = _complex_count(
        S, model, lam is None and remove == "ramification", rng, end, label, backend, routes, draw, drawn
    )
    if boxes is not None and count is not None and len(boxes) > count:
        raise ComputationError(
            f"{label}: {len(boxes)} real solutions isolated but {count} complex counted: a "
            "contradiction; no result is reported",
            seed=seed,
        )
    points = sorted((_classify(b, S, model) for b in (boxes or [])), key=lambda p: p.loss[0])
    notes = tuple(_critical_notes(lam, remove, gauge_, count, fiber) + drawn)
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
        notes,
        lam is not None,
        tuple(used),
        prime_seed,
        draw.certificate(used) if used else "",
        draw.error_bound if used else None,
    )


def _input_key(
    model: PolynomialModel, loss: Any, lam: Sequence[Fraction] | None, gauge: Sequence[str], remove: Any, seed: int
) -> str:
    """The exact input as one text (the key of the counting primes, with their seed): the model's polynomials and
    the quadratic form (:func:`~.primes._canonical`), ``w``, ``c``, the regularization, the gauge, what is removed
    and the seed of the slice."""
    G, w, c = loss
    removed = remove if isinstance(remove, str) else [sorted(f.items()) for f in remove]
    return "\n".join(
        [
            _canonical(list(model.polynomials), G),
            "w " + ",".join(map(str, w)),
            f"c {c}",
            "regularization " + ("none" if lam is None else ",".join(map(str, lam))),
            "gauge " + ";".join(gauge),
            f"remove {removed}",
            f"random choices {seed}",
        ]
    )


def _build(
    model: PolynomialModel,
    gauge: tuple[str, ...],
    loss: Any,
    rng: random.Random,
    end: float,
    remove: Any,
    lam: Any,
    routes: list[Route],
    t0: float,
    primes: tuple[str, list[Fraction], int, list[str]],
) -> Any:
    """The critical system on its slice, or None (said in ``routes``) when the limit came while it was built.
    ``primes``: the key, the exact values and the seed of the prime the rank is taken modulo
    (:func:`~.primes.draw_for`), and the list its notes go to."""
    G, w, c = loss
    if lam is not None:
        sl = identity_slice(model)
    else:
        key, values, prime_seed, notes = primes
        p = draw_for(key, values, prime_seed, notes, f"the rank of {model.name}", count=1).primes[0]
        # the rank modulo DEFAULT_PRIME first (the stream of rng as before: a seed gives the slice it gave), then
        # modulo a drawn prime: each is at most the rank over QQ, so the larger is right unless both are unlucky
        r = generic_rank(model, DEFAULT_PRIME, rng)
        r = max(r, generic_rank(model, p, random.Random(prime_seed * 1_000_003 + p)))
        sl = slice_for(model, gauge, r, rng, 0)
    try:
        return model_system(model, sl, G, w, prime=0, rng=rng, constant=c, end=end, remove=remove, regularization=lam)
    except ComputationTimeoutError as exc:
        routes.append(Route("building the critical system", time.perf_counter() - t0, f"stopped: {exc}"))
        return None


def _complex_count(
    S: Any,
    model: PolynomialModel,
    with_fiber: bool,
    rng: random.Random,
    end: float,
    label: str,
    backend: Any,
    routes: list[Route],
    draw: PrimeDraw,
    notes: list[str],
) -> tuple[int | None, int | None, list[int]]:
    """msolve's count of ``S`` modulo the first two primes of ``draw`` (the third where they differ: two must
    agree, :func:`~.primes.agreeing`; None when a job failed, said in ``routes``), ``with_fiber`` the fiber degree
    on ``S``'s slice (modulo the first prime the count rests on; 1 without a slice), and the primes the count
    rests on."""
    t1 = time.perf_counter()
    fiber: int | None = None if with_fiber else 1
    name = "msolve count modulo two primes"
    try:
        done = [
            _count_mod(S.variables, S.polynomials, p, time_left(end, label), label, backend)[0] for p in draw.primes[:2]
        ]
        if done[0] != done[1]:
            p = draw.primes[2]
            done.append(_count_mod(S.variables, S.polynomials, p, time_left(end, label), label, backend)[0])
    except AgAttentionError as exc:
        routes.append(Route(name, time.perf_counter() - t1, f"failed: {exc}"))
        return None, fiber, []
    count, _, used = agreeing(lambda p, i: (done[i], str(done[i]), done[i]), draw, notes, label)  # (or raises)
    try:
        if with_fiber:
            F = fiber_system(model, S.slice, prime=used[0], rng=rng, end=end)
            fiber = count_solutions(
                F.variables,
                F.polynomials,
                used[0],
                timeout=time_left(end, label),
                label=f"fiber of {model.name}",
                backend=backend,
            ).count
    except AgAttentionError as exc:
        routes.append(Route(name, time.perf_counter() - t1, f"failed: {exc}"))
        return None, None, []
    routes.append(
        Route(name, time.perf_counter() - t1, f"ok: {count} complex" if count is not None else "not zero-dimensional")
    )
    return count, fiber, used


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
