"""The engine's proven lower bounds on output spans, and the composition cuts they allow."""

from ag_attention import Architecture, dimension
from ag_attention._exact.spans import MAX_SPAN_PARAMETERS, MAX_SPAN_TOKENS, engine_bound, output_span
from ag_attention._models.bounds import best_upper_bound


def test_spans_of_small_layers():
    assert output_span(Architecture((2, 3), (1,), tokens=2, heads=2)) == 3
    assert output_span(Architecture((1, 3), (1,), tokens=2, heads=2)) == 1  # every head a multiple of one vector
    assert output_span(Architecture((3, 2), (2,), tokens=1)) == 2
    # 8 heads from C^5 with one token: cubic maps, whose outputs span at most C(7, 3) = 35 < 36
    assert output_span(Architecture((5, 36), (5,), tokens=1, heads=8)) == 35


def test_a_cut_subtracts_only_where_the_span_is_proven():
    grows = Architecture((2, 3, 1), (1, 2), tokens=2, heads=2)  # d_1 = 3 > d_0 = 2: the widths prove nothing
    assert best_upper_bound(grows).value == 33
    assert engine_bound(grows).value == 24 and "span by GF(p) rank" in engine_bound(grows).detail
    r = dimension(grows)
    assert r.certified and r.dimension == 24 and r.closed_by == "composition"
    short = Architecture((5, 36, 2), (5, 1), tokens=1, heads=8)  # span 35 < 36: GL_36 must not be subtracted
    assert engine_bound(short).value >= 1104  # its GF(p) rank (the composition's cut would give 1,100)


def test_large_blocks_are_not_evaluated():
    huge = Architecture((600, 600), (300,), tokens=2)
    assert huge.parameter_count > MAX_SPAN_PARAMETERS and output_span(huge) == 0
    # a billion tokens: no forward pass (the CLI refuses the size right after, exit 2)
    assert output_span(Architecture((2, 3), (1,), tokens=10**9, heads=2)) == 0 < MAX_SPAN_TOKENS
