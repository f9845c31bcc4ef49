"""Orbit representatives of one layer's weight pairs (ag_attention._models.orbits)."""

import numpy as np

from ag_attention._models.orbits import orbit_representatives


def test_orbits():
    orbits = orbit_representatives(2, 2)
    assert len(orbits) == 10
    assert sum(o.critical for o in orbits) == 1 and sum(o.zero for o in orbits) == 5
    for o in orbits:
        assert np.linalg.matrix_rank(o.A) == o.rank_a and np.linalg.matrix_rank(o.V) == o.rank_v
    assert all(o.rank_a <= 2 for o in orbit_representatives(4, 1, 2))
