"""Each real critical point in ball arithmetic on its box: the exact point is in the box, its loss in the interval."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._exact.balls import evaluate, interval
from ag_attention._landscape.critical import critical_points
from ag_attention._landscape.metrics import gram
from ag_attention._landscape.system import loss_polynomial

LAYER = Architecture.single_layer(2, 1, None, tokens=2)
X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]


@pytest.fixture(scope="module")
def result(msolve):
    return critical_points(LAYER, X, Y)


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
