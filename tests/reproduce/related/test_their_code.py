"""Their Macaulay2 code's outputs (golden files, package data: ag_attention/_reproduce/related/data/aldm) against
the package: the report's part (ag_attention._reproduce.related.their_code).

The golden files were written by ``scripts/aldm_golden.py`` from their repository at d57db82; nothing is fetched
here.  The comparisons have their own tests (test_spans.py, test_ideals.py; test_golden.py: the files against
their manifest and schema).
"""

import json
import shutil

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.related.golden import (
    FAMILY_OF,
    GOLDEN_DIRECTORY,
    IDEAL_CASES,
    MANIFEST,
    MEMBER_CASES,
    MULTIDEGREE_CASES,
    golden_manifest,
    load_golden,
)
from ag_attention._reproduce.related.their_code import their_code_section
from ag_attention._reproduce.report import Report

COMMIT = "d57db8210fbd5b6396709d2534f11bffab06dbdf"


def test_every_case_has_its_golden_file_with_provenance():
    for case in sorted(set(MEMBER_CASES) | set(MULTIDEGREE_CASES) | set(IDEAL_CASES)):
        g = load_golden(*case)
        assert g.provenance["commit"] == COMMIT
        assert g.provenance["repository"] == "yuliaalexandr/algebraic-invariants-of-lightning-self-attention"
        assert g.provenance["macaulay2"].startswith("1.21")
        assert len(g.provenance["blobs"]) == 9 and g.provenance["deviations"]
        if case in IDEAL_CASES:
            assert g.ideal is not None


def test_missing_and_bad_files_are_named(tmp_path):
    with pytest.raises(InvalidArgumentError, match="d5_at1_t2.json.gz: no golden file"):
        load_golden(5, 1, 2)
    (tmp_path / "d2_at1_t2.json.gz").write_bytes(b"not gzip")
    (tmp_path / MANIFEST).write_text(json.dumps(golden_manifest(tmp_path)))
    with pytest.raises(InvalidArgumentError, match="d2_at1_t2.json.gz: not a gzip'd file"):
        load_golden(2, 1, 2, directory=tmp_path)
    assert "t1:chow21" in FAMILY_OF


def test_the_section_without_golden_files_says_so(monkeypatch, tmp_path):
    import ag_attention._reproduce.related.golden as golden

    monkeypatch.setattr(golden, "GOLDEN_DIRECTORY", tmp_path / "missing")
    report = Report("r")
    out = their_code_section(report, True, 0)
    assert "missing" in out["skipped"] and any("not compared" in f for f in report.findings)
    (tmp_path / "partial").mkdir()  # a directory of that name without the files is not taken for them
    shutil.copy(GOLDEN_DIRECTORY / "d2_at1_t2.json.gz", tmp_path / "partial")
    shutil.copy(GOLDEN_DIRECTORY / MANIFEST, tmp_path / "partial")
    monkeypatch.setattr(golden, "GOLDEN_DIRECTORY", tmp_path / "partial")
    assert "incomplete" in their_code_section(Report("r"), True, 0)["skipped"]


def test_the_quick_section(tmp_path):
    report = Report("r")
    out = their_code_section(report, True, 0)
    assert report.checks and report.passed, [c for c in report.checks if not c.passed]
    assert {tuple(m["case"]) for m in out["members"]} >= {(2, 1, 2), (3, 1, 2)}
    assert out["multidegrees"][0]["their_span"] == 200
    assert [tuple((i["d"], i["at"], i["t"])) for i in out["ideals"]] == [(2, 1, 1), (2, 1, 2), (3, 1, 2)]
    shutil.rmtree(tmp_path)
