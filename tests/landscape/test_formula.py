"""The Segre product's generic ED degree (exact, by its Chern classes) and the conjecture that the neuromanifold
has it."""

import pytest

from ag_attention import Architecture, ed_degree
from ag_attention._errors import InvalidArgumentError
from ag_attention._landscape.formula import segre_ed_degree, segre_product_ed_degree


@pytest.mark.parametrize(
    "dims, value",
    [
        ((3,), 1),  # a linear space: one critical point
        ((1, 1), 6),  # the smooth quadric surface of P^3: 2 * 3 (a general quadric in P^n has ED degree 2n)
        ((1, 2), 10),  # 2 x 3 matrices of rank one with a generic form (Draisma et al.: 10)
    ],
)
def test_known_segre_values(dims, value):
    assert segre_product_ed_degree(dims) == value


def test_the_sum_is_symmetric_in_the_factors():
    assert segre_product_ed_degree((1, 1, 3)) == segre_product_ed_degree((3, 1, 1)) == 196
    assert segre_product_ed_degree((2, 5)) == segre_product_ed_degree((5, 2))


@pytest.mark.parametrize("n", range(2, 12))
def test_two_lines_times_a_space_is_a_square(n):
    # the (2, d', 1) family: P^1 x P^1 x P^(2d'-1); (4n + 2)^2 for n >= 2 (not for n = 1: 34)
    assert segre_product_ed_degree((1, 1, n)) == (4 * n + 2) ** 2
    assert segre_product_ed_degree((1, 1, 1)) == 34


@pytest.mark.m2
@pytest.mark.parametrize("size", [(2, 1, 2), (2, 2, 1), (2, 2, 2)])
def test_the_prediction_is_the_count_where_both_exist(size):
    predicted = segre_ed_degree(*size)
    assert predicted.value is not None and predicted.status.startswith("conjecture")
    counted = ed_degree(Architecture.single_layer(*size, tokens=2), metric="generic", method="count", timeout=120)
    assert counted.ed_degree == predicted.value


@pytest.mark.parametrize("size, why", [((2, 1, 1), "2:1"), ((3, 1, 1), "2:1")])
def test_where_it_does_not_apply_it_says_why(size, why):
    p = segre_ed_degree(*size)
    assert p.value is None and why in p.status and p.to_dict()["value"] is None


@pytest.mark.parametrize(
    "size, value",
    [((3, 1, 2), 7965), ((3, 2, 2), 876798), ((4, 1, 2), 5815400), ((4, 1, 3), 3492368), ((4, 2, 3), 9249111072)],
)
def test_a_singular_determinantal_factor_is_predicted_from_its_chern_mather_classes(size, value):
    # the values written in docs/math/landscape.md (landscape-polar) before any of these sizes was counted
    p = segre_ed_degree(*size)
    assert p.value == value and p.status.startswith("conjecture") and "Chern-Mather" in p.status


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_sizes_are_refused_by_name(bad):
    with pytest.raises(InvalidArgumentError, match="d="):
        segre_ed_degree(bad, 1, 1)
    with pytest.raises(InvalidArgumentError, match=r"^dims(\[0\])?="):
        segre_product_ed_degree((bad,) if bad != 0 else ())
