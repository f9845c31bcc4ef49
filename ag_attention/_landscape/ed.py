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
* ``m2``: the Lagrange conditions on the implicit side, the singular points
  removed (``edDegree`` of the Macaulay2 package), where Macaulay2 computes
  the closure's ideal.

``auto`` counts, and falls back to Macaulay2 when the count does not finish.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import ComputationError, InvalidArgumentError, MSolveTimeoutError
from .._exact.field import DEFAULT_PRIME, SECOND_PRIME
from .._m2.backend import check_timeout
from .._resources import MemoryEstimate, require_memory
from .._results import ResultMixin
from .metrics import METRICS, metric
from .._models.coordinates import check_one_layer
from .system import check_layer, critical_system

__all__ = ["EDDegree", "EDCount", "ed_degree", "implicit_count", "ED_METHODS", "M2_PRIME"]

ED_METHODS = ("count", "m2", "auto")
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
    """The ED degree of one layer's closure for a metric, with how it was computed and what it proves."""

    architecture: Architecture
    metric: str
    metric_description: str
    method: str  # "count" or "m2"
    ed_degree: int
    fiber: int  # solutions in the weights per critical point (count)
    counts: tuple[EDCount, ...]  # the counts (method count)
    prime: int
    seed: int
    seconds: float
    samples: int | None = None  # input sequences of the data metric
    notes: tuple[str, ...] = field(default=())
    closure: tuple[int, int, int] | None = None  # (dimension, codimension, degree) from Macaulay2 (method m2)

    @property
    def certificate(self) -> str:
        if self.method == "count":
            runs = ", ".join(f"{c.solutions} over GF({c.prime}) (seed {c.seed})" for c in self.counts)
            return (f"probabilistic: the critical equations in the weights (critical locus removed, on a slice of "
                    f"the rescaling) have {runs} solutions, {self.fiber} per critical point; two primes, two "
                    "random data and slices agree (a bad prime or unlucky choice changes a count with probability "
                    "about degree / p)")
        return (f"probabilistic: Macaulay2's closure ideal over GF({self.prime}) and its Lagrange conditions at "
                "random data (random combinations of the generators; no solution at a singular point for generic "
                "data), their solutions counted by msolve (the degree of a zero-dimensional ideal)")

    def to_dict(self) -> dict[str, Any]:
        from .._provenance import provenance

        return {"architecture": self.architecture.to_dict(), "ed_degree": self.ed_degree, "metric": self.metric,
                "metric_description": self.metric_description, "method": self.method,
                "certificate": self.certificate, "fiber": self.fiber, "counts": [c.to_dict() for c in self.counts],
                "prime": self.prime, "seed": self.seed, "samples": self.samples, "seconds": round(self.seconds, 3),
                "coordinates": "reduced (the coefficients of the quadrics q_km(z) = (A_k z)(V_m z))",
                "notes": list(self.notes), "provenance": provenance()}

    def __repr__(self) -> str:
        return (f"EDDegree({self.architecture.describe()}, metric {self.metric}: {self.ed_degree}, "
                f"{self.method})")

    def __str__(self) -> str:
        lines = [f"ED degree of {self.architecture.describe()}: {self.ed_degree}",
                 f"  metric           {self.metric}: {self.metric_description}",
                 f"  method           {self.method}",
                 f"  certificate      {self.certificate}",
                 f"  prime {self.prime}, seed {self.seed}, {self.seconds:.2f} s"]
        lines += [f"  note             {n}" for n in self.notes]
        return "\n".join(lines)


def _system_memory(d: int, e: int, a: int) -> MemoryEstimate:
    """The count's polynomials (at most every monomial of their degree in the unknowns) and msolve's matrices."""
    unknowns = (d * a + a * (d - a) if a < d else d * d) + e * d + 1
    degree = 5 if a < d else 3
    monomials = math.comb(unknowns + degree, degree)
    text = 40 * unknowns * monomials
    return MemoryEstimate(text, {f"{unknowns} equations of up to {monomials:,} terms as text": text})


