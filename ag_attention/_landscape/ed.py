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

from .. import _clock
from .._algebra import count_solutions, degree_formula
from .._architecture import Architecture, check_architecture
from .._checks import check_choice, check_int, check_seconds
from .._errors import AgAttentionError, ComputationError, InvalidArgumentError, MSolveTimeoutError
from .._exact import DEFAULT_PRIME, SECOND_PRIME
from .._numeric import check_state_paths
from .._resources import MemoryEstimate, require_memory
from . import square_kernel
from .beside import Beside
from .critical import Route
from .ed_implicit import M2_PRIME, _layer, implicit_count, m2_version_or_none, msolve_version_or_none
from .ed_result import EDCount, EDDegree
from .estimate import choose_workers
from .formula import ed_upper_bound, segre_ed_degree
from .metrics import METRICS, default_samples, metric
from .numerical import MonodromyCount, monodromy_ed
from .square import square_memory
from .system import check_layer, critical_system

__all__ = ["EDDegree", "EDCount", "ed_degree", "implicit_count", "ED_METHODS", "M2_PRIME"]

ED_METHODS = ("count", "monodromy", "m2", "auto")
#: the (prime, seed offset) of the two counts
COUNT_RUNS = ((DEFAULT_PRIME, 0), (SECOND_PRIME, 1))


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

    started = _clock.now()
    d, e, _, t = check_layer(arch)
    G, description = metric(kind, d, e, t, seed=seed, samples=samples, causal=arch.causal)
    rng = random.Random(seed + 7919)
    w = [rng.randint(-(10**6), 10**6) for _ in range(G.shape[0])]
    system = critical_system(arch, G, w, prime=prime, seed=seed)
    left = timeout - (_clock.now() - started)  # (building the system counts against the limit)
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


