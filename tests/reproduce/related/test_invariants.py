"""Alexandr-Duan-Montúfar's invariants against Macaulay2 and in the report (ag_attention._reproduce.related.invariants).

The modules it uses have their own tests (test_coordinates.py, test_constructions.py, test_families.py,
test_explain.py); the full sizes are marked ``slow`` (``AG_ATTENTION_SLOW_TESTS=1``).
"""

import pytest

from ag_attention import Architecture
from ag_attention._reproduce.related.invariants import (
    FAMILY_SIZES,
    QUICK_FAMILY_SIZES,
    T1_VALUES,
    reduced_against_m2,
    t1_against_m2,
)
from tests.helpers import slow_unless_asked


def test_three_sizes_per_family_at_least():
    assert all(len(s) >= 3 for s in FAMILY_SIZES.values())
    assert all(len(s) >= 3 for s in QUICK_FAMILY_SIZES.values())
    assert (3, 2, 3) in FAMILY_SIZES["cubics"] and (3, 2, 3) in FAMILY_SIZES["resultants"]


def test_t1_values():
    from ag_attention import degree, dimension

    for (d, e, a), (dim, deg) in T1_VALUES.items():
        arch = Architecture((d, e), (a,), tokens=1)
        r = dimension(arch)
        assert (r.dimension, r.certified) == (dim, True)
        assert degree(arch).degree == deg


@pytest.mark.m2
def test_macaulay2_kernel_of_two_dimensions(m2_local):
    r = reduced_against_m2(2, 2, 300)
    assert r["generators"] == {4: 1} and r["explained"] == {"4": 1} and r["members_in_ideal"]
    r = reduced_against_m2(2, 1, 300)
    assert r["generators"] == {2: 3} and r["explained"] == {"2": 3}


@pytest.mark.m2
@slow_unless_asked
def test_t1_ideals_against_macaulay2(m2_local):
    r = t1_against_m2(3, 900)  # about 190 s
    assert (r["dimension"], r["degree"], r["generators"]) == (8, 21, {8: 35})
    assert r["explained"] == {"8": 35} and r["members_in_ideal"]
    r = t1_against_m2(1, 900)
    assert (r["dimension"], r["degree"], r["generators"]) == (7, 15, {4: 35})
    assert r["explained"] == {"4": 0}
