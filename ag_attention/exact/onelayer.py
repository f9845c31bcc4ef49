"""Exact pointwise geometry of one lightning layer: fibers, differentials, certificates.

Everything here works from the parametrization alone (no implicit equations)
and with exact arithmetic, so it applies to every size.  Points are in
reduced coordinates (docs/math/model.md (model-reduced-coordinates)): the ``d x d'`` array of quadrics
``q_{k,m}(z) = (A z)_k (V z)_m``.

* :func:`fiber` recovers *all* complex preimages ``(A', V')`` (up to the
  rescaling ``(cA', V'/c)``) of a point from its quadrics alone, by unique
  factorization: ``m'_{m0}`` divides ``g = gcd_k q_{k,m0}``, so its
  candidates are the linear factors of ``g`` (one or two); each candidate
  determines the rest by exact division and is kept if consistent.
* :func:`certify` decides whether the image point of a weight pair is a
  singular point of the neuromanifold, with a certificate:

  - *singular, tangent excess*: the differentials at all preimages map the
    Zariski tangent spaces of the domain into the Zariski tangent space of
    the closure; if their images span more than ``dim M`` (a lower bound by a
    GF(p) rank), the point is singular.  This covers two branches (pair and
    swap) and points where a rank-bounded domain is itself singular.
  - *singular, critical*: a single preimage where the differential drops
    rank (an exact rank over QQ).  If the point were smooth, hence normal,
    the finite birational map would be a local isomorphism there (Zariski's
    main theorem) and its differential injective modulo rescaling.
  - *smooth*: a single preimage, the domain smooth there and the
    differential of rank ``dim M``: the map is a proper injective immersion
    near the point, so the image germ is smooth.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from ..errors import ComputationError, InvalidArgumentError
from ..models.coordinates import quadratic_monomials, reduced_coordinates, reduced_count, reduced_keys, reduced_terms
from . import linalg
from .field import DEFAULT_PRIME, check_prime

__all__ = [
    "reduced_point",
    "differential",
    "exact_rank",
    "rank_mod_p",
    "Fiber",
    "fiber",
    "PointVerdict",
    "certify",
    "rank_factorization",
]


# ------------------------------------------------------------------ points
def _matrix(M: Any, name: str = "M") -> list[list[Any]]:
    """A non-empty rectangular matrix of exact rationals (int, Fraction, or float with an exact value)."""
    try:
        arr = np.asarray(M, dtype=object)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 2 or 0 in arr.shape:
        raise InvalidArgumentError(f"{name}={M!r}: must be a non-empty rectangular matrix (list of equal-length rows)")
    for v in arr.flat:
        if isinstance(v, bool) or not isinstance(v, (int, Fraction, np.integer, float, linalg.RationalNumber, linalg.IntegerNumber)):
            raise InvalidArgumentError(f"{name}: entry {v!r} is not a rational number (int or Fraction)")
        if isinstance(v, float) and not math.isfinite(v):
            raise InvalidArgumentError(f"{name}: entry {v!r} is not a finite number")
    return [list(row) for row in arr]


def _check_shapes(A: list[list[Any]], V: list[list[Any]]) -> None:
    d = len(A)
    if len(A[0]) != d:
        raise InvalidArgumentError(f"A: must be square (d x d), got {d} x {len(A[0])}")
    if len(V[0]) != d:
        raise InvalidArgumentError(f"V: must have d = {d} columns (d' x d), got {len(V)} x {len(V[0])}")


def reduced_point(A: Any, V: Any) -> list[Any]:
    """Reduced coordinates of ``phi_{A,V}`` (exact; ints or Fractions), in Parametrization order."""
    A, V = _matrix(A, "A"), _matrix(V, "V")
    _check_shapes(A, V)
    return reduced_coordinates(A, V)


def differential(A: Any, V: Any) -> np.ndarray:
    """Jacobian of the reduced coordinates in ``(A, V)`` at a point (object array, exact).

    Columns: entries of ``A`` then of ``V``, row-major (the AV variable order).
    """
    A, V = _matrix(A), _matrix(V)
    d, e = len(A), len(V)
    J = np.zeros((reduced_count(d, e), d * d + e * d), dtype=object)
    for row, key in enumerate(reduced_keys(d, e)):
        for (k, l), (m, l2) in reduced_terms(key):  # d(A[k][l] V[m][l2]) = V[m][l2] dA[k][l] + A[k][l] dV[m][l2]
            J[row, k * d + l] += V[m][l2]
            J[row, d * d + m * d + l2] += A[k][l]
    return J


def integral(M: Any) -> np.ndarray:
    """A rational matrix times the lcm of its denominators: an integer (object) array, same rank."""
    M = np.asarray(M, dtype=object)
    dens = {Fraction(v).denominator for v in M.flat if not isinstance(v, (int, np.integer))}
    den = math.lcm(*dens) if dens else 1
    out: np.ndarray
    if den == 1:
        out = np.vectorize(lambda v: int(Fraction(v)), otypes=[object])(M) if M.size else M
    else:
        out = np.vectorize(lambda v: int(Fraction(v) * den), otypes=[object])(M)
    return out


def exact_rank(M: Any) -> int:
    """Rank over QQ (exact: the integer matrix :func:`integral` gives, by :func:`linalg.rank_rational`)."""
    M = integral(M)
    if M.size == 0:
        return 0
    return linalg.rank_rational(M.tolist())


def rank_mod_p(M: Any, p: int = DEFAULT_PRIME) -> int:
    """Rank over GF(p) of a rational matrix (a lower bound for the rank over QQ)."""
    M = integral(M)
    if M.size == 0:
        return 0
    small = M.astype(np.int64) if all(abs(int(v)) < 2**62 for v in M.flat) else None
    if small is not None:
        return linalg.rank(np.remainder(small, p), p)
    return linalg.rank(np.vectorize(lambda v: int(v) % p, otypes=[np.int64])(M), p)


def rank_factorization(A: Any) -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    """``(Q, K)`` with ``A = Q^T K``, ``Q, K`` of size ``rank A x d`` (exact over QQ)."""
    M = [[Fraction(v) for v in row] for row in _matrix(A)]
    R, r = linalg.rref_rational(M)
    d, n = len(M), len(M[0])
    pivots = []
    for i in range(r):
        for j in range(n):
            if R[i][j] != 0:
                pivots.append(j)
                break
    # K = the r independent rows of the RREF; A = C K with C = columns of A at the pivots
    K = R[:r]
    C = [[M[k][pj] for pj in pivots] for k in range(d)]
    Q = [[C[k][c] for k in range(d)] for c in range(r)]
    return Q, K


def differential_on_rank_variety(A: Any, V: Any) -> np.ndarray:
    """Image of the differential on the tangent space of ``{rank <= rank A} x Mat``.

    At a point with ``rank A = r`` the determinantal variety of rank ``<= r``
    is smooth with tangent space ``{X K + C Y}`` where the rows of ``K`` span
    the row space and the columns of ``C`` the column space of ``A`` (``A = C K``):
    the columns returned are the AV Jacobian applied to the spanning
    directions ``e_l K[c]`` and ``C[:, c] e_l^T``, then the V directions.
    """
    A = integral(_matrix(A))
    V = integral(_matrix(V))
    J = differential(A, V)
    d = A.shape[0]
    _, rref_rows = rank_factorization(A)
    scaled = integral(np.array(rref_rows, dtype=object).reshape(len(rref_rows), d)) if rref_rows else np.zeros((0, d), dtype=object)
    # integer rows of K each scaled separately (same row space)
    K = np.array([integral(row) for row in np.array(scaled, dtype=object)], dtype=object).reshape(-1, d)
    pivots = [next(j for j in range(d) if row[j] != 0) for row in K]
    C = A[:, pivots]  # columns of A at the pivots span its column space
    JA = J[:, : d * d]
    cols = []
    for c in range(len(K)):
        for l in range(d):
            dA = np.zeros((d, d), dtype=object)
            dA[l, :] = K[c]
            cols.append(JA.dot(dA.ravel()))
            dA = np.zeros((d, d), dtype=object)
            dA[:, l] = C[:, c]
            cols.append(JA.dot(dA.ravel()))
    return np.column_stack(cols + [J[:, d * d + i] for i in range(J.shape[1] - d * d)])


# ------------------------------------------------------------------ fibers
def _ring(d: int) -> linalg.RationalPolynomialRing:
    return linalg.rational_polynomial_ring([f"z{i + 1}" for i in range(d)], "lex")


def quadrics(x: Sequence[Any], d: int, d_out: int) -> list[list[linalg.RationalPolynomial]]:
    """The array ``q_{k,m}`` of a point (rational coordinates) as polynomials in ``z`` over QQ."""
    ctx = _ring(d)
    z = ctx.gens()
    n = reduced_count(d, d_out)
    if len(x) != n:
        raise InvalidArgumentError(f"x: a point of d={d}, d'={d_out} has {n} reduced coordinates, got {len(x)}")
    out = [[ctx.constant(0) for _ in range(d_out)] for _ in range(d)]
    for (k, m, i, j), v in zip(reduced_keys(d, d_out), x):
        c = linalg.rational(Fraction(v))
        if c:
            out[k][m] += c * z[i] * z[j]
    return out


def _linear_coefficients(f: linalg.RationalPolynomial, d: int) -> list[Fraction]:
    coeffs = [Fraction(0)] * d
    for exps, c in f.to_dict().items():
        if sum(exps) != 1:
            raise ComputationError(f"{f} is not a linear form (a factor of a quadric: bug)")
        coeffs[list(exps).index(1)] = Fraction(int(c.p), int(c.q))
    return coeffs


def _exact_div(f: linalg.RationalPolynomial, g: linalg.RationalPolynomial) -> linalg.RationalPolynomial | None:
    q, r = divmod(f, g)
    return q if r.is_zero() else None


def _exact_quotients(polys: dict[int, linalg.RationalPolynomial], g: linalg.RationalPolynomial) -> dict[int, linalg.RationalPolynomial] | None:
    """``f / g`` for every ``f`` of ``polys``, or None if ``g`` does not divide one of them."""
    out = {}
    for k, f in polys.items():
        quotient = _exact_div(f, g)
        if quotient is None:
            return None
        out[k] = quotient
    return out


def _indefinite(g: linalg.RationalPolynomial, d: int) -> bool:
    """A rank-2 real quadratic form factors over RR iff it is indefinite iff lambda_1 lambda_2 < 0.

    lambda_1 lambda_2 is the sum of the 2 x 2 principal minors of its Gram matrix.
    """
    G = [[Fraction(0)] * d for _ in range(d)]
    for exps, c in g.to_dict().items():
        idx = [i for i, e in enumerate(exps) for _ in range(e)]
        val = Fraction(int(c.p), int(c.q))
        if idx[0] == idx[1]:
            G[idx[0]][idx[0]] += val
        else:
            G[idx[0]][idx[1]] += val / 2
            G[idx[1]][idx[0]] += val / 2
    e2 = sum(G[i][i] * G[j][j] - G[i][j] ** 2 for i in range(d) for j in range(i + 1, d))
    return e2 < 0


@dataclass
class Fiber:
    """All preimages of a point up to rescaling (over CC)."""

    zero: bool = False
    preimages: list[tuple[list[list[int]], list[list[int]]]] = field(default_factory=list)  # scaled to integers
    irrational_pairs: int = 0  # preimage pairs not defined over QQ (gcd irreducible over QQ)
    gcd_form: str | None = None  # the irreducible quadratic gcd, when there is one
    irrational_real: bool | None = None  # does that gcd factor over RR (indefinite) or not (definite)?

    @property
    def count(self) -> int:
        """Number of preimages over CC up to rescaling (for a nonzero point)."""
        return len(self.preimages) + 2 * self.irrational_pairs

    @property
    def real_count(self) -> int:
        """Number of real preimages up to rescaling."""
        return len(self.preimages) + (2 * self.irrational_pairs if self.irrational_real else 0)


#: a preimage ``(A', V')`` with integer entries
Preimage = tuple[list[list[int]], list[list[int]]]


def _proportional(p1: Preimage, p2: Preimage) -> bool:
    """Same point of P(A) x P(V) (i.e. the same preimage up to rescaling)?"""

    def same_line(u: list[int], w: list[int]) -> bool:
        r = None
        for x, y in zip(u, w):
            if (x == 0) != (y == 0):
                return False
            if x != 0:
                q = Fraction(x, y)
                if r is None:
                    r = q
                elif r != q:
                    return False
        return r is not None

    def flat(M: list[list[int]]) -> list[int]:
        return [v for row in M for v in row]

    return same_line(flat(p1[0]), flat(p2[0])) and same_line(flat(p1[1]), flat(p2[1]))


def fiber(x: Sequence[Any], d: int, d_out: int) -> Fiber:
    """All preimages ``(A', V')`` of the point ``x`` (reduced coordinates) up to rescaling."""
    q = quadrics(x, d, d_out)
    rows = [k for k in range(d) if any(not q[k][m].is_zero() for m in range(d_out))]
    cols = [m for m in range(d_out) if any(not q[k][m].is_zero() for k in range(d))]
    if not rows:
        return Fiber(zero=True)
    m0, k0 = cols[0], rows[0]
    g = q[rows[0]][m0]
    for k in rows[1:]:
        g = g.gcd(q[k][m0])
    candidates: list[linalg.RationalPolynomial] = []
    result = Fiber()
    if g.total_degree() == 1:
        candidates = [g]
    else:
        _, factors = g.factor()
        linear = [f for f, _ in factors if f.total_degree() == 1]
        if not linear:
            # irreducible over QQ: two conjugate linear factors over an extension
            result.irrational_pairs = 1
            result.gcd_form = str(g)
            result.irrational_real = _indefinite(g, d)
            return result
        for f in linear:
            if not any((f / c).is_constant() for c in candidates if divmod(f, c)[1].is_zero()):
                candidates.append(f)
    for ell in candidates:
        left = _exact_quotients({k: q[k][m0] for k in rows}, ell)
        if left is None:
            continue
        right = {}
        ok = True
        for m in cols:
            r = _exact_div(q[k0][m], left[k0])
            if r is None or r.total_degree() != 1:
                ok = False
                break
            right[m] = r
        if not ok or not all(left[k] * right[m] == q[k][m] for k in rows for m in cols):
            continue
        Ap = [_linear_coefficients(left[k], d) if k in left else [Fraction(0)] * d for k in range(d)]
        Vp = [_linear_coefficients(right[m], d) if m in right else [Fraction(0)] * d for m in range(d_out)]
        # (lambda A', mu V') has the same tangent image as (A', V'): keep integers
        pre = (integral(Ap).tolist(), integral(Vp).tolist())
        if not any(_proportional(pre, other) for other in result.preimages):
            result.preimages.append(pre)
    return result


# ------------------------------------------------------------------ verdicts
@dataclass
class PointVerdict:
    singular: bool | None
    reason: str
    preimages: int
    differential_rank: int | None = None  # rank of the differential at the given weights
    span: int | None = None  # dimension spanned by the tangent images of all preimages (lower bound)
    dimension: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def symmetric_rank2_jacobian(S: Sequence[Sequence[Any]], prime: int = DEFAULT_PRIME) -> tuple[int, int]:
    """``(rank, codim)``: the Jacobian of the 3x3 minors of a symmetric ``d x d`` matrix at ``S``.

    The variables are the entries ``s_ij``, ``i <= j``.  The 3x3 minors
    generate the (prime) ideal of the symmetric matrices of rank <= 2 (Kutz
    1974), of codimension ``c = d(d+1)/2 - (2d - 1)``; at a point of that
    variety the Jacobian has rank ``c`` exactly where it is smooth.  The
    gradient of ``det S[I, J]`` is its cofactor matrix, so at a rank-one ``S``
    the Jacobian is zero.  The rank is over GF(p): a lower bound, decisive
    when it equals ``c``; a rank below ``c`` is recomputed over QQ.
    """
    d = len(S)
    codim = d * (d + 1) // 2 - (2 * d - 1) if d >= 3 else 0
    index = {ij: n for n, ij in enumerate(quadratic_monomials(d))}
    rows = []
    for I in itertools.combinations(range(d), 3):
        for J in itertools.combinations(range(d), 3):
            M = [[S[i][j] for j in J] for i in I]
            row = [0] * len(index)
            for a_, i in enumerate(I):
                for b_, j in enumerate(J):
                    minor = [[M[r][c] for c in range(3) if c != b_] for r in range(3) if r != a_]
                    cof = (-1) ** (a_ + b_) * (minor[0][0] * minor[1][1] - minor[0][1] * minor[1][0])
                    row[index[(min(i, j), max(i, j))]] += cof
            rows.append(row)
    if not rows:
        return 0, codim
    jac = np.array(rows, dtype=object)
    r = rank_mod_p(jac, prime)
    return (r if r == codim else exact_rank(jac)), codim


def certify(
    A: Any,
    V: Any,
    *,
    dimension: int,
    rank_bound: int | None = None,
    prime: int = DEFAULT_PRIME,
) -> PointVerdict:
    """Is ``phi_{A,V}`` a singular point of the (rank-bounded) neuromanifold? With a certificate.

    ``dimension`` is ``dim M`` (affine cone); ``rank_bound`` the bound ``a`` on
    ``rank A`` (``None``: ``A`` free).  See the module docstring.
    """
    A = _matrix(A, "A")
    V = _matrix(V, "V")
    _check_shapes(A, V)
    d, e = len(A), len(V)
    if isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer)) or dimension < 0:
        raise InvalidArgumentError(f"dimension={dimension!r}: must be a non-negative integer (dim M)")
    if rank_bound is not None and (isinstance(rank_bound, bool) or not isinstance(rank_bound, (int, np.integer)) or rank_bound < 1):
        raise InvalidArgumentError(f"rank_bound={rank_bound!r}: must be a positive integer or None (A free)")
    check_prime(prime)
    a = d if rank_bound is None else min(rank_bound, d)
    x = reduced_point(A, V)
    n = len(x)
    if all(v == 0 for v in x):
        if dimension < n:
            return PointVerdict(True, "the vertex of a cone that spans its ambient space", preimages=0, dimension=dimension)
        return PointVerdict(False, "the closure is the whole ambient space", preimages=0, dimension=dimension)
    fb = fiber(x, d, e)
    if fb.irrational_pairs:
        return PointVerdict(None, "preimages not defined over QQ (use the conjugate-point checks)", fb.count, dimension=dimension)
    pre = [p for p in fb.preimages if exact_rank(np.array(p[0], dtype=object)) <= a]
    if not pre:  # pragma: no cover - the given weights are a preimage
        raise ComputationError("the fiber lost the given preimage (bug)")
    images = []
    smooth_domain = []
    for Ap, Vp in pre:
        r = exact_rank(np.array(Ap, dtype=object))
        if r < a:
            images.append(differential(Ap, Vp))  # Zariski tangent space of the domain: everything
            smooth_domain.append(a >= d)  # A free: smooth everywhere
        else:
            images.append(differential(Ap, Vp) if a >= d else differential_on_rank_variety(Ap, Vp))
            smooth_domain.append(True)
    span = rank_mod_p(np.column_stack(images), prime)
    own = differential(A, V) if a >= d or exact_rank(np.array(A, dtype=object)) < a else differential_on_rank_variety(A, V)
    own_rank = rank_mod_p(own, prime)
    if span > dimension:
        what = "two preimages (pair and swap)" if len(pre) > 1 else "the domain is singular there (rank A < a)"
        return PointVerdict(
            True,
            f"tangent excess: {what}; their tangent images span >= {span} > dim M = {dimension}",
            len(pre), own_rank, span, dimension,
        )
    birational = e > 1 or a > 1  # Cor. A.2; for d' = 1, a = 1 phi is 2:1 (pair and swap)
    if not birational:
        # phi(u v^T, w z^T) = u w sym(v z^T): the cone over the Segre product of P^(d-1) and
        # Y = P{symmetric rank <= 2}, singular at a nonzero point exactly where Y is
        Ap, Vp = pre[0]
        u_idx = next(k for k in range(d) if any(Ap[k]))
        vrow, zrow = Ap[u_idx], Vp[0]
        S = [[vrow[i] * zrow[j] + vrow[j] * zrow[i] for j in range(d)] for i in range(d)]
        jr, codim = symmetric_rank2_jacobian(S, prime)
        return PointVerdict(
            jr < codim,
            f"d' = 1, a = 1 (phi is 2:1): the closure is the cone over P^(d-1) x Y, Y = {{symmetric rank <= 2}}, "
            f"whose ideal is generated by the 3x3 minors (Kutz 1974); their Jacobian at the symmetric factor "
            f"(rank {exact_rank(np.array(S, dtype=object))}) has rank {'>= ' if jr == codim else ''}{jr} "
            f"{'=' if jr == codim else '<'} codim Y = {codim}",
            len(pre), own_rank, span, dimension,
        )
    if len(pre) == 1 and not smooth_domain[0]:
        return PointVerdict(
            True,
            "single preimage where the rank-bounded domain is singular (rank A < a): a smooth, hence normal, "
            "image point would make the finite birational map a local isomorphism (Zariski's main theorem)",
            1, own_rank, span, dimension,
        )
    if len(pre) == 1 and smooth_domain[0]:
        if span == dimension:
            return PointVerdict(False, "single preimage, smooth domain, differential of rank dim M (immersion)", 1, own_rank, span, dimension)
        exact = exact_rank(images[0])
        if exact < dimension:
            return PointVerdict(
                True,
                f"critical: single preimage, differential of rank {exact} < dim M = {dimension} over QQ "
                "(a smooth point would make the finite birational map a local isomorphism)",
                1, own_rank, span, dimension,
            )
    return PointVerdict(None, "undecided by the parametrization", len(pre), own_rank, span, dimension)
