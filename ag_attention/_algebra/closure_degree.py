"""``degree(arch)``: the degree of the closure of one layer, by formula, by counting, or by Macaulay2.

Methods:

* ``"formula"``: the closed formula of :mod:`.degree` (proven in
  docs/math/degree.md under the hypotheses it lists);
* ``"count"``: the solutions of a square system over GF(p) (a general linear
  section of the closure pulled back to the weights), counted by msolve:
  ``degree x fiber``.  A probabilistic certificate (an unlucky prime or
  section changes the count with probability about ``deg / p``), so it is
  confirmed with a second prime *and* a second random section; the two
  counts must agree;
* ``"m2"``: ``degree`` of the ideal of the closure from Macaulay2's kernel
  (small sizes only);
* ``"auto"``: the formula where its hypotheses hold, confirmed by a count on
  this size when ``degree x fiber`` is at most ``count_limit`` (the counts
  that finish in seconds to a minute here).

Every msolve and Macaulay2 run has a timeout and is killed with its process
group; counts are cached like Macaulay2 results (keyed by the system, the
prime and msolve's version).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .. import _clock
from .._architecture import Architecture, check_architecture
from .._checks import check_choice, check_int
from .._errors import ComputationError, InvalidArgumentError, MSolveTimeoutError
from .._m2 import ResultCache, Where, cache_disabled_by_env, check_timeout
from .._models import check_one_layer
from .._results import ResultMixin
from .certificate import build_system
from .degree import DegreeFormula, degree_formula
from .implicitize import implicitize
from .msolve import count_solutions, msolve_backend, msolve_version

__all__ = ["DegreeResult", "CountRun", "degree", "METHODS"]

METHODS = ("auto", "formula", "count", "m2")
#: the (prime, seed) pairs of a count and its confirmation: a second prime and a second section
COUNT_RUNS = ((2147483647, 0), (65521, 1))
#: "auto" confirms the formula by counting when degree x fiber is at most this
COUNT_LIMIT = 2000


@dataclass(frozen=True)
class CountRun:
    prime: int
    seed: int
    count: int
    seconds: float
    cached: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "prime": self.prime,
            "seed": self.seed,
            "count": self.count,
            "seconds": round(self.seconds, 3),
            "cached": self.cached,
        }


@dataclass(frozen=True)
class DegreeResult(ResultMixin):
    """The degree of the Zariski closure of one layer's neuromanifold, with what proves it."""

    architecture: Architecture
    degree: int
    dimension: int
    fiber_size: int
    method: str  # the method that gave ``degree``: formula, count or m2
    certificate: str
    formula: DegreeFormula
    counts: tuple[CountRun, ...] = ()
    m2: dict[str, Any] | None = None
    seconds: float = 0.0
    msolve: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def confirmed_by(self) -> list[str]:
        out = []
        if self.counts and self.method != "count":
            out.append("count")
        if self.m2 is not None and self.method != "m2":
            out.append("m2")
        return out

    @property
    def prime(self) -> int | None:
        return self.counts[0].prime if self.counts else None

    @property
    def seed(self) -> int | None:
        return self.counts[0].seed if self.counts else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "architecture": self.architecture.to_dict(),
            "degree": self.degree,
            "dimension": self.dimension,
            "fiber_size": self.fiber_size,
            "method": self.method,
            "certificate": self.certificate,
            "confirmed_by": self.confirmed_by,
            "formula": self.formula.degree,
            "formula_applies": self.formula.applies,
            "hypotheses": [h.to_dict() for h in self.formula.hypotheses],
            "explanation": self.formula.explanation,
            "counts": [c.to_dict() for c in self.counts],
            "prime": self.prime,
            "seed": self.seed,
            "m2": self.m2,
            "msolve": self.msolve,
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
        }

    def __repr__(self) -> str:
        return (
            f"DegreeResult({self.architecture.describe()}: degree {self.degree}, dim {self.dimension}, "
            f"method {self.method})"
        )

    def __str__(self) -> str:
        lines = [
            f"Zariski closure of the neuromanifold of {self.architecture.describe()}",
            f"  degree           {self.degree}  ({self.method})",
            f"  dimension        {self.dimension} (affine cone)",
            f"  generic fiber    {self.fiber_size} point(s) up to rescaling",
            f"  formula          {self.formula.explanation}",
            f"  certificate      {self.certificate}",
        ]
        for c in self.counts:
            lines.append(
                f"  count            {c.count} solutions over GF({c.prime}), section seed {c.seed}, "
                f"{c.seconds:.2f} s{' (cached)' if c.cached else ''}"
            )
        if self.m2 is not None:
            lines.append(
                f"  Macaulay2        degree {self.m2['degree']} of the kernel ({self.m2['backend']}, "
                f"{self.m2['seconds']:.2f} s)"
            )
        lines.append(f"  {self.seconds:.2f} s")
        return "\n".join(lines)


