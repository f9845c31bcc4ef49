"""``reproduce variants`` (ag_attention._reproduce.variants): affine and rotary attention certified on a grid."""

import json

from ag_attention._reproduce.variants import GRID, QUICK_GRID, STATEMENTS, reproduce_variants


def test_the_quick_grid_holds_for_every_statement(tmp_path):
    report = reproduce_variants(tmp_path, quick=True, seed=0)
    assert report.passed and not report.findings
    verdicts = {v.label: v for v in report.verdicts}
    assert set(verdicts) == set(STATEMENTS)
    for label, v in verdicts.items():
        assert v.passed is True and v.checks > 0, label
    # every row of the table is certified: the lower bound meets the symmetry bound
    table = report.tables[0]
    rows = [dict(zip(table.columns, r)) for r in table.rows]
    assert len(rows) == len(QUICK_GRID)
    assert all(r["dim"] == r["upper"] for r in rows)
    # the rows where a formula applies carry it, the others none
    assert {r["formula"] for r in rows} >= {"Prop. affine", "Prop. rotary", "Prop. affine (softmax)"}
    text = report.to_markdown()
    assert "holds" in text and "FAILS" not in text
    json.dumps(report.to_dict())


def test_the_grid_covers_what_checkpoints_have():
    archs = [c.architecture() for c in GRID]
    assert {a.bias for a in archs} >= {"qkvo", "qkv", "q", "k", "v", "o"}
    assert any(a.positions is not None and a.positions.dims == 2 for a in archs)  # partial rotary
    assert any(a.depth > 1 for a in archs) and any(a.heads > 1 for a in archs) and any(a.causal for a in archs)
    assert {a.normalized for a in archs} == {False, True}
