"""Equations of the closure by interpolation per multidegree, against Macaulay2's kernel and known ideals."""

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._algebra.interpolation import low_degree_equations, reduced_coordinate_keys
from ag_attention._errors import InvalidArgumentError
from ag_attention._models.parametrization import Parametrization


def test_coordinate_order_is_the_parametrizations():
    P = Parametrization(Architecture.single_layer(3, 2, 2), "reduced")
    assert [c.key[1:] for c in P.coordinates] == reduced_coordinate_keys(3, 2)


def test_smallest_case_is_the_resultant_quartic():
    r = low_degree_equations(2, 1, 2, max_degree=4)
    assert r.generator_count == {1: 0, 2: 0, 3: 0, 4: 1} and r.verified
    (g,) = r.generators_of_degree(4)
    # the resultant of q_1 = c1 z1^2 + c2 z1 z2 + c3 z2^2 and q_2 (c4, c5, c6), up to sign
    c = {name: i for i, name in enumerate(r.variables)}
    sq = lambda a, b: tuple(sorted((c[a], c[b])))  # noqa: E731
    want = {  # (c1 c6 - c3 c4)^2 - (c1 c5 - c2 c4)(c2 c6 - c3 c5)
        sq("q11z11", "q11z11") + sq("q21z22", "q21z22"): 1,
    }
    key, coeff = next(iter(want.items()))
    assert g[tuple(sorted(key))] / coeff in (1, -1)
    assert len(g) == 7 and set(map(abs, g.values())) == {Fraction(1), Fraction(2)}


def test_d1_a1_is_cut_out_by_quadrics():
    # d' = 1, a = 1: the 2 x 2 minors (the closure is the cone over P^1 x {rank <= 2 symmetric})
    r = low_degree_equations(2, 1, 1, max_degree=3)
    assert r.generator_count == {1: 0, 2: 3, 3: 0}


def test_orbits_group_the_generators():
    r = low_degree_equations(3, 2, 3, max_degree=3)
    assert r.generator_count == {1: 0, 2: 45, 3: 80}  # 125 = Macaulay2's truncated elimination
    for D in (2, 3):
        assert sum(size * per for _, size, per in r.orbits(D)) == r.generator_count[D]


def test_bad_arguments_are_named():
    for kwargs, name in [(dict(d=0, e=1), "d"), (dict(d=2, e=1, a=0), "a"), (dict(d=2, e=1, max_degree=0), "max_degree")]:
        with pytest.raises(InvalidArgumentError, match=name):
            low_degree_equations(**kwargs)


@pytest.mark.m2
@pytest.mark.parametrize("d, e, a", [(2, 1, 2), (2, 2, 2), (2, 3, 2), (3, 1, 3), (2, 2, 1), (3, 1, 1)])
def test_generator_degrees_agree_with_macaulay2s_kernel(m2_local, d, e, a):
    from ag_attention._m2.implicitize import implicitize

    m2 = implicitize(Architecture((d, e), (a,), tokens=2), coords="reduced", field="ZZ/32003", backend=m2_local,
                     timeout=600)
    degrees = Counter(m2.generator_degrees)
    top = max(degrees)
    r = low_degree_equations(d, e, a, max_degree=top)
    assert {D: n for D, n in r.generator_count.items() if n} == dict(degrees)


