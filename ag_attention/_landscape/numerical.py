"""The numerical route of the landscape: monodromy on the square system, every solution certified.

docs/math/landscape.md (landscape-monodromy, landscape-certify).  This module
poses the problems (:mod:`.square`: the system of one layer and a form ``G``)
and reads the answers; the solving is the numerical room's
(:mod:`ag_attention._numeric.homotopy`: monodromy and parameter homotopies,
:mod:`ag_attention._numeric.certify`: the Krawczyk test).

* :func:`monodromy_ed`: the solutions over a random complex target ``w_0``
  (monodromy from a start pair made for it), certified there: distinct, off
  the critical locus of the parametrization, and their images ``x(theta)``
  pairwise disjoint.  The number of disjoint certified images is a **proven
  lower bound on the ED degree** (each is a regular critical point over
  ``w_0``, which persists, distinct, to generic targets nearby).
* :func:`homotopy_solutions`: the same monodromy for a *generic* form ``G_0``
  (:func:`generic_form`, from the seed; its solution set stored in the
  result cache and resumed from there, so that it is solved once per size
  and seed), then one parameter homotopy in the form and the target together,
  from ``(G_0, w_0)`` to a data set's ``(G, w)`` (:class:`.square.FormHomotopy`),
  and the certification at ``(G, w)`` with realness (``F`` has real
  coefficients there).  docs/math/landscape.md (landscape-form-homotopy).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _clock
from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._exact import balls
from .._numeric import certify as _certify
from .._numeric import executors
from .._numeric import homotopy as _homotopy
from .._numeric import monodromy as _monodromy
from .estimate import predicted_solutions
from .generic_start import from_generic, monodromy_state, store
from .square import SquareSystem, square_system

__all__ = [
    "MonodromyCount",
    "monodromy_ed",
    "HomotopySolutions",
    "homotopy_solutions",
    "distinct_images",
]


@dataclass(frozen=True)
class MonodromyCount:
    """Monodromy's solutions over a random complex target, and what of them is certified."""

    found: int  # distinct numerical solutions in the weights (on the slice and chart)
    certified: int  # of them certified by the Krawczyk test, off the critical locus, in disjoint boxes
    images: int  # certified solutions with pairwise disjoint images x(theta): a proven lower bound on the ED degree
    fiber: int  # solutions in the weights per critical point, generically
    paths: int
    failures: int
    loops: int
    stop: str  # the monodromy's stop (:data:`ag_attention._numeric.monodromy.FINAL_STOPS` and the limits)
    seconds_monodromy: float
    seconds_certification: float
    not_certified: int  # candidates the Krawczyk test did not pass (or that were on the critical locus)
    trace: float | None = None  # the last trace test's deviation
    unchecked: int = 0  # solutions found but not certified before the time limit
    executor: str = "one process"
    checkpoint: str | None = None
    known: int | None = None  # the count known otherwise when it stopped
    resumed: bool = False
    save_error: str | None = None  # why the state file could not be written (the result is returned all the same)

    @property
    def complete(self) -> bool:
        """The stopping rule was met (the trace test passed, or a known count was reached) and every solution found
        was tried by the certification: the found count is the monodromy's value, not a limit's."""
        return self.stop in _monodromy.FINAL_STOPS and self.unchecked == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "found": self.found,
            "certified": self.certified,
            "certified_images": self.images,
            "final": self.complete,
            "fiber": self.fiber,
            "paths": self.paths,
            "failures": self.failures,
            "loops": self.loops,
            "stop": self.stop,
            "stopping_rule": _monodromy.STOPPING_RULE,
            "trace_deviation": self.trace,
            "known_count": self.known,
            "not_certified": self.not_certified,
            "unchecked": self.unchecked,
            "executor": self.executor,
            "checkpoint": self.checkpoint,
            "resumed": self.resumed,
            "save_error": self.save_error,
            "seconds_monodromy": round(self.seconds_monodromy, 3),
            "seconds_certification": round(self.seconds_certification, 3),
        }


