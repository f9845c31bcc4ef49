"""The ED degree of any polynomial model (``model_ed_degree``) with the real msolve and Macaulay2: the layer's own
numbers through the general API, known ED degrees of other families, metamorphic relations, and every bad input
an ``InvalidArgumentError`` naming it (the critical points of a loss: test_model_critical.py)."""

import pytest

from ag_attention import (
    Architecture,
    InvalidArgumentError,
    PolynomialModel,
    ed_degree,
    model_ed_degree,
    polynomial_model,
)
from ag_attention._landscape import primes as drawn
from tests.helpers import old_counting_primes, small_primes

X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]


@pytest.mark.parametrize(
    "d, e, a, metric",
    [(2, 1, None, "euclidean"), (2, 1, None, "generic"), (2, 1, 1, "euclidean"), (2, 2, None, "euclidean")],
)
def test_the_layer_through_the_general_api_gives_its_ed_degree(msolve, d, e, a, metric):
    arch = Architecture.single_layer(d, e, a, tokens=2)
    mine = model_ed_degree(PolynomialModel.from_layer(arch), metric=metric)
    theirs = ed_degree(arch, metric=metric, method="count")
    assert mine.final and mine.ed_degree == theirs.ed_degree
    assert all(c["solutions"] == c["fiber"] * mine.ed_degree for c in mine.counts)


@pytest.mark.m2
def test_the_two_routes_agree_and_auto_falls_back_to_the_implicit_one(msolve, m2_local):
    # (3,1,1): the ramification determinant would be too large, so auto takes the implicit route (39, as the
    # layer's own count); the deep linear 3-1-3 network: both routes give 3 (Eckart-Young) and 39 (generic)
    arch = Architecture.single_layer(3, 1, 1, tokens=2)
    r = model_ed_degree(PolynomialModel.from_layer(arch), metric="euclidean", backend="local")
    assert r.ed_degree == 39 == ed_degree(arch, metric="euclidean", method="count").ed_degree
    assert [x.name for x in r.routes] == ["parametric", "implicit"] and r.routes[0].outcome.startswith("not run")
    M = PolynomialModel.deep_linear([3, 1, 3])
    for metric, value in (("euclidean", 3), ("generic", 39)):
        both = model_ed_degree(M, metric=metric, method="both", backend="local")
        assert both.ed_degree == value and {c["route"] for c in both.counts} == {"parametric", "implicit"}
        assert both.closure["dimension"] == both.dimension == 5


def test_a_function_and_text_give_the_same_model(msolve):
    def rank_one(t):  # the 2 x 2 matrices u v^T
        return t[:2].reshape(2, 1) @ t[2:].reshape(1, 2)

    f = polynomial_model(4, rank_one)
    g = polynomial_model(["a", "b", "c", "e"], ["a*c", "a*e", "b*c", "b*e"])
    assert f.polynomials == g.polynomials and f.parameters == ("t1", "t2", "t3", "t4")
    assert model_ed_degree(f, metric="generic").ed_degree == 6
    assert model_ed_degree(g, metric="euclidean").ed_degree == 2


def test_permuting_coordinates_with_the_metric_keeps_the_ed_degree(msolve):
    M = PolynomialModel.deep_linear([2, 1, 2])
    Q = [[2, 1, 0, 0], [1, 3, 1, 0], [0, 1, 5, 1], [0, 0, 1, 7]]
    perm = [2, 0, 3, 1]
    P = polynomial_model(M.parameters, [_text(M.polynomials[i], M.parameters) for i in perm])
    Qp = [[Q[i][j] for j in perm] for i in perm]
    assert model_ed_degree(M, metric=Q).ed_degree == model_ed_degree(P, metric=Qp).ed_degree == 6


def _text(poly, names):
    return " + ".join(f"({c})*" + "*".join(f"{v}^{k}" for v, k in zip(names, e) if k) for e, c in poly.items())


def _surface(c):
    """The graph of ``s^2 + c t^2``: ED degree 5, and 3 (a surface of revolution) where ``c = 1``."""
    return polynomial_model(["s", "t"], ["s", "t", f"s^2 + {c}*t^2"])


@pytest.mark.parametrize("seed", range(10))
def test_a_model_crafted_against_the_old_primes_of_its_seed_counts(msolve, seed):
    """Issue 46: with c = 1 + k p q for the primes the seed alone used to draw, every count said 3."""
    p, q = old_counting_primes(seed)
    c = 1 + (1 + seed % 3) * p * q
    r = model_ed_degree(_surface(c), seed=seed)
    assert r.final and r.ed_degree == 5 and r.seed == seed
    assert {p, q}.isdisjoint(x["prime"] for x in r.counts) and all(2**30 <= x["prime"] < 2**31 for x in r.counts)


