"""Their Macaulay2 code's outputs (golden files, package data: ag_attention/_reproduce/related/data/aldm) against
the package (ag_attention._reproduce.related.their_code).

The golden files were written by ``scripts/aldm_golden.py`` from their repository at d57db82; nothing is fetched
here.  Coordinates are compared exactly, families by the span of their members per degree (probabilistic ranks
modulo two primes), cubics per torus multidegree exactly, and their implicit ideals by exact substitution and,
with real Macaulay2, by ideal equality and Hilbert data.  A changed member, generator or file makes them fail
(test_golden.py: the files against their manifest and schema).
"""

import gzip
import json
import shutil
from fractions import Fraction

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.related.their_code import (
    FAMILY_OF,
    GOLDEN_DIRECTORY,
    IDEAL_CASES,
    MANIFEST,
    MEMBER_CASES,
    MULTIDEGREE_CASES,
    by_multidegree,
    check_parametrization,
    compare_family,
    compare_ideal,
    compare_spans,
    golden_manifest,
    load_golden,
    their_code_section,
)
from ag_attention._reproduce.report import Report
from tests.helpers import slow_unless_asked

COMMIT = "d57db8210fbd5b6396709d2534f11bffab06dbdf"


def _rewritten(tmp_path, name, raw):
    """``raw`` as golden file ``name`` in ``tmp_path``, with a manifest that records it (else the loader refuses
    the changed bytes before comparing anything)."""
    with gzip.open(tmp_path / name, "wt") as fh:
        json.dump(raw, fh)
    (tmp_path / MANIFEST).write_text(json.dumps(golden_manifest(tmp_path)))


def test_every_case_has_its_golden_file_with_provenance():
    for case in sorted(set(MEMBER_CASES) | set(MULTIDEGREE_CASES) | set(IDEAL_CASES)):
        g = load_golden(*case)
        assert g.provenance["commit"] == COMMIT
        assert g.provenance["repository"] == "yuliaalexandr/algebraic-invariants-of-lightning-self-attention"
        assert g.provenance["macaulay2"].startswith("1.21")
        assert len(g.provenance["blobs"]) == 9 and g.provenance["deviations"]
        if case in IDEAL_CASES:
            assert g.ideal is not None


def test_their_coordinates_are_the_rebuilt_ones():
    for case in MEMBER_CASES + ((2, 1, 1), (3, 1, 1), (3, 1, 3)):
        r = check_parametrization(load_golden(*case))
        assert r["disagree"] == [] and r["agree"] == r["labels"] > 0, case


#: counts their code gives, (members, span of theirs, span of the package's): degree d syzygies (cubics at d = 3,
#: quartics at d = 4), and their 320 cubics at d = 4 spanning 200
SPANS = {
    ((3, 1, 2), "lowRank", 2): (45, 45, 45),
    ((3, 1, 2), "contextSyzygies", 3): (10, 10, 10),
    ((3, 3, 2), "veronese2_all", 4): (45, 45, 45),
    ((3, 3, 2), "quarticResultants", 4): (72, 72, 72),
    ((4, 4, 2), "contextSyzygies", 4): (175, 175, 175),
    ((4, 4, 2), "crossColumnCubics", 3): (320, 200, 200),
}


@pytest.mark.parametrize("case", MEMBER_CASES)
def test_every_family_spans_what_the_rebuilt_one_spans(case):
    g = load_golden(*case)
    assert g.families
    for name in g.families:
        comps = compare_family(g, name)
        assert all(c.equal for c in comps), (case, name, [c.to_dict() for c in comps])
        for c in comps:
            if (case, name, c.degree) in SPANS:
                assert (c.theirs, c.rank_theirs, c.rank_ours) == SPANS[case, name, c.degree]
    assert sum((case, n, D) in SPANS for n in g.families for D in range(1, 9)) == sum(k[0] == case for k in SPANS)


def test_three_tokens_copy_the_context_relations():
    """t = 3: their linear relations add the copies between the two contexts (38 members spanning 28), and every
    family spans what the rebuilt one spans."""
    g = load_golden(3, 1, 3)
    spans = {name: [(c.theirs, c.rank_theirs, c.equal) for c in compare_family(g, name)] for name in g.families}
    assert spans["linear"] == [(38, 28, True)] and spans["lowRank"] == [(90, 90, True)]
    assert all(eq for v in spans.values() for _, _, eq in v)


def test_their_t1_lie_cubics_at_d2_are_spanned_alike():
    g = load_golden(2, 1, 1)
    (c,) = compare_family(g, "t1:chow21")
    assert (c.degree, c.rank_theirs, c.equal) == (3, 4, True)


@pytest.mark.parametrize("case", MULTIDEGREE_CASES)
def test_their_cubics_at_d4_span_200_of_the_400(case):
    r = by_multidegree(load_golden(*case), 3)
    assert (r["ideal"], r["their_span"], r["members_in_ideal"]) == (400, 200, True)
    assert sum(row["multidegrees"] for row in r["rows"] if row["ideal"]) > 0
    assert all(row["their_span"] <= row["ideal"] for row in r["rows"])


def test_a_changed_member_makes_the_spans_differ(tmp_path):
    path = GOLDEN_DIRECTORY / "d3_at1_t2.json.gz"
    raw = json.loads(gzip.decompress(path.read_bytes()))
    member = raw["families"]["lowRank"]["members"][0]
    member[0][0] = str(Fraction(member[0][0]) + 1)
    _rewritten(tmp_path, path.name, raw)
    g = load_golden(3, 1, 2, directory=tmp_path)
    (c,) = compare_family(g, "lowRank")
    assert not c.equal and c.rank_union > c.rank_ours