def test_cli_implicitize_by_interpolation(capsys, msolve):
    import json

    from ag_attention._cli import main

    assert main(["implicitize", "--widths", "2,1", "--ranks", "1", "--method", "interpolate", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["generator_count"] == {"1": 0, "2": 3, "3": 0} and out["verified"] is True
    assert out["complete"].startswith("certified") and out["certified_complete"] is True
    # the length test runs first and certifies (2,1,1); the leading-ideal test is then not needed
    assert out["length_test"]["length"] == out["length_test"]["degree"] == 3 and out["leading_ideal_test"] is None
    assert len(out["coordinate_labels"]) == len(out["variables"]) == 6
    assert out["coordinate_labels"][1].startswith("q11z12: coefficient of z1*z2 in q[1,1]")
    assert main(["implicitize", "--widths", "2,1", "--ranks", "1", "--max-degree", "2"]) == 2  # kernel: no max degree
    assert "--max-degree" in capsys.readouterr().err


@pytest.mark.m2
@pytest.mark.parametrize("d, e, a, k", [(2, 1, 1, 2), (2, 2, 1, 4), (3, 1, 1, 3)])
def test_length_test_certifies_what_the_kernel_confirms(m2_local, msolve, d, e, a, k):
    """Where the length test says complete, Macaulay2's kernel has the same generators and degree."""
    from ag_attention._algebra.completeness import artinian_length
    from ag_attention._m2.implicitize import implicitize

    r = low_degree_equations(d, e, a, max_degree=k)
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

    r = low_degree_equations(3, 1, 1, max_degree=3)
    assert artinian_length(r).length == 45
    cubic = next(b for b in r.blocks[3] if b.generators)
    fewer = [replace(b, generators=b.generators[1:]) if b is cubic else b for b in r.blocks[3]]
    assert isinstance(fewer[0], Block)
    weaker = replace(r, blocks={**r.blocks, 3: fewer})
    cert = artinian_length(weaker)
    assert not cert.certified and (cert.length is None or cert.length > 45)
    assert "not certified" in cert.summary()
    low = artinian_length(low_degree_equations(3, 1, 1, max_degree=2))
    assert not low.certified


def test_length_test_does_not_certify_a_non_cohen_macaulay_closure(msolve):
    """(2,2,2): all generators are of degree <= 4 (the kernel's), yet the length is 26 > 20: not CM, not certified."""
    from ag_attention._algebra.completeness import artinian_length

    r = low_degree_equations(2, 2, 2, max_degree=4)
    cert = artinian_length(r)
    assert (cert.degree, cert.certified) == (20, False) and cert.length > 20
    assert r.complete.startswith("up to degree 4")
    r.length_test = cert
    assert "not certified: length of R/(J + L) = " in r.complete


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


def test_an_absurd_degree_is_refused_before_enumerating():
    from ag_attention._errors import InsufficientMemoryError

    with pytest.raises(InsufficientMemoryError, match="max-degree"):
        low_degree_equations(5, 5, 5, max_degree=6)


def test_the_bases_of_a_degree_are_estimated_from_its_blocks():
    """Below the top degree every basis is held (sum of s_mu^2), at the top one block at a time."""
    from ag_attention._algebra.interpolation import reduced_coordinate_keys
    from ag_attention._algebra.modular import level_memory
    from ag_attention._algebra.multidegrees import monomials_by_multidegree, torus_weight

    keys = reduced_coordinate_keys(3, 1)
    weights = np.array([torus_weight(k, 3, 1) for k in keys])
    groups = monomials_by_multidegree(len(keys), 3, weights)
    below, top = level_memory(groups, False, 3), level_memory(groups, True, 3)
    sizes = [len(m) for m in groups.values()]
    assert below.peak - top.peak == 40 * (sum(s * s for s in sizes) - max(sizes) ** 2) > 0
    assert f"{len(sizes):,} blocks" in below.largest()


@pytest.mark.parametrize("d, e, a, k, top", [(2, 2, 2, 4, 5), (3, 1, 3, 4, 7), (2, 3, 2, 4, 6)])
def test_leading_ideal_test_certifies_non_cohen_macaulay_closures(msolve, d, e, a, k, top):
    """The length test cannot certify these (not CM); the leading ideals of J and of the elimination ideal agree."""
    from ag_attention._algebra.completeness import leading_ideal_test

    r = low_degree_equations(d, e, a, max_degree=k)
    cert = leading_ideal_test(r)
    assert cert.certified and cert.generators_i == cert.generators_j and max(cert.degrees_i) == top
    r.leading_test = cert
    assert r.certified_complete and r.complete.startswith("certified") and r.to_dict()["leading_ideal_test"]["certified"]


def test_leading_ideal_test_refuses_what_is_missing(msolve):
    from dataclasses import replace

    from ag_attention._algebra.completeness import leading_ideal_test, projection_system

    low = leading_ideal_test(low_degree_equations(2, 2, 2, max_degree=3))  # the 10 quartics are missing
    assert not low.certified and low.generators_j < low.generators_i and "not certified" in low.summary()
    r = low_degree_equations(2, 3, 2, max_degree=4)
    quartic = next(b for b in r.blocks[4] if b.generators)
    fewer = [replace(b, generators=b.generators[1:]) if b is quartic else b for b in r.blocks[4]]
    assert not leading_ideal_test(replace(r, blocks={**r.blocks, 4: fewer})).certified
    assert len(projection_system(3, 1, 1, 65521)[1]) == 36 * 3 + 9 * 6  # 2 x 2 minors of s; polarized minors of A


@pytest.mark.parametrize("d, e, a, k", [(2, 2, 1, 4), (3, 1, 1, 3), (2, 3, 1, 4)])
def test_leading_ideal_test_with_rank_bounds(msolve, d, e, a, k):
    """a < d: the polarized minors make Y's ideal prime; the test agrees with the length test where that certifies,
    and certifies (2,3,1), which is not Cohen-Macaulay (length 54 > 42)."""
    from ag_attention._algebra.completeness import artinian_length, leading_ideal_test

    r = low_degree_equations(d, e, a, max_degree=k)
    lead, length = leading_ideal_test(r), artinian_length(r)
    assert lead.certified
    assert length.certified == ((d, e, a) != (2, 3, 1))
    r.leading_test, r.length_test = lead, length
    assert r.cohen_macaulay.startswith("yes" if length.certified else "no, unless")
    assert not leading_ideal_test(low_degree_equations(d, e, a, max_degree=k - 1)).certified


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


def test_an_elimination_is_computed_once_per_process(msolve, monkeypatch):
    """auto tests degree 2, 3, 4 against one elimination ideal: msolve eliminates once; a failure is not retried."""
    from ag_attention._algebra import completeness
    from ag_attention._errors import MSolveTimeoutError

    monkeypatch.setattr(completeness, "_ELIMINATIONS", {})
    runs = []
    real = completeness.run_msolve
    monkeypatch.setattr(completeness, "run_msolve", lambda *a, **k: runs.append(k["label"]) or real(*a, **k))
    for k in (2, 3, 4):
        completeness.leading_ideal_test(low_degree_equations(2, 2, 2, max_degree=k))
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
            completeness.leading_ideal_test(low_degree_equations(2, 2, 2, max_degree=k), timeout=5)
    assert runs.count("slow") == 1 and "J after a failure" not in runs  # no basis of J once the elimination failed


def test_equations_in_a_notebook_and_a_table():
    from ag_attention._results import flatten

    r = low_degree_equations(2, 1, 1, max_degree=3)
    assert repr(r) == "LowDegreeEquations(d=2, d'=1, a=1: generators by degree {1: 0, 2: 3, 3: 0}, primes 3, verified)"
    md = r._repr_markdown_()
    assert md.startswith(str(r) + "\n\n| field | value |\n|---|---|\n")
    assert "| generator_count.2 | 3 |" in md and "| verified | true |" in md
    pytest.importorskip("pandas")
    f = r.to_frame()
    assert len(f) == 1 and list(f.columns) == list(flatten(r.to_dict()))
    assert f.iloc[0]["generator_count.2"] == 3 and len(f.iloc[0]["generators.2"]) == 3


def test_equations_show_degrees_and_primes_on_a_terminal(monkeypatch, capsys):
    import sys

    from ag_attention import _progress as progress
    from tests.helpers import Terminal

    monkeypatch.setattr(progress, "DELAY", 0.0)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)  # in the test body: pytest's capture resets it after set-up
    r = low_degree_equations(2, 1, 1, max_degree=3)  # three primes: the bar grows by a third prime's degrees
    text = err.getvalue()
    assert "equations of degree <= 3 of (2,1,1)" in text
    assert all(f"degree {D} modulo {p}" in text for D in (1, 2, 3) for p in r.primes)
    assert f"/{3 * len(r.primes)} [" in text
    assert capsys.readouterr().out == ""
    err.truncate(0)
    with progress.quiet():
        low_degree_equations(2, 1, 1, max_degree=2)
    assert err.getvalue() == ""
