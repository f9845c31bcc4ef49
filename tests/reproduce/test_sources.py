"""Where an expected value comes from (ag_attention._reproduce.sources): four kinds, each with its citation."""

import pytest

from ag_attention._errors import InvalidArgumentError
from ag_attention._reproduce.sources import Kind, Source


def test_the_four_kinds_and_their_labels():
    assert [k.value for k in Kind] == ["outside", "independent", "theorem", "regression"]
    s = Source.outside("Bharadwaj, Hoşten, arXiv:2301.12651, raw outputs at eb15bfd")
    assert s.kind is Kind.OUTSIDE and s.label == "outside: Bharadwaj, Hoşten, arXiv:2301.12651, raw outputs at eb15bfd"
    assert s.to_dict() == {"kind": "outside", "citation": s.citation}
    assert Source.independent("msolve").kind is Kind.INDEPENDENT
    assert Source.theorem("DHOST Thm. 5.8").label == "theorem: DHOST Thm. 5.8"
    assert Source.regression("an earlier run").kind is Kind.REGRESSION


@pytest.mark.parametrize("kind, citation", [("outside", "a paper"), (Kind.THEOREM, " ")])
def test_a_source_needs_a_kind_and_a_citation(kind, citation):
    with pytest.raises(InvalidArgumentError):
        Source(kind, citation)


def _table_calls():
    """Every ``Table(...)`` call of the package: (file:line, its keyword names)."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "ag_attention"
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Table":
                yield f"{path.relative_to(package)}:{node.lineno}", {k.arg for k in node.keywords}


def test_every_table_of_the_package_says_where_its_expected_values_come_from():
    """source=Source.<kind>(...) or source=None (the table holds only what the run computed): a decision made at
    every table, so a new table of expected values cannot go unlabelled."""
    calls = list(_table_calls())
    assert len(calls) >= 25
    assert [where for where, keywords in calls if "source" not in keywords] == []


def test_a_table_prints_its_source_in_markdown_and_json():
    from ag_attention._reproduce.report import Table

    s = Source.theorem("Cor. 3.8, evaluated by expected_dimension")
    t = Table("Dimensions", ["dim", "value"], [[3, 3]], source=s)
    assert "Expected values: theorem: Cor. 3.8, evaluated by expected_dimension." in t.to_markdown()
    assert t.to_dict()["source"] == {"kind": "theorem", "citation": s.citation}
    plain = Table("Computed", ["dim"], [[3]], source=None)
    assert "Expected values" not in plain.to_markdown() and plain.to_dict()["source"] is None
