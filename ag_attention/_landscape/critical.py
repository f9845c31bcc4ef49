"""Every critical point of the squared loss of one layer on a given data set: :func:`critical_points`.

docs/math/landscape.md (landscape-critical-points).  Data: input sequences
``X_n`` and targets ``Y_n`` (exact rationals; floats by the rule of
:class:`~ag_attention.Network`); the loss ``L(A, V) = sum_n |f(X_n) - Y_n|^2``
in the weights, modulo the rescaling ``(c A, V / c)`` (a slice ``l(V) = 1``)
and, for ``a < d``, ``GL_a`` (the chart ``A = B [I | K]``).  Its critical
points are

* **pure**: outside the critical locus of the parametrization, solved
  exactly (:mod:`.system`, over QQ): msolve isolates the real ones in boxes
  with dyadic endpoints, and counts all complex ones modulo primes drawn for the
  data (:func:`~.critical_msolve.counting_draw`).  For each
  real one, ball arithmetic (python-flint's ``arb``) on its box gives the
  loss (an interval), the ranks of ``A`` and ``V`` as far as proven (an
  ``r x r`` minor whose ball excludes 0 proves rank >= r) and the Hessian of
  the loss on the slice, whose eigenvalues are enclosed (python-flint's
  certified ``acb_mat.eig`` on the ball matrix): a *minimum* when all are
  proven positive, a *saddle* when proven of both signs, otherwise
  undecided.  Every solution of the system satisfies ``s h_1 h_2 = 1``, so
  the differential of the parametrization has full rank there (Lemma A.3):
  its image is critical on the neuromanifold;
* **at a singular point, the critical locus** (``A`` free): the parametrization
  is critical exactly on ``A = 0``, ``V = 0`` and ``rank [A; V] <= 1``
  (Lemma A.3), whose images are singular points of the closure; critical
  points of the loss there are solved separately: ``V = 0`` and ``A = 0`` give
  linear families (their dimensions, exactly; loss ``|Y|^2``), and
  ``A = p q^T, V = r q^T`` a system in ``(p, q, r)`` (gauges ``q_1 = 1`` and
  ``l(r) = 1``) solved like the pure one.

For ``a < d`` only the pure points are computed (the critical locus of the
chart is not enumerated).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _clock
from .._architecture import Architecture
from .._checks import check_choice, check_int, check_seconds
from .._errors import AgAttentionError, ComputationError, InvalidArgumentError
from .._numeric import check_state_paths
from .._point import to_fraction
from .._resources import require_memory
from . import square_kernel
from .beside import Beside
from .critical_balls import _certified_point, _distinct_functions, _first_of_each, _match, _point
from .critical_msolve import (
    COUNT_JOBS,
    _count_job,
    _exact_outcomes,
    _isolation_job,
    _linear_families,
    _rank_one_family,
    counting_draw,
    parse_real_solutions,
)
from .critical_msolve import _count_mod as _count_mod  # re-exported: models.py imports it from here
from .critical_msolve import _real_boxes as _real_boxes  # re-exported: models.py imports it from here
from .critical_result import CriticalFamily, CriticalPoint, CriticalPoints
from .critical_result import Nearest as Nearest  # re-exported: the room's __init__ imports it from here
from .critical_result import Route as Route  # re-exported: ed, ed_result, models and the room's __init__ import it
from .critical_result import hessian_class as hessian_class  # re-exported: models.py imports it from here
from .estimate import choose_workers
from .metrics import gram
from .numerical import homotopy_solutions
from .primes import fresh_seed
from .square import square_memory
from .system import check_layer, critical_system, loss_polynomial

__all__ = ["CriticalPoint", "CriticalFamily", "CriticalPoints", "critical_points", "parse_real_solutions"]

CRITICAL_METHODS = ("auto", "msolve", "homotopy")


# ------------------------------------------------------------------ the data and the entry point
def _sequences(values: Any, what: str, rows: int, cols: int, denominator: int | None) -> list[np.ndarray]:
    """A list of ``rows x cols`` exact matrices from arrays of numbers (floats by their exact binary value, or
    rounded to ``1/denominator``), each bad entry or shape refused naming it."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise InvalidArgumentError(f"{what}: a list of {rows} x {cols} arrays, got {type(values).__name__}")
    out = []
    for idx, M in enumerate(values):
        arr = np.asarray(M, dtype=object)
        if arr.ndim == 1 and cols == 1 and arr.shape[0] == rows:
            arr = arr.reshape(rows, 1)
        if arr.shape != (rows, cols):
            raise InvalidArgumentError(f"{what}[{idx}]: shape {arr.shape}, expected {rows} x {cols} (tokens as rows)")
        entries = [
            [to_fraction(v, f"{what}[{idx}][{i}][{j}]", denominator) for j, v in enumerate(row)]
            for i, row in enumerate(arr)
        ]
        for i, row in enumerate(entries):
            for j, q in enumerate(row):
                if q and not (-DATA_EXPONENT < _log2(q) < DATA_EXPONENT):
                    shown = f"about 2^{_log2(q):.0f}"
                    raise InvalidArgumentError(
                        f"{what}[{idx}][{i}][{j}]: {shown} is outside the range of the data handled here (2^-"
                        f"{DATA_EXPONENT} < |entry| < 2^{DATA_EXPONENT}, so that the loss's coefficients, of degree "
                        "6 in the data, stay within float64); rescale the data: (cX, c^3 Y) has the same critical "
                        "points as (X, Y)"
                    )
        out.append(np.array(entries, dtype=object))
    return out


