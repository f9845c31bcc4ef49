"""One layer at its weights (ag_attention._point.onelayer): stratum, Theorem 3.4's verdicts, fiber, distance."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture, InvalidArgumentError, Network, certify, point_geometry
from tests.helpers import generator

U, W = np.array([1, 2, 3]), np.array([2, 5])
VV, Z = np.array([1, -1, 2]), np.array([0, 1, 1])


def _net(A, V, **kw) -> Network:
    return Network.from_weights({"layers.0.heads.0.A": A, "layers.0.heads.0.V": V}, **kw)


def test_a_critical_pair_is_singular_critical_and_on_the_boundary():
    """A = u v^T, V = w v^T (Lemma A.3): rank drop d - 1 = 2, singular, a relative boundary point, at distance
    0 from the critical set."""
    g = point_geometry(_net(np.outer(U, VV), np.outer(W, VV)))
    o = g.one_layer
    assert (o.rank_A, o.rank_V, (o.to_a, o.to_v, o.to_both)) == (1, 1, (0, 0, 1))
    assert g.local_rank == 12 and g.generic_dimension == 14 and g.critical is True and g.exact
    assert o.singular is True and o.critical_form and o.boundary is True and o.distance == (0.0, 0.0)
    assert len(o.preimages) == 1 and g.fiber_dimension == 3 and g.explained is False


def test_a_rank_one_pair_with_two_row_spaces_is_singular_but_not_critical():
    """A = u v^T, V = w z^T, v and z independent: two preimages (pair and swap) whose tangent images span more
    than dim M; the differential has full rank at each: not critical, not on the boundary."""
    g = point_geometry(_net(np.outer(U, VV), np.outer(W, Z)))
    o = g.one_layer
    assert o.singular is True and o.verdict.kind.name == "PAIR_AND_SWAP"
    assert g.critical is False and g.local_rank == 14 and not o.critical_form and o.boundary is False
    pairs = {(tuple(map(tuple, A)), tuple(map(tuple, V))) for A, V in o.preimages}
    assert len(pairs) == 2
    for A, V in o.preimages:  # every preimage has the same function: the same reduced point
        from ag_attention._exact.onelayer import reduced_point

        assert reduced_point(A.tolist(), V.tolist()) == reduced_point(np.outer(U, VV).tolist(), np.outer(W, Z).tolist())
    lo, hi = o.distance
    assert 0 < lo <= hi and hi - lo < 1e-12


def test_a_generic_point_is_smooth_with_the_generic_rank():
    rng = generator(5)
    g = point_geometry(_net(rng.integers(-4, 5, (3, 3)), rng.integers(-4, 5, (2, 3))))
    assert g.exact and g.local_rank == g.generic_dimension == 14 and g.critical is False
    assert g.one_layer.singular is False and g.one_layer.verdict.kind.name == "IMMERSION"
    assert g.one_layer.boundary is False and g.explained is True


def test_the_distance_to_the_critical_set_is_the_closed_form():
    """dist^2 = ||A||^2 + ||V||^2 - lambda_max(A^T A + V^T V): checked against a direct minimization."""
    from ag_attention._point.onelayer import critical_distance

    rng = generator(9)
    A, V = rng.integers(-3, 4, (3, 3)), rng.integers(-3, 4, (2, 3))
    lo, hi = critical_distance(A.astype(object), V.astype(object))
    M = A.T @ A + V.T @ V
    exact = min(np.sqrt(np.trace(M) - np.linalg.eigvalsh(M)[-1]), np.linalg.norm(A), np.linalg.norm(V))
    assert lo <= exact * (1 + 1e-12) and hi >= exact * (1 - 1e-12) and hi - lo < 1e-9
    # a small V: {V = 0} is the nearest part of the critical set
    lo, hi = critical_distance(A.astype(object), (V / 1000).astype(object))
    assert lo <= np.linalg.norm(V) / 1000 <= hi and hi - lo < 1e-12
    # no u, v, w does better (a direct search)
    best = min(
        np.sum((A - np.outer(A @ v, v)) ** 2) + np.sum((V - np.outer(V @ v, v)) ** 2)
        for v in (x / np.linalg.norm(x) for x in rng.standard_normal((2000, 3)))
    )
    assert best >= lo**2 * (1 - 1e-9)


@pytest.mark.parametrize("zero", ["V", "A"])
def test_a_zero_factor_is_critical_and_a_boundary_point_with_its_whole_fiber(zero):
    """V = 0 with A invertible (or A = 0 with V of full rank): the differential drops rank (Lemma A.3's first case),
    the point is 0, a relative boundary point (Cor. A.6), whose fiber is all of {A = 0} u {V = 0}."""
    A = np.array([[2, 1, 0], [0, 1, 3], [1, 0, 1]])
    V = np.array([[1, 2, 0], [0, 1, 1]])
    w = {"layers.0.heads.0.A": A * (zero != "A"), "layers.0.heads.0.V": V * (zero != "V")}
    g = point_geometry(Network.from_weights(w, tokens=2))
    o = g.one_layer
    assert o.critical_form and o.boundary is True and o.distance == (0.0, 0.0) and g.critical is True
    assert "{A = 0} (V free: dimension 6)" in o.fiber and "{V = 0} (A free: dimension 9)" in o.fiber
    assert o.to_dict()["fiber"] == o.fiber and "fiber            the point 0" in str(g)
    assert "Lemma A.3 predicts" not in str(g)


def test_a_near_singular_trained_point_is_said_near_singular_beside_its_exact_smoothness():
    """Trained weights are never exactly singular: singular values of A (0.41, 3.2e-5) and of V (0.89, 1.1e-5)
    are smooth in exact arithmetic and near-singular at the default rtol, with the Jacobian's spectrum."""
    rng = generator(3)

    def with_values(values):
        U, _ = np.linalg.qr(rng.standard_normal((2, 2)))
        W, _ = np.linalg.qr(rng.standard_normal((2, 2)))
        return U @ np.diag(values) @ W.T

    w = {"layers.0.heads.0.A": with_values([0.41, 3.2e-5]), "layers.0.heads.0.V": with_values([0.89, 1.1e-5])}
    g = point_geometry(Network.from_weights(w, tokens=2))
    assert g.one_layer.singular is False and (g.one_layer.rank_A, g.one_layer.rank_V) == (2, 2)
    d = g.to_dict()
    assert d["near_singular"] is True and d["near_critical"] is False and d["rtol"] == 1e-3
    assert 5e-5 < d["distance_to_singular"] < 6e-5 and d["strata"]["numerical_rank_A"] == 1
    assert len(d["jacobian_singular_values"]) == g.parameters and d["numerical_rank"] <= g.local_rank
    assert "near-singular at rtol 0.001" in str(g) and "singular values  A (0.41, 3.2e-05)" in str(g)
    tight = point_geometry(Network.from_weights(w, tokens=2), rtol=1e-6).to_dict()
    assert tight["near_singular"] is False and tight["singular"] is False
    with pytest.raises(InvalidArgumentError, match="rtol="):
        point_geometry(Network.from_weights(w, tokens=2), rtol=2)


def test_outside_the_hypotheses_the_boundary_is_not_decided():
    """d' = 1 and a = 1 (the 2:1 parametrization), or a rank bound a < d: Theorem 3.4.2 does not apply."""
    g = point_geometry(_net(np.outer([1, 2], [1, 1]), [[1, 0]], rank=1))
    assert g.one_layer.boundary is None and g.one_layer.rank_bound == 1
    rng = generator(2)
    Q, K = rng.integers(-3, 4, (2, 4)), rng.integers(-3, 4, (2, 4))
    g = point_geometry(_net(Q.T @ K, rng.integers(-3, 4, (2, 4)), rank=2))
    assert g.one_layer.boundary is None and g.one_layer.rank_bound == 2 and g.one_layer.singular is False


def test_certify_computes_dim_m_and_refuses_a_wrong_one():
    assert certify([[1, 2], [3, 4]], [[5, 7]]).singular is False
    with pytest.raises(InvalidArgumentError, match=r"dimension=4: dim M of this layer is 5"):
        certify([[1, 2], [3, 4]], [[5, 7]], dimension=4)
    with pytest.raises(InvalidArgumentError, match=r"dimension=6: dim M of this layer is 5"):
        certify([[1, 2], [3, 4]], [[5, 7]], dimension=6)
    assert certify([[1, 2], [3, 4]], [[5, 7]], dimension=5).singular is False


def test_certify_takes_the_point_and_optionally_its_architecture():
    """The weights fix the widths; arch= gives the rank bound and tokens, checked against the weights' shapes."""
    A, V = [[1, 2], [2, 4]], [[1, 2]]
    assert certify(A, V, arch=Architecture((2, 1), (1,), tokens=3)) == certify(A, V, rank_bound=1, tokens=3)
    assert certify(A, V, arch=Architecture((2, 1), (2,), tokens=2)) == certify(A, V)
    assert certify(A, V, arch=Architecture.single_layer(2, 1)) == certify(A, V)  # AV: A free
    for kwargs, named in [
        (dict(arch=Architecture((3, 1), (2,))), r"widths \(3, 1\) are not the weights' shapes"),
        (dict(arch=Architecture((2, 1), (2,)), tokens=2), "tokens=2: arch= gives"),
        (dict(arch=Architecture((2, 1), (1,)), rank_bound=1), "rank_bound=1: arch= gives"),
        (dict(arch=Architecture((2, 1), (2,), heads=2)), "heads=2"),
        (dict(arch=Architecture((2, 1), (2,), tokens=1)), "tokens=1"),
        (dict(arch=(2, 1, 2)), r"arch=\(2, 1, 2\)"),
        (dict(tokens="2"), "tokens='2'"),
    ]:
        with pytest.raises(InvalidArgumentError, match=named):
            certify(A, V, **kwargs)


def test_sixty_float_inputs_give_sixty_verdicts():
    """The review's inputs: 20 random pairs in float64, float32 and rounded to 3 decimals (47 of 60 crashed)."""
    rng = generator(2024)
    verdicts = []
    for kind in ("float64", "float32", "rounded"):
        for _ in range(20):
            A, V = rng.standard_normal((2, 2)), rng.standard_normal((1, 2))
            if kind == "float32":
                A, V = A.astype(np.float32), V.astype(np.float32)
            elif kind == "rounded":
                A, V = np.round(A, 3), np.round(V, 3)
            verdicts.append(certify(A, V))
    assert len(verdicts) == 60 and all(v.decided for v in verdicts)
    # the same point as Fractions gives the same verdict
    A = rng.standard_normal((2, 2))
    V = rng.standard_normal((1, 2))
    as_fractions = [[Fraction(x) for x in row] for row in A], [[Fraction(x) for x in row] for row in V]
    assert certify(A, V) == certify(*as_fractions)


def test_a_rounded_product_of_rank_above_the_bound_is_an_input_error():
    rng = generator(7)
    A = np.round(rng.standard_normal((3, 2)) @ rng.standard_normal((2, 3)), 2)  # rank 3 once rounded
    with pytest.raises(InvalidArgumentError, match=r"^A has rank 3, above the bound rank=2"):
        certify(A, [[1, 2, 3]], rank_bound=2)
