"""Their families against the package's minimal generators (ag_attention._reproduce.related.explain).

The full sizes are marked ``slow`` (``AG_ATTENTION_SLOW_TESTS=1``).
"""

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.related.explain import explain_generators
from ag_attention._reproduce.related.invariants import EXPLAIN_SIZES
from tests.helpers import slow_unless_asked


def test_default_size_cubics_explained():
    e = explain_generators(3, 3, 3)
    assert e.generator_count == {3: 20} and e.unexplained == {3: 0} and e.generates_up_to == 3
    assert e.generators_exact and e.consistent
    cubic_rows = [r for r in e.rows if r["degree"] == 3]
    assert sum(r["by_family"]["cubics"] for r in cubic_rows) == 10
    assert sum(r["by_family"]["syzygies"] for r in cubic_rows) == 10
    with pytest.raises(InvalidArgumentError, match="max_degree=0"):
        explain_generators(3, 3, 0)
    with pytest.raises(InvalidArgumentError, match="'t1-lie'"):
        explain_generators(3, 3, 3, families=["t1-lie"])


@slow_unless_asked
def test_default_size_every_generator_explained():
    e = explain_generators(3, 3, 4)
    assert e.generator_count == {3: 20, 4: 90}
    assert e.unexplained == {3: 0, 4: 0} and e.generates_up_to == 4
    assert e.generators_exact and e.consistent
    # each family alone explains less: the cross-column cubics 10 of the 20 cubics, the syzygies the other 10
    cubic_rows = [r for r in e.rows if r["degree"] == 3]
    assert sum(r["by_family"]["cubics"] for r in cubic_rows) == 10
    assert sum(r["by_family"]["syzygies"] for r in cubic_rows) == 10


def test_fewer_families_leave_generators_unexplained():
    # without the context syzygies, 10 of the 20 cubics of (3,1,3) are not explained: the count can fail
    e = explain_generators(3, 3, 3, families=["cubics"])
    assert e.unexplained == {3: 10}


def test_new_cubics_at_d4():
    e = explain_generators(4, 4, 3)
    assert e.generator_count == {3: 400} and e.unexplained == {3: 200} and e.generates_up_to == 2
    assert all(r["representative"][0] == [1, 1, 1, 0] for r in e.rows if r["unexplained"])


@slow_unless_asked
def test_every_explained_size():
    for d, a, k in EXPLAIN_SIZES:
        e = explain_generators(d, a, k)
        assert e.generators_exact and e.consistent
        assert (e.unexplained.get(3, 0) > 0) == (d == 4 and a >= 3), (d, a, e.unexplained)
        assert sum(e.unexplained.values()) == e.unexplained.get(3, 0)
