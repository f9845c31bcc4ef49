"""Named arrays to exact matrices (ag_attention._point.matrices): entries, names by head, A of bounded rank."""

from fractions import Fraction

import numpy as np
import pytest

from ag_attention import InvalidArgumentError, Network
from ag_attention._point.matrices import by_head, chosen_names, to_fraction
from tests.helpers import generator


def test_an_entry_is_its_exact_value_or_refused_by_name():
    assert to_fraction(0.1, "w") == Fraction(*(0.1).as_integer_ratio()) and to_fraction(3, "w") == 3
    assert to_fraction(0.1, "w", denominator=10) == Fraction(1, 10)
    for bad, said in ((True, "boolean"), (float("nan"), "not a finite number"), ("1", "not a number")):
        with pytest.raises(InvalidArgumentError, match=f"^w: .*{said}"):
            to_fraction(bad, "w")


def test_the_weights_are_grouped_by_head_and_their_names_chosen():
    found, depth, heads = by_head(
        {"layers.1.heads.0.A": 1, "layers.0.heads.0.A": 2, "layers.0.heads.0.V": 3, "layers.1.heads.0.V": 4}
    )
    assert (depth, heads) == (2, 1) and found[(0, 0)] == {"A": 2, "V": 3}
    assert chosen_names(found, None) == (True, ("A", "V"))
    with pytest.raises(InvalidArgumentError, match="rank=2: only with A"):
        chosen_names({(0, 0): {"Q": 1, "K": 1, "V": 1}}, 2)


def test_a_matrix_a_of_low_rank_is_factored_exactly():
    rng = generator(3)
    Q, K = rng.integers(-3, 4, (2, 4)), rng.integers(-3, 4, (2, 4))
    A = Q.T @ K
    net = Network.from_weights({"layers.0.heads.0.A": A, "layers.0.heads.0.V": [[1, 2, 0, 1]]}, rank=2)
    w = net.weights[0][0]
    assert net.architecture.parametrization == "QKV" and net.architecture.ranks == (2,) and net.factored == (1,)
    assert (w["Q"].T.dot(w["K"]) == A).all()
    free = Network.from_weights({"layers.0.heads.0.A": A, "layers.0.heads.0.V": [[1, 2, 0, 1]]})
    assert free.architecture.parametrization == "AV" and free.factored == ()


def test_a_rank_above_the_bound_is_refused_by_name():
    A = np.diag([1, 2, 3])
    with pytest.raises(InvalidArgumentError, match=r"layers.0.heads.0.A has rank 3, above the bound rank=2"):
        Network.from_weights({"layers.0.heads.0.A": A, "layers.0.heads.0.V": [[1, 1, 1]]}, rank=2)
