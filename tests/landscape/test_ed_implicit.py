"""The implicit route of the ED degree of one layer (Macaulay2's closure ideal and its Lagrange conditions, counted
by msolve), with the real Macaulay2: the counts in the weights, and one token's full coordinates."""

import pytest

from ag_attention import Architecture
from ag_attention._landscape.ed import ed_degree
from ag_attention._landscape.ed_implicit import M2_PRIME, implicit_count

LAYER = Architecture.single_layer(2, 1, None, tokens=2)


@pytest.mark.m2
@pytest.mark.parametrize("metric, expected", [("euclidean", 6), ("generic", 14)])
def test_macaulay2_agrees_on_the_implicit_side(m2_local, metric, expected):
    r = ed_degree(LAYER, metric=metric, method="m2", backend="local", cache=False, timeout=300)
    assert (r.method, r.ed_degree, r.prime) == ("m2", expected, 32003)
    assert "Macaulay2" in r.certificate


@pytest.mark.m2
def test_one_token_on_the_implicit_side(m2_local):
    # t = 1: the full coordinates (the cubics' coefficients); (2,1,2) fills its space (every binary cubic is
    # (x^T A x)(v . x) for some A, v: ED degree 1), (2,2,2) has codimension 2
    one = Architecture.single_layer(2, 1, None, tokens=1)
    assert ed_degree(one, metric="euclidean", backend="local").ed_degree == 1
    two = Architecture.single_layer(2, 2, None, tokens=1)
    r = ed_degree(two, metric="generic", backend="local")
    assert (r.method, r.ed_degree) == ("m2", 83) and "dimension 6, codimension 2, degree 10" in r.notes[-1]
    assert ed_degree(two, metric="euclidean", backend="local").ed_degree == 19


@pytest.mark.m2
def test_implicit_count_gives_the_value_its_form_and_the_closure(m2_local):
    value, description, closure = implicit_count(LAYER, "euclidean", None, 0, 300.0, "local", False)
    assert value == 6 and description.startswith("identity on the reduced coordinates")
    assert closure["codimension"] == 1 and M2_PRIME == 32003
