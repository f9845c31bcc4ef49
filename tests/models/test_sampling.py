"""How much one more input sequence can add to a Jacobian (ag_attention._models.sampling, Lemma 3.6)."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._exact import linalg
from ag_attention._exact.field import DEFAULT_PRIME, GFp
from ag_attention._models.sampling import new_directions_per_sample
from ag_attention._network import jacobian


@pytest.mark.parametrize("arch, b", [
    (Architecture((32, 32, 32), (16, 16), tokens=3), 9),  # t^2
    (Architecture((3, 2), (2,), tokens=3), 6),  # t d_L < t^2
    (Architecture((4, 4, 4), (2, 2), tokens=2, heads=2), 2 * 4),  # t d_L = 8 < t^2 (H)^L = 16
    (Architecture((8, 8, 8), (2, 2), tokens=2, heads=2), 16),  # t^2 H^L
    (Architecture((8, 8, 8), (2, 2), tokens=2, skip=True), 16),  # t^2 (1 + skip)^L
    (Architecture((3, 3), (2,), tokens=3, normalized=True), 6),  # t (t - 1): softmax rows sum to one
    (Architecture((3, 3), (2,), tokens=1, normalized=True), 1),  # at least one
    (Architecture((3, 3, 3), (2, 2), tokens=3, heads=2, normalized=True), 9),  # capped by the outputs t d_L
])
def test_the_bound_by_architecture(arch, b):
    assert new_directions_per_sample(arch) == b


@pytest.mark.parametrize("arch", [Architecture((4, 4, 4), (2, 2), tokens=3), Architecture((3, 2), (2,), tokens=3),
                                  Architecture((3, 3, 3), (2, 2), tokens=2, heads=2)], ids=str)
def test_one_more_sample_adds_at_most_the_bound(arch, rng):
    """The bound is a bound: the exact rank grows by at most b with each sample, once the values are seen."""
    F = GFp(DEFAULT_PRIME)
    theta = F.random(rng, arch.parameter_count)
    X = F.random(rng, (12, arch.tokens, arch.widths[0]))
    J = jacobian(arch, F, theta, X)
    rows = arch.output_size
    ranks = [linalg.rank(J[: n * rows], DEFAULT_PRIME) for n in range(1, 13)]
    b = new_directions_per_sample(arch)
    assert all(0 <= later - earlier <= max(b, rows) for earlier, later in zip(ranks, ranks[1:]))
    assert all(later - earlier <= b for earlier, later in zip(ranks[4:], ranks[5:]))
    assert np.all(np.diff(ranks) >= 0)
