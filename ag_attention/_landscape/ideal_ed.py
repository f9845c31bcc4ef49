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

The generators are parsed by :func:`~ag_attention._landscape.polytext.parse_polynomial` (numbers, the
variables, ``+ - * / ^`` and parentheses, nothing else; sized before they are expanded) and the Macaulay2
input is written from the parsed polynomials in internal variable names, so
no text of the caller reaches Macaulay2.  The count is taken over the
algebraic closure of GF(p) with ``u`` (and a generic ``Q``) random mod ``p``,
for two primes of ``[2^30, 2^31)`` (:func:`draw_primes`: keyed by SHA-256 of
the seed and the input, so that no input can be built for its own primes;
the seed is fresh entropy unless given) and two seeds; a prime dividing a
coefficient of a generator or of the metric (so that the reduction mod ``p``
would be another variety) is skipped, with a note, and another drawn.  Each
count equals the count over ``C`` unless the random choices or the prime are
unlucky (a *probabilistic* result, stated with its primes, seed and a bound
on the error probability under stated hypotheses: docs/math/landscape.md);
where the two differ a third prime decides, two of three agreeing, or the
call says so.  The published values this reproduces
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

from .. import _clock
from .._algebra import count_solutions
from .._checks import check_choice, check_int, check_seconds
from .._errors import ComputationError, ComputationTimeoutError, InvalidArgumentError
from .._m2 import Where, run_json
from .._results import ResultMixin
from .metrics import METRICS, Space
from .polytext import Poly, parse_polynomial
from .primes import PRIME_RANGE, PrimeDraw, agreeing, draw_primes, fresh_seed

