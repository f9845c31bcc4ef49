"""The landscape of any polynomial model: :func:`model_ed_degree` and :func:`model_critical_points`.

docs/math/landscape.md (landscape-models).  The model, its slice and its critical equations are
:mod:`.model`'s.  Two routes give the ED degree, and they must agree when both run:

* ``parametric``: the critical equations on a slice, with the ramification removed, counted by msolve modulo two
  primes, divided by the fiber degree (counted the same way): *probabilistic* (the primes are drawn from the seed
  and the model's SHA-256, :func:`~.primes.draw_primes`; a third decides where two counts differ; the
  certificate bounds the error probability under stated hypotheses);
* ``implicit``: Macaulay2 eliminates the parameters (the ideal of ``X``, modulo each prime), writes the Lagrange
  conditions of the distance (``edSystem``, :func:`~ag_attention.ideal_ed_degree`'s code) and msolve counts them:
  probabilistic in the same sense.

The critical points of a given loss (:func:`model_critical_points`, in :mod:`.model_critical`, re-exported here)
are solved over QQ on a slice: msolve isolates
the real ones (a proof: each box holds exactly one real solution), counts the complex ones modulo two primes, and
each real one is classified by its Hessian on the slice in ball arithmetic (a minimum when every eigenvalue is
proven positive).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import _clock
from .._algebra import count_solutions
from .._checks import check_choice
from .._errors import AgAttentionError, ComputationError, InvalidArgumentError
from .._numeric import kernels
from .._provenance import provenance
from .._results import ResultMixin
from .critical import Route
from .ideal_ed import _metric, _one_count, _rational_metric
from .model import PolynomialModel
from .model_critical import ModelCriticalPoint, ModelCriticalPoints, model_critical_points
from .model_system import check_common, check_model, fiber_system, generic_rank, model_system, slice_for, time_left
from .primes import PrimeDraw, agreeing, draw_primes, fresh_seed

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
    primes: str = ""  # which primes the value rests on, the seed and the error bound (PrimeDraw.certificate)
    error_bound: float | None = None  # under the hypotheses ``primes`` states

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
            f"probabilistic: {self.primes or 'primes ' + ', '.join(sorted({str(c['prime']) for c in self.counts}))}"
            f"; the critical points of the squared distance to random data, counted over the algebraic closure of "
            f"GF(p) ({runs}); the counts agree (two of three where a third decided, said in the notes)"
        )

    def headline(self) -> str:
        what = f"ED degree of {self.model} ({self.metric} metric)"
        return f"{what}: {self.ed_degree}" if self.final else f"{what}: NOT DECIDED ({self.status})"

    def to_dict(self) -> dict[str, Any]:
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
            "error_bound": self.error_bound,
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


def _parametric(
    model: PolynomialModel,
    metric: Any,
    gauge: tuple[str, ...],
    draw: PrimeDraw,
    seed: int,
    end: float,
    backend: Any,
    notes: list[str],
) -> tuple[list[dict[str, Any]], int, list[int]]:
    """The parametric counts (two primes; a third where they disagree): ``(counts, the image's dimension, the
    primes the value rests on)``."""

    def one(p: int, i: int) -> tuple[tuple[int, int], str, dict[str, Any]]:
        c, r = _parametric_count(model, metric, gauge, p, seed + i, end, backend)
        return (c["value"], r), f"{c['value']} (rank {r})", c

    (_, dimension), counts, used = agreeing(one, draw, notes, "parametric route")
    return counts, dimension, used


def _parametric_count(
    model: PolynomialModel,
    metric: Any,
    gauge: tuple[str, ...],
    p: int,
    seed: int,
    end: float,
    backend: Any,
) -> tuple[dict[str, Any], int]:
    """The critical points on a slice and the fiber degree, counted modulo ``p`` (random choices from ``seed``):
    the count, and the Jacobian's rank at a random point."""
    rng = random.Random(seed * 1_000_003 + p)
    r = generic_rank(model, p, rng)
    sl = slice_for(model, gauge, r, rng, p)
    kind, Q = _metric(metric, model.n, p, rng)
    u0 = [rng.randrange(p) for _ in range(model.n)]
    u = [sum(Q[a][b] * u0[b] for b in range(model.n)) % p for a in range(model.n)]
    label = f"critical equations of {model.name} (GF({p}))"
    S = model_system(model, sl, Q, u, prime=p, rng=rng, end=end)
    sol = count_solutions(S.variables, S.polynomials, p, timeout=time_left(end, label), label=label, backend=backend)
    F = fiber_system(model, sl, prime=p, rng=rng, end=end)
    fib = count_solutions(
        F.variables,
        F.polynomials,
        p,
        timeout=time_left(end, label),
        label=f"fiber of {model.name} (GF({p}))",
        backend=backend,
    )
    if sol.count is None:
        raise ComputationError(
            f"{label}: not zero-dimensional (the slice or the data are special for this "
            "model, or the critical points form a family off the ramification): another "
            "seed, or method='implicit'",
            prime=p,
            seed=seed,
        )
    if fib.count is None or fib.count == 0:
        raise ComputationError(
            f"the fiber of {model.name} on the slice is not finite (modulo {p}): the slice "
            "is not transversal to the fibers",
            prime=p,
            seed=seed,
        )
    if sol.count % fib.count:
        raise ComputationError(
            f"{label}: {sol.count} solutions is not a multiple of the fiber degree "
            f"{fib.count}: a bad prime or an unlucky choice; no value is reported",
            prime=p,
            seed=seed,
        )
    count = {
        "route": "parametric",
        "prime": p,
        "seed": seed,
        "solutions": int(sol.count),
        "fiber": int(fib.count),
        "value": int(sol.count) // int(fib.count),
        "metric": kind,
    }
    return count, r


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
    model: PolynomialModel,
    metric: Any,
    draw: PrimeDraw,
    seed: int,
    end: float,
    backend: Any,
    cache: bool,
    notes: list[str],
) -> tuple[list[dict[str, Any]], dict[str, int], list[int]]:
    """The implicit counts (two primes; a third where they disagree): ``(counts, the closure's dimension,
    codimension and degree, the primes the value rests on)``."""
    names = tuple(f"x{i}" for i in range(model.n))
    closures: dict[int, dict[str, int]] = {}

    def one(p: int, i: int) -> tuple[int, str, dict[str, Any]]:
        label = f"{model.name}"
        kind, c, closures[p] = _one_count(
            names,
            [],
            metric,
            p,
            seed + i,
            "msolve",
            time_left(end, label),
            backend,
            cache,
            model.name,
            ideal=_implicit_prelude(model, p),
        )
        return c, str(c), {"route": "implicit", "prime": p, "seed": seed + i, "value": int(c), "metric": kind}

    _, counts, used = agreeing(one, draw, notes, "implicit route")
    return counts, closures[used[0]], used


