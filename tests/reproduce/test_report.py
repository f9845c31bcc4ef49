"""Reports (ag_attention._reproduce.report): checks, tables and statements as Markdown and JSON."""

from ag_attention._reproduce.report import Check, Report, Table, Verdict


def test_verdict_without_checks_and_a_report_without_statements():
    v = Verdict.of("X", "a statement", "nothing", [])
    assert v.passed is None and v.sizes_text() == "-" and v.to_dict()["passed"] is None
    r = Report("plain")
    r.add(Check("c", "case", "m", 1, 1, True, size=(2, 1, 2), techniques=("t",)))
    r.tables.append(Table("t", ["flag"], [[True]]))
    d = r.to_dict()
    assert d["statements"] == [] and d["checks"][0]["size"] == [2, 1, 2] and d["provenance"]
    assert "| claim | case |" in r.to_markdown() and "| yes |" in r.to_markdown()
