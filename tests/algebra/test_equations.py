"""closure_equations (ag_attention._algebra.equations): interpolation where certified complete, else Macaulay2's
kernel."""

import re
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
    from ag_attention._algebra.implicitize import implicitize

    arch = Architecture((2, 3), (2,), tokens=2)
    ours = closure_equations(arch, method="auto")
    assert ours.certified_complete and ours.leading_test is not None
    m2 = implicitize(arch, coords="reduced", field="QQ", backend=m2_local, timeout=600)
    assert {D: n for D, n in ours.generator_count.items() if n} == dict(Counter(m2.generator_degrees))


def test_the_completeness_tests_can_be_skipped_or_bounded(msolve):
    """--no-completeness: the generators come back untested; --completeness-timeout bounds both tests together
    (here 3 s: the length test stops at 3 s, nothing is left for the leading-ideal test)."""
    from ag_attention._algebra.equations import closure_equations

    arch = Architecture((3, 2), (3,), tokens=2)
    skipped = closure_equations(arch, method="interpolate", max_degree=2, completeness=False)
    assert skipped.extra["completeness"] == "not tested (--no-completeness)"
    assert skipped.length_test is None and skipped.leading_test is None and not skipped.certified_complete
    bounded = closure_equations(arch, method="interpolate", max_degree=3, completeness_timeout=3)
    # the length test gets what is left of the 3 s (2.99 s when its set-up took 10 ms): never more
    m = re.search(r"timed out after ([0-9.]+) s", bounded.extra["length_test"])
    assert m is not None and 2 <= float(m.group(1)) <= 3, bounded.extra["length_test"]
    assert bounded.extra["leading_ideal_test"].startswith("not run: the completeness timeout (3 s) was used up")
    assert bounded.generator_count == {1: 0, 2: 45, 3: 80}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(method="kernel", completeness=False), "only for --method interpolate or auto"),
        (dict(method="kernel", completeness_timeout=5), "only for --method interpolate or auto"),
        (dict(method="auto", completeness=False), "only with --method interpolate"),
        (dict(method="interpolate", completeness_timeout=0), "--completeness-timeout=0"),
        (dict(method="interpolate", completeness_timeout=float("nan")), "--completeness-timeout=nan"),
    ],
)
def test_completeness_options_are_checked(kwargs, message):
    from ag_attention._algebra.equations import closure_equations

    with pytest.raises(InvalidArgumentError, match=message):
        closure_equations(Architecture((2, 1), (2,), tokens=2), **kwargs)
