"""Rank runs (ag_attention._exact.runs): the exact Jacobian rank at a point, its drop at the special points of Lemma A.3."""

import numpy as np

from ag_attention import Architecture
from ag_attention._exact.dimension import jacobian_rank


def test_rank_drop_at_critical_points_lemma_a3(rng):
    """(A, V) = (u v^T, w v^T) is critical with a drop of d - 1; (u v^T, w z^T) is not."""
    for d, e in [(2, 1), (3, 2), (4, 1), (4, 3), (5, 4)]:
        arch = Architecture.single_layer(d, e, tokens=2)
        dim = d * d + d * e - 1
        u, v, z = (rng.integers(-9, 10, size=d) for _ in range(3))
        w = rng.integers(-9, 10, size=e)
        crit = np.concatenate([np.outer(u, v).ravel(), np.outer(w, v).ravel()])
        other = np.concatenate([np.outer(u, v).ravel(), np.outer(w, z).ravel()])
        generic = rng.integers(-9, 10, size=arch.parameter_count)
        assert jacobian_rank(arch, generic) == dim
        assert jacobian_rank(arch, crit) == dim - (d - 1)
        assert jacobian_rank(arch, other) == dim


def test_rank_drop_at_zero():
    arch = Architecture((3, 2), (2,), tokens=2)
    assert jacobian_rank(arch, np.zeros(arch.parameter_count, dtype=int)) == 0