def _count(arch: Architecture, kind: str, samples: int | None, prime: int, seed: int, timeout: float,
           backend: Any) -> tuple[int, float, str]:
    from .._algebra.msolve import count_solutions

    d, e, _, t = check_layer(arch)
    G, description = metric(kind, d, e, t, seed=seed, samples=samples, causal=arch.causal)
    rng = random.Random(seed + 7919)
    w = [rng.randint(-10**6, 10**6) for _ in range(G.shape[0])]
    system = critical_system(arch, G, w, prime=prime, seed=seed)
    sol = count_solutions(system.variables, system.polynomials, prime, timeout=timeout,
                          label=f"ED count of {arch.describe()} ({kind}) mod {prime}", backend=backend)
    if sol.count is None:
        raise ComputationError(f"the critical equations of {arch.describe()} ({kind}) are not zero-dimensional "
                               "(a component of critical points not removed: a bug, or unlucky data)",
                               prime=prime, seed=seed)
    return sol.count, sol.seconds, description


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
        return (np.eye(n, dtype=int).astype(object), "identity on the full coordinates of t = 1 (each the plain "
                "coefficient of its cubic monomial; a rescaling of the coordinates changes the count)")
    if kind == "generic":
        rng = random.Random(seed)
        G = np.zeros((n, n), dtype=object)
        for i in range(n):
            for j in range(i, n):
                G[i, j] = G[j, i] = rng.randint(-10**6, 10**6)
        return G, f"a random symmetric form on the full coordinates of t = 1 (seed {seed})"
    raise InvalidArgumentError(f"metric={kind!r} with tokens=1: only euclidean and generic are computed for one "
                               "token (the data form of t = 1 is not implemented)")


def implicit_count(arch: Architecture, kind: str, samples: int | None, seed: int, timeout: float, backend: Any,
        cache: bool) -> tuple[int, str, dict[str, int]]:
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
    body = (f"kk = ZZ/{p};\nsetRandomSeed {int(seed)};\n"
            f"P = lightningParametrization({d}, {e}, AttentionRank => {rank}, CoefficientRing => kk"
            + (', Coordinates => "full", Tokens => 1' if t == 1 else "") + ");\n"
            "I = standardGrading closureIdeal P;\n"
            f"Q = {Q};\nu = {u};\n"
            # codimension 0: the closure is the whole space, the only critical point is u itself
            "(xs, es) = if codim I == 0 then ({}, {}) else (E = edSystem(I, Q, u); "
            "(apply(gens ring E, toString), apply(flatten entries gens E, toString)));\n"
            'result = hashTable {"unknowns" => xs, '
            '"equations" => es, "closure_dimension" => dim I, '
            '"closure_codimension" => codim I, "closure_degree" => degree I};\n')
    schema = {"unknowns": [str], "equations": [str],
              "closure_dimension": Where(int, lambda v: v >= 0, "a dimension"),
              "closure_codimension": Where(int, lambda v: v >= 0, "a codimension"),
              "closure_degree": Where(int, lambda v: v >= 1, "a degree")}
    t0 = time.perf_counter()
    job = run_json(body, schema=schema, backend=backend, timeout=timeout,
                   label=f"Lagrange conditions of {arch.describe()} ({kind})", cache=cache)
    closure = {k: int(job.payload[f"closure_{k}"]) for k in ("dimension", "codimension", "degree")}
    if closure["codimension"] == 0:
        return 1, description, closure
    left = max(1.0, timeout - (time.perf_counter() - t0))
    sol = count_solutions(job.payload["unknowns"], job.payload["equations"], p, timeout=left,
                          label=f"ED count of {arch.describe()} ({kind}) on the implicit side", backend="auto")
    if sol.count is None:
        raise ComputationError(f"the Lagrange conditions of {arch.describe()} ({kind}) are not zero-dimensional "
                               "(unlucky data: rerun with another seed)", seed=seed)
    return sol.count, description, closure