def _count(
    formula: DegreeFormula, prime: int, seed: int, timeout: float, cache: bool, backend: Any, deadline: float
) -> CountRun:
    """One count; building the system and msolve's run together end by ``deadline`` (or MSolveTimeoutError
    naming the whole ``timeout``)."""
    system = build_system(
        formula.d,
        formula.d_out,
        formula.rank,
        formula.tokens,
        prime=prime,
        seed=seed,
        deadline=deadline,
        timeout=timeout,
    )
    store = None if (not cache or cache_disabled_by_env()) else ResultCache()
    label = f"degree count ({formula.d},{formula.d_out},{formula.rank}, t={formula.tokens}) mod {prime}"
    left = deadline - _clock.now()
    if left <= 0:
        raise MSolveTimeoutError(label, timeout)
    key = ResultCache.key(
        "msolve-count",
        "\n".join(system.variables),
        "\n".join(system.polynomials),
        str(prime),
        msolve_version(backend=backend, timeout=left),
    )
    if store is not None:
        # in form and in sense: a forged count of 0 (or any non-positive number) is recomputed, never a degree
        hit = store.get(
            key,
            schema={
                "count": Where(int, lambda n: n >= 1, "a positive number of solutions"),
                "seconds": Where(float, lambda s: s >= 0, "seconds >= 0"),
            },
        )
        if hit is not None:
            return CountRun(prime, seed, hit["count"], float(hit["seconds"]), True)
    left = deadline - _clock.now()
    if left <= 0:
        raise MSolveTimeoutError(label, timeout)
    try:
        sol = count_solutions(system.variables, system.polynomials, prime, timeout=left, label=label, backend=backend)
    except MSolveTimeoutError:
        raise MSolveTimeoutError(label, timeout) from None
    if sol.count is None:
        raise ComputationError(
            f"{label}: the system is not zero-dimensional (an unlucky section)", prime=prime, seed=seed
        )
    if store is not None:
        store.put(key, {"count": sol.count, "seconds": sol.seconds})
    return CountRun(prime, seed, sol.count, sol.seconds, False)


def _m2_degree(arch: Architecture, backend: str, timeout: float, cache: bool) -> dict[str, Any]:

    coords = "reduced" if arch.tokens >= 2 else "full"
    r = implicitize(arch, coords=coords, field="ZZ/32003", backend=backend, timeout=timeout, cache=cache)
    return {
        "degree": r.degree,
        "dimension": r.dimension,
        "backend": r.backend,
        "seconds": r.seconds,
        "cached": r.cached,
        "m2_version": r.m2_version,
        "field": r.field,
    }


def _check_arguments(arch: object, method: object, timeout: float, cache: object, count_limit: object) -> float:
    if not isinstance(arch, Architecture):
        raise InvalidArgumentError(f"arch={arch!r}: must be an Architecture")
    check_choice(method, "method", METHODS)
    timeout = check_timeout(timeout)
    if not isinstance(cache, bool):
        raise InvalidArgumentError(f"cache={cache!r}: must be True or False")
    check_int(count_limit, "count_limit", minimum=0)
    check_one_layer(arch, what="the degree of the closure")
    return timeout


