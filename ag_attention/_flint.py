"""python-flint's exact numbers and polynomial rings, typed: the layer below the mathematics.

The parametrizations (:mod:`ag_attention._models`) build polynomials over ZZ, and the exact algorithms
(:mod:`ag_attention._exact`) work over ZZ, QQ and GF(p): both take the rings and their element types from here,
the one place besides :mod:`ag_attention._exact.linalg` (ranks, echelon forms) that imports python-flint.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import flint

__all__ = [
    "IntegerNumber",
    "IntegerPolynomial",
    "IntegerPolynomialRing",
    "ModularPolynomial",
    "ModularPolynomialRing",
    "RationalNumber",
    "RationalPolynomial",
    "RationalPolynomialRing",
    "Terms",
    "integer_polynomial_ring",
    "modular_polynomial",
    "modular_polynomial_ring",
    "rational",
    "rational_polynomial",
    "rational_polynomial_ring",
]

#: exact integers and rationals (python-flint's ``fmpz`` and ``fmpq``)
IntegerNumber = flint.fmpz
RationalNumber = flint.fmpq
#: multivariate polynomials over ZZ, QQ and GF(p) (python-flint's ``fmpz_mpoly``, ``fmpq_mpoly``, ``nmod_mpoly``)
IntegerPolynomial = flint.fmpz_mpoly
RationalPolynomial = flint.fmpq_mpoly
ModularPolynomial = flint.nmod_mpoly
#: their rings (python-flint's contexts)
IntegerPolynomialRing = flint.fmpz_mpoly_ctx
RationalPolynomialRing = flint.fmpq_mpoly_ctx
ModularPolynomialRing = flint.nmod_mpoly_ctx


def integer_polynomial_ring(names: Sequence[str], ordering: str = "degrevlex") -> IntegerPolynomialRing:
    """The ring ``ZZ[names]`` with the monomial ``ordering`` (``"lex"``, ``"deglex"`` or ``"degrevlex"``)."""
    return flint.fmpz_mpoly_ctx.get(tuple(names), ordering)


def rational_polynomial_ring(names: Sequence[str], ordering: str = "degrevlex") -> RationalPolynomialRing:
    """The ring ``QQ[names]``.

    >>> R = rational_polynomial_ring(["x", "y"])
    >>> x, y = R.gens()
    >>> str(x * y + rational(Fraction(1, 2)))
    'x*y + 1/2'
    """
    return flint.fmpq_mpoly_ctx.get(tuple(names), ordering)


def modular_polynomial_ring(names: Sequence[str], p: int, ordering: str = "degrevlex") -> ModularPolynomialRing:
    """The ring ``GF(p)[names]`` for a prime ``p`` below ``2^64``."""
    return flint.nmod_mpoly_ctx.get(tuple(names), modulus=p, ordering=ordering)


Terms = Sequence[tuple[Sequence[int], "int | Fraction"]]


def rational_polynomial(ring: RationalPolynomialRing, terms: Terms) -> RationalPolynomial:
    """The polynomial ``sum c * x^e`` over QQ from its ``(exponent vector, coefficient)`` terms."""
    return ring.from_dict({tuple(e): rational(c) for e, c in terms})


def modular_polynomial(ring: ModularPolynomialRing, terms: Terms) -> ModularPolynomial:
    """The polynomial ``sum c * x^e`` over GF(p) from its terms (integer coefficients, reduced mod p)."""
    p = int(ring.modulus())
    return ring.from_dict({tuple(e): int(c) % p for e, c in terms})


def rational(value: int | Fraction | RationalNumber) -> RationalNumber:
    """An exact rational (int, ``Fraction`` or python-flint's ``fmpq``) as python-flint's ``fmpq``."""
    if isinstance(value, Fraction):
        return flint.fmpq(value.numerator, value.denominator)
    return flint.fmpq(value)
