"""Reports an author can use: statements first, details in CSV, provenance, typed JSON, one-line reprs, figures."""

import csv
import json

import pytest

from ag_attention._reproduce import theorem34 as t34
from ag_attention._reproduce.claims import Claim
from ag_attention._reproduce.corollary38 import GRID, reproduce_corollary_38
from ag_attention._reproduce.figure1 import draw_figure1, render_figure1
from ag_attention._reproduce.figure3 import reproduce_figure_3
from ag_attention._reproduce.report import FIGURE_FORMATS, Check, Report, Table, Verdict

NO_M2 = dict(m2_grid=(), point_grid=(t34.Size(2, 1, 2), t34.Size(3, 2, 2)), equation_grid=(), use_m2=False, picture=False)


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
    assert {"version", "commit", "date", "python", "flint"} <= set(d["provenance"]) and "macaulay2" not in d["provenance"]
    md = (tmp_path / "report.md").read_text()
    assert "| one layer | 4,3 | 2 |" in md and "NO" in md  # 4,2,4,4 ranks 2,2,2: the formula is proven wrong


def test_figure_3_says_what_delta_is_and_writes_three_formats(tmp_path):
    r = reproduce_figure_3(tmp_path, deltas=range(3, 4), samples=60)
    assert "delta = d_0 = d_1 = d_2" in r.summary
    assert r.meta["figures"] == [f"figure3.{ext}" for ext in FIGURE_FORMATS]
    _assert_figure_files(tmp_path, "figure3")


def _assert_figure_files(directory, stem):
    heads = {"png": b"\x89PNG", "pdf": b"%PDF", "svg": b"<?xml"}
    for ext in FIGURE_FORMATS:
        assert (directory / f"{stem}.{ext}").read_bytes()[:5].startswith(heads[ext]), ext


def test_figure_1_legend_names_every_surface_and_the_title_no_function(tmp_path):
    fig = draw_figure1(resolution=20)
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sum("sheet" in t for t in legend) == 2 == sum(1 for c in ax.collections if c.__class__.__name__ == "Poly3DCollection") // 2
    assert "verify_slice" not in ax.get_title() and "figure1" not in ax.get_title()
    path = render_figure1(tmp_path / "figure1.png", resolution=20)
    assert path.name == "figure1.png"
    _assert_figure_files(tmp_path, "figure1")


def test_verdict_without_checks_and_a_report_without_statements():
    v = Verdict.of("X", "a statement", "nothing", [])
    assert v.passed is None and v.sizes_text() == "-" and v.to_dict()["passed"] is None
    r = Report("plain")
    r.add(Check("c", "case", "m", 1, 1, True, size=(2, 1, 2), techniques=("t",)))
    r.tables.append(Table("t", ["flag"], [[True]]))
    d = r.to_dict()
    assert d["statements"] == [] and d["checks"][0]["size"] == [2, 1, 2] and d["provenance"]
    assert "| claim | case |" in r.to_markdown() and "| yes |" in r.to_markdown()
