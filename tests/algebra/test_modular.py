"""The interpolation modulo one prime (ag_attention._algebra.modular): blocks, their memory."""

import numpy as np


def test_the_bases_of_a_degree_are_estimated_from_its_blocks():
    """Below the top degree every basis is held (sum of s_mu^2), at the top one block at a time."""
    from ag_attention._algebra.interpolation import reduced_coordinate_keys
    from ag_attention._algebra.modular import level_memory
    from ag_attention._algebra.multidegrees import monomials_by_multidegree, torus_weight

    keys = reduced_coordinate_keys(3, 1)
    weights = np.array([torus_weight(k, 3, 1) for k in keys])
    groups = monomials_by_multidegree(len(keys), 3, weights)
    below, top = level_memory(groups, False, 3), level_memory(groups, True, 3)
    sizes = [len(m) for m in groups.values()]
    assert below.peak - top.peak == 40 * (sum(s * s for s in sizes) - max(sizes) ** 2) > 0
    assert f"{len(sizes):,} blocks" in below.largest()
