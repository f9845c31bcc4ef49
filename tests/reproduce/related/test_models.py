"""Other families through the general landscape API (ag_attention._reproduce.related.models): linear convolutional
networks against Shahverdi's theorem evaluated by our Segre formula (labelled *theorem*: no number printed by them)
and regularized deep linear networks against Bharadwaj and Hoşten's raw outputs (labelled *outside*)."""

import ag_attention._reproduce.related.models as related
from ag_attention._reproduce.report import Report
from ag_attention._reproduce.sources import Kind
from tests.helpers import slow_unless_asked

#: the quick run's row whose torus count takes 20 s (the others: 5 s together): the full tables (a slow test) check it
SLOW_ROW = (2, 1, 1, 2, 2)


def test_the_outside_tables_are_reproduced_row_by_row(msolve, monkeypatch):
    monkeypatch.setattr(related, "DLN_ROWS", tuple(r for r in related.DLN_ROWS if r[0] != SLOW_ROW))
    _tables(True, "| (1, 1, 2, 2, 2) | 17, 16 | 17, 16 |")


@slow_unless_asked
def test_the_full_outside_tables(msolve):
    assert any(r[0] == SLOW_ROW and r[2] for r in related.DLN_ROWS)  # a quick row of reproduce related --quick
    _tables(False, "| (2, 1, 1, 2, 2) | 33, 16 | 33, 16 |")


def _tables(quick, dln_row):
    report = Report("models", summary="item 4")
    data = related.models_section(report, quick, 0)
    assert report.passed, [c for c in report.checks if not c.passed]
    lcn = [r for r in related.LCN_ROWS if r[2] or not quick]
    dln = [r for r in related.DLN_ROWS if r[2] or not quick]
    assert len(data["lcn"]) == len(lcn) and len(data["dln"]) == len(dln)
    for row in data["lcn"]:  # a count, the real points among them, the minima among those
        # the expected value is our evaluation of their theorem: labelled so, and the only check is ours == it
        assert row["ours"] == row["expected"] and row["source"]["kind"] == Kind.THEOREM.value
        assert 0 < row["minima"] <= row["real"] <= row["ours"] and row["final"]
    for row, (_, theirs, _) in zip(data["dln"], dln):
        assert row["ours"] == list(theirs) and row["minima"] >= 1 and row["source"]["kind"] == Kind.OUTSIDE.value
    tables = [t.to_markdown() for t in report.tables[-2:]]
    assert "| (2, 2, 2) | (1, 1, 1) | 34 | 34 |" in tables[0] and tables[0].count("| theorem |") == len(lcn)
    assert dln_row in tables[1] and tables[1].count("| outside |") == len(dln)
    assert "theorem: Shahverdi" in tables[0] and "outside: Bharadwaj, Hoşten" in tables[1]


def test_strides_do_not_change_the_count_and_a_wrong_number_fails(msolve, monkeypatch):
    # Shahverdi: the count depends on the filter sizes only; the stride-2 network has another map (4 coordinates)
    assert (
        related.lcn_count((2, 2), (2, 1), seed=3).complex_count
        == 6
        == related.lcn_count((2, 2), (1, 1), 3).complex_count
    )
    monkeypatch.setattr(related, "LCN_ROWS", (((2, 3), (1, 1), True),))
    monkeypatch.setattr(related, "DLN_ROWS", (((1, 1, 1, 1, 1), (5, 3), True),))  # their 4, made wrong
    report = Report("models", summary="item 4")
    related.models_section(report, True, 0)
    assert [c.passed for c in report.checks] == [True, False]
