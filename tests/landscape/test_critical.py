"""Every critical point of a data set's squared loss: counted, isolated, and checked with ball arithmetic."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._landscape.critical import critical_points
from ag_attention._landscape.ed import ed_degree

LAYER = Architecture.single_layer(2, 1, None, tokens=2)
X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]


@pytest.fixture(scope="module")
def result(msolve):
    return critical_points(LAYER, X, Y)


def test_counts_and_classes(result):
    # 14 complex critical points (the data ED degree of (2,1,2): generic data give the same count)
    assert result.complex_pure == 14 == ed_degree(LAYER, metric="data", samples=5, method="count").ed_degree
    assert (len(result.points), result.minima, result.saddles) == (6, 3, 3)
    assert all(p.kind == "pure" and p.undecided == 0 for p in result.points)
    assert [f.where for f in result.families] == ["V = 0", "A = 0", "A = p q^T, V = r q^T"]
    # loss |Y|^2 = 9 on V = 0 and A = 0; no critical point on rank [A; V] = 1 for these data
    assert result.families[0].loss == (9.0, 9.0) and result.families[2].complex == 0
    assert "3 minima, 3 saddles" in str(result) and result.to_dict()["real_pure"] == 6
    import dataclasses

    one = dataclasses.replace(
        result,
        points=tuple(p for p in result.points if p.signature == "minimum")[:1]
        + tuple(p for p in result.points if p.signature == "saddle")[:1],
    )
    assert "1 minimum, 1 saddle" in str(one) and "1 minima" not in str(one) and "1 minimum)" in repr(one)


def test_floats_are_read_exactly_or_rounded(msolve):
    Xf = [[[v + 0.0 for v in row] for row in x] for x in X]
    r = critical_points(LAYER, Xf, Y)
    assert (r.complex_pure, len(r.points), r.conversion) == (14, 6, "exact rationals")
    r = critical_points(LAYER, [[[v + 0.1 for v in row] for row in x] for x in X], Y, denominator=10)
    assert r.conversion == "rounded to multiples of 1/10" and r.complex_pure == 14


@pytest.mark.parametrize(
    "inputs, targets, kwargs, text",
    [
        (X, Y[:4], {}, "5 input sequences but 4 targets"),
        ([[[1, 0, 0], [0, 1, 0]]], Y[:1], {}, r"inputs\[0\]: shape \(2, 3\)"),
        ([[[1, float("nan")], [0, 1]]], Y[:1], {}, r"inputs\[0\]\[0\]\[1\]: nan"),
        ([], [], {}, "no sequence"),
        (X, Y, {"denominator": 0}, "denominator=0"),
        ([[[10**5000, 1], [0, 1]]] + X[1:], Y, {}, r"inputs\[0\]\[0\]\[0\]: about 2\^16610 is outside the range"),
        (X, [[[1e-60], [0]]] + Y[1:], {}, r"targets\[0\]\[0\]\[0\]: about 2\^-199 is outside"),
        ("data", Y, {}, "inputs: a list"),
    ],
)
def test_bad_data_are_refused_by_name(inputs, targets, kwargs, text):
    with pytest.raises(InvalidArgumentError, match=text):
        critical_points(LAYER, inputs, targets, **kwargs)


@pytest.mark.parametrize("c", [10, 100, 1000])
def test_scaled_data_have_the_same_critical_points(msolve, result, c):
    # (cX, c^3 Y): f(cX) = c^3 f(X), so the loss is c^6 times the loss of (X, Y) at the same weights.  Before the
    # coefficients were reduced modulo p and the systems made primitive, c = 100 counted 0 complex points beside 6
    # real ones, and c = 1000 called the data not generic
    r = critical_points(LAYER, [np.array(x) * c for x in X], [np.array(y) * c**3 for y in Y], method="msolve")
    assert (r.complex_pure, len(r.points), r.minima, r.saddles) == (14, 6, 3, 3)
    for p, q in zip(r.points, result.points):
        assert p.signature == q.signature and p.loss[0] / c**6 == pytest.approx(q.loss[0], rel=1e-9)
        assert np.allclose(p.coordinates, q.coordinates, rtol=1e-9)


def test_the_routes_agree_and_are_named(result):
    assert result.method == "auto" and result.complex_certified == result.complex_pure == 14
    assert result.real_complete and all(p.source == "msolve" for p in result.points)
    names = [r.name for r in result.routes]
    assert names[0].startswith("homotopy") and "msolve real root isolation over QQ" in names
    assert all(r.outcome.startswith("ok") for r in result.routes), result.routes
    d = result.to_dict()
    assert d["provenance"]["msolve"] and d["routes"][0]["seconds"] >= 0 and d["final"]
    assert d["monodromy"]["stop"] in ("trace test", "known count")  # msolve's count may arrive first
    h = critical_points(LAYER, X, Y, method="homotopy")
    assert (h.complex_pure, h.complex_certified, len(h.points), h.minima, h.saddles) == (None, 14, 6, 3, 3)
    # the homotopy alone: complete by the trace test, every point's realness decided: the 6 real ones are all
    assert all(p.source == "krawczyk" for p in h.points) and h.real_complete and h.final
    for p, q in zip(h.points, result.points):  # the same points, by two routes
        assert p.signature == q.signature and np.allclose(p.coordinates, q.coordinates, rtol=1e-8)
        assert p.loss[0] <= q.loss[1] and q.loss[0] <= p.loss[1]


@pytest.mark.parametrize("d_out, samples, count", [(1, 5, 14), (2, 6, 68)])
def test_gaussian_float_data_at_every_scale(msolve, d_out, samples, count):
    # floats by their exact binary value, entries from 1e-2 to 1e2 (cubed: 1e-6 to 1e6): the homotopy's certified
    # count, msolve's count and the real points agree at every scale (msolve's real isolation is given 1 s here)
    layer = Architecture.single_layer(2, d_out, None, tokens=2)
    rng = np.random.default_rng(7)
    Xg = [rng.standard_normal((2, 2)) for _ in range(samples)]
    Yg = [rng.standard_normal((2, d_out)) for _ in range(samples)]
    seen = []
    for scale in (1e-2, 1.0, 1e2):
        r = critical_points(layer, [x * scale for x in Xg], [y * scale**3 for y in Yg], msolve_timeout=1)
        assert r.complex_pure == r.complex_certified == r.complex_generic == count
        assert 0 < len(r.points) <= count and r.minima + r.saddles == len(r.points)
        seen.append([(p.signature, round((p.loss[0] + p.loss[1]) / 2 / scale**6, 6)) for p in r.points])
    assert seen[0] == seen[1] == seen[2]


def test_a_layer_too_large_is_refused_before_anything_is_built():
    from ag_attention import InsufficientMemoryError

    layer = Architecture.single_layer(30, 30, None, tokens=2)
    with pytest.raises(InsufficientMemoryError, match=r"418,500 x 418,500 exact rationals"):
        critical_points(layer, [np.ones((2, 30))], [np.ones((2, 30))])


#: the two fixed primes every count of critical_points was taken modulo before issue 46
OLD_PRIMES = (2**31 - 1, 2147483629)


def test_data_crafted_against_the_old_fixed_primes_count_right(msolve):
    """Issue 46: an entry p q (p, q the old fixed primes) makes the data, modulo both, the data with that entry 0,
    which have 8 complex critical points: the old count said 8 beside 8 proven real ones.  There are 14."""
    p, q = OLD_PRIMES
    Xc, Yc = X[:3] + [[[1, 0], [0, p * q]]], Y[:3] + [[[1], [0]]]
    r = critical_points(LAYER, Xc, Yc, method="msolve")
    assert (r.complex_pure, len(r.points), r.final) == (14, 8, True)
    assert len(r.primes) == 2 and {p, q}.isdisjoint(r.primes) and all(2**30 <= x < 2**31 for x in r.primes)
    seen = critical_points(LAYER, X[:3] + [[[1, 0], [0, 0]]], Yc, method="msolve")  # what the old primes counted
    assert seen.complex_pure == 8


def test_the_counting_primes_are_drawn_for_the_data_and_stated(msolve, result):
    """The primes come from a fresh seed (recorded) and the data's SHA-256: the same seed and data give the same
    primes, other data others; the result states them and the error bound."""
    r = result
    assert r.prime_seed is not None and len(r.primes) == 2 and r.prime == r.primes[0] and r.error_bound < 1.3e-9
    stated = f"probabilistic: primes {r.primes[0]}, {r.primes[1]} (seed {r.prime_seed};"
    assert stated in r.certificate and "error probability <= 1.3e-09" in r.certificate and stated in str(r)
    d = r.to_dict()
    assert (d["primes"], d["prime_seed"], d["error_bound"]) == (list(r.primes), r.prime_seed, r.error_bound)
    again = critical_points(LAYER, X, Y, method="msolve", prime_seed=r.prime_seed)
    assert again.primes == r.primes and again.complex_pure == 14
    other = critical_points(LAYER, X, Y[:4] + [[[0], [3]]], method="msolve", prime_seed=r.prime_seed)
    assert set(other.primes).isdisjoint(r.primes) and other.complex_pure == 14
    assert critical_points(LAYER, X, Y, method="homotopy").primes == ()  # nothing counted modulo a prime
