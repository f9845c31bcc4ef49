"""ED degrees of varieties given by their ideals, against values published with other people's code.

* coreysharris/EDD-M2 (commit 8d9b973, ``EDdegrees.m2``, its ``TEST`` blocks): the ED degree of a projective
  variety with the standard metric, which is that of its affine cone, computed there by three methods (Lagrange,
  Chern-Mather, smooth formula); here by the package's own Lagrange system (``edSystem``) counted by msolve
  modulo two primes.
* GiacGraz/ed-degree-metric-dependence (arXiv 2512.21016): the determinant of a symmetric 3 x 3 matrix has 13
  critical points for a generic metric and 3 for the Bombieri–Weyl (Frobenius) metric.
"""

from __future__ import annotations

import math

import pytest

from ag_attention import IdealEDDegree, InvalidArgumentError, ideal_ed_degree
from ag_attention._landscape import primes as drawn
from ag_attention._landscape.ideal_ed import parse_polynomial
from tests.helpers import old_counting_primes, small_primes

X4 = ["x0", "x1", "x2", "x3"]
XYZ = ["x", "y", "z"]
Q3 = "(x^2 + y^2 + z^2)"
XYZW = ["x", "y", "z", "w"]
Q4 = "(x^2 + y^2 + z^2 + w^2)"
SYM = ["s11", "s12", "s13", "s22", "s23", "s33"]
DET = "s11*s22*s33 + 2*s12*s23*s13 - s13^2*s22 - s11*s23^2 - s12^2*s33"
FROBENIUS = [
    [1, 0, 0, 0, 0, 0],
    [0, 2, 0, 0, 0, 0],
    [0, 0, 2, 0, 0, 0],
    [0, 0, 0, 1, 0, 0],
    [0, 0, 0, 0, 2, 0],
    [0, 0, 0, 0, 0, 1],
]

#: EDD-M2's TEST blocks (their value, the standard metric)
EDD_M2 = [
    ("twisted cubic", X4, ["x0*x2 - x1^2", "x1*x3 - x2^2", "x0*x3 - x1*x2"], 7),
    (
        "rational normal quartic",
        ["y0", "y1", "y2", "y3", "y4"],
        ["y0*y2 - y1^2", "y0*y3 - y1*y2", "y0*y4 - y1*y3", "y1*y3 - y2^2", "y1*y4 - y2*y3", "y2*y4 - y3^2"],
        10,
    ),
    ("conic q - 2z^2", XYZ, [f"{Q3} - 2*z^2"], 2),
    ("cubic x q + y^3", XYZ, [f"x*{Q3} + y^3"], 5),
    ("quartic x y q + z^4", XYZ, [f"x*y*{Q3} + z^4"], 10),
    ("quintic x y (x + y) q + z^5", XYZ, [f"x*y*(x + y)*{Q3} + z^5"], 17),
    ("quadric q + y^2 in P^3", XYZW, [f"{Q4} + y^2"], 2),
    ("quadric q + x y in P^3", XYZW, [f"{Q4} + x*y"], 4),
    ("cubic surface w q + x y z", XYZW, [f"w*{Q4} + x*y*z"], 15),
    (
        "Veronese surface: 2 x 2 minors of a symmetric 3 x 3",
        ["x0", "x1", "x2", "x3", "x4", "x5"],
        ["x0*x3 - x1^2", "x0*x4 - x1*x2", "x1*x4 - x2*x3", "x0*x5 - x2^2", "x1*x5 - x2*x4", "x3*x5 - x4^2"],
        13,
    ),
]


@pytest.mark.parametrize("name,variables,generators,value", EDD_M2, ids=[c[0] for c in EDD_M2])
def test_edd_m2_values(name, variables, generators, value):
    r = ideal_ed_degree(variables, generators, cache=False)
    assert isinstance(r, IdealEDDegree) and r.value == value
    assert [c for _, _, c in r.counts] == [value, value]  # both primes
    assert "probabilistic" in r.certificate and all(f"GF({p})" in r.certificate for p, _, _ in r.counts)


def test_the_metric_changes_the_count_of_the_symmetric_determinant():
    """arXiv 2512.21016: 13 for a generic metric, 3 for Bombieri–Weyl (here the Frobenius form on the six
    coordinates: weight 2 on the off-diagonal ones); the standard metric on the coordinates is generic enough."""
    assert ideal_ed_degree(SYM, [DET], metric="generic", cache=False).value == 13
    assert ideal_ed_degree(SYM, [DET], metric=FROBENIUS, cache=False).value == 3
    assert ideal_ed_degree(SYM, [DET], cache=False).value == 13


