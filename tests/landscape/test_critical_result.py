"""The result of critical_points: where given weights sit among the critical points (nearest), and its parts."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._landscape.critical import critical_points
from ag_attention._landscape.critical_result import CriticalFamily, Route, hessian_class

LAYER = Architecture.single_layer(2, 1, None, tokens=2)
X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]


@pytest.fixture(scope="module")
def result(msolve):
    return critical_points(LAYER, X, Y)


def test_which_critical_point_training_reached(result):
    best = result.points[0]
    near = result.nearest(best.A * 1.001, best.V)
    assert near.index == 0 and near.least_loss and near.point.signature == "minimum" and near.relative < 0.01
    # the same weights as a network, and a symmetric copy of them (c A, V / c): the same point of the function space
    from ag_attention import Network

    net = Network.from_weights({"layers.0.heads.0.A": best.A * 2.0, "layers.0.heads.0.V": best.V / 2.0})
    assert result.nearest(net).index == 0
    far = result.points[-1]
    assert result.nearest(far.A, far.V).index == len(result.points) - 1
    assert near.loss == pytest.approx(sum(best.loss) / 2, rel=1e-3) and near.at and near.complete
    assert (
        str(near).startswith("at critical point #0 (minimum")
        and "the global minimum among all real critical points (every one found: certified)" in str(near)
        and near.to_dict()["verdict"] == str(near)
    )
    # a saddle's weights: how far above the least critical loss, and which point they sit at
    saddle = next(i for i, p in enumerate(result.points) if p.signature == "saddle")
    there = result.nearest(result.points[saddle].A, result.points[saddle].V)
    assert there.index == saddle and there.at and not there.least_loss
    gap = there.loss - sum(best.loss) / 2
    assert f"is {gap:.3g} above the least critical loss" in str(there) and "certified" in str(there)
    # weights far from every critical point
    far_off = result.nearest(best.A * 3.0, best.V)
    assert not far_off.at and str(far_off).startswith("not at a critical point")
    with pytest.raises(InvalidArgumentError, match="A must be 2 x 2"):
        result.nearest(np.eye(3), best.V)


def test_the_parts_of_a_result():
    assert [hessian_class(*c) for c in [(3, 0, 0), (0, 3, 0), (1, 2, 0), (3, 0, 1)]] == [
        "minimum",
        "maximum",
        "saddle",
        "undecided",
    ]
    assert Route("msolve", 1.23456, "ok").to_dict() == {"route": "msolve", "seconds": 1.235, "outcome": "ok"}
    family = CriticalFamily("V = 0", 2, None, None, (9.0, 9.0))
    assert family.to_dict() == {"where": "V = 0", "dimension": 2, "complex": None, "real": None, "loss": [9.0, 9.0]}
