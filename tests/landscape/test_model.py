"""The model (``_landscape/model.py``): built from a function of the parameters, exactly."""

from fractions import Fraction

import pytest

from ag_attention import InvalidArgumentError, PolynomialModel, polynomial_model


def test_a_function_of_the_parameters_may_return_arrays_and_numbers():
    import numpy as np

    M = polynomial_model(["a", "b"], lambda t: np.array([[t[0] * t[1], 2], [t[1] ** 3, Fraction(1, 2) * t[0]]]))
    assert M.n == 4 and M.polynomials[1] == {(0, 0): Fraction(2)} and M.polynomials[3] == {(1, 0): Fraction(1, 2)}
    assert M.evaluate([2, 3]) == [6, 2, 27, 1]
    with pytest.raises(InvalidArgumentError, match="coordinate 0"):
        polynomial_model(["a"], lambda t: ["a"])
    with pytest.raises(InvalidArgumentError, match="returned no coordinate"):
        polynomial_model(["a"], lambda t: [])


def test_the_families_have_their_coordinates():
    # W2 W1 of widths 1-1-1; a product of two linear filters; strides place the second filter's taps
    assert PolynomialModel.deep_linear([1, 1, 1]).polynomials == ({(1, 1): Fraction(1)},)
    lcn = PolynomialModel.linear_convolutional([2, 2])
    assert lcn.n == 3 and lcn.evaluate([1, 2, 3, 4]) == [3, 10, 8]  # (1 + 2t)(3 + 4t)
    strided = PolynomialModel.linear_convolutional([2, 2], [2, 1])
    assert strided.n == 4 and strided.evaluate([1, 2, 3, 4]) == [3, 6, 4, 8]  # (1 + 2t)(3 + 4t^2)
    with pytest.raises(InvalidArgumentError, match="one per filter"):
        PolynomialModel.linear_convolutional([2, 2], [1, 1, 1])
    G, w, c = PolynomialModel.regression_loss([[1, 2]], [[3]])  # |W x - y|^2, x = (1, 2), y = 3
    assert (G, w, c) == ([[1, 2], [2, 4]], [3, 6], 9)
    with pytest.raises(InvalidArgumentError, match="one row per sample"):
        PolynomialModel.regression_loss([[1, 2]], [[3], [4]])
