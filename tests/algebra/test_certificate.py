"""The degree's counting certificate (ag_attention._algebra.certificate): the count is the degree times the generic
fiber."""

import pytest

from ag_attention._algebra.certificate import build_system, certify_degree, m2_script
from ag_attention._errors import InvalidArgumentError


@pytest.mark.parametrize(
    "size, tokens",
    [
        ((2, 1, 2), 2),
        ((2, 2, 2), 2),
        ((3, 1, 2), 2),
        ((3, 1, 3), 2),
        ((2, 3, 2), 2),
        ((2, 1, 1), 2),
        ((3, 1, 1), 2),  # d' = 1, a = 1: count = 2 * degree
        ((2, 1, 1), 1),
        ((3, 1, 1), 1),
        ((3, 1, 2), 1),
        ((2, 2, 1), 1),  # one token (count = 3 * degree for s = 2)
    ],
)
def test_count_equals_degree_times_fiber(msolve, size, tokens):
    c = certify_degree(*size, tokens=tokens, timeout=60)
    assert c.count == c.formula.degree * c.formula.fiber, str(c)
    assert c.agrees


def test_second_prime_seed_and_normalization(msolve):
    for kwargs in (
        {"prime": 65521, "seed": 1},
        {"normalization": "affine", "seed": 2},
        {"method": "parametrization", "prime": 65521, "seed": 3},
        {"linear_algebra": 2, "prime": 32003, "seed": 4},
    ):
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


def test_a_system_that_cannot_fit_is_refused_before_it_is_built():
    """(60, 60, 30): a review saw 10 GiB resident after 60 s of building polynomials in Python; the estimate
    (petabytes) refuses it before the parametrization exists, naming the equations and what to do instead."""
    from ag_attention import InsufficientMemoryError
    from ag_attention._algebra.certificate import build_system, system_memory

    est = system_memory(60, 60, 30, 2, "reduced", "chart")
    assert est.peak > 2**50
    with pytest.raises(InsufficientMemoryError, match="counting system of \\(60,60,30, t=2\\).*--method formula"):
        build_system(60, 60, 30)


def test_building_stops_at_the_deadline_naming_the_whole_timeout():
    """The job's time limit covers building the system too (not only msolve's run): past the deadline the
    building stops between equations."""
    import time

    from ag_attention._algebra.certificate import build_system
    from ag_attention._errors import MSolveTimeoutError

    with pytest.raises(
        MSolveTimeoutError, match="building the counting system of \\(6,3,3, t=2\\) timed out after 5 s"
    ):
        build_system(6, 3, 3, deadline=time.monotonic() - 1, timeout=5)
