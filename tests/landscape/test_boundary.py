"""The ED degree of a decision boundary: counted with the real msolve, against cases known by hand."""

import pytest

import ag_attention._landscape.boundary as boundary
from ag_attention import Architecture
from ag_attention._errors import ComputationError, InvalidArgumentError
from ag_attention._exact import linalg
from ag_attention._exact.field import DEFAULT_PRIME, SECOND_PRIME
from ag_attention._landscape.boundary import boundary_ed_degree, boundary_polynomial, general_cubic_ed_degree


def test_the_general_cubic():
    assert [general_cubic_ed_degree(n) for n in (2, 3, 4, 6)] == [3, 9, 21, 93]


def test_one_token_in_the_plane_is_a_general_binary_cubic(msolve):
    # n = 2: a binary cubic is three lines through 0, each with one critical point: 3, as for every cubic
    r = boundary_ed_degree(Architecture.single_layer(2, 1, None, tokens=1))
    assert (r.ed_degree, r.general_cubic, r.unknowns) == (3, 3, 2)


@pytest.mark.parametrize("d, t", [(2, 2), (3, 2), (2, 3)])
def test_rank_one_attention_splits_the_boundary(msolve, d, t):
    # a = 1, d' = 1: x_i^T A x_j = (q . x_i)(k . x_j), so F = (sum_i r_i q . x_i) (sum_j (k . x_j)(v . x_j)): a
    # hyperplane (1 critical point) and the quadric cone x^T S x = 0, S = I_t (x) (k v^T + v k^T) / 2, whose
    # nonzero eigenvalues are two (+ and -): X = (I - lambda S)^-1 U on it is a quadratic in lambda (2). 3 in all
    r = boundary_ed_degree(Architecture.single_layer(d, 1, 1, tokens=t))
    assert r.ed_degree == 3 and [w.solutions for w in r.draws] == [3, 3] and not r.special


def test_far_below_a_general_cubic(msolve):
    r = boundary_ed_degree(Architecture.single_layer(2, 1, None, tokens=2))
    assert (r.ed_degree, r.general_cubic) == (12, 21)
    r = boundary_ed_degree(Architecture.single_layer(3, 1, None, tokens=3))
    assert (r.ed_degree, r.general_cubic) == (52, 765)
    assert r.to_dict()["certificate"].startswith("probabilistic")


def test_a_special_draw_is_reported_and_not_used(msolve):
    # (3,1,2), t = 2: the seed-0 weights are special (25: the symmetric part of their A is singular,
    # det(A + A^T) = 0, which a generic rank-2 A avoids); seeds 1 and 2 give the generic 28 (as do seeds 3 to 7
    # and Macaulay2). The old code printed seed 0's 25
    arch = Architecture.single_layer(3, 1, 2, tokens=2)
    r = boundary_ed_degree(arch, seed=0)
    assert (r.ed_degree, r.general_cubic) == (28, 93)
    assert [(w.seed, w.prime, w.solutions) for w in r.draws] == [
        (0, DEFAULT_PRIME, 25),
        (1, SECOND_PRIME, 28),
        (2, DEFAULT_PRIME, 28),
    ]
    assert [w.seed for w in r.agreeing] == [1, 2] and [w.seed for w in r.special] == [0]
    d = r.to_dict()
    assert [(w["seed"], w["solutions"]) for w in d["draws"]] == [(0, 25), (1, 28), (2, 28)]
    assert (d["agreeing_seeds"], d["special_seeds"]) == ([1, 2], [0])
    text = str(r)
    assert "draws            3: seed 0: 25" in text and "(special)" in text and "seed 1: 28" in text
    assert "seed 2: 28" in text and "special draws: seed 0: 25" in r.certificate
    # from seed 1 the first two draws agree: two draws, none special
    r = boundary_ed_degree(arch, seed=1)
    assert r.ed_degree == 28 and [(w.seed, w.solutions) for w in r.draws] == [(1, 28), (2, 28)] and not r.special
    assert d["certificate"].startswith("probabilistic: two independent draws agree")


