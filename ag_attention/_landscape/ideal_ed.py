"""The ED degree of any affine variety given by its ideal, for a given metric: the package's Macaulay2 Lagrange
system, counted by msolve (or by Macaulay2), modulo two primes.

For an ideal ``I`` of an affine variety ``X`` in ``C^n`` (generators as text
in the given variables), a symmetric form ``Q`` (the metric: the identity,
a random symmetric matrix, or one given by the user, e.g. Bombieri–Weyl
weights) and data ``u``, the critical points of ``x -> (x - u)^T Q (x - u)``
on the smooth points of ``X`` are the solutions of ``edSystem(I, Q, u)``
(the package's Macaulay2 code, ``LightningAttention.m2``: ``I``, the
augmented Jacobian's ``(c + 1)``-minors, saturated by the singular locus).
Their number for generic ``u`` is the ED degree of ``X`` with respect to
``Q`` (Draisma, Horobeţ, Ottaviani, Sturmfels, Thomas, *The Euclidean
distance degree of an algebraic variety*, 2016).

The count is taken over the algebraic closure of GF(p) with ``u`` (and a
generic ``Q``) random mod ``p``, for two primes and two seeds: each count
equals the count over ``C`` unless the random choices or the prime are
unlucky (a *probabilistic* result, stated with its primes and seeds); the
two must agree, or the call says so.  The published values this reproduces
are tests (``tests/landscape/test_ideal_ed.py``): EDD-M2's (Harris,
Lowengrub) and the metric dependence of the symmetric determinant (13
critical points for a generic metric, 3 for Bombieri–Weyl: arXiv 2512.21016).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .._errors import ComputationError, InvalidArgumentError
from .._results import ResultMixin

__all__ = ["IdealEDDegree", "ideal_ed_degree", "PRIMES"]

#: the two primes of the count (Macaulay2's small-prime arithmetic below 2^15)
PRIMES = (32003, 32009)
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_POLY = re.compile(r"^[A-Za-z0-9_+\-*/^() \t]+$")
_RESERVED = {"i", "e", "ii", "pi", "end", "or", "and", "not", "if", "then", "else", "for", "do", "while", "in",
             "from", "to", "new", "of", "list", "return", "break", "try", "when"}


@dataclass(frozen=True)
class IdealEDDegree(ResultMixin):
    """The ED degree of ``V(I)`` for a metric: the count modulo each prime, and the variety's dimension and degree."""

    variables: tuple[str, ...]
    generators: tuple[str, ...]
    metric: str  # "euclidean", "generic" or "given"
    value: int
    counts: tuple[tuple[int, int, int], ...]  # (prime, seed, count)
    dimension: int
    codimension: int
    degree: int
    method: str
    seconds: float
    notes: tuple[str, ...] = field(default=())

    @property
    def certificate(self) -> str:
        runs = "; ".join(f"GF({p}), seed {s}: {c}" for p, s, c in self.counts)
        return (f"probabilistic: the critical points of the squared {self.metric} distance to random data, counted "
                f"over the algebraic closure of GF(p) ({runs}; {self.method})")

    def to_dict(self) -> dict[str, Any]:
        return {"variables": list(self.variables), "generators": list(self.generators), "metric": self.metric,
                "ed_degree": self.value, "counts": [{"prime": p, "seed": s, "count": c} for p, s, c in self.counts],
                "dimension": self.dimension, "codimension": self.codimension, "degree": self.degree,
                "method": self.method, "certificate": self.certificate, "seconds": round(self.seconds, 3),
                "notes": list(self.notes)}

    def __str__(self) -> str:
        return "\n".join([
            f"ED degree of V({', '.join(self.generators)}) in {len(self.variables)} variables",
            f"  ED degree        {self.value} ({self.metric} metric)",
            f"  variety          dimension {self.dimension}, codimension {self.codimension}, degree {self.degree}",
            f"  certificate      {self.certificate}",
            *[f"  note             {n}" for n in self.notes],
            f"  {self.seconds:.2f} s",
        ])


