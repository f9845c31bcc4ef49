"""float64 arithmetic (ag_attention._numeric.float64): the counterpart of GF(p) for the network and the coordinates."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._exact.field import DEFAULT_PRIME, GFp
from ag_attention._network import forward
from ag_attention._numeric.float64 import Float64
from tests.helpers import generator


def test_what_it_is():
    F = Float64()
    assert F.exact is False and F.dtype is np.float64


def test_random_is_standard_normal_and_follows_the_generator():
    F = Float64()
    a = F.random(generator(7), (4000,))
    assert a.dtype == np.float64 and a.shape == (4000,)
    # statistics of 4,000 draws, not rounding: the standard errors are 0.016 (mean) and 0.011 (standard
    # deviation), so 0.1 is 6 and 9 of them (a wrong scale such as 2 or a shifted mean of 0.5 fails)
    assert abs(a.mean()) < 0.1 and abs(a.std() - 1) < 0.1
    assert np.array_equal(F.random(generator(7), (4000,)), a)  # the same generator state: the same bits
    assert F.random(generator(7), 3).shape == (3,)


def test_the_operations_are_numpys():
    F = Float64()
    # dyadic values and small integers: every result is a float64 exactly, whatever the kernel or the order of
    # summation, so they are compared exactly
    a, b = np.array([1.5, -2.0, 0.25]), np.array([2.0, 4.0, -8.0])
    assert F.add(a, b).tolist() == [3.5, 2.0, -7.75]
    assert F.sub(a, b).tolist() == [-0.5, -6.0, 8.25]
    assert F.neg(a).tolist() == [-1.5, 2.0, -0.25]
    assert F.mul(a, b).tolist() == [3.0, -8.0, -2.0]
    assert F.scale(a, 4).tolist() == [6.0, -8.0, 1.0]
    M, N = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    assert np.array_equal(F.einsum("ij,jk->ik", M, N), M @ N)
    assert np.array_equal(
        F.einsum("nik,nkj->nij", np.stack([M, 2 * M]), np.stack([N, N])), np.stack([M @ N, 2 * M @ N])
    )


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((3, 2), (2,), tokens=3),
        Architecture((2, 3, 2), (2, 1), tokens=2, heads=2),
        Architecture((2, 2, 2), None, tokens=2, parametrization="AV", skip=True),
    ],
    ids=str,
)
def test_a_lightning_network_in_float64_is_the_exact_one_on_small_integers(arch, rng):
    """Polynomial networks on small integers: float64 computes the integers exactly, GF(p) their residues."""
    theta = rng.integers(-3, 4, size=arch.parameter_count)
    X = rng.integers(-3, 4, size=(2, arch.tokens, arch.widths[0]))
    floats = forward(arch, Float64(), theta.astype(float), X.astype(float))
    assert np.all(floats == np.round(floats)) and np.abs(floats).max() < 2**52
    residues = forward(arch, GFp(DEFAULT_PRIME), np.remainder(theta, DEFAULT_PRIME), np.remainder(X, DEFAULT_PRIME))
    assert np.array_equal(np.remainder(floats.astype(np.int64), DEFAULT_PRIME), residues)


def test_small_products_by_the_c_loop_equal_blas_products():
    import numpy as np

    from ag_attention._numeric import Float64, SmallFloat64

    rng = np.random.default_rng(3)
    for spec, a, b in [
        ("ij,jk->ik", rng.standard_normal((3, 4)), rng.standard_normal((4, 2))),
        ("bij,bjk->bik", rng.standard_normal((5, 3, 3)), rng.standard_normal((5, 3, 2))),
        ("ij,jk->ik", rng.standard_normal((80, 80)), rng.standard_normal((80, 80))),  # above the threshold
    ]:
        small, blas = SmallFloat64().einsum(spec, a, b), Float64().einsum(spec, a, b)
        assert small.shape == blas.shape and np.allclose(small, blas, rtol=1e-13, atol=1e-13)
