"""The reverse-mode Jacobian and the forward pass, checked independently.

* forward: against the matrix form of docs/math/model.md (model-one-layer), ``Y = V X X^T A^T X`` in exact integers;
* Jacobian: against the exact derivative of ``s -> f(theta + s delta)``,
  a polynomial of known degree, recovered by Lagrange interpolation over GF(p).
"""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._exact.field import GFp
from ag_attention._network import forward, jacobian, unflatten
from ag_attention._numeric import Float64
from tests.helpers import generator

P = 2**31 - 1


def direct_layer(A, V, X, causal=False):
    """docs/math/model.md (model-one-layer): Y = V X X^T A^T X with X of shape d x t (exact object arrays).

    Entry (j, i) of ``X^T A^T X`` is ``x_i^T A x_j``, token i's weight of token j: a causal mask keeps j <= i.
    """
    W = X.T.dot(A.T).dot(X)
    if causal:
        W = np.triu(W)
    return V.dot(X).dot(W)


def direct(arch, theta, Xs):
    """Outputs (N, t, d_L) by the matrix formula, Python integers."""
    weights = unflatten(arch, np.array(theta, dtype=object))
    out = []
    for X in Xs:
        H = np.array(X, dtype=object).T  # d x t
        for heads in weights:
            Y = 0
            for w in heads:
                A = w["A"] if "A" in w else w["Q"].T.dot(w["K"])
                Y = Y + direct_layer(A, w["V"], H, arch.causal)
            if arch.skip:
                Y = Y + H
            H = Y
        out.append(H.T)
    return np.array(out, dtype=object)


ARCHS = [
    Architecture((3, 2), (2,), tokens=3),
    Architecture.single_layer(3, 2, tokens=2),
    Architecture((3, 2, 2), (2, 1), tokens=2),
    Architecture((2, 3, 2), (2, 3), tokens=3),
    Architecture((2, 2, 2), (1, 2), tokens=2, heads=2),
    Architecture((2, 2, 2), (2, 1), tokens=2, skip=True),
    Architecture((2, 2, 2), None, tokens=2, parametrization="AV"),
    Architecture((2, 2, 2, 2), (1, 1, 1), tokens=2),
    Architecture((3, 2), (2,), tokens=3, causal=True),
    Architecture((2, 2, 2), (2, 1), tokens=3, heads=2, skip=True, causal=True),
    Architecture((2, 3, 2), None, tokens=3, parametrization="AV", causal=True),
]


@pytest.mark.parametrize("arch", ARCHS, ids=str)
def test_forward_matches_matrix_formula(arch, rng):
    F = GFp(P)
    theta = rng.integers(-5, 6, size=arch.parameter_count)
    X = rng.integers(-5, 6, size=(3, arch.tokens, arch.widths[0]))
    want = direct(arch, theta.tolist(), X.tolist())
    got = forward(arch, F, np.remainder(theta, P), np.remainder(X, P))
    assert got.shape == want.shape
    assert np.array_equal(got, np.vectorize(lambda v: int(v) % P, otypes=[np.int64])(want))


def degree_in_parameters(arch):
    per_layer = 3 if arch.parametrization == "QKV" else 2
    deg = 0
    for _ in arch.layers:
        deg = 3 * deg + per_layer
    return deg


def lagrange_derivative_at_zero(values, p):
    """d/ds at s=0 of the interpolant through (s, values[s]), s = 0..D, over GF(p)."""
    D = len(values) - 1
    total = 0
    for k in range(D + 1):
        # l_k(s) = prod_{j != k} (s - j) / (k - j);  l_k'(0)
        denom = 1
        for j in range(D + 1):
            if j != k:
                denom = denom * (k - j) % p
        if k == 0:
            # derivative of prod_{j>0}(s - j) at 0 = sum_j prod_{i != j, i > 0} (-i)
            num = 0
            for j in range(1, D + 1):
                term = 1
                for i in range(1, D + 1):
                    if i != j:
                        term = term * (-i) % p
                num = (num + term) % p
        else:
            # s is a factor: derivative at 0 = prod_{j != k, j > 0} (-j)
            num = 1
            for j in range(1, D + 1):
                if j != k:
                    num = num * (-j) % p
        total = (total + values[k] * num * pow(denom, -1, p)) % p
    return total


