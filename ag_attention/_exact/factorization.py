"""All complex preimages of a point of one lightning layer, by unique factorization.

A point ``x`` in reduced coordinates is the array of quadrics
``q_{k,m}(z) = (A z)_k (V z)_m`` (:func:`quadrics`).  :func:`fiber` recovers
*all* preimages ``(A', V')`` up to the rescaling ``(cA', V'/c)``: ``(V' z)_{m0}``
divides ``g = gcd_k q_{k,m0}``, so its candidates are the linear factors of
``g`` (one or two); each candidate determines the rest by exact division and
is kept if consistent (docs/math/geometry.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .._errors import ComputationError, InvalidArgumentError
from .._models import reduced_count, reduced_keys
from . import linalg
from .rational import integral

__all__ = ["quadrics", "Fiber", "Preimage", "fiber"]


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


def _exact_quotients(
    polys: dict[int, linalg.RationalPolynomial], g: linalg.RationalPolynomial
) -> dict[int, linalg.RationalPolynomial] | None:
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


#: a preimage ``(A', V')`` with integer entries
Preimage = tuple[list[list[int]], list[list[int]]]


@dataclass
class Fiber:
    """All preimages of a point up to rescaling (over CC)."""

    zero: bool = False
    preimages: list[Preimage] = field(default_factory=list)  # scaled to integers
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


def _linear_factors(g: linalg.RationalPolynomial) -> list[linalg.RationalPolynomial] | None:
    """The linear factors of ``g`` up to scalars (``g`` itself if linear); None if ``g`` is irreducible over QQ."""
    if g.total_degree() == 1:
        return [g]
    _, factors = g.factor()
    linear = [f for f, _ in factors if f.total_degree() == 1]
    if not linear:
        return None
    candidates: list[linalg.RationalPolynomial] = []
    for f in linear:
        if not any((f / c).is_constant() for c in candidates if divmod(f, c)[1].is_zero()):
            candidates.append(f)
    return candidates


def _preimage(
    ell: linalg.RationalPolynomial, q: list[list[linalg.RationalPolynomial]], rows: list[int], cols: list[int]
) -> Preimage | None:
    """The preimage with ``(V' z)_{m0} = ell`` (``m0 = cols[0]``), scaled to integers, or None if there is none."""
    m0, k0 = cols[0], rows[0]
    d, d_out = len(q), len(q[0])
    left = _exact_quotients({k: q[k][m0] for k in rows}, ell)
    if left is None:
        return None
    right = {}
    for m in cols:
        r = _exact_div(q[k0][m], left[k0])
        if r is None or r.total_degree() != 1:
            return None
        right[m] = r
    if not all(left[k] * right[m] == q[k][m] for k in rows for m in cols):
        return None
    Ap = [_linear_coefficients(left[k], d) if k in left else [Fraction(0)] * d for k in range(d)]
    Vp = [_linear_coefficients(right[m], d) if m in right else [Fraction(0)] * d for m in range(d_out)]
    # (lambda A', mu V') has the same tangent image as (A', V'): keep integers
    return integral(Ap).tolist(), integral(Vp).tolist()


def fiber(x: Sequence[Any], d: int, d_out: int) -> Fiber:
    """All preimages ``(A', V')`` of the point ``x`` (reduced coordinates) up to rescaling."""
    q = quadrics(x, d, d_out)
    rows = [k for k in range(d) if any(not q[k][m].is_zero() for m in range(d_out))]
    cols = [m for m in range(d_out) if any(not q[k][m].is_zero() for k in range(d))]
    if not rows:
        return Fiber(zero=True)
    g = q[rows[0]][cols[0]]
    for k in rows[1:]:
        g = g.gcd(q[k][cols[0]])
    candidates = _linear_factors(g)
    if candidates is None:
        # irreducible over QQ: two conjugate linear factors over an extension
        return Fiber(irrational_pairs=1, gcd_form=str(g), irrational_real=_indefinite(g, d))
    result = Fiber()
    for ell in candidates:
        pre = _preimage(ell, q, rows, cols)
        if pre is not None and not any(_proportional(pre, other) for other in result.preimages):
            result.preimages.append(pre)
    return result
