"""The Theorem 3.4 reproduction (ag_attention._reproduce.theorem34.run): with and without Macaulay2, and checks that can fail."""

import dataclasses
import json

import pytest

from ag_attention._reproduce import theorem34 as t34

from tests.helpers import no_backends


SMALL = dict(m2_grid=(t34.Size(2, 2, 2),), point_grid=(t34.Size(2, 2, 2),), equation_grid=((2, 2, 2, 4),), picture=False)


@pytest.fixture(scope="module")
def small_report(m2_local):
    return t34.reproduce_theorem_34(t34.Options(**SMALL))


@pytest.mark.m2
def test_small_reproduction_passes(small_report):
    r = small_report
    assert r.passed, [f"{c.claim} [{c.case}]: {c.observed}" for c in r.failures]
    claims = {c.claim.split(":")[0] for c in r.checks}
    for needed in ["dim M", "Cor. A.1", "singular locus (symbolic)", "implicit equations", "Thm. 3.2",
                   "Thm. 3.4 by the closure's equations",
                   "singular exactly as predicted (random points of the stratum)", "Lemma A.3", "Cor. A.6", "Cor. 3.3"]:
        assert any(c.startswith(needed) for c in claims), needed
    by_equations = [c for c in r.checks if c.claim.startswith("Thm. 3.4 by the closure's equations")]
    # (2,2,2)'s equations are certified complete, so predicted singular orbits are proven singular over QQ
    proven = [c for c in by_equations if c.expected == "singular"]
    assert proven and all("proven singular" in c.observed and c.details["rank_qq"] < c.details["codim"] for c in proven)
    d = r.to_dict()
    assert d["passed"] is True
    for c in d["checks"]:
        assert {"claim", "case", "method", "expected", "observed", "passed"} <= set(c)
    json.dumps(d)


WRONG = [
    ("singular", lambda size, f: (f.zero or f.rank_a <= 1, "wrong: rank A <= 1 alone"), "singular locus", "rank A=1, rank V=2"),
    ("dimension", lambda size: size.dim + 1, "dim M", "7"),
    ("rank_drop", lambda size: size.d, "Lemma A.3", "drop 1"),
    ("base_locus", "A", "Cor. A.1", "A = 0} cup {V = 0"),
    ("fiber_components", lambda size: {**t34.THEOREM.fiber_components(size), "generic": [(1, 2), (1, 2)]}, "Thm. 3.2: fibers", "generic"),
    ("fiber_counts", lambda size: {**t34.THEOREM.fiber_counts(size), "rank-one pair": 1}, "Thm. 3.2: number", "rank-one pair"),
    ("conjugate_real_preimage", True, "Cor. A.6", "real=True"),
]


@pytest.mark.m2
@pytest.mark.parametrize("field, wrong, claim, evidence", WRONG, ids=[w[0] for w in WRONG])
def test_each_check_fails_on_a_wrong_prediction(m2_local, field, wrong, claim, evidence):
    theory = dataclasses.replace(t34.THEOREM, name=f"wrong {field}", **{field: wrong})
    r = t34.reproduce_theorem_34(t34.Options(**SMALL, theory=theory))
    assert not r.passed
    failing = [c for c in r.failures if c.claim.startswith(claim)]
    assert failing, [c.claim for c in r.failures]
    text = " ".join(f"{c.observed} {c.details}" for c in failing)
    assert evidence in text


def test_reproduce_with_no_m2_needs_no_macaulay2(monkeypatch):
    from ag_attention._reproduce import theorem34 as t34

    no_backends(monkeypatch)
    report = t34.reproduce_theorem_34(t34.Options(m2_grid=t34.QUICK_M2_GRID, point_grid=(t34.Size(2, 1, 2),), equation_grid=(),
                                                  use_m2=False, picture=False))
    assert report.passed and "m2_errors" not in report.meta
