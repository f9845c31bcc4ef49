"""Theorem 3.4 reproduction: exact fibers and certificates, and checks that can fail."""

import dataclasses
import json

import numpy as np
import pytest

from ag_attention._cli import finish_report
from ag_attention._exact.onelayer import fiber, reduced_point
from ag_attention._models.orbits import orbit_representatives
from ag_attention._reproduce import theorem34 as t34
from ag_attention import CertificateKind, certify
from ag_attention._reproduce.figure1 import render_figure1, slice_point, verify_slice
from ag_attention._reproduce.report import Check, Report


# ------------------------------------------------------------------ orbits, fibers, certificates
def test_orbits():
    orbits = orbit_representatives(2, 2)
    assert len(orbits) == 10
    assert sum(o.critical for o in orbits) == 1 and sum(o.zero for o in orbits) == 5
    for o in orbits:
        assert np.linalg.matrix_rank(o.A) == o.rank_a and np.linalg.matrix_rank(o.V) == o.rank_v
    assert all(o.rank_a <= 2 for o in orbit_representatives(4, 1, 2))


def test_fibers_by_factorization(rng):
    d, e = 3, 2
    u, v, z = (rng.integers(1, 9, size=d) for _ in range(3))
    z[0] += 20  # not parallel to v
    w = rng.integers(1, 9, size=e)
    A, V = rng.integers(-9, 10, (d, d)), rng.integers(-9, 10, (e, d))
    assert fiber(reduced_point(A, V), d, e).count == 1
    assert fiber(reduced_point(np.outer(u, v), np.outer(w, z)), d, e).count == 2
    assert fiber(reduced_point(np.outer(u, v), np.outer(w, v)), d, e).count == 1
    assert fiber([0] * 36, d, e).zero
    # y = 3 on the Figure 1 slice: two real but irrational preimages; y = 0: none real
    assert (fiber(slice_point(1, 3, 3), 2, 1).count, fiber(slice_point(1, 3, 3), 2, 1).real_count) == (2, 2)
    assert (fiber(slice_point(1, 0, 0), 2, 1).count, fiber(slice_point(1, 0, 0), 2, 1).real_count) == (2, 0)


def test_certificates(rng):
    d, e = 3, 2
    m = d * d + d * e - 1
    u, v, z = rng.integers(1, 9, size=d), rng.integers(1, 9, size=d), rng.integers(1, 9, size=d)
    z[1] += 30
    w = rng.integers(1, 9, size=e)
    generic = certify(rng.integers(-9, 10, (d, d)), rng.integers(-9, 10, (e, d)), dimension=m)
    pair = certify(np.outer(u, v), np.outer(w, z), dimension=m)
    crit = certify(np.outer(u, v), np.outer(w, v), dimension=m)
    assert generic.singular is False and generic.kind is CertificateKind.IMMERSION
    assert pair.singular is True and pair.span > m and pair.kind is CertificateKind.PAIR_AND_SWAP
    assert crit.singular is True and crit.differential_rank == m - (d - 1) and crit.kind is CertificateKind.RANK_DROP
    assert crit.exact_rank == m - (d - 1)


def test_rank_bound_has_its_own_singularities():
    # a = 2 < d = 3, d' = 2: rank A = 1 with rank V = 2 is singular (the domain is), against the rank-one rule
    m = 2 * (6 - 2) + 6 - 1
    orb = next(o for o in orbit_representatives(3, 2, 2) if (o.rank_a, o.rank_v) == (1, 2))
    v = certify(orb.A, orb.V, dimension=m, rank_bound=2)
    assert v.singular is True and v.kind is CertificateKind.DOMAIN_EXCESS and v.span > m


def test_d1_a1_is_outside_and_different():
    for d, want in [(2, False), (3, True), (5, True)]:
        crit = next(o for o in orbit_representatives(d, 1, 1) if o.critical)
        v = certify(crit.A, crit.V, dimension=2 * d - 1 + d - 1, rank_bound=1)
        assert v.singular is want and v.kind is CertificateKind.SYMMETRIC_MINORS
        assert (v.minors_rank < v.codim) is want


# ------------------------------------------------------------------ the reproduction
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


def test_equation_checks_prove_smoothness_and_catch_a_wrong_rule():
    from ag_attention._reproduce.equations34 import equation_checks
    from ag_attention._reproduce.report import Report

    def rule(wrong):
        def singular(d, e, a, orbit):
            if wrong:
                return orbit.rank_a <= 1, "wrong: rank A <= 1 alone"
            return orbit.rank_a <= 1 and orbit.rank_v <= 1, "Theorem 3.4"
        return singular

    dim = lambda d, e, a: a * (2 * d - a) + d * e - 1  # noqa: E731
    right = Report("right")
    equation_checks(right, ((2, 4, 2, 4),), rule(False), dim)
    assert right.passed and len(right.checks) == 5  # the nonzero orbits of d=2, d'=4
    assert sum("smooth (proven)" in c.observed for c in right.checks) == 3
    wrong = Report("wrong")
    equation_checks(wrong, ((2, 4, 2, 4),), rule(True), dim)
    assert [c.case for c in wrong.failures] == ["d=2, d'=4, a=2, orbit [0,1,1] rank A=1, rank V=2"]
    assert "proven smooth, predicted singular" in wrong.failures[0].observed


def test_cli_exit_status_names_the_failing_case(tmp_path, capsys):
    rep = Report("demo")
    rep.add(Check("a claim", "d=2, d'=1", "method", 1, 2, False))
    status = finish_report(rep, str(tmp_path))
    err = capsys.readouterr().err
    assert status == 1 and "a claim [d=2, d'=1]" in err and "expected 1, observed 2" in err
    assert json.loads((tmp_path / "report.json").read_text())["passed"] is False


def test_figure1_claims_and_png(tmp_path):
    facts = verify_slice()
    assert facts["fibers on the singular line y -> (preimages, real preimages)"]["0"] == (2, 0)
    path = render_figure1(tmp_path / "figure1.png", resolution=40)
    assert path.stat().st_size > 20000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
