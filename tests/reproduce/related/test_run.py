"""ag-attention reproduce related as a whole: the report of every published work
(ag_attention._reproduce.related.run)."""

import json

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.related import reproduce_related
from ag_attention._sweep.grid import Grid, Spec
from tests.helpers import slow_unless_asked


# ------------------------------------------------------------------ the report
def test_small_report_is_written(tmp_path, monkeypatch):
    # the report machinery on a few cheap sizes (the quick and full runs are slow tests)
    import ag_attention._reproduce.related.families as families
    import ag_attention._reproduce.related.heads as heads
    import ag_attention._reproduce.related.invariants as related
    import ag_attention._reproduce.related.models as models
    import ag_attention._reproduce.related.their_code as their_code

    monkeypatch.setattr(related, "QUICK_MAP_SIZES", ((2, 2, 1, 2),))
    monkeypatch.setattr(related, "QUICK_FAMILY_SIZES", {"low-rank": ((2, 2, 1),), "t1-lie": ((3, 1, 3),)})
    monkeypatch.setattr(related, "QUICK_EXPLAIN_SIZES", ((2, 1, 2),))
    monkeypatch.setattr(related, "T1_VALUES", {})
    monkeypatch.setattr(heads, "QUICK_SOFTMAX_GRID", ())
    monkeypatch.setattr(heads, "heads_grid", lambda quick: Grid((Spec((2, 2), (2,), 2, 2),), source="one row"))
    # one row of each table and one golden case (test_models.py and test_their_code.py check every quick one)
    monkeypatch.setattr(models, "LCN_ROWS", (((2, 2), (1, 1), True),))
    monkeypatch.setattr(models, "DLN_ROWS", (((1, 1, 1, 1, 1), (5, 4), True),))
    monkeypatch.setattr(their_code, "QUICK_MEMBER_CASES", ((2, 1, 2),))
    report = reproduce_related(tmp_path, quick=True)
    assert report.passed, [c for c in report.checks if not c.passed]
    data = json.loads((tmp_path / "related.json").read_text())
    assert data["heads"]["groups"] == {"one layer, t >= 2": {"fails: below": 1}}
    assert data["macaulay2"]["skipped"]
    # item 3: the decision boundaries of the quick sizes, each below a general cubic (a = d' = 1: exactly 3)
    assert [(b["size"], b["ed_degree"], b["general_cubic"]) for b in data["boundaries"]] == [
        ([2, 1, 2, 1], 3, 3),
        ([2, 1, 2, 2], 12, 21),
        ([2, 1, 1, 2], 3, 21),
        ([2, 2, 2, 2], 15, 21),
        ([3, 1, 3, 2], 37, 93),
    ]
    assert (tmp_path / "report.md").read_text().count("| pass |") == len(report.checks)
    provenance = json.loads((tmp_path / "report.json").read_text())["provenance"]
    assert provenance["msolve"] and provenance["macaulay2"]  # the versions of the engines it ran
    # a wrong family member makes its check fail
    monkeypatch.setitem(
        families.FAMILIES,
        "low-rank",
        families.Family("low-rank", "t>=2", "wrong", lambda d, t, j, a, y: [y(((1, 1), (1, 2), (1, 2)))]),
    )  # x[1,2]^2 x[1,1]: not 0
    assert not reproduce_related(None, quick=True).passed


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("related")
    return out, reproduce_related(out, quick=True)


@slow_unless_asked
def test_quick_report(quick_report):
    out, report = quick_report
    assert report.passed, [c for c in report.checks if not c.passed]
    data = json.loads((out / "related.json").read_text())
    assert set(data) == {"invariants", "macaulay2", "their_code", "heads", "boundaries"}
    assert data["their_code"]["members"] and all(
        all(c["equal"] for c in m["degrees"]) for m in data["their_code"]["members"]
    )
    assert [(b["size"], b["ed_degree"], len(b["agreeing_seeds"])) for b in data["boundaries"]] == [
        ([2, 1, 2, 1], 3, 2),
        ([2, 1, 2, 2], 12, 2),
        ([2, 1, 1, 2], 3, 2),
        ([2, 2, 2, 2], 15, 2),
        ([3, 1, 3, 2], 37, 2),
    ]
    heads = data["heads"]
    assert heads["architectures"] == 112 and heads["multi_head_rows"] == 48
    assert heads["groups"]["one layer, t >= 2"] == {"fails: below": 5, "holds": 1}
    assert any("New equations at d=4" in f for f in report.findings)
    text = (out / "report.md").read_text()
    assert text.count("| pass |") == len(report.checks)
    titles = [t.title for t in report.tables]
    assert any("explained by their families" in t for t in titles)
    assert any("own setting" in t for t in titles)


def test_bad_arguments_are_named():
    with pytest.raises(InvalidArgumentError, match="seed=-1"):
        reproduce_related(None, seed=-1)
    with pytest.raises(InvalidArgumentError, match="quick='yes'"):
        reproduce_related(None, quick="yes")
