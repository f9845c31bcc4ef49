"""Corollary 3.8 (ag_attention._reproduce.corollary38): the report's typed JSON, its table and the command line."""

import json

from tests.helpers import run_cli


def test_cli_reproduce_corollary_38_and_bad_out(tmp_path):
    p = run_cli("reproduce", "corollary-3.8", "--quick", "--out", str(tmp_path / "c38"), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["passed"] is True and len(d["checks"]) >= 5
    assert all({"claim", "case", "method", "expected", "observed", "passed"} <= set(c) for c in d["checks"])
    assert (tmp_path / "c38" / "report.md").read_text().count("|") > 20
    (tmp_path / "file").write_text("")
    p = run_cli("reproduce", "corollary-3.8", "--quick", "--out", str(tmp_path / "file"))
    assert p.returncode == 2 and "--out" in p.stderr and "Traceback" not in p.stderr
