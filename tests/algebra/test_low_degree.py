"""LowDegreeEquations (ag_attention._algebra.low_degree): the result of the interpolation in notebooks and tables."""

import pytest

from ag_attention import Architecture
from ag_attention._algebra.interpolation import low_degree_equations


def test_equations_in_a_notebook_and_a_table():
    from ag_attention._results import flatten

    r = low_degree_equations(Architecture.single_layer(2, 1, 1), max_degree=3)
    assert repr(r) == "LowDegreeEquations(d=2, d'=1, a=1: generators by degree {1: 0, 2: 3, 3: 0}, primes 3, verified)"
    md = r._repr_markdown_()
    assert md.startswith(str(r) + "\n\n| field | value |\n|---|---|\n")
    assert "| generator_count.2 | 3 |" in md and "| verified | true |" in md
    pytest.importorskip("pandas")
    f = r.to_frame()
    assert len(f) == 1 and list(f.columns) == list(flatten(r.to_dict()))
    assert f.iloc[0]["generator_count.2"] == 3 and len(f.iloc[0]["generators.2"]) == 3
