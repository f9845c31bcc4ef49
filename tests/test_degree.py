"""Degree of one layer: the closed formula (docs/math/degree.md) against msolve counts and known Macaulay2 degrees."""

import time
import uuid
from fractions import Fraction
from math import comb, factorial

import pytest

from ag_attention import Architecture
from ag_attention._algebra.certificate import build_system, certify_degree, m2_script
from ag_attention._algebra.degree import (
    degree_formula,
    determinantal_degree,
    symmetric_determinantal_degree,
)
from ag_attention._algebra.msolve import (
    MSolveExecutionError,
    MSolveNotFoundError,
    MSolveTimeoutError,
    count_solutions,
    count_standard_monomials,
    find_msolve,
    format_input,
    msolve_available,
    parse_leading_ideal,
    parse_parametrization,
)
from ag_attention._errors import InvalidArgumentError
from ag_attention._models.formulas import cor33, symmetric_rank_dimension

from tests.helpers import fake_msolve, processes_matching

# --------------------------------------------------------------- the formula

# degrees measured with Macaulay2 (kernel of the parametrization) by the team
M2_DEGREES = {(2, 1, 2): 4, (3, 1, 2): 108, (3, 2, 1): 756, (3, 2, 3): 1287}


@pytest.mark.parametrize("size, degree", sorted(M2_DEGREES.items()))
def test_formula_matches_macaulay2_degrees(size, degree):
    f = degree_formula(*size)
    assert f.degree == degree and f.fiber == 1 and f.applies


def test_swap_halves_the_degree():
    # d' = 1, a = 1: the map is 2:1 (the team's counts were twice the degree)
    for d, deg in ((2, 3), (3, 45), (4, 840)):
        f = degree_formula(d, 1, 1)
        assert (f.degree, f.fiber, f.count) == (deg, 2, 2 * deg)
    assert degree_formula(1, 1, 1).fiber == 1  # d = 1: a line
    assert degree_formula(3, 2, 1).fiber == 1 and degree_formula(3, 1, 2).fiber == 1


def test_harris_determinantal_degree():
    # Harris, Ex. 19.10: prod_{i=0}^{n-k-1} (m+i)! i! / ((k+i)! (m-k+i)!) for m x n, rank <= k
    for d in range(1, 8):
        for a in range(1, d + 1):
            v = Fraction(1)
            for i in range(d - a):
                v *= Fraction(factorial(d + i) * factorial(i), factorial(a + i) * factorial(d - a + i))
            assert determinantal_degree(d, a) == v
    assert [determinantal_degree(3, 1), determinantal_degree(4, 1)] == [6, 20]  # Segre P2xP2, P3xP3
    assert determinantal_degree(5, 9) == 1


def test_symmetric_determinantal_degree():
    assert symmetric_determinantal_degree(3, 1) == 4  # Veronese surface
    assert symmetric_determinantal_degree(4, 1) == 8  # v_2(P^3)
    assert symmetric_determinantal_degree(4, 3) == 4  # det
    assert all(symmetric_determinantal_degree(d, 1) == 2 ** (d - 1) for d in range(1, 8))  # v_2(P^{d-1})


def test_formula_dimension_is_cor33_and_the_one_token_bound():
    for d in range(1, 6):
        for e in range(1, 4):
            for a in range(1, d + 2):
                f = degree_formula(d, e, a)
                assert f.dimension == cor33(d, e, a)
                assert f.degree * f.fiber == comb(f.dimension - 1, d * e - 1) * determinantal_degree(d, a)
                g = degree_formula(d, e, a, tokens=1)
                assert g.dimension == symmetric_rank_dimension(d, min(2 * a, d)) + d * e - 1


def test_formula_accepts_architectures_and_unpacks():
    f = degree_formula(Architecture((3, 2), (1,), tokens=3))
    assert f.degree == 756
    deg, why = degree_formula(Architecture.single_layer(2, 1))  # AV: A free
    assert deg == 4 and "binom" in why
    t1 = degree_formula(3, 1, 1, tokens=1)
    assert (t1.degree, t1.fiber) == (15, 3)  # Chow variety of triangles in P^2
    assert degree_formula(2, 1, 2, tokens=1).degree == 1  # every binary cubic is quadric x line
    with pytest.raises(InvalidArgumentError, match="d_out"):
        degree_formula(2, 0, 1)
    with pytest.raises(InvalidArgumentError, match="one plain lightning layer"):
        degree_formula(Architecture((2, 2, 2), (1, 1)))


