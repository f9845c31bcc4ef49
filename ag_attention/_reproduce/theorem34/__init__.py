"""Reproduce Theorem 3.4 (and Thm. 3.2, Cor. 3.3, Lemma A.3, Cor. A.1, Cor. A.6).

One lightning layer ``(d, d', a)``.  Two kinds of evidence, both exact:

*Macaulay2* (sizes where the closure is computable; :mod:`.symbolic`): the
ideal of the Zariski closure, its dimension; the base locus (Cor. A.1); the
singular locus, decided orbit by orbit: the group ``GL_d x GL_d x GL_{d'}``
acts on the closure with finitely many orbits (the pairs ``(A, V)`` are
representations of an A_3 quiver), the singular locus and the closure of the
rank-one image are unions of orbits, so they are equal iff every orbit
representative is singular (exact Jacobian rank of the implicit equations
below the codimension) exactly when it satisfies the equations of the
rank-one closure; for ``(2, 1)`` also the literal ``radical singularLocus ==
...``; fibers decomposed into minimal primes (Thm. 3.2).

*Parametrization only* (every size, up to ``d = 8``; :mod:`.pointwise`):
exact certificates of :mod:`ag_attention._exact.onelayer` at every orbit
representative and at random samples of each stratum (:mod:`.samplers`); the
differential's rank drop (Lemma A.3); the conjugate construction of Cor. A.6;
dimensions by the GF(p) engine.

Predictions form a :class:`Theory` (:mod:`.predictions`), so a wrong one (say
"singular when rank A <= 1") makes the checks fail and name the
counterexample.  The sizes are in :mod:`.grids`, the order of the parts in
:mod:`.run`, the summing-up parts of the report in :mod:`.report`.  The
mathematics behind each check: docs/math/geometry.md.
"""

from ..equations34 import EQUATION_GRID, FULL_EQUATION_GRID, QUICK_EQUATION_GRID
from .grids import DEFAULT_MAX_M2_SIZE, M2_CANDIDATES, M2_GRID, POINT_GRID, QUICK_M2_GRID, QUICK_POINT_GRID, Size
from .predictions import THEOREM, Features, Theory, features, stated_rule
from .run import Options, reproduce_theorem_34
from .samplers import conjugate_data, conjugate_point, strata_samples
from .symbolic import m2_job_body, m2_result_schema, raise_for_m2_errors

__all__ = [
    "Size",
    "Features",
    "features",
    "Theory",
    "THEOREM",
    "stated_rule",
    "M2_GRID",
    "M2_CANDIDATES",
    "DEFAULT_MAX_M2_SIZE",
    "Options",
    "POINT_GRID",
    "QUICK_M2_GRID",
    "QUICK_POINT_GRID",
    "EQUATION_GRID",
    "FULL_EQUATION_GRID",
    "QUICK_EQUATION_GRID",
    "conjugate_data",
    "conjugate_point",
    "strata_samples",
    "m2_job_body",
    "m2_result_schema",
    "raise_for_m2_errors",
    "reproduce_theorem_34",
]
