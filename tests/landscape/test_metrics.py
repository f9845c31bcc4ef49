"""The forms of the distance: the evaluation matrix is the layer's forward pass, the Gram form the loss."""

import random
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture, PolynomialModel, ed_degree, ideal_ed_degree, model_ed_degree
from ag_attention._errors import InvalidArgumentError
from ag_attention._exact.balls import Balls
from ag_attention._landscape.metrics import METRICS, Metric, Space, data_inputs, evaluation_matrix, gram, metric
from ag_attention._models.coordinates import reduced_coordinates, reduced_count
from ag_attention._network import forward


@pytest.mark.parametrize("d, e, t, causal", [(2, 1, 2, False), (3, 2, 3, False), (2, 2, 4, True), (3, 1, 1, False)])
def test_evaluation_matrix_is_the_forward_pass(d, e, t, causal):
    rng = random.Random(d * 100 + e * 10 + t)
    A = np.array([[rng.randint(-5, 5) for _ in range(d)] for _ in range(d)], dtype=object)
    V = np.array([[rng.randint(-5, 5) for _ in range(d)] for _ in range(e)], dtype=object)
    X = np.array([[rng.randint(-5, 5) for _ in range(d)] for _ in range(t)], dtype=object)
    x = np.array(reduced_coordinates(A.tolist(), V.tolist()), dtype=object)
    arch = Architecture.single_layer(d, e, None, tokens=t, causal=causal)
    theta = np.concatenate([A.ravel(), V.ravel()])
    # Balls' einsum on object arrays of Fractions: exact rational arithmetic
    out = forward(arch, Balls(), np.array([Fraction(v) for v in theta], dtype=object), np.array([X], dtype=object))
    expected = list(out[0].ravel())  # tokens as rows, d' outputs each
    assert evaluation_matrix(X, d, e, causal).dot(x).tolist() == expected


def test_gram_is_the_squared_loss():
    d, e, t = 2, 2, 3
    rng = random.Random(5)
    inputs = list(data_inputs(d, t, 4, seed=3))
    targets = [
        np.array([[Fraction(rng.randint(-9, 9), 7) for _ in range(e)] for _ in range(t)], dtype=object) for _ in inputs
    ]
    G, w, c = gram(inputs, targets, d, e)
    x = np.array([Fraction(rng.randint(-9, 9), 5) for _ in range(reduced_count(d, e))], dtype=object)
    loss = sum(
        sum((v * v for v in (evaluation_matrix(X, d, e).dot(x) - Y.reshape(-1))), Fraction(0))
        for X, Y in zip(inputs, targets)
    )
    assert x.dot(G).dot(x) - 2 * w.dot(x) + c == loss
    assert (G == G.T).all()


def test_metrics_and_their_descriptions():
    G, text = metric("euclidean", 2, 1, 2, seed=0)
    assert (G == np.eye(6, dtype=int)).all() and "identity" in text
    G1, _ = metric("generic", 2, 1, 2, seed=1)
    G2, _ = metric("generic", 2, 1, 2, seed=1)
    assert (G1 == G2).all() and (G1 == G1.T).all() and not (G1 == metric("generic", 2, 1, 2, seed=2)[0]).all()
    G, text = metric("data", 2, 2, 2, seed=0)
    assert "random input sequences of 2 tokens" in text and G.shape == (12, 12)


def test_the_data_form_is_a_kronecker_product_in_the_outputs():
    # each output coordinate sees the same inputs: G = G0 (x) I_{d'} in the order (k, m, ab)
    G, _ = metric("data", 2, 2, 2, seed=4, samples=5)
    G1, _ = metric("data", 2, 1, 2, seed=4, samples=5)
    keys = [(k, m, q) for k in range(2) for m in range(2) for q in range(3)]
    for i, (k, m, q) in enumerate(keys):
        for j, (k2, m2, q2) in enumerate(keys):
            assert G[i, j] == (G1[k * 3 + q, k2 * 3 + q2] if m == m2 else 0)


