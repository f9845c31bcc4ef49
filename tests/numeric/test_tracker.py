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
