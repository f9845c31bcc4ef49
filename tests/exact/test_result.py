"""DimensionResult (ag_attention._exact.result): agreement claimed only when proven; text, JSON, notebooks, tables."""

import pytest

from ag_attention import Architecture, dimension


def test_agreement_is_claimed_only_when_proven():
    proven = dimension(Architecture((4, 2, 4, 4), (2, 2, 2), tokens=2))  # 29, formula 37
    assert proven.certified and proven.agrees is False and proven.comparison() == "DIFFERS (proven)"
    # 40, formula 44: proven since the parallel-tokens bound (docs/math/bounds.md) meets the rank
    parallel = dimension(Architecture((4, 4, 4, 4), (1, 2, 2), tokens=2))
    assert parallel.certified and parallel.closed_by == "parallel-tokens" and parallel.agrees is False
    # a lower bound below the formula that no upper bound decides: no verdict
    unproven = dimension(Architecture((3, 3), (1,), tokens=3), samples=1, recheck=False)
    assert not unproven.certified and unproven.agrees is None and unproven.to_dict()["agrees"] is None
    assert "not decided" in unproven.comparison()


def test_result_object():
    r = dimension(Architecture((4, 4, 4), (2, 2), tokens=3), seed=3)
    d = r.to_dict()
    for key in [
        "dimension",
        "parameters",
        "fiber_dimension",
        "expected",
        "formula_applies",
        "prime",
        "seed",
        "samples",
        "seconds",
    ]:
        assert key in d
    assert (d["dimension"], d["parameters"], d["fiber_dimension"], d["expected"]) == (38, 64, 26, 38)
    assert "certified" in repr(r) and "seed=3" in repr(r)
    assert "certified exact" in str(r)


def test_result_in_a_notebook():
    r = dimension(Architecture((4, 4, 4), (2, 2), tokens=3), seed=3)
    assert repr(r) == "DimensionResult(widths 4,4,4 ranks 2,2 t=3: dim=38, P=64, certified, p=2147483647, seed=3)"
    md = r._repr_markdown_()
    assert md.startswith(str(r) + "\n\n| field | value |\n|---|---|\n")
    assert "| dimension | 38 |" in md and "| certified | true |" in md and "| architecture.widths | [4, 4, 4] |" in md
    assert "| effective_architecture | null |" in md


def test_result_as_a_table_row():
    pytest.importorskip("pandas")
    r = dimension(Architecture((2, 3, 3), (2, 2), tokens=2))
    f = r.to_frame()
    assert len(f) == 1 and list(f.columns)[: len(r.to_dict()["architecture"])] == [
        f"architecture.{k}" for k in r.to_dict()["architecture"]
    ]
    row = f.iloc[0]
    assert (row["dimension"], row["parameters"], row["certified"]) == (r.dimension, r.parameters, True)
    assert str(f["dimension"].dtype) == "Int64" and str(f["certified"].dtype) == "boolean"
    assert str(f["certificate"].dtype) == "string" and "effective architecture" in row["certificate"]
    assert row["effective_architecture.widths"] == [2, 2, 3]  # nested objects become outer.inner columns


def test_decide_takes_the_best_bounds_and_refuses_a_rank_above_a_proven_bound():
    from ag_attention import ComputationError
    from ag_attention._exact.result import decide
    from ag_attention._exact.runs import RankRun
    from ag_attention._models.formulas import prove

    p = prove(Architecture((3, 3), (3,), tokens=1))  # P = 27, the one-token bound 14
    assert p.bound.value == 14

    def run(rank, symmetry_rank, prime=2147483647):
        return RankRun(prime, 0, 4, 6, 24, rank, symmetry_rank, True, 0.0, 0.0, 0.0)

    r = decide(p, [run(12, 10), run(14, 10, 2147483629)], None, 1.0)
    assert (r.dimension, r.upper_bound, r.certified, r.closed_by) == (14, 14, True, "one-token")
    assert r.main.prime == 2147483629 and r.symmetry_bound == 17 and r.symmetry_count == p.symmetry_count
    assert not decide(p, [run(12, 10)], None, 1.0).certified
    with pytest.raises(ComputationError, match=r"the rank 15 exceeds the proven upper bound 14 \(bug\)"):
        decide(p, [run(15, 0)], None, 1.0)
