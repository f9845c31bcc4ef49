"""Their families built from their definitions (ag_attention._reproduce.related.constructions)."""

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.related.constructions import DEFAULT_LINES, lie_certificate, lines_for


def test_lie_certificate():
    for d in (3, 4):
        c = lie_certificate(d)
        assert c["depends_on_sym_A_only"] and c["product_zero"] and c["kernel_vector_nonzero"] and c["trace_zero"]
    with pytest.raises(InvalidArgumentError, match="d=2"):
        lie_certificate(2)


def test_the_lines_of_the_resultant_family():
    # their list at d = 3; ours elsewhere: distinct points (2, ...) in pairs, as many as asked
    assert lines_for(3) == DEFAULT_LINES and len(DEFAULT_LINES) == 12
    for d in (2, 4):
        lines = lines_for(d, 5)
        assert len(lines) == 5 and len(set(lines)) == 5
        assert all(len(p) == len(q) == d and p[0] == q[0] == 2 and p != q for p, q in lines)
