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
* :func:`homotopy_solutions`: the same monodromy, then a parameter homotopy
  from ``w_0`` to a given real target ``w`` (a data set's), and the
  certification at ``w`` with realness (``F`` has real coefficients there).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._numeric import certify as _certify
from .._numeric import homotopy as _homotopy
from .square import SquareSystem, square_system

__all__ = ["MonodromyCount", "monodromy_ed", "HomotopySolutions", "homotopy_solutions", "distinct_images"]


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
    stop: str  # "stable", "max_solutions" or "time limit"
    stable: int
    seconds_monodromy: float
    seconds_certification: float
    not_certified: int  # candidates the Krawczyk test did not pass (or that were on the critical locus)
    trace: float | None = None  # the last trace test's deviation

    @property
    def complete(self) -> bool:
        """The stopping rule was met (not a proof of completeness: see the stopping rule)."""
        return self.stop == "stable"

    def to_dict(self) -> dict[str, Any]:
        return {"found": self.found, "certified": self.certified, "certified_images": self.images,
                "fiber": self.fiber, "paths": self.paths, "failures": self.failures, "loops": self.loops,
                "stop": self.stop, "stopping_rule": _homotopy.STOPPING_RULE.format(stable=self.stable, twice=2 * self.stable),
                "trace_deviation": self.trace, "not_certified": self.not_certified,
                "seconds_monodromy": round(self.seconds_monodromy, 3),
                "seconds_certification": round(self.seconds_certification, 3)}


def distinct_images(S: SquareSystem, solutions: Sequence[_certify.Certified]) -> int:
    """The size of a set of certified solutions whose images ``x(theta)`` lie in pairwise disjoint boxes (chosen
    greedily; each kept solution's image is then a distinct point)."""
    from .._exact import balls

    if not len(solutions):
        return 0
    centers = np.array([c.center for c in solutions])
    charts = np.array([c.chart for c in solutions])
    xf = S.coordinates(centers, charts)
    with balls.precision(_certify.BITS):
        xb = [S.ball_coordinates(c.box, np.asarray(c.chart)) for c in solutions]
    scale = 1 + np.max(np.abs(xf), axis=1)
    kept: list[int] = []
    for i in range(len(solutions)):
        near = [j for j in kept if np.max(np.abs(xf[i] - xf[j])) <= 1e-6 * max(scale[i], scale[j])]
        if all(balls.boxes_disjoint(xb[i], xb[j]) for j in near):
            kept.append(i)
    return len(kept)


def _start(S: SquareSystem, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return S.seed(np.random.default_rng(seed))


def monodromy_ed(arch: Architecture, G: Any, *, fiber: int, seed: int = 0, timeout: float = 300.0,
                 max_solutions: int | None = None, stable: int = 5) -> MonodromyCount:
    """The ED problem of ``G`` (exact, on the reduced coordinates) solved by monodromy over a random complex target
    (from ``seed``), every solution certified there (module docstring).  ``timeout`` bounds the monodromy (the
    certification of what it found comes after)."""
    S = square_system(arch, G)
    z0, p0, c0 = _start(S, seed)
    t0 = time.monotonic()
    mono = _homotopy.monodromy_solve(S, z0, p0, seed=seed, timeout=timeout, max_solutions=max_solutions,
                                     stable=stable, desc=f"monodromy {arch.describe()}", chart0=c0)
    t1 = time.monotonic()
    cert = _certify.certify_solutions(S, mono.solutions, list(p0), float_parameter=p0, real_system=False,
                                      keep=S.off_critical_locus, charts=mono.charts,
                                      desc=f"certify {arch.describe()}")
    images = distinct_images(S, cert.solutions)
    return MonodromyCount(mono.count, cert.count, images, fiber, mono.paths, mono.failures, mono.loops, mono.stop,
                          mono.stable, t1 - t0, time.monotonic() - t1, cert.failed + cert.duplicates, mono.trace)


@dataclass(frozen=True)
class HomotopySolutions:
    """The critical points of a real target, by monodromy and a parameter homotopy, certified at the target."""

    system: SquareSystem
    target: np.ndarray  # the exact target at the system's scale
    base_count: int  # solutions found over the random complex base (the count for generic targets, as far as found)
    arrived: int  # distinct ends at the target
    certification: _certify.Certification
    monodromy: dict[str, Any]
    seconds_monodromy: float
    seconds_homotopy: float
    failed_reasons: dict[str, int]

    @property
    def certified(self) -> int:
        return self.certification.count

    @property
    def real(self) -> list[_certify.Certified]:
        return [s for s in self.certification.solutions if s.real is True]


def homotopy_solutions(arch: Architecture, G: Any, w: Sequence[Any], *, seed: int = 0, timeout: float = 300.0,
                       stable: int = 5) -> HomotopySolutions:
    """Every critical point (off the critical locus) of ``x^T G x - 2 w^T x`` in the weights of one layer, ``G``
    and ``w`` exact and real (a data set's Gram form and target); see the module docstring."""
    w = [Fraction(v) for v in w]
    size = max((abs(v) for v in w), default=Fraction(0))
    if size == 0:
        raise InvalidArgumentError("the target w is 0: every critical point is the origin of the closure")
    S = square_system(arch, G, w_scale=size)
    target = S.target(w)
    target_f = np.array([float(v) for v in target], dtype=complex)
    z0, p0, c0 = _start(S, seed)
    t0 = time.monotonic()
    mono = _homotopy.monodromy_solve(S, z0, p0, seed=seed, timeout=timeout, stable=stable,
                                     desc=f"monodromy {arch.describe()}", chart0=c0)
    t1 = time.monotonic()
    left = max(10.0, timeout - (t1 - t0))
    final = _homotopy.TrackerOptions(max_steps=20000)  # the ends may be far out: let them take long
    end = _homotopy.parameter_homotopy(S, mono.solutions, p0, target_f, timeout=left, seed=seed, options=final,
                                       chart=mono.charts, real=True)
    t2 = time.monotonic()
    reasons: dict[str, int] = {}
    for r in end.reason[~end.ok]:
        reasons[str(r)] = reasons.get(str(r), 0) + 1
    rows = np.flatnonzero(end.ok)
    assert end.chart is not None
    cert = _certify.certify_solutions(S, end.z[rows], list(target), float_parameter=target_f, real_system=True,
                                      keep=S.off_critical_locus, charts=end.chart[rows],
                                      desc=f"certify {arch.describe()}")
    return HomotopySolutions(S, target, mono.count, int(rows.size), cert, mono.to_dict(), t1 - t0, t2 - t1, reasons)
