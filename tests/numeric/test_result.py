"""NumericalResult: what is proven and what is only numerical, in text, JSON, notebooks and tables."""

import math

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._numeric import numerical_dimension
from tests.helpers import seed


def test_a_numerical_difference_is_never_a_proven_one():
    """A float64 rank below the formula is reported as a numerical difference, never as DIFFERS."""
    # one token is outside Thm. 3.9 and lower: the numerical rank is below the formula
    r = numerical_dimension(Architecture((3, 1), (3,), tokens=2, normalized=True), seed=seed())
    assert r.agrees in (True, None)
    lightning = numerical_dimension(Architecture((3, 1), (3,), tokens=1), seed=seed())  # 8, Cor. 3.3 says 11
    assert lightning.dimension == 8 and lightning.agrees is None
    assert "differs numerically" in lightning.comparison() and "not a proof" in lightning.comparison()
    assert "DIFFERS" not in str(lightning)


def test_numerical_result_says_what_is_proven():
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True), seed=seed())
    assert r.certified and r.dimension == r.lower_bound == r.upper_bound == 24 and r.agrees is True
    text = str(r)
    assert "(certified)" in text and "lower bound by ball arithmetic" in text
    assert "upper bound by the symmetry families 1 and 2" in text
    d = r.to_dict()
    assert d["certified"] is True and d["lower_bound"] == d["upper_bound"] == 24 and d["bits"] == 128
    assert d["determinant_excludes_zero"] is True and d["minor_size"] == 24
    r = numerical_dimension(Architecture((3, 2), (2,), tokens=1, normalized=True), raise_on_no_gap=False, seed=seed())
    assert not r.certified and r.to_dict()["certified"] is False
    assert "lower bound 6 by ball arithmetic, upper bound 14" in str(r)
    lightning = numerical_dimension(Architecture((3, 3), (2,), tokens=2), seed=seed())
    assert lightning.certificate is None and lightning.to_dict()["certified"] is False


def _columns(result):
    from ag_attention._results import flatten

    return list(flatten(result.to_dict()))


def test_numerical_result_in_a_notebook_and_a_table():
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True), seed=seed())
    # s_25..s_28 are float64 noise (their digits depend on the BLAS kernel, the CPU kind and the threads, so the
    # raw log10(s_24 / s_25) does too): the gap is printed from s_24 to the noise level eps * size * s_1,
    # computed here from the spectrum (s_24 is computed to nearly full precision: its digits do not move)
    s = r.singular_values
    assert s[24] < 1e-13 * s[0] < s[23]  # the spectrum of a rank-24 matrix: the premise of the test
    # (in the order of operations the definition gives: the same float64 value, not one off in the last bit, so
    # no rounding boundary can split the two)
    gap = math.log10((s[23] / s[0]) / (np.finfo(float).eps * max(r.rows, s.size)))
    assert gap > 8  # orders of magnitude: far from a borderline verdict
    assert repr(r) == (
        "NumericalResult(widths 4,3 ranks 2 t=3 softmax(tau=1): dim=24, P=28, "
        f"gap {gap:.1f} orders to the noise level, certified, seed={seed()})"
    )
    assert (
        f"  singular values  gap of {gap:.1f} orders of magnitude from s_24 to the float64 noise level "
        f"eps x {r.rows} x s_1 (s_25 and below are noise); runner-up"
    ) in str(r)
    d = r.to_dict()
    assert d["singular_value_gap"] == round(gap, 2) and d["gap_to_noise_level"] is True
    assert d["singular_value_gap_raw"] > gap and d["largest_dropped"] == s[24] / s[0]  # the raw numbers, kept
    md = r._repr_markdown_()
    assert md.startswith(str(r) + "\n\n| field | value |\n|---|---|\n")
    assert "| dimension | 24 |" in md and "| certified | true |" in md
    assert f"| singular_value_gap | {round(gap, 2)} |" in md and "| gap_to_noise_level | true |" in md
    pytest.importorskip("pandas")
    f = r.to_frame()
    assert len(f) == 1 and list(f.columns) == _columns(r)
    assert f.iloc[0]["dimension"] == 24 and str(f["dimension"].dtype) == "Int64"
    assert f.iloc[0]["singular_value_gap"] == round(gap, 2)
