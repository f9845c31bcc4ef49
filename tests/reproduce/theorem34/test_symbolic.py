"""The Macaulay2 part of the Theorem 3.4 reproduction: an item that fails is reported per item, the others kept."""

import pytest

from tests.helpers import fake_m2, ok_m2


def test_reproduce_with_a_timing_out_item_keeps_the_others_and_is_an_m2_error(tmp_path):
    from ag_attention._errors import M2Error
    from ag_attention._reproduce import theorem34 as t34

    b = fake_m2(tmp_path, "exec sleep 1000")
    opts = t34.Options(
        m2_grid=(t34.Size(2, 1, 2), t34.Size(2, 1, 1)),
        point_grid=(t34.Size(2, 1, 2),),
        equation_grid=(),
        backend=b,
        m2_timeout=1,
        picture=False,
    )
    report = t34.reproduce_theorem_34(opts)
    m2 = [c for c in report.checks if c.claim == "Macaulay2 checks"]
    assert [c.case for c in m2] == ["d=2, d'=1, A free", "d=2, d'=1, a=1"] and not any(c.passed for c in m2)
    others = [c for c in report.checks if c.claim != "Macaulay2 checks"]
    assert others and all(c.passed for c in others)  # the pointwise items still ran
    assert [e["error"] for e in report.meta["m2_errors"]] == ["M2TimeoutError"] * 2
    with pytest.raises(M2Error, match="2 Macaulay2 item.s. did not finish: d=2, d'=1, A free: .*timed out"):
        t34.raise_for_m2_errors(report)


def test_reproduce_rejects_a_malformed_m2_result_per_item(tmp_path):
    from ag_attention._reproduce import theorem34 as t34

    b = ok_m2(tmp_path, '{"dimension": 5}')
    opts = t34.Options(m2_grid=(t34.Size(2, 1, 2),), point_grid=(), equation_grid=(), backend=b, picture=False)
    report = t34.reproduce_theorem_34(opts)
    (c,) = [c for c in report.checks if c.claim == "Macaulay2 checks"]
    assert "does not have the expected form" in c.observed and report.meta["m2_errors"][0]["error"] == "M2OutputError"
