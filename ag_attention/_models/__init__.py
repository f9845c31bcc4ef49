"""The mathematics of the model: coordinates, parametrizations, formulas with their hypotheses, proven bounds.

The front door of :mod:`ag_attention._models`: other rooms import these names from here (tests/test_layout.py).
It sits below the exact algorithms (:mod:`ag_attention._exact`) and uses only python-flint's types
(:mod:`ag_attention._flint`).
"""

from .bounds import UpperBound, best_upper_bound, one_layer_bounds, upper_bounds
from .coordinates import (
    COORDINATES,
    ReducedKey,
    check_one_layer,
    full_coordinates,
    full_structure,
    labels,
    named_labels,
    one_layer_problem,
    quadratic_monomials,
    reduced_coordinates,
    reduced_count,
    reduced_keys,
    reduced_names,
    reduced_terms,
)
from .formulas import (
    Expectation,
    Hypothesis,
    Proven,
    cor33,
    cor38,
    effective_architecture,
    expected_dimension,
    new_directions_per_sample,
    prove,
    symmetry_count,
)
from .orbits import Orbit, orbit_representatives
from .parametrization import PARAMETERS, Parametrization, laplace_determinant
from .symmetries import attention_algebra, symmetry_generators, symmetry_tangents

__all__ = [
    "COORDINATES",
    "Expectation",
    "Hypothesis",
    "Orbit",
    "PARAMETERS",
    "Parametrization",
    "Proven",
    "ReducedKey",
    "UpperBound",
    "best_upper_bound",
    "check_one_layer",
    "cor33",
    "cor38",
    "effective_architecture",
    "expected_dimension",
    "full_coordinates",
    "full_structure",
    "labels",
    "laplace_determinant",
    "named_labels",
    "new_directions_per_sample",
    "one_layer_bounds",
    "one_layer_problem",
    "orbit_representatives",
    "prove",
    "quadratic_monomials",
    "reduced_coordinates",
    "reduced_count",
    "reduced_keys",
    "reduced_names",
    "reduced_terms",
    "symmetry_count",
    "symmetry_generators",
    "symmetry_tangents",
    "attention_algebra",
    "upper_bounds",
]