def test_a_changed_generator_of_J_does_not_vanish(tmp_path):
    path = GOLDEN_DIRECTORY / "d2_at1_t2.json.gz"
    raw = json.loads(gzip.decompress(path.read_bytes()))
    gen = next(g for g in raw["ideal"]["generators"] if len(g) > 1)
    gen[0][0] = str(Fraction(gen[0][0]) * 2)
    _rewritten(tmp_path, path.name, raw)
    c = compare_ideal(load_golden(2, 1, 2, directory=tmp_path), m2=False)
    assert c.vanishing == c.generators - 1 and not c.agrees


@pytest.mark.parametrize("case", [(2, 1, 2), (2, 2, 2), (3, 1, 2), (2, 1, 1)])
def test_their_ideal_vanishes_on_the_package_image(case):
    c = compare_ideal(load_golden(*case), m2=False)
    assert c.vanishing == c.generators and c.equal is None and c.agrees


@pytest.mark.m2
@pytest.mark.parametrize(
    "case, numerator",
    [
        ((2, 1, 2), [1, 2]),
        ((2, 2, 2), [1, 1, 1, 1]),
        ((3, 1, 2), [1, 11, 21, 11, 1]),
        ((2, 1, 1), [1]),
        ((3, 1, 3), [1, 11, 21, 11, 1]),
    ],
)
def test_their_ideal_is_the_closure_ideal(m2_local, case, numerator):
    c = compare_ideal(load_golden(*case))
    assert c.equal and c.agrees
    assert c.theirs["hilbert_numerator"] == c.ours["hilbert_numerator"] == numerator
    assert c.theirs["degree"] == c.ours["degree"]


@pytest.mark.m2
@slow_unless_asked
@pytest.mark.parametrize("case", [(3, 2, 2), (3, 3, 2), (3, 1, 1)])
def test_their_larger_ideals_are_the_closure_ideals(m2_local, case):
    c = compare_ideal(load_golden(*case), timeout=1800)
    assert c.equal and c.agrees, c.to_dict()


def test_their_t1_elimination_has_no_rank_constraint():
    g = load_golden(3, 1, 1)
    assert (g.ideal["codim"], g.ideal["degree"]) == (2, 21)  # the full-rank closure (a = 3), whatever at is
    assert (g.rank_ideal["codim"], g.rank_ideal["degree"]) == (3, 15)  # with minors(2, A): not their code
    assert {max(sum(e for _, e in m) for _, m in t) for t in g.ideal["generators"]} == {8}
    assert {max(sum(e for _, e in m) for _, m in t) for t in g.rank_ideal["generators"]} == {4}


def test_spans_by_values_are_spans():
    x, y = [(Fraction(1), ((0, 1),))], [(Fraction(1), ((1, 1),))]
    xy = [(Fraction(1), ((0, 1),)), (Fraction(1), ((1, 1),))]
    assert compare_spans([x, y], [xy], 2) == (2, 1, 2)
    assert compare_spans([x, y], [xy, x], 2) == (2, 2, 2)


def test_missing_and_bad_files_are_named(tmp_path):
    with pytest.raises(InvalidArgumentError, match="d5_at1_t2.json.gz: no golden file"):
        load_golden(5, 1, 2)
    (tmp_path / "d2_at1_t2.json.gz").write_bytes(b"not gzip")
    (tmp_path / MANIFEST).write_text(json.dumps(golden_manifest(tmp_path)))
    with pytest.raises(InvalidArgumentError, match="d2_at1_t2.json.gz: not a gzip'd file"):
        load_golden(2, 1, 2, directory=tmp_path)
    with pytest.raises(InvalidArgumentError, match="family"):
        compare_family(load_golden(2, 1, 2), "nonsense")
    assert "t1:chow21" in FAMILY_OF


def test_the_section_without_golden_files_says_so(monkeypatch, tmp_path):
    import ag_attention._reproduce.related.their_code as their_code

    monkeypatch.setattr(their_code, "GOLDEN_DIRECTORY", tmp_path / "missing")
    report = Report("r")
    out = their_code_section(report, True, 0)
    assert "missing" in out["skipped"] and any("not compared" in f for f in report.findings)
    (tmp_path / "partial").mkdir()  # a directory of that name without the files is not taken for them
    shutil.copy(GOLDEN_DIRECTORY / "d2_at1_t2.json.gz", tmp_path / "partial")
    shutil.copy(GOLDEN_DIRECTORY / MANIFEST, tmp_path / "partial")
    monkeypatch.setattr(their_code, "GOLDEN_DIRECTORY", tmp_path / "partial")
    assert "incomplete" in their_code_section(Report("r"), True, 0)["skipped"]


def test_the_quick_section(tmp_path):
    report = Report("r")
    out = their_code_section(report, True, 0)
    assert report.checks and report.passed, [c for c in report.checks if not c.passed]
    assert {tuple(m["case"]) for m in out["members"]} >= {(2, 1, 2), (3, 1, 2)}
    assert out["multidegrees"][0]["their_span"] == 200
    assert [tuple((i["d"], i["at"], i["t"])) for i in out["ideals"]] == [(2, 1, 1), (2, 1, 2), (3, 1, 2)]
    shutil.rmtree(tmp_path)
