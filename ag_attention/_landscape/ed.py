"""The Euclidean distance degree of one layer's neuromanifold: :func:`ed_degree` and :class:`EDDegree`.

docs/math/landscape.md.  For a symmetric form ``G`` (:mod:`.metrics`) and
generic data ``u``, the number of complex critical points of
``x -> (x - u)^T G (x - u)`` on the smooth points of the closure ``M`` of one
layer: the number of critical points a squared loss has on the neuromanifold.
Two independent methods:

* ``count``: the critical equations pulled back to the weights, on a slice of
  the rescaling, with the critical locus of the parametrization removed
  (:mod:`.system`), counted over GF(p) by msolve and divided by the generic
  fiber (the swap of ``d' = 1, a = 1``); a probabilistic certificate, run
  twice (two primes, two random data / forms, two slices) and accepted only
  when both counts agree;
* ``monodromy``: the numerical route (:mod:`.numerical`): monodromy on the
  square system at a random complex target, stopped by the trace test, every
  solution certified by the Krawczyk test; the number of certified solutions
  with pairwise disjoint images ``x`` is a *proven lower bound* on the ED
  degree, the number found its (numerical) value;
* ``m2``: the Lagrange conditions on the implicit side, the singular points
  removed (``edDegree`` of the Macaulay2 package), where Macaulay2 computes
  the closure's ideal.

``auto`` runs the monodromy, then the count, each within ``timeout``, and
reports both side by side (the count's value when it finished and agrees with
the certified bound; else the monodromy's, said so).  Every route tried is in
``routes`` with its time and outcome: nothing falls back silently, and
Macaulay2 runs only when asked (``method="m2"``) or for one token.
"""

from __future__ import annotations

import functools
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import AgAttentionError, ComputationError, InvalidArgumentError, MSolveTimeoutError
from .._exact.field import DEFAULT_PRIME, SECOND_PRIME
from .._m2.backend import check_timeout
from .._models.coordinates import check_one_layer
from .._resources import MemoryEstimate, require_memory
from .._results import ResultMixin
from .beside import Beside
from .critical import Route
from .metrics import METRICS, metric
from .system import check_layer, critical_system

__all__ = ["EDDegree", "EDCount", "ed_degree", "implicit_count", "ED_METHODS", "M2_PRIME"]

ED_METHODS = ("count", "monodromy", "m2", "auto")
#: the prime field of the Macaulay2 route
M2_PRIME = 32003
#: the (prime, seed offset) of the two counts
COUNT_RUNS = ((DEFAULT_PRIME, 0), (SECOND_PRIME, 1))


