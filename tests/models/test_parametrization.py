"""Exact one-layer parametrizations: full vs reduced coordinates (docs/math/model.md (model-full-from-reduced))."""

import flint
import numpy as np
import pytest

from ag_attention import Architecture, InvalidArgumentError
from ag_attention._exact import linalg
from ag_attention._exact.field import GFp
from ag_attention._models.parametrization import Parametrization
from ag_attention._network import forward

P = 2**31 - 1

SIZES = [(2, 1, 2, 2), (2, 2, 1, 2), (3, 1, 2, 2), (2, 1, 2, 3), (3, 2, 3, 2)]


def brute_force_full(par):
    """Coefficients of (y_i)_m in the input monomials, by expanding in a ring with x variables."""
    d, e, t = par.d, par.d_out, par.tokens
    xnames = [f"x_({j},{l})" for j in range(1, t + 1) for l in range(1, d + 1)]
    ctx = flint.fmpz_mpoly_ctx.get(par.variables + tuple(xnames), "degrevlex")
    g = ctx.gens()
    nv = len(par.variables)

    def lift(f):
        """A parameter polynomial in the big ring."""
        return f.compose(*g[:nv], ctx=ctx) if not f.is_constant() else ctx.constant(int(f))

    A = [[lift(f) for f in row] for row in par.matrix("A")]
    V = [[lift(f) for f in row] for row in par.matrix("V")]
    x = [[g[nv + j * d + l] for l in range(d)] for j in range(t)]
    out = {}
    for i in range(t):
        for m in range(e):
            y = ctx.constant(0)
            for j in range(t):
                s = sum((x[i][k] * A[k][l] * x[j][l] for k in range(d) for l in range(d)), ctx.constant(0))
                y += s * sum((V[m][l] * x[j][l] for l in range(d)), ctx.constant(0))
            for exps, coeff in y.to_dict().items():
                out.setdefault((i, m, exps[nv:]), ctx.constant(0))
                out[(i, m, exps[nv:])] += ctx.from_dict({exps[:nv] + (0,) * len(xnames): coeff})
    return {k: v for k, v in out.items() if v != 0}, nv


@pytest.mark.parametrize("d, e, a, t", SIZES)
@pytest.mark.parametrize("params", ["AV", "QKV"])
def test_full_coordinates_are_the_coefficients_of_phi(d, e, a, t, params):
    par = Parametrization(Architecture((d, e), (a if params == "QKV" else d,), tokens=t), "full", params)
    want, nv = brute_force_full(par)
    got = {}
    for c, f in zip(par.coordinates, par.polynomials):
        _, i, m, mono = c.key
        exps = [0] * (d * t)
        for w in mono:
            exps[w] += 1
        got[(i, m, tuple(exps))] = f
    assert set(got) == set(want)
    for k in want:
        # compare as polynomials in the parameter variables
        assert got[k].to_dict() == {e[:nv]: c for e, c in want[k].to_dict().items()}


@pytest.mark.parametrize("d, e, a, t", SIZES)
def test_full_is_linear_in_reduced_and_same_jacobian_rank(d, e, a, t, rng):
    arch = Architecture((d, e), (a,), tokens=t)
    red = Parametrization(arch, "reduced")
    full = Parametrization(arch, "full")
    L = full.full_from_reduced()
    # full = L . reduced as polynomials
    for row, f in zip(L, full.polynomials):
        g = sum((int(c) * r for c, r in zip(row, red.polynomials) if c), red.ring.constant(0))
        assert f == g
    # L is injective (reduced coordinates are recovered from full ones)
    assert linalg.rank(L, P) == red.ambient_dimension
    # and the Jacobian ranks agree at a random point, and equal the engine's dimension
    point = rng.integers(-50, 50, size=len(red.variables)).tolist()
    r_red = linalg.rank(red.jacobian_mod(point, P), P)
    r_full = linalg.rank(full.jacobian_mod(point, P), P)
    assert r_red == r_full
    from ag_attention import dimension

    assert r_red == dimension(arch).dimension