def _checked(variables: Sequence[str], generators: Sequence[Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if isinstance(variables, str) or not isinstance(variables, Sequence) or not variables:
        raise InvalidArgumentError(f"variables={variables!r}: a non-empty list of names is expected")
    names = tuple(str(v) for v in variables)
    for v in names:
        if not _NAME.match(v) or v in _RESERVED:
            raise InvalidArgumentError(f"variables: {v!r} is not a plain name (a letter, then letters or digits; "
                                       "not a Macaulay2 keyword)")
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"variables: {sorted(v for v in names if names.count(v) > 1)[0]!r} is repeated")
    if isinstance(generators, str) or not isinstance(generators, Sequence) or not generators:
        raise InvalidArgumentError(f"generators={generators!r}: a non-empty list of polynomials is expected")
    polys = []
    for g in generators:
        text = str(g).replace("**", "^")
        if not _POLY.match(text):
            raise InvalidArgumentError(f"generators: {str(g)!r} is not a polynomial in the variables (digits, "
                                       "+ - * / ^ and parentheses only)")
        unknown = sorted(set(re.findall(r"[A-Za-z][A-Za-z0-9]*", text)) - set(names))
        if unknown:
            raise InvalidArgumentError(f"generators: {str(g)!r} uses {unknown[0]!r}, not among the variables")
        polys.append(text)
    return names, tuple(polys)


def _metric(metric: Any, n: int, p: int, rng: random.Random) -> tuple[str, list[list[int]]]:
    """``(kind, Q mod p)``."""
    if isinstance(metric, str):
        if metric == "euclidean":
            return "euclidean", [[int(i == j) for j in range(n)] for i in range(n)]
        if metric == "generic":
            Q = [[0] * n for _ in range(n)]
            for i in range(n):
                for j in range(i, n):
                    Q[i][j] = Q[j][i] = rng.randrange(1, p)
            return "generic", Q
        raise InvalidArgumentError(f"metric={metric!r}: 'euclidean', 'generic' or a symmetric n x n matrix")
    try:
        rows = [[Fraction(x) for x in row] for row in metric]
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"metric: not a matrix of rationals ({exc})") from None
    if len(rows) != n or any(len(r) != n for r in rows):
        raise InvalidArgumentError(f"metric: a {n} x {n} matrix is expected (one row per variable)")
    for i in range(n):
        for j in range(n):
            if rows[i][j] != rows[j][i]:
                raise InvalidArgumentError(f"metric[{i}][{j}] = {rows[i][j]} != metric[{j}][{i}] = {rows[j][i]}: "
                                           "the metric must be symmetric")
    Q = []
    for i, row in enumerate(rows):
        out = []
        for j, q in enumerate(row):
            if q.denominator % p == 0:
                raise InvalidArgumentError(f"metric[{i}][{j}] = {q}: its denominator is divisible by {p}")
            out.append(q.numerator % p * pow(q.denominator, -1, p) % p)
        Q.append(out)
    return "given", Q


