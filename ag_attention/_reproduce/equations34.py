"""Theorem 3.4 by the closure's own equations, at sizes Macaulay2's kernel does not reach.

For each size, all minimal generators of degree ``<= k`` of the ideal ``I`` of
the closure ``M`` come from :func:`ag_attention._algebra.interpolation.low_degree_equations`
(exact, verified by substitution).  Call them ``J``; ``J`` is contained in
``I`` whether or not it generates it.  At a point ``x`` of ``M``:

* ``rank Jac_J(x) <= rank Jac_I(x) <= codim M`` (the rows of ``Jac_J(x)`` are
  combinations of those of ``Jac_I(x)``, because ``x`` is a zero of ``I``), and
  the rank over GF(p) of the integer point's Jacobian is at most the rank over QQ.
  So **a GF(p) rank equal to ``codim M`` proves that ``x`` is a smooth point**
  (its Zariski tangent space has dimension ``dim M``), complete ideal or not.
* A rank below ``codim M`` proves a singular point only when ``J`` generates
  ``I`` and the rank is over QQ. Where the equations are certified complete
  (:func:`ag_attention._algebra.completeness.certify_completeness`, sizes in
  ``CERTIFY_COMPLETENESS``), the exact rank over QQ is computed and a predicted
  singular point is *proven* singular. Elsewhere it is reported as
  *consistent* with a predicted singular point, whose singularity is
  certified pointwise (:mod:`ag_attention._exact.onelayer`).

``GL_d x GL_d x GL_{d'}`` acts linearly on the coordinates and preserves ``M``,
so one representative per orbit (:func:`ag_attention._models.orbits.orbit_representatives`)
decides every point.  A check fails when an orbit predicted singular is proven
smooth, or when one predicted smooth is not proven smooth by the equations.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from .._algebra import LowDegreeEquations, certify_completeness, low_degree_equations
from .._architecture import Architecture
from .._exact import DEFAULT_PRIME, linalg, reduced_point
from .._models import Orbit, orbit_representatives
from .claims import Claim
from .report import Check, Report, Table

__all__ = [
    "EQUATION_GRID",
    "FULL_EQUATION_GRID",
    "QUICK_EQUATION_GRID",
    "CERTIFY_COMPLETENESS",
    "jacobian_rank_at",
    "jacobian_rank_rational",
    "equation_checks",
]

#: (d, d', a, k): sizes past Macaulay2's kernel (> 300 s) and the degree of the equations used; at
#: degree <= 3 the orbits rank A = 1, rank V = 2 of (3, 2, 3) have rank 20 < 22 and those of (2, 4, 2)
#: rank 12 < 13: they need the quartics
#: measured here: (3,2,3) 50 s, (3,2,2) 66 s, (2,4,2) 5 s; (4,1,4) (2,900 generators, 71 s) with --full
EQUATION_GRID = ((3, 2, 3, 4), (3, 2, 2, 4), (2, 4, 2, 4))
FULL_EQUATION_GRID = EQUATION_GRID + ((4, 1, 4, 4),)
QUICK_EQUATION_GRID = ((2, 4, 2, 4),)
#: sizes whose equations are certified complete in seconds here (the leading-ideal test: (2, 4, 2) 11 s); there a
#: rank over QQ below codim M *proves* a point singular.  (3, 2, 3) and (3, 2, 2): the elimination runs out of memory
CERTIFY_COMPLETENESS = frozenset({(2, 4, 2), (2, 2, 2)})


def _jacobian_rows(gens: list[dict[tuple[int, ...], Fraction]], x: list[int], n: int) -> np.ndarray:
    """The Jacobian of ``gens`` at the integer point ``x``, exactly (an object array of Fractions)."""
    rows = np.zeros((len(gens), n), dtype=object)
    for r, g in enumerate(gens):
        for mono, c in g.items():
            for v in set(mono):
                rest = list(mono)
                rest.remove(v)
                value = c * mono.count(v)
                for w in rest:
                    value *= x[w]
                rows[r, v] += value
    return rows


def jacobian_rank_at(
    gens: list[dict[tuple[int, ...], Fraction]], x: list[int], n: int, prime: int = DEFAULT_PRIME
) -> int:
    """Rank over GF(p) of the Jacobian of ``gens`` (monomial -> coefficient, variables ``0..n-1``) at ``x``."""
    rows = _jacobian_rows(gens, x, n)
    residues = np.array(
        [[int(q.numerator) * pow(int(q.denominator), -1, prime) % prime for q in map(Fraction, row)] for row in rows],
        dtype=np.int64,
    ).reshape(len(gens), n)
    return linalg.rank(residues, prime)


def jacobian_rank_rational(gens: list[dict[tuple[int, ...], Fraction]], x: list[int], n: int) -> int:
    """Exact rank over QQ of the same Jacobian (what decides singularity when the ideal is complete)."""
    return linalg.rank_rational(_jacobian_rows(gens, x, n).tolist())


def _orbit_check(
    report: Report,
    size: tuple[int, int, int, int],
    eqs: LowDegreeEquations,
    gens: list[dict[tuple[int, ...], Fraction]],
    codim: int,
    orbit: Orbit,
    singular_rule: Callable[[int, int, int, Orbit], tuple[bool, str]],
) -> None:
    """One orbit of one size: proven smooth, consistent with (or, complete ideal: proven) singular."""
    d, e, a, k = size
    complete = eqs.certified_complete
    n = len(eqs.variables)
    t1 = time.perf_counter()
    x = [int(v) for v in reduced_point(orbit.A.tolist(), orbit.V.tolist())]
    r = jacobian_rank_at(gens, x, n)
    singular, why = singular_rule(d, e, a, orbit)
    smooth_proven = r == codim
    rank_qq = None
    if singular:
        passed = not smooth_proven
        observed = (
            f"rank {r} < codim {codim}: consistent (singularity itself is certified pointwise)"
            if passed
            else f"rank {r} = codim: proven smooth, predicted singular"
        )
        if passed and complete:  # the whole ideal: the rank over QQ decides
            rank_qq = jacobian_rank_rational(gens, x, n)
            passed = rank_qq < codim
            observed = (
                f"rank over QQ {rank_qq} < codim {codim} with the certified complete ideal: proven singular"
                if passed
                else f"rank over QQ {rank_qq} = codim: smooth"
            )
    else:
        passed = smooth_proven
        observed = (
            f"rank {r} = codim {codim}: smooth (proven)"
            if passed
            else f"rank {r} < codim {codim}: not proven smooth by the equations of degree <= {k}"
        )
    report.add(
        Check(
            "Thm. 3.4 by the closure's equations: singular iff rank A <= 1 and rank V <= 1 (refined: " + why + ")",
            f"d={d}, d'={e}, a={a}, orbit {orbit.label}",
            f"Jacobian over GF(p) of all {len(gens)} minimal generators of degree <= {k} "
            "(interpolation, verified over QQ"
            + ("; certified complete: the rank over QQ decides singular points)" if complete else ")"),
            "singular" if singular else "smooth",
            observed,
            passed,
            time.perf_counter() - t1,
            {
                "rank": r,
                "rank_qq": rank_qq,
                "codim": codim,
                "generators": len(gens),
                "max_degree": k,
                "complete": complete,
            },
            topic=Claim.THM_34_SINGULAR,
            size=(d, e, min(a, d)),
            techniques=("equations of the closure by interpolation (Jacobian at every orbit)",),
        )
    )


def equation_checks(
    report: Report,
    grid: tuple[tuple[int, int, int, int], ...],
    singular_rule: Callable[[int, int, int, Orbit], tuple[bool, str]],
    dimension: Callable[[int, int, int], int],
    seed: int = 0,
    say: Callable[[str], None] = lambda s: None,
) -> dict[tuple[int, int, int], LowDegreeEquations]:
    """One check per orbit of each size of ``grid``; a table of the equations found."""
    found = {}
    rows: list[list[Any]] = []
    for d, e, a, k in grid:
        say(f"equations: d={d}, d'={e}, a={a}, degree <= {k}")
        t0 = time.perf_counter()
        eqs = low_degree_equations(Architecture.single_layer(d, e, a, tokens=2), max_degree=k, seed=seed)
        if (d, e, a) in CERTIFY_COMPLETENESS:
            certify_completeness(eqs, timeout=120)
        found[(d, e, a)] = eqs
        gens = [g for D in sorted(eqs.blocks) for g in eqs.generators_of_degree(D)]
        codim = len(eqs.variables) - dimension(d, e, a)
        rows.append(
            [
                d,
                e,
                a,
                len(eqs.variables),
                codim,
                k,
                ", ".join(f"{c} of degree {D}" for D, c in eqs.generator_count.items() if c),
                eqs.certified_complete,
                round(eqs.seconds, 1),
            ]
        )
        for orbit in orbit_representatives(d, e, a):
            if not orbit.zero:
                _orbit_check(report, (d, e, a, k), eqs, gens, codim, orbit, singular_rule)
        say(f"  {len(gens)} equations, {time.perf_counter() - t0:.1f} s")
    report.tables.append(
        Table(
            "Equations of the closure by interpolation (no Macaulay2)",
            ["d", "d'", "a", "coordinates", "codim", "degree <=", "minimal generators", "complete", "seconds"],
            rows,
            formats={"complete": lambda v, row: "certified" if v else "up to degree k"},
            source=None,
        )
    )
    return found
