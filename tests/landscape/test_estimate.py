"""The estimate printed before a landscape computation (ag_attention._landscape.estimate)."""

from ag_attention import Architecture
from ag_attention._landscape.estimate import certify_seconds, landscape_estimate, paths_per_second


def test_the_estimate_names_the_size_the_proven_bounds_and_the_limit():
    text = landscape_estimate(Architecture.single_layer(4, 1, 4, tokens=2), 30.0, 1)
    assert "a square system of 21 unknowns" in text and ">= 816 (degree, proven)" in text
    assert "<= 167,172 (Bezout, proven)" in text and "predicts 35,964 (a conjecture)" in text
    assert "in this process" in text and text.endswith("limit 30 s (what is found by then is kept)")
    # no Segre value where D_r is singular: the bounds only; more workers, less time
    text = landscape_estimate(Architecture.single_layer(3, 1, 2, tokens=3), None, 2)
    assert "predicts" not in text and ">= 108 (degree, proven)" in text and text.endswith("limit none")
    assert paths_per_second(9) > paths_per_second(21) > 0 and certify_seconds(21) > certify_seconds(9) > 0