@_clock.interruptible()
def model_ed_degree(
    model: PolynomialModel,
    *,
    metric: Any = "euclidean",
    method: str = "auto",
    gauge: Sequence[str] | None = None,
    seed: int | None = None,
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
    ``seed``: ``None`` (default) draws one from the system's entropy; the result records it, and passing it again
    reproduces the run.  The primes (two of ``[2^30, 2^31)``, and a third where a route's two counts differ) are
    drawn from the seed and the model's SHA-256 (``draw_primes`` of ``ag_attention._landscape.primes``); the
    certificate states them and a bound on the error probability with its hypotheses.

    >>> from ag_attention import PolynomialModel
    >>> r = model_ed_degree(PolynomialModel.deep_linear([2, 1, 2]), metric="generic")   # 2 x 2 of rank 1
    >>> r.ed_degree, r.dimension, r.fiber_degree, r.final
    (6, 3, 2, True)
    """
    model = check_model(model, "model_ed_degree")
    check_choice(method, "method", MODEL_METHODS)
    seed, timeout, gauge_ = check_common(fresh_seed() if seed is None else seed, timeout, gauge)
    metric = _rational_metric(metric, model.n)
    t0 = time.perf_counter()
    notes: list[str] = []
    draw = draw_primes(list(model.polynomials), metric, seed, notes, "model")
    # the tracker's compiled kernels ready before the clock starts (read from numba's cache: 0.6 s; compiled once
    # a machine, by make setup or the first run: that is no part of the computation its time limit bounds)
    kernels.warm()
    run = _Routes(
        model, metric, gauge_, draw, seed, method, timeout, _clock.after(timeout), backend, cache, notes=notes
    )
    _run_routes(run)
    if len(set(run.values.values())) > 1:
        raise ComputationError(f"the routes disagree: {run.values}: no value is reported", seed=seed)
    value = next(iter(run.values.values()), None)
    kind = run.counts[0]["metric"] if run.counts else ("given" if not isinstance(metric, str) else metric)
    return ModelEDDegree(
        model.name,
        model.m,
        model.n,
        run.dimension,
        kind,
        value,
        run.fiber,
        tuple(run.counts),
        tuple(run.routes),
        seed,
        time.perf_counter() - t0,
        gauge_,
        run.closure,
        tuple(notes),
        run.status if value is None else "decided",
        draw.certificate(sorted(set(run.used), key=run.used.index)) if value is not None else "",
        draw.error_bound if value is not None else None,
    )


@dataclass
class _Routes:
    """One call of :func:`model_ed_degree`: its arguments, and what its routes found."""

    model: PolynomialModel
    metric: Any
    gauge: tuple[str, ...]
    draw: PrimeDraw
    seed: int
    method: str
    timeout: float
    end: float  # the deadline (time.monotonic)
    backend: Any
    cache: bool
    counts: list[dict[str, Any]] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    values: dict[str, int] = field(default_factory=dict)
    dimension: int | None = None
    closure: dict[str, int] | None = None
    fiber: int | None = None
    status: str = "decided"
    notes: list[str] = field(default_factory=list)
    used: list[int] = field(default_factory=list)  # the primes the values rest on


#: the routes each method runs (auto adds the implicit one when the parametric one fails or is too large)
_ORDER = {
    "auto": ("parametric",),
    "parametric": ("parametric",),
    "implicit": ("implicit",),
    "both": ("parametric", "implicit"),
}


def _run_routes(run: _Routes) -> None:
    """Each route of ``run.method`` in turn: its counts (which must agree) and its outcome, in ``run``."""
    order = list(_ORDER[run.method])
    k = 0
    while k < len(order):
        route = order[k]
        k += 1
        t1 = time.perf_counter()
        try:
            got = _one_route(run, route)
        except InvalidArgumentError as exc:
            if route == "parametric" and run.method == "auto" and "too large" in str(exc):
                run.routes.append(Route(route, time.perf_counter() - t1, f"not run: {exc}"))
                order.append("implicit")
                continue
            raise
        except AgAttentionError as exc:
            run.routes.append(Route(route, time.perf_counter() - t1, f"failed: {exc}"))
            run.status = f"{route} route: {exc}"
            if route == "parametric" and run.method == "auto" and "implicit" not in order:
                order.append("implicit")
            continue
        run.counts += got
        run.values[route] = next(c["value"] for c in got if c["prime"] in run.used)
        run.routes.append(Route(route, time.perf_counter() - t1, f"ok: {run.values[route]}"))


def _one_route(run: _Routes, route: str) -> list[dict[str, Any]]:
    """The counts of one route; the image's dimension, the fiber degree and the closure as it finds them."""
    if route == "parametric":  # auto: half the time, the other half for the implicit route
        share = _clock.now() + run.timeout / 2 if run.method == "auto" else run.end
        got, run.dimension, used = _parametric(
            run.model, run.metric, run.gauge, run.draw, run.seed, share, run.backend, run.notes
        )
        run.fiber = next(c["fiber"] for c in got if c["prime"] in used)
        run.used += used
        return got
    got, closure, used = _implicit(
        run.model, run.metric, run.draw, run.seed, run.end, run.backend, run.cache, run.notes
    )
    run.used += used
    run.closure = closure
    run.dimension = run.dimension if run.dimension is not None else closure.get("dimension")
    return got
