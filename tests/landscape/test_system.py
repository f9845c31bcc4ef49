"""The critical system in the weights: it vanishes exactly at the critical points of the loss."""

import random
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._exact import linalg
from ag_attention._landscape.system import critical_system, polynomial_text
from ag_attention._models.coordinates import reduced_coordinates, reduced_count
from tests.helpers import lazy_import

sympy = lazy_import("sympy")


def _point(d, e, a, rng):
    """Random integer weights in the chart's coordinates: (names -> values, A, V)."""
    V = [[rng.randint(-4, 4) for _ in range(d)] for _ in range(e)]
    if a < d:
        B = [[rng.randint(-4, 4) for _ in range(a)] for _ in range(d)]
        K = [[rng.randint(-4, 4) for _ in range(d - a)] for _ in range(a)]
        C = [[(1 if c == l else 0) if l < a else K[c][l - a] for l in range(d)] for c in range(a)]
        A = [[sum(B[k][c] * C[c][l] for c in range(a)) for l in range(d)] for k in range(d)]
        chart = {f"b{k + 1}_{c + 1}": B[k][c] for k in range(d) for c in range(a)}
        chart |= {f"k{c + 1}_{l + 1}": K[c][l - a] for c in range(a) for l in range(a, d)}
    else:
        A = [[rng.randint(-4, 4) for _ in range(d)] for _ in range(d)]
        chart = {f"a{k + 1}_{l + 1}": A[k][l] for k in range(d) for l in range(d)}
    chart |= {f"v{m + 1}_{l + 1}": V[m][l] for m in range(e) for l in range(d)}
    return chart, A, V


def _evaluate(text, values):
    """A polynomial in msolve's text at Fractions (names the chart's; ``s`` left out means the text has none)."""
    return eval(text.replace("^", "**"), {"__builtins__": {}}, dict(values))  # noqa: S307 - our own output


def _values(system, chart):
    return [_evaluate(p, chart) for p in system.polynomials[:-1]]


@pytest.mark.parametrize("d, e, a", [(2, 1, 2), (2, 2, 2), (3, 1, 2), (3, 2, 1)])
def test_the_system_vanishes_at_a_critical_point_and_not_elsewhere(d, e, a):
    rng = random.Random(d * 100 + e * 10 + a)
    n = reduced_count(d, e)
    G = np.array([[0] * n for _ in range(n)], dtype=object)
    for i in range(n):
        for j in range(i, n):
            G[i, j] = G[j, i] = rng.randint(-9, 9)
    chart, A, V = _point(d, e, a, rng)
    x = np.array(reduced_coordinates(A, V), dtype=object)
    w = list(G.dot(x))  # the loss x^T G x - 2 w^T x is critical (stationary) at x: J^T (G x - w) = 0
    arch = Architecture.single_layer(d, e, a if a < d else None, tokens=2)
    system = critical_system(arch, G, w, prime=0, seed=3)
    # one gradient equation per weight (one of them dependent: the rescaling), the slice, s h = 1
    assert system.variables[-1] == "s" and system.removed and len(system.polynomials) == len(system.variables) + 1
    # on the slice: rescale (c A, V / c) with c = l(V); the chart rescales B (or A) by c
    cut = system.slice_coefficients
    c = Fraction(sum(k * v for k, v in zip(cut, (v for row in V for v in row))))
    assert c != 0
    scaled = {
        k: (Fraction(v) * c if k[0] in "ab" else Fraction(v) / c if k[0] == "v" else Fraction(v))
        for k, v in chart.items()
    }
    assert _values(system, scaled) == [0] * (len(system.polynomials) - 1)  # the gradient and the slice
    # s h - 1 with h != 0 here: the point is off the critical locus (h = value at s = 1 plus 1)
    assert _evaluate(system.polynomials[-1], dict(scaled, s=Fraction(1))) != -1
    # moved off the critical point, the gradient does not vanish
    name = next(iter(scaled))
    moved = dict(scaled, **{name: scaled[name] + 1})
    assert any(v != 0 for v in _values(system, moved)[:-1])


def test_mod_p_is_the_rational_system_reduced():
    arch = Architecture.single_layer(2, 1, None, tokens=2)
    G = np.eye(6, dtype=int).astype(object)
    w = [Fraction(k, 3) for k in range(6)]
    p = 32003
    qq = critical_system(arch, G, w, prime=0, seed=1)
    fp = critical_system(arch, G, w, prime=p, seed=1)
    ring = linalg.modular_polynomial_ring(list(qq.variables), p, "degrevlex")
    symbols = sympy.symbols(qq.variables)
    for f, g in zip(qq.polynomials, fp.polynomials):
        pf = sympy.Poly(sympy.sympify(f), *symbols, modulus=p)
        pg = sympy.Poly(sympy.sympify(g), *symbols, modulus=p)
        # the rational one is scaled by the lcm of its denominators: proportional mod p
        lead = pg.LC() * pow(int(pf.LC()) % p, -1, p) % p
        assert (pf * lead - pg).is_zero
    del ring


def test_without_removal_there_is_no_s():
    arch = Architecture.single_layer(2, 1, None, tokens=2)
    system = critical_system(arch, np.eye(6, dtype=int).astype(object), [1] * 6, prime=101, remove_critical=False)
    assert "s" not in system.variables and not system.removed and system.shape == "7 equations in 6 unknowns"


def test_polynomial_text_clears_denominators():
    ring = linalg.rational_polynomial_ring(["x", "y"], "degrevlex")
    x, y = ring.gens()
    f = x * x * linalg.rational(Fraction(1, 2)) - y * linalg.rational(Fraction(2, 3)) + 1
    assert polynomial_text(f, ["x", "y"]) == "3*x^2-4*y+6"


def test_bad_forms_are_refused():
    arch = Architecture.single_layer(2, 1, None, tokens=2)
    with pytest.raises(InvalidArgumentError, match="G must be 6 x 6"):
        critical_system(arch, np.eye(5, dtype=int), [0] * 5, prime=101)
    with pytest.raises(InvalidArgumentError, match="tokens=1"):
        critical_system(Architecture.single_layer(2, 1, None, tokens=1), np.eye(6, dtype=int), [0] * 6, prime=101)