#: data entries must lie between 2^-DATA_EXPONENT and 2^DATA_EXPONENT in absolute value (or be 0)
DATA_EXPONENT = 150


def _log2(q: Fraction) -> float:
    """``log2 |q|`` of a nonzero rational, without converting it to a float (it may not fit one)."""

    def bits(n: int) -> float:
        b = n.bit_length()
        return math.log2(n) if b <= 1000 else (b - 60) + math.log2(n >> (b - 60))

    return bits(abs(q.numerator)) - bits(q.denominator)


# long: the public entry point, most of it its docstring and doctest; the routes are functions of their own
@_clock.interruptible()
def critical_points(
    arch: Architecture,
    inputs: Any,
    targets: Any,
    *,
    method: str = "auto",
    seed: int = 0,
    timeout: float = 300.0,
    msolve_timeout: float | None = None,
    denominator: int | None = None,
    backend: str = "auto",
    workers: int | None = None,
    scheduler: str | None = None,
    save: Any = None,
    resume: Any = None,
    prime_seed: int | None = None,
) -> CriticalPoints:
    """Every critical point of ``L(A, V) = sum_n |f(X_n) - Y_n|^2`` for one layer, classified (module docstring).

    ``inputs``: ``N`` sequences ``X_n`` (``t x d``, tokens as rows); ``targets``: ``N`` outputs ``Y_n``
    (``t x d'``); numbers as exact rationals, or floats by their exact binary value (rounded to
    ``1/denominator`` with ``denominator``), as :class:`~ag_attention.Network` takes weights.  Any scale: the data
    ``(cX, c^3 Y)`` have the same critical points in the weights as ``(X, Y)``.

    ``method``: ``"homotopy"`` (monodromy, a parameter homotopy to the data, every solution certified by the
    Krawczyk test: a proven lower bound, the real points proven real), ``"msolve"`` (the exact route: real root
    isolation over QQ, all real points; the complex count modulo two primes, probabilistic), or ``"auto"``
    (default): both, msolve's jobs beside the homotopy (its count, once known, lets the homotopy stop as soon as it
    has certified that many), checked against each other.  Every route tried is named in ``routes`` with its
    time and outcome.  ``seed`` chooses the slice, the random base of the monodromy and the removal of the critical
    locus.  msolve's count is taken modulo primes of ``[2^30, 2^31)`` drawn from SHA-256 of ``prime_seed`` and the
    exact data (the Gram form, the target vector, the architecture, ``seed``), so that no data can be built for
    them; ``prime_seed=None`` (default) takes it from the system's entropy (recorded in the result: passing it
    reproduces the primes).  A third prime decides where the two counts differ; the result states the primes and
    a bound on the error probability (``certificate``; docs/math/landscape.md, landscape-counting-primes).
    ``timeout`` bounds the whole call; ``msolve_timeout`` caps each msolve job (default: 60 s with
    ``"auto"``, the whole ``timeout`` with ``"msolve"``).  A run that ends at a limit returns what it has, said
    in its first line and ``final`` (False).  ``workers`` / ``scheduler``: where the homotopy's paths and
    certifications run (by default as for :func:`~ag_attention.ed_degree`); ``save`` / ``resume``: the monodromy's
    state file.

    >>> from ag_attention import Architecture
    >>> X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
    >>> Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]
    >>> r = critical_points(Architecture.single_layer(2, 1, None, tokens=2), X, Y)
    >>> r.complex_pure, r.complex_certified, len(r.points), r.minima, r.final
    (14, 14, 6, 3, True)
    """
    d, e, a, t = check_layer(arch, "critical_points")
    timeout, cap, seed, denominator = _check_arguments(
        arch, method, seed, timeout, msolve_timeout, denominator, workers, scheduler, save, resume
    )
    prime_seed = fresh_seed() if prime_seed is None else check_int(prime_seed, "prime_seed", minimum=0)
    X, Y = _data(inputs, targets, t, d, e, denominator)
    require_memory(square_memory(d, e, a), f"critical_points of {arch.describe()}", "use a smaller layer")
    # the tracker's compiled kernels ready before the clock starts (read from numba's cache: 0.6 s; compiled once
    # a machine, by make setup or the first run: that is no part of the computation its time limit bounds)
    square_kernel.warm()
    t0 = time.perf_counter()
    end = _clock.after(timeout)
    G, w, c = _gram(X, Y, d, e, arch.causal)
    routes: list[Route] = []
    notes: list[str] = []
    hom = None
    label = f"critical points of {arch.describe()}"
    system = critical_system(arch, G, list(w), prime=0, seed=seed) if method in ("auto", "msolve") else None
    draw = None if system is None else counting_draw(arch, G, w, seed, prime_seed, system.polynomials, notes, label)
    with Beside(end) as beside:
        limits = (timeout, cap, end)
        _submit_exact_jobs(
            beside, arch, (d, e, a), system, G, w, method, label, backend, seed, limits, draw, prime_seed, notes
        )
        if method in ("auto", "homotopy"):
            hom = _homotopy(
                arch, G, w, beside, system, method, seed, end, timeout, routes, notes, workers, scheduler, save, resume
            )
        boxes, count, version, isolated, primes = _exact_outcomes(
            beside, system, hom, t0, label, seed, cap, timeout, routes, notes, draw, backend
        )
        families = _families(beside, d, e, a, w, c, notes)
    _check(arch, hom, boxes, count, method, seed)
    points = _real_points(arch, (d, e, a), hom, boxes, system, G, w, c)
    real_complete = _closing_notes((d, e, a), hom, boxes, count, system, isolated, points, cap, timeout, routes, notes)
    conversion = "exact rationals" if denominator is None else f"rounded to multiples of 1/{denominator}"
    complete_count = count is not None or (hom is not None and hom.final)
    final = complete_count and real_complete and all(f.dimension >= 0 for f in families)
    status = "" if final else _unfinished(count, hom, real_complete, families)
    return CriticalPoints(
        arch,
        len(X),
        conversion,
        count,
        tuple(points),
        families,
        primes[0] if primes else 0,
        seed,
        time.perf_counter() - t0,
        tuple(notes),
        method,
        hom.certified if hom is not None else None,
        hom.base_count if hom is not None else None,
        real_complete,
        tuple(routes),
        version,
        hom.monodromy if hom is not None else None,
        hom.certification.to_dict() if hom is not None else None,
        c,
        (G, w),
        final,
        status,
        hom.base_final if hom is not None else None,
        tuple(primes),
        prime_seed,
        draw.certificate(primes) if draw is not None and primes else "",
        draw.error_bound if draw is not None and primes else None,
    )