# ----------------------------------------------------------- msolve (unit)


def test_standard_monomials_and_parsers():
    assert count_standard_monomials([(1, 0, 0), (0, 1, 1), (0, 2, 0), (0, 0, 3)], 3) == 4
    assert count_standard_monomials([(0, 0)], 2) == 0
    assert count_standard_monomials([(3, 0), (1, 1)], 2) is None
    text = "#comment\n[x_1^1,\ny_2^1*z^1,\ny_2^2,\nz^3]:\n"
    assert parse_leading_ideal(text, ["x_1", "y_2", "z"]) == [(1, 0, 0), (0, 1, 1), (0, 2, 0), (0, 0, 3)]
    head = parse_parametrization("[0, [65521, \n3, \n4, \n['x', 'y', 'A'],\n[1,1,1],\n[1,\n[[2,\n[65520, 0, 1]],\n")
    assert head["quotient_dimension"] == 4 and head["eliminating_degree"] == 2 and head["variables"] == ["x", "y", "A"]
    assert parse_parametrization("[-1]:") == {"dimension": -1}
    assert parse_parametrization("[1, 2, -1, []]:") == {"dimension": 1}


def test_input_format_is_checked():
    assert format_input(["x", "y"], 65521, ["x^2 - 1", "y"]) == "x,y\n65521\nx^2-1,\ny\n"
    with pytest.raises(InvalidArgumentError, match="prime"):
        format_input(["x"], 2**31 + 11, ["x"])
    with pytest.raises(InvalidArgumentError, match="variables"):
        format_input(["x(1)"], 65521, ["x"])
    with pytest.raises(InvalidArgumentError, match="prime"):
        build_system(2, 1, 2, prime=65520)


def test_missing_msolve_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", str(tmp_path / "nothing"))
    with pytest.raises(MSolveNotFoundError, match="AG_ATTENTION_MSOLVE"):
        find_msolve()
    assert msolve_available()[0] is False


def test_timeout_kills_the_whole_process_group(tmp_path, monkeypatch):
    tag = str(3000 + uuid.uuid4().int % 5000)
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, f"sleep {tag}1 & sleep {tag}2 & exec sleep {tag}3"))
    t0 = time.perf_counter()
    with pytest.raises(MSolveTimeoutError, match="1 s"):
        count_solutions(["x"], ["x-1"], 65521, timeout=1, label="fake job")
    assert time.perf_counter() - t0 < 20
    assert processes_matching(f"sleep {tag}") == []


def test_failing_msolve_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, "echo 'bad input' >&2; exit 3"))
    with pytest.raises(MSolveExecutionError, match="status 3") as err:
        count_solutions(["x"], ["x-1"], 65521, timeout=10)
    assert "bad input" in str(err.value)


def test_msolve_out_of_memory_names_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", fake_msolve(
        tmp_path, "echo 'Allocating memory for hash-column lookup table failed,' >&2; kill -SEGV $$"))
    with pytest.raises(MSolveExecutionError, match="ran out of memory under its memory limit") as err:
        count_solutions(["x"], ["x-1"], 65521, timeout=10, backend="local")
    assert "AG_ATTENTION_M2_MEMORY" in str(err.value) and "local backend" in str(err.value)


def test_real_msolve_under_a_small_memory_limit(msolve, monkeypatch):
    """The backend's address-space limit applies to msolve: a system that needs more fails with the limit named."""
    import random

    monkeypatch.setenv("AG_ATTENTION_M2_MEMORY", "300m")
    rng = random.Random(0)
    names = [f"x{i}" for i in range(12)]
    polys = ["+".join(f"{rng.randrange(1, 65521)}*{a}*{b}" for i, a in enumerate(names) for b in names[i:]) + "+1"
             for _ in range(12)]
    with pytest.raises(MSolveExecutionError, match="memory"):
        count_solutions(names, polys, 65521, timeout=120, backend="local", linear_algebra=2)


