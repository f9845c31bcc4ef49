"""The torus grading of the reduced coordinates (ag_attention._algebra.multidegrees): weights, monomials, points."""

from math import comb

import numpy as np

from ag_attention import Architecture
from ag_attention._algebra.interpolation import low_degree_equations
from ag_attention._algebra.multidegrees import (
    evaluate_monomials,
    image_points,
    monomials_by_multidegree,
    mu_split,
    torus_weight,
    torus_weights,
)
from ag_attention._exact.field import GFp
from ag_attention._models.coordinates import reduced_keys

P = 2**31 - 1


def test_the_weight_of_a_coordinate():
    # x_{k,m,ij}: row k of A, row m of V, z_i z_j; d = 2, d' = 1: (alpha | beta | gamma) in Z^2 x Z^1 x Z^2
    assert torus_weight((1, 0, 0, 1), 2, 1).tolist() == [0, 1, 1, 1, 1]
    assert torus_weight((0, 0, 1, 1), 2, 1).tolist() == [1, 0, 1, 0, 2]
    W = torus_weights(3, 2)
    keys = reduced_keys(3, 2)
    assert W.shape == (len(keys), 2 * 3 + 2)
    assert all(np.array_equal(W[n], torus_weight(k, 3, 2)) for n, k in enumerate(keys))
    # every coordinate has degree (1, 1, 2) in (alpha, beta, gamma)
    assert set(map(tuple, np.stack([W[:, :3].sum(1), W[:, 3:5].sum(1), W[:, 5:].sum(1)], axis=1))) == {(1, 1, 2)}


def test_monomials_are_grouped_by_their_multidegree():
    W = torus_weights(2, 1)
    n = len(W)
    for D in (1, 2, 3):
        blocks = monomials_by_multidegree(n, D, W)
        monomials = [m for ms in blocks.values() for m in ms]
        assert len(monomials) == len(set(monomials)) == comb(n + D - 1, D)
        for mu, ms in blocks.items():
            assert all(tuple(W[list(m)].sum(axis=0)) == mu for m in ms)
            assert all(list(m) == sorted(m) for m in ms)
    # in degree 1 the grading separates the coordinates: each has a multidegree of its own
    assert all(len(ms) == 1 for ms in monomials_by_multidegree(n, 1, W).values())


def test_mu_split():
    assert mu_split((1, 0, 2, 1, 1), 2, 1) == ((1, 0), (2,), (1, 1))
    assert mu_split(tuple(range(8)), 3, 2) == ((0, 1, 2), (3, 4), (5, 6, 7))


def test_monomials_evaluated_modulo_p(rng):
    F = GFp(101)
    points = F.random(rng, (5, 6))
    monos = [(0, 0, 1), (2, 3, 5), (4, 4, 4)]
    got = evaluate_monomials(points, monos, F)
    want = [[int(r[a]) * int(r[b]) * int(r[c]) % 101 for a, b, c in monos] for r in points]
    assert got.shape == (5, 3) and got.tolist() == want


def test_image_points_lie_on_the_closure_of_their_rank(rng):
    """(2,1,1): the three quadrics vanish on points with rank A <= 1, not on points with A free."""
    F = GFp(P)
    quadrics = low_degree_equations(Architecture.single_layer(2, 1, 1), max_degree=2).generators_of_degree(2)

    def values(points):
        out = []
        for g in quadrics:
            total = 0
            for mono, c in g.items():
                term = c.numerator * pow(c.denominator, -1, P)
                for v in mono:
                    term = term * points[:, v].astype(object) % P
                total = (total + term) % P
            out.append(total)
        return np.array(out)

    low = image_points(2, 1, 1, 8, F, rng)
    free = image_points(2, 1, 2, 8, F, rng)
    assert low.shape == free.shape == (8, len(reduced_keys(2, 1)))
    assert not values(low).any()
    assert values(free).all()


def test_a_permutation_carries_the_representative_onto_each_multidegree():
    """Each multidegree's representative is sorted; sigma maps the representative's monomials bijectively onto
    the multidegree's own (3, 2): every multidegree of degree 3."""
    from ag_attention._algebra.multidegrees import IndexPermutations, monomials_by_multidegree, torus_weights

    d, e = 3, 2
    perms = IndexPermutations(d, e)
    groups = monomials_by_multidegree(len(torus_weights(d, e)), 3, torus_weights(d, e))
    for mu, monos in groups.items():
        rep, sigma = perms.carry(mu)
        assert list(rep[:d]) == sorted(rep[:d], reverse=True) and sorted(rep) == sorted(mu)
        assert sorted(sigma.tolist()) == list(range(len(sigma)))  # a permutation of the coordinates
        assert sorted(IndexPermutations.apply(sigma, m) for m in groups[rep]) == sorted(monos)
