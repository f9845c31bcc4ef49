"""Homotopy continuation (ag_attention._numeric.homotopy): paths, monodromy, parameter homotopies, on systems whose
solutions are known in closed form."""

import numpy as np

from ag_attention._numeric.homotopy import (
    Deduplicator,
    TrackerOptions,
    newton,
    parameter_homotopy,
)


class Roots:
    """``z^k - p = 0`` (one unknown, one parameter): the k-th roots of p, permuted by loops around 0."""

    n = 1
    n_parameters = 1

    def __init__(self, k):
        self.k = k

    def evaluate(self, z, p, jacobian=True, dp=None):
        z = np.asarray(z, dtype=complex)
        p = np.broadcast_to(np.asarray(p, dtype=complex), (z.shape[0], 1))
        F = z**self.k - p
        J = (self.k * z ** (self.k - 1))[:, :, None] if jacobian else None
        if dp is None:
            return F, J
        return F, J, -np.broadcast_to(np.asarray(dp, dtype=complex), (z.shape[0], 1))

    def parameter_derivative(self, z, dp):
        return -np.broadcast_to(np.asarray(dp, dtype=complex), (np.asarray(z).shape[0], 1))


class Reciprocal:
    """``p z - 1 = 0``: one solution ``1/p``, whose trace along a pencil is not affine (it escapes to infinity at
    ``p = 0``): the trace test fails on the complete set, as for the Euclidean form of the landscape."""

    n = 1
    n_parameters = 1

    def evaluate(self, z, p, jacobian=True, dp=None):
        z = np.asarray(z, dtype=complex)
        p = np.broadcast_to(np.asarray(p, dtype=complex), (z.shape[0], 1))
        F = p * z - 1
        J = p[:, :, None] if jacobian else None
        if dp is None:
            return F, J
        return F, J, self.parameter_derivative(z, dp)

    def parameter_derivative(self, z, dp):
        return np.asarray(z, dtype=complex) * np.broadcast_to(
            np.asarray(dp, dtype=complex), (np.asarray(z).shape[0], 1)
        )


class Circle:
    """``x^2 + y^2 = p_1``, ``x - y = p_2``: two solutions, in closed form."""

    n = 2
    n_parameters = 2

    def evaluate(self, z, p, jacobian=True, dp=None):
        z = np.asarray(z, dtype=complex)
        p = np.broadcast_to(np.asarray(p, dtype=complex), (z.shape[0], 2))
        F = np.stack([z[:, 0] ** 2 + z[:, 1] ** 2 - p[:, 0], z[:, 0] - z[:, 1] - p[:, 1]], axis=1)
        J = None
        if jacobian:
            J = np.zeros((z.shape[0], 2, 2), dtype=complex)
            J[:, 0, 0], J[:, 0, 1] = 2 * z[:, 0], 2 * z[:, 1]
            J[:, 1, 0], J[:, 1, 1] = 1, -1
        if dp is None:
            return F, J
        return F, J, -np.broadcast_to(np.asarray(dp, dtype=complex), (z.shape[0], 2))

    def parameter_derivative(self, z, dp):
        return -np.broadcast_to(np.asarray(dp, dtype=complex), (np.asarray(z).shape[0], 2))


def circle_solutions(p1, p2):
    # x - y = p2, x^2 + y^2 = p1: y = (-p2 +- sqrt(2 p1 - p2^2)) / 2
    r = np.sqrt(complex(2 * p1 - p2 * p2))
    return sorted([((p2 + r) / 2, (-p2 + r) / 2), ((p2 - r) / 2, (-p2 - r) / 2)], key=lambda s: (s[0].real, s[0].imag))


def test_parameter_homotopy_to_a_real_target_and_its_failures():
    pa = np.array([2.0 + 1j, 0.5 - 0.3j])
    start = np.array(circle_solutions(*pa))
    res = parameter_homotopy(Circle(), start, pa, np.array([2.0 + 0j, 0.0 + 0j]))
    assert res.ok.all() and np.allclose(sorted(res.z[:, 0].real), [-1, 1], atol=1e-10)
    # a tracker allowed one step cannot arrive: every path fails, with its reason, and no end is invented
    res = parameter_homotopy(
        Circle(),
        start,
        pa,
        np.array([2.0 + 0j, 0.0 + 0j]),
        retries=0,
        options=TrackerOptions(max_steps=1, initial_step=0.01),
    )
    assert not res.ok.any() and set(res.reason) == {"too many steps"}


def test_newton_and_the_deduplicator():
    z, last = newton(Roots(2), np.array([[1.1 + 0j], [-0.9 + 0j]]), np.array([1.0 + 0j]), iterations=6)
    assert np.allclose(z[:, 0], [1, -1]) and (last < 1e-12).all()
    d = Deduplicator(2, tol=1e-8)
    assert d.add(np.array([1.0, 2.0])) == 0
    assert d.add(np.array([1.0 + 1e-12, 2.0])) is None  # the same point
    assert d.add(np.array([1.0, 2.0 + 1e-6])) == 1 and len(d) == 2


def test_the_paths_of_a_parameter_homotopy_are_counted(monkeypatch, capsys):
    """Off a terminal (a line at each change here: interval 0): paths ended of all, arrived or failed."""
    monkeypatch.setenv("AG_ATTENTION_PROGRESS_INTERVAL", "0")
    pa = np.array([2.0 + 1j, 0.5 - 0.3j])
    start = np.array(circle_solutions(*pa))
    res = parameter_homotopy(Circle(), start, pa, np.array([2.0 + 0j, 0.0 + 0j]), desc="circle")
    err = capsys.readouterr().err
    assert res.ok.all() and err.splitlines()[-1].startswith("circle: 2/2 paths finished, 00:00 elapsed"), err
    res = parameter_homotopy(
        Circle(), start, pa, np.array([2.0 + 0j, 0.0 + 0j]), retries=0, options=TrackerOptions(max_steps=1)
    )
    err = capsys.readouterr().err
    assert not res.ok.any() and err.splitlines()[-1].startswith("homotopy: 2/2 paths finished"), err
