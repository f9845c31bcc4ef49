"""The ED degree of a decision boundary: counted with the real msolve, against cases known by hand."""

import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._exact import linalg
from ag_attention._landscape.boundary import boundary_ed_degree, boundary_polynomial, general_cubic_ed_degree


def test_the_general_cubic():
    assert [general_cubic_ed_degree(n) for n in (2, 3, 4, 6)] == [3, 9, 21, 93]


def test_one_token_in_the_plane_is_a_general_binary_cubic(msolve):
    # n = 2: a binary cubic is three lines through 0, each with one critical point: 3, as for every cubic
    r = boundary_ed_degree(Architecture.single_layer(2, 1, None, tokens=1))
    assert (r.ed_degree, r.general_cubic, r.unknowns) == (3, 3, 2)


@pytest.mark.parametrize("d, t", [(2, 2), (3, 2), (2, 3)])
def test_rank_one_attention_splits_the_boundary(msolve, d, t):
    # a = 1, d' = 1: x_i^T A x_j = (q . x_i)(k . x_j), so F = (sum_i r_i q . x_i) (sum_j (k . x_j)(v . x_j)): a
    # hyperplane (1 critical point) and the quadric cone x^T S x = 0, S = I_t (x) (k v^T + v k^T) / 2, whose
    # nonzero eigenvalues are two (+ and -): X = (I - lambda S)^-1 U on it is a quadratic in lambda (2). 3 in all
    r = boundary_ed_degree(Architecture.single_layer(d, 1, 1, tokens=t))
    assert r.ed_degree == 3 and r.counts[0][1] == r.counts[1][1] == 3


def test_far_below_a_general_cubic(msolve):
    r = boundary_ed_degree(Architecture.single_layer(2, 1, None, tokens=2))
    assert (r.ed_degree, r.general_cubic) == (12, 21)
    r = boundary_ed_degree(Architecture.single_layer(3, 1, None, tokens=3))
    assert (r.ed_degree, r.general_cubic) == (52, 765)
    assert r.to_dict()["certificate"].startswith("probabilistic")


def test_the_score_is_the_readout_of_the_forward_pass():
    arch = Architecture.single_layer(2, 1, None, tokens=2)
    ring = linalg.rational_polynomial_ring(["x1_1", "x1_2", "x2_1", "x2_2"])
    A, V, r = [[1, 2], [0, -1]], [[3, 1]], [[1], [2]]
    F = boundary_polynomial(arch, A, V, r, ring)
    X = [[1, 2], [-1, 1]]
    # f(X)_i = sum_j (x_i^T A x_j) V x_j
    f = [sum((sum(X[i][k] * A[k][l] * X[j][l] for k in range(2) for l in range(2)))
             * sum(V[0][l] * X[j][l] for l in range(2)) for j in range(2)) for i in range(2)]
    assert F(*[linalg.rational(v) for v in (1, 2, -1, 1)]) == r[0][0] * f[0] + r[1][0] * f[1]


def test_other_architectures_are_refused():
    with pytest.raises(InvalidArgumentError, match="one head"):
        boundary_ed_degree(Architecture((2, 1), (2,), heads=2, tokens=2))