__all__ = ["IdealEDDegree", "ideal_ed_degree", "parse_polynomial", "PRIME_RANGE", "PrimeDraw", "draw_primes"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def _render(poly: Poly, names: Sequence[str]) -> str:
    """``poly`` as text in ``names`` (highest degree first; exact rational coefficients)."""
    if not poly:
        return "0"
    parts = []
    for m in sorted(poly, key=lambda m: (-sum(m), tuple(-e for e in m))):
        c = poly[m]
        mono = "*".join(v if e == 1 else f"{v}^{e}" for v, e in zip(names, m) if e)
        mag = abs(c)
        text = str(mag) if not mono else (mono if mag == 1 else f"{mag}*{mono}")
        parts.append(("- " if c < 0 else "+ ") + text)
    first = parts[0]
    return " ".join([("-" + first[2:]) if first.startswith("-") else first[2:], *parts[1:]])


def _mod_p(poly: Poly, p: int, n: int) -> str:
    """``poly`` reduced mod ``p`` as Macaulay2 text in x0, x1, ... (every coefficient is a unit mod p)."""
    if not poly:
        return "0_R"
    terms = []
    for m, c in poly.items():
        r = c.numerator % p * pow(c.denominator, -1, p) % p
        mono = "*".join(f"x{i}^{e}" for i, e in enumerate(m) if e)
        terms.append(f"{r}*{mono}" if mono else str(r))
    return " + ".join(terms)


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
    seed: int | None = None  # the call's seed (drawn from the system's entropy when not given)
    primes: str = ""  # which primes the value rests on, their seed and the error bound (PrimeDraw.certificate)
    error_bound: float | None = None  # under the hypotheses ``primes`` states

    @property
    def certificate(self) -> str:
        runs = "; ".join(f"GF({p}), seed {s}: {c}" for p, s, c in self.counts)
        return (
            f"probabilistic: {self.primes or 'primes ' + ', '.join(str(p) for p, _, _ in self.counts)}; the "
            f"critical points of the squared {self.metric} distance to random data, counted over the algebraic "
            f"closure of GF(p) ({runs}; {self.method})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "variables": list(self.variables),
            "generators": list(self.generators),
            "metric": self.metric,
            "ed_degree": self.value,
            "counts": [{"prime": p, "seed": s, "count": c} for p, s, c in self.counts],
            "seed": self.seed,
            "error_bound": self.error_bound,
            "dimension": self.dimension,
            "codimension": self.codimension,
            "degree": self.degree,
            "method": self.method,
            "certificate": self.certificate,
            "seconds": round(self.seconds, 3),
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        return "\n".join(
            [
                f"ED degree of V({', '.join(self.generators)}) in {len(self.variables)} variables",
                f"  ED degree        {self.value} ({self.metric} metric)",
                f"  variety          dimension {self.dimension}, codimension {self.codimension}, degree {self.degree}",
                f"  certificate      {self.certificate}",
                *[f"  note             {n}" for n in self.notes],
                f"  seed {self.seed}, {self.seconds:.2f} s",
            ]
        )


def _checked(
    variables: Sequence[str], generators: Sequence[Any], deadline: float | None = None, timeout: float = 0.0
) -> tuple[tuple[str, ...], list[Poly], tuple[str, ...], list[str]]:
    """``(names, parsed generators, their text, notes)``; "0" generators are dropped (said).  Parsing ends by
    ``deadline`` (a reading of ``_clock.now()``; ``timeout`` the limit it says)."""
    if isinstance(variables, str) or not isinstance(variables, Sequence) or not variables:
        raise InvalidArgumentError(f"variables={variables!r}: a non-empty list of names is expected")
    names = tuple(v if isinstance(v, str) else repr(v) for v in variables)
    for v in names:
        if not _NAME.match(v):
            raise InvalidArgumentError(f"variables: {v!r} is not a name (a letter, then letters, digits or _)")
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"variables: {sorted(v for v in names if names.count(v) > 1)[0]!r} is repeated")
    if isinstance(generators, str) or not isinstance(generators, Sequence) or not generators:
        raise InvalidArgumentError(f"generators={generators!r}: a non-empty list of polynomials is expected")
    polys, notes = [], []
    for i, g in enumerate(generators):
        if not isinstance(g, (str, int)) or isinstance(g, bool):
            raise InvalidArgumentError(f"generators[{i}] = {g!r}: a polynomial as text is expected")
        try:
            poly = parse_polynomial(str(g), names, deadline=deadline, timeout=timeout)
        except InvalidArgumentError as exc:  # a limit: said as it is
            raise InvalidArgumentError(f"generators[{i}]: {exc}") from None
        except ValueError as exc:
            raise InvalidArgumentError(
                f"generators[{i}] = {str(g)!r} is not a polynomial in the variables "
                f"(numbers, variables, + - * / ^, parentheses): {exc}"
            ) from None
        if not poly:
            notes.append(f"generators[{i}] = {str(g)!r} is zero: dropped")
            continue
        if set(poly) == {(0,) * len(names)}:
            raise InvalidArgumentError(
                f"generators[{i}] = {str(g)!r} is a nonzero constant: the ideal is the unit ideal and V(I) is empty"
            )
        polys.append(poly)
    return names, polys, tuple(_render(q, names) for q in polys), notes


def _rational_metric(metric: Any, n: int) -> Any:
    """``metric`` checked: a kind (str) or a symmetric n x n matrix of Fractions."""
    if isinstance(metric, str):
        names = [name for name, entry in METRICS.items() if not entry.data]  # (a data form is one layer's)
        if metric in names:
            return metric
        raise InvalidArgumentError(f"metric={metric!r}: {', '.join(map(repr, names))} or a symmetric n x n matrix")
    try:
        rows = [[Fraction(x) for x in row] for row in metric]
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise InvalidArgumentError(f"metric: not a matrix of rationals ({type(exc).__name__}: {exc})") from None
    if len(rows) != n or any(len(r) != n for r in rows):
        raise InvalidArgumentError(f"metric: a {n} x {n} matrix is expected (one row per variable)")
    for i in range(n):
        for j in range(n):
            if rows[i][j] != rows[j][i]:
                raise InvalidArgumentError(
                    f"metric[{i}][{j}] = {rows[i][j]} != metric[{j}][{i}] = {rows[j][i]}: the metric must be symmetric"
                )
    return rows


def _metric(metric: Any, n: int, p: int, rng: random.Random) -> tuple[str, list[list[int]]]:
    """``(kind, Q mod p)`` for a metric checked by :func:`_rational_metric`: a :data:`METRICS` entry built
    modulo ``p`` (drawing from ``rng``), or ``"given"``."""
    if isinstance(metric, str):
        Q, _ = METRICS[metric].build(Space(n, prime=p, coordinates="the variables"), rng)
        return metric, [[int(q) % p for q in row] for row in Q]
    return "given", [[q.numerator % p * pow(q.denominator, -1, p) % p for q in row] for row in metric]


def _one_count(
    names: tuple[str, ...],
    polys: Sequence[Poly],
    metric: Any,
    p: int,
    seed: int,
    method: str,
    timeout: float,
    backend: Any,
    cache: bool,
    shown: str,
    ideal: str | None = None,
) -> tuple[str, int, dict[str, int]]:
    """``(metric kind, count, the variety's dimension/codimension/degree)`` modulo ``p``.  ``ideal``: Macaulay2
    code that defines ``R = kk[x0, ...]`` and ``I`` itself (e.g. by elimination), instead of ``polys``."""

    rng = random.Random(seed * 1_000_003 + p)
    kind, Q = _metric(metric, len(names), p, rng)
    u = [rng.randrange(p) for _ in names]
    count_in_m2 = method == "m2"
    t0 = time.perf_counter()
    short = shown if len(shown) <= 60 else shown[:57] + "..."
    job = run_json(
        _lagrange_body(names, polys, Q, u, p, count_in_m2, ideal),
        schema=_LAGRANGE_SCHEMA,
        backend=backend,
        timeout=timeout,
        cache=cache,
        label=f"Lagrange conditions of V({short}) ({kind} metric, GF({p}))",
    )
    variety = {k: int(job.payload[k]) for k in ("dimension", "codimension", "degree")}
    if variety["dimension"] < 0:
        raise InvalidArgumentError("generators: the ideal is the unit ideal: V(I) is empty")
    if variety["codimension"] == 0:
        return kind, 1, variety
    if count_in_m2:
        c = int(job.payload["m2_count"])
    else:
        left = max(1.0, timeout - (time.perf_counter() - t0))
        sol = count_solutions(
            job.payload["unknowns"],
            job.payload["equations"],
            p,
            timeout=left,
            label=f"ED count mod {p}",
            backend="auto",
        )
        c = -1 if sol.count is None else int(sol.count)
    if c < 0:
        raise ComputationError(
            "the Lagrange conditions are not zero-dimensional: the data or the metric are not "
            "generic for this variety (another seed), or V(I) has a component inside the "
            "isotropic quadric of the metric",
            prime=p,
            seed=seed,
        )
    return kind, c, variety


#: what the Macaulay2 job of :func:`_lagrange_body` answers
_LAGRANGE_SCHEMA = {
    "unknowns": [str],
    "equations": [str],
    "m2_count": Where(int, lambda v: v >= -2, "a count"),
    "dimension": Where(int, lambda v: v >= -1, "a dimension"),
    "codimension": Where(int, lambda v: v >= 0, "a codimension"),
    "degree": Where(int, lambda v: v >= 0, "a degree"),
}


def _lagrange_body(
    names: Sequence[str],
    polys: Sequence[Poly],
    Q: Sequence[Sequence[int]],
    u: Sequence[int],
    p: int,
    count_in_m2: bool,
    ideal: str | None,
) -> str:
    """The Macaulay2 input: the ideal modulo ``p`` (or ``ideal``'s code), ``edSystem(I, Q, u)``, the variety."""
    q_text = "matrix(kk, {" + ", ".join("{" + ", ".join(map(str, row)) + "}" for row in Q) + "})"
    u_text = "matrix(kk, {" + ", ".join("{" + str(x) + "}" for x in u) + "})"
    n = len(names)
    gens = ", ".join(_mod_p(q, p, n) for q in polys) if polys else "0_R"
    prelude = (
        ideal
        if ideal is not None
        else f"kk = ZZ/{p};\nR = kk[{', '.join(f'x{i}' for i in range(n))}];\nI = ideal({gens});\n"
    )
    return (
        prelude + f"Q = {q_text};\nu = {u_text};\n"
        "(xs, es, m2count) = if codim I == 0 then ({}, {}, 1) else (E = edSystem(I, Q, u); "
        "(apply(gens ring E, toString), apply(flatten entries gens E, toString), "
        + ("if dim E == 0 then degree E else -1" if count_in_m2 else "-2")
        + "));\n"
        'result = hashTable {"unknowns" => xs, "equations" => es, "m2_count" => m2count, '
        '"dimension" => dim I, "codimension" => codim I, "degree" => degree I};\n'
    )


@_clock.interruptible()
def ideal_ed_degree(
    variables: Sequence[str],
    generators: Sequence[Any],
    *,
    metric: Any = "euclidean",
    method: str = "msolve",
    seed: int | None = None,
    timeout: float = 300.0,
    backend: Any = "auto",
    cache: bool = True,
) -> IdealEDDegree:
    """The ED degree of the affine variety ``V(generators)`` in ``C^len(variables)``: the number of critical
    points of ``x -> (x - u)^T Q (x - u)`` on its smooth points for generic data ``u`` (DHOST 2016).

    ``variables``: names (a letter, then letters, digits or ``_``).
    ``generators``: polynomials as text in those names, with numbers
    (integers, decimals, fractions ``a/b``), ``+ - * / ^`` (or ``**``) and
    parentheses only; a sign only at the start of an expression or after
    ``(``.  Anything else, a zero divisor or a nonzero constant generator
    raises :class:`~ag_attention.InvalidArgumentError`; a zero generator is dropped (noted).
    The count is probabilistic: modulo two primes of ``[2^30, 2^31)``
    (``[2^30, 2^31)``), drawn from ``seed`` and the input's SHA-256 (a prime
    dividing a coefficient is skipped, noted), with data random mod each
    prime; where the two counts differ a third prime decides (two of three
    must agree).  ``seed``: ``None`` (default) draws one from the system's
    entropy; the result records it, and passing it again reproduces the run.
    The certificate states the primes and a bound on the error probability
    with its hypotheses (docs/math/landscape.md, "The counting primes").
    ``metric``: ``"euclidean"`` (the identity), ``"generic"`` (a random symmetric
    form), or a symmetric matrix of rationals (one row per variable, e.g. the
    Bombieri–Weyl weights as a diagonal).  ``method``: ``"msolve"`` counts the
    Lagrange system with msolve, ``"m2"`` takes its degree in Macaulay2.
    ``timeout``: seconds per prime (Macaulay2 and msolve together; parsing the
    generators counts against the first prime's).  The generators are sized
    before they are expanded: a degree, a number of terms or coefficients
    beyond the limits of ``ag_attention._landscape.polytext`` (e.g. more
    than 100,000 terms, parentheses nested more than 100 deep) raise
    :class:`~ag_attention.InvalidArgumentError` naming the limit and the piece.

    >>> r = ideal_ed_degree(["x", "y"], ["x^2 + 4*y^2 - 4"])      # an ellipse: 4 critical points
    >>> r.value, r.degree, [c for _, _, c in r.counts]
    (4, 2, [4, 4])
    """
    timeout = check_seconds(timeout)
    t0 = time.perf_counter()
    started = _clock.now()  # (parsing counts against the first prime's limit)
    names, polys, shown, notes = _checked(variables, generators, started + timeout, timeout)
    check_choice(method, "method", ("msolve", "m2"))
    seed = fresh_seed() if seed is None else check_int(seed, "seed")
    metric = _rational_metric(metric, len(names))
    parsing = _clock.now() - started
    if parsing >= timeout:
        raise ComputationTimeoutError("parsing the generators", timeout)
    draw = draw_primes(polys, metric, seed, notes, "generators")
    text = ", ".join(shown) if shown else "0"
    kinds: dict[int, str] = {}
    varieties: dict[int, dict[str, int]] = {}

    def count(p: int, i: int) -> tuple[int, str, tuple[int, int, int]]:
        limit = timeout - parsing if i == 0 else timeout
        kinds[p], c, varieties[p] = _one_count(names, polys, metric, p, seed + i, method, limit, backend, cache, text)
        return c, str(c), (p, seed + i, c)

    value, counts, used = agreeing(count, draw, notes, "the ED degree")
    variety = varieties[used[0]]
    return IdealEDDegree(
        names,
        shown or ("0",),
        kinds[used[0]],
        value,
        tuple(counts),
        variety["dimension"],
        variety["codimension"],
        variety["degree"],
        f"Macaulay2 edSystem, counted by {method}",
        time.perf_counter() - t0,
        tuple(notes),
        seed,
        draw.certificate(used),
        draw.error_bound,
    )
