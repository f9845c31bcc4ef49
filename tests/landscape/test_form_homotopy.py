"""The square system along a path of forms (ag_attention._landscape.form_homotopy): at each end the system of that
form, its derivatives those of differences."""

from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._landscape.form_homotopy import FormHomotopy
from ag_attention._landscape.metrics import metric
from ag_attention._landscape.square import square_system
from tests.helpers import square_point


@pytest.mark.parametrize("d, e, a, rank", [(2, 1, 2, 4), (3, 1, 1, 16), (2, 2, 1, 12)])
def test_the_form_homotopy_is_the_system_of_each_form_on_its_path(d, e, a, rank, rng):
    """FormHomotopy.factors: at s = 0 and s = 1 it is the square system of E0^T E0 and of E1^T E1 (to rounding),
    and its derivatives in the unknowns and in the parameter (w, s) are those of central differences."""
    arch = Architecture.single_layer(d, e, a, tokens=2)
    G, _ = metric("generic", d, e, 2, seed=3)
    S = square_system(arch, G)
    E0, E1 = rng.standard_normal((rank, S.n_x)), rng.standard_normal((rank, S.n_x))
    H = FormHomotopy.factors(S, E0, E1)
    assert (H.n, H.n_parameters, H.n_chart) == (S.n, S.n_x + 1, S.n_chart)
    theta, chart, _, _ = square_point(S, rng)
    w = rng.standard_normal(S.n_x) + 1j * rng.standard_normal(S.n_x)
    theta[:, -1] = 0  # lambda = 0: every gradient row then scales with the form
    m = S.n - 1
    for s, E in ((0.0, E0), (1.0, E1)):
        Gs = np.array([[Fraction(float(v)) for v in row] for row in E.T @ E], dtype=object)
        Ss = square_system(arch, Gs)  # the form divided by its scale, a power of two
        c = float(Ss.scale_G)
        Fh, Jh = H.evaluate(theta, H.parameter(w, s), chart=chart)
        Fs, Js = Ss.evaluate(theta, w / c, chart=chart)
        assert np.allclose(Fh[:, :m] / c, Fs[:, :m], rtol=1e-9, atol=1e-9 * np.abs(Fs).max())
        assert np.allclose(Jh[:, :m, :m] / c, Js[:, :m, :m], rtol=1e-9, atol=1e-9 * np.abs(Js).max())
    p = H.parameter(w, complex(rng.standard_normal(), rng.standard_normal()))
    dp = rng.standard_normal(S.n_x + 1) + 1j * rng.standard_normal(S.n_x + 1)
    F, J, Fp = H.evaluate(theta, p, True, dp, chart=chart)
    h = 1e-6
    diff = H.evaluate(theta, p + h * dp, False, chart=chart)[0] - H.evaluate(theta, p - h * dp, False, chart=chart)[0]
    assert np.allclose(diff / (2 * h), Fp, rtol=1e-6, atol=1e-7 * np.abs(Fp).max())
    z = theta[0]
    for k in range(S.n):
        step = np.zeros(S.n, dtype=complex)
        step[k] = h
        diff = (
            H.evaluate((z + step)[None], p, False, chart=chart)[0]
            - H.evaluate((z - step)[None], p, False, chart=chart)[0]
        )
        assert np.allclose(diff[0] / (2 * h), J[0][:, k], rtol=1e-6, atol=1e-7 * np.abs(J).max())


def test_a_form_that_is_not_symmetric_is_refused():
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    S = square_system(arch, metric("generic", 2, 1, 2, seed=3)[0])
    F = np.eye(S.n_x)
    F[0, 1] = 0.5
    with pytest.raises(InvalidArgumentError, match=r"symmetric.*0\.5"):
        FormHomotopy(S, [F])
    # a form symmetric up to a rounding (as a computed E^T E may be) is taken, and made exactly symmetric: the
    # compiled evaluation reads a row of it as its column
    E = np.random.default_rng(0).standard_normal((3, S.n_x))
    F = E.T @ E
    F[0, 1] += 1e-15
    H = FormHomotopy(S, [F])
    assert not np.array_equal(F, F.T) and np.array_equal(H.forms[0], H.forms[0].T)
