"""Degrees of one-layer neuromanifolds: the closed formula and its msolve counting certificate.

* :mod:`.degree`: ``deg M`` from the Segre product and a finite linear
  projection (docs/math/degree.md), exact integers, with hypotheses;
* :mod:`.certificate`: the square system over GF(p) whose number of solutions
  is ``deg M`` times the generic fiber, and its count;
* :mod:`.msolve`: locating and running msolve (own process group, timeout).
"""

from .closure_degree import METHODS, DegreeResult, degree
from .completeness import certify_completeness
from .degree import DegreeFormula, degree_formula, determinantal_degree, symmetric_determinantal_degree
from .equations import EQUATION_METHODS, closure_equations
from .implicitize import Implicitization, implicitize
from .interpolation import LowDegreeEquations, low_degree_equations
from .lifting import crt, rational_reconstruction
from .msolve import count_solutions, msolve_version, run_msolve
from .msolve_text import format_input
from .multidegrees import Multidegree, torus_weights

__all__ = [
    "DegreeFormula",
    "degree_formula",
    "determinantal_degree",
    "symmetric_determinantal_degree",
    "DegreeResult",
    "EQUATION_METHODS",
    "Implicitization",
    "LowDegreeEquations",
    "METHODS",
    "Multidegree",
    "certify_completeness",
    "closure_equations",
    "count_solutions",
    "crt",
    "degree",
    "format_input",
    "implicitize",
    "low_degree_equations",
    "msolve_version",
    "rational_reconstruction",
    "run_msolve",
    "torus_weights",
]
