"""All preimages of a point of one layer by unique factorization of its quadrics (ag_attention._exact.factorization)."""

import numpy as np

from ag_attention._exact.onelayer import fiber, reduced_point
from ag_attention._reproduce.figure1 import slice_point


def test_fibers_by_factorization(rng):
    d, e = 3, 2
    u, v, z = (rng.integers(1, 9, size=d) for _ in range(3))
    z[0] += 20  # not parallel to v
    w = rng.integers(1, 9, size=e)
    A, V = rng.integers(-9, 10, (d, d)), rng.integers(-9, 10, (e, d))
    assert fiber(reduced_point(A, V), d, e).count == 1
    assert fiber(reduced_point(np.outer(u, v), np.outer(w, z)), d, e).count == 2
    assert fiber(reduced_point(np.outer(u, v), np.outer(w, v)), d, e).count == 1
    assert fiber([0] * 36, d, e).zero
    # y = 3 on the Figure 1 slice: two real but irrational preimages; y = 0: none real
    assert (fiber(slice_point(1, 3, 3), 2, 1).count, fiber(slice_point(1, 3, 3), 2, 1).real_count) == (2, 2)
    assert (fiber(slice_point(1, 0, 0), 2, 1).count, fiber(slice_point(1, 0, 0), 2, 1).real_count) == (2, 0)
