"""Degrees of one-layer neuromanifolds: the closed formula and its msolve counting certificate.

* :mod:`.degree`: ``deg M`` from the Segre product and a finite linear
  projection (docs/math/degree.md), exact integers, with hypotheses;
* :mod:`.certificate`: the square system over GF(p) whose number of solutions
  is ``deg M`` times the generic fiber, and its count;
* :mod:`.msolve`: locating and running msolve (own process group, timeout).
"""

from .degree import DegreeFormula, degree_formula, determinantal_degree, symmetric_determinantal_degree

__all__ = ["DegreeFormula", "degree_formula", "determinantal_degree", "symmetric_determinantal_degree"]