def _counts(
    arch: Architecture, formula: DegreeFormula, timeout: float, cache: bool, backend: str
) -> tuple[tuple[CountRun, ...], str]:
    """The GF(p) counts for every (prime, seed) of COUNT_RUNS, which must agree, and msolve's version."""
    deadline = _clock.now() + timeout  # the whole job: the version query, building both systems, both counts
    runner = msolve_backend("auto" if backend == "auto" else backend)
    version = f"{msolve_version(backend=runner, timeout=timeout)} ({runner.name})"
    counts = tuple(_count(formula, p, s, timeout, cache, runner, deadline) for p, s in COUNT_RUNS)
    if len({c.count for c in counts}) != 1:
        raise ComputationError(
            f"{arch.describe()}: the counts disagree between (prime, seed) = "
            + ", ".join(f"({c.prime}, {c.seed}): {c.count}" for c in counts)
            + " (an unlucky prime or section): rerun"
        )
    return counts, version


def _value_and_certificate(
    arch: Architecture,
    method: str,
    formula: DegreeFormula,
    counts: tuple[CountRun, ...],
    m2: dict[str, Any] | None,
    count_limit: int,
) -> tuple[int, str]:
    """The degree the method gives and what proves it."""
    fiber = formula.fiber
    if m2 is not None:  # method == "m2"
        return m2["degree"], (
            f"Macaulay2's kernel of the parametrization over {m2['field']} (a Groebner basis: exact for that field; "
            "equal to the degree over QQ except for finitely many primes)"
        )
    if method == "count":
        if counts[0].count % fiber:
            raise ComputationError(
                f"{arch.describe()}: the count {counts[0].count} is not a multiple of the fiber {fiber}"
            )
        return counts[0].count // fiber, (
            f"GF(p) count: {counts[0].count} solutions of a general linear section pulled back to the weights "
            f"= degree x {fiber} (the generic fiber up to rescaling, Thm. 3.2), the same for two primes and two "
            f"sections ({', '.join(f'p = {c.prime}, seed {c.seed}' for c in counts)}); probabilistic: a bad prime "
            "or section changes the count with probability about degree / p"
        )
    value = formula.degree
    how = "formula (docs/math/degree.md), proven under its hypotheses: " + "; ".join(
        h.statement for h in formula.hypotheses
    )
    if counts:
        how += f"; confirmed on this size by GF(p) counts ({counts[0].count} = {value} x {fiber}, two primes)"
    elif method == "auto":
        how += f"; not counted on this size (degree x fiber = {formula.count} > {count_limit})"
    return value, how


def degree(
    arch: Architecture,
    *,
    method: str = "auto",
    timeout: float = 300.0,
    backend: str = "auto",
    cache: bool = True,
    count_limit: int = COUNT_LIMIT,
) -> DegreeResult:
    """Degree of the Zariski closure of the neuromanifold of one plain lightning layer.

    >>> degree(Architecture((3, 2), (3,), tokens=2), method="formula").degree
    1287
    """
    arch = check_architecture(arch)
    timeout = _check_arguments(arch, method, timeout, cache, count_limit)
    t0 = time.perf_counter()
    formula = degree_formula(arch)
    counts: tuple[CountRun, ...] = ()
    version = None
    if method == "count" or (method == "auto" and formula.count is not None and formula.count <= count_limit):
        counts, version = _counts(arch, formula, timeout, cache, backend)
    m2 = _m2_degree(arch, backend, timeout, cache) if method == "m2" else None
    value, how = _value_and_certificate(arch, method, formula, counts, m2, count_limit)
    fiber = formula.fiber
    notes = []
    for other, v in (
        ("count", counts[0].count // fiber if counts else None),
        ("m2", m2["degree"] if m2 else None),
        ("formula", formula.degree),
    ):
        if v is not None and v != value:
            notes.append(f"{other} gives {v}, not {value}")
    if notes:
        raise ComputationError(f"{arch.describe()}: the methods disagree: " + "; ".join(notes))
    return DegreeResult(
        architecture=arch,
        degree=int(value),
        dimension=formula.dimension,
        fiber_size=fiber,
        method="formula" if method == "auto" else method,
        certificate=how,
        formula=formula,
        counts=counts,
        m2=m2,
        seconds=time.perf_counter() - t0,
        msolve=version,
    )
