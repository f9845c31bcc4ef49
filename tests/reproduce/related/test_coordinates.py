"""Their coordinates and the map onto ours (ag_attention._reproduce.related.coordinates)."""

from fractions import Fraction

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._exact import linalg
from ag_attention._models.coordinates import reduced_coordinates
from ag_attention._reproduce.related.coordinates import (
    check_coordinate_map,
    reduced_form,
    their_coordinates,
    their_labels,
)


@pytest.mark.parametrize("size", [(2, 2, 1, 2), (3, 2, 1, 3), (3, 3, 2, 1), (4, 3, 2, 4), (3, 1, 1, 3), (4, 1, 1, 2)])
def test_their_coordinates_are_our_reduced_ones_scaled(size):
    m = check_coordinate_map(*size)
    assert m["disagree"] == [] and m["agree"] == m["labels"] > 0
    # the divisors are the numbers of terms: 1 and 2 for the cross coefficients, 1, 3, 6 for the others
    assert set(m["divisors"]) <= {1, 2, 3, 6}


def test_the_map_needs_the_transpose():
    # their A is the transpose of ours: without the transpose the map is wrong, and the check sees it
    th = their_coordinates(3, 2, 1, 3)
    red = reduced_coordinates(th.A, [th.V])  # A not transposed: wrong
    wrong = [
        lab
        for lab, val in th.values.items()
        if sum((red[i] * linalg.rational(q) for i, q in reduced_form(lab, 3).items()), th.ring.constant(0)) != val
    ]
    assert len(wrong) > 0
    assert reduced_form(((1, 2), (2, 2), (3, 1)), 3) == {13: Fraction(1, 2)}


def test_bad_sizes_are_named():
    with pytest.raises(InvalidArgumentError, match="d=0"):
        their_coordinates(0, 2, 1)
    with pytest.raises(InvalidArgumentError, match="j=3"):
        check_coordinate_map(3, 2, 3)
    with pytest.raises(InvalidArgumentError, match="a=0"):
        their_coordinates(3, 2, 1, 0)
    with pytest.raises(InvalidArgumentError, match="d=7"):
        their_labels(7, 2)
