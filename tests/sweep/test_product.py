"""``[product]`` tables of a grid (ag_attention._sweep.product): their values, ranges and repeats."""

from ag_attention._sweep import load_grid, parse_grid

from tests.helpers import ROOT


def test_product_semantics():
    # a list is explicit values, a string an inclusive range; rank "all" = 1..d_{i-1}
    g = parse_grid({"product": {"depth": 1, "width": [1, 3], "tokens": "1..2"}})
    assert {s.widths for s in g} == {(1, 1), (1, 3), (3, 1), (3, 3)}
    assert len(g) == 2 * (1 + 1 + 3 + 3)
    # given ranks: those at most d_{i-1} per layer; skip only with equal widths
    g = parse_grid({"product": {"depth": 2, "width": "2..3", "rank": [2, 3], "tokens": 2, "skip": True}})
    assert [(s.widths, s.ranks) for s in g] == [((2, 2, 2), (2, 2)), ((3, 3, 3), (2, 2)), ((3, 3, 3), (2, 3)),
                                              ((3, 3, 3), (3, 2)), ((3, 3, 3), (3, 3))]
    # the findings grids have the README's sizes; a repeat is computed once
    assert len(load_grid(ROOT / "sweeps" / "findings-t2.toml")) == 4400
    assert len(load_grid(ROOT / "sweeps" / "findings-t1.toml")) == 4440
    g = parse_grid({"architecture": [{"widths": [2, 2], "ranks": [1], "tokens": 2}],
                    "product": {"depth": 1, "width": 2, "tokens": 2}})
    assert len(g) == 2 and g.duplicates == 1