@dataclass(frozen=True)
class EDCount:
    """One count: its prime and seed, the number of solutions in the weights, msolve's seconds."""

    prime: int
    seed: int
    solutions: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"prime": self.prime, "seed": self.seed, "solutions": self.solutions, "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class EDDegree(ResultMixin):
    """The ED degree of one layer's closure for a metric, with how it was computed and what it proves.

    ``ed_degree`` is the value only when it is decided (``final``): both msolve counts agree (probabilistic), or the
    monodromy met its stopping rule with every solution certified (numerical, with the proven lower bound equal to
    it), or the implicit route finished.  Otherwise it is None and the result holds what is known: ``lower_bound``
    (proven), ``upper_bound`` (proven), ``found`` (the monodromy's solutions when a limit stopped it), the Segre
    prediction (a conjecture) and why it is not decided (``status``)."""

    architecture: Architecture
    metric: str
    metric_description: str
    method: str  # "count", "monodromy", "m2", or "undecided"
    ed_degree: int | None
    fiber: int  # solutions in the weights per critical point (count)
    counts: tuple[EDCount, ...]  # the counts (method count)
    prime: int | None  # the prime field of the value (count, m2); None for the numerical route
    seed: int
    seconds: float
    samples: int | None = None  # input sequences of the data metric
    notes: tuple[str, ...] = field(default=())
    closure: tuple[int, int, int] | None = None  # (dimension, codimension, degree) from Macaulay2 (method m2)
    routes: tuple[Route, ...] = field(default=())
    lower_bound: int | None = None  # proven: certified solutions with pairwise disjoint images (monodromy), or deg
    monodromy: dict[str, Any] | None = None
    msolve: str | None = None  # msolve's version, when it ran
    macaulay2: str | None = None
    upper_bound: int | None = None  # proven: the multihomogeneous Bezout number over the fiber (formula.py)
    bounds: tuple[tuple[str, str, int], ...] = field(default=())  # (side, source, value), each proven
    prediction: dict[str, Any] | None = None  # the Segre formula's value and status (a conjecture)
    status: str = "decided"  # why the value is not decided, when it is not

    @property
    def final(self) -> bool:
        return self.ed_degree is not None

    @property
    def certificate(self) -> str:
        if self.method == "undecided":
            return f"not decided: ED degree >= {self.lower_bound or 0:,} (proven lower bound)" + (
                f", <= {self.upper_bound:,} (proven upper bound)" if self.upper_bound is not None else ""
            )
        if self.method == "monodromy":
            m = self.monodromy or {}
            return (
                f"numerical, with a proven lower bound: monodromy found {m.get('found')} solutions in the "
                f"weights ({self.fiber} per critical point), stopped by {m.get('stop')!r} (trace deviation "
                f"{m.get('trace_deviation')}); {m.get('certified')} of them certified by the Krawczyk test, "
                f"{self.lower_bound} with pairwise disjoint images: ED degree >= {self.lower_bound} (proven), "
                "equal to the value; one random target and form"
            )
        if self.method == "count":
            runs = ", ".join(f"{c.solutions} over GF({c.prime}) (seed {c.seed})" for c in self.counts)
            return (
                f"probabilistic: the critical equations in the weights (critical locus removed, on a slice of "
                f"the rescaling) have {runs} solutions, {self.fiber} per critical point; two primes, two "
                "random data and slices agree (a bad prime or unlucky choice changes a count with probability "
                "about degree / p)"
            )
        return (
            f"probabilistic: Macaulay2's closure ideal over GF({self.prime}) and its Lagrange conditions at "
            "random data (random combinations of the generators; no solution at a singular point for generic "
            "data), their solutions counted by msolve (the degree of a zero-dimensional ideal)"
        )

    def headline(self) -> str:
        """The first line: the value, or that it is not decided with the proven bounds."""
        what = f"ED degree of {self.architecture.describe()} ({self.metric})"
        if self.final:
            return f"{what}: {self.ed_degree}"
        known = []
        if self.lower_bound:
            known.append(f">= {self.lower_bound:,} (proven lower bound)")
        if self.upper_bound is not None:
            known.append(f"<= {self.upper_bound:,} (proven upper bound)")
        text = f"{what}: NOT DECIDED ({self.status}): " + ", ".join(known)
        m = self.monodromy or {}
        if m.get("found") is not None and self.fiber:
            text += f"; monodromy found {-(-int(m['found']) // self.fiber)} before its limit"
        if self.prediction and self.prediction.get("value") is not None:
            text += f"; the Segre formula predicts {self.prediction['value']:,} (a conjecture)"
        return text

    def to_dict(self) -> dict[str, Any]:
        from .._provenance import provenance

        return {
            "architecture": self.architecture.to_dict(),
            "final": self.final,
            "ed_degree": self.ed_degree,
            "status": self.status,
            "metric": self.metric,
            "metric_description": self.metric_description,
            "method": self.method,
            "certificate": self.certificate,
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
            "bounds": [{"side": side, "source": source, "value": value} for side, source, value in self.bounds],
            "prediction": self.prediction,
            "fiber": self.fiber,
            "counts": [c.to_dict() for c in self.counts],
            "monodromy": self.monodromy,
            "routes": [r.to_dict() for r in self.routes],
            "prime": self.prime,
            "seed": self.seed,
            "samples": self.samples,
            "seconds": round(self.seconds, 3),
            "coordinates": "reduced (the coefficients of the quadrics q_km(z) = (A_k z)(V_m z))",
            "notes": list(self.notes),
            "provenance": provenance(msolve=self.msolve, macaulay2=self.macaulay2),
        }

    def __repr__(self) -> str:
        value = self.ed_degree if self.final else f">= {self.lower_bound} (not decided)"
        return f"EDDegree({self.architecture.describe()}, metric {self.metric}: {value}, {self.method})"

    def __str__(self) -> str:
        lines = [
            self.headline(),
            f"  metric           {self.metric}: {self.metric_description}",
            f"  method           {self.method}",
            f"  certificate      {self.certificate}",
        ]
        for side, source, value in self.bounds:
            lines.append(f"  {side + ' bound':<16} {value:,} ({source})")
        if self.prediction is not None:
            predicted = self.prediction.get("value")
            shown = "-" if predicted is None else f"{predicted:,}"
            lines.append(f"  prediction       {shown} ({self.prediction['status']})")
        lines += [f"  route            {r.name}: {r.outcome} ({r.seconds:.1f} s)" for r in self.routes]
        field_ = f"prime {self.prime}, " if self.prime is not None else ""
        lines.append(f"  {field_}seed {self.seed}, {self.seconds:.2f} s")
        lines += [f"  note             {n}" for n in self.notes]
        return "\n".join(lines)


