"""Seeded integer weights of each stratum (ag_attention._reproduce.theorem34.samplers)."""

import numpy as np
import pytest

from ag_attention._exact.onelayer import exact_rank, fiber, reduced_point
from ag_attention._reproduce.theorem34.grids import Size
from ag_attention._reproduce.theorem34.predictions import features
from ag_attention._reproduce.theorem34.samplers import (
    conjugate_data,
    conjugate_point,
    fiber_cases,
    full_rank,
    m2_fiber_points,
    nonzero,
    rank_one_vectors,
    strata_samples,
)


def rank(M):
    return exact_rank(np.asarray(M, dtype=object))


def test_nonzero_and_full_rank(rng):
    for _ in range(20):
        x = nonzero(rng, 3)
        assert x.shape == (3,) and x.any() and np.abs(x).max() <= 9
    for rows, cols, r in [(3, 3, 3), (4, 4, 2), (2, 5, 1), (5, 2, 2)]:
        M = full_rank(rng, rows, cols, r)
        assert M.shape == (rows, cols) and rank(M) == r


def test_rank_one_vectors_have_independent_v_and_z(rng):
    for d, e in [(2, 1), (3, 2), (5, 3)]:
        u, v, z, w = rank_one_vectors(rng, d, e)
        assert (len(u), len(v), len(z), len(w)) == (d, d, d, e) and rank([v, z]) == 2


@pytest.mark.parametrize("size", [Size(3, 2, 3), Size(4, 2, 3), Size(3, 1, 1)], ids=str)
def test_each_stratum_has_its_ranks(size, rng):
    a = min(size.a, size.d)
    samples = strata_samples(size, rng, per_stratum=2)
    names = [name for name, _, _ in samples]
    assert names.count("generic") == 2 and names.count("critical (A = u v^T, V = w v^T)") == 2
    assert any(name.endswith("(domain singular)") for name in names) == size.rank_bounded
    for name, A, V in samples:
        f = features(A, V)
        assert A.shape == (size.d, size.d) and V.shape == (size.d_out, size.d)
        want = {
            "generic": (a, min(size.d_out, size.d), False),
            "rank A = 1": (1, min(size.d_out, size.d), False),
            "rank-one pair": (1, 1, False),
            "critical (A = u v^T, V = w v^T)": (1, 1, True),
        }
        if name in want:
            assert (f.rank_a, f.rank_v, f.critical) == want[name], name
        elif name == "rank V = 1":
            assert (f.rank_a, f.rank_v) == (a, 1)
        else:
            assert f.rank_a == a - 1, name


def test_the_same_seed_gives_the_same_samples():
    one = strata_samples(Size(3, 2, 2), np.random.default_rng(5))
    two = strata_samples(Size(3, 2, 2), np.random.default_rng(5))
    assert [(n, A.tolist(), V.tolist()) for n, A, V in one] == [(n, A.tolist(), V.tolist()) for n, A, V in two]


def test_fiber_cases_have_the_fibers_of_theorem_32(rng):
    size = Size(3, 2, 3)
    counts = {k: fiber(reduced_point(A, V), size.d, size.d_out).count for k, (A, V) in fiber_cases(size, rng).items()}
    assert counts == {"generic": 1, "rank A = 1": 1, "rank-one pair": 2, "critical": 1}


def test_m2_fiber_points_are_reduced_points(rng):
    size = Size(2, 2, 2)
    points = m2_fiber_points(size, rng)
    assert sorted(points) == ["critical", "generic", "rank-one pair", "zero"]
    assert all(len(p) == size.coordinates for p in points.values()) and not any(points["zero"])
    assert fiber(points["rank-one pair"], 2, 2).count == 2 and fiber(points["critical"], 2, 2).count == 1


def test_conjugate_points_are_real_points_without_real_preimages():
    size = Size(3, 2, 3)
    u, r, s, w = conjugate_data(size, seed=0)
    assert rank([r, s]) == 2
    assert [x.tolist() for x in conjugate_data(size, seed=0)] == [u.tolist(), r.tolist(), s.tolist(), w.tolist()]
    x = conjugate_point(u, r, s, w)
    assert all(isinstance(c, int) for c in x) and len(x) == size.coordinates
    f = fiber(x, size.d, size.d_out)
    assert f.count >= 1 and f.real_count == 0
    # Im v -> 0: the critical value phi(u r^T, w r^T)
    assert conjugate_point(u, r, s, w, scale=0) == reduced_point(np.outer(u, r), np.outer(w, r))