def test_bombieri_weights_on_the_twisted_cubic():
    """DHOST Example: with the weights binom(3, i) the rational normal curve has ED degree d = 3, not 3d - 2."""
    r = ideal_ed_degree(
        X4, EDD_M2[0][2], metric=[[1, 0, 0, 0], [0, 3, 0, 0], [0, 0, 3, 0], [0, 0, 0, 1]], method="m2", cache=False
    )
    assert r.value == 3 and r.metric == "given" and r.degree == 3 and r.dimension == 2
    assert "counted by m2" in r.certificate


@pytest.mark.parametrize(
    "variables,generators,metric,match",
    [
        ("x", ["x"], "euclidean", "variables="),
        (["x", "x"], ["x"], "euclidean", "repeated"),
        (["x", "2y"], ["x"], "euclidean", "'2y' is not a name"),
        (["x", "y"], ["x + z"], "euclidean", "'z' at position 4 is not among the variables"),
        # Macaulay2 comments, separators and Python's unary minus after an operator: refused by the grammar
        (["x", "y"], ["x--y"], "euclidean", r"generators\[0\] = 'x--y' .* position 2"),
        (["x", "y"], ["x -* y *- ^2"], "euclidean", r"generators\[0\] .* position 3"),
        (["x", "y"], ["x^2 - 1", "y; x"], "euclidean", r"generators\[1\] .* unexpected ';'"),
        (["x", "y"], ["x\ny"], "euclidean", r"generators\[0\] .* unexpected '\\n'"),
        (["x", "y"], ["x*-y"], "euclidean", "position 2"),
        (["x", "y"], ["x/0"], "euclidean", "division by zero"),
        (["x", "y"], ["x/y"], "euclidean", "division by a non-constant"),
        (["x", "y"], ["x^-1"], "euclidean", "nonnegative integer exponent"),
        (["x", "y"], [""], "euclidean", "found the end"),
        (["x", "y"], ["1"], "euclidean", r"generators\[0\] = '1' is a nonzero constant"),
        (["x", "y"], ["x^2 + y^2 - 1"], [[1, 0], [0, "1/0"]], "metric: not a matrix of rationals"),
        (["x", "y"], ['x; run "ls"'], "euclidean", "not a polynomial"),
        (["x", "y"], ["x^2 + y^2 - 1"], "bombieri", "metric='bombieri'"),
        (["x", "y"], ["x^2 + y^2 - 1"], [[1, 2], [3, 1]], r"metric\[0\]\[1\] = 2 != metric\[1\]\[0\] = 3"),
        (["x", "y"], ["x^2 + y^2 - 1"], [[1, 0]], "2 x 2 matrix"),
    ],
)
def test_bad_input_names_the_value(variables, generators, metric, match):
    with pytest.raises(InvalidArgumentError, match=match):
        ideal_ed_degree(variables, generators, metric=metric)


def test_a_coefficient_divisible_by_both_old_primes_counts():
    """Issue 38: 1024384027 = 32003 * 32009, the two primes that were fixed, so the cubic term vanished in both
    counts and the answer was 2 (a circle's); the primes are now drawn from the seed and checked."""
    r = ideal_ed_degree(["x", "y"], ["x^2 + y^2 - 1 + 1024384027*x^3"], cache=False)
    assert r.value == 7 and r.degree == 3 and r.generators == ("1024384027*x^3 + x^2 + y^2 - 1",)


XY = ["x", "y"]
#: a small range of primes (38 of them) for the tests that must know which primes a draw meets
SMALL_RANGE = (2**14, 2**14 + 400)


def test_a_prime_dividing_a_coefficient_is_skipped_and_said(monkeypatch):
    """In a small range, a coefficient divisible by all its primes but three: the draw skips (and says) each of
    them it meets, and counts modulo the three left; the same for a metric entry."""
    monkeypatch.setattr(drawn, "PRIME_RANGE", SMALL_RANGE)
    primes = small_primes(*SMALL_RANGE)
    assert len(primes) == 38
    left, divisors = primes[:3], primes[3:]
    C = math.prod(divisors)
    r = ideal_ed_degree(XY, [f"x^2 + y^2 - 1 + {C}*x^3"], seed=0, cache=False)
    assert r.value == 7 and {p for p, _, _ in r.counts} <= set(left)
    skipped = [n for n in r.notes if n.startswith("prime ")]
    assert skipped and all(n.split()[1] in map(str, divisors) and f"divides the coefficient {C}" in n for n in skipped)
    g = ideal_ed_degree(XY, ["x^2 + y^2 - 1"], metric=[[C, 0], [0, 1]], seed=0, cache=False)
    assert g.value == 4 and {p for p, _, _ in g.counts} <= set(left)
    assert any("divides metric[0][0]" in n for n in g.notes)


