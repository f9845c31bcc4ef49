"""The generators as GL-representations: Kostka numbers, dimensions, and decompositions of real generator counts."""

import itertools

import pytest

from ag_attention import Architecture
from ag_attention._algebra.interpolation import low_degree_equations
from ag_attention._algebra.representations import decompose, kostka, schur_dimension
from ag_attention._errors import ComputationError


def _ssyt_count(shape, content):
    """Brute force: fillings of the shape with content, rows weakly increasing, columns strictly."""
    letters = [i for i, c in enumerate(content) for _ in range(c)]
    cells = [(r, c) for r, row in enumerate(shape) for c in range(row)]
    seen = set()
    for perm in set(itertools.permutations(letters)):
        t = dict(zip(cells, perm))
        if all(t[(r, c)] <= t[(r, c + 1)] for (r, c) in cells if (r, c + 1) in t) and all(
            t[(r, c)] < t[(r + 1, c)] for (r, c) in cells if (r + 1, c) in t
        ):
            seen.add(perm)
    return len(seen)


@pytest.mark.parametrize(
    "shape, content",
    [
        ((2, 1), (1, 1, 1)),
        ((3, 1), (2, 1, 1)),
        ((2, 2), (1, 1, 1, 1)),
        ((3, 2), (2, 2, 1)),
        ((2, 1, 1), (1, 1, 1, 1)),
        ((4,), (1, 3)),
        ((2, 2), (3, 1)),
        ((3, 1, 1), (1, 2, 2)),
    ],
)
def test_kostka_numbers_count_tableaux(shape, content):
    assert kostka(shape, content) == _ssyt_count(shape, content)


def test_dimensions_are_the_sums_of_weight_multiplicities():
    for n in (1, 2, 3, 4):
        for shape in [(1,), (2,), (1, 1), (2, 1), (2, 2), (3, 1), (2, 2, 2), (4,)]:
            total = sum(
                kostka(shape, w) for w in itertools.product(range(sum(shape) + 1), repeat=n) if sum(w) == sum(shape)
            )
            assert schur_dimension(shape, n) == total


def test_generators_of_3_2_3_are_three_irreducibles():
    """(3,2,3): the 45 quadrics are one irreducible, the 80 cubics two of dimension 40."""
    r = low_degree_equations(Architecture.single_layer(3, 2, 3), max_degree=3)
    assert r.representations(2) == [(((1, 1), (1, 1), (4,)), 1, 45)]
    assert sorted(r.representations(3)) == [(((1, 1, 1), (3,), (3, 3)), 1, 40), (((3,), (3,), (2, 2, 2)), 1, 40)]
    assert "S(1, 1) x S(1, 1) x S(4)" in str(r)
    assert r.to_dict()["representations"]["2"] == [
        {"A_rows": [1, 1], "V_rows": [1, 1], "z": [4], "multiplicity": 1, "dimension": 45}
    ]


@pytest.mark.parametrize("d, e, a, k", [(3, 1, 1, 3), (2, 2, 2, 4), (3, 1, 3, 4), (4, 1, 1, 3)])
def test_decompositions_add_up_on_real_ideals(d, e, a, k):
    r = low_degree_equations(Architecture.single_layer(d, e, a), max_degree=k)
    for D, n in r.generator_count.items():
        assert sum(m * dim for _, m, dim in r.representations(D)) == n


def test_a_non_character_is_refused():
    # the weight (0, 1) without its dominant partner (1, 0) is no GL_2-character
    with pytest.raises(ComputationError, match="not the character"):
        decompose({((1, 0), (1,), (1, 0)): 1, ((0, 1), (1,), (1, 0)): 2}, (2, 1, 2))
