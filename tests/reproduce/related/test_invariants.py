"""Alexandr-Duan-Montúfar's invariants rebuilt from their definitions (ag_attention._reproduce.related.invariants).

The full sizes are marked ``slow`` (``AG_ATTENTION_SLOW_TESTS=1``); every test can fail: a wrong member, map or
count makes it fail (the "wrong" tests show it).
"""

from fractions import Fraction

import pytest

from ag_attention import Architecture, InvalidArgumentError
from ag_attention._exact import linalg
from ag_attention._models.coordinates import reduced_coordinates
from ag_attention._reproduce.related.invariants import (
    EXPLAIN_SIZES,
    FAMILIES,
    FAMILY_SIZES,
    OUTSIDE,
    QUICK_FAMILY_SIZES,
    T1_VALUES,
    check_coordinate_map,
    check_family,
    explain_generators,
    family_members,
    lie_certificate,
    linear_span,
    on_image,
    reduced_against_m2,
    reduced_form,
    t1_against_m2,
    their_coordinates,
    their_ring,
)
from tests.helpers import slow_unless_asked


# ------------------------------------------------------------------ the coordinate map
@pytest.mark.parametrize("size", [(2, 2, 1, 2), (3, 2, 1, 3), (3, 3, 2, 1), (4, 3, 2, 4), (3, 1, 1, 3), (4, 1, 1, 2)])
def test_their_coordinates_are_our_reduced_ones_scaled(size):
    m = check_coordinate_map(*size)
    assert m["disagree"] == [] and m["agree"] == m["labels"] > 0
    # the divisors are the numbers of terms: 1 and 2 for the cross coefficients, 1, 3, 6 for the others
    assert set(m["divisors"]) <= {1, 2, 3, 6}


def test_the_map_needs_the_transpose():
    # their A is the transpose of ours: without the transpose the map is wrong, and the check sees it
    th = their_coordinates(3, 2, 1, 3)
    red = reduced_coordinates(th.A, [th.V])  # A not transposed: wrong
    wrong = [
        lab
        for lab, val in th.values.items()
        if sum((red[i] * linalg.rational(q) for i, q in reduced_form(lab, 3).items()), th.ring.constant(0)) != val
    ]
    assert len(wrong) > 0
    assert reduced_form(((1, 2), (2, 2), (3, 1)), 3) == {13: Fraction(1, 2)}


def test_linear_relations_span_every_linear_relation():
    for d, t in ((3, 2), (3, 3), (2, 4)):
        s = linear_span(d, t)
        assert s["rank"] == s["kernel"] > 0
    # and pulled back to our coordinates every one of them is zero
    assert all(p.is_zero() for p in family_members("linear", 3, 3, ring="reduced"))


# ------------------------------------------------------------------ the families on the image
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_family_vanishes_on_the_image_at_a_representative_size(name):
    d, t, a = QUICK_FAMILY_SIZES[name][0]
    c = check_family(name, d, t, a)
    assert c.nonzero > 0 and c.vanishing == c.nonzero and c.passed


def test_three_sizes_per_family_at_least():
    assert all(len(s) >= 3 for s in FAMILY_SIZES.values())
    assert all(len(s) >= 3 for s in QUICK_FAMILY_SIZES.values())
    assert (3, 2, 3) in FAMILY_SIZES["cubics"] and (3, 2, 3) in FAMILY_SIZES["resultants"]


@slow_unless_asked
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_family_vanishes_on_the_image_at_every_size(name):
    for d, t, a in FAMILY_SIZES[name]:
        c = check_family(name, d, t, a)
        assert c.nonzero > 0 and c.passed, (name, d, t, a, c)


def test_a_wrong_member_does_not_vanish():
    R, y = their_ring(3, 2)
    members = family_members("cubics", 3, 2, 3)
    assert all(on_image(members, 3, 2, 3))
    # change one coordinate of one member: it leaves the ideal
    wrong = members[0] + y[((1, 1), (1, 2), (1, 2))] * y[((2, 1), (2, 2), (2, 2))] * y[((3, 1), (3, 2), (3, 2))]
    assert on_image([wrong], 3, 2, 3) == [False]
    # minors one size too small are not invariants either (rank A <= 2: the 3-minors vanish, the 2-minors do not)
    from ag_attention._reproduce.related.invariants import low_rank_minors

    small = low_rank_minors(3, 2, 1, 1, y.__getitem__)  # the 2-minors
    assert not all(on_image(small, 3, 2, 2))
    assert all(on_image(low_rank_minors(3, 2, 1, 2, y.__getitem__), 3, 2, 2))


def test_a_family_outside_its_hypothesis_is_not_an_invariant():
    # Lie minors at d = 2: every binary cubic is a quadric times a line, nothing vanishes
    for d, t, a in OUTSIDE["t1-lie"]:
        c = check_family("t1-lie", d, t, a)
        assert c.nonzero == 4 and c.vanishing == 0 and not c.passed


def test_lie_certificate():
    for d in (3, 4):
        c = lie_certificate(d)
        assert c["depends_on_sym_A_only"] and c["product_zero"] and c["kernel_vector_nonzero"] and c["trace_zero"]
    with pytest.raises(InvalidArgumentError, match="d=2"):
        lie_certificate(2)


def test_bad_sizes_are_named():
    with pytest.raises(InvalidArgumentError, match="d=0"):
        check_family("cubics", 0, 2, 1)
    with pytest.raises(InvalidArgumentError, match="j=3"):
        check_coordinate_map(3, 2, 3)
    with pytest.raises(InvalidArgumentError, match="family='quintics'"):
        family_members("quintics", 3, 2)
    with pytest.raises(InvalidArgumentError, match="t1-lie"):
        family_members("t1-lie", 3, 2)
    with pytest.raises(InvalidArgumentError, match="a=0"):
        check_family("cubics", 3, 2, 0)


# ------------------------------------------------------------------ against the minimal generators
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


# ------------------------------------------------------------------ multi-head