@pytest.mark.parametrize(
    "kind, kwargs, text",
    [
        ("cosine", {}, "metric='cosine'"),
        ("data", {"samples": 0}, "samples=0"),
        ("data", {"samples": True}, "samples=True"),
    ],
)
def test_bad_metrics_are_refused_by_name(kind, kwargs, text):
    with pytest.raises(InvalidArgumentError, match=text):
        metric(kind, 2, 1, 2, seed=0, **kwargs)


def test_a_sequence_of_the_wrong_width_is_refused():
    with pytest.raises(InvalidArgumentError, match=r"t x d = \? x 3"):
        evaluation_matrix(np.zeros((2, 2), dtype=int), 3, 1)


def test_the_data_form_refuses_more_sequences_than_it_can_use():
    # 10^9 sequences took 2.2 GB and growing after 60 s (all made first); now refused at once, and made one at a time
    from ag_attention._landscape.metrics import MAX_DATA_SAMPLES, metric

    with pytest.raises(InvalidArgumentError, match="samples=1,000,000,000: at most 100,000 sequences"):
        metric("data", 2, 1, 2, seed=0, samples=10**9)
    assert MAX_DATA_SAMPLES == 100_000 and metric("data", 2, 1, 2, seed=0, samples=50)[0].shape == (6, 6)


def test_the_table_names_each_metric_once_with_its_flags():
    # the command line's choices are list(METRICS); the routes read the flags, never the names
    assert list(METRICS) == ["euclidean", "generic", "data"]
    assert [(m.generic, m.drawn, m.data) for m in METRICS.values()] == [
        (False, False, False),
        (True, True, False),
        (False, True, True),
    ]
    assert all(m.summary and "\n" not in m.summary for m in METRICS.values())
    # the generic form modulo a prime: entries in 1..p-1, symmetric, drawn from the generator given
    Q, text = METRICS["generic"].build(Space(3, seed=5, prime=7, coordinates="the variables"), random.Random(1))
    assert (Q == Q.T).all() and all(1 <= q < 7 for q in Q.flat) and text.endswith("on the variables (seed 5)")


def _weighted(space, rng):
    """A toy metric: the diagonal form 1, 2, ..., n (no random draw)."""
    return np.diag(np.arange(1, space.n + 1)).astype(object), f"the diagonal form 1, ..., {space.n}"


@pytest.mark.m2
def test_a_new_metric_is_one_entry_of_the_table(monkeypatch, msolve):
    monkeypatch.setitem(METRICS, "weighted", Metric("the diagonal form 1, 2, ..., n", _weighted))
    # the circle x^2 + y^2 = 1 under diag(1, 2): with Y = sqrt(2) y the distance is Euclidean and the circle the
    # ellipse x^2 + Y^2/2 = 1, whose ED degree is 4 (a circle's is 2); the same as the matrix given
    circle = ideal_ed_degree(["x", "y"], ["x^2 + y^2 - 1"], metric="weighted", cache=False)
    given = ideal_ed_degree(["x", "y"], ["x^2 + y^2 - 1"], metric=[[1, 0], [0, 2]], cache=False)
    assert (circle.value, circle.metric, given.value) == (4, "weighted", 4)
    # a model's ED degree: the entry, and the same form given as a matrix, agree
    M = PolynomialModel.deep_linear([2, 1, 2])
    named = model_ed_degree(M, metric="weighted", method="parametric")
    diagonal = [[(i + 1) * (i == j) for j in range(4)] for i in range(4)]
    assert named.metric == "weighted" and named.ed_degree == model_ed_degree(M, metric=diagonal).ed_degree
    # one layer: the count reads the entry (not generic: no Segre prediction, no degree bound; at most the
    # generic ED degree 14)
    layer = ed_degree(Architecture.single_layer(2, 1, None, tokens=2), metric="weighted", method="count")
    assert layer.metric_description == "the diagonal form 1, ..., 6" and layer.prediction is None
    assert layer.final and 1 <= layer.ed_degree <= 14 and [b[0] for b in layer.bounds] == ["upper"]