@_clock.interruptible()
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
    one process per core above, ``_landscape.estimate.choose_workers``); ``save`` / ``resume``: the monodromy's
    state file (a long count survives a crash).

    >>> from ag_attention import Architecture
    >>> r = ed_degree(Architecture((2, 1), (2,), tokens=2), metric="euclidean", method="count")
    >>> r.ed_degree, r.counts[0].solutions == r.counts[1].solutions
    (6, True)
    >>> r = ed_degree(Architecture((2, 1), (2,), tokens=2), metric="generic")
    >>> r.ed_degree, r.lower_bound, r.final, [route.name for route in r.routes]
    (14, 14, True, ['monodromy (certified)', 'count (msolve, two primes)'])
    """
    arch = check_architecture(arch)
    seed, timeout, (d, e, a, t) = _checked(arch, metric, method, samples, seed, timeout)
    if (save is not None or resume is not None or scheduler is not None or workers not in (None, 1)) and method in (
        "count",
        "m2",
    ):
        raise InvalidArgumentError(
            f"workers, scheduler, save and resume belong to the monodromy: not with method={method!r}"
        )
    check_state_paths(save, resume)
    t0 = time.perf_counter()
    notes = _notes(arch, metric, d, t)
    if t == 1 or method == "m2":
        return _implicit(arch, metric, samples, seed, timeout, backend, cache, notes, t0, d, e, t)
    # the tracker's compiled kernels ready before the clock starts (read from numba's cache: 0.6 s; compiled once
    # a machine, by make setup or the first run: that is no part of the computation its time limit bounds)
    square_kernel.warm()
    run = _Run(arch, metric, samples, seed, backend, timeout, _clock.after(timeout), (d, e, a, t), notes)
    _known_bounds(run)
    counted = method in ("count", "auto")
    if counted:
        require_memory(
            _system_memory(d, e, a),
            f"the critical equations of {arch.describe()}",
            "use a smaller size or method='monodromy'",
        )
    mono = None
    with Beside(run.end) as beside:
        if counted:
            for prime, offset in COUNT_RUNS:
                beside.submit(
                    f"count {prime}",
                    functools.partial(_count_within, arch, metric, samples, prime, seed + offset, backend),
                )
        if method in ("monodromy", "auto"):
            mono = _monodromy(run, beside, method, counted, workers, scheduler, save, resume)
        counts, version, count_state = _collect_counts(run, beside) if counted else ([], None, "")
    _reconcile(run, mono, counts)
    return _result(run, t0, mono, counts, version, count_state)


@dataclass
class _Run:
    """One call of :func:`ed_degree` on the routes in the weights: its arguments, and what is known so far."""

    arch: Architecture
    metric: str
    samples: int | None
    seed: int
    backend: Any
    timeout: float
    end: float  # the deadline (time.monotonic)
    sizes: tuple[int, int, int, int]  # (d, d', a, t)
    notes: list[str]
    fiber: int = 1
    upper: int = 0  # the proven upper bound
    bounds: list[tuple[str, str, int]] = field(default_factory=list)
    prediction: dict[str, Any] | None = None
    routes: list[Route] = field(default_factory=list)


def _checked(
    arch: Architecture, metric: str, method: str, samples: int | None, seed: int, timeout: float
) -> tuple[int, float, tuple[int, int, int, int]]:
    """``(seed, timeout, (d, d', a, t))``: the arguments of :func:`ed_degree` checked, the layer's sizes."""
    check_choice(metric, "metric", METRICS)
    check_choice(method, "method", ED_METHODS)
    if samples is not None and not METRICS[metric].data:
        with_data = " or ".join(f"metric={name!r}" for name, entry in METRICS.items() if entry.data)
        raise InvalidArgumentError(f"samples={samples!r}: only for {with_data} (the data set's size)")
    seed = check_int(seed, "seed", minimum=0)
    timeout = check_seconds(timeout)
    d, e, a, t = _layer(arch)
    if t == 1 and method in ("count", "monodromy"):
        raise InvalidArgumentError(
            f"tokens=1 with method={method!r}: the routes in the weights need t >= 2 (the "
            "critical locus of one token's parametrization is not the one of Lemma A.3); "
            "use method='m2' (or 'auto')"
        )
    if arch.heads != 1 or arch.skip or arch.normalized or not arch.is_linear_attention:
        raise InvalidArgumentError(
            "ed_degree: one plain lightning layer "
            "(one head, no skip connection, no softmax, no biases, no rotary positions)"
        )
    return seed, timeout, (d, e, a, t)


def _notes(arch: Architecture, metric: str, d: int, t: int) -> list[str]:
    notes = []
    if arch.ranks is not None and arch.ranks[0] > d:
        notes.append(
            f"rank bound a = {arch.ranks[0]} > d = {d}: A is free, the layer is the one of a = {d} (its "
            "numbers are printed)"
        )
    if t > 2 and not METRICS[metric].data:
        on_t = " and ".join(f"the {name} metric" for name, entry in METRICS.items() if entry.data)
        notes.append(f"t = {t}: the reduced coordinates and this metric are those of t = 2 (only {on_t} depends on t)")
    return notes


def _known_bounds(run: _Run) -> None:
    """The fiber, the proven bounds known before any route runs, and the Segre prediction (a generic form)."""
    d, e, a, _ = run.sizes
    formula = degree_formula(d, e, a, 2)
    run.fiber = formula.fiber
    generic = METRICS[run.metric].generic
    if generic and formula.applies:
        run.bounds.append(
            (
                "lower",
                "the degree of the closure (docs/math/degree.md): the generic ED degree is at least "
                "the degree (a polar degree), proven",
                int(formula.degree),
            )
        )
    upper = ed_upper_bound(d, e, a, run.fiber)
    run.upper = upper.value
    run.bounds.append(
        (
            "upper",
            f"the multihomogeneous Bezout number {upper.bezout:,} of the critical equations over "
            f"the fiber {run.fiber}, proven (docs/math/landscape.md, landscape-bounds)",
            upper.value,
        )
    )
    run.prediction = segre_ed_degree(d, e, a).to_dict() if generic else None


def _expected(run: _Run) -> int | None:
    """The monodromy's predicted count (its progress bar's total): the Segre prediction times the fiber."""
    value = (run.prediction or {}).get("value")
    return None if not value else int(value) * run.fiber


def _monodromy(
    run: _Run, beside: Beside, method: str, counted: bool, workers: Any, scheduler: Any, save: Any, resume: Any
) -> MonodromyCount | None:
    """The certified monodromy beside the counts (None when it failed under ``auto``: said in ``run.routes``)."""
    arch, (d, e, a, t) = run.arch, run.sizes
    require_memory(
        square_memory(d, e, a), f"the monodromy of {arch.describe()}", "use a smaller size or method='count'"
    )
    workers = choose_workers(arch, workers, scheduler, run.timeout)
    G, _ = metric_form(run.metric, d, e, t, run.seed, run.samples, arch.causal)

    def known() -> int | None:  # the first count is of the same form: the monodromy may stop at it
        got = beside.value(f"count {COUNT_RUNS[0][0]}") if counted else None
        return None if got is None else int(got[0])

    t1 = time.perf_counter()
    try:
        mono = monodromy_ed(
            arch,
            G,
            fiber=run.fiber,
            seed=run.seed,
            deadline=run.end,
            known=known if counted else None,
            workers=workers,
            scheduler=scheduler,
            save=save,
            resume=resume,
            expected=_expected(run),
        )
    except AgAttentionError as exc:
        if method == "monodromy":
            raise
        run.routes.append(Route("monodromy (certified)", time.perf_counter() - t1, f"failed: {exc}"))
        return None
    state = "ok" if mono.complete else "stopped at a limit"
    run.routes.append(
        Route(
            "monodromy (certified)",
            time.perf_counter() - t1,
            f"{state} ({mono.stop}): {mono.found} found, {mono.certified} certified, "
            f"{mono.images} distinct images (ED >= {mono.images}, proven)"
            + (f", {mono.unchecked} not certified for lack of time" if mono.unchecked else ""),
        )
    )
    if mono.found % run.fiber:
        run.notes.append(
            f"monodromy found {mono.found} solutions, not a multiple of the fiber {run.fiber}: some are missing"
        )
    if mono.stop == "interrupted" and counted:  # Ctrl-C: what is found is kept, nothing more is waited for
        for prime, _ in COUNT_RUNS:
            beside.abandon(f"count {prime}", "interrupted (Ctrl-C)")
    return mono


def _collect_counts(run: _Run, beside: Beside) -> tuple[list[EDCount], str | None, str]:
    """``(counts, msolve's version, why they are missing)``: the two msolve counts, which must agree."""
    counts: list[EDCount] = []
    version = None
    count_state = ""
    outcomes = [beside.wait(f"count {prime}") for prime, _ in COUNT_RUNS]
    if any(o.state == "abandoned" for o in outcomes):
        count_state = "interrupted (Ctrl-C) before the msolve counts finished"
    failures = [o for o in outcomes if o.state == "failed"]
    if failures and failures[0].error is not None:
        raise failures[0].error
    if all(o.ok for o in outcomes):
        for (prime, offset), o in zip(COUNT_RUNS, outcomes):
            n, seconds, _, version = o.value
            counts.append(EDCount(prime, run.seed + offset, n, seconds))
        if counts[0].solutions != counts[1].solutions:
            raise ComputationError(
                f"the counts disagree: {counts[0].solutions} and {counts[1].solutions} "
                "(an unlucky prime or choice): rerun with another seed",
                seed=run.seed,
            )
        if counts[0].solutions % run.fiber:
            raise ComputationError(f"{counts[0].solutions} solutions is not a multiple of the fiber {run.fiber} (bug)")
        run.routes.append(
            Route(
                "count (msolve, two primes)",
                sum(c.seconds for c in counts),
                f"ok: {counts[0].solutions} solutions, ED {counts[0].solutions // run.fiber}",
            )
        )
    elif not count_state:
        done = sum(1 for o in outcomes if o.ok)
        count_state = (
            f"the msolve counts did not finish within the time limit ({done} of 2 done; rerun with a larger timeout)"
        )
        run.routes.append(
            Route(
                "count (msolve, two primes)",
                sum(o.seconds for o in outcomes),
                f"timed out: {done} of 2 counts finished within the limit of {run.timeout:g} s",
            )
        )
    return counts, version, count_state


def _reconcile(run: _Run, mono: MonodromyCount | None, counts: list[EDCount]) -> None:
    """The certified images never exceed the count (else no value), and a difference in solutions is noted."""
    if mono is None or not counts:
        return
    if mono.images > counts[0].solutions // run.fiber:
        raise ComputationError(
            f"ED degree of {run.arch.describe()} ({run.metric}): {mono.images} distinct critical points "
            f"are certified (proven) but msolve counts {counts[0].solutions // run.fiber}: a "
            "contradiction (an unlucky prime or draw); no value is reported",
            seed=run.seed,
        )
    if mono.found != counts[0].solutions:
        run.notes.append(
            f"monodromy found {mono.found} solutions and msolve counts {counts[0].solutions}: "
            + (
                "the monodromy stopped at a limit before it found them all"
                if mono.found < counts[0].solutions
                else "a contradiction"
            )
        )


def _result(
    run: _Run, t0: float, mono: MonodromyCount | None, counts: list[EDCount], version: str | None, count_state: str
) -> EDDegree:
    """The result: the count's value, else the complete monodromy's, else undecided with what is proven."""
    d, e, _, t = run.sizes
    lower = max([mono.images if mono is not None else 0] + [v for side, _, v in run.bounds if side == "lower"])
    if mono is not None and mono.images:
        run.bounds.insert(
            0,
            (
                "lower",
                f"{mono.images} certified critical points with pairwise disjoint images (Krawczyk), proven",
                mono.images,
            ),
        )
    description = metric_form(run.metric, d, e, t, run.seed, run.samples, run.arch.causal)[1]
    common: dict[str, Any] = dict(
        samples=_samples(run.metric, run.samples, d, e, t),
        notes=tuple(run.notes),
        closure=None,
        routes=tuple(run.routes),
        lower_bound=lower,
        monodromy=mono.to_dict() if mono is not None else None,
        msolve=version,
        upper_bound=run.upper,
        bounds=tuple(run.bounds),
        prediction=run.prediction,
    )
    head = (run.arch, run.metric, description)
    if counts:
        value = counts[0].solutions // run.fiber
        return EDDegree(
            *head, "count", value, run.fiber, tuple(counts), counts[0].prime, run.seed, _since(t0), **common
        )
    if mono is not None and mono.complete and mono.images * run.fiber == mono.found:
        value = mono.found // run.fiber
        return EDDegree(*head, "monodromy", value, run.fiber, (), None, run.seed, _since(t0), **common)
    status = _undecided(run, mono, count_state)
    return EDDegree(*head, "undecided", None, run.fiber, (), None, run.seed, _since(t0), status=status, **common)


def _since(t0: float) -> float:
    return time.perf_counter() - t0


def _undecided(run: _Run, mono: MonodromyCount | None, count_state: str) -> str:
    """Why no route decided the value."""
    why = []
    if mono is not None:
        if not mono.complete:
            why.append(
                f"the monodromy stopped at {mono.stop!r}"
                + (f" with {mono.unchecked} solutions not certified" if mono.unchecked else "")
            )
        elif mono.images * run.fiber != mono.found:
            why.append(
                f"{mono.found - mono.images * run.fiber} of the monodromy's {mono.found} solutions are not "
                "certified with distinct images"
            )
    if count_state:
        why.append(count_state)
    return "; ".join(why) or "no route finished"


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
        msolve_version_or_none(),
        m2_version_or_none(backend),
    )


def _samples(metric_kind: str, samples: int | None, d: int, e: int, t: int) -> int | None:
    if not METRICS[metric_kind].data:
        return None
    return samples if samples is not None else default_samples(e * d * (d + 1) // 2 * d, t, e)
