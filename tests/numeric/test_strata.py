"""One layer's float64 distances to Theorem 3.4's strata: the nearest points, the invariances, the tolerance."""

import numpy as np
import pytest

from ag_attention._errors import InvalidArgumentError
from ag_attention._numeric.strata import RTOL, numerical_rank, one_layer_strata
from tests.helpers import generator


def _with_singular_values(rng, rows, cols, values):
    U, _ = np.linalg.qr(rng.standard_normal((rows, rows)))
    W, _ = np.linalg.qr(rng.standard_normal((cols, cols)))
    S = np.zeros((rows, cols))
    S[range(len(values)), range(len(values))] = values
    return U @ S @ W.T


def test_a_student_of_a_critical_teacher_is_near_singular_not_near_critical():
    # the trained student: singular values of A (0.41, 3.2e-5) and of V (0.89, 1.1e-5)
    rng = generator(3)
    A = _with_singular_values(rng, 2, 2, [0.41, 3.2e-5])
    V = _with_singular_values(rng, 2, 2, [0.89, 1.1e-5])
    s = one_layer_strata(A, V)
    assert s.rtol == RTOL and s.near_singular and s.numerical_ranks == (1, 1)
    assert s.relative_to_singular == pytest.approx(5.59e-5, rel=0.02) and not s.near_critical
    assert np.allclose(s.singular_values_A, [0.41, 3.2e-5], rtol=1e-9)
    assert "near-singular at rtol 0.001" in s.verdict() and s.to_dict()["near_singular"] is True
    # a tighter tolerance: not near-singular any more, and the ranks are 2
    t = one_layer_strata(A, V, rtol=1e-6)
    assert not t.near_singular and t.numerical_ranks == (2, 2)


def test_the_nearest_points_lie_in_their_strata_at_the_stated_distance():
    rng = generator(5)
    for _ in range(20):
        A, V = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
        s = one_layer_strata(A, V)
        Ab, Vb = A * s.scale, V / s.scale
        A1, V1 = s.nearest_singular
        assert np.linalg.matrix_rank(A1) <= 1 and np.linalg.matrix_rank(V1) <= 1
        assert np.hypot(np.linalg.norm(Ab - A1), np.linalg.norm(Vb - V1)) == pytest.approx(s.distance_to_singular)
        Ac, Vc = s.nearest_critical
        assert np.hypot(np.linalg.norm(Ab - Ac), np.linalg.norm(Vb - Vc)) == pytest.approx(s.distance_to_critical)
        stacked = np.vstack([Ac, Vc])  # a critical pair shares its row space (rank of [A; V] <= 1), or a factor is 0
        assert np.linalg.matrix_rank(stacked, tol=1e-9) <= 1 or not Ac.any() or not Vc.any()
        # no random rank-one pair does better
        for _ in range(50):
            v = rng.standard_normal(3)
            v /= np.linalg.norm(v)
            trial = np.hypot(np.linalg.norm(Ab - np.outer(Ab @ v, v)), np.linalg.norm(Vb - np.outer(Vb @ v, v)))
            assert trial >= s.distance_to_critical * (1 - 1e-12)


def test_the_same_function_gives_the_same_verdicts():
    # (c A, V / c) is the same function: the relative distances do not move; nor under a common orthogonal change
    # of the input coordinates (A -> O1 A Q, V -> O2 V Q), which maps each stratum to itself
    rng = generator(8)
    A, V = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    base = one_layer_strata(A, V)
    for c in (1e-3, 0.5, 7.0, 1e4):
        s = one_layer_strata(A * c, V / c)
        assert s.relative_to_singular == pytest.approx(base.relative_to_singular, rel=1e-9)
        assert s.relative_to_critical == pytest.approx(base.relative_to_critical, rel=1e-9)
    O1, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    O2, _ = np.linalg.qr(rng.standard_normal((2, 2)))
    Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    s = one_layer_strata(O1 @ A @ Q, O2 @ V @ Q)
    assert s.relative_to_singular == pytest.approx(base.relative_to_singular, rel=1e-9)
    assert s.relative_to_critical == pytest.approx(base.relative_to_critical, rel=1e-9)


def test_a_zero_factor_is_on_the_critical_set():
    s = one_layer_strata(np.eye(2), np.zeros((1, 2)))
    assert s.distance_to_critical == 0 and s.near_critical and s.critical_part == "V = 0"


def test_numerical_rank_and_bad_tolerances():
    assert numerical_rank(np.array([1.0, 1e-2, 1e-5]), 1e-3) == 2 and numerical_rank(np.zeros(3), 1e-3) == 0
    for bad in (0, 1, -1e-3, float("nan"), "1e-3", True):
        with pytest.raises(InvalidArgumentError, match="rtol="):
            one_layer_strata(np.eye(2), np.ones((1, 2)), rtol=bad)
    with pytest.raises(InvalidArgumentError, match="A must be d x d"):
        one_layer_strata(np.ones((2, 3)), np.ones((1, 3)))
