"""The Theorem 3.4 report (ag_attention._reproduce.theorem34.report): the three statements first, details in CSV,
one-line reprs."""

import csv
import json

import pytest

from ag_attention._reproduce import theorem34 as t34
from ag_attention._reproduce.claims import Claim

NO_M2 = dict(
    m2_grid=(), point_grid=(t34.Size(2, 1, 2), t34.Size(3, 2, 2)), equation_grid=(), use_m2=False, picture=False
)


@pytest.fixture(scope="module")
def t34_report():
    return t34.reproduce_theorem_34(t34.Options(**NO_M2))


def test_theorem_34_report_opens_with_the_three_statements(t34_report, tmp_path):
    r = t34_report
    labels = [v.label for v in r.verdicts]
    assert labels[:3] == ["Thm. 3.4 (1): closed", "Thm. 3.4 (2): boundary", "Thm. 3.4 (3): singular"]
    assert {"Cor. A.1", "Lemma A.3", "Cor. A.6", "Cor. 3.3", "Thm. 3.2"} <= set(labels)
    closed, boundary, singular = r.verdicts[:3]
    assert closed.passed is None and closed.verdict == "not checked"  # Cor. A.1 needs Macaulay2
    assert boundary.passed is True and boundary.sizes == ((2, 1, 2),)  # Lemma A.3 and Cor. A.6: A free only
    assert singular.passed is True and singular.sizes == ((2, 1, 2), (3, 2, 2)) and singular.note
    assert singular.checks == sum(c.topic is Claim.THM_34_SINGULAR for c in r.checks)
    r.write(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert md.index("Thm. 3.4 (1): closed") < md.index("## Findings") < md.index("## Failed checks (0 of")
    assert "| claim | case |" not in md  # the rows are in the CSV
    rows = list(csv.DictReader((tmp_path / "checks.csv").open()))
    assert len(rows) == len(r.checks) and {row["passed"] for row in rows} == {"true"}
    assert rows[0]["d"] == "2" and rows[0]["result"] in {c.value for c in Claim}
    d = json.loads((tmp_path / "report.json").read_text())
    assert d["statements"][0]["passed"] is None and d["statements"][2]["passed"] is True
    assert d["statements"][2]["sizes"] == [[2, 1, 2], [3, 2, 2]]
    assert d["provenance"]["python"] and "macaulay2" not in d["provenance"]  # no Macaulay2 used
    dims = next(t for t in d["tables"] if t["title"].startswith("Dimensions"))
    assert all(isinstance(row[6], bool) and isinstance(row[7], bool) for row in dims["rows"])


def test_a_failing_statement_says_so(t34_report):
    wrong = t34.reproduce_theorem_34(t34.Options(**NO_M2, theory=t34.Theory(rank_drop=lambda size: size.d)))
    boundary = wrong.verdicts[1]
    assert boundary.passed is False and boundary.failed == 2 and "FAILS" in boundary.verdict  # Lemma A.3 and Cor. A.6
    assert "FAILED" in wrong.to_markdown().splitlines()[2]


def test_reprs_are_one_line(t34_report):
    for obj in [t34_report, *t34_report.checks[:3], *t34_report.tables, *t34_report.verdicts]:
        text = repr(obj)
        assert "\n" not in text and len(text) < 200, text
    assert repr(t34_report).startswith("Report('Theorem 3.4")
