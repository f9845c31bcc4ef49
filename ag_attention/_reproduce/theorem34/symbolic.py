"""Checks by the implicit equations of the closure, computed by Macaulay2 (sizes it finishes).

One Macaulay2 job per size (``theorem34Checks`` of the package
``LightningAttention``, ``m2scripts/LightningAttention.m2``) computes the ideal of the closure, its dimension
and degree, the base locus (Cor. A.1), the exact Jacobian rank of the
equations at one representative of every ``GL_d x GL_d x GL_{d'}`` orbit and
at random points of each stratum (the singular locus), the minimal primes of
a few fibers (Thm. 3.2) and, for ``(2, 1)``, the literal
``radical singularLocus == closure of the rank-one image``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._architecture import Architecture
from ..._errors import M2Error, M2NotFoundError
from ..._exact import dimension as exact_dimension
from ..._exact import reduced_point
from ..._m2 import NUMBER_STRING, OneOf, Where, run_json
from ..._models import Orbit, orbit_representatives
from ..claims import Claim
from ..report import Check, Report
from .grids import Size
from .predictions import Features, Theory, features
from .samplers import Sample, conjugate_data, conjugate_point, m2_fiber_points, strata_samples

__all__ = [
    "BASE_LOCUS_TYPES",
    "M2Job",
    "M2Outcome",
    "m2_checks",
    "m2_job",
    "m2_job_body",
    "m2_result_schema",
    "raise_for_m2_errors",
]


#: what ``baseLocusType`` answers: the base locus as a union of {A = 0} and {V = 0}
BASE_LOCUS_TYPES = ("A or V", "A", "V", "neither")


@dataclass(frozen=True)
class M2Outcome:
    """What the other checks of a size use from its Macaulay2 job."""

    conjugate_on_closure: bool  # the Cor. A.6 point satisfies the closure's equations
    degree: int
    dimension: int
    m2_version: str


@dataclass
class _Job:
    """The points sent to Macaulay2 for one size."""

    points: dict[str, list[int]]
    orbits: dict[str, tuple[Orbit, Features]]
    samples: list[Sample]
    fibers: dict[str, list[int]]
    literal: bool


def _m2_points(points: dict[str, list[int]]) -> str:
    """``{{"name", {x1, ...}}, ...}``: fixed names and integers only."""
    return "{" + ", ".join(f'{{"{name}", {{{", ".join(str(int(v)) for v in x)}}}}}' for name, x in points.items()) + "}"


def m2_job_body(size: Size, points: dict[str, list[int]], fibers: dict[str, list[int]], literal: bool) -> str:
    """The Macaulay2 job for one size: ``theorem34Checks`` of the package LightningAttention."""
    rank = "null" if size.free else str(size.a)
    return (
        f"P = lightningParametrization({size.d}, {size.d_out}, AttentionRank => {rank});\n"
        f"result = theorem34Checks(P, {_m2_points(points)}, {_m2_points(fibers)}, "
        f"LiteralSingularLocus => {'true' if literal else 'false'});\n"
    )


def m2_result_schema(points: Iterable[str], fibers: Iterable[str]) -> Any:
    """What :func:`m2_job_body` returns: checked before the result is cached or used."""

    point_names, fiber_names = set(points), set(fibers)
    return {
        "dimension": int,
        "codimension": int,
        "degree": int,
        "generators": int,
        "generator_degrees": [int],
        "rank_one_dimension": int,
        "base_locus": Where(str, lambda v: v in BASE_LOCUS_TYPES, f"one of {', '.join(BASE_LOCUS_TYPES)}"),
        "points": Where(
            [{"name": str, "jacobian_rank": int, "on_closure": bool, "in_rank_one_closure": bool}],
            lambda v: {p["name"] for p in v} == point_names,
            f"one evaluation for each of the {len(point_names)} points sent",
        ),
        "fibers": Where(
            [{"name": str, "components": [(int, int)]}],
            lambda v: {f["name"] for f in v} == fiber_names,
            f"one fiber for each of the {len(fiber_names)} points sent",
        ),
        "literal": OneOf(None, (bool, NUMBER_STRING)),
        "closure_seconds": NUMBER_STRING,
        "base_seconds": NUMBER_STRING,
        "points_seconds": NUMBER_STRING,
        "fibers_seconds": NUMBER_STRING,
    }


def raise_for_m2_errors(report: Report) -> None:
    """Raise an :class:`M2Error` if a Macaulay2 item of ``report`` did not finish (timeout, error).

    Those items are failed checks of the report, and the others were still
    computed; the CLI calls this after writing the report, so such a run ends
    with exit status 3 (a Macaulay2 problem), not 1 (a failed check).
    """
    errors = report.meta.get("m2_errors") or []
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise M2Error(
            f"{len(errors)} Macaulay2 item(s) did not finish: {first['size']}: {first['message']}{more}; "
            "the report has the other items"
        )


def _job_points(size: Size, seed: int, rng: np.random.Generator) -> _Job:
    """Orbit representatives, one sample per stratum, the Cor. A.6 point, and the fiber points."""
    points: dict[str, list[int]] = {}
    orbits: dict[str, tuple[Orbit, Features]] = {}
    for orb in orbit_representatives(size.d, size.d_out, size.a):
        if orb.zero:
            continue
        name = f"orbit {orb.label}"
        points[name] = reduced_point(orb.A, orb.V)
        orbits[name] = (orb, features(orb.A, orb.V))
    samples = strata_samples(size, rng, 1)
    for name, A, V in samples:
        points[f"sample {name}"] = reduced_point(A.astype(object), V.astype(object))
    points["conjugate"] = conjugate_point(*conjugate_data(size, seed))  # the same as in the pointwise check
    fibers = m2_fiber_points(size, rng) if size.free and size.coordinates <= 24 else {}
    literal = (size.d, size.d_out) == (2, 1) and size.free
    return _Job(points, orbits, samples, fibers, literal)


@dataclass
class M2Job:
    """One size's Macaulay2 job: its points (made in the main thread, from its own random generator), then its
    result or error (:meth:`run`, safe to call from another thread: it touches no report)."""

    size: Size
    job: _Job
    result: Any = None  # the JobResult once run
    error: M2Error | None = None
    seconds: float = 0.0

    def run(self, backend: Any, timeout: float) -> M2Job:

        t0 = time.perf_counter()
        try:
            self.result = run_json(
                m2_job_body(self.size, self.job.points, self.job.fibers, self.job.literal),
                schema=m2_result_schema(self.job.points, self.job.fibers),
                backend=backend,
                timeout=timeout,
                label=f"Theorem 3.4 checks for {self.size}",
            )
        except M2NotFoundError:
            raise  # no Macaulay2 at all: one error for the run, not one failure per item
        except M2Error as exc:  # this item only (a timeout, an error): the others still run, the run ends with exit 3
            self.error = exc
        self.seconds = time.perf_counter() - t0
        return self


def m2_job(size: Size, seed: int, rng: np.random.Generator) -> M2Job:
    """The Macaulay2 job of one size, not yet run."""
    return M2Job(size, _job_points(size, seed, rng))


def m2_checks(report: Report, done: M2Job, theory: Theory, seed: int) -> M2Outcome | None:
    """The checks of one size from its finished job; None (and a failed check) if the job did not finish."""
    size, job = done.size, done.job
    if done.error is not None:
        exc = done.error
        report.add(
            Check(
                "Macaulay2 checks",
                str(size),
                "Macaulay2",
                "finished",
                f"error: {exc}",
                False,
                done.seconds,
                size=size.triple,
                techniques=("Macaulay2",),
            )
        )
        report.meta.setdefault("m2_errors", []).append(
            {"size": str(size), "error": type(exc).__name__, "message": str(exc).splitlines()[0]}
        )
        return None
    result = done.result
    res = result.payload
    method = f"Macaulay2 {result.m2_version} ({result.backend})"
    _dimension_check(report, size, theory, seed, res, method)
    _base_locus_check(report, size, theory, res, method)
    _orbit_check(report, size, theory, job, res, method, done.seconds)
    _sample_check(report, size, theory, job, res, method)
    if res["fibers"]:
        _fiber_check(report, size, theory, res, method)
    evals = {p["name"]: p for p in res["points"]}
    return M2Outcome(evals["conjugate"]["on_closure"], res["degree"], res["dimension"], result.m2_version)


def _dimension_check(report: Report, size: Size, theory: Theory, seed: int, res: dict[str, Any], method: str) -> None:
    """dim M: Macaulay2 = exact Jacobian rank = Cor. 3.3."""
    eng = exact_dimension(Architecture((size.d, size.d_out), (size.a,), tokens=2), seed=seed)
    formula = theory.dimension(size)
    report.add(
        Check(
            "dim M: Macaulay2 closure = exact Jacobian rank = Cor. 3.3",
            str(size),
            f"{method}: dim of the closure ideal; GF(p) rank + symmetry bound",
            formula,
            f"Macaulay2 {res['dimension']}, rank {eng.dimension} ({'exact' if eng.certified else 'lower bound'})",
            res["dimension"] == eng.dimension == formula and eng.certified,
            float(res["closure_seconds"]),
            {
                "degree": res["degree"],
                "generators": res["generators"],
                "generator_degrees": res["generator_degrees"],
                "formula_applies": size.in_hypotheses,
            },
            topic=Claim.COR_33,
            size=size.triple,
            techniques=("Macaulay2 (the closure's ideal)",),
        )
    )


def _base_locus_check(report: Report, size: Size, theory: Theory, res: dict[str, Any], method: str) -> None:
    """Cor. A.1 (closedness): no base points."""
    found = res["base_locus"]
    report.add(
        Check(
            "Cor. A.1: phi = 0 only if A = 0 or V = 0 (no base points)",
            str(size),
            f"{method}: radical of the base locus ideal",
            f"rad(B) = ideal of {{{theory.base_locus.replace(' or ', ' = 0} cup {')} = 0}}",
            f"rad(B) = ideal of {{{found.replace(' or ', ' = 0} cup {')} = 0}}",
            found == theory.base_locus,
            float(res["base_seconds"]),
            topic=Claim.COR_A1,
            size=size.triple,
            techniques=("Macaulay2 (radical of the base locus)",),
        )
    )


def _orbit_check(
    report: Report, size: Size, theory: Theory, job: _Job, res: dict[str, Any], method: str, seconds: float
) -> None:
    """The singular locus orbit by orbit, by the exact Jacobian rank of the closure's equations."""
    evals = {p["name"]: p for p in res["points"]}
    c = res["codimension"]
    rows, bad, stated = [], [], []
    for name, (orb, f) in job.orbits.items():
        ev = evals[name]
        singular = ev["jacobian_rank"] < c
        pred, source = theory.singular(size, f)
        rows.append(
            {
                "orbit": orb.label,
                "jacobian_rank": ev["jacobian_rank"],
                "codimension": c,
                "singular": singular,
                "in_rank_one_closure": ev["in_rank_one_closure"],
                "predicted": pred,
            }
        )
        if singular != pred:
            bad.append(
                f"orbit {orb.label}: Jacobian rank {ev['jacobian_rank']} vs codimension {c} "
                f"({'singular' if singular else 'smooth'}), predicted {'singular' if pred else 'smooth'} [{source}]"
            )
        if singular != ev["in_rank_one_closure"]:
            stated.append(orb.label)
    claim_eq = (
        "rad(Sing) = I(closure of rank-one image)"
        if not stated
        else f"Sing differs from the rank-one closure on {stated}"
    )
    literal = res["literal"]
    extra = ""
    if literal is not None:
        extra = f"; literal radical(singularLocus) == rank-one closure: {literal[0]} ({float(literal[1]):.2f} s)"
    report.add(
        Check(
            "singular locus (symbolic): Sing = predicted union of orbits",
            str(size),
            f"{method}: exact Jacobian rank of the closure's equations at each GL-orbit representative"
            + (" + literal radical comparison" if literal is not None else ""),
            "every orbit as predicted",
            f"{len(rows)} nonzero orbits, {sum(r['singular'] for r in rows)} singular; {claim_eq}{extra}"
            + (f"; differs: {bad[0]}" if bad else ""),
            not bad and (literal is None or literal[0] == (not stated)),
            seconds,
            {"orbits": rows, "counterexamples": bad},
            topic=Claim.THM_34_SINGULAR,
            size=size.triple,
            techniques=("Macaulay2 (Jacobian of the closure's equations at every orbit)",),
        )
    )


