"""ag-attention reproduce certification: the fraction certified per variant, the closing bounds, the open cases."""

import json

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._cli import main
from ag_attention._reproduce.certification import GRIDS, reproduce_certification, variant_of


def test_quick_report_certifies_every_network_and_rechecks_them(tmp_path):
    report = reproduce_certification(tmp_path, mode="quick", samples=1000)
    assert report.passed
    data = json.loads((tmp_path / "certification.json").read_text())
    rows = data["rows"]
    assert len(rows) == 112 and all(r["certified"] for r in rows)
    assert {r["bound"] for r in rows} >= {"symmetries", "width-one", "composition", "one-token", "parallel-tokens"}
    # every certified value recomputed over a second prime and in float64, with no disagreement
    checks = data["independent_checks"]
    assert len(checks) == 112 and all(c["agrees"] for c in checks)
    assert all(c["second_rank"] == c["certified"] for c in checks)
    per_variant = next(t for t in report.tables if t.title == "Certified per variant")
    assert {row[0] for row in per_variant.rows} == {
        "plain, t = 1",
        "plain, t >= 2",
        "2 heads, t = 1",
        "2 heads, t >= 2",
        "skip, t = 1",
        "skip, t >= 2",
    }
    assert (tmp_path / "report.md").read_text().count("| pass |") == len(report.checks)


def test_variant_names():
    row = {"skip": False, "heads": 3, "tokens": 1}
    assert variant_of(row) == "3 heads, t = 1"
    assert variant_of({**row, "skip": True, "heads": 1, "tokens": 2}) == "skip, t >= 2"
    assert set(GRIDS) == {"quick", "standard", "wide"}


def test_bad_mode_names_it():
    with pytest.raises(InvalidArgumentError, match="mode='fast'"):
        reproduce_certification(None, mode="fast")


def test_cli(tmp_path, capsys):
    assert main(["reproduce", "certification", "--quick", "--out", str(tmp_path), "--quiet"]) == 0
    assert (tmp_path / "certification.json").is_file()
    assert main(["reproduce", "corollary-3.8", "--wide", "--quick", "--out", str(tmp_path / "x")]) == 2
    assert "--wide" in capsys.readouterr().err