def _system_memory(d: int, e: int, a: int) -> MemoryEstimate:
    """The count's polynomials (at most every monomial of their degree in the unknowns) and msolve's matrices."""
    unknowns = (d * a + a * (d - a) if a < d else d * d) + e * d + 1
    degree = 5 if a < d else 3
    monomials = math.comb(unknowns + degree, degree)
    text = 40 * unknowns * monomials
    return MemoryEstimate(text, {f"{unknowns} equations of up to {monomials:,} terms as text": text})


def _count(
    arch: Architecture, kind: str, samples: int | None, prime: int, seed: int, timeout: float, backend: Any
) -> tuple[int, float, str, str]:
    from .._algebra.msolve import count_solutions

    started = time.monotonic()
    d, e, _, t = check_layer(arch)
    G, description = metric(kind, d, e, t, seed=seed, samples=samples, causal=arch.causal)
    rng = random.Random(seed + 7919)
    w = [rng.randint(-(10**6), 10**6) for _ in range(G.shape[0])]
    system = critical_system(arch, G, w, prime=prime, seed=seed)
    left = timeout - (time.monotonic() - started)  # (building the system counts against the limit)
    if left < 1.0:
        raise MSolveTimeoutError(f"ED count of {arch.describe()} ({kind}) mod {prime} (building its system)", timeout)
    sol = count_solutions(
        system.variables,
        system.polynomials,
        prime,
        timeout=left,
        label=f"ED count of {arch.describe()} ({kind}) mod {prime}",
        backend=backend,
    )
    if sol.count is None:
        raise ComputationError(
            f"the critical equations of {arch.describe()} ({kind}) are not zero-dimensional "
            "(a component of critical points not removed: a bug, or unlucky data)",
            prime=prime,
            seed=seed,
        )
    return sol.count, sol.seconds, description, sol.msolve


def _count_within(
    arch: Architecture, kind: str, samples: int | None, prime: int, seed: int, backend: Any, timeout: float
) -> tuple[int, float, str, str]:
    """:func:`_count` with the time limit last (a job of :class:`~.beside.Beside`)."""
    return _count(arch, kind, samples, prime, seed, timeout, backend)


def _layer(arch: Architecture) -> tuple[int, int, int, int]:
    """``(d, d', a, t)`` of one plain layer, ``t = 1`` allowed (the implicit route, full coordinates)."""
    if isinstance(arch, Architecture) and arch.tokens == 1:
        one = check_one_layer(arch, what="ed_degree")
        return one.widths[0], one.widths[1], min(one.ranks[0], one.widths[0]), 1
    return check_layer(arch)


def _one_token_form(kind: str, d: int, e: int, seed: int) -> tuple[np.ndarray, str]:
    """The form of ``t = 1`` on the full coordinates (the coefficients of the cubics ``(x^T A x) V_m x``)."""
    n = e * math.comb(d + 2, 3)
    if kind == "euclidean":
        return (
            np.eye(n, dtype=int).astype(object),
            "identity on the full coordinates of t = 1 (each the plain "
            "coefficient of its cubic monomial; a rescaling of the coordinates changes the count)",
        )
    if kind == "generic":
        rng = random.Random(seed)
        G = np.zeros((n, n), dtype=object)
        for i in range(n):
            for j in range(i, n):
                G[i, j] = G[j, i] = rng.randint(-(10**6), 10**6)
        return G, f"a random symmetric form on the full coordinates of t = 1 (seed {seed})"
    raise InvalidArgumentError(
        f"metric={kind!r} with tokens=1: only euclidean and generic are computed for one "
        "token (the data form of t = 1 is not implemented)"
    )


