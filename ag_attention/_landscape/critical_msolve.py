"""The exact route of :func:`~ag_attention._landscape.critical.critical_points`: msolve over QQ.

msolve isolates the real solutions of an integer system in boxes with dyadic endpoints (read by
:func:`parse_real_solutions`) and counts its complex solutions modulo two primes drawn for the data
(:func:`counting_draw`: keyed by SHA-256 of the data and a seed, a third prime where two counts differ); the
critical points on the
critical locus of the parametrization (``V = 0``, ``A = 0``: linear families, their dimensions exact; ``A = p q^T,
V = r q^T``: a small system) are solved here too.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _clock
from .._algebra import count_solutions, format_input, run_msolve
from .._architecture import Architecture
from .._errors import ComputationError, MSolveOutputError, MSolveTimeoutError
from .._exact import exact_rank, linalg
from .._models import Parametrization
from .beside import Beside, Outcome
from .critical_result import CriticalFamily, Route
from .primes import PrimeDraw, agreeing, draw_for, text_coefficients
from .system import _compose, polynomial_text

__all__ = ["parse_real_solutions", "counting_draw", "COUNT_JOBS"]

#: the jobs (of :class:`~.beside.Beside`) counting the pure critical points modulo the first two drawn primes
COUNT_JOBS = ("count 1", "count 2")

_NUMBER = re.compile(r"(-?\d+)\s*(?:/\s*(?:2\^(\d+)|(\d+)))?")


def parse_real_solutions(text: str, nvars: int) -> list[list[tuple[Fraction, Fraction]]] | None:
    """The isolating boxes of msolve's real solutions over QQ (``[0, [1, [[[lo, hi], ...], ...]]]``); None when
    the system is not zero-dimensional, ``[]`` without real solutions."""
    s = text.strip()
    if re.fullmatch(r"\[\s*-1\s*\]\s*:?", s):
        return []
    if re.match(r"\[\s*1\s*,", s):
        return None
    body = s[s.rfind("[1,") :] if "[1," in s else s
    num = r"-?\d+(?:\s*/\s*(?:2\^\d+|\d+))?"  # an integer, a dyadic a / 2^k, or an exact rational a / b
    intervals = re.findall(rf"\[\s*({num})\s*,\s*({num})\s*\]", body)

    def value(t: str) -> Fraction:
        m = _NUMBER.fullmatch(t.replace(" ", ""))
        if m is None:
            raise MSolveOutputError(f"cannot read the number {t!r} in msolve's real solutions", output=text[:2000])
        num, power, den = int(m.group(1)), m.group(2), m.group(3)
        return Fraction(num, 2 ** int(power)) if power else Fraction(num, int(den)) if den else Fraction(num)

    flat = [(value(a), value(b)) for a, b in intervals]
    if len(flat) % nvars:
        raise MSolveOutputError(
            f"msolve's real solutions: {len(flat)} intervals for {nvars} unknowns", output=text[:2000]
        )
    return [flat[i : i + nvars] for i in range(0, len(flat), nvars)]


def _real_boxes(
    variables: Sequence[str], polys: Sequence[str], timeout: float, label: str, backend: Any
) -> list[list[tuple[Fraction, Fraction]]] | None:
    """msolve's real root isolation over QQ of an integer system: boxes with dyadic endpoints, each holding exactly
    one real solution (None: not zero-dimensional over QQ)."""
    out = run_msolve(
        format_input(list(variables), 0, list(polys)),
        timeout=timeout,
        label=f"{label} (real solutions)",
        backend=backend,
    )
    return parse_real_solutions(out.output, len(variables))


def counting_draw(
    arch: Any, G: Any, w: Any, seed: int, prime_seed: int, polys: Sequence[str], notes: list[str], what: str
) -> PrimeDraw:
    """The primes counting ``polys`` (a system built from the data's exact Gram form ``G`` and vector ``w``, with
    random choices from ``seed``): from the SHA-256 stream keyed by ``what``, ``prime_seed`` and the canonical data
    (the architecture, ``G``, ``w``, ``seed``), so that no data can be built for their primes
    (:func:`~.primes.draw_keyed`); a prime dividing an entry of ``G`` or ``w`` or a coefficient of ``polys`` is
    skipped and noted."""
    rows = [[Fraction(v) for v in row] for row in np.asarray(G, dtype=object)]
    vector = [Fraction(v) for v in np.asarray(w, dtype=object).ravel()]
    key = "\n".join(
        [
            "architecture " + json.dumps(arch.to_dict(), sort_keys=True, default=str),
            "G " + ";".join(",".join(map(str, row)) for row in rows),
            "w " + ",".join(map(str, vector)),
            f"random choices {seed}",
        ]
    )
    values = [v for row in rows for v in row] + vector + list(text_coefficients(polys))
    return draw_for(key, values, prime_seed, notes, what)


def _count(
    variables: Sequence[str],
    polys: Sequence[str],
    timeout: float,
    label: str,
    backend: Any,
    draw: PrimeDraw,
    notes: list[str],
    deadline: float | None = None,
) -> tuple[int | None, str]:
    """The number of complex solutions of an integer system, counted by msolve modulo the first two primes of
    ``draw`` (each text reduced modulo its prime), the third where they differ: two must agree
    (:func:`~.primes.agreeing`).  ``(count, msolve's version)``.  Each job gets at most ``timeout`` seconds and
    ends by ``deadline`` (``_clock.now()``)."""

    def run(prime: int, i: int) -> tuple[int | None, str, str]:
        n, version = _count_mod(variables, polys, prime, _left(timeout, deadline, label), label, backend)
        return n, str(n), version

    count, versions, _ = agreeing(run, draw, notes, label)
    return count, versions[0]


def _left(timeout: float, deadline: float | None, label: str) -> float:
    """``timeout``, or less when ``deadline`` comes first; a timeout error when nothing is left."""
    if deadline is None:
        return timeout
    left = min(timeout, deadline - _clock.now())
    if left < 1.0:
        raise MSolveTimeoutError(label, max(0.0, left))
    return left


def _solve(
    variables: Sequence[str],
    polys: Sequence[str],
    timeout: float,
    label: str,
    backend: Any,
    draw: PrimeDraw,
    notes: list[str],
    deadline: float | None = None,
) -> tuple[list[list[tuple[Fraction, Fraction]]] | None, int | None]:
    """Real boxes over QQ and the number of complex solutions (the primes of ``draw``) of an integer system."""
    boxes = _real_boxes(variables, polys, _left(timeout, deadline, label), label, backend)
    count, _ = _count(variables, polys, timeout, label, backend, draw, notes, deadline)
    if boxes is not None and count is not None and len(boxes) > count:
        raise ComputationError(
            f"{label}: msolve isolates {len(boxes)} real solutions but counts {count} complex "
            "ones: a contradiction (no result is reported)"
        )
    return boxes, count


def _linear_families(d: int, e: int, w: np.ndarray, c: Any) -> list[CriticalFamily]:
    """The critical points with ``V = 0`` or ``A = 0`` (``A`` free): linear spaces of critical weights, their
    dimensions exact (loss ``|Y|^2``).  Quick: exact ranks of small matrices."""
    P = Parametrization(Architecture.single_layer(d, e, None, tokens=2), coords="reduced", params="AV")
    names = list(P.variables)  # a_(k,l), v_(m,l)
    n_a = d * d
    ring = linalg.rational_polynomial_ring(names, "degrevlex")
    x = [ring.from_dict({k: linalg.rational(Fraction(int(v))) for k, v in f.to_dict().items()}) for f in P.polynomials]
    loss_c = float(c)
    out = []
    # V = 0: the gradient in V is -2 sum_i w_i dx_i/dV (linear in A); the gradient in A vanishes
    for where, fixed, free in (
        ("V = 0", range(n_a, len(names)), range(n_a)),
        ("A = 0", range(n_a), range(n_a, len(names))),
    ):
        rows = []
        for v in fixed:  # d/d(fixed variable) of -2 w^T x at fixed = 0: linear in the free variables
            grad = sum(
                (x[i].derivative(names[v]) * ring.constant(linalg.rational(Fraction(w[i]))) for i in range(len(x))),
                ring.constant(0),
            )
            coeff = grad.to_dict()
            row = [Fraction(0)] * len(free)
            for exps, cc in coeff.items():
                if sum(exps[k] for k in fixed) == 0:
                    var = next((k for k in free if exps[k] == 1), None)
                    if var is not None and sum(exps) == 1:
                        row[list(free).index(var)] = Fraction(int(cc.p), int(cc.q))
            rows.append(row)
        rank = exact_rank(np.array(rows, dtype=object)) if rows else 0
        out.append(CriticalFamily(where, len(free) - rank, None, None, (loss_c, loss_c)))
    return out


def _rank_one_family(
    arch: Any,
    G: Any,
    w: np.ndarray,
    d: int,
    e: int,
    seed: int,
    timeout: float,
    backend: Any,
    deadline: float | None = None,
    prime_seed: int = 0,
    notes: list[str] | None = None,
) -> list[CriticalFamily]:
    """The critical points with ``A = p q^T, V = r q^T`` (``A``, ``V`` nonzero), solved by msolve (counted modulo
    primes drawn for the data and ``prime_seed``: :func:`counting_draw`; its notes appended to ``notes``)."""
    P = Parametrization(Architecture.single_layer(d, e, None, tokens=2), coords="reduced", params="AV")
    names = list(P.variables)
    out: list[CriticalFamily] = []
    # A = p q^T, V = r q^T (A, V nonzero): gauges q_1 = 1, l(r) = 1
    pn = [f"p{k}" for k in range(1, d + 1)] + [f"q{k}" for k in range(2, d + 1)] + [f"r{m}" for m in range(1, e + 1)]
    ring2 = linalg.rational_polynomial_ring(pn, "degrevlex")
    gg = dict(zip(pn, ring2.gens()))
    one, zero = ring2.constant(1), ring2.constant(0)
    q = [one] + [gg[f"q{k}"] for k in range(2, d + 1)]
    subs = [gg[f"p{k + 1}"] * q[l] for k in range(d) for l in range(d)] + [
        gg[f"r{m + 1}"] * q[l] for m in range(e) for l in range(d)
    ]

    def scalar(v: Any) -> Any:
        return ring2.constant(linalg.rational(Fraction(v)))

    # the full gradient J^T (G x - w) at the point, J the derivatives in (A, V)
    n = len(P.polynomials)
    xs = [_compose(f, subs, zero, scalar) for f in P.polynomials]
    resid = [sum((scalar(G[i, j]) * xs[j] for j in range(n) if G[i, j] != 0), zero) - scalar(w[i]) for i in range(n)]
    eqs = []
    for name in names:
        dxs = [
            _compose(f.derivative(name), subs, zero, scalar) if not f.derivative(name).is_zero() else zero
            for f in P.polynomials
        ]
        eqs.append(sum((dxs[i] * resid[i] for i in range(n)), zero))
    rng = random.Random(seed + 31)
    eqs.append(sum((scalar(rng.randrange(1, 1 << 30)) * gg[f"r{m}"] for m in range(1, e + 1)), zero) - one)
    texts = [polynomial_text(f, pn) for f in eqs if not f.is_zero()]
    label = f"critical points of {arch.describe()} on rank [A; V] = 1"
    notes = [] if notes is None else notes
    draw = counting_draw(arch, G, w, seed, prime_seed, texts, notes, label)
    try:
        boxes, count = _solve(pn, texts, timeout, label, backend, draw, notes, deadline)
    except MSolveTimeoutError:
        out.append(CriticalFamily("A = p q^T, V = r q^T", -1, None, None, None))
        return out
    if boxes is None or count is None:
        out.append(CriticalFamily("A = p q^T, V = r q^T", 1, None, None, None))
    else:
        out.append(CriticalFamily("A = p q^T, V = r q^T", 0, count, len(boxes), None))
    return out


# ------------------------------------------------------------------ the data and the entry point
def _isolation_job(
    variables: Sequence[str], polys: Sequence[str], label: str, backend: Any, timeout: float
) -> list[list[tuple[Fraction, Fraction]]] | None:
    """:func:`_real_boxes` with the time limit last (a job of :class:`~.beside.Beside`)."""
    return _real_boxes(variables, polys, timeout, label, backend)


def _count_job(
    variables: Sequence[str], polys: Sequence[str], prime: int, label: str, backend: Any, timeout: float
) -> tuple[int | None, str]:
    """:func:`_count_mod` with the time limit last (a job of :class:`~.beside.Beside`)."""
    return _count_mod(variables, polys, prime, timeout, label, backend)


def _count_mod(
    variables: Sequence[str], polys: Sequence[str], prime: int, timeout: float, label: str, backend: Any
) -> tuple[int | None, str]:
    """msolve's count of the complex solutions of an integer system modulo ``prime`` (the text reduced modulo it):
    ``(count, msolve's version)``."""
    sol = count_solutions(
        variables, polys, prime, timeout=timeout, label=f"{label} (count mod {prime})", backend=backend
    )
    return sol.count, sol.msolve


def _skip_needless_jobs(beside: Beside, system: Any, hom: Any, t0: float) -> None:
    """After Ctrl-C nothing more is waited for; after a final homotopy the isolation is not waited for."""
    if hom is not None and hom.monodromy.get("stop") == "interrupted":  # Ctrl-C: nothing more is waited for
        for name in ("families", "isolation", *COUNT_JOBS):
            if name in beside.names():
                beside.abandon(name, "interrupted (Ctrl-C)")
    if system is not None and hom is not None and hom.final:
        # every critical point certified, as many as msolve counts, each proven real or not: the isolation
        # would only repeat the real ones (a cross-check); it is not waited for
        first = beside.wait(COUNT_JOBS[0])
        if first.state == "timed out":
            # the same system modulo another prime, and its isolation over QQ, take as long: a final homotopy
            # (every solution of the generic form carried to the data and certified) is not kept waiting for them
            for name in (COUNT_JOBS[1], "isolation"):
                beside.abandon(
                    name,
                    "not waited for: msolve's count modulo the first prime did not finish within its limit, and "
                    f"the homotopy's {hom.certified} certified critical points are final",
                )
            return
        if (
            first.ok
            and first.value[0] is not None
            and hom.certified >= first.value[0]
            and all(p.real is not None for p in hom.certification.solutions)
            and beside.wait("isolation", max(2.0, 0.25 * (time.perf_counter() - t0))).state == "running"
        ):
            beside.abandon(
                "isolation",
                f"not needed: the {hom.certified} certified critical points are all "
                "of msolve's count, each proven real or not real",
            )


def _exact_outcomes(
    beside: Beside,
    system: Any,
    hom: Any,
    t0: float,
    label: str,
    seed: int,
    cap: float | None,
    timeout: float,
    routes: list[Route],
    notes: list[str],
    draw: PrimeDraw | None = None,
    backend: Any = "auto",
) -> tuple[Any, int | None, str | None, bool, list[int]]:
    """What msolve's jobs gave: ``(real boxes, complex count, msolve's version, whether the isolation finished,
    the primes the count rests on)``; their routes and notes appended, a failed job's error raised.  Where the
    counts modulo the first two primes of ``draw`` differ, the third decides (:func:`~.primes.agreeing`)."""
    _skip_needless_jobs(beside, system, hom, t0)
    if system is None or draw is None:
        return None, None, None, False, []
    outcomes = {name: beside.wait(name) for name in (*COUNT_JOBS, "isolation")}
    o = outcomes["isolation"]
    isolated = o.ok
    boxes = o.value if o.ok else None
    _route(
        routes,
        "msolve real root isolation over QQ",
        o,
        cap,
        timeout,
        lambda b: "positive-dimensional over QQ" if b is None else f"ok: {len(b)} real",
    )
    if isolated and boxes is None:
        notes.append(
            "msolve over QQ finds the critical equations (critical locus removed, on a random "
            "slice) positive-dimensional: the loss has a family of critical points off the "
            "critical locus of the parametrization on these data, or the random slice and removal "
            f"(seed {seed}) are special; rerun with another seed to tell"
        )
    c1, c2 = outcomes[COUNT_JOBS[0]], outcomes[COUNT_JOBS[1]]
    both = _Both(c1, c2)
    count = version = None
    used: list[int] = []
    if both.outcome.ok:
        done = (c1.value, c2.value)

        def run(prime: int, i: int) -> tuple[int | None, str, tuple[int | None, str]]:
            if i < 2:
                return done[i][0], str(done[i][0]), done[i]
            limit = _left(timeout if cap is None else cap, beside.deadline, label)  # the third: here, now
            got = _count_mod(system.variables, system.polynomials, prime, limit, label, backend)
            return got[0], str(got[0]), got

        count, records, used = agreeing(run, draw, notes, label)
        version = records[0][1]
    _route(
        routes,
        "msolve count modulo two primes",
        both.outcome,
        cap,
        timeout,
        lambda v: "not zero-dimensional modulo p" if count is None else f"ok: {count} complex",
    )
    for out in outcomes.values():
        if out.state == "failed" and out.error is not None:
            raise out.error
    return boxes, count, version, isolated, used


@dataclass(frozen=True)
class _Both:
    """Two msolve counts (one per prime) as one outcome: ok when both are, else the first problem."""

    first: Outcome
    second: Outcome

    @property
    def outcome(self) -> Outcome:
        if self.first.ok and self.second.ok:
            return Outcome("ok", (self.first.value[0], self.first.value[1]), self.first.seconds + self.second.seconds)
        bad = self.first if not self.first.ok else self.second
        why = bad.value if bad.state == "abandoned" else None  # (why it was dropped: "stopped, None" before)
        return Outcome(bad.state, why, self.first.seconds + self.second.seconds, bad.error)


def _route(routes: list[Route], name: str, o: Outcome, cap: float | None, timeout: float, describe: Any) -> None:
    """A route of the exact side from its outcome (ok, timed out, not started)."""
    if o.ok:
        routes.append(Route(name, o.seconds, describe(o.value)))
    elif o.state in ("timed out", "not started"):
        limit = f"{cap:g} s per job (--msolve-timeout)" if cap is not None and cap < timeout else f"{timeout:g} s"
        what = "timed out" if o.state == "timed out" else "not started (no time left)"
        routes.append(Route(name, o.seconds, f"{what} within {limit}"))
    elif o.state == "abandoned":
        routes.append(Route(name, o.seconds, f"stopped, {o.value or 'not needed any more'}"))
    elif o.state == "failed":
        routes.append(Route(name, o.seconds, f"failed: {o.error}"))
