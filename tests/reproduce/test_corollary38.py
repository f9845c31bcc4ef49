"""Corollary 3.8 (ag_attention._reproduce.corollary38): the report's typed JSON, its table and the command line."""

import json

from ag_attention._reproduce.corollary38 import GRID, reproduce_corollary_38
from tests.cli import run_in_process
from tests.helpers import run_cli


def test_cli_reproduce_corollary_38_and_bad_out(tmp_path, capsys):
    p = run_cli("reproduce", "corollary-3.8", "--quick", "--out", str(tmp_path / "c38"), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["passed"] is True and len(d["checks"]) >= 5
    assert all({"claim", "case", "method", "expected", "observed", "passed"} <= set(c) for c in d["checks"])
    assert (tmp_path / "c38" / "report.md").read_text().count("|") > 20
    (tmp_path / "file").write_text("")
    p = run_in_process(capsys, "reproduce", "corollary-3.8", "--quick", "--out", str(tmp_path / "file"))
    assert p.returncode == 2 and "--out" in p.stderr and "Traceback" not in p.stderr


def test_corollary_38_json_has_booleans_and_lists_and_provenance(tmp_path):
    cases = [c for c in GRID if c.widths in {(4, 3), (4, 2, 4, 4)}]
    r = reproduce_corollary_38(cases)
    r.write(tmp_path)
    d = json.loads((tmp_path / "report.json").read_text())
    (table,) = d["tables"]
    cols = table["columns"]
    for row in table["rows"]:
        named = dict(zip(cols, row))
        assert isinstance(named["widths"], list) and isinstance(named["ranks"], list)
        assert all(isinstance(named[k], bool) for k in ("certified", "paper hyp.", "applies"))
        assert named["agrees"] in (True, False, None)
    assert {"version", "commit", "date", "python", "flint"} <= set(d["provenance"]) and "macaulay2" not in d[
        "provenance"
    ]
    md = (tmp_path / "report.md").read_text()
    assert "| one layer | 4,3 | 2 |" in md and "NO" in md  # 4,2,4,4 ranks 2,2,2: the formula is proven wrong
