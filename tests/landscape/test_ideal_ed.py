"""ED degrees of varieties given by their ideals, against values published with other people's code.

* coreysharris/EDD-M2 (commit 8d9b973, ``EDdegrees.m2``, its ``TEST`` blocks): the ED degree of a projective
  variety with the standard metric, which is that of its affine cone, computed there by three methods (Lagrange,
  Chern-Mather, smooth formula); here by the package's own Lagrange system (``edSystem``) counted by msolve
  modulo two primes.
* GiacGraz/ed-degree-metric-dependence (arXiv 2512.21016): the determinant of a symmetric 3 x 3 matrix has 13
  critical points for a generic metric and 3 for the Bombieri–Weyl (Frobenius) metric.
"""

from __future__ import annotations

import pytest

from ag_attention import IdealEDDegree, InvalidArgumentError, ideal_ed_degree

X4 = ["x0", "x1", "x2", "x3"]
XYZ = ["x", "y", "z"]
Q3 = "(x^2 + y^2 + z^2)"
XYZW = ["x", "y", "z", "w"]
Q4 = "(x^2 + y^2 + z^2 + w^2)"
SYM = ["s11", "s12", "s13", "s22", "s23", "s33"]
DET = "s11*s22*s33 + 2*s12*s23*s13 - s13^2*s22 - s11*s23^2 - s12^2*s33"
FROBENIUS = [[1, 0, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0], [0, 0, 2, 0, 0, 0],
             [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 2, 0], [0, 0, 0, 0, 0, 1]]

#: EDD-M2's TEST blocks (their value, the standard metric)
EDD_M2 = [
    ("twisted cubic", X4, ["x0*x2 - x1^2", "x1*x3 - x2^2", "x0*x3 - x1*x2"], 7),
    ("rational normal quartic", ["y0", "y1", "y2", "y3", "y4"],
     ["y0*y2 - y1^2", "y0*y3 - y1*y2", "y0*y4 - y1*y3", "y1*y3 - y2^2", "y1*y4 - y2*y3", "y2*y4 - y3^2"], 10),
    ("conic q - 2z^2", XYZ, [f"{Q3} - 2*z^2"], 2),
    ("cubic x q + y^3", XYZ, [f"x*{Q3} + y^3"], 5),
    ("quartic x y q + z^4", XYZ, [f"x*y*{Q3} + z^4"], 10),
    ("quintic x y (x + y) q + z^5", XYZ, [f"x*y*(x + y)*{Q3} + z^5"], 17),
    ("quadric q + y^2 in P^3", XYZW, [f"{Q4} + y^2"], 2),
    ("quadric q + x y in P^3", XYZW, [f"{Q4} + x*y"], 4),
    ("cubic surface w q + x y z", XYZW, [f"w*{Q4} + x*y*z"], 15),
    ("Veronese surface: 2 x 2 minors of a symmetric 3 x 3", ["x0", "x1", "x2", "x3", "x4", "x5"],
     ["x0*x3 - x1^2", "x0*x4 - x1*x2", "x1*x4 - x2*x3", "x0*x5 - x2^2", "x1*x5 - x2*x4", "x3*x5 - x4^2"], 13),
]


@pytest.mark.parametrize("name,variables,generators,value", EDD_M2, ids=[c[0] for c in EDD_M2])
def test_edd_m2_values(name, variables, generators, value):
    r = ideal_ed_degree(variables, generators, cache=False)
    assert isinstance(r, IdealEDDegree) and r.value == value
    assert [c for _, _, c in r.counts] == [value, value]  # both primes
    assert "probabilistic" in r.certificate and "GF(32003)" in r.certificate


def test_the_metric_changes_the_count_of_the_symmetric_determinant():
    """arXiv 2512.21016: 13 for a generic metric, 3 for Bombieri–Weyl (here the Frobenius form on the six
    coordinates: weight 2 on the off-diagonal ones); the standard metric on the coordinates is generic enough."""
    assert ideal_ed_degree(SYM, [DET], metric="generic", cache=False).value == 13
    assert ideal_ed_degree(SYM, [DET], metric=FROBENIUS, cache=False).value == 3
    assert ideal_ed_degree(SYM, [DET], cache=False).value == 13


def test_bombieri_weights_on_the_twisted_cubic():
    """DHOST Example: with the weights binom(3, i) the rational normal curve has ED degree d = 3, not 3d - 2."""
    r = ideal_ed_degree(X4, EDD_M2[0][2], metric=[[1, 0, 0, 0], [0, 3, 0, 0], [0, 0, 3, 0], [0, 0, 0, 1]],
                        method="m2", cache=False)
    assert r.value == 3 and r.metric == "given" and r.degree == 3 and r.dimension == 2
    assert "counted by m2" in r.certificate


@pytest.mark.parametrize("variables,generators,metric,match", [
    ("x", ["x"], "euclidean", "variables="),
    (["x", "x"], ["x"], "euclidean", "repeated"),
    (["x", "e"], ["x"], "euclidean", "'e' is not a plain name"),
    (["x", "y"], ["x + z"], "euclidean", "uses 'z'"),
    (["x", "y"], ["x; run \"ls\""], "euclidean", "not a polynomial"),
    (["x", "y"], ["x^2 + y^2 - 1"], "bombieri", "metric='bombieri'"),
    (["x", "y"], ["x^2 + y^2 - 1"], [[1, 2], [3, 1]], r"metric\[0\]\[1\] = 2 != metric\[1\]\[0\] = 3"),
    (["x", "y"], ["x^2 + y^2 - 1"], [[1, 0]], "2 x 2 matrix"),
])
def test_bad_input_names_the_value(variables, generators, metric, match):
    with pytest.raises(InvalidArgumentError, match=match):
        ideal_ed_degree(variables, generators, metric=metric)
