"""The tracker's compiled linear algebra (ag_attention._numeric.kernels): batched LU solves against LAPACK's."""

import numpy as np
import pytest

from ag_attention._numeric.kernels import lu_factor, lu_solve, solve


def _batch(rng, B, n, scale):
    J = (rng.standard_normal((B, n, n)) + 1j * rng.standard_normal((B, n, n))) * scale
    R = (rng.standard_normal((B, n)) + 1j * rng.standard_normal((B, n))) * scale
    return J, R


@pytest.mark.parametrize("n", [1, 5, 21, 40])
@pytest.mark.parametrize("scale", [1e-8, 1.0, 1e8])
def test_solves_agree_with_lapack_at_every_scale(rng, n, scale):
    J, R = _batch(rng, 64, n, scale)
    x, good = solve(J, R)
    assert good.all()
    expected = np.linalg.solve(J, R[..., None])[..., 0]
    cond = np.linalg.cond(J)
    err = np.linalg.norm(x - expected, axis=1) / np.linalg.norm(expected, axis=1)
    assert (err < 1e-13 * cond).all()
    # one factorization, several right-hand sides: the same numbers as one solve each
    factors = lu_factor(J)
    for R2 in (R, 1j * R[::-1].copy()):
        y, ok = lu_solve(factors, R2)
        assert ok.all() and np.array_equal(y, solve(J, R2)[0])


def test_metamorphic_scaling_and_permuting_rows(rng):
    J, R = _batch(rng, 32, 9, 1.0)
    x, _ = solve(J, R)
    # J x = R: (c J) x = c R with the same x; a permutation of the equations leaves x alone
    y, _ = solve(2.0**-30 * J, 2.0**-30 * R)
    assert np.array_equal(x, y)  # a power of two scales every rounding alike
    perm = rng.permutation(9)
    z, _ = solve(J[:, perm, :], R[:, perm])
    assert np.allclose(z, x, rtol=1e-10, atol=1e-10 * np.abs(x).max())


def test_a_singular_or_broken_matrix_fails_its_row_alone(rng):
    J, R = _batch(rng, 5, 4, 1.0)
    J[1] = 0  # singular: a zero pivot
    J[2, 3] = J[2, 0]  # two equal rows
    J[3, 0, 0] = np.nan
    R[4, 2] = np.inf
    x, good = solve(J, R)
    assert good.tolist() == [True, False, False, False, False]
    assert np.isnan(x[1:]).all() and np.isfinite(x[0]).all()
    assert np.allclose(J[0] @ x[0], R[0])
    x0, _ = solve(J, R, fill=0)  # or a value the caller asks for
    assert (x0[1:] == 0).all()


def test_empty_batches_and_read_only_views():
    J = np.broadcast_to(np.eye(3, dtype=complex) * 2, (4, 3, 3))  # read-only, not contiguous
    R = np.broadcast_to(np.array([2.0, 4.0, 6.0], dtype=complex), (4, 3))
    x, good = solve(J, R)
    assert good.all() and np.array_equal(x, np.broadcast_to([1.0, 2.0, 3.0], (4, 3)))
    x, good = solve(np.zeros((0, 3, 3), complex), np.zeros((0, 3), complex))
    assert x.shape == (0, 3) and good.shape == (0,)


def test_a_zero_on_the_diagonal_needs_the_pivoting():
    J = np.array([[[0, 1, 0], [1, 0, 0], [0, 0, 1e-300]], [[1e-20, 1, 0], [1, 1, 0], [0, 0, 1]]], dtype=complex)
    R = np.array([[2, 3, 1e-300], [1, 2, 5]], dtype=complex)
    x, good = solve(J, R)
    # without the row exchange the first elimination divides by 0 (or by 1e-20: x lost to rounding)
    assert good.all() and np.allclose(x, [[3, 2, 1], [1, 1, 5]], rtol=1e-15)


def test_shapes_are_checked_before_the_compiled_loops():
    with pytest.raises(ValueError, match=r"\(B, n, n\).*\(2, 3, 4\)"):
        lu_factor(np.zeros((2, 3, 4), complex))
    factors = lu_factor(np.broadcast_to(np.eye(3, dtype=complex), (2, 3, 3)))
    with pytest.raises(ValueError, match=r"\(2, 3\) are needed, got \(4, 3\)"):
        lu_solve(factors, np.ones((4, 3)))