def _one_count(names: tuple[str, ...], polys: tuple[str, ...], metric: Any, p: int, seed: int, method: str,
               timeout: float, backend: Any, cache: bool) -> tuple[str, int, dict[str, int]]:
    from .._algebra.msolve import count_solutions
    from .._m2.jobs import run_json
    from .._m2.schema import Where

    rng = random.Random(seed * 1_000_003 + p)
    kind, Q = _metric(metric, len(names), p, rng)
    u = [rng.randrange(p) for _ in names]
    q_text = "matrix(kk, {" + ", ".join("{" + ", ".join(map(str, row)) + "}" for row in Q) + "})"
    u_text = "matrix(kk, {" + ", ".join("{" + str(x) + "}" for x in u) + "})"
    count_in_m2 = method == "m2"
    body = (f"kk = ZZ/{p};\nR = kk[{', '.join(names)}];\nI = ideal({', '.join(polys)});\n"
            f"Q = {q_text};\nu = {u_text};\n"
            "(xs, es, m2count) = if codim I == 0 then ({}, {}, 1) else (E = edSystem(I, Q, u); "
            "(apply(gens ring E, toString), apply(flatten entries gens E, toString), "
            + ("if dim E == 0 then degree E else -1" if count_in_m2 else "-2") + "));\n"
            'result = hashTable {"unknowns" => xs, "equations" => es, "m2_count" => m2count, '
            '"dimension" => dim I, "codimension" => codim I, "degree" => degree I};\n')
    schema = {"unknowns": [str], "equations": [str], "m2_count": Where(int, lambda v: v >= -2, "a count"),
              "dimension": Where(int, lambda v: v >= -1, "a dimension"),
              "codimension": Where(int, lambda v: v >= 0, "a codimension"),
              "degree": Where(int, lambda v: v >= 0, "a degree")}
    t0 = time.perf_counter()
    short = ", ".join(polys)
    short = short if len(short) <= 60 else short[:57] + "..."
    job = run_json(body, schema=schema, backend=backend, timeout=timeout, cache=cache,
                   label=f"Lagrange conditions of V({short}) ({kind} metric, GF({p}))")
    variety = {k: int(job.payload[k]) for k in ("dimension", "codimension", "degree")}
    if variety["dimension"] < 0:
        raise InvalidArgumentError("generators: the ideal is the unit ideal: V(I) is empty")
    if variety["codimension"] == 0:
        return kind, 1, variety
    if count_in_m2:
        c = int(job.payload["m2_count"])
    else:
        left = max(1.0, timeout - (time.perf_counter() - t0))
        sol = count_solutions(job.payload["unknowns"], job.payload["equations"], p, timeout=left,
                              label=f"ED count mod {p}", backend="auto")
        c = -1 if sol.count is None else int(sol.count)
    if c < 0:
        raise ComputationError("the Lagrange conditions are not zero-dimensional: the data or the metric are not "
                               "generic for this variety (another seed), or V(I) has a component inside the "
                               "isotropic quadric of the metric", prime=p, seed=seed)
    return kind, c, variety


def ideal_ed_degree(variables: Sequence[str], generators: Sequence[Any], *, metric: Any = "euclidean",
                    method: str = "msolve", seed: int = 0, timeout: float = 300.0, backend: Any = "auto",
                    cache: bool = True) -> IdealEDDegree:
    """The ED degree of the affine variety ``V(generators)`` in ``C^len(variables)`` (see the module docstring).

    ``metric``: ``"euclidean"`` (the identity), ``"generic"`` (a random symmetric
    form), or a symmetric matrix of rationals (one row per variable, e.g. the
    Bombieri–Weyl weights as a diagonal).  ``method``: ``"msolve"`` counts the
    Lagrange system with msolve, ``"m2"`` takes its degree in Macaulay2.
    ``timeout``: seconds per prime (Macaulay2 and msolve together).

    >>> r = ideal_ed_degree(["x", "y"], ["x^2 + 4*y^2 - 4"])      # an ellipse: 4 critical points
    >>> r.value, r.degree, [c for _, _, c in r.counts]
    (4, 2, [4, 4])
    """
    from .._m2.backend import check_timeout

    names, polys = _checked(variables, generators)
    if method not in ("msolve", "m2"):
        raise InvalidArgumentError(f"method={method!r}: 'msolve' or 'm2'")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidArgumentError(f"seed={seed!r}: must be an integer")
    timeout = check_timeout(timeout)
    t0 = time.perf_counter()
    counts = []
    kind, variety = "euclidean", {}  # type: tuple[str, dict[str, int]]
    for i, p in enumerate(PRIMES):
        kind, c, variety = _one_count(names, polys, metric, p, seed + i, method, timeout, backend, cache)
        counts.append((p, seed + i, c))
    values = {c for _, _, c in counts}
    if len(values) != 1:
        raise ComputationError(f"the counts modulo {PRIMES[0]} and {PRIMES[1]} differ ({counts[0][2]} and "
                               f"{counts[1][2]}): an unlucky prime or data; rerun with another seed", seed=seed)
    notes: tuple[str, ...] = ()
    return IdealEDDegree(names, polys, kind, counts[0][2], tuple(counts), variety["dimension"],
                         variety["codimension"], variety["degree"], f"Macaulay2 edSystem, counted by {method}",
                         time.perf_counter() - t0, notes)