@pytest.mark.m2
def test_the_crafted_model_of_the_issue_by_both_routes_and_a_fresh_seed(msolve, m2_local):
    r = model_ed_degree(_surface(777444842), method="both", backend="local")
    assert r.ed_degree == 5 and {x["route"] for x in r.counts} == {"parametric", "implicit"}
    assert r.seed == r.counts[0]["seed"] and r.error_bound < 1.3e-9
    p, q = (x["prime"] for x in r.counts[:2])
    assert (
        f"probabilistic: primes {p}, {q} (seed {r.seed};" in r.certificate and "error probability <=" in r.certificate
    )
    again = model_ed_degree(_surface(777444842), seed=r.seed)
    assert [x["prime"] for x in again.counts] == [p, q] and model_ed_degree(_surface(777444842), seed=5).ed_degree == 5


def test_a_third_prime_decides_where_two_counts_of_a_route_differ(msolve, monkeypatch):
    """In a small range the surface can be made one of revolution modulo one of its two primes: the counts differ
    (3 and 5) and the third prime's count decides, said in the notes."""
    monkeypatch.setattr(drawn, "PRIME_RANGE", (2**14, 2**14 + 400))
    q = small_primes(2**14, 2**14 + 400)[7]
    for k in range(1, 2000):
        c = 1 + k * q
        primes = drawn.draw_primes(list(_surface(c).polynomials), "euclidean", 3, [], "model").primes
        if q in primes[:2]:
            break
    r = model_ed_degree(_surface(c), seed=3, method="parametric")
    assert r.ed_degree == 5 and [x["prime"] for x in r.counts] == list(primes)
    assert {x["prime"]: x["value"] for x in r.counts}[q] == 3
    assert any("parametric route: the counts modulo" in n and "a third decides" in n for n in r.notes)


def test_a_deadline_is_kept_and_said(msolve):
    # the parametric route alone (auto would give the implicit route the other half, which may finish: ED 1)
    r = model_ed_degree(
        PolynomialModel.linear_convolutional([2, 2, 2, 2]), metric="generic", method="parametric", timeout=3
    )
    assert not r.final and r.ed_degree is None and "NOT DECIDED" in r.headline()
    assert "time limit" in r.status or "timed out" in r.status


@pytest.mark.parametrize(
    "call, text",
    [
        (lambda: polynomial_model(["x", "1y"], ["x"]), "'1y' is not a name"),
        (lambda: polynomial_model(["x", "x"], ["x"]), "'x' is repeated"),
        (lambda: polynomial_model(["x"], ["x--1"]), "polynomials[0] = 'x--1'"),
        (lambda: polynomial_model(["x"], ["x -- comment"]), "polynomials[0]"),
        (lambda: polynomial_model(["x"], ["sqrt(x)"]), "polynomials[0]"),
        (lambda: polynomial_model(["x"], ["3"]), "every coordinate is constant"),
        (lambda: polynomial_model(1, lambda t: [t[0] * 0.5]), "raised TypeError"),
        (lambda: polynomial_model(1, lambda t: [t[0], 0.5]), "coordinate 1"),
        (lambda: polynomial_model(1, lambda t: 1 / 0), "ZeroDivisionError"),
        (lambda: polynomial_model(0, ["x"]), "at least one parameter"),
        (lambda: PolynomialModel.deep_linear([2]), "at least 2"),
        (lambda: PolynomialModel.deep_linear([2, 0]), "widths[1]=0: must be an integer >= 1"),
        (lambda: PolynomialModel.linear_convolutional([2, True]), "filters[1]=True: must be an integer >= 1"),
        (lambda: model_ed_degree("x^2"), "not a PolynomialModel"),
        (lambda: model_ed_degree(PolynomialModel.deep_linear([1, 1, 1]), metric="cosine"), "metric='cosine'"),
        (lambda: model_ed_degree(PolynomialModel.deep_linear([1, 1, 1]), method="magic"), "method='magic'"),
        (lambda: model_ed_degree(PolynomialModel.deep_linear([1, 1, 1]), seed=-1), "seed=-1"),
        (lambda: model_ed_degree(PolynomialModel.deep_linear([1, 1, 1]), gauge=["w1_1_1^2 - 1"]), "not linear"),
        (
            lambda: model_ed_degree(
                PolynomialModel.deep_linear([2, 1, 2]), gauge=["w1_1_1 - 1", "w1_1_2 - 1"], method="parametric"
            ),
            "leaves 2 free parameters",
        ),
    ],
)
def test_bad_input_is_named(call, text):
    with pytest.raises(InvalidArgumentError) as info:
        call()
    assert text in str(info.value)
