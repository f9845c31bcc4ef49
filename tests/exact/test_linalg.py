"""The exact-arithmetic seam: _exact/linalg.py is where the package meets FLINT."""

import ast
from fractions import Fraction
from pathlib import Path

import flint
import numpy as np
import pytest

from ag_attention._exact import linalg
from ag_attention._exact.field import DEFAULT_PRIME
from tests.helpers import ROOT, lazy_import

sympy = lazy_import("sympy")

PACKAGE = ROOT / "ag_attention"


#: the modules allowed to import python-flint
SEAM = {"_flint.py", "_exact/linalg.py", "_exact/field.py", "_exact/balls.py"}


def _imports_flint(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "flint" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "flint":
            return True
    return False


def test_only_the_seam_imports_flint():
    found = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if _imports_flint(p)}
    assert found <= SEAM, sorted(found - SEAM)


def _random_low_rank(rng, m, n, r, p):
    return (rng.integers(0, p, (m, r)) @ rng.integers(0, p, (r, n))) % p


@pytest.mark.parametrize("m, n, r", [(5, 7, 3), (8, 4, 4), (6, 6, 1), (3, 9, 0)])
def test_rref_mod_p(m, n, r):
    p = 101
    rng = np.random.default_rng([m, n, r])
    M = _random_low_rank(rng, m, n, r, p)
    rows = linalg.rref_mod_p(M.tolist(), p, n)
    assert len(rows) == linalg.rank(M, p) == r
    pivots = [next(c for c in range(n) if row[c]) for row in rows]
    assert pivots == sorted(pivots)
    for i, (row, pc) in enumerate(zip(rows, pivots)):
        assert row[pc] == 1 and all(other[pc] == 0 for j, other in enumerate(rows) if j != i)
    # same row space: stacking the RREF on M adds nothing
    assert linalg.rank(np.vstack([M, np.array(rows, dtype=np.int64).reshape(-1, n)]), p) == r
    assert linalg.rref_mod_p([], p, n) == []


@pytest.mark.parametrize("m, n, r", [(5, 7, 3), (4, 8, 4), (6, 6, 1), (3, 5, 0)])
def test_nullspace_mod_p(m, n, r):
    p = 2147483647
    rng = np.random.default_rng([m, n, r, 1])
    M = _random_low_rank(rng, m, n, r, p).astype(np.int64)
    K = linalg.nullspace_mod_p(M, p)
    assert len(K) == n - r
    for v in K:
        assert all(sum(int(a) * b for a, b in zip(row, v)) % p == 0 for row in M)
    if K:
        assert linalg.rank(np.array(K, dtype=np.int64), p) == n - r


def test_rref_rational_against_sympy():
    rng = np.random.default_rng(3)
    for _ in range(20):
        m, n = (int(x) for x in rng.integers(1, 5, 2))
        M = [[Fraction(int(rng.integers(-3, 4)), int(rng.integers(1, 4))) for _ in range(n)] for _ in range(m)]
        R, r = linalg.rref_rational(M)
        S, pivots = sympy.Matrix(M).rref()
        assert r == len(pivots)
        assert R == [[Fraction(int(S[i, j].p), int(S[i, j].q)) for j in range(n)] for i in range(m)]


def test_rank_rational_integer_and_fraction_paths_agree():
    rng = np.random.default_rng(4)
    for _ in range(30):
        M = (rng.integers(-2, 3, (4, 2)) @ rng.integers(-2, 3, (2, 5))).tolist()
        as_fractions = [[Fraction(v) for v in row] for row in M]
        assert linalg.rank_rational(M) == linalg.rank_rational(as_fractions) == sympy.Matrix(M).rank()
    assert linalg.rank_rational([]) == 0 and linalg.rank_rational([[]]) == 0


def test_threads_are_scoped():
    before = flint.ctx.threads
    with linalg.threads(2) as n:
        assert n == flint.ctx.threads == 2
    assert flint.ctx.threads == before
    with pytest.raises(RuntimeError):
        with linalg.threads(2):
            raise RuntimeError("inside")
    assert flint.ctx.threads == before


def test_dimension_leaves_flint_threads_alone():
    from ag_attention import Architecture, dimension

    before = flint.ctx.threads
    dimension(Architecture((2, 2), (2,), tokens=2), threads=2)
    assert flint.ctx.threads == before


def test_polynomial_rings_and_rationals():
    Z = linalg.integer_polynomial_ring(["a", "b"])
    a, b = Z.gens()
    assert isinstance(a, linalg.IntegerPolynomial) and int((a * b - 3)(2, 5)) == 7
    Q = linalg.rational_polynomial_ring(["x"], "lex")
    (x,) = Q.gens()
    assert isinstance(x, linalg.RationalPolynomial)
    assert str(x * linalg.rational(Fraction(-2, 3))) == "-2/3*x"
    assert linalg.rational(5) == linalg.rational(Fraction(10, 2)) == linalg.RationalNumber(5)
    F = linalg.modular_polynomial_ring(["y", "z"], 7)
    y, z = F.gens()
    assert isinstance(y, linalg.ModularPolynomial)
    assert str(3 * y * 5 + z) == "y + z"  # 15 = 1 mod 7


def low_rank(rng, m, n, r, p):
    B = rng.integers(0, 1000, size=(m, r))
    C = rng.integers(0, 1000, size=(r, n))
    return (B @ C) % p


@pytest.mark.parametrize("shape", [(9, 6, 4), (50, 80, 33), (300, 200, 150)])
def test_rank_paths_agree(shape, rng):
    m, n, r = shape
    M = low_rank(rng, m, n, r, DEFAULT_PRIME)
    assert linalg.rank(M, DEFAULT_PRIME) == r
    assert linalg.rank_python_flint(M, DEFAULT_PRIME) == r


def test_fastpath_is_used_when_available():
    # python-flint wheels ship libflint; the fast path must be found and pass its self-test
    assert linalg.fastpath_available()


def test_rank_small_prime_sees_dependence():
    # [[1, 2], [3, 6 + 7]] is singular mod 7 but not over Q
    M = np.array([[1, 2], [3, 13]])
    assert linalg.rank(M, 7) == 1
    assert linalg.rank(M, 101) == 2


def test_rank_edge_cases():
    assert linalg.rank(np.zeros((0, 5), dtype=np.int64), 7) == 0
    assert linalg.rank(np.zeros((3, 5), dtype=np.int64), 7) == 0
    with pytest.raises(ValueError):
        linalg.rank(np.zeros(3, dtype=np.int64), 7)