def _data(
    inputs: Any, targets: Any, t: int, d: int, e: int, denominator: int | None
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The input sequences and the targets as exact matrices, as many of each (and at least one)."""
    X = _sequences(inputs, "inputs", t, d, denominator)
    Y = _sequences(targets, "targets", t, e, denominator)
    if len(X) != len(Y):
        raise InvalidArgumentError(f"inputs, targets: {len(X)} input sequences but {len(Y)} targets")
    if not X:
        raise InvalidArgumentError("inputs: no sequence (the loss is constant)")
    return X, Y


def _gram(X: list[np.ndarray], Y: list[np.ndarray], d: int, e: int, causal: bool) -> tuple[Any, Any, Any]:
    """``(G, w, c)`` of the loss ``x^T G x - 2 w^T x + c`` (:func:`~.metrics.gram`); an error when ``w = 0``."""
    G, w, c = gram(X, Y, d, e, causal)
    assert w is not None
    if all(v == 0 for v in w):
        raise InvalidArgumentError(
            "targets: every target is 0 (or the inputs see none of them): the only critical "
            "value is the loss at A = 0 or V = 0"
        )
    return G, w, c


def _check_arguments(
    arch: Architecture,
    method: str,
    seed: int,
    timeout: float,
    msolve_timeout: float | None,
    denominator: int | None,
    workers: int | None,
    scheduler: str | None,
    save: Any,
    resume: Any,
) -> tuple[float, float | None, int, int | None]:
    """The arguments of :func:`critical_points` checked: ``(timeout, msolve's cap per job, seed, denominator)``."""
    if arch.heads != 1 or arch.skip or arch.normalized or not arch.is_linear_attention:
        raise InvalidArgumentError(
            "critical_points: one plain lightning layer "
            "(one head, no skip connection, no softmax, no biases, no rotary positions)"
        )
    check_choice(method, "method", CRITICAL_METHODS)
    timeout = check_seconds(timeout)
    if msolve_timeout is not None:
        msolve_timeout = check_seconds(msolve_timeout)
    cap = msolve_timeout if msolve_timeout is not None else (None if method == "msolve" else 60.0)
    seed = check_int(seed, "seed", minimum=0)
    if denominator is not None:
        denominator = check_int(denominator, "denominator", minimum=1)
    if method == "msolve" and (
        save is not None or resume is not None or scheduler is not None or workers not in (None, 1)
    ):
        raise InvalidArgumentError(
            "workers, scheduler, save and resume belong to the homotopy: not with method='msolve'"
        )
    check_state_paths(save, resume)
    return timeout, cap, seed, denominator


def _submit_exact_jobs(
    beside: Beside,
    arch: Architecture,
    dims: tuple[int, int, int],
    system: Any,
    G: Any,
    w: Any,
    method: str,
    label: str,
    backend: str,
    seed: int,
    limits: tuple[float, float | None, float],
    draw: Any,
    prime_seed: int,
    notes: list[str],
) -> None:
    """msolve's jobs, started beside the homotopy: in this order, the counts (they may stop the monodromy; modulo
    the first two primes of ``draw``), the critical locus (a small system), then the real root isolation (often
    the longest); alone (method msolve), the real points first.  ``limits``: ``(timeout, cap per job, end)``."""
    d, e, a = dims
    timeout, cap, end = limits
    jobs: list[tuple[str, Any]] = []
    if system is not None:
        jobs = [
            (name, functools.partial(_count_job, system.variables, system.polynomials, prime, label, backend))
            for name, prime in zip(COUNT_JOBS, draw.primes)
        ]
    if a >= d:  # its msolve jobs each within the cap, all by the deadline (building its system takes time too)
        jobs.append(
            (
                "families",
                lambda left: _rank_one_family(
                    arch, G, np.asarray(w), d, e, seed, timeout if cap is None else cap, backend, end, prime_seed, notes
                ),
            )
        )
    if system is not None:
        isolation = (
            "isolation",
            functools.partial(_isolation_job, system.variables, system.polynomials, label, backend),
        )
        jobs = [isolation] + jobs if method == "msolve" else jobs + [isolation]
    for name, job in jobs:
        beside.submit(name, job, None if name == "families" else cap)


HOMOTOPY_ROUTE = "homotopy (monodromy, parameter homotopy, Krawczyk)"


def _homotopy(
    arch: Architecture,
    G: Any,
    w: Any,
    beside: Beside,
    system: Any,
    method: str,
    seed: int,
    end: float,
    timeout: float,
    routes: list[Route],
    notes: list[str],
    workers: int | None,
    scheduler: str | None,
    save: Any,
    resume: Any,
) -> Any:
    """The homotopy route (:func:`~.numerical.homotopy_solutions`), told msolve's count once known; its route and
    notes appended.  None when it failed beside msolve (with ``method="homotopy"`` the error is raised)."""
    t1 = time.perf_counter()

    def known() -> int | None:
        got = beside.value(COUNT_JOBS[0]) if system is not None else None
        return None if got is None else got[0]

    try:
        hom = homotopy_solutions(
            arch,
            G,
            list(w),
            seed=seed,
            deadline=end,
            known=known,
            workers=choose_workers(arch, workers, scheduler, timeout),
            scheduler=scheduler,
            save=save,
            resume=resume,
        )
    except AgAttentionError as exc:
        if method == "homotopy":
            raise
        routes.append(Route(HOMOTOPY_ROUTE, time.perf_counter() - t1, f"failed: {exc}"))
        return None
    stop = hom.monodromy["stop"]
    routes.append(
        Route(
            HOMOTOPY_ROUTE,
            time.perf_counter() - t1,
            f"{_verdict(hom)}: {hom.base_count} for a generic form of rank "
            f"{hom.monodromy.get('rank')} and target ({hom.monodromy.get('start')}; monodromy stopped: {stop}), "
            f"{hom.arrived} carried to the data, {hom.certified} certified"
            + (f" (with {hom.certification.conjugates} conjugates)" if hom.certification.conjugates else "")
            + f", {len(hom.real)} of them real"
            + (
                f", {hom.certification.unchecked} not certified for lack of time" if hom.certification.unchecked else ""
            ),
        )
    )
    if not hom.final:
        notes.append(
            f"the homotopy stopped at {stop!r} (trace deviation "
            f"{hom.monodromy.get('trace_deviation')}): more critical points may exist than were "
            f"found; rerun with a larger --timeout (this one: {timeout:g} s)"
        )
    return hom


def _verdict(hom: Any) -> str:
    """The homotopy route's outcome in a word or three."""
    if hom.final:
        return "ok"
    limited = hom.cut or hom.certification.unchecked or hom.monodromy["stop"] in ("time limit", "interrupted")
    return "stopped at a limit" if limited else "not final"


def _families(beside: Beside, d: int, e: int, a: int, w: Any, c: Any, notes: list[str]) -> tuple[CriticalFamily, ...]:
    """The critical points on the critical locus of the parametrization (``a >= d`` only; else none)."""
    if a < d:
        return ()
    f = beside.wait("families")
    if f.state == "failed" and f.error is not None:
        raise f.error
    rank_one = tuple(f.value) if f.ok else (CriticalFamily("A = p q^T, V = r q^T", -1, None, None, None),)
    if not f.ok:
        notes.append("the critical points on rank [A; V] = 1 were not computed within the time limit")
    return tuple(_linear_families(d, e, np.asarray(w), c)) + rank_one


def _real_points(
    arch: Architecture, dims: tuple[int, int, int], hom: Any, boxes: Any, system: Any, G: Any, w: Any, c: Any
) -> list[CriticalPoint]:
    """The real critical points, sorted by loss: msolve's boxes when it isolated them (each certified real point of
    the homotopy matched to one), else the homotopy's certified real ones."""
    d, e, a = dims
    points: list[CriticalPoint] = []
    if boxes is not None and system is not None:
        names, loss = loss_polynomial(arch, G, list(w), c)  # (seconds at (4,4): built only for msolve's boxes)
        points = [_point(box, system.variables, loss, names, None, system.slice_coefficients, d, e, a) for box in boxes]
    elif hom is not None:
        points = [_certified_point(hom.system, s, G, np.asarray(w), c) for s in hom.real]
    if boxes is not None and hom is not None:
        _match(arch, hom, points, G, np.asarray(w), c)
    points.sort(key=lambda p: p.loss[0])
    return points


def _closing_notes(
    dims: tuple[int, int, int],
    hom: Any,
    boxes: Any,
    count: int | None,
    system: Any,
    isolated: bool,
    points: list[CriticalPoint],
    cap: float | None,
    timeout: float,
    routes: list[Route],
    notes: list[str],
) -> bool:
    """The notes on what the routes found (appended to ``notes``), and whether the real points are all of them."""
    d, e, a = dims
    if boxes is None and count is None and hom is None:
        why = "; ".join(f"{r.name}: {r.outcome}" for r in routes)
        notes.append(f"no route finished within {timeout:g} s ({why})")
    real_complete = boxes is not None
    if boxes is None and hom is not None:
        decided = all(s.real is not None for s in hom.certification.solutions)
        everything = hom.final and (count is None or hom.certified >= count)
        real_complete = decided and everything and hom.certification.unchecked == 0
        if system is not None and not isolated:
            notes.append(
                "msolve's real root isolation did not finish: the real points are the certified ones"
                + (
                    " (all of them: every critical point certified, realness decided for each)"
                    if real_complete
                    else " (a lower bound)"
                )
                + (
                    ""
                    if real_complete
                    else f"; rerun with a larger --msolve-timeout (this one: "
                    f"{cap if cap is not None else timeout:g} s) or --timeout"
                )
            )
    if hom is not None and hom.final and count is None and system is not None:
        m = hom.monodromy
        notes.append(
            f"completeness rests on the homotopy alone (numerical, not a proof): the trace test of the generic form "
            f"of rank {m.get('rank')} (deviation {m.get('trace_deviation')}) and every one of its "
            f"{hom.base_count} solutions carried to these data and certified; msolve's count, the second check, "
            f"did not finish within {cap if cap is not None else timeout:g} s (rerun with a larger "
            "--msolve-timeout to check it twice)"
        )
    if a < d:
        notes.append(
            f"a = {a} < d = {d}: the critical points on the critical locus of the chart (rank A < a, "
            "rank [A; V] <= 1) are not enumerated"
        )
    if a == 1 and e == 1 and points:  # the generic fiber is 2 (Cor. A.2): weights in pairs with one function
        functions = _distinct_functions(points)
        notes.append(
            f"d' = a = 1: each critical point of the neuromanifold has 2 preimages in the weights (the "
            f"generic fiber, Cor. A.2): the {len(points)} real points in the weights are {functions} points "
            f"of the function space ({sum(1 for p in _first_of_each(points) if p.signature == 'minimum')} "
            "of them minima)"
        )
    if hom is not None and count is not None and hom.base_count != count:
        notes.append(
            f"monodromy found {hom.base_count} solutions for a generic form of the data's rank and a random target, "
            f"and msolve counts {count} at these data: "
            + (
                "the data are special (fewer critical points)"
                if count < hom.base_count
                else "the monodromy stopped early"
            )
        )
    if hom is not None and hom.failed_reasons:
        failed = sum(hom.failed_reasons.values())
        notes.append(
            f"{failed} of the {hom.base_count} paths from the generic form did not arrive at these data "
            f"({', '.join(f'{k}: {v}' for k, v in sorted(hom.failed_reasons.items()))}): solutions at infinity, "
            "singular or not isolated there, or lost by the tracker"
            + ("" if hom.final else ": the certified count is a lower bound")
        )
    return real_complete


def _unfinished(count: int | None, hom: Any, real_complete: bool, families: Sequence[CriticalFamily]) -> str:
    """Why a result is not final, in a few words."""
    why = []
    if count is None and (hom is None or not hom.final):
        why.append(
            "the complex critical points are not all known ("
            + ("the homotopy stopped at a limit, " if hom is not None else "")
            + "msolve's count did not finish)"
        )
    if not real_complete:
        why.append("the real ones found are a lower bound")
    if any(f.dimension < 0 for f in families):
        why.append("the critical locus was not computed")
    return "; ".join(why)


def _check(arch: Architecture, hom: Any, boxes: Any, count: int | None, method: str, seed: int) -> None:
    """The routes' numbers must not contradict each other (module docstring); a contradiction is refused."""
    where = f"critical_points of {arch.describe()}"
    if boxes is not None and count is not None and len(boxes) > count:
        raise ComputationError(
            f"{where}: msolve isolates {len(boxes)} real solutions but counts {count} complex "
            "ones (real <= complex fails): no result is reported",
            seed=seed,
        )
    if hom is None:
        return
    if count is not None and hom.certified > count:
        raise ComputationError(
            f"{where}: {hom.certified} distinct solutions are certified (proven) but msolve "
            f"counts {count}: msolve's count is wrong (an unlucky prime); no result is reported",
            seed=seed,
        )
    if boxes is not None and len(hom.real) > len(boxes):
        raise ComputationError(
            f"{where}: {len(hom.real)} real solutions are certified (proven) but msolve isolates "
            f"{len(boxes)}: a contradiction; no result is reported",
            seed=seed,
        )
    if hom.certified - hom.certification.conjugates > hom.arrived:
        raise ComputationError(
            f"{where}: {hom.certified} certified from {hom.arrived} candidates and "
            f"{hom.certification.conjugates} conjugates (a bug)"
        )