def _sample_check(report: Report, size: Size, theory: Theory, job: _Job, res: dict[str, Any], method: str) -> None:
    """The Jacobian rank of the closure's equations at one random point per stratum."""
    evals = {p["name"]: p for p in res["points"]}
    c = res["codimension"]
    bad = []
    for name, A, V in job.samples:
        ev = evals[f"sample {name}"]
        pred, source = theory.singular(size, features(A, V))
        singular = ev["jacobian_rank"] < c
        if singular != pred or not ev["on_closure"]:
            bad.append(
                f"{name}: A={A.tolist()}, V={V.tolist()}: Jacobian rank {ev['jacobian_rank']} vs {c}, "
                f"predicted {pred} [{source}]"
            )
    report.add(
        Check(
            "implicit equations: Jacobian rank = codim exactly at predicted smooth points",
            str(size),
            f"{method}: exact rank over QQ at one random sample per stratum",
            "rank = codim iff smooth",
            f"{len(job.samples)} samples" + (f"; differs: {bad[0]}" if bad else ", all as predicted"),
            not bad,
            float(res["points_seconds"]),
            {"counterexamples": bad},
            topic=Claim.THM_34_SINGULAR,
            size=size.triple,
            techniques=("Macaulay2 (Jacobian of the closure's equations at random points)",),
        )
    )


def _fiber_check(report: Report, size: Size, theory: Theory, res: dict[str, Any], method: str) -> None:
    """Thm. 3.2: the minimal primes of the fiber ideal at each fiber point."""
    got = {fb["name"]: [tuple(x) for x in fb["components"]] for fb in res["fibers"]}
    expect = theory.fiber_components(size)
    ok = all(k in got and sorted(got[k]) == sorted(v) for k, v in expect.items())
    report.add(
        Check(
            "Thm. 3.2: fibers (minimal primes: rescaling line; pair and swap; A = 0 or V = 0)",
            str(size),
            f"{method}: minimal primes of the fiber ideal",
            "; ".join(f"{k}: {v}" for k, v in expect.items()),
            "; ".join(f"{k}: {v}" for k, v in got.items()),
            ok,
            float(res["fibers_seconds"]),
            topic=Claim.THM_32,
            size=size.triple,
            techniques=("Macaulay2 (minimal primes of fibers)",),
        )
    )
