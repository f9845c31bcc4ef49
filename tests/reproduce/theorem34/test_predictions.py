"""What the paper predicts, as data (ag_attention._reproduce.theorem34.predictions)."""

import numpy as np
import pytest

from ag_attention._reproduce.theorem34.grids import Size
from ag_attention._reproduce.theorem34.predictions import THEOREM, Features, Theory, features, stated_rule

u, v, z = np.array([1, 2, 3]), np.array([1, 1, 2]), np.array([0, 1, 0])
w = np.array([2, -1])


@pytest.mark.parametrize(
    "A, V, want",
    [
        (np.diag([1, 2, 3]), np.array([[1, 0, 0], [0, 1, 0]]), Features(3, 2, False, False)),
        (np.outer(u, v), np.outer(w, z), Features(1, 1, False, False)),  # a rank-one pair
        (np.outer(u, v), np.outer(w, v), Features(1, 1, True, False)),  # critical: the same v
        (np.outer(u, v), 3 * np.outer(w, v), Features(1, 1, True, False)),
        (np.zeros((3, 3), dtype=int), np.outer(w, v), Features(0, 1, False, True)),
        (np.outer(u, v), np.zeros((2, 3), dtype=int), Features(1, 0, False, True)),
    ],
)
def test_features(A, V, want):
    assert features(A, V) == want


def test_the_theorems_singular_points():
    rule = THEOREM.singular
    pair, critical = Features(1, 1, False, False), Features(1, 1, True, False)
    generic, rank_a_1 = Features(3, 2, False, False), Features(1, 2, False, False)
    assert rule(Size(3, 2, 3), pair)[0] and rule(Size(3, 2, 3), critical)[0]
    assert not rule(Size(3, 2, 3), generic)[0] and not rule(Size(3, 2, 3), rank_a_1)[0]
    assert rule(Size(3, 2, 3), Features(0, 2, False, True)) == (
        True,
        "Theorem 3.4 (the vertex: rank A <= 1 and rank V <= 1)",
    )
    # a rank bound 2 <= a < d: the domain is singular below it
    singular, source = rule(Size(3, 2, 2), rank_a_1)
    assert singular and source.startswith("found here (rank bound")
    # d' = 1, a = 1 (outside the theorem): singular exactly on the critical set, from d = 3 on
    assert rule(Size(3, 1, 1), critical)[0] and not rule(Size(2, 1, 1), critical)[0]
    assert not rule(Size(3, 1, 1), pair)[0]


def test_the_stated_rule_is_rank_one_on_both():
    assert stated_rule(Features(1, 1, False, False)) and stated_rule(Features(0, 1, False, True))
    assert not stated_rule(Features(1, 2, False, False)) and not stated_rule(Features(2, 1, False, False))
    # literally: A = 0 with rank V = 2 is not rank-one on both (the point is the vertex: the refined rule says singular)
    assert (
        not stated_rule(Features(0, 2, False, True)) and THEOREM.singular(Size(3, 2, 3), Features(0, 2, False, True))[0]
    )


def test_fibers_dimension_and_rank_drop():
    size = Size(3, 2, 3)
    assert THEOREM.fiber_counts(size) == {"generic": 1, "rank A = 1": 1, "rank-one pair": 2, "critical": 1}
    assert THEOREM.fiber_counts(Size(3, 1, 3))["rank A = 1"] == 2  # d' = 1
    components = THEOREM.fiber_components(size)
    assert components["generic"] == [(1, 2)] and components["rank-one pair"] == [(1, 2), (1, 2)]
    assert components["zero"] == [(6, 1), (9, 1)]  # A' = 0 (d d') or V' = 0 (d^2)
    assert THEOREM.dimension(size) == size.dim == 14 and THEOREM.rank_drop(size) == 2


def test_a_theory_is_data_with_the_theorem_as_default():
    assert THEOREM == Theory() and THEOREM.name == "Theorem 3.4"
    assert (THEOREM.base_locus, THEOREM.conjugate_real_preimage) == ("A or V", False)
    wrong = Theory(name="wrong", rank_drop=lambda size: size.d)
    assert wrong.rank_drop(Size(3, 2, 3)) == 3 and wrong.singular is THEOREM.singular
