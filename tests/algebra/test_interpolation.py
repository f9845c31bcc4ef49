"""Equations of the closure by interpolation per multidegree, against Macaulay2's kernel and known ideals."""

from collections import Counter
from fractions import Fraction

import pytest

from ag_attention import Architecture
from ag_attention._algebra.interpolation import low_degree_equations, reduced_coordinate_keys
from ag_attention._errors import InvalidArgumentError
from ag_attention._models.parametrization import Parametrization


def test_coordinate_order_is_the_parametrizations():
    P = Parametrization(Architecture.single_layer(3, 2, 2), "reduced")
    assert [c.key[1:] for c in P.coordinates] == reduced_coordinate_keys(3, 2)


def test_smallest_case_is_the_resultant_quartic():
    r = low_degree_equations(Architecture.single_layer(2, 1, 2), max_degree=4)
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
    r = low_degree_equations(Architecture.single_layer(2, 1, 1), max_degree=3)
    assert r.generator_count == {1: 0, 2: 3, 3: 0}


def test_orbits_group_the_generators():
    r = low_degree_equations(Architecture.single_layer(3, 2, 3), max_degree=3)
    assert r.generator_count == {1: 0, 2: 45, 3: 80}  # 125 = Macaulay2's truncated elimination
    for D in (2, 3):
        assert sum(size * per for _, size, per in r.orbits(D)) == r.generator_count[D]


def test_bad_arguments_are_named():
    for kwargs, name in [
        (dict(d=0, e=1), "d"),
        (dict(d=2, e=1, a=0), "a"),
        (dict(d=2, e=1, max_degree=0), "max_degree"),
    ]:
        with pytest.warns(DeprecationWarning), pytest.raises(InvalidArgumentError, match=name):
            low_degree_equations(**kwargs)
    with pytest.raises(InvalidArgumentError, match="max_degree=0"):
        low_degree_equations(Architecture.single_layer(2, 1, 1), max_degree=0)
    for arch, shown in [
        (Architecture((2, 1), (1,), tokens=1), "tokens=1"),
        (Architecture((2, 2, 1), (1, 1)), "2 layers|depth|layer"),
        (Architecture((2, 1), (1,), heads=2), "heads"),
        ((2, 1, 1), r"arch=\(2, 1, 1\)"),
        (None, "arch=None"),
    ]:
        with pytest.raises(InvalidArgumentError, match=shown):
            low_degree_equations(arch, max_degree=2)
    with pytest.raises(InvalidArgumentError, match="pass no d, e or a"):
        low_degree_equations(Architecture.single_layer(2, 1, 1), 1, max_degree=2)
    with pytest.raises(TypeError, match="max_degre"):
        low_degree_equations(Architecture.single_layer(2, 1, 1), max_degre=2)


def test_an_architecture_or_deprecated_raw_sizes():
    """The Architecture form warns nothing; the raw sizes d, d', a of earlier versions give the same result
    with a DeprecationWarning that says the new form."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = low_degree_equations(Architecture.single_layer(2, 1, 1, tokens=3), max_degree=2)
        free = low_degree_equations(Architecture.single_layer(2, 1), max_degree=2)  # AV: A free, a = d
    with pytest.warns(DeprecationWarning, match=r"Architecture\(\(2, 1\), \(1,\), tokens=2\)"):
        old = low_degree_equations(2, 1, 1, max_degree=2)
    with pytest.warns(DeprecationWarning):
        by_name = low_degree_equations(d=2, e=1, a=1, max_degree=2)
    with pytest.warns(DeprecationWarning, match=r"\(2,\)"):
        old_free = low_degree_equations(2, 1, max_degree=2)
    assert (new.d, new.e, new.a) == (old.d, old.e, old.a) == (by_name.d, by_name.e, by_name.a) == (2, 1, 1)
    assert new.generator_count == old.generator_count == {1: 0, 2: 3}
    assert (free.a, free.generator_count) == (old_free.a, old_free.generator_count) == (2, {1: 0, 2: 0})


@pytest.mark.m2
@pytest.mark.parametrize("d, e, a", [(2, 1, 2), (2, 2, 2), (2, 3, 2), (3, 1, 3), (2, 2, 1), (3, 1, 1)])
def test_generator_degrees_agree_with_macaulay2s_kernel(m2_local, d, e, a):
    from ag_attention._algebra.implicitize import implicitize

    m2 = implicitize(
        Architecture((d, e), (a,), tokens=2), coords="reduced", field="ZZ/32003", backend=m2_local, timeout=600
    )
    degrees = Counter(m2.generator_degrees)
    top = max(degrees)
    r = low_degree_equations(Architecture.single_layer(d, e, a), max_degree=top)
    assert {D: n for D, n in r.generator_count.items() if n} == dict(degrees)


def test_an_absurd_degree_is_refused_before_enumerating():
    from ag_attention._errors import InsufficientMemoryError

    with pytest.raises(InsufficientMemoryError, match="max-degree"):
        low_degree_equations(Architecture.single_layer(5, 5, 5), max_degree=6)


def test_equations_show_degrees_and_primes_on_a_terminal(monkeypatch, capsys):
    import sys

    from ag_attention import _progress as progress
    from tests.helpers import Terminal

    monkeypatch.setattr(progress, "DELAY", 0.0)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)  # in the test body: pytest's capture resets it after set-up
    r = low_degree_equations(
        Architecture.single_layer(2, 1, 1), max_degree=3
    )  # three primes: the bar grows by a third prime's degrees
    text = err.getvalue()
    assert "equations of degree <= 3 of (2,1,1)" in text
    assert all(f"degree {D} modulo {p}" in text for D in (1, 2, 3) for p in r.primes)
    assert f"/{3 * len(r.primes)} [" in text
    assert capsys.readouterr().out == ""
    err.truncate(0)
    with progress.quiet():
        low_degree_equations(Architecture.single_layer(2, 1, 1), max_degree=2)
    assert err.getvalue() == ""
