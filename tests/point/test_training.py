"""Teacher-student gradient descent (ag_attention._point.training): strata, gradients, records, classification."""

from __future__ import annotations

import numpy as np
import pytest

from ag_attention import Architecture, InvalidArgumentError
from ag_attention._network import forward, jacobian, unflatten
from ag_attention._numeric.float64 import Float64
from ag_attention._point.training import TEACHERS, teacher_weights, train
from tests.helpers import generator


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((3, 2), (3,), tokens=2),
        Architecture((3, 2), None, tokens=2, parametrization="AV"),
        Architecture((3, 3, 2), (2, 2), tokens=2),
    ],
    ids=lambda a: a.describe(),
)
def test_teachers_lie_in_their_strata(arch):
    for kind in TEACHERS:
        w = unflatten(arch, teacher_weights(arch, kind, generator(1)))
        for layer in w:
            for h in layer:
                A = h["A"] if "A" in h else h["Q"].T @ h["K"]
                ra, rv = np.linalg.matrix_rank(A), np.linalg.matrix_rank(h["V"])
                both = ra + rv - np.linalg.matrix_rank(np.vstack([A, h["V"]]))
                if kind == "generic":
                    assert ra == min(A.shape[0], arch.ranks[0] if arch.parametrization == "QKV" else 9)
                elif kind == "rank-one A":
                    assert ra == 1 and rv == min(h["V"].shape)
                else:  # A = u v^T, V = w v^T with the same v
                    assert (ra, rv, both) == (1, 1, 1)
    with pytest.raises(InvalidArgumentError, match="teacher='x'"):
        teacher_weights(arch, "x", generator(1))


def test_the_gradient_is_the_loss_derivative():
    """The reverse pass seeded with the residuals is the gradient of the mean squared error (central
    differences, error about 1e-10 at step 1e-6; tolerance 1e-6)."""
    arch = Architecture((3, 3, 2), (2, 2), tokens=2)
    F, rng = Float64(), generator(3)
    theta, X = rng.standard_normal(arch.parameter_count) / 2, rng.standard_normal((5, 2, 3))
    Y = forward(arch, F, rng.standard_normal(arch.parameter_count) / 2, X)
    M = Y.size

    def loss(th):
        R = forward(arch, F, th, X) - Y
        return float(np.sum(R * R) / M)

    R = forward(arch, F, theta, X) - Y
    grad = jacobian(arch, F, theta, X, (2.0 / M) * R[:, None, :, :]).sum(axis=0)
    eps = 1e-6
    numeric = np.array([(loss(theta + eps * e) - loss(theta - eps * e)) / (2 * eps) for e in np.eye(theta.size)])
    assert np.allclose(grad, numeric, rtol=1e-6, atol=1e-6)


def test_a_run_records_its_geometry_and_never_increases_the_loss():
    arch = Architecture((3, 2), (3,), tokens=2)
    run = train(arch, "critical", 30, seed=0, steps=400, record_every=100)
    assert [r.step for r in run.records] == [0, 100, 200, 300, 400] and run.generic_dimension == 14
    losses = [r.loss for r in run.records]
    assert all(b <= a for a, b in zip(losses, losses[1:])) and losses[-1] < losses[0] / 100
    assert run.final.distance < run.records[0].distance  # the student approaches the critical pairs
    assert len(run.final.singular_A) == len(run.final.singular_V) == 1 and run.end in ("smooth", "singular", "critical")
    d = run.to_dict()
    assert d["teacher"] == "critical" and len(d["records"]) == 5


def test_runs_are_deterministic_and_bad_settings_are_named():
    arch = Architecture((2, 2), (2,), tokens=2)
    a, b = train(arch, "generic", 5, seed=3, steps=50), train(arch, "generic", 5, seed=3, steps=50)
    assert np.array_equal(a.theta, b.theta) and a.final.loss == b.final.loss
    for kw, name in [
        (dict(samples=0), "samples=0"),
        (dict(steps=-1), "steps=-1"),
        (dict(record_every=True), "record_every=True"),
    ]:
        args = {"samples": 5, **kw}
        with pytest.raises(InvalidArgumentError, match=name):
            train(arch, "generic", args.pop("samples"), **args)
    with pytest.raises(InvalidArgumentError, match="lightning attention only"):
        train(arch.with_(normalized=True), "generic", 5)
