"""Completeness of the interpolated equations (ag_attention._algebra.completeness): the length and leading-ideal
tests."""

from collections import Counter

import pytest

from ag_attention import Architecture
from ag_attention._algebra.interpolation import low_degree_equations


@pytest.mark.m2
@pytest.mark.parametrize("d, e, a, k", [(2, 1, 1, 2), (2, 2, 1, 4), (3, 1, 1, 3)])
def test_length_test_certifies_what_the_kernel_confirms(m2_local, msolve, d, e, a, k):
    """Where the length test says complete, Macaulay2's kernel has the same generators and degree."""
    from ag_attention._algebra.completeness import artinian_length
    from ag_attention._algebra.implicitize import implicitize

    r = low_degree_equations(Architecture.single_layer(d, e, a), max_degree=k)
    cert = artinian_length(r)
    assert cert.certified and cert.length == cert.degree
    m2 = implicitize(Architecture((d, e), (a,), tokens=2), coords="reduced", field="QQ", backend=m2_local, timeout=600)
    assert m2.degree == cert.degree and m2.dimension == cert.dimension
    assert {D: n for D, n in r.generator_count.items() if n} == dict(Counter(m2.generator_degrees))


def test_length_test_fails_when_a_generator_is_missing(msolve):
    """(3,1,1) is certified with its 55 generators; without one cubic, or below degree 3, it is not."""
    from dataclasses import replace

    from ag_attention._algebra.completeness import artinian_length
    from ag_attention._algebra.interpolation import Block

    r = low_degree_equations(Architecture.single_layer(3, 1, 1), max_degree=3)
    assert artinian_length(r).length == 45
    cubic = next(b for b in r.blocks[3] if b.generators)
    fewer = [replace(b, generators=b.generators[1:]) if b is cubic else b for b in r.blocks[3]]
    assert isinstance(fewer[0], Block)
    weaker = replace(r, blocks={**r.blocks, 3: fewer})
    cert = artinian_length(weaker)
    assert not cert.certified and (cert.length is None or cert.length > 45)
    assert "not certified" in cert.summary()
    low = artinian_length(low_degree_equations(Architecture.single_layer(3, 1, 1), max_degree=2))
    assert not low.certified


def test_length_test_does_not_certify_a_non_cohen_macaulay_closure(msolve):
    """(2,2,2): all generators are of degree <= 4 (the kernel's), yet the length is 26 > 20: not CM, not certified."""
    from ag_attention._algebra.completeness import artinian_length

    r = low_degree_equations(Architecture.single_layer(2, 2, 2), max_degree=4)
    cert = artinian_length(r)
    assert (cert.degree, cert.certified) == (20, False) and cert.length > 20
    assert r.complete.startswith("up to degree 4")
    r.length_test = cert
    assert "not certified: length of R/(J + L) = " in r.complete


@pytest.mark.parametrize("d, e, a, k, top", [(2, 2, 2, 4, 5), (3, 1, 3, 4, 7), (2, 3, 2, 4, 6)])
def test_leading_ideal_test_certifies_non_cohen_macaulay_closures(msolve, d, e, a, k, top):
    """The length test cannot certify these (not CM); the leading ideals of J and of the elimination ideal agree."""
    from ag_attention._algebra.completeness import leading_ideal_test

    r = low_degree_equations(Architecture.single_layer(d, e, a), max_degree=k)
    cert = leading_ideal_test(r)
    assert cert.certified and cert.generators_i == cert.generators_j and max(cert.degrees_i) == top
    r.leading_test = cert
    assert (
        r.certified_complete and r.complete.startswith("certified") and r.to_dict()["leading_ideal_test"]["certified"]
    )


def test_leading_ideal_test_refuses_what_is_missing(msolve):
    from dataclasses import replace

    from ag_attention._algebra.completeness import leading_ideal_test, projection_system

    low = leading_ideal_test(
        low_degree_equations(Architecture.single_layer(2, 2, 2), max_degree=3)
    )  # the 10 quartics are missing
    assert not low.certified and low.generators_j < low.generators_i and "not certified" in low.summary()
    r = low_degree_equations(Architecture.single_layer(2, 3, 2), max_degree=4)
    quartic = next(b for b in r.blocks[4] if b.generators)
    fewer = [replace(b, generators=b.generators[1:]) if b is quartic else b for b in r.blocks[4]]
    assert not leading_ideal_test(replace(r, blocks={**r.blocks, 4: fewer})).certified
    assert len(projection_system(3, 1, 1, 65521)[1]) == 36 * 3 + 9 * 6  # 2 x 2 minors of s; polarized minors of A


@pytest.mark.parametrize("d, e, a, k", [(2, 2, 1, 4), (3, 1, 1, 3), (2, 3, 1, 4)])
def test_leading_ideal_test_with_rank_bounds(msolve, d, e, a, k):
    """a < d: the polarized minors make Y's ideal prime; the test agrees with the length test where that certifies,
    and certifies (2,3,1), which is not Cohen-Macaulay (length 54 > 42)."""
    from ag_attention._algebra.completeness import artinian_length, leading_ideal_test

    r = low_degree_equations(Architecture.single_layer(d, e, a), max_degree=k)
    lead, length = leading_ideal_test(r), artinian_length(r)
    assert lead.certified
    assert length.certified == ((d, e, a) != (2, 3, 1))
    r.leading_test, r.length_test = lead, length
    assert r.cohen_macaulay.startswith("yes" if length.certified else "no, unless")
    assert not leading_ideal_test(low_degree_equations(Architecture.single_layer(d, e, a), max_degree=k - 1)).certified


def test_an_elimination_is_computed_once_per_process(msolve, monkeypatch):
    """auto tests degree 2, 3, 4 against one elimination ideal: msolve eliminates once; a failure is not retried."""
    from ag_attention._algebra import completeness
    from ag_attention._errors import MSolveTimeoutError

    monkeypatch.setattr(completeness, "_ELIMINATIONS", {})
    runs = []
    real = completeness.run_msolve
    monkeypatch.setattr(completeness, "run_msolve", lambda *a, **k: runs.append(k["label"]) or real(*a, **k))
    for k in (2, 3, 4):
        completeness.leading_ideal_test(low_degree_equations(Architecture.single_layer(2, 2, 2), max_degree=k))
    assert runs.count("leading ideal of the elimination ideal") == 1 and runs.count("leading ideal of J") == 3
    monkeypatch.setattr(completeness, "_ELIMINATIONS", {})

    def too_slow(*a, **k):
        runs.append("slow" if k["label"].startswith("leading ideal of the elimination") else "J after a failure")
        if runs[-1] == "slow":
            raise MSolveTimeoutError("elimination", k["timeout"])
        return real(*a, **k)

    monkeypatch.setattr(completeness, "run_msolve", too_slow)
    for k in (2, 3):
        with pytest.raises(MSolveTimeoutError):
            completeness.leading_ideal_test(
                low_degree_equations(Architecture.single_layer(2, 2, 2), max_degree=k), timeout=5
            )
    assert runs.count("slow") == 1 and "J after a failure" not in runs  # no basis of J once the elimination failed
