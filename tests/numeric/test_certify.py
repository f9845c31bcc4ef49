"""The Krawczyk test (ag_attention._numeric.certify): what it proves, and that it refuses what it cannot prove."""

from fractions import Fraction

import numpy as np

from ag_attention._exact import balls
from ag_attention._numeric.certify import certify_solutions, krawczyk


class Quadratic:
    """``z_1^2 - c = 0``, ``z_2 - z_1 = 0`` with an exact parameter ``c``: roots ``+-sqrt(c)`` (real for c > 0)."""

    n = 2

    def evaluate(self, z, p, jacobian=True):
        z = np.asarray(z, dtype=complex)
        c = complex(np.asarray(p).reshape(-1)[0])
        F = np.stack([z[:, 0] ** 2 - c, z[:, 1] - z[:, 0]], axis=1)
        J = np.zeros((z.shape[0], 2, 2), dtype=complex)
        J[:, 0, 0] = 2 * z[:, 0]
        J[:, 1, 0], J[:, 1, 1] = -1, 1
        return F, J

    def ball_evaluate(self, box, w, jacobian=True):
        c = balls.complex_ball(w[0])
        z1, z2 = box
        F = np.array([z1 * z1 - c, z2 - z1], dtype=object)
        J = balls.complex_matrix([[2 * z1, 0], [-1, 1]])
        return F, J if jacobian else None


def test_a_root_is_certified_real_and_a_conjugate_pair_not_real():
    S = Quadratic()
    two = [Fraction(2)]
    r = certify_solutions(
        S,
        np.array([[1.41421356, 1.41421356], [-1.4142135, -1.4142135]]),
        two,
        float_parameter=np.array([2.0]),
        real_system=True,
    )
    assert (r.count, r.real, r.failed) == (2, 2, 0)
    for s in r.solutions:  # the exact root is in the box, and the box is small
        assert s.box[0].contains(balls.complex_ball(Fraction(2)).sqrt() * (1 if s.center[0].real > 0 else -1))
        assert s.radius < 1e-8
    minus = [Fraction(-3)]
    r = certify_solutions(
        S, np.array([[1.7320508j, 1.7320508j]]), minus, float_parameter=np.array([-3.0]), real_system=True
    )
    # the root i sqrt(3) is proven, proven not real, and its conjugate comes with it
    assert (r.count, r.real, r.nonreal, r.conjugates) == (2, 0, 2, 1)


def test_what_is_not_a_root_is_never_certified():
    S = Quadratic()
    two = [Fraction(2)]
    # far from any root, or near a double root (c = 0: z1^2 = 0 is singular), the test does not pass (a real
    # candidate gets two Newton steps first: 0.5 is still far after them)
    r = certify_solutions(
        S, np.array([[5 + 5j, 5 + 5j], [0.5, 0.5]]), two, float_parameter=np.array([2.0]), real_system=True
    )
    assert (r.count, r.failed) == (0, 2)
    r = certify_solutions(S, np.array([[1e-9, 1e-9]]), [Fraction(0)], float_parameter=np.array([0.0]), real_system=True)
    assert r.count == 0
    # the same root twice is counted once
    r = certify_solutions(
        S,
        np.array([[1.41421356, 1.41421356], [1.414213562, 1.414213562]]),
        two,
        float_parameter=np.array([2.0]),
        real_system=True,
    )
    assert (r.count, r.duplicates) == (1, 1)
    # a box that does not contain the root fails the test at any size it is given
    Y = np.linalg.inv(np.array([[2 * 1.5, 0], [-1, 1]]))
    assert krawczyk(S, np.array([1.5, 1.5]), 0.01, two, Y) is None
    # and one that does passes
    Y = np.linalg.inv(np.array([[2 * 1.41421356, 0], [-1, 1]]))
    assert krawczyk(S, np.array([1.41421356, 1.41421356]), 1e-6, two, Y) is not None


def test_a_complex_system_says_nothing_of_realness():
    S = Quadratic()
    r = certify_solutions(
        S, np.array([[1.41421356, 1.41421356]]), [Fraction(2)], float_parameter=np.array([2.0]), real_system=False
    )
    assert r.count == 1 and r.solutions[0].real is None and r.to_dict()["realness_undecided"] == 1


class Close:
    """``(z - 1)(z - 1 - eps) = 0``, ``z_2 = z_1``: two roots ``eps`` apart, each with a derivative of size ``eps``
    (ill-conditioned as ``1 / eps``)."""

    n = 2

    def __init__(self, eps):
        self.eps = Fraction(eps)

    def evaluate(self, z, p, jacobian=True):
        z = np.asarray(z, dtype=complex)
        e = float(self.eps)
        F = np.stack([(z[:, 0] - 1) * (z[:, 0] - 1 - e), z[:, 1] - z[:, 0]], axis=1)
        J = np.zeros((z.shape[0], 2, 2), dtype=complex)
        J[:, 0, 0] = 2 * z[:, 0] - 2 - e
        J[:, 1, 0], J[:, 1, 1] = -1, 1
        return F, J

    def ball_evaluate(self, box, w, jacobian=True):
        z1, z2 = box
        one, e = balls.complex_ball(1), balls.complex_ball(self.eps)
        F = np.array([(z1 - one) * (z1 - one - e), z2 - z1], dtype=object)
        return F, balls.complex_matrix([[2 * z1 - 2 * one - e, 0], [-1, 1]]) if jacobian else None


def test_ill_conditioned_roots_are_certified_in_smaller_boxes():
    # two roots 2^-40 apart (a condition number about 10^12): the boxes of relative radius 1e-11 and up hold both
    # or contract too little; 1e-13 and 1e-15 separate and prove them (three such points of (3,1,2) needed it)
    eps = Fraction(1, 2**40)
    roots = np.array([[1.0, 1.0], [1.0 + float(eps), 1.0 + float(eps)]])
    r = certify_solutions(Close(eps), roots, [0], float_parameter=np.array([0.0]), real_system=True)
    assert (r.count, r.real, r.failed, r.duplicates) == (2, 2, 0, 0)
    assert max(s.radius for s in r.solutions) < 1e-12