def implicit_count(
    arch: Architecture, kind: str, samples: int | None, seed: int, timeout: float, backend: Any, cache: bool
) -> tuple[int, str, dict[str, int]]:
    """The implicit route: Macaulay2's closure ideal over GF(p) and its Lagrange conditions (``edSystem``),
    counted by msolve; also the closure's dimension, codimension and degree."""
    from .._algebra.msolve import count_solutions
    from .._m2.jobs import run_json
    from .._m2.schema import Where

    d, e, a, t = _layer(arch)
    if t == 1:
        G, description = _one_token_form(kind, d, e, seed)
    else:
        G, description = metric(kind, d, e, t, seed=seed, samples=samples, causal=arch.causal)
    n = G.shape[0]
    p = M2_PRIME
    rng = random.Random(seed + 7919)

    def mod(v: Any) -> int:
        from fractions import Fraction

        q = Fraction(v)
        return q.numerator % p * pow(q.denominator % p, -1, p) % p

    Q = "matrix(kk, {" + ", ".join("{" + ", ".join(str(mod(G[i, j])) for j in range(n)) + "}" for i in range(n)) + "})"
    u = "matrix(kk, {" + ", ".join("{" + str(rng.randrange(p)) + "}" for _ in range(n)) + "})"
    rank = "null" if a >= d else str(a)
    body = (
        f"kk = ZZ/{p};\nsetRandomSeed {int(seed)};\n"
        f"P = lightningParametrization({d}, {e}, AttentionRank => {rank}, CoefficientRing => kk"
        + (', Coordinates => "full", Tokens => 1' if t == 1 else "")
        + ");\n"
        "I = standardGrading closureIdeal P;\n"
        f"Q = {Q};\nu = {u};\n"
        # codimension 0: the closure is the whole space, the only critical point is u itself
        "(xs, es) = if codim I == 0 then ({}, {}) else (E = edSystem(I, Q, u); "
        "(apply(gens ring E, toString), apply(flatten entries gens E, toString)));\n"
        'result = hashTable {"unknowns" => xs, '
        '"equations" => es, "closure_dimension" => dim I, '
        '"closure_codimension" => codim I, "closure_degree" => degree I};\n'
    )
    schema = {
        "unknowns": [str],
        "equations": [str],
        "closure_dimension": Where(int, lambda v: v >= 0, "a dimension"),
        "closure_codimension": Where(int, lambda v: v >= 0, "a codimension"),
        "closure_degree": Where(int, lambda v: v >= 1, "a degree"),
    }
    t0 = time.perf_counter()
    job = run_json(
        body,
        schema=schema,
        backend=backend,
        timeout=timeout,
        label=f"Lagrange conditions of {arch.describe()} ({kind})",
        cache=cache,
    )
    closure = {k: int(job.payload[f"closure_{k}"]) for k in ("dimension", "codimension", "degree")}
    if closure["codimension"] == 0:
        return 1, description, closure
    left = max(1.0, timeout - (time.perf_counter() - t0))
    sol = count_solutions(
        job.payload["unknowns"],
        job.payload["equations"],
        p,
        timeout=left,
        label=f"ED count of {arch.describe()} ({kind}) on the implicit side",
        backend="auto",
    )
    if sol.count is None:
        raise ComputationError(
            f"the Lagrange conditions of {arch.describe()} ({kind}) are not zero-dimensional "
            "(unlucky data: rerun with another seed)",
            seed=seed,
        )
    return sol.count, description, closure


