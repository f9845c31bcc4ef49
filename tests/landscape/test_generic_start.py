"""The start of every data set's homotopy (ag_attention._landscape.generic_start): the generic factor and its form,
exact; a data set's factor; the rank of a form."""

from fractions import Fraction

import numpy as np

from ag_attention import Architecture
from ag_attention._landscape.generic_start import (
    data_factor,
    form_rank,
    generic_factor,
    generic_form,
    generic_start,
    generic_system,
)
from ag_attention._landscape.square import square_system


def test_the_generic_form_is_its_factors_product_exactly_and_drawn_from_the_seed():
    E = generic_factor(2, 1, 4, seed=3)
    G = generic_form(2, 1, 4, seed=3)
    assert E.shape == (4, 6) and G.shape == (6, 6)
    assert all(G[i, j] == sum(E[k, i] * E[k, j] for k in range(4)) for i in range(6) for j in range(6))
    assert form_rank(G) == 4 and form_rank(generic_form(2, 1, 6, seed=3)) == 6
    assert (generic_factor(2, 1, 4, seed=3) == E).all() and not (generic_factor(2, 1, 4, seed=4) == E).all()


def test_a_data_factor_gives_the_form_back_and_lies_nearest_the_generic_one(rng):
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    M = rng.integers(-3, 4, size=(5, 6))
    G = np.array([[Fraction(int(v)) for v in row] for row in M.T @ M], dtype=object)
    S = square_system(arch, G)
    assert form_rank(S.G) == 5
    E0 = np.array(generic_factor(2, 1, 5, seed=0), dtype=float)
    E = data_factor(S, 5, E0)
    assert np.allclose(E.T @ E, np.array(S.G, dtype=float), atol=1e-12)
    # turned to lie nearest E0: no other orthogonal turn of it is nearer
    for _ in range(20):
        Q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
        assert np.linalg.norm(E - E0) <= np.linalg.norm(Q @ E - E0) + 1e-12


def test_the_generic_system_is_built_once_a_process_and_is_that_of_the_generic_form():
    """Every data set of one size and form rank starts from the same system (built once): the generic form's."""
    S0 = generic_system(2, 1, 2, 4, 3)
    assert generic_system(2, 1, 2, 4, 3) is S0 and generic_system(2, 1, 2, 4, 4) is not S0
    fresh = square_system(Architecture.single_layer(2, 1, 2, tokens=2), generic_form(2, 1, 4, seed=3))
    assert (S0.G == fresh.G).all() and S0.scale_G == fresh.scale_G and S0.fingerprint(3) == fresh.fingerprint(3)
    start = generic_start(Architecture.single_layer(2, 1, 2, tokens=2), 4, 3, None)
    assert start.system is S0