@pytest.mark.parametrize("arch", ARCHS, ids=str)
def test_jacobian_matches_exact_directional_derivative(arch, rng):
    F = GFp(P)
    theta = F.random(rng, arch.parameter_count)
    X = F.random(rng, (2, arch.tokens, arch.widths[0]))
    J = jacobian(arch, F, theta, X)
    assert J.shape == (2 * arch.output_size, arch.parameter_count)
    D = degree_in_parameters(arch)
    for _ in range(2):
        delta = F.random(rng, arch.parameter_count)
        values = [forward(arch, F, np.remainder(theta + s * delta, P), X).ravel().astype(object) for s in range(D + 1)]
        want = [lagrange_derivative_at_zero([int(v[r]) for v in values], P) for r in range(J.shape[0])]
        assert F.matvec(J, delta).tolist() == want


def test_jacobian_columns_are_partial_derivatives(rng):
    # column-by-column check on a tiny network (independent of matvec)
    arch = Architecture((2, 1), (1,), tokens=2)
    F = GFp(P)
    theta = F.random(rng, arch.parameter_count)
    X = F.random(rng, (1, 2, 2))
    J = jacobian(arch, F, theta, X)
    for c in range(arch.parameter_count):
        e = np.zeros(arch.parameter_count, dtype=np.int64)
        e[c] = 1
        values = [forward(arch, F, np.remainder(theta + s * e, P), X).ravel() for s in range(4)]
        want = [lagrange_derivative_at_zero([int(v[r]) for v in values], P) for r in range(J.shape[0])]
        assert J[:, c].tolist() == want


def test_input_shape_is_checked(rng):
    arch = Architecture((3, 2), (2,), tokens=3)
    F = GFp(P)
    with pytest.raises(ValueError, match="inputs have shape"):
        forward(arch, F, F.random(rng, arch.parameter_count), F.random(rng, (2, 3, 4)))
    with pytest.raises(ValueError, match="parameter vector"):
        forward(arch, F, F.random(rng, 5), F.random(rng, (2, 3, 3)))
    with pytest.raises(ValueError, match="not polynomial"):
        forward(arch.with_(normalized=True), F, F.random(rng, arch.parameter_count), F.random(rng, (2, 3, 3)))


@pytest.mark.parametrize("arch", ARCHS[:4], ids=str)
def test_seeded_jacobian_is_block_combination_of_rows(arch, rng):
    F = GFp(P)
    theta = F.random(rng, arch.parameter_count)
    X = F.random(rng, (3, arch.tokens, arch.widths[0]))
    seeds = F.random(rng, (3, 2, arch.tokens, arch.widths[-1]))
    J = jacobian(arch, F, theta, X).reshape(3, arch.output_size, -1)
    G = jacobian(arch, F, theta, X, seeds).reshape(3, 2, -1)
    want = np.stack([F.einsum("kr,rp->kp", seeds[n].reshape(2, -1), J[n]) for n in range(3)])
    assert np.array_equal(G, want)
    with pytest.raises(ValueError, match="seeds have shape"):
        jacobian(arch, F, theta, X, seeds[:2])


def test_causal_softmax_attends_to_earlier_tokens_only(rng):
    """Token 1 sees only itself (its output is V x_1); perturbing a later token leaves earlier outputs unchanged;
    the float64 Jacobian agrees with central differences."""
    from ag_attention._numeric import Float64

    arch = Architecture((3, 2), (2,), tokens=3, normalized=True, causal=True)
    F = Float64()
    theta = rng.standard_normal(arch.parameter_count)
    X = rng.standard_normal((2, 3, 3))
    Y = forward(arch, F, theta, X)
    V = unflatten(arch, theta)[0][0]["V"]
    # float64 sums in another order than X @ V.T: equal to rounding (1e-16); np.allclose's 1e-5 relative leaves a
    # margin of 1e10 and still fails on any wrong output (of order one)
    assert np.allclose(Y[:, 0], X[:, 0] @ V.T)
    X2 = X.copy()
    X2[:, 2] += 1.0
    # earlier tokens: unchanged up to rounding; the last token: changed by order one (V x_3 moves by V e)
    assert np.allclose(forward(arch, F, theta, X2)[:, :2], Y[:, :2]) and not np.allclose(
        forward(arch, F, theta, X2)[:, 2], Y[:, 2]
    )
    J = jacobian(arch, F, theta, X)
    # central differences with h = 1e-6 are off by h^2 f''' (1e-12) and eps |f| / h (1e-10): the tolerance 1e-6 is
    # 10,000 times that, and far below a wrong derivative (order one)
    h = 1e-6
    for c in range(0, arch.parameter_count, 3):
        e = np.zeros(arch.parameter_count)
        e[c] = h
        fd = (forward(arch, F, theta + e, X) - forward(arch, F, theta - e, X)).ravel() / (2 * h)
        assert np.allclose(J[:, c], fd, atol=1e-6)


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((3, 2, 2), (2, 1), tokens=3, normalized=True, temperature=0.7),
        Architecture((2, 2), None, tokens=2, parametrization="AV", normalized=True),
        Architecture((2, 2, 2), (1, 2), tokens=2, heads=2, skip=True, normalized=True),
    ],
    ids=str,
)
def test_softmax_jacobian_matches_central_differences(arch):
    F, rng = Float64(), generator(3)
    theta = rng.standard_normal(arch.parameter_count) * 0.5
    X = rng.standard_normal((2, arch.tokens, arch.widths[0]))
    J = jacobian(arch, F, theta, X)
    h = 1e-6
    num = np.stack(
        [
            (forward(arch, F, theta + h * e, X) - forward(arch, F, theta - h * e, X)).ravel() / (2 * h)
            for e in np.eye(arch.parameter_count)
        ],
        axis=1,
    )
    # central differences: off by h^2 f''' + eps |f| / h, about 1e-10 relative (see above): 1e-7 is a margin of 1,000
    assert np.abs(J - num).max() < 1e-7 * max(1.0, np.abs(J).max())