def distinct_images(S: SquareSystem, solutions: Sequence[_certify.Certified]) -> int:
    """The size of a set of certified solutions whose images ``x(theta)`` lie in pairwise disjoint boxes (chosen
    greedily; each kept solution's image is then a distinct point)."""
    if not len(solutions):
        return 0
    centers = np.array([c.center for c in solutions])
    charts = np.array([c.chart for c in solutions])
    xf = S.coordinates(centers, charts)
    with balls.precision(_certify.BITS):
        xb = [S.ball_coordinates(c.box, np.asarray(c.chart)) for c in solutions]
    scale = 1 + np.max(np.abs(xf), axis=1)
    # near pairs by a sweep over one coordinate (sorted), not all pairs: O(N log N) plus the near pairs
    col = int(np.argmax(np.var(xf.real, axis=0))) if xf.shape[1] else 0
    key = xf[:, col].real
    order = np.argsort(key, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    kept: list[int] = []
    kept_sorted: list[float] = []
    kept_index: list[int] = []
    for i in range(len(solutions)):
        tol = 1e-6 * scale[i]
        lo = np.searchsorted(kept_sorted, key[i] - tol * 4 - 1e-6 * float(np.max(scale)))
        hi = np.searchsorted(kept_sorted, key[i] + tol * 4 + 1e-6 * float(np.max(scale)), side="right")
        near = [j for j in kept_index[lo:hi] if np.max(np.abs(xf[i] - xf[j])) <= 1e-6 * max(scale[i], scale[j])]
        if all(balls.boxes_disjoint(xb[i], xb[j]) for j in near):
            kept.append(i)
            pos = int(np.searchsorted(kept_sorted, key[i]))
            kept_sorted.insert(pos, float(key[i]))
            kept_index.insert(pos, i)
    return len(kept)


#: the homotopy from the generic form to the data's: the ends may be far out (let them take long); a Newton
#: tolerance of 1e-7 along the way (measured at (3,1,1): 110 steps a path against 159 at 1e-9, and 4 fewer failed
#: paths of 1,956; the ends are refined and certified at the target, whatever the tolerance on the way)
FORM_OPTIONS = _homotopy.TrackerOptions(max_steps=20000, tolerance=1e-7)

#: seconds the work after an interrupted monodromy (homotopy to the data, certification) may still take
INTERRUPT_GRACE = 10.0


def _after(stop: str, end: float) -> float:
    """The deadline of what follows the monodromy: after Ctrl-C, at most :data:`INTERRUPT_GRACE` seconds more (what
    is certified by then is kept, the rest unchecked; with ``save`` every solution found is on disk)."""
    return min(end, _clock.now() + INTERRUPT_GRACE) if stop == "interrupted" else end


def _certification_seconds(S: SquareSystem, z0: np.ndarray, p0: np.ndarray, c0: np.ndarray) -> float:
    """Seconds to certify one solution of this system (the start point, timed): what the deadline reserves."""
    t0 = time.perf_counter()
    _certify.certify_each(S, z0[None, :], list(p0), p0, False, c0[None, :], S.off_critical_locus)
    return time.perf_counter() - t0


def monodromy_ed(
    arch: Architecture,
    G: Any,
    *,
    fiber: int,
    seed: int = 0,
    timeout: float = 300.0,
    max_solutions: int | None = None,
    known: Any = None,
    workers: int | None = 1,
    scheduler: str | None = None,
    save: Any = None,
    resume: Any = None,
    deadline: float | None = None,
    expected: int | None = None,
) -> MonodromyCount:
    """The ED problem of ``G`` (exact, on the reduced coordinates) solved by monodromy over a random complex target
    (from ``seed``), every solution certified there (module docstring).

    ``timeout`` (or ``deadline``, a ``_clock.now()``) bounds the whole: the monodromy stops early enough for the
    certification of what it found (the time one certification takes, measured first, times the solutions, over
    the workers); solutions the certification did not reach are ``unchecked``.  ``known``: a count known otherwise
    (solutions in the weights, or a function returning it once known: msolve's, running beside it) at which the
    monodromy stops.  ``workers`` / ``scheduler``: where paths and certifications run
    (:func:`ag_attention._numeric.executors.executor`); ``save`` / ``resume``: the monodromy's state file;
    ``expected``: the predicted count, its progress bar's total."""
    with _homotopy.one_blas_thread():
        return _monodromy_ed(
            arch,
            G,
            fiber,
            seed,
            deadline if deadline is not None else _clock.after(timeout),
            max_solutions,
            known,
            workers,
            scheduler,
            save,
            resume,
            expected,
        )


def _monodromy_ed(
    arch: Architecture,
    G: Any,
    fiber: int,
    seed: int,
    end: float,
    max_solutions: int | None,
    known: Any,
    workers: int | None,
    scheduler: str | None,
    save: Any,
    resume: Any,
    expected: int | None,
) -> MonodromyCount:
    S = square_system(arch, G)
    state = monodromy_state(S, seed, resume)
    # ignore: chart_array is None only for n_chart == 0, and a square system's n_chart = e d + ... > 0
    z0, p0, c0 = state.found.array()[0], state.p0, state.found.chart_array(S.n_chart)[0]  # type: ignore[index]
    per = _certification_seconds(S, z0, p0, c0)
    with executors.executor(S, _monodromy.LOOP_OPTIONS, _homotopy.CAREFUL, workers=workers, scheduler=scheduler) as ex:

        def stop_at(found: int) -> float:
            return end - (1.5 * per * found / ex.workers + 1.0)

        t0 = time.perf_counter()
        mono = state.run(
            ex,
            deadline=stop_at,
            known=known,
            max_solutions=max_solutions,
            save=save,
            desc=f"monodromy {arch.describe()}",
            expected=expected,
        )
        t1 = time.perf_counter()
        cert = _certify.certify_solutions(
            S,
            mono.solutions,
            list(mono.base),
            float_parameter=mono.base,
            real_system=False,
            keep=S.off_critical_locus,
            charts=mono.charts,
            desc=f"certify {arch.describe()}",
            deadline=_after(mono.stop, end),
            executor=ex,
        )
    images = distinct_images(S, cert.solutions)
    return MonodromyCount(
        mono.count,
        cert.count,
        images,
        fiber,
        mono.paths,
        mono.failures,
        mono.loops,
        mono.stop,
        t1 - t0,
        time.perf_counter() - t1,
        cert.failed + cert.duplicates,
        mono.trace,
        cert.unchecked,
        mono.executor,
        mono.checkpoint,
        mono.known,
        mono.resumed,
        mono.save_error,
    )


@dataclass(frozen=True)
class HomotopySolutions:
    """The critical points of a real target, by monodromy and a parameter homotopy, certified at the target."""

    system: SquareSystem
    target: np.ndarray  # the exact target at the system's scale
    base_count: int  # solutions of the generic form of the data's rank over a random complex target, as far as found
    arrived: int  # distinct ends at the target
    certification: _certify.Certification
    monodromy: dict[str, Any]
    seconds_monodromy: float
    seconds_homotopy: float
    failed_reasons: dict[str, int]
    base_final: bool = True  # the monodromy met its stopping rule (the base count is its value, not a limit's)
    complete_at_target: bool = False  # the certified count at the target reached the count known there
    cut: bool = False  # the homotopy to the target ended at its time limit with paths not arrived

    @property
    def certified(self) -> int:
        return self.certification.count

    @property
    def real(self) -> list[_certify.Certified]:
        return [s for s in self.certification.solutions if s.real is True]

    @property
    def final(self) -> bool:
        """Every critical point at the target was found, as far as the stopping rule tells: the certified count at the
        target reached msolve's count there, or the monodromy of the generic form met its rule and every one of its
        solutions arrived at the data and was certified there (a path that does not arrive, or an end that does not
        pass, is a solution at infinity, a singular or a non-isolated one: the count is then a lower bound); none
        left unchecked by the time limit."""
        if self.certification.unchecked or self.cut:
            return False
        if self.complete_at_target:
            return True
        return self.base_final and not self.failed_reasons and self.certification.failed == 0


def homotopy_solutions(
    arch: Architecture,
    G: Any,
    w: Sequence[Any],
    *,
    seed: int = 0,
    timeout: float = 300.0,
    known: Any = None,
    workers: int | None = 1,
    scheduler: str | None = None,
    save: Any = None,
    resume: Any = None,
    deadline: float | None = None,
) -> HomotopySolutions:
    """Every critical point (off the critical locus) of ``x^T G x - 2 w^T x`` in the weights of one layer, ``G``
    and ``w`` exact and real (a data set's Gram form and target); see the module docstring.

    ``timeout`` (or ``deadline``) bounds the whole (monodromy, the homotopy to the target, the certification);
    ``known``: the number of solutions at the target known otherwise (msolve's count, or a function returning it
    once known): when the monodromy has found that many, their ends at the target are certified, and if as many are
    certified the work is done (else the monodromy goes on to its own rule)."""
    w = [Fraction(v) for v in w]
    size = max((abs(v) for v in w), default=Fraction(0))
    if size == 0:
        raise InvalidArgumentError("the target w is 0: every critical point is the origin of the closure")
    with _homotopy.one_blas_thread():
        return _homotopy_solutions(
            arch,
            G,
            w,
            size,
            seed,
            deadline if deadline is not None else _clock.after(timeout),
            known,
            workers,
            scheduler,
            save,
            resume,
        )


# long: one loop shares its state (the monodromy, the homotopy to the data, the certification, the known count)
def _homotopy_solutions(
    arch: Architecture,
    G: Any,
    w: list[Fraction],
    size: Fraction,
    seed: int,
    end_time: float,
    known: int | Callable[[], int | None] | None,
    workers: int | None,
    scheduler: str | None,
    save: Any,
    resume: Any,
) -> HomotopySolutions:
    S = square_system(arch, G, w_scale=size)
    target = S.target(w)
    target_f = np.array([float(v) for v in target], dtype=complex)
    start, H, rank = from_generic(arch, S, seed, resume)
    S0, state = start.system, start.state
    # ignore: chart_array is None only for n_chart == 0, and a square system's n_chart = e d + ... > 0
    z0, p0, c0 = state.found.array()[0], state.p0, state.found.chart_array(S0.n_chart)[0]  # type: ignore[index]
    per = _certification_seconds(S0, z0, p0, c0)
    final_options = FORM_OPTIONS
    seconds_mono = seconds_hom = 0.0
    stored = None

    def known_now() -> int | None:
        return known() if callable(known) else known

    with executors.executor(S0, _monodromy.LOOP_OPTIONS, _homotopy.CAREFUL, workers=workers, scheduler=scheduler) as ex:
        use_known = known is not None
        while True:
            stop_at = _stop_for_the_target(state, end_time, per, ex)
            t0 = time.perf_counter()
            mono = state.run(
                ex,
                deadline=stop_at,
                known=known_now if use_known else None,
                save=save,
                desc=f"monodromy {arch.describe()}, a generic form",
                expected=predicted_solutions(arch),
            )
            stored = store(start) or stored
            t1 = time.perf_counter()
            seconds_mono += t1 - t0
            end_time = _after(mono.stop, end_time)
            left = max(1.0, end_time - _clock.now() - 1.5 * per * mono.count / ex.workers)
            limit = _clock.now() + left
            end = _homotopy.parameter_homotopy(
                H,
                mono.solutions,
                H.parameter(mono.base, 0.0),
                H.parameter(target_f, 1.0),
                timeout=left,
                seed=seed,
                options=final_options,
                chart=mono.charts,
                real=True,
                desc=f"homotopy {arch.describe()} to the data",
            )
            seconds_hom += time.perf_counter() - t1
            # paths that had not arrived when its limit came: what they would have found is not known
            cut = bool(not end.ok.all() and (_clock.now() >= limit or "time limit" in set(end.reason[~end.ok])))
            rows, cert = _certify_at_target(S, end, target, target_f, end_time, ex, arch)
            k = known_now()
            complete = k is not None and cert.count >= k
            if mono.stop == "trace test" or complete or _clock.now() >= end_time - 1.0:
                break
            if mono.stop != "known count":  # a limit (time, interrupt, cluster): what was found is the answer
                break
            use_known = False  # as many found as msolve counts, fewer certified at the target: on to the rule
    return HomotopySolutions(
        S,
        target,
        mono.count,
        int(rows.size),
        cert,
        mono.to_dict()
        | {
            "form": f"generic of rank {rank} (seed {seed}), then one homotopy to the data's form",
            "rank": rank,
            "start": start.source,
            "start_file": start.path,
            "stored": stored,
        },
        seconds_mono,
        seconds_hom,
        _failure_reasons(end),
        mono.stop == "trace test",
        complete,
        cut and not complete,
    )


def _certify_at_target(
    S: SquareSystem,
    end: Any,
    target: Any,
    target_f: np.ndarray,
    end_time: float,
    ex: Any,
    arch: Architecture,
) -> tuple[np.ndarray, _certify.Certification]:
    """The ends the parameter homotopy carried to the target (their rows), certified there (the real system)."""
    rows = np.flatnonzero(end.ok)
    assert end.chart is not None
    cert = _certify.certify_solutions(
        S,
        end.z[rows],
        list(target),
        float_parameter=target_f,
        real_system=True,
        keep=S.off_critical_locus,
        charts=end.chart[rows],
        desc=f"certify {arch.describe()}",
        deadline=end_time,
        executor=ex,
    )
    return rows, cert


def _failure_reasons(end: Any) -> dict[str, int]:
    """How many paths to the target failed, by reason."""
    reasons: dict[str, int] = {}
    for r in end.reason[~end.ok]:
        reasons[str(r)] = reasons.get(str(r), 0) + 1
    return reasons


def _stop_for_the_target(state: Any, end_time: float, per: float, ex: Any) -> Callable[[int], float]:
    """The monodromy's deadline given the solutions found: it keeps time for the homotopy to the target (about
    three loop edges a path, at the rate of this run's paths so far) and the certification."""
    paths0, t_run = state.paths, time.perf_counter()

    def stop_at(found: int) -> float:
        rate = (time.perf_counter() - t_run) / max(1, state.paths - paths0) if state.paths > paths0 else 0.01
        return end_time - float((3 * rate * ex.workers + 1.5 * per) * found / ex.workers + 2.0)

    return stop_at
