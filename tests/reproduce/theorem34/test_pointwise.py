"""Checks from the parametrization alone (ag_attention._reproduce.theorem34.pointwise): they pass on the theorem
and fail, naming the case, on a wrong prediction."""

import dataclasses

import numpy as np
import pytest

from ag_attention._reproduce.claims import Claim
from ag_attention._reproduce.report import Report
from ag_attention._reproduce.theorem34.grids import Size
from ag_attention._reproduce.theorem34.pointwise import conjugate_checks, fiber_count_checks, point_checks
from ag_attention._reproduce.theorem34.predictions import THEOREM, theorem_singular


def run_points(size, theory=THEOREM):
    report, mismatches = Report("points"), []
    point_checks(report, size, theory, np.random.default_rng(0), 1, 0, mismatches)
    return report, mismatches


@pytest.mark.parametrize("size", [Size(2, 1, 2), Size(3, 2, 2), Size(3, 1, 1)], ids=str)
def test_point_checks_pass_on_the_theorem(size):
    report, _ = run_points(size)
    assert report.passed and report.checks
    claims = [c.claim for c in report.checks]
    assert claims[0] == "singular locus = the predicted union of orbits (all orbits)"
    assert report.checks[0].details["orbits"] and report.checks[0].topic is Claim.THM_34_SINGULAR
    assert all(c.size == size.triple for c in report.checks)
    # Lemma A.3 only where A is free
    assert any(c.startswith("Lemma A.3") for c in claims) == size.free


def test_where_the_stated_rule_differs_from_the_certificates():
    _, free = run_points(Size(2, 1, 2))
    assert free == []  # inside the hypotheses, A free: the theorem as stated
    _, bounded = run_points(Size(3, 2, 2))
    assert {m.orbit for m in bounded} == {"[0,1,1] rank A=1, rank V=2", "[1,2,0] rank A=1, rank V=2"}
    assert all(m.certificate.singular is True and m.size == Size(3, 2, 2) for m in bounded)
    _, outside = run_points(Size(2, 1, 1))  # d' = 1, a = 1: the rank-one points are smooth
    assert outside and all(m.certificate.singular is False for m in outside)


def test_a_wrong_singularity_rule_fails_and_names_the_orbit():
    def wrong(size, f):
        return (f.rank_a <= 1, "wrong: rank A <= 1 alone") if not f.zero else theorem_singular(size, f)

    report, _ = run_points(Size(3, 2, 3), dataclasses.replace(THEOREM, singular=wrong))
    assert not report.passed
    orbits = next(c for c in report.failures if c.claim.startswith("singular locus"))
    assert "rank A=1, rank V=2: certified False" in orbits.observed and "wrong: rank A <= 1 alone" in orbits.observed
    assert any("counterexample A=" in c.observed for c in report.failures)


def test_a_wrong_rank_drop_fails_lemma_a3():
    report, _ = run_points(Size(2, 1, 2), dataclasses.replace(THEOREM, rank_drop=lambda size: size.d))
    (lemma,) = report.failures
    assert lemma.claim.startswith("Lemma A.3") and lemma.topic is Claim.LEMMA_A3
    assert lemma.expected.startswith("drop 2 at critical") and lemma.observed.startswith("drop 1 at critical")


def test_fiber_counts():
    report = Report("fibers")
    fiber_count_checks(report, Size(3, 2, 3), np.random.default_rng(0), THEOREM)
    (check,) = report.checks
    assert check.passed and check.observed == {"generic": 1, "rank A = 1": 1, "rank-one pair": 2, "critical": 1}
    fiber_count_checks(report, Size(3, 2, 2), np.random.default_rng(0), THEOREM)  # a rank bound: not checked
    assert len(report.checks) == 1
    wrong = dataclasses.replace(THEOREM, fiber_counts=lambda size: {**THEOREM.fiber_counts(size), "critical": 2})
    fiber_count_checks(report, Size(3, 2, 3), np.random.default_rng(0), wrong)
    assert not report.checks[-1].passed and report.checks[-1].topic is Claim.THM_32


def test_conjugate_points():
    report = Report("conjugate")
    conjugate_checks(report, Size(2, 1, 2), 0, None, THEOREM)
    (check,) = report.checks
    assert check.passed and check.topic is Claim.COR_A6
    assert "preimages: 2 non-real" in check.observed and "on closure=by construction" in check.observed
    # the closure's equations do not vanish there (Macaulay2 says so): fails
    conjugate_checks(report, Size(2, 1, 2), 0, False, THEOREM)
    assert not report.checks[-1].passed
    # predicting a real preimage fails
    conjugate_checks(report, Size(2, 1, 2), 0, True, dataclasses.replace(THEOREM, conjugate_real_preimage=True))
    assert not report.checks[-1].passed and report.checks[-1].expected.startswith(
        "real, on the closure, a real preimage"
    )
