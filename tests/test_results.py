"""Results in notebooks and tables: Markdown and typed pandas rows."""

from dataclasses import dataclass

import pytest

from ag_attention._results import ResultMixin, to_frame


@dataclass
class _R(ResultMixin):
    n: int

    def to_dict(self):
        return {
            "n": self.n,
            "architecture": {"widths": [2, 1], "skip": False},
            "certified": True,
            "s": 0.5,
            "note": "a|b\nc",
        }

    def __str__(self):
        return f"R n={self.n}"


def test_markdown_escapes_cells_and_flattens():
    md = _R(3)._repr_markdown_()
    assert md.splitlines()[0] == "R n=3"
    assert "| architecture.widths | [2, 1] |" in md and "| note | a\\|b c |" in md


def test_to_frame_has_typed_columns():
    pytest.importorskip("pandas")
    f = _R(3).to_frame()
    assert list(f.columns) == ["n", "architecture.widths", "architecture.skip", "certified", "s", "note"]
    assert str(f["n"].dtype) == "Int64" and str(f["certified"].dtype) == "boolean"
    assert str(f["architecture.skip"].dtype) == "boolean" and str(f["s"].dtype) == "Float64"
    assert f["architecture.widths"][0] == [2, 1]
    assert len(to_frame([_R(1).to_dict(), _R(2).to_dict()])) == 2


def test_public_results_and_reports_have_notebook_views():
    pytest.importorskip("pandas")
    from ag_attention import Architecture, degree
    from ag_attention._reproduce.report import Check, Report

    r = degree(Architecture((3, 1), (2,), tokens=2), method="formula")
    assert r._repr_markdown_().startswith(str(r).splitlines()[0]) and "| degree | 108 |" in r._repr_markdown_()
    assert r.to_frame()["degree"][0] == 108
    rep = Report("demo")
    rep.add(Check("a claim", "d=2", "method", 1, 1, True))
    rep.add(Check("a claim", "d=3", "method", 2, 3, False))
    frame = rep.to_frame()
    assert list(frame["passed"]) == [True, False] and str(frame["passed"].dtype) == "boolean"
    assert rep._repr_markdown_() == rep.to_markdown() and "\n" not in repr(rep)
