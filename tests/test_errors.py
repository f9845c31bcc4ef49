"""The error hierarchy (ag_attention._errors): one base, and the values each error carries and names."""

from ag_attention._errors import ComputationError, NoClearGapError


def test_errors_module_holds_every_documented_error():
    assert issubclass(NoClearGapError, ComputationError)
    # the old import path still works
    from ag_attention._numeric import NoClearGapError as N2

    assert N2 is NoClearGapError