# ------------------------------------------------------------------ affine and rotary attention
# docs/math/affine.md, docs/math/rotary.md: biases on the projections, rotary positions.
VARIANTS = [
    Architecture((3, 2), (2,), tokens=3, bias="qkvo"),
    Architecture((3, 2), (2,), tokens=2, bias="qv"),
    Architecture((2, 2, 2), (2, 1), tokens=3, heads=2, bias="qkvo", causal=True),
    Architecture((2, 2, 2), (2, 2), tokens=2, bias="ko", skip=True),
    Architecture((4, 2), (4,), tokens=3, positions="rope"),
    Architecture((4, 3), (4,), tokens=3, positions={"kind": "rope", "dims": 2, "pairing": "interleaved"}),
    Architecture((3, 3, 2), (2, 2), tokens=3, heads=2, positions="rope", bias="qkvo", causal=True),
]


def augmented_direct(arch, theta, Xs):
    """An affine network as the plain network on inputs with a constant coordinate 1 (docs/math/affine.md,
    affine-model): ``Q~ = [Q | b_q]``, ``K~ = [K | b_k]``, ``V~ = [V | b_v]``, plus ``b_o`` on every token (exact)."""
    weights = unflatten(arch, np.array(theta, dtype=object))
    out = []
    for X in Xs:
        H = np.array(X, dtype=object).T  # d x t
        for heads in weights:
            Ht = np.vstack([H, np.ones((1, H.shape[1]), dtype=object)])
            Y = 0
            for w in heads:
                Q, K, V = (
                    np.hstack([w[m], w["b" + m] if "b" + m in w else np.zeros((w[m].shape[0], 1), dtype=object)])
                    for m in "QKV"
                )
                Y = Y + direct_layer(Q.T.dot(K), V, Ht, arch.causal)
            if "bO" in heads[0]:
                Y = Y + heads[0]["bO"]
            if arch.skip:
                Y = Y + H
            H = Y
        out.append(H.T)
    return np.array(out, dtype=object)


@pytest.mark.parametrize("arch", [a for a in VARIANTS if a.positions is None], ids=str)
def test_affine_forward_is_the_plain_one_on_augmented_inputs(arch, rng):
    F = GFp(P)
    theta = rng.integers(-5, 6, size=arch.parameter_count)
    X = rng.integers(-5, 6, size=(3, arch.tokens, arch.widths[0]))
    want = augmented_direct(arch, theta.tolist(), X.tolist())
    got = forward(arch, F, np.remainder(theta, P), np.remainder(X, P))
    assert np.array_equal(got, np.vectorize(lambda v: int(v) % P, otypes=[np.int64])(want))