def ed_degree(
    arch: Architecture,
    *,
    metric: str = "generic",
    method: str = "auto",
    samples: int | None = None,
    seed: int = 0,
    timeout: float = 300.0,
    backend: str = "auto",
    cache: bool = True,
    workers: int | None = None,
    scheduler: str | None = None,
    save: Any = None,
    resume: Any = None,
) -> EDDegree:
    """The ED degree of one layer's closure (``t >= 2``) for ``metric`` (see the module docstring).

    ``samples``: input sequences of the data metric (default: a few more than make its Gram form invertible).
    ``timeout`` bounds the whole call (the monodromy, the certification and the msolve counts run within it, the
    counts beside the monodromy; the Macaulay2 route: its job and count).  A run that ends at the limit returns
    what it has: ``final`` False, ``ed_degree`` None, the proven bounds (``lower_bound``, ``upper_bound``) and the
    monodromy's solutions.  ``workers`` / ``scheduler``: where the
    monodromy's paths and certifications run (this process, a local Dask cluster of ``workers`` processes, the
    cluster at ``scheduler``; by default this process for a problem estimated under two minutes, a local cluster of
    one process per core above, ``_landscape.estimate.choose_workers``); ``save`` / ``resume``: the monodromy's state file
    (a long count survives a crash).

    >>> from ag_attention import Architecture
    >>> r = ed_degree(Architecture((2, 1), (2,), tokens=2), metric="euclidean", method="count")
    >>> r.ed_degree, r.counts[0].solutions == r.counts[1].solutions
    (6, True)
    >>> r = ed_degree(Architecture((2, 1), (2,), tokens=2), metric="generic")
    >>> r.ed_degree, r.lower_bound, r.final, [route.name for route in r.routes]
    (14, 14, True, ['monodromy (certified)', 'count (msolve, two primes)'])
    """
    if metric not in METRICS:
        raise InvalidArgumentError(f"metric={metric!r}: must be one of {', '.join(METRICS)}")
    if method not in ED_METHODS:
        raise InvalidArgumentError(f"method={method!r}: must be one of {', '.join(ED_METHODS)}")
    if samples is not None and metric != "data":
        raise InvalidArgumentError(f"samples={samples!r}: only for metric='data' (the data set's size)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidArgumentError(f"seed={seed!r}: must be a non-negative integer")
    timeout = check_timeout(timeout)
    d, e, a, t = _layer(arch)
    if t == 1 and method in ("count", "monodromy"):
        raise InvalidArgumentError(
            f"tokens=1 with method={method!r}: the routes in the weights need t >= 2 (the "
            "critical locus of one token's parametrization is not the one of Lemma A.3); "
            "use method='m2' (or 'auto')"
        )
    if arch.heads != 1 or arch.skip or arch.normalized:
        raise InvalidArgumentError("ed_degree: one plain lightning layer (one head, no skip connection, no softmax)")
    if (save is not None or resume is not None or scheduler is not None or workers not in (None, 1)) and method in (
        "count",
        "m2",
    ):
        raise InvalidArgumentError(
            f"workers, scheduler, save and resume belong to the monodromy: not with method={method!r}"
        )
    t0 = time.perf_counter()
    end = time.monotonic() + timeout
    notes = []
    if arch.ranks is not None and arch.ranks[0] > d:
        notes.append(
            f"rank bound a = {arch.ranks[0]} > d = {d}: A is free, the layer is the one of a = {d} (its "
            "numbers are printed)"
        )
    if t > 2 and metric != "data":
        notes.append(
            f"t = {t}: the reduced coordinates and this metric are those of t = 2 (only the data metric depends on t)"
        )
    if t == 1 or method == "m2":
        return _implicit(arch, metric, samples, seed, timeout, backend, cache, notes, t0, d, e, t)
    from .._algebra.degree import degree_formula
    from .formula import ed_upper_bound, segre_ed_degree

    formula = degree_formula(d, e, a, 2)
    fiber = formula.fiber
    bounds: list[tuple[str, str, int]] = []
    if metric == "generic" and formula.applies:
        bounds.append(
            (
                "lower",
                "the degree of the closure (docs/math/degree.md): the generic ED degree is at least "
                "the degree (a polar degree), proven",
                int(formula.degree),
            )
        )
    upper = ed_upper_bound(d, e, a, fiber)
    bounds.append(
        (
            "upper",
            f"the multihomogeneous Bezout number {upper.bezout:,} of the critical equations over "
            f"the fiber {fiber}, proven (docs/math/landscape.md, landscape-bounds)",
            upper.value,
        )
    )
    prediction = segre_ed_degree(d, e, a).to_dict() if metric == "generic" else None
    routes: list[Route] = []
    mono = None
    counted = method in ("count", "auto")
    if counted:
        require_memory(
            _system_memory(d, e, a),
            f"the critical equations of {arch.describe()}",
            "use a smaller size or method='monodromy'",
        )
    with Beside(end) as beside:
        if counted:
            for prime, offset in COUNT_RUNS:
                beside.submit(
                    f"count {prime}",
                    functools.partial(_count_within, arch, metric, samples, prime, seed + offset, backend),
                )
        if method in ("monodromy", "auto"):
            from .numerical import monodromy_ed
            from .square import square_memory

            require_memory(
                square_memory(d, e, a), f"the monodromy of {arch.describe()}", "use a smaller size or method='count'"
            )
            from .estimate import choose_workers

            workers = choose_workers(arch, workers, scheduler)
            G, description = metric_form(metric, d, e, t, seed, samples, arch.causal)

            def known() -> int | None:  # the first count is of the same form: the monodromy may stop at it
                got = beside.value(f"count {COUNT_RUNS[0][0]}") if counted else None
                return None if got is None else int(got[0])

            t1 = time.perf_counter()
            try:
                mono = monodromy_ed(
                    arch,
                    G,
                    fiber=fiber,
                    seed=seed,
                    deadline=end,
                    known=known if counted else None,
                    workers=workers,
                    scheduler=scheduler,
                    save=save,
                    resume=resume,
                )
            except AgAttentionError as exc:
                if method == "monodromy":
                    raise
                routes.append(Route("monodromy (certified)", time.perf_counter() - t1, f"failed: {exc}"))
            else:
                state = "ok" if mono.complete else "stopped at a limit"
                routes.append(
                    Route(
                        "monodromy (certified)",
                        time.perf_counter() - t1,
                        f"{state} ({mono.stop}): {mono.found} found, {mono.certified} certified, "
                        f"{mono.images} distinct images (ED >= {mono.images}, proven)"
                        + (f", {mono.unchecked} not certified for lack of time" if mono.unchecked else ""),
                    )
                )
                if mono.found % fiber:
                    notes.append(
                        f"monodromy found {mono.found} solutions, not a multiple of the fiber {fiber}: some are missing"
                    )
                if mono.stop == "interrupted" and counted:  # Ctrl-C: what is found is kept, nothing more is waited for
                    for prime, _ in COUNT_RUNS:
                        beside.abandon(f"count {prime}", "interrupted (Ctrl-C)")
        counts: list[EDCount] = []
        version = None
        count_state = ""
        if counted:
            t1 = time.perf_counter()
            outcomes = [beside.wait(f"count {prime}") for prime, _ in COUNT_RUNS]
            if any(o.state == "abandoned" for o in outcomes):
                count_state = "interrupted (Ctrl-C) before the msolve counts finished"
            failures = [o for o in outcomes if o.state == "failed"]
            if failures and isinstance(failures[0].error, ComputationError):
                raise failures[0].error
            if failures and failures[0].error is not None:
                raise failures[0].error
            if all(o.ok for o in outcomes):
                for (prime, offset), o in zip(COUNT_RUNS, outcomes):
                    n, seconds, said, version = o.value
                    counts.append(EDCount(prime, seed + offset, n, seconds))
                if counts[0].solutions != counts[1].solutions:
                    raise ComputationError(
                        f"the counts disagree: {counts[0].solutions} and {counts[1].solutions} "
                        "(an unlucky prime or choice): rerun with another seed",
                        seed=seed,
                    )
                if counts[0].solutions % fiber:
                    raise ComputationError(
                        f"{counts[0].solutions} solutions is not a multiple of the fiber {fiber} (bug)"
                    )
                routes.append(
                    Route(
                        "count (msolve, two primes)",
                        sum(c.seconds for c in counts),
                        f"ok: {counts[0].solutions} solutions, ED {counts[0].solutions // fiber}",
                    )
                )
            elif not count_state:
                done = sum(1 for o in outcomes if o.ok)
                count_state = (
                    f"the msolve counts did not finish within the time limit ({done} of 2 done; rerun "
                    f"with a larger timeout)"
                )
                routes.append(
                    Route(
                        "count (msolve, two primes)",
                        sum(o.seconds for o in outcomes),
                        f"timed out: {done} of 2 counts finished within the limit of {timeout:g} s",
                    )
                )
    if mono is not None and counts and mono.images > counts[0].solutions // fiber:
        raise ComputationError(
            f"ED degree of {arch.describe()} ({metric}): {mono.images} distinct critical points "
            f"are certified (proven) but msolve counts {counts[0].solutions // fiber}: a "
            "contradiction (an unlucky prime or draw); no value is reported",
            seed=seed,
        )
    if mono is not None and counts and mono.found != counts[0].solutions:
        notes.append(
            f"monodromy found {mono.found} solutions and msolve counts {counts[0].solutions}: "
            + (
                "the monodromy stopped at a limit before it found them all"
                if mono.found < counts[0].solutions
                else "a contradiction"
            )
        )
    samples_used = _samples(metric, samples, d, e, t)
    lower = max([mono.images if mono is not None else 0] + [v for side, _, v in bounds if side == "lower"])
    if mono is not None and mono.images:
        bounds.insert(
            0,
            (
                "lower",
                f"{mono.images} certified critical points with pairwise disjoint images (Krawczyk), proven",
                mono.images,
            ),
        )
    mdict = mono.to_dict() if mono is not None else None
    description = metric_form(metric, d, e, t, seed, samples, arch.causal)[1]
    common = dict(
        samples=samples_used,
        closure=None,
        routes=tuple(routes),
        lower_bound=lower,
        monodromy=mdict,
        msolve=version,
        upper_bound=upper.value,
        bounds=tuple(bounds),
        prediction=prediction,
    )
    if counts:
        return EDDegree(
            arch,
            metric,
            description,
            "count",
            counts[0].solutions // fiber,
            fiber,
            tuple(counts),
            counts[0].prime,
            seed,
            time.perf_counter() - t0,
            notes=tuple(notes),
            **common,  # type: ignore[arg-type]
        )
    if mono is not None and mono.complete and mono.images * fiber == mono.found:
        return EDDegree(
            arch,
            metric,
            description,
            "monodromy",
            mono.found // fiber,
            fiber,
            (),
            None,
            seed,
            time.perf_counter() - t0,
            notes=tuple(notes),
            **common,  # type: ignore[arg-type]
        )
    why = []
    if mono is not None:
        if not mono.complete:
            why.append(
                f"the monodromy stopped at {mono.stop!r}"
                + (f" with {mono.unchecked} solutions not certified" if mono.unchecked else "")
            )
        elif mono.images * fiber != mono.found:
            why.append(
                f"{mono.found - mono.images * fiber} of the monodromy's {mono.found} solutions are not "
                "certified with distinct images"
            )
    if count_state:
        why.append(count_state)
    return EDDegree(
        arch,
        metric,
        description,
        "undecided",
        None,
        fiber,
        (),
        None,
        seed,
        time.perf_counter() - t0,
        notes=tuple(notes),
        status="; ".join(why) or "no route finished",
        **common,  # type: ignore[arg-type]
    )


def metric_form(
    kind: str, d: int, e: int, t: int, seed: int, samples: int | None, causal: bool
) -> tuple[np.ndarray, str]:
    """The form of the first draw (``seed``): the one the monodromy uses and the first count uses."""
    return metric(kind, d, e, t, seed=seed, samples=samples, causal=causal)


def _implicit(
    arch: Architecture,
    kind: str,
    samples: int | None,
    seed: int,
    timeout: float,
    backend: Any,
    cache: bool,
    notes: list[str],
    t0: float,
    d: int,
    e: int,
    t: int,
) -> EDDegree:
    """The implicit route (Macaulay2, then msolve), as a result with its route."""
    t1 = time.perf_counter()
    value, description, closure = implicit_count(arch, kind, samples, seed, timeout, backend, cache)
    route = Route("implicit (Macaulay2, msolve)", time.perf_counter() - t1, f"ok: {value}")
    notes.append(
        f"the closure: dimension {closure['dimension']}, codimension {closure['codimension']}, "
        f"degree {closure['degree']} (Macaulay2 over GF({M2_PRIME}))"
    )
    return EDDegree(
        arch,
        kind,
        description,
        "m2",
        value,
        1,
        (),
        M2_PRIME,
        seed,
        time.perf_counter() - t0,
        _samples(kind, samples, d, e, t),
        tuple(notes),
        (closure["dimension"], closure["codimension"], closure["degree"]),
        (route,),
        None,
        None,
        _msolve_version(),
        _m2_version(backend),
    )


def _msolve_version() -> str | None:
    """msolve's version (cached after the first query), or None where it cannot be asked."""
    try:
        from .._algebra.msolve import msolve_version

        return msolve_version()
    except AgAttentionError:
        return None


def _m2_version(backend: Any) -> str | None:
    """Macaulay2's version on ``backend`` (cached), or None where it cannot be asked."""
    try:
        from .._m2.runner import get_backend

        return get_backend(backend).version()
    except AgAttentionError:
        return None


def _samples(metric_kind: str, samples: int | None, d: int, e: int, t: int) -> int | None:
    if metric_kind != "data":
        return None
    n = e * d * (d + 1) // 2 * d
    return samples if samples is not None else -(-n // (t * e)) + 2
