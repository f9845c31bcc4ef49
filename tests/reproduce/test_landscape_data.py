"""Random data sets of reproduce landscape (ag_attention._reproduce.landscape_data): coordinates, descent, table."""

from __future__ import annotations

import numpy as np

from ag_attention._reproduce.landscape_data import (
    SMALLEST,
    DataSet,
    coordinates_tensor,
    data_table,
    gradient_descent,
    layer,
)


def test_gradient_descent_reaches_the_minimum_of_a_convex_case():
    # d = 2, d' = 1, G = identity, w = x(A0, V0): the loss |x - x0|^2 has its minimum 0 at x0
    T = coordinates_tensor(2, 1)
    a0, v0 = np.array([1.0, 2.0, -1.0, 0.5]), np.array([0.5, -1.0])
    x0 = np.einsum("qij,i,j->q", T, a0, v0)
    rng = np.random.default_rng(0)
    starts = np.concatenate([a0, v0])[None, :] + 0.05 * rng.standard_normal((4, 6))
    x, loss, grad = gradient_descent(np.eye(6), x0, float(x0 @ x0), T, starts)
    assert np.allclose(x, x0[None, :], atol=1e-6) and (loss < 1e-10).all() and (grad < 1e-6).all()


def test_the_reduced_coordinates_are_symmetric_in_the_keys_and_the_layer_has_its_size():
    T = coordinates_tensor(2, 1)
    assert T.shape == (6, 4, 2) and T.sum() == 8  # 2 diagonal keys (one entry) and 2 off-diagonal (two) per value
    arch = layer(SMALLEST, 2)
    assert arch.tokens == 2 and arch == layer((2, 1, 2), 2)


def test_the_table_has_a_row_per_data_set_and_names_the_runs():
    sets = [DataSet(0, 14, 4, 2, 2, 0, 1.234, [3, 1], 1, 1), DataSet(1, 0, 0, 0, 0, 0, 0.5, [], 0, error="timeout")]
    table = data_table(sets, samples=5, starts=6)
    assert [row[0] for row in table.rows] == [0, 1] and table.rows[0][6] == [3, 1] and table.rows[0][9] == 1.23
    assert "5 input sequences" in table.note and "6 gradient-descent runs" in table.note