def test_two_consecutive_draws_share_neither_weights_nor_data_nor_prime(monkeypatch):
    seen = []

    def fake(arch, A, V, r, prime, data_seed, *, timeout, backend):
        seen.append((A, V, r, prime, data_seed))
        return 12, ""

    monkeypatch.setattr(boundary, "_count", fake)
    r = boundary_ed_degree(Architecture.single_layer(2, 1, None, tokens=2), seed=5)
    assert [w.seed for w in r.draws] == [5, 6] and len(seen) == 2
    (A1, V1, r1, p1, u1), (A2, V2, r2, p2, u2) = seen
    assert A1 != A2 and V1 != V2 and r1 != r2 and p1 != p2 and u1 != u2


def test_disagreeing_draws_are_never_resolved_silently(monkeypatch):
    # a fake counter: every draw a new value: no two agree within max_draws, an error naming every draw
    values = iter([10, 11, 12, 13, 14, 15])
    monkeypatch.setattr(boundary, "_count", lambda *args, **kw: (next(values), ""))
    arch = Architecture.single_layer(2, 1, None, tokens=2)
    with pytest.raises(
        ComputationError,
        match=r"no two of 3 independent draws agree \(seed 0: 10 over GF\(\d+\), "
        r"seed 1: 11 over GF\(\d+\), seed 2: 12",
    ):
        boundary_ed_degree(arch, max_draws=3)
    # a degenerate draw is a special draw too, reported with its reason; the value is the first one two draws share
    values2 = iter([(None, "the Lagrange conditions are not zero-dimensional"), (7, ""), (9, ""), (7, "")])
    monkeypatch.setattr(boundary, "_count", lambda *args, **kw: next(values2))
    r = boundary_ed_degree(arch, seed=3)
    assert r.ed_degree == 7 and [w.seed for w in r.agreeing] == [4, 6] and [w.seed for w in r.special] == [3, 5]
    assert "seed 3: degenerate (the Lagrange conditions are not zero-dimensional)" in str(r)
    with pytest.raises(InvalidArgumentError, match="max_draws=1"):
        boundary_ed_degree(arch, max_draws=1)


def test_the_score_is_the_readout_of_the_forward_pass():
    arch = Architecture.single_layer(2, 1, None, tokens=2)
    ring = linalg.rational_polynomial_ring(["x1_1", "x1_2", "x2_1", "x2_2"])
    A, V, r = [[1, 2], [0, -1]], [[3, 1]], [[1], [2]]
    F = boundary_polynomial(arch, A, V, r, ring)
    X = [[1, 2], [-1, 1]]
    # f(X)_i = sum_j (x_i^T A x_j) V x_j
    f = [
        sum(
            (sum(X[i][k] * A[k][l] * X[j][l] for k in range(2) for l in range(2)))
            * sum(V[0][l] * X[j][l] for l in range(2))
            for j in range(2)
        )
        for i in range(2)
    ]
    assert F(*[linalg.rational(v) for v in (1, 2, -1, 1)]) == r[0][0] * f[0] + r[1][0] * f[1]


def test_other_architectures_are_refused():
    with pytest.raises(InvalidArgumentError, match="one head"):
        boundary_ed_degree(Architecture((2, 1), (2,), heads=2, tokens=2))


def test_a_boundary_too_large_is_refused_before_it_is_built():
    # F6: tokens=10**6 aborted the whole process in FLINT's allocator; tokens=1000 at width 200 ran past 100 s with
    # timeout=20. Both are refused at once, by name.
    import time as _time

    from ag_attention import InsufficientMemoryError

    t0 = _time.perf_counter()
    with pytest.raises(InsufficientMemoryError, match="boundary polynomial, about"):
        boundary_ed_degree(Architecture.single_layer(2, 1, None, tokens=10**6))
    with pytest.raises((InsufficientMemoryError, InvalidArgumentError), match="tokens=1000|boundary polynomial"):
        boundary_ed_degree(Architecture.single_layer(200, 200, None, tokens=1000), timeout=20)
    with pytest.raises(InvalidArgumentError, match=r"tokens=60, widths 3,1: building the boundary polynomial alone"):
        boundary_ed_degree(Architecture.single_layer(3, 1, None, tokens=60), timeout=0.5)
    assert _time.perf_counter() - t0 < 10
