"""Theorem 3.4 by the closure's equations (ag_attention._reproduce.equations34): proven smooth or singular, a wrong
rule caught."""


def test_equation_checks_prove_smoothness_and_catch_a_wrong_rule():
    from ag_attention._reproduce.equations34 import equation_checks
    from ag_attention._reproduce.report import Report

    def rule(wrong):
        def singular(d, e, a, orbit):
            if wrong:
                return orbit.rank_a <= 1, "wrong: rank A <= 1 alone"
            return orbit.rank_a <= 1 and orbit.rank_v <= 1, "Theorem 3.4"

        return singular

    dim = lambda d, e, a: a * (2 * d - a) + d * e - 1  # noqa: E731
    right = Report("right")
    equation_checks(right, ((2, 4, 2, 4),), rule(False), dim)
    assert right.passed and len(right.checks) == 5  # the nonzero orbits of d=2, d'=4
    assert sum("smooth (proven)" in c.observed for c in right.checks) == 3
    wrong = Report("wrong")
    equation_checks(wrong, ((2, 4, 2, 4),), rule(True), dim)
    assert [c.case for c in wrong.failures] == ["d=2, d'=4, a=2, orbit [0,1,1] rank A=1, rank V=2"]
    assert "proven smooth, predicted singular" in wrong.failures[0].observed
