"""The degree's counting certificate (ag_attention._algebra.certificate): the count is the degree times the generic fiber."""

import pytest

from ag_attention._algebra.certificate import build_system, certify_degree, m2_script
from ag_attention._errors import InvalidArgumentError


@pytest.mark.parametrize("size, tokens", [
    ((2, 1, 2), 2), ((2, 2, 2), 2), ((3, 1, 2), 2), ((3, 1, 3), 2), ((2, 3, 2), 2),
    ((2, 1, 1), 2), ((3, 1, 1), 2),             # d' = 1, a = 1: count = 2 * degree
    ((2, 1, 1), 1), ((3, 1, 1), 1), ((3, 1, 2), 1), ((2, 2, 1), 1),  # one token (count = 3 * degree for s = 2)
])
def test_count_equals_degree_times_fiber(msolve, size, tokens):
    c = certify_degree(*size, tokens=tokens, timeout=60)
    assert c.count == c.formula.degree * c.formula.fiber, str(c)
    assert c.agrees


def test_second_prime_seed_and_normalization(msolve):
    for kwargs in ({"prime": 65521, "seed": 1}, {"normalization": "affine", "seed": 2},
                   {"method": "parametrization", "prime": 65521, "seed": 3}, {"linear_algebra": 2, "prime": 32003, "seed": 4}):
        c = certify_degree(3, 1, 1, timeout=60, **kwargs)
        assert c.count == 90, (kwargs, str(c))
    c = certify_degree(2, 1, 1, method="parametrization", prime=1073741789, timeout=60)
    assert c.solutions.distinct == c.count == 6  # the 6 solutions are distinct (reduced)
    with pytest.raises(InvalidArgumentError, match="2\\^30"):
        certify_degree(2, 1, 1, method="parametrization", timeout=60)  # 2^31 - 1: FGLM refuses it


def test_full_coordinates_count_the_same(msolve):
    c = certify_degree(2, 1, 1, tokens=3, coords="full", timeout=60)
    assert c.count == 6 and c.system.ambient > build_system(2, 1, 1).ambient


@pytest.mark.m2
def test_macaulay2_counts_the_same_system(m2_local):
    sy = build_system(2, 1, 1, prime=32003)
    for strategy in ("default", "F4"):
        out = m2_local.run(m2_script(sy, strategy), timeout=120, with_package=False)
        assert out.stdout.strip().splitlines()[-1] == "6"