# ------------------------------------------------------ msolve (the binary)




@pytest.mark.parametrize("size, tokens", [
    ((2, 1, 2), 2), ((2, 2, 2), 2), ((3, 1, 2), 2), ((3, 1, 3), 2), ((2, 3, 2), 2),
    ((2, 1, 1), 2), ((3, 1, 1), 2),             # d' = 1, a = 1: count = 2 * degree
    ((2, 1, 1), 1), ((3, 1, 1), 1), ((3, 1, 2), 1), ((2, 2, 1), 1),  # one token (count = 3 * degree for s = 2)
])
def test_count_equals_degree_times_fiber(msolve, size, tokens):
    c = certify_degree(*size, tokens=tokens, timeout=60)
    assert c.count == c.formula.degree * c.formula.fiber, str(c)
    assert c.agrees


def test_second_prime_seed_and_normalization(msolve):
    for kwargs in ({"prime": 65521, "seed": 1}, {"normalization": "affine", "seed": 2},
                   {"method": "parametrization", "prime": 65521, "seed": 3}, {"linear_algebra": 2, "prime": 32003, "seed": 4}):
        c = certify_degree(3, 1, 1, timeout=60, **kwargs)
        assert c.count == 90, (kwargs, str(c))
    c = certify_degree(2, 1, 1, method="parametrization", prime=1073741789, timeout=60)
    assert c.solutions.distinct == c.count == 6  # the 6 solutions are distinct (reduced)
    with pytest.raises(InvalidArgumentError, match="2\\^30"):
        certify_degree(2, 1, 1, method="parametrization", timeout=60)  # 2^31 - 1: FGLM refuses it


def test_full_coordinates_count_the_same(msolve):
    c = certify_degree(2, 1, 1, tokens=3, coords="full", timeout=60)
    assert c.count == 6 and c.system.ambient > build_system(2, 1, 1).ambient


def test_repeated_factors_are_written_as_powers():
    # msolve 0.10.1 reads x*x as x; every product goes to it with one power per variable
    assert format_input(["x", "y"], 65521, ["x*y*x - 3*y*y + x", "2*x*3*x"]) == "x,y\n65521\n1*x^2*y-3*y^2+x,\n6*x^2\n"


def test_repeated_factors_count_right(msolve):
    # (x^3, y^2): 6 standard monomials; read as (x, y^2) it would be 2
    assert count_solutions(["x", "y"], ["x*x*x", "y*y"], 65521, timeout=30).count == 6
    assert count_solutions(["x", "y"], ["x*x*x-x*y*y", "y*y*y-1"], 65521, timeout=30).count == 9


def test_positive_dimensional_and_empty_systems(msolve):
    assert count_solutions(["x", "y"], ["x*y"], 65521, timeout=30).count is None
    assert count_solutions(["x", "y"], ["x-1", "x-2"], 65521, timeout=30).count == 0
    r = count_solutions(["x", "y"], ["x^2-1", "x*y-1"], 65521, method="parametrization", timeout=30)
    assert (r.count, r.distinct, r.zero_dimensional) == (2, 2, True)


def test_real_msolve_timeout(msolve, tmp_path, monkeypatch):
    # the real binary under a unique argv[0], so msolve jobs of other processes do not count
    tag = f"msolve-{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, f'exec -a {tag} "{msolve}" "$@"'))
    sy = build_system(3, 3, 1)  # about a minute
    t0 = time.perf_counter()
    with pytest.raises(MSolveTimeoutError):
        count_solutions(sy.variables, sy.polynomials, sy.prime, timeout=1)
    assert time.perf_counter() - t0 < 20
    assert processes_matching(tag) == []


@pytest.mark.m2
def test_macaulay2_counts_the_same_system(m2_local):
    sy = build_system(2, 1, 1, prime=32003)
    for strategy in ("default", "F4"):
        out = m2_local.run(m2_script(sy, strategy), timeout=120, with_package=False)
        assert out.stdout.strip().splitlines()[-1] == "6"
