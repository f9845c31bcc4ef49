"""The square system of the numerical route (ag_attention._landscape.square): its derivatives, its balls, its
charts, its solutions against the exact count."""

from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._exact import balls
from ag_attention._landscape.metrics import metric, reduced_coordinates
from ag_attention._landscape.square import square_system
from ag_attention._numeric.homotopy import newton
from ag_attention._numeric.monodromy import monodromy_solve
from tests.helpers import square_point


@pytest.mark.parametrize("d, e, a", [(2, 1, 2), (2, 1, 1), (3, 1, 2), (2, 2, 1)])
def test_derivatives_against_differences_and_balls_against_floats(d, e, a, rng):
    arch = Architecture.single_layer(d, e, a, tokens=2)
    G, _ = metric("generic", d, e, 2, seed=3)
    S = square_system(arch, G)
    theta, chart, _, _ = square_point(S, rng)
    z = theta[0]
    w = rng.standard_normal(S.n_x) + 1j * rng.standard_normal(S.n_x)
    F, J, Fw = S.evaluate(theta, w, True, np.ones(S.n_x), chart=chart)
    h = 1e-6
    for k in range(S.n):  # central differences: error O(h^2)
        step = np.zeros(S.n, dtype=complex)
        step[k] = h
        diff = (
            S.evaluate((z + step)[None], w, False, chart=chart)[0]
            - S.evaluate((z - step)[None], w, False, chart=chart)[0]
        ) / (2 * h)
        assert np.allclose(diff[0], J[0][:, k], rtol=1e-6, atol=1e-6 * np.abs(J).max())
    diff = (S.evaluate(theta, w + h, False, chart=chart)[0] - S.evaluate(theta, w - h, False, chart=chart)[0]) / (2 * h)
    assert np.allclose(diff[0], Fw[0], atol=1e-6 * np.abs(Fw).max())
    # the balls on a box hold the float values at its center
    with balls.precision(128):
        Fb, Jb = S.ball_evaluate(balls.complex_box(z, 1e-12), list(w), chart=chart[0])
    for k in range(S.n):
        assert abs(complex(Fb[k].real.mid(), Fb[k].imag.mid()) - F[0, k]) < 1e-9 * (1 + np.abs(F).max())
        for j in range(S.n):
            assert abs(complex(Jb[k, j].real.mid(), Jb[k, j].imag.mid()) - J[0, k, j]) < 1e-9 * (1 + np.abs(J).max())


@pytest.mark.parametrize("d, e, a", [(2, 1, 2), (3, 1, 2), (3, 2, 1)])
def test_charts_move_points_without_moving_them(d, e, a, rng):
    arch = Architecture.single_layer(d, e, a, tokens=2)
    S = square_system(arch, np.eye(len(reduced_coordinates(np.zeros((d, d)), np.zeros((e, d))))))
    theta, chart, A, V = square_point(S, rng)
    # the point is on its slice, and its weights give back its coordinates and the orbit's invariants
    l, _ = S.split_chart(chart)
    assert np.isclose(np.sum(l[0] * theta[0, S.n_A : S.n_A + e * d]), 1)
    Aw, Vw = S.weights(theta, chart)
    assert np.allclose(reduced_coordinates(Aw[0], Vw[0]), S.coordinates(theta, chart)[0])
    assert np.allclose(S.invariants(theta, chart)[0], np.einsum("kl,mj->klmj", A[0], V[0]).reshape(-1))
    # a chart centered on the point: quality 1, same invariants (the same point of the quotient), lambda kept
    for real in (False, True):
        moved, new_chart = S.adapt(theta, chart, np.array([real]))
        assert np.allclose(S.invariants(moved, new_chart), S.invariants(theta, chart))
        assert moved[0, -1] == theta[0, -1]
        assert np.all(np.isreal(new_chart)) == real or not real
        if not real:
            assert S.chart_quality(moved, new_chart)[0] == pytest.approx(1.0)


def test_a_start_pair_is_a_solution(rng):
    arch = Architecture.single_layer(3, 1, 2, tokens=2)
    G, _ = metric("euclidean", 3, 1, 2, seed=0)
    S = square_system(arch, G)
    norms = []
    for size in (1.0, 100.0):
        z0, w0, c0 = S.seed(np.random.default_rng(4), size=size)
        _, last = newton(S, z0[None], w0, iterations=1, chart=c0[None])  # Newton does not move it: a solution
        assert last[0] < 1e-12
        norms.append(np.linalg.norm(S.coordinates(z0[None], c0[None])))
    assert 100 / 3 < norms[1] / norms[0] < 100 * 3  # x is linear in A: a start of that size


@pytest.mark.parametrize(
    "d, e, a, kind, solutions",
    [(2, 1, 2, "euclidean", 6), (2, 1, 2, "generic", 14), (2, 1, 1, "generic", 20), (2, 2, 2, "data", 68)],
)
def test_monodromy_on_it_finds_the_exact_count(d, e, a, kind, solutions):
    # msolve's counts (tests/landscape/test_ed.py, docs/math/landscape.md): ED 6, 14 and 68 with fiber 1, ED 10
    # with fiber 2
    arch = Architecture.single_layer(d, e, a, tokens=2)
    G, _ = metric(kind, d, e, 2, seed=0)
    S = square_system(arch, G)
    z0, w0, c0 = S.seed(np.random.default_rng(0))
    r = monodromy_solve(S, z0, w0, seed=0, chart0=c0)
    assert r.count == solutions and r.stop == "trace test" and r.trace < 1e-10


def test_the_scale_of_the_data_is_taken_out():
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    G, _ = metric("generic", 2, 1, 2, seed=0)
    S1 = square_system(arch, G, w_scale=1.0)
    S2 = square_system(arch, [[v * 2**40 for v in row] for row in G], w_scale=2.0**60)
    # G at another scale is the same G in the float64 computation, and the targets' scale goes into the weights
    assert np.array_equal(np.vectorize(float)(S1.G), np.vectorize(float)(S2.G))
    assert S2.scale_G / S1.scale_G == 2**40 and S2.scale_x / S1.scale_x == 2**20
    assert list(S2.target([2**60] * S2.n_x)) == [Fraction(2**60) / (S2.scale_G * S2.scale_x)] * S2.n_x


def test_a_bad_form_is_refused():
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    with pytest.raises(InvalidArgumentError, match="must be 6 x 6"):
        square_system(arch, np.eye(5))
    with pytest.raises(InvalidArgumentError, match="symmetric"):
        square_system(arch, np.triu(np.ones((6, 6))))
