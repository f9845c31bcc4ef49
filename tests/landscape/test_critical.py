"""Every critical point of a data set's squared loss: counted, isolated, and checked with ball arithmetic."""

from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError, MSolveOutputError
from ag_attention._exact.balls import evaluate, interval
from ag_attention._landscape.critical import critical_points, parse_real_solutions
from ag_attention._landscape.ed import ed_degree
from ag_attention._landscape.metrics import gram
from ag_attention._landscape.system import loss_polynomial

LAYER = Architecture.single_layer(2, 1, None, tokens=2)
X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]


@pytest.fixture(scope="module")
def result(msolve):
    return critical_points(LAYER, X, Y)


def test_counts_and_classes(result):
    # 14 complex critical points (the data ED degree of (2,1,2): generic data give the same count)
    assert result.complex_pure == 14 == ed_degree(LAYER, metric="data", samples=5, method="count").ed_degree
    assert (len(result.points), result.minima, result.saddles) == (6, 3, 3)
    assert all(p.kind == "pure" and p.undecided == 0 for p in result.points)
    assert [f.where for f in result.families] == ["V = 0", "A = 0", "A = p q^T, V = r q^T"]
    # loss |Y|^2 = 9 on V = 0 and A = 0; no critical point on rank [A; V] = 1 for these data
    assert result.families[0].loss == (9.0, 9.0) and result.families[2].complex == 0
    assert "3 minima, 3 saddles" in str(result) and result.to_dict()["real_pure"] == 6


def test_each_box_holds_a_zero_of_the_gradient_and_the_loss(result):
    G, w, c = gram([np.array(x, dtype=object) for x in X], [np.array(y, dtype=object) for y in Y], 2, 1)
    names, loss = loss_polynomial(LAYER, G, list(w), c)
    for p in result.points:
        balls = [interval(*p.box[n]) for n in names]
        for n in names:  # the exact critical point is in the box: every partial derivative's ball holds 0
            assert evaluate(loss.derivative(n).to_dict(), balls).contains(0)
        value = evaluate(loss.to_dict(), balls)
        assert value.lower() <= p.loss[1] and p.loss[0] <= value.upper()
    # a point that is not critical is caught: the box of one point moved by 1 in one weight
    p = result.points[0]
    moved = dict(p.box, a1_1=(p.box["a1_1"][0] + 1, p.box["a1_1"][1] + 1))
    balls = [interval(*moved[n]) for n in names]
    assert not all(evaluate(loss.derivative(n).to_dict(), balls).contains(0) for n in names)


def test_floats_are_read_exactly_or_rounded(msolve):
    Xf = [[[v + 0.0 for v in row] for row in x] for x in X]
    r = critical_points(LAYER, Xf, Y)
    assert (r.complex_pure, len(r.points), r.conversion) == (14, 6, "exact rationals")
    r = critical_points(LAYER, [[[v + 0.1 for v in row] for row in x] for x in X], Y, denominator=10)
    assert r.conversion == "rounded to multiples of 1/10" and r.complex_pure == 14


def test_msolve_output_is_read():
    assert parse_real_solutions("[-1]:", 2) == []
    assert parse_real_solutions("[1, 2, -1, []]:", 2) is None
    boxes = parse_real_solutions("[0, [1,\n[[[1 / 2^1, 3 / 2^2], [-1, -1]]]\n]]:", 2)
    assert boxes == [[(Fraction(1, 2), Fraction(3, 4)), (Fraction(-1), Fraction(-1))]]
    with pytest.raises(MSolveOutputError, match="3 intervals for 2 unknowns"):
        parse_real_solutions("[0, [1, [[[1, 1], [2, 2], [3, 3]]]]]:", 2)


@pytest.mark.parametrize("inputs, targets, kwargs, text", [
    (X, Y[:4], {}, "5 input sequences but 4 targets"),
    ([[[1, 0, 0], [0, 1, 0]]], Y[:1], {}, r"inputs\[0\]: shape \(2, 3\)"),
    ([[[1, float("nan")], [0, 1]]], Y[:1], {}, r"inputs\[0\]\[0\]\[1\]: nan"),
    ([], [], {}, "no sequence"),
    (X, Y, {"denominator": 0}, "denominator=0"),
    ("data", Y, {}, "inputs: a list"),
])
def test_bad_data_are_refused_by_name(inputs, targets, kwargs, text):
    with pytest.raises(InvalidArgumentError, match=text):
        critical_points(LAYER, inputs, targets, **kwargs)
