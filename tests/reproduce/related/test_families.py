"""Their families on the image: the registry, the members, the checks (ag_attention._reproduce.related.families).

The full sizes are marked ``slow`` (``AG_ATTENTION_SLOW_TESTS=1``); every test can fail: a wrong member makes it
fail (the "wrong" tests show it).
"""

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.related.constructions import low_rank_minors
from ag_attention._reproduce.related.coordinates import their_ring
from ag_attention._reproduce.related.families import FAMILIES, check_family, family_members, linear_span, on_image
from ag_attention._reproduce.related.invariants import FAMILY_SIZES, OUTSIDE, QUICK_FAMILY_SIZES
from tests.helpers import slow_unless_asked


def test_linear_relations_span_every_linear_relation():
    for d, t in ((3, 2), (3, 3), (2, 4)):
        s = linear_span(d, t)
        assert s["rank"] == s["kernel"] > 0
    # and pulled back to our coordinates every one of them is zero
    assert all(p.is_zero() for p in family_members("linear", 3, 3, ring="reduced"))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_family_vanishes_on_the_image_at_a_representative_size(name):
    d, t, a = QUICK_FAMILY_SIZES[name][0]
    c = check_family(name, d, t, a)
    assert c.nonzero > 0 and c.vanishing == c.nonzero and c.passed


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
    small = low_rank_minors(3, 2, 1, 1, y.__getitem__)  # the 2-minors
    assert not all(on_image(small, 3, 2, 2))
    assert all(on_image(low_rank_minors(3, 2, 1, 2, y.__getitem__), 3, 2, 2))


def test_a_family_outside_its_hypothesis_is_not_an_invariant():
    # Lie minors at d = 2: every binary cubic is a quadric times a line, nothing vanishes
    for d, t, a in OUTSIDE["t1-lie"]:
        c = check_family("t1-lie", d, t, a)
        assert c.nonzero == 4 and c.vanishing == 0 and not c.passed


def test_bad_families_are_named():
    with pytest.raises(InvalidArgumentError, match="d=0"):
        check_family("cubics", 0, 2, 1)
    with pytest.raises(InvalidArgumentError, match="family='quintics'"):
        family_members("quintics", 3, 2)
    with pytest.raises(InvalidArgumentError, match="t1-lie"):
        family_members("t1-lie", 3, 2)
    with pytest.raises(InvalidArgumentError, match="a=0"):
        check_family("cubics", 3, 2, 0)
    with pytest.raises(InvalidArgumentError, match="ring='ours'"):
        family_members("cubics", 3, 2, ring="ours")
