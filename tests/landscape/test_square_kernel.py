"""The square system's compiled derivatives in (A, V) (ag_attention._landscape.square_kernel), against dense numpy
products of the same definitions and against differences."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._landscape.metrics import metric
from ag_attention._landscape.square import square_system
from ag_attention._landscape.square_kernel import Terms, system, u_space


def _dense(terms, n_x, n_u, u, w, dw, G, D):
    """g, M and g_w of the module docstring from a dense J_x and dense second derivatives (one point)."""
    i, p, q, c = terms
    x = np.zeros(n_x, complex)
    Jx = np.zeros((n_x, n_u), complex)
    Hx = np.zeros((n_x, n_u, n_u), complex)
    for ii, pp, qq, cc in zip(i, p, q, c):
        x[ii] += cc * u[pp] * u[qq]
        Jx[ii, pp] += cc * u[qq]
        Jx[ii, qq] += cc * u[pp]
        Hx[ii, pp, qq] += cc
        Hx[ii, qq, pp] += cc
    r = G @ x - w
    g = Jx.T @ r
    M = Jx.T @ G @ Jx + np.einsum("i,ijk->jk", r, Hx)
    gw = Jx.T @ ((D @ x if D is not None else 0) - dw)
    return g, M, gw


@pytest.mark.parametrize("d, e, a", [(2, 1, 2), (3, 1, 1), (2, 2, 2), (4, 1, 4)])
def test_against_dense_products_with_one_form_and_one_per_point(d, e, a, rng):
    S = square_system(Architecture.single_layer(d, e, a, tokens=2), metric("generic", d, e, 2, seed=1)[0])
    n_x, n_u, B = S.n_x, d * d + e * d, 6
    terms = (np.asarray(S.x_terms[0]), np.asarray(S.x_terms[1]), np.asarray(S.x_terms[2]),
             np.array([float(v) for v in S.x_terms[3]]))  # fmt: skip
    G = np.array([[float(v) for v in row] for row in S.G])
    for scale in (1e-3, 1.0, 1e3):  # Gaussian points at several scales
        u = (rng.standard_normal((B, n_u)) + 1j * rng.standard_normal((B, n_u))) * scale
        w = rng.standard_normal((B, n_x)) + 1j * rng.standard_normal((B, n_x))
        # one direction for every point (a homotopy's segment), or one per point (the tracker's paths)
        dw = rng.standard_normal(n_x) + 0j if scale != 1.0 else rng.standard_normal((B, n_x)) + 0j
        # one form for every point, then a symmetric form and its derivative per point
        Gs = rng.standard_normal((B, n_x, n_x)) + 1j * rng.standard_normal((B, n_x, n_x))
        Gs = Gs + Gs.transpose(0, 2, 1)
        Ds = rng.standard_normal((B, n_x, n_x))
        Ds = Ds + Ds.transpose(0, 2, 1)
        for form, deriv in ((G, None), (Gs, Ds)):
            g, M, gw = u_space(u, w, dw, form, deriv, terms, True)
            g_only, none, none_w = u_space(u, w, None, form, deriv, terms, False)
            assert none is None and none_w is None and np.array_equal(g, g_only)
            for b in range(B):
                Gb = form if form.ndim == 2 else form[b]
                Db = None if deriv is None else deriv[b]
                eg, eM, egw = _dense(terms, n_x, n_u, u[b], w[b], dw if dw.ndim == 1 else dw[b], Gb, Db)
                for got, want in ((g[b], eg), (M[b], eM), (gw[b], egw)):
                    assert np.allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
                assert np.allclose(M[b], M[b].T, rtol=1e-12, atol=1e-12 * np.abs(M[b]).max())  # a Hessian
    assert [v.shape for v in u_space(u[:0], w[:0], dw, G, None, terms, True)] == [(0, n_u), (0, n_u, n_u), (0, n_u)]


def test_wrong_shapes_are_refused_before_the_compiled_loop(rng):
    S = square_system(Architecture.single_layer(2, 1, 2, tokens=2), metric("generic", 2, 1, 2, seed=1)[0])
    terms = tuple(np.asarray(v) for v in S.x_terms[:3]) + (np.array([float(v) for v in S.x_terms[3]]),)
    G = np.eye(S.n_x)
    u = rng.standard_normal((5, 6)) + 0j
    with pytest.raises(ValueError, match=r"wrong shapes: w \(2, 6\)"):
        u_space(u, np.ones((2, S.n_x)), None, G, None, terms, True)  # 2 targets for 5 points
    with pytest.raises(ValueError, match="index out of range"):
        u_space(u[:, :4], np.ones(S.n_x), None, G, None, terms, True)  # 4 weights where the terms read 6
    # read-only term arrays (a system unpickled from read-only buffers) are taken as they are
    ro = tuple(np.array(v) for v in terms)
    for v in ro:
        v.flags.writeable = False
    assert np.array_equal(u_space(u, np.ones(S.n_x), None, G, None, ro, False)[0],
                          u_space(u, np.ones(S.n_x), None, G, None, terms, False)[0])  # fmt: skip


def test_the_system_and_the_terms_refuse_wrong_shapes_before_the_compiled_loops(rng):
    S = square_system(Architecture.single_layer(3, 1, 1, tokens=2), metric("generic", 3, 1, 2, seed=1)[0])
    terms = Terms.of(*S.x_terms[:3], [float(v) for v in S.x_terms[3]])
    theta = rng.standard_normal((4, S.n)) + 0j
    chart = np.array([S.random_chart(rng) for _ in range(4)])
    G, w = np.eye(S.n_x), np.ones(S.n_x)
    F, J, Fw = system(theta, chart, (3, 1, 1), w, w, G, None, terms, True)
    assert F.shape == Fw.shape == (4, S.n) and J.shape == (4, S.n, S.n)
    with pytest.raises(ValueError, match="points of 9 unknowns"):
        system(theta[:, :-1], chart, (3, 1, 1), w, None, G, None, terms, True)  # one unknown short
    with pytest.raises(ValueError, match="points of 9 unknowns"):
        system(theta, chart[:, :3], (3, 1, 1), w, None, G, None, terms, True)  # the chart without its R
    with pytest.raises(ValueError, match="p = q"):
        Terms.of([0], [1], [1], [1.0])
    with pytest.raises(ValueError, match="negative"):
        Terms.of([0], [-1], [1], [1.0])
    with pytest.raises(ValueError, match="one length"):
        Terms.of([0, 1], [0], [1], [1.0])
