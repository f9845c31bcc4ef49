"""The interpolation modulo one prime (ag_attention._algebra.modular): blocks, their memory."""

import numpy as np

from ag_attention import Architecture


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


def test_only_representatives_are_computed_and_every_multidegree_comes_out_right():
    """(2, 2, 2) to degree 3: each representative's I_mu is computed; every other multidegree's generators are a
    permuted copy. Every generator of every multidegree vanishes on the parametrization (exact), and dim I_mu
    agrees with a direct kernel for every multidegree, representative or not."""
    from ag_attention._algebra.interpolation import low_degree_equations
    from ag_attention._algebra.lifting import verify_on_parametrization
    from ag_attention._algebra.modular import modular_blocks, representative_groups
    from ag_attention._algebra.multidegrees import evaluate_monomials, image_points
    from ag_attention._exact import linalg
    from ag_attention._exact.field import GFp

    d, e, a, k, p = 2, 2, 2, 3, 2147483647
    blocks = modular_blocks(d, e, a, k, p, seed=0)
    groups, reps = representative_groups(d, e, k)
    assert set(blocks[k]) == set(reps) and len(reps) < len(groups)
    eqs = low_degree_equations(Architecture.single_layer(d, e, a), max_degree=k)
    everything = [g for D in eqs.blocks for b in eqs.blocks[D] for g in b.generators]
    assert len(everything) == sum(eqs.generator_count.values()) > 0
    assert verify_on_parametrization(d, e, a, everything)
    F = GFp(p)
    rng = np.random.default_rng(7)
    for D in eqs.blocks:
        groups, _ = representative_groups(d, e, D)
        points = image_points(d, e, a, max(len(m) for m in groups.values()) + 20, F, rng)
        for b in eqs.blocks[D]:
            mu = tuple(b.multidegree[0]) + tuple(b.multidegree[1]) + tuple(b.multidegree[2])
            direct = len(linalg.nullspace_mod_p(evaluate_monomials(points, groups[mu], F), p))
            assert b.ideal_dimension == direct, (D, b.multidegree)
            assert all(set(g) <= set(groups[mu]) for g in b.generators)  # each generator lives in its multidegree


def test_a_wrong_permutation_is_caught_by_the_exact_check():
    """Carrying generators by a map that is not an automorphism (a transposition of two coordinates of
    different multidegree) gives polynomials that do not vanish: what the test above would see."""
    from ag_attention._algebra.interpolation import low_degree_equations
    from ag_attention._algebra.lifting import verify_on_parametrization

    eqs = low_degree_equations(Architecture.single_layer(2, 2, 2), max_degree=3)
    g = next(g for D in eqs.blocks for b in eqs.blocks[D] for g in b.generators)
    swap = {0: 1, 1: 0}
    bad = {tuple(sorted(swap.get(v, v) for v in mono)): c for mono, c in g.items()}
    assert not verify_on_parametrization(2, 2, 2, [bad])