def test_polynomials_agree_with_the_network(rng):
    arch = Architecture((3, 2), (2,), tokens=3)
    par = Parametrization(arch, "full")
    theta = rng.integers(-9, 10, size=arch.parameter_count)
    X = rng.integers(-9, 10, size=(1, 3, 3))
    coeff = par.evaluate(theta.tolist())
    y = np.zeros((3, 2), dtype=object)
    for c, v in zip(par.coordinates, coeff):
        _, i, m, mono = c.key
        y[i, m] += v * int(np.prod([int(X[0].ravel()[w]) for w in mono]))
    F = GFp(P)
    got = forward(arch, F, np.remainder(theta, P), np.remainder(X, P))[0]
    assert np.array_equal(got, np.vectorize(lambda v: int(v) % P, otypes=[np.int64])(y))


def test_smallest_case_matches_math_md():
    par = Parametrization(Architecture.single_layer(2, 1), "reduced")
    assert par.variables == ("a_(1,1)", "a_(1,2)", "a_(2,1)", "a_(2,2)", "v_(1,1)", "v_(1,2)")
    assert [str(f) for f in par.polynomials] == [
        "a_(1,1)*v_(1,1)",
        "a_(1,2)*v_(1,1) + a_(1,1)*v_(1,2)",
        "a_(1,2)*v_(1,2)",
        "a_(2,1)*v_(1,1)",
        "a_(2,2)*v_(1,1) + a_(2,1)*v_(1,2)",
        "a_(2,2)*v_(1,2)",
    ]


def test_rank_bound_domain_equations(rng):
    par = Parametrization(Architecture((3, 1), (1,), tokens=2), "reduced", params="AV")
    assert len(par.domain_equations) == 9  # 2x2 minors of a 3x3 matrix
    u, v = rng.integers(-5, 5, size=3), rng.integers(-5, 5, size=3)
    A = np.outer(u, v)
    point = par.weights_vector(A=A, V=np.ones((1, 3), dtype=int))
    vals = [flint.fmpz(x) for x in point]
    assert all(int(f(*vals)) == 0 for f in par.domain_equations)
    assert Parametrization(Architecture((3, 1), (3,), tokens=2), "reduced", params="AV").domain_equations == []


def test_qkv_equals_av_composed_with_product(rng):
    arch = Architecture((3, 2), (2,), tokens=2)
    qkv = Parametrization(arch, "reduced")
    av = Parametrization(arch, "reduced", params="AV")
    Q, K, V = (rng.integers(-5, 5, size=s) for s in [(2, 3), (2, 3), (2, 3)])
    assert qkv.evaluate(qkv.weights_vector(Q=Q, K=K, V=V)) == av.evaluate(av.weights_vector(A=Q.T @ K, V=V))


def test_bad_requests():
    with pytest.raises(InvalidArgumentError, match="tokens=1"):
        Parametrization(Architecture((2, 1), (2,), tokens=1), "reduced")
    with pytest.raises(InvalidArgumentError, match="coords='bogus'"):
        Parametrization(Architecture((2, 1), (2,)), "bogus")
    with pytest.raises(InvalidArgumentError, match="one layer"):
        Parametrization(Architecture((2, 2, 1), (2, 2)), "reduced")
    with pytest.raises(InvalidArgumentError, match="plain lightning"):
        Parametrization(Architecture((2, 1), (2,), normalized=True), "reduced")
    par = Parametrization(Architecture((2, 1), (2,)), "reduced")
    with pytest.raises(InvalidArgumentError, match="missing"):
        par.weights_vector(V=np.ones((1, 2)))
    with pytest.raises(InvalidArgumentError, match="shape"):
        par.weights_vector(Q=np.ones((2, 3)), K=np.ones((2, 2)), V=np.ones((1, 2)))
