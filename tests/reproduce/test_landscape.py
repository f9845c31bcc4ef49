"""`ag-attention reproduce landscape` (ag_attention._reproduce.landscape): the ED table, its checks, the data sets."""

from __future__ import annotations

import pytest

from ag_attention._reproduce import landscape as module

TINY = module.Plan(
    sizes=((2, 1, 1), (2, 1, 2)), tokens=(2, 3), m2_sizes=((2, 1, 2),), timeout=60.0, data_sets=3, starts=6, samples=5
)


@pytest.fixture(scope="module")
def report(tmp_path_factory, msolve):
    return module.reproduce_landscape(tmp_path_factory.mktemp("landscape"), plan=TINY, seed=0)


def test_the_table_and_its_checks(report):
    assert report.passed, [c for c in report.checks if not c.passed]
    (table,) = [t for t in report.tables if t.title == "ED degrees of one layer's closure"]
    values = {(row[0], row[1], row[2]): (row[3], row[4]) for row in table.rows}
    assert values[("(2,1,2)", 2, "euclidean")] == (6, 6)
    assert values[("(2,1,2)", 2, "generic")] == (14, 14)
    assert values[("(2,1,2)", 3, "data")] == (14, 14)
    assert values[("(2,1,1)", 2, "generic")] == (10, None)  # not on the implicit side in this plan
    assert values[("(2,1,2)", 1, "generic")] == (None, 1)  # one token: the whole space of binary cubics
    # (2,1,2) is a quartic hypersurface in 6 coordinates: a general one has 4 (1 + 3 + 9 + 27 + 81) = 484
    row = next(r for r in table.rows if r[0] == "(2,1,2)")
    assert (row[7], row[8], row[9], row[10]) == (5, 1, 4, 484)
    claims = {c.claim for c in report.checks}
    assert "the count in the weights equals the count on the implicit side" in claims
    engines = report.to_dict()["provenance"]  # the versions of the engines it ran
    assert engines["msolve"] and engines["macaulay2"] == "1.21"
    assert any(c.startswith("conjecture: the data form") for c in claims)


def test_the_data_sets(report, tmp_path_factory):
    (table,) = [t for t in report.tables if t.title.startswith("Random data sets")]
    assert len(table.rows) == 3
    for row in table.rows:
        assert row[1] == 14  # every data set: 14 complex critical points, the data ED degree
        assert row[3] >= 1 and sum(row[6]) + row[7] + row[8] == 6  # every run accounted for
    assert any(f.startswith("Gradient descent (float64, 18 runs") for f in report.findings)
    assert report.meta["figures"] == ["landscape.png", "landscape.pdf", "landscape.svg"]


def test_a_disagreement_fails_its_check(monkeypatch):
    """The agreement check compares the two routes: a route that answers differently fails it."""
    from ag_attention._landscape import ed

    real = ed.implicit_count

    def off_by_one(*args, **kwargs):
        value, description, closure = real(*args, **kwargs)
        return value + 1, description, closure

    monkeypatch.setattr(ed, "implicit_count", off_by_one)
    plan = module.Plan(
        sizes=((2, 1, 2),), tokens=(2,), m2_sizes=((2, 1, 2),), timeout=60.0, data_sets=0, starts=1, samples=5
    )
    report = module.reproduce_landscape(plan=plan)
    failed = [c for c in report.checks if not c.passed]
    assert failed and all(c.claim == "the count in the weights equals the count on the implicit side" for c in failed)


def test_the_general_hypersurface_count():
    assert module.hypersurface_ed_degree(2, 2) == 2  # two lines through 0 in the plane
    assert module.hypersurface_ed_degree(3, 2) == 2 * (1 + 1)  # a general quadric cone in C^3
    assert module.hypersurface_ed_degree(6, 4) == 484
