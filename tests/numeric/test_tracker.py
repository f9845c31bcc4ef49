"""Paths along a segment of parameters (ag_attention._numeric.tracker), on systems solved in closed form."""

import numpy as np
import pytest

from ag_attention._errors import InvalidArgumentError
from ag_attention._numeric.tracker import TrackerOptions, newton, track
from tests.numeric.test_homotopy import Circle, Roots, circle_solutions


def test_a_path_ends_at_the_solution_it_continues():
    res = track(Roots(2), np.array([[1.0 + 0j]]), np.array([1.0 + 0j]), np.array([4.0 + 0j]))
    assert res.ok.all() and abs(res.z[0, 0] - 2) < 1e-10 and res.reason[0] == ""
    # both solutions of the circle system, carried between two complex parameters, land on the closed forms
    pa, pb = np.array([2.0 + 1j, 0.5 - 0.3j]), np.array([5.0 - 2j, -1.0 + 0.7j])
    start = np.array(circle_solutions(*pa))
    res = track(Circle(), start, pa, pb)
    assert res.ok.all()
    ends = sorted(map(tuple, res.z), key=lambda s: (s[0].real, s[0].imag))
    assert np.allclose(ends, circle_solutions(*pb), atol=1e-9)


def test_newton_refines_each_point_to_its_solution():
    z, last = newton(Roots(3), np.array([[1.05 + 0j], [-0.5 + 0.9j]]), np.array([1.0 + 0j]), iterations=8)
    assert np.allclose(z[:, 0] ** 3, 1) and (last < 1e-12).all()


@pytest.mark.parametrize(
    "kwargs, text",
    [
        ({"min_step": 0.5}, "step sizes"),
        ({"max_steps": 0}, "max_steps=0"),
    ],
)
def test_bad_tracker_options_are_refused(kwargs, text):
    with pytest.raises(InvalidArgumentError, match=text):
        TrackerOptions(**kwargs)


def test_a_smooth_path_takes_few_steps_with_the_velocity_it_keeps():
    # each step starts from the velocity its last correction left (not a fresh Jacobian): were that velocity off
    # (half of it: measured 47 and 67 steps), the predictor would miss and the steps be rejected over and over
    res = track(Roots(2), np.array([[1.0 + 0j]]), np.array([1.0 + 0j]), np.array([4.0 + 0j]))
    pa, pb = np.array([2.0 + 1j, 0.5 - 0.3j]), np.array([5.0 - 2j, -1.0 + 0.7j])
    both = track(Circle(), np.array(circle_solutions(*pa)), pa, pb)
    assert res.ok.all() and both.ok.all()
    assert res.steps.max() <= 10 and both.steps.max() <= 10, (res.steps, both.steps)
    assert np.allclose(sorted(map(tuple, both.z), key=lambda s: (s[0].real, s[0].imag)), circle_solutions(*pb))


class _BrokenValues:
    """``F = z - p`` (two unknowns), whose values alone (the corrector's calls, without the Jacobian) are NaN once
    ``|z_0| > 1``: a system that breaks off where the predictor does not look."""

    n, n_parameters = 2, 2

    def evaluate(self, z, p, jacobian=True, dp=None):
        z = np.asarray(z, complex)
        F = z - np.broadcast_to(p, z.shape)
        if not jacobian:
            F = np.where(np.abs(z[:, :1]) > 1, np.nan, F)
        J = np.broadcast_to(np.eye(2, dtype=complex), (z.shape[0], 2, 2)).copy() if jacobian else None
        return (F, J) if dp is None else (F, J, -np.broadcast_to(dp, z.shape))


def test_a_correction_that_fails_fails_its_step():
    # a NaN value in the corrector is no correction of zero: the path cannot get past |z_0| = 1 (it was accepted at
    # z = (5, 5) with corrections never applied when failed solves counted as zero)
    r = track(_BrokenValues(), np.zeros((1, 2), complex), np.zeros(2, complex), np.full(2, 5.0 + 0j))
    assert not r.ok[0] and r.reason[0] == "step too small" and abs(r.z[0, 0]) <= 1
    r = track(_BrokenValues(), np.zeros((1, 2), complex), np.zeros(2, complex), np.full(2, 0.5 + 0j))
    assert r.ok[0] and np.allclose(r.z[0], 0.5)  # below the break the same system is tracked to its end


def test_contracting_corrections_go_on_instead_of_rejecting_the_step(monkeypatch):
    # the landscape's (2,2,2) system (Jacobians with condition numbers near 1e6): where the chord's third correction
    # is above the tolerance but the corrections still halve, more corrections are cheaper than the step rejected
    # (measured on 512 paths at tolerance 1e-9: 24,237 steps without them, 18,893 with them); the same ends
    from ag_attention import Architecture
    from ag_attention._landscape.generic_start import generic_form
    from ag_attention._landscape.square import square_system
    from ag_attention._numeric import tracker

    S = square_system(Architecture.single_layer(2, 2, 2, tokens=2), generic_form(2, 2, 12, 0))
    rng = np.random.default_rng(11)
    theta, w0, charts = (np.array(v) for v in zip(*[S.random_start(rng) for _ in range(48)]))
    w1 = rng.standard_normal(S.n_x) + 1j * rng.standard_normal(S.n_x)
    options = TrackerOptions(tolerance=1e-9)
    with_more = track(S, theta, w0, w1, options, None, charts)
    monkeypatch.setattr(tracker, "EXTRA_CORRECTIONS", 0)
    without = track(S, theta, w0, w1, options, None, charts)
    assert with_more.ok.all() and without.ok.all()
    assert with_more.steps.sum() < 0.9 * without.steps.sum(), (with_more.steps.sum(), without.steps.sum())
    a, b = S.invariants(with_more.z, with_more.chart), S.invariants(without.z, without.chart)
    assert np.allclose(a, b, rtol=1e-7, atol=1e-7)
    _, last = newton(S, with_more.z, w1, iterations=1, chart=with_more.chart)
    assert (last < 1e-8).all()