def ed_degree(arch: Architecture, *, metric: str = "generic", method: str = "auto", samples: int | None = None,
              seed: int = 0, timeout: float = 300.0, backend: str = "auto", cache: bool = True) -> EDDegree:
    """The ED degree of one layer's closure (``t >= 2``) for ``metric`` (see the module docstring).

    ``samples``: input sequences of the data metric (default: a few more than
    make its Gram form invertible).  ``timeout`` bounds each count (or the
    Macaulay2 job).

    >>> from ag_attention import Architecture
    >>> r = ed_degree(Architecture((2, 1), (2,), tokens=2), metric="euclidean", method="count")
    >>> r.ed_degree, r.counts[0].solutions == r.counts[1].solutions
    (6, True)
    """
    if metric not in METRICS:
        raise InvalidArgumentError(f"metric={metric!r}: must be one of {', '.join(METRICS)}")
    if method not in ED_METHODS:
        raise InvalidArgumentError(f"method={method!r}: must be one of {', '.join(ED_METHODS)}")
    if samples is not None and metric != "data":
        raise InvalidArgumentError(f"samples={samples!r}: only for metric='data' (the data set's size)")
    timeout = check_timeout(timeout)
    d, e, a, t = _layer(arch)
    if t == 1 and method == "count":
        raise InvalidArgumentError("tokens=1 with method='count': the count in the weights needs t >= 2 (the "
                                   "critical locus of one token's parametrization is not the one of Lemma A.3); "
                                   "use method='m2' (or 'auto')")
    if arch.heads != 1 or arch.skip or arch.normalized:
        raise InvalidArgumentError("ed_degree: one plain lightning layer (one head, no skip connection, no softmax)")
    t0 = time.perf_counter()
    notes = []
    if t > 2 and metric != "data":
        notes.append(f"t = {t}: the reduced coordinates and this metric are those of t = 2 (only the data metric "
                     "depends on t)")
    if method in ("count", "auto") and t >= 2:
        require_memory(_system_memory(d, e, a), f"the critical equations of {arch.describe()}",
                       "use a smaller size or method='m2'")
        from .._algebra.degree import degree_formula

        fiber = degree_formula(d, e, a, 2).fiber
        counts = []
        description = ""
        try:
            for prime, offset in COUNT_RUNS:
                n, seconds, said = _count(arch, metric, samples, prime, seed + offset, timeout, backend)
                description = description or said  # the first run's (the second has other data, same kind)
                counts.append(EDCount(prime, seed + offset, n, seconds))
        except MSolveTimeoutError:
            if method == "count":
                raise
            notes.append(f"the count did not finish in {timeout:g} s: Macaulay2's implicit route instead")
        else:
            if counts[0].solutions != counts[1].solutions:
                raise ComputationError(f"the counts disagree: {counts[0].solutions} and {counts[1].solutions} "
                                       "(an unlucky prime or choice): rerun with another seed", seed=seed)
            if counts[0].solutions % fiber:
                raise ComputationError(f"{counts[0].solutions} solutions is not a multiple of the fiber {fiber} (bug)")
            return EDDegree(arch, metric, description, "count", counts[0].solutions // fiber, fiber, tuple(counts),
                            counts[0].prime, seed, time.perf_counter() - t0,
                            _samples(metric, samples, d, e, t), tuple(notes))
    value, description, closure = implicit_count(arch, metric, samples, seed, timeout, backend, cache)
    notes.append(f"the closure: dimension {closure['dimension']}, codimension {closure['codimension']}, "
                 f"degree {closure['degree']} (Macaulay2 over GF({M2_PRIME}))")
    return EDDegree(arch, metric, description, "m2", value, 1, (), M2_PRIME, seed, time.perf_counter() - t0,
                    _samples(metric, samples, d, e, t), tuple(notes),
                    (closure["dimension"], closure["codimension"], closure["degree"]))


def _samples(metric_kind: str, samples: int | None, d: int, e: int, t: int) -> int | None:
    if metric_kind != "data":
        return None
    n = e * d * (d + 1) // 2 * d
    return samples if samples is not None else -(-n // (t * e)) + 2

