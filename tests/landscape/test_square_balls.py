"""Ball arithmetic on one box of the square system (ag_attention._landscape.square_balls)."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._exact import balls
from ag_attention._landscape.metrics import metric
from ag_attention._landscape.square import square_system
from ag_attention._landscape.square_balls import ball_coordinates, ball_invariants, ball_weights
from tests.helpers import square_point


def test_the_critical_locus_is_recognized(rng):
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    S = square_system(arch, np.eye(6))
    theta, chart, _, _ = square_point(S, rng, real=True)
    assert S.off_critical_locus(balls.complex_box(theta[0], 1e-10), chart[0])
    # A = u v^T, V = w v^T: rank [A; V] = 1 (Lemma A.3)
    v = rng.standard_normal(2)
    rank_one = S.pack(np.outer([1.5, -0.5], v)[None].astype(complex), (2.0 * v)[None, None, :].astype(complex), chart)
    assert not S.off_critical_locus(balls.complex_box(rank_one[0], 1e-10), chart[0])


@pytest.mark.parametrize("d, e, a", [(2, 1, 2), (3, 1, 2)])
def test_the_balls_of_a_box_hold_its_center(d, e, a, rng):
    S = square_system(Architecture.single_layer(d, e, a, tokens=2), metric("generic", d, e, 2, seed=3)[0])
    theta, chart, _, _ = square_point(S, rng)
    A, V = S.weights(theta, chart)
    box = balls.complex_box(theta[0], 1e-12)

    def mid(b):
        return complex(b.real.mid(), b.imag.mid())

    Ab, Vb, Bb = ball_weights(S, box, chart[0])
    assert np.allclose([[mid(v) for v in row] for row in Ab], A[0]) and np.allclose(
        [[mid(v) for v in row] for row in Vb], V[0]
    )
    assert (Bb is None) == (not S.charted)
    assert np.allclose([mid(v) for v in ball_coordinates(S, box, chart[0])], S.coordinates(theta, chart)[0])
    assert np.allclose([mid(v) for v in ball_invariants(S, box, chart[0])], S.invariants(theta, chart)[0])
