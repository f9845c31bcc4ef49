"""The multi-head poster's count against the certified dimensions (ag_attention._reproduce.related.heads)."""

import pytest

from ag_attention import Architecture, InvalidArgumentError
from ag_attention._reproduce.related.heads import (
    QUICK_SOFTMAX_GRID,
    SOFTMAX_GRID,
    compare_heads,
    heads_grid,
    one_layer_criterion,
    poster_formula,
    softmax_heads,
)
from tests.helpers import slow_unless_asked


def test_poster_formula():
    assert poster_formula(Architecture((2, 3), (2,), tokens=2, heads=2)) == 18
    assert poster_formula(Architecture((3, 3), (2,), tokens=3, heads=3)) == 48  # 3 (2*6 - 4 + 9 - 1)
    assert poster_formula(Architecture((3, 2), (2,), tokens=3, heads=2, normalized=True)) == 28  # no rescaling
    assert poster_formula(Architecture((3, 3, 2), (2, 2), tokens=2, heads=2)) == 2 * (8 + 9 - 1) + 2 * (8 + 6 - 1) - 9
    with pytest.raises(InvalidArgumentError, match="must be an Architecture"):
        poster_formula((2, 3))


def _row(widths, ranks, tokens, heads, dimension, bound, skip=False, certified=True, upper=None):
    return {
        "widths": list(widths),
        "ranks": list(ranks),
        "tokens": tokens,
        "heads": heads,
        "skip": skip,
        "causal": False,
        "normalized": False,
        "error": None,
        "depth": len(ranks),
        "dimension": dimension,
        "upper_bound": dimension if upper is None else upper,
        "certified": certified,
        "bound": bound,
    }


def test_compare_heads_classifies_rows():
    rows = [
        _row((2, 3), (2,), 2, 2, 16, "head-mixing"),
        _row((3, 2), (2,), 2, 2, 26, "symmetries"),
        _row((3, 1), (2,), 2, 2, 17, "value-space"),
        _row((2, 4, 1), (1, 2), 2, 2, 30, None, certified=False, upper=34),
        _row((2, 2), (2,), 2, 1, 7, "symmetries"),
    ]  # one head: not compared
    c = compare_heads(rows)
    assert c["multi_head_rows"] == 4 and c["certified"] == 3
    assert c["groups"]["one layer, t >= 2"] == {"fails: below": 2, "holds": 1}
    assert c["failures_by_bound"]["one layer, t >= 2"] == {"head-mixing": 1, "value-space": 1}
    assert len(c["open"]) + len(c["refuted"]) == 1 and c["reason_mismatches"] == []
    # a certified failure no proven bound explains is reported, not hidden
    wrong = compare_heads([_row((3, 2), (2,), 2, 2, 25, "symmetries")])
    assert len(wrong["reason_mismatches"]) == 1
    assert one_layer_criterion(rows[0]) == ["head-mixing"] and one_layer_criterion(rows[1]) == []
    assert one_layer_criterion(rows[2]) == ["span", "value-space"]  # span 18, value space 17 < 20
    # heads mix as soon as H >= (d - a)^2 + 2: rank 2 of 3 with three heads, not with two
    assert "head-mixing" in one_layer_criterion(_row((3, 3), (2,), 2, 3, 45, "head-mixing"))
    assert one_layer_criterion(_row((3, 3), (2,), 2, 2, 32, "symmetries")) == []


def test_softmax_heads_quick():
    rows = softmax_heads(QUICK_SOFTMAX_GRID[:1])
    assert rows[0]["certified"] and rows[0]["dimension"] == rows[0]["formula"] == 20  # P = 28, GL_2 per head: 8
    with pytest.raises(InvalidArgumentError, match="normalized multi-head"):
        softmax_heads([Architecture((2, 2), (2,), tokens=2, heads=2)])


@slow_unless_asked
def test_softmax_heads_full():
    rows = softmax_heads(SOFTMAX_GRID)
    assert len(rows) == 72 and all(r["certified"] and r["dimension"] == r["formula"] for r in rows)


def test_heads_grid_covers_the_multi_head_rows():
    quick, full = heads_grid(True), heads_grid(False)
    assert sum(s.heads > 1 for s in quick.specs) == 48 and len(quick.specs) == 112
    assert sum(s.heads > 1 for s in full.specs) == 27480  # the wide grid contains the other two
    assert len(set(full.specs)) == len(full.specs)


def test_the_quick_grid_against_the_poster(tmp_path):
    from ag_attention import sweep

    rows = sweep(heads_grid(True), tmp_path / "s", seed=0, plots=False, workers=1).rows()
    c = compare_heads(rows)
    assert c["multi_head_rows"] == 48 and c["certified"] == 48 and c["reason_mismatches"] == []
    assert c["groups"]["one layer, t >= 2"] == {"fails: below": 5, "holds": 1}
    assert c["groups"]["one layer, t = 1"] == {"fails: below": 6}
    # widths 2,2 rank 2 two heads: the heads mix (H = 2 >= (2 - 2)^2 + 2): H (d^2 + d d' - H) = 12 < 14
    row = next(
        r
        for r in rows
        if r["widths"] == [2, 2] and r["ranks"] == [2] and r["heads"] == 2 and r["tokens"] == 2 and r["depth"] == 1
    )
    assert (row["dimension"], poster_formula(Architecture((2, 2), (2,), tokens=2, heads=2))) == (12, 14)
