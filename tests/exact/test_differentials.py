"""The differential of one layer's reduced parametrization (ag_attention._exact.differentials)."""

from ag_attention._exact import linalg
from ag_attention._exact.onelayer import differential
from ag_attention._models import coordinates as C


def test_differential_is_the_derivative_of_the_evaluator():
    A, V = [[1, 2, -1], [0, 3, 2], [-2, 1, 4]], [[2, -1, 3], [1, 5, -2]]
    names = [f"a{k}{l}" for k in range(3) for l in range(3)] + [f"v{m}{l}" for m in range(2) for l in range(3)]
    ring = linalg.integer_polynomial_ring(names, "degrevlex")
    g = ring.gens()
    polys = C.reduced_coordinates(
        [g[3 * k : 3 * k + 3] for k in range(3)], [g[9 + 3 * m : 12 + 3 * m] for m in range(2)]
    )
    point = [linalg.IntegerNumber(x) for r in A + V for x in r]
    want = [[int(f.derivative(c)(*point)) for c in range(len(names))] for f in polys]
    assert differential(A, V).tolist() == want
