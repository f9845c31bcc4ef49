"""The ED degrees of decision boundaries (ag_attention._reproduce.related.boundaries)."""


def test_decision_boundaries_rest_on_two_agreeing_draws(msolve, monkeypatch):
    # item 3 at every size (about 2 s): each value is the count of two independent draws that agree and the value
    # docs/related.md prints (our earlier count: a regression check, labelled so). (3,1,2,2): seed 0 is a special
    # draw (25, printed by the old table), seeds 1 and 2 agree on the generic 28
    import ag_attention._reproduce.related.boundaries as related
    from ag_attention._reproduce.report import Report

    report = Report("boundaries", summary="item 3")
    rows = related.boundary_checks(report, False, 0)
    assert report.passed, [c for c in report.checks if not c.passed]
    assert [tuple(r["size"]) for r in rows] == list(related.BOUNDARY_SIZES)
    assert {tuple(r["size"]): r["ed_degree"] for r in rows} == related.BOUNDARY_VALUES
    for r in rows:
        assert (
            len(r["agreeing_seeds"]) == 2
            and [n for s, n in r["draws"] if s in r["agreeing_seeds"]] == [r["ed_degree"]] * 2
        )
    row = next(r for r in rows if r["size"] == [3, 1, 2, 2])
    assert (row["ed_degree"], row["draws"], row["agreeing_seeds"], row["special"]) == (
        28,
        [[0, 25], [1, 28], [2, 28]],
        [1, 2],
        [[0, 25]],
    )
    assert [r for r in rows if r["special"]] == [row]
    assert report.findings == [
        "Decision boundaries: special draws, not used: (3,1,2,2) seed 0 gives 25 where seeds 1 and 2 agree on 28."
    ]
    table = report.tables[-1].to_markdown()
    assert "| (3,1,2,2) | 6 | 28 | 93 | 0: 25 (special), 1: 28, 2: 28 |" in table
    # each row says where its expected value is from: our earlier count, except (3,1,2,2) (Macaulay2 over QQ);
    # their paper prints no number, so no row is outside
    kinds = {tuple(r["size"]): r["source"]["kind"] for r in rows}
    assert kinds.pop((3, 1, 2, 2)) == "independent" and set(kinds.values()) == {"regression"}
    assert table.count("| regression |") == 11 and table.count("| independent |") == 1
    assert "regression: our earlier count" in table and "independent: Macaulay2 over QQ" in table
    # a documented value that is not the count makes its check fail
    monkeypatch.setattr(related, "BOUNDARY_SIZES", ((3, 1, 2, 2),))
    monkeypatch.setitem(related.BOUNDARY_VALUES, (3, 1, 2, 2), 25)
    wrong = Report("boundaries", summary="item 3")
    related.boundary_checks(wrong, False, 0)
    assert not wrong.passed