def test_rotary_scores_are_relative_bilinear_forms(rng):
    """``(R_i q_i)^T (R_j k_j) = q_i^T R_{j-i} k_j``: the lightning scores at offset j - i, over GF(p) (the rotations
    of one prime: a torus point) and in float64 (the true frequencies); the softmax weights are their softmax."""
    from ag_attention._network import attention_weights, rotations

    for arch in (
        Architecture((4, 2), (4,), tokens=4, positions="rope", bias="qk"),
        Architecture((3, 2), (4,), tokens=3, positions={"kind": "rope", "dims": 2}),
    ):
        for F in (GFp(P), Float64()):
            theta = F.random(rng, arch.parameter_count)
            X = F.random(rng, (2, arch.tokens, arch.widths[0]))
            w = unflatten(arch, theta)[0][0]
            R = rotations(arch, F, arch.ranks[0])
            q = F.einsum("ntk,ck->ntc", X, w["Q"])
            k = F.einsum("ntk,ck->ntc", X, w["K"])
            q, k = (F.add(z, w[b][:, 0]) if b in w else z for z, b in ((q, "bQ"), (k, "bK")))
            S = attention_weights(arch, F, theta, X)[0]
            for i in range(arch.tokens):
                for j in range(arch.tokens):
                    # R_{j-i} = R_i^T R_j: the rotations of one arithmetic compose
                    Rij = F.einsum("cd,ce->de", R[i], R[j])
                    want = F.einsum("nc,nc->n", q[:, i], F.einsum("cd,nd->nc", Rij, k[:, j]))
                    if isinstance(F, GFp):
                        assert np.array_equal(S[:, i, j], want)
                    else:  # float64: sums in another order, equal to rounding (1e-15; a wrong score is order one)
                        assert np.allclose(S[:, i, j], want, rtol=1e-12, atol=1e-12)