@pytest.mark.parametrize("seed", range(10))
def test_an_ellipse_crafted_against_the_old_primes_of_its_seed_counts(seed):
    """Issue 46: the old primes were a function of the seed alone, so 1 + k p q made the ellipse a circle modulo
    both (ED degree 2, every count agreeing); the primes are now keyed by the input too, from a range of 2^30."""
    p, q = old_counting_primes(seed)
    assert seed > 1 or (p, q) == ((24151, 32191), (19183, 28109))[seed]
    c = 1 + (1 + seed % 3) * p * q
    assert c % p == c % q == 1  # modulo p and q: x^2 + y^2 - 1
    ellipse = ideal_ed_degree(XY, [f"x^2 + {c}*y^2 - 1"], seed=seed, cache=False)
    given = ideal_ed_degree(XY, ["x^2 + y^2 - 1"], metric=[[1, 0], [0, c]], seed=seed, cache=False)
    assert ellipse.value == given.value == 4
    assert {p, q}.isdisjoint(r[0] for r in ellipse.counts + given.counts)
    assert all(2**30 <= r[0] < 2**31 for r in ellipse.counts + given.counts)


def test_the_crafted_ellipse_of_the_issue_with_a_fresh_seed():
    """The default seed is fresh entropy, recorded in the result: passing it again gives the same primes."""
    r = ideal_ed_degree(XY, ["x^2 + 777444842*y^2 - 1"], cache=False)
    assert r.value == 4 and r.seed is not None and r.seed == r.counts[0][1]
    again = ideal_ed_degree(XY, ["x^2 + 777444842*y^2 - 1"], seed=r.seed, cache=False)
    assert again.counts == r.counts
    given = ideal_ed_degree(XY, ["x^2 + y^2 - 1"], metric=[[1, 0], [0, 777444842]], cache=False)
    assert given.value == 4 and given.seed != r.seed
    p, q = (c[0] for c in r.counts)
    assert f"probabilistic: primes {p}, {q} (seed {r.seed};" in r.certificate
    assert "error probability <= 1.3e-09 if at most 1,000" in r.certificate and r.error_bound < 1.3e-9
    assert r.to_dict()["seed"] == r.seed and r.to_dict()["error_bound"] == r.error_bound


def _crafted_against_its_draw(draw_for, q):
    """The first ``c = 1 + k q`` whose own draw counts modulo ``q`` first or second (then a third decides)."""
    for k in range(1, 2000):
        c = 1 + k * q
        primes = draw_for(c)
        if q in primes[:2]:
            return c, primes
    raise AssertionError("no k found")


def test_a_third_prime_decides_where_two_counts_differ(monkeypatch):
    """In a small range an ellipse can be made a circle modulo one of its two primes: the counts differ (2 and
    4), and the third prime's count decides (4), said in the notes."""
    monkeypatch.setattr(drawn, "PRIME_RANGE", SMALL_RANGE)
    q = small_primes(*SMALL_RANGE)[7]
    c, primes = _crafted_against_its_draw(
        lambda c: (
            drawn.draw_primes([parse_polynomial(f"x^2 + {c}*y^2 - 1", XY)], "euclidean", 3, [], "generators").primes
        ),
        q,
    )
    r = ideal_ed_degree(XY, [f"x^2 + {c}*y^2 - 1"], seed=3, cache=False)
    assert r.value == 4 and [p for p, _, _ in r.counts] == list(primes)
    assert {p: n for p, _, n in r.counts}[q] == 2  # the circle's
    assert any("a third decides" in n and f"modulo {q} a prime or a random choice was unlucky" in n for n in r.notes)
    assert f"primes {', '.join(str(p) for p in primes if p != q)} (seed 3;" in r.certificate


def test_names_of_the_host_language_are_plain_variables():
    """Variables are renamed internally: Macaulay2's own names (``e``, ``run``, ``kk``, ``edSystem``) are fine."""
    r = ideal_ed_degree(["e", "run", "kk", "edSystem"], ["e^2 + run^2 + kk^2 + edSystem^2 - 1"], cache=False)
    assert r.value == 2 and r.variables == ("e", "run", "kk", "edSystem")


def test_zero_generators_and_exact_rationals():
    r = ideal_ed_degree(["x", "y"], ["0", "x^2/4 + 0.25*y**2 - (1)"], cache=False)
    assert r.value == 2 and r.generators == ("1/4*x^2 + 1/4*y^2 - 1",)
    assert r.notes[0] == "generators[0] = '0' is zero: dropped"
    assert ideal_ed_degree(["x", "y"], ["0"], cache=False).value == 1  # V(0) = C^2: the data itself
