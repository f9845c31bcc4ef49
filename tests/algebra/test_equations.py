"""closure_equations (ag_attention._algebra.equations): interpolation where certified complete, else Macaulay2's kernel."""

from collections import Counter

import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError


@pytest.mark.m2
def test_auto_falls_back_to_the_kernel_when_not_certified(m2_local, msolve):
    from ag_attention._algebra.equations import closure_equations

    arch = Architecture((2, 2), (2,), tokens=2)
    result = closure_equations(arch, method="auto", max_degree=3, backend=m2_local, cache=False)
    assert result.degree == 20 and sorted(result.generator_degrees) == [2] * 5 + [4] * 10
    certified = closure_equations(Architecture((3, 1), (1,), tokens=2), method="auto")
    assert certified.certified_complete and certified.max_degree == 3
    with pytest.raises(InvalidArgumentError, match="one plain lightning layer"):
        closure_equations(Architecture((2, 2, 2), (2, 2), tokens=2), method="interpolate")


@pytest.mark.m2
def test_certified_ideals_are_the_kernels(m2_local, msolve):
    """Where the leading-ideal test certifies, Macaulay2's kernel over QQ has the same minimal generator degrees."""
    from ag_attention._algebra.equations import closure_equations
    from ag_attention._m2.implicitize import implicitize

    arch = Architecture((2, 3), (2,), tokens=2)
    ours = closure_equations(arch, method="auto")
    assert ours.certified_complete and ours.leading_test is not None
    m2 = implicitize(arch, coords="reduced", field="QQ", backend=m2_local, timeout=600)
    assert {D: n for D, n in ours.generator_count.items() if n} == dict(Counter(m2.generator_degrees))
