"""The numerical route of the landscape (ag_attention._landscape.numerical): monodromy, certified, against msolve."""

from fractions import Fraction
from pathlib import Path

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


def _planted_link(path):
    """The stored file replaced by a link to a copy of itself (what another user could plant)."""
    copy = path.with_name("copy.npz")
    copy.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(copy)


def _truncated(path):
    path.write_bytes(path.read_bytes()[:100])


def test_the_generic_form_is_solved_once_and_every_data_set_tracked_from_it(tmp_path, monkeypatch):
    """The monodromy runs on a generic form of the data's rank, stored in the result cache; a second data set of
    that rank starts from the stored solutions (no monodromy path), with the same certified count; a damaged or
    planted file is not used (solved again, each damage in turn on the file the last solve stored);
    AG_ATTENTION_NO_CACHE stores nothing."""
    from ag_attention._m2.cache import UnsafeCacheWarning

    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(tmp_path))
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    G, w, _ = gram([np.array(x, dtype=object) for x in X], [np.array(y, dtype=object) for y in Y], 2, 1)
    first = homotopy_solutions(arch, G, list(w))
    assert first.monodromy["start"] == "new" and first.monodromy["stored"] and first.final
    stored = Path(first.monodromy["stored"])
    assert stored.is_file() and "rank6" in stored.name
    # another data set, its targets scaled and shifted: the stored solutions, no new path
    Y2 = [np.array(y, dtype=object) * 3 + 1 for y in Y]
    G2, w2, _ = gram([np.array(x, dtype=object) for x in X], Y2, 2, 1)
    second = homotopy_solutions(arch, G2, list(w2))
    assert second.monodromy["start"] == "stored" and second.monodromy["paths"] == first.monodromy["paths"]
    assert second.certified == 14 and second.final
    # a form of rank 5 (E^T E, E 5 x 6): its own generic form; the count as a monodromy on that form itself
    E = np.array(
        [[1, 2, 0, -1, 3, 1], [0, 1, 1, 2, -1, 2], [2, 0, 1, 1, 1, -1], [1, -1, 2, 0, 1, 1], [3, 1, -1, 2, 0, 1]]
    )
    G5 = np.array([[Fraction(int(v)) for v in row] for row in E.T @ E], dtype=object)
    w5 = [Fraction(int(v)) for v in E.T @ np.array([1, -2, 3, 1, 2])]
    few = homotopy_solutions(arch, G5, w5)
    assert few.monodromy["start"] == "new" and "rank5" in few.monodromy["stored"]
    assert few.certified == monodromy_ed(arch, G5, fiber=1, seed=1).certified and few.final
    # two sequences: a form of rank 4, where the critical points are not isolated: no path arrives, not final
    degenerate = homotopy_solutions(arch, *_gram_of(X[:2], Y[:2]))
    assert degenerate.certified == 0 and not degenerate.final
    for damage, why in ((_planted_link, "symbolic link"), (_truncated, None)):
        damage(stored)
        if why:
            with pytest.warns(UnsafeCacheWarning, match=why):
                again = homotopy_solutions(arch, G, list(w))
        else:
            again = homotopy_solutions(arch, G, list(w))
        assert again.monodromy["start"] == "new" and again.certified == 14, damage.__name__
        assert stored.is_file() and not stored.is_symlink()  # replaced by a good one
    monkeypatch.setenv("AG_ATTENTION_NO_CACHE", "1")
    assert homotopy_solutions(arch, G2, list(w2)).monodromy["stored"] is None


def _gram_of(Xs, Ys):
    G, w, _ = gram([np.array(x, dtype=object) for x in Xs], [np.array(y, dtype=object) for y in Ys], 2, 1)
    return G, list(w)