def test_rotary_float64_is_llamas_rotate_half(rng):
    """The float64 rotation is LLaMA's ``q * cos + rotate_half(q) * sin`` with ``inv_freq = base^(-2f/D)``."""
    from ag_attention._network import rotations

    arch = Architecture((6, 2), (6,), tokens=5, positions={"kind": "rope", "base": 500000})
    R = rotations(arch, Float64(), 6)
    q = rng.standard_normal(6)
    inv = 500000.0 ** (-np.arange(0, 6, 2) / 6)
    for pos in range(5):
        cos, sin = np.cos(pos * np.concatenate([inv, inv])), np.sin(pos * np.concatenate([inv, inv]))
        half = np.concatenate([-q[3:], q[:3]])
        assert np.allclose(R[pos] @ q, q * cos + half * sin, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("arch", VARIANTS, ids=str)
def test_variant_jacobian_matches_exact_directional_derivative(arch, rng):
    F = GFp(P)
    theta = F.random(rng, arch.parameter_count)
    X = F.random(rng, (2, arch.tokens, arch.widths[0]))
    J = jacobian(arch, F, theta, X)
    D = degree_in_parameters(arch)
    delta = F.random(rng, arch.parameter_count)
    values = [forward(arch, F, np.remainder(theta + s * delta, P), X).ravel().astype(object) for s in range(D + 1)]
    want = [lagrange_derivative_at_zero([int(v[r]) for v in values], P) for r in range(J.shape[0])]
    assert F.matvec(J, delta).tolist() == want


@pytest.mark.parametrize("arch", [a.with_(normalized=True) for a in VARIANTS], ids=str)
def test_variant_softmax_jacobian_matches_central_differences(arch):
    F, rng = Float64(), generator(3)
    theta = rng.standard_normal(arch.parameter_count) * 0.5
    X = rng.standard_normal((2, arch.tokens, arch.widths[0]))
    J = jacobian(arch, F, theta, X)
    h = 1e-6
    num = np.stack(
        [
            (forward(arch, F, theta + h * e, X) - forward(arch, F, theta - h * e, X)).ravel() / (2 * h)
            for e in np.eye(arch.parameter_count)
        ],
        axis=1,
    )
    # as test_softmax_jacobian_matches_central_differences: a margin of 1,000 over the differences' error
    assert np.abs(J - num).max() < 1e-7 * max(1.0, np.abs(J).max())


def test_softmax_removes_the_key_bias_and_passes_the_value_bias(rng):
    """Metamorphic (docs/math/affine.md, affine-softmax): under softmax, any key bias gives the same outputs
    (without rotary positions), and moving e from the output bias into a value bias too; with rotary positions the
    key bias changes them."""
    F = Float64()
    arch = Architecture((3, 3), (2,), tokens=4, heads=2, bias="qkvo", normalized=True)
    theta = rng.standard_normal(arch.parameter_count)
    X = rng.standard_normal((3, 4, 3))
    Y = forward(arch, F, theta, X)
    moved = theta.copy()
    moved[arch.block("bK", 1, 1).slice] += 10 * rng.standard_normal(2)
    e = rng.standard_normal(3)
    moved[arch.block("bV", 1, 0).slice] += e
    moved[arch.block("bO", 1, 0).slice] -= e
    # the same function: equal to rounding (1e-15 relative; a changed function moves by order one)
    assert np.allclose(forward(arch, F, moved, X), Y, rtol=1e-12, atol=1e-12)
    rope = arch.with_(positions="rope")
    changed = theta.copy()
    changed[rope.block("bK", 1, 1).slice] += 1.0
    assert not np.allclose(forward(rope, F, changed, X), forward(rope, F, theta, X), rtol=1e-6, atol=1e-6)


def test_exact_rationals_refuse_rotary_positions(rng):
    from ag_attention._network import ObjectArithmetic

    arch = Architecture((2, 2), (2,), tokens=2, positions="rope")
    theta = np.array([1] * arch.parameter_count, dtype=object)
    with pytest.raises(ValueError, match="not rational numbers"):
        forward(arch, ObjectArithmetic(), theta, np.ones((1, 2, 2), dtype=object))


def test_finite_symmetries_of_affine_and_rotary_networks(rng):
    """Metamorphic (docs/math/affine.md, docs/math/rotary.md), finite rather than infinitesimal: a shift m of layer
    1's output by its output bias, absorbed by layer 2's biases (b -> b - W m); an invertible G in the rotations'
    commutant on a head's queries and keys (Q -> G Q, K -> G^{-T} K, biases alike); the rescaling (c Q, V / c) of a
    lightning head: each leaves the function unchanged (float64, to rounding), while a G outside the commutant
    changes a rotary network's function."""
    arch = Architecture((4, 4, 3), (4, 4), tokens=3, heads=2, bias="qkvo", positions="rope")
    F = Float64()
    theta = rng.standard_normal(arch.parameter_count)
    X = rng.standard_normal((4, 3, 4)) * 2.0
    Y = forward(arch, F, theta, X)

    def view(t, name, layer, head):
        return t[arch.block(name, layer, head).slice].reshape(arch.block(name, layer, head).rows, -1)

    shifted = theta.copy()
    m = rng.standard_normal(4)
    view(shifted, "bO", 1, 0)[:, 0] += m
    for h in range(2):
        for name in ("Q", "K", "V"):
            view(shifted, "b" + name, 2, h)[:, 0] -= view(theta, name, 2, h) @ m
    # equal to rounding (1e-13 relative here; a wrong shift moves outputs by order one)
    assert np.allclose(forward(arch, F, shifted, X), Y, rtol=1e-10, atol=1e-10)
    # a commutant element: rotation-scalings of the turning planes (pairs (0, 2) and (1, 3) of a head of 4)
    G = np.zeros((4, 4))
    for (c1, c2), (a, b) in zip(((0, 2), (1, 3)), ((1.3, 0.4), (0.7, -0.9))):
        G[c1, c1] = G[c2, c2] = a
        G[c1, c2], G[c2, c1] = -b, b
    turned = theta.copy()
    Ginv_T = np.linalg.inv(G).T
    view(turned, "Q", 1, 0)[:] = G @ view(theta, "Q", 1, 0)
    view(turned, "bQ", 1, 0)[:] = G @ view(theta, "bQ", 1, 0)
    view(turned, "K", 1, 0)[:] = Ginv_T @ view(theta, "K", 1, 0)
    view(turned, "bK", 1, 0)[:] = Ginv_T @ view(theta, "bK", 1, 0)
    assert np.allclose(forward(arch, F, turned, X), Y, rtol=1e-10, atol=1e-10)
    scaled = theta.copy()
    c = 2.5
    for name, factor in (("Q", c), ("bQ", c), ("V", 1 / c), ("bV", 1 / c)):
        view(scaled, name, 2, 1)[:] *= factor
    assert np.allclose(forward(arch, F, scaled, X), Y, rtol=1e-10, atol=1e-10)
    generic = theta.copy()
    H = rng.standard_normal((4, 4)) + 3 * np.eye(4)  # not in the commutant
    view(generic, "Q", 1, 0)[:] = H @ view(theta, "Q", 1, 0)
    view(generic, "K", 1, 0)[:] = np.linalg.inv(H).T @ view(theta, "K", 1, 0)
    assert not np.allclose(forward(arch, F, generic, X), Y, rtol=1e-6, atol=1e-6)
