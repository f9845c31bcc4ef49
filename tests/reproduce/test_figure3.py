"""Figure 3 (ag_attention._reproduce.figure3): the quick reproduction, its rows and its figures."""

import json

from ag_attention._reproduce.figure3 import reproduce_figure_3


def test_figure3_quick(tmp_path):
    rep = reproduce_figure_3(tmp_path, deltas=range(3, 6))
    assert rep.passed, [c.observed for c in rep.failures]
    rows = json.loads((tmp_path / "figure3.json").read_text())
    assert len(rows) == 6 and {"delta", "normalized", "estimated", "expected", "gap"} <= set(rows[0])
    norm = [r for r in rows if r["normalized"]]
    assert [r["estimated"] for r in norm] == [25, 40, 57] and all(r["gap"] > 8 for r in norm)
    assert all(r["gap"] is None and r["certified"] for r in rows if not r["normalized"])
    assert all(r["certified"] and r["lower"] == r["upper"] == r["estimated"] for r in norm)
    assert (tmp_path / "figure3.png").stat().st_size > 20000
