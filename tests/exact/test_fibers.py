"""Fibers of deep networks (Thm. 3.7, ag_attention._exact.fibers): explained on bottlenecks, the excess elsewhere."""

import pytest

from ag_attention import Architecture
from ag_attention._exact.fibers import fibers
from ag_attention._models.formulas import cor38


@pytest.mark.parametrize(
    "widths, ranks, t",
    [
        ((4, 4, 4), (2, 2), 3),
        ((4, 2, 4), (2, 2), 3),
        ((5, 3, 2), (2, 2), 2),
        ((4, 4, 4, 4), (2, 2, 2), 3),
        ((6, 3, 3, 6), (3, 2, 2), 3),
    ],
)
def test_fibers_explained_on_bottlenecks(widths, ranks, t):
    r = fibers(Architecture(widths, ranks, tokens=t))
    assert r.explained and r.excess == 0 and r.in_kernel and r.kernel_check == "exact"
    assert r.fiber_dimension == r.symmetry_dimension == r.dimension.parameters - cor38(widths, ranks)


@pytest.mark.parametrize(
    "widths, ranks, t, excess, exact",
    [
        ((2, 3, 3), (2, 2), 2, 4, True),  # growing before the last layer
        ((3, 5, 3), (2, 2), 3, None, True),  # grow then shrink
        ((4, 4, 4, 4), (1, 2, 2), 3, 4, True),  # a_1 = 1: tokens become parallel (exact: the parallel-tokens bound)
        ((3, 3), (3,), 1, 3, True),  # t = 1: phi only sees A + A^T
    ],
)
def test_fibers_report_the_excess_elsewhere(widths, ranks, t, excess, exact):
    r = fibers(Architecture(widths, ranks, tokens=t))
    assert not r.explained and r.excess > 0 and r.in_kernel
    if excess is not None:
        assert r.excess == excess
    assert r.excess_exact == exact
    d = r.to_dict()
    assert {"fiber_dimension", "symmetry_dimension", "explained", "excess"} <= set(d)


def test_fibers_freivalds_on_large_networks():
    r = fibers(Architecture((24, 24, 24), (8, 8), tokens=3))
    assert r.kernel_check.startswith("Freivalds") and r.explained


def _columns(result):
    from ag_attention._results import flatten

    return list(flatten(result.to_dict()))


def test_fiber_result_in_a_notebook_and_a_table():
    r = fibers(Architecture((4, 2, 4), (2, 2), tokens=3))
    assert repr(r) == "FiberResult(widths 4,2,4 ranks 2,2 t=3: fiber 14, symmetries 14, explained)"
    md = r._repr_markdown_()
    assert md.startswith(str(r) + "\n\n| field | value |\n|---|---|\n")
    assert "| explained | true |" in md and "| symmetry_dimension | 14 |" in md
    pytest.importorskip("pandas")
    f = r.to_frame()
    assert len(f) == 1 and list(f.columns) == _columns(r)
    assert bool(f.iloc[0]["explained"]) and str(f["explained"].dtype) == "boolean"
