"""GF(p) on numpy arrays (ag_attention._exact.field): primes, exact einsum, products, conversions."""

import numpy as np
import pytest

from ag_attention._errors import InvalidArgumentError
from ag_attention._exact.field import DEFAULT_PRIME, SECOND_PRIME, GFp, check_prime


def test_primes():
    assert check_prime(DEFAULT_PRIME) == 2**31 - 1
    assert check_prime(SECOND_PRIME) == SECOND_PRIME
    for bad in [1, 2, 4, 2**31 + 11, 2**61 - 1, 3.0, "7", True]:
        with pytest.raises(InvalidArgumentError, match="prime"):
            check_prime(bad)


@pytest.mark.parametrize("p", [101, 65521, DEFAULT_PRIME])
def test_einsum_is_exact(p, rng):
    F = GFp(p)
    a = F.random(rng, (3, 40, 7))
    b = F.random(rng, (3, 7, 5))
    got = F.einsum("nik,nkj->nij", a, b)
    want = np.array(
        [
            [[sum(int(a[n, i, k]) * int(b[n, k, j]) for k in range(7)) % p for j in range(5)] for i in range(40)]
            for n in range(3)
        ],
        dtype=np.int64,
    )
    assert np.array_equal(got, want)


def test_elementwise_and_matvec(rng):
    F = GFp(DEFAULT_PRIME)
    a = F.random(rng, 1000)
    b = F.random(rng, 1000)
    assert all(int(x) == int(u) * int(v) % F.p for x, u, v in zip(F.mul(a, b), a, b))
    M = F.random(rng, (4, 70000))
    v = F.random(rng, 70000)
    want = [sum(int(x) * int(y) for x, y in zip(M[i], v)) % F.p for i in range(4)]
    assert F.matvec(M, v).tolist() == want


def test_from_ints_handles_big_and_negative():
    F = GFp(101)
    assert F.from_ints([[-1, 10**30]]).tolist() == [[100, 10**30 % 101]]
