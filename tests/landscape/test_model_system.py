"""A model's slice and systems (``_landscape/model_system.py``): exact pieces checked on their own."""

import os
import random
import subprocess
import sys
import time
from fractions import Fraction

import pytest

from ag_attention import InvalidArgumentError, PolynomialModel
from ag_attention._errors import MSolveTimeoutError
from ag_attention._exact import linalg
from ag_attention._landscape.model_system import (
    Slice,
    bareiss_determinant,
    check_common,
    check_model,
    check_slice_size,
    fiber_system,
    gauge_slice,
    generic_rank,
    model_system,
    random_slice,
    time_left,
)
from ag_attention._models.parametrization import laplace_determinant
from tests.helpers import ROOT


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_bareiss_equals_laplace_on_polynomial_matrices(n):
    ctx = linalg.rational_polynomial_ring(["a", "b", "c"])
    a, b, c = ctx.gens()
    rng = random.Random(n)
    pool = [a, b, c, a * b - 1, c * c + a, ctx.constant(0), ctx.constant(3)]
    M = [[rng.choice(pool) * rng.randint(-3, 3) + rng.choice(pool) for _ in range(n)] for _ in range(n)]
    M[0][0] = ctx.constant(0)  # a zero pivot: a row swap
    assert bareiss_determinant(M, ctx.constant(0), ctx.constant(1)) == laplace_determinant(M, ctx.constant(0))


def test_a_gauge_is_an_exact_affine_subspace():
    M = PolynomialModel.deep_linear([2, 1, 2])
    sl = gauge_slice(M, ["w2_1_1 - 1/3", "w1_1_1 + 2*w1_1_2 - 5"])
    for y in ([0, 0], [1, -2], [Fraction(1, 7), 4]):
        theta = [b + sum(d * v for d, v in zip(row, y)) for b, row in zip(sl.base, sl.directions)]
        assert theta[2] == Fraction(1, 3) and theta[0] + 2 * theta[1] == 5
    with pytest.raises(InvalidArgumentError, match="dependent"):
        gauge_slice(M, ["w2_1_1 - 1", "2*w2_1_1 - 2"])
    with pytest.raises(InvalidArgumentError, match="no common solution"):
        gauge_slice(M, ["w2_1_1 - 1", "w2_1_1 - 2"])
    with pytest.raises(InvalidArgumentError, match="has no parameter"):
        gauge_slice(M, ["3"])


def test_the_rank_and_the_fiber_of_rank_one_matrices(msolve):
    from ag_attention._algebra.msolve import count_solutions

    M = PolynomialModel.deep_linear([3, 1, 3])  # (u, v) -> u v^T: dimension 5, fiber C^* (one scaling)
    p = 32003
    rng = random.Random(0)
    r = generic_rank(M, p, rng)
    assert r == 5
    sl = random_slice(M, r, rng, p)
    F = fiber_system(M, sl, prime=p, rng=rng)
    # a random hyperplane meets the hyperbola {(c u, v / c)} in 2 points
    assert count_solutions(F.variables, F.polynomials, p, timeout=60, label="fiber").count == 2
    Q = [[int(i == j) for j in range(9)] for i in range(9)]
    S = model_system(M, sl, Q, [rng.randrange(p) for _ in range(9)], prime=p, rng=rng)
    assert count_solutions(S.variables, S.polynomials, p, timeout=60, label="ED").count == 2 * 3


def test_the_shared_checks_name_the_argument():
    assert check_common(3, 10, ["a - 1"]) == (3, 10.0, ("a - 1",)) and check_common(0, 1, None)[2] == ()
    for args, text in [((-1, 10, None), "seed=-1"), ((0, 0, None), "timeout=0"), ((0, 10, "a - 1"), "gauge='a - 1'")]:
        with pytest.raises(InvalidArgumentError, match=text):
            check_common(*args)
    with pytest.raises(InvalidArgumentError, match="f: model='x' is not a PolynomialModel"):
        check_model("x", "f")
    with pytest.raises(MSolveTimeoutError):
        time_left(time.monotonic() + 0.5, "a job")


_SLICE_CHILD = """
from ag_attention import InvalidArgumentError, model_critical_points, model_ed_degree, polynomial_model
M = polynomial_model(2, lambda t: [t[0] ** 10000, t[1] ** 10000])
calls = (lambda: model_ed_degree(M, method="parametric", timeout=30), lambda: model_critical_points(M, target=[1, 2]))
for call in calls:
    try:
        call()
        print("not refused")
    except InvalidArgumentError as exc:
        print("refused:", exc)
"""


def test_a_model_too_large_on_its_slice_is_refused_before_it_is_composed():
    """``t1^10000`` on a 2-dimensional slice is ``(a + b y1 + c y2)^10000``: 5e7 terms, which FLINT would build
    for minutes or abort on; refused before (in a child process, which must end normally)."""
    r = subprocess.run(
        [sys.executable, "-c", _SLICE_CHILD],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("refused: ") for line in lines)
    assert "coordinate 0 (degree 10000) restricted to a slice of dimension 2: about 5e+07 terms" in lines[0]
    M = PolynomialModel.deep_linear([2, 1, 2])  # within the limits: nothing said
    check_slice_size(M, random_slice(M, 3, random.Random(0), 0), 0)
    big = PolynomialModel(("a", "b"), ({(300, 0): Fraction(1)}, {(0, 300): Fraction(1)}), "x")  # on a dense slice
    sl = Slice((Fraction(1), Fraction(2)), ((Fraction(3), Fraction(1)), (Fraction(1), Fraction(5))))
    with pytest.raises(
        InvalidArgumentError, match=r"loss on a slice of dimension 2 \(degree 600\): about 180,901 terms"
    ):
        check_slice_size(big, sl, 0)  # each coordinate: C(302, 2) = 45,451 terms, allowed; the loss: C(602, 2)
    sparse = Slice((Fraction(0), Fraction(0)), ((Fraction(1), Fraction(0)), (Fraction(0), Fraction(1))))
    check_slice_size(big, sparse, 0)  # theta = y: each coordinate one term on the slice, the loss at most 4 + 2 + 3
    small = PolynomialModel.deep_linear([1, 1, 1])
    exclusions = [{(200, 0): Fraction(1)}, {(0, 200): Fraction(1)}]  # each C(202, 2) = 20,301 terms on the slice
    with pytest.raises(InvalidArgumentError, match=r"exclude: the product of the 2 polynomials .*MAX_PRODUCT_PAIRS"):
        check_slice_size(small, sl, 0, exclusions)
