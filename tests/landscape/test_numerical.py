"""The numerical route of the landscape (ag_attention._landscape.numerical): monodromy, certified, against msolve."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._landscape.metrics import gram, metric
from ag_attention._landscape.numerical import homotopy_solutions, monodromy_ed

X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]


@pytest.mark.parametrize("a, solutions, ed", [(2, 14, 14), (1, 20, 10)])
def test_certified_solutions_and_images_bound_the_ed_degree(a, solutions, ed):
    # (2,1,1): two solutions in the weights per critical point (Cor. A.2): 20 certified, 10 distinct images
    arch = Architecture.single_layer(2, 1, a, tokens=2)
    G, _ = metric("generic", 2, 1, 2, seed=0)
    r = monodromy_ed(arch, G, fiber=1 if a == 2 else 2, seed=0)
    assert (r.found, r.certified, r.images) == (solutions, solutions, ed)
    assert r.stop == "trace test" and r.not_certified == 0 and r.to_dict()["certified_images"] == ed


def test_the_critical_points_of_a_data_set_at_every_scale():
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    seen = []
    for c in (1, 100, 0.01):  # (cX, c^3 Y): the same critical points in the weights
        G, w, _ = gram([np.array(x, dtype=object) * c for x in X], [np.array(y, dtype=object) * c**3 for y in Y], 2, 1)
        h = homotopy_solutions(arch, G, list(w))
        assert (h.base_count, h.certified, len(h.real)) == (14, 14, 6)
        x = np.array([h.system.coordinates(s.center[None], s.chart[None])[0].real for s in h.real])
        seen.append(x[np.lexsort(x.T[::-1])])  # the points of the neuromanifold: the same for every c
    assert np.allclose(seen[0], seen[1]) and np.allclose(seen[0], seen[2])
    with pytest.raises(InvalidArgumentError, match="target w is 0"):
        homotopy_solutions(arch, np.eye(6), [0] * 6)
