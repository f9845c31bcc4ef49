"""Every critical point of a loss on a polynomial model (``model_critical_points``) with the real msolve: the
layer's own critical points through the general API, metamorphic relations, the regularized count, and every bad
input an ``InvalidArgumentError`` naming it."""

from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture, InvalidArgumentError, PolynomialModel, critical_points, model_critical_points
from ag_attention._landscape.metrics import gram

X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]


def test_the_layer_critical_points_through_the_general_api(msolve):
    arch = Architecture.single_layer(2, 1, None, tokens=2)
    theirs = critical_points(arch, X, Y)
    G, w, c = gram(X, Y, 2, 1)
    mine = model_critical_points(PolynomialModel.from_layer(arch), loss=(G, list(w), c), gauge=["v1_1 - 1"])
    assert mine.final and (mine.complex_count, mine.fiber_degree) == (theirs.complex_pure, 1) == (14, 1)
    assert len(mine.points) == len(theirs.points) == 6 and mine.minima == theirs.minima == 3
    for p, q in zip(mine.points, theirs.points):  # the same critical values (proven intervals meet)
        assert p.loss[0] <= q.loss[1] + 1e-9 and q.loss[0] <= p.loss[1] + 1e-9
        assert p.signature == q.signature


@pytest.mark.parametrize("scale", [Fraction(1, 1000), Fraction(7, 3), Fraction(10**6)])
def test_scaling_the_target_scales_the_critical_values(msolve, scale):
    # x = W2 W1 is homogeneous of degree 2: target c^2 u has the critical points c theta, losses times c^4
    M = PolynomialModel.deep_linear([2, 1, 2])
    u = [Fraction(3), Fraction(-1, 2), Fraction(1, 3), Fraction(5)]
    base = model_critical_points(M, target=u, gauge=["w2_1_1 - 1"])
    big = model_critical_points(M, target=[scale**2 * x for x in u], gauge=[f"w2_1_1 - {scale}"])
    assert base.final and big.final and base.complex_count == big.complex_count == 2
    assert [p.signature for p in base.points] == [p.signature for p in big.points] == ["minimum", "saddle"]
    for p, q in zip(base.points, big.points):
        lo, hi = float(scale) ** 4 * p.loss[0], float(scale) ** 4 * p.loss[1]
        assert q.loss[0] <= hi * (1 + 1e-9) + 1e-300 and lo * (1 - 1e-9) <= q.loss[1] + 1e-300


def test_gaussian_float_targets_are_taken_exactly(msolve):
    rng = np.random.default_rng(0)
    u = rng.standard_normal(4) * 10.0 ** rng.integers(-3, 4, size=4)
    r = model_critical_points(PolynomialModel.deep_linear([2, 1, 2]), target=u, gauge=["w2_1_1 - 1"])
    # Eckart-Young: two critical points (the two singular values), the larger one the minimum
    assert r.final and r.complex_count == 2 and [p.signature for p in r.points] == ["minimum", "saddle"]
    s = np.linalg.svd(u.reshape(2, 2), compute_uv=False)
    assert r.points[0].loss[0] <= s[1] ** 2 * (1 + 1e-9) and s[1] ** 2 <= r.points[0].loss[1] * (1 + 1e-9) + 1e-12


def test_regularized_loss_counts_every_critical_point(msolve):
    r = model_critical_points(PolynomialModel.deep_linear([1, 1, 1]), target=[3], regularization=1)
    assert (
        r.final and r.complex_count == 5 and sorted(p.signature for p in r.points) == ["minimum", "minimum", "saddle"]
    )


@pytest.mark.parametrize(
    "call, text",
    [
        (
            lambda: model_critical_points(PolynomialModel.deep_linear([1, 1, 1]), target=[1], loss=([[1]], [1], 0)),
            "exactly one of target",
        ),
        (lambda: model_critical_points(PolynomialModel.deep_linear([1, 1, 1]), target=[1, 2]), "target: 1 numbers"),
        (lambda: model_critical_points(PolynomialModel.deep_linear([1, 1, 1]), target=["a"]), "target"),
        (
            lambda: model_critical_points(PolynomialModel.deep_linear([1, 1, 1]), target=[1], regularization=-1),
            "regularization=-1",
        ),
        (
            lambda: model_critical_points(PolynomialModel.deep_linear([1, 1, 1]), target=[1], metric=[[1, 2], [3, 4]]),
            "metric",
        ),
        (
            lambda: model_critical_points(PolynomialModel.deep_linear([1, 1, 1]), target=[1], metric="generic"),
            "metric='generic' is for ED degrees; critical points need a given metric",
        ),
        (lambda: model_critical_points(PolynomialModel.deep_linear([1, 1, 1]), target=[1], metric="data"), "'data'"),
        (lambda: model_critical_points(PolynomialModel.deep_linear([1, 1, 1]), target=[1], seed=-1), "seed=-1"),
    ],
)
def test_bad_input_is_named(call, text):
    with pytest.raises(InvalidArgumentError) as info:
        call()
    assert text in str(info.value)


def test_the_euclidean_metric_is_the_identity_of_the_table(msolve):
    # the target 3 on x = w2 * w1 (gauge w1 = 1): the same points with metric="euclidean" and the identity given
    M = PolynomialModel.deep_linear([1, 1, 1])
    named = model_critical_points(M, target=[3], metric="euclidean", gauge=["w1_1_1 - 1"])
    given = model_critical_points(M, target=[3], metric=[[1]], gauge=["w1_1_1 - 1"])
    assert named.complex_count == given.complex_count == 1 and named.points[0].loss == given.points[0].loss


def test_a_metric_crafted_against_the_old_fixed_primes_counts_right(msolve):
    """Issue 46: x = (t, t^2) with the metric diag(1, p q), p and q the fixed primes every count used: modulo both
    the quartic term of the loss vanishes and the old count said 1 critical point.  2 (t - 1) + 4 p q t^3 has 3."""
    from ag_attention import polynomial_model

    p, q = 2**31 - 1, 2147483629
    M = polynomial_model(["t"], ["t", "t^2"])
    r = model_critical_points(M, target=[1, 0], metric=[[1, 0], [0, p * q]])
    assert (r.complex_count, len(r.points), r.final) == (3, 1, True)
    assert len(r.primes) == 2 and {p, q}.isdisjoint(r.primes) and all(2**30 <= x < 2**31 for x in r.primes)
    stated = f"probabilistic: primes {r.primes[0]}, {r.primes[1]} (seed {r.prime_seed};"
    assert stated in r.certificate and "error probability <= 1.3e-09" in r.certificate and stated in str(r)
    d = r.to_dict()
    assert (d["primes"], d["prime_seed"], d["error_bound"]) == (list(r.primes), r.prime_seed, r.error_bound)
    again = model_critical_points(M, target=[1, 0], metric=[[1, 0], [0, p * q]], prime_seed=r.prime_seed)
    assert again.primes == r.primes and again.complex_count == 3
    other = model_critical_points(M, target=[2, 0], metric=[[1, 0], [0, p * q]], prime_seed=r.prime_seed)
    assert set(other.primes).isdisjoint(r.primes) and other.complex_count == 3
