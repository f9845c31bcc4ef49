"""Polynomials given by a caller, as text or as a Python function, bounded before they are expanded.

A polynomial that a caller writes can be far larger than its text: ``(x+y+z+w)^60`` is 39,711 terms,
``(t1+t2)**(10**6)`` a million terms with coefficients of a million bits, and an expansion that large stops the
interpreter (FLINT's or GMP's allocation aborts: a notebook loses its state) or runs for hours.  So every product
and power is sized first, from what is known of its operands (their terms, degrees, variables, homogeneity and a
bound on the size of their coefficients), and refused with :class:`~ag_attention.InvalidArgumentError`, naming
the limit and the piece, when the estimate is above one of the limits below; only then is it expanded (by FLINT,
in :class:`Bounded`).  The estimate of a product's or a power's terms is the smaller of the product of the terms'
counts and the number of monomials of its degree in its variables (of exactly that degree when it is homogeneous):
an upper bound, so nothing the limits allow is refused for being misjudged larger than it is by more than that.

The text grammar is :func:`parse_polynomial`'s; the function route (:func:`~ag_attention.polynomial_model` with a
function) hands the function :class:`Bounded` values through ``ag_attention._landscape.model``'s wrapper.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from .. import _clock
from .._errors import ComputationTimeoutError, InvalidArgumentError
from .._exact import linalg

__all__ = [
    "Bounded",
    "Poly",
    "parse_polynomial",
    "to_poly",
    "MAX_EXPONENT",
    "MAX_DEGREE",
    "MAX_TERMS",
    "MAX_PRODUCT_PAIRS",
    "MAX_COEFFICIENT_BITS",
    "MAX_TOTAL_BITS",
    "MAX_DEPTH",
    "MAX_TEXT",
    "check_size",
    "monomials",
]

Poly = dict[tuple[int, ...], Fraction]

#: the largest exponent the text grammar takes (``x^1000``); a power of a power is bounded by :data:`MAX_DEGREE`
MAX_EXPONENT = 1000
#: the largest total degree of a polynomial or of any piece of one: far beyond what a Gröbner basis (Macaulay2,
#: msolve) can be taken of, and small enough that a univariate power is quickly expanded
MAX_DEGREE = 10_000
#: the most terms of a polynomial or of any piece of one after expansion (estimated before): ``(x+y+z+w)^60``
#: (39,711) is allowed, ``(x+y+z+w+v)^40`` (135,751) is not; a model or an ideal with more terms is beyond the
#: solvers, and converting 10^5 terms takes about a second
MAX_TERMS = 100_000
#: the most pairs of terms one product may multiply (the product of its operands' terms; for a power, the base's
#: terms times the estimate of the result's): FLINT multiplies about 10^8 pairs a second or two
MAX_PRODUCT_PAIRS = 10**8
#: the most bits a coefficient may have (an upper bound of its numerator's and the common denominator's, estimated
#: before the expansion): ``(x+1)^10000``'s binomial coefficients have 10^4 bits
MAX_COEFFICIENT_BITS = 1_000_000
#: the most bits of coefficients a polynomial may have in all (terms times bits): about 125 MB
MAX_TOTAL_BITS = 10**9
#: the deepest nesting of parentheses in a text: deeper is refused (not a RecursionError)
MAX_DEPTH = 100
#: the longest text of one polynomial, in characters
MAX_TEXT = 1_000_000


#: where the estimates stop counting (an estimate above it is said "more than")
_BIG = 10**30


def _about(x: float) -> str:
    return f"{x:,.0f}" if x < 1e7 else f"{x:.2g}"


def monomials(nvars: int, degree: int, homogeneous: bool = False, cap: int = _BIG) -> int:
    """The number of monomials of degree at most ``degree`` (exactly ``degree`` when ``homogeneous``) in ``nvars``
    variables, or a number above ``cap`` when it is (computed in at most ``nvars`` steps)."""
    if degree <= 0 or nvars == 0:
        return 1
    k = nvars - 1 if homogeneous else nvars
    out = 1
    for i in range(1, k + 1):  # C(degree + k, k) = prod (degree + i) / i, each partial product an integer
        out = out * (degree + i) // i
        if out > cap:
            return cap + 1
    return out


def _power_of(t: int, e: int, cap: int) -> int:
    """``t ** e``, or a number above ``cap`` when it is."""
    if t <= 1:
        return t
    if e * math.log2(t) > math.log2(cap) + 1:
        return cap + 1
    return int(min(t**e, cap + 1))


def _estimate(x: float) -> str:
    return f"more than {_about(_BIG)}" if x > _BIG else f"about {_about(x)}"


def check_size(what: Callable[[], str], terms: int, degree: int, bits: int, pairs: int = 0) -> None:
    """Refuse a polynomial of (an upper bound of) ``terms`` terms, total degree ``degree`` and ``bits`` bits per
    coefficient, or a product multiplying ``pairs`` pairs of terms, when above a limit of the module: an
    :class:`~ag_attention.InvalidArgumentError` naming the limit and the piece ``what()``."""
    limits = (
        (degree, MAX_DEGREE, "MAX_DEGREE", f"degree {_about(degree)}"),
        (terms, MAX_TERMS, "MAX_TERMS", f"{_estimate(terms)} terms after expansion"),
        (pairs, MAX_PRODUCT_PAIRS, "MAX_PRODUCT_PAIRS", f"{_estimate(pairs)} products of two terms"),
        (bits, MAX_COEFFICIENT_BITS, "MAX_COEFFICIENT_BITS", f"coefficients of {_estimate(bits)} bits"),
        (terms * bits, MAX_TOTAL_BITS, "MAX_TOTAL_BITS", f"{_estimate(terms * bits)} bits of coefficients"),
    )
    for value, limit, name, said in limits:
        if value > limit:
            raise InvalidArgumentError(
                f"{what()}: {said}, above the limit of {_about(limit)} ({name}: polynomials are sized before they "
                "are expanded)"
            )


class Bounded:
    """A polynomial (python-flint ``fmpq_mpoly``) with what its products and powers are sized by: ``bits`` (an
    upper bound of the bits of its common denominator plus those of its largest numerator) and ``homogeneous``.
    The arithmetic checks the limits of the module before FLINT is called."""

    __slots__ = ("p", "bits", "homogeneous")

    def __init__(self, p: Any, bits: int | None = None, homogeneous: bool | None = None) -> None:
        self.p = p
        self.bits = _height(p) if bits is None else bits
        self.homogeneous = _is_homogeneous(p) if homogeneous is None else homogeneous

    @classmethod
    def constant(cls, ctx: Any, c: Fraction | int) -> Bounded:
        c = Fraction(c)
        bits = c.numerator.bit_length() + c.denominator.bit_length()
        if bits > MAX_COEFFICIENT_BITS:
            raise InvalidArgumentError(
                f"a number of {_about(bits)} bits, above the limit of {_about(MAX_COEFFICIENT_BITS)} bits a "
                "coefficient may have"
            )
        return cls(ctx.constant(linalg.rational(c)), bits, True)

    @property
    def terms(self) -> int:
        return len(self.p)

    @property
    def degree(self) -> int:
        return int(self.p.total_degree())

    def _check(self, what: Callable[[], str], terms: int, degree: int, bits: int, pairs: int = 0) -> None:
        """Refuse a result of about ``terms`` terms, total degree ``degree`` and ``bits`` bits per coefficient
        (or a product of ``pairs`` pairs of terms) when above a limit, naming the piece ``what()``."""
        check_size(what, terms, degree, bits, pairs)

    def _exact_bits(self) -> Bounded:
        self.bits = _height(self.p)
        return self

    def add(self, other: Bounded, sign: int = 1) -> Bounded:
        """``self + sign * other`` (no limit: a sum is no larger than its parts)."""
        h = (
            self.homogeneous
            and other.homogeneous
            and (self.degree == other.degree or self.p.is_zero() or other.p.is_zero())
        )
        return Bounded(self.p + other.p if sign > 0 else self.p - other.p, self.bits + other.bits + 1, h)

    def neg(self) -> Bounded:
        return Bounded(-self.p, self.bits, self.homogeneous)

    def mul(self, other: Bounded, what: Callable[[], str]) -> Bounded:
        """``self * other``, sized first."""
        a, b = self, other
        if a.p.is_zero() or b.p.is_zero():
            return Bounded(a.p.context().constant(0), 0, True)
        nvars = sum(1 for x, y in zip(a.p.degrees(), b.p.degrees()) if x > 0 or y > 0)
        degree = a.degree + b.degree
        homogeneous = a.homogeneous and b.homogeneous
        pairs = a.terms * b.terms
        terms = min(pairs, monomials(nvars, degree, homogeneous, _BIG))
        small = 1 if min(a.terms, b.terms) == 1 else pairs  # (one term: a monomial times the other, no pairs)

        def bits() -> int:
            return a.bits + b.bits + min(a.terms, b.terms).bit_length()

        if bits() > MAX_COEFFICIENT_BITS or terms * bits() > MAX_TOTAL_BITS:
            a, b = a._exact_bits(), b._exact_bits()  # (the bounds may have grown loose: a sum's adds up)
        self._check(what, terms, degree, bits(), small)
        return Bounded(a.p * b.p, bits(), homogeneous)

    def pow(self, e: int, what: Callable[[], str]) -> Bounded:
        """``self ** e`` (``e >= 0``), sized first."""
        if e == 0:
            return Bounded(self.p.context().constant(1), 2, True)
        if e == 1 or self.p.is_zero():
            return self
        nvars = sum(1 for x in self.p.degrees() if x > 0)
        degree = self.degree * e
        if degree > MAX_DEGREE:  # (before e * anything: e may be 10^9)
            self._check(what, 1, degree, 0)
        t = self.terms
        terms = min(_power_of(t, e, _BIG), monomials(nvars, degree, self.homogeneous, _BIG))
        pairs = 0 if t == 1 else t * terms

        def bits() -> int:
            return e * (self.bits + t.bit_length())

        if bits() > MAX_COEFFICIENT_BITS or terms * bits() > MAX_TOTAL_BITS:
            self._exact_bits()
        self._check(what, terms, degree, bits(), pairs)
        return Bounded(self.p**e, bits(), self.homogeneous)

    def scale(self, c: Fraction, what: Callable[[], str]) -> Bounded:
        """``c * self`` for a rational ``c``."""
        return self.mul(Bounded.constant(self.p.context(), c), what)


def _height(p: Any) -> int:
    """The bits of the common denominator of ``p``'s coefficients plus those of its largest numerator over it."""
    coeffs = p.coeffs()
    if not coeffs:
        return 0
    den = 1
    for c in coeffs:
        q = int(c.q)
        if q != 1:
            den = math.lcm(den, q)
    top = max(abs(int(c.p)) * (den // int(c.q)) for c in coeffs)
    return den.bit_length() + top.bit_length()


def _is_homogeneous(p: Any) -> bool:
    monoms = p.monoms()
    return len({sum(int(e) for e in m) for m in monoms}) <= 1


def to_poly(f: Any) -> Poly:
    """A python-flint polynomial (integer or rational coefficients) as ``{exponents: Fraction}``."""
    out: Poly = {}
    for e, c in f.to_dict().items():
        q = Fraction(int(c.p), int(c.q)) if hasattr(c, "q") else Fraction(int(c))
        if q:
            out[tuple(int(x) for x in e)] = q
    return out


_TOKEN = re.compile(r"[ \t]*(?:(?P<num>\d+(?:\.\d+)?)|(?P<name>[A-Za-z][A-Za-z0-9_]*)|(?P<op>\*\*|[-+*/^()]))")
_SPACE = re.compile(r"[ \t]*")


def parse_polynomial(
    text: str, variables: Sequence[str], *, deadline: float | None = None, timeout: float = 0.0
) -> Poly:
    """``text`` as an exact polynomial ``{exponents: coefficient}`` in ``variables``.

    The grammar, and nothing else (spaces and tabs between tokens)::

        expr   := [+|-] term {(+|-) term}
        term   := power {(*|/) power}        -- "/" only by a nonzero constant
        power  := atom [(^|**) integer]      -- 0 <= integer <= 1000
        atom   := number | variable | "(" expr ")"
        number := digits [. digits]          -- decimals are exact rationals

    A sign is allowed only at the start of an expression (``x*(-y)``, not
    ``x*-y``; ``x--y`` is refused).  Anything else raises ValueError with the
    position.  Every product and power is sized before it is expanded (the
    module's limits: :data:`MAX_TERMS` terms, :data:`MAX_DEGREE`, ...), and
    parentheses nest at most :data:`MAX_DEPTH` deep: beyond a limit,
    :class:`~ag_attention.InvalidArgumentError` (a ValueError) names it and
    the piece.  ``deadline`` (a reading of ``_clock.now()``): past it,
    :class:`~ag_attention.ComputationTimeoutError` (saying ``timeout``, the limit it was given by).
    """
    if len(text) > MAX_TEXT:
        raise InvalidArgumentError(f"a text of {len(text):,} characters, above the limit of {MAX_TEXT:,}")
    parser = _Parser(text, _tokens(text), variables, deadline, timeout)
    out = parser.expr(0)
    if parser.peek()[0] != "end":
        raise parser.fail("an operator or the end")
    return to_poly(out.p)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """``(kind, text, position)`` of each token of ``text`` (kind ``num``, ``name`` or ``op``), then ``end``: one
    pass over the text."""
    tokens: list[tuple[str, str, int]] = []
    pos = 0
    while True:
        pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # (matches the empty string)
        if pos >= len(text):
            break
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"unexpected {text[pos]!r} at position {pos}")
        kind = m.lastgroup or ""
        tokens.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    tokens.append(("end", "", len(text)))
    return tokens


class _Parser:
    """The recursive descent of :func:`parse_polynomial`'s grammar over its tokens, one method per rule, evaluating
    in FLINT through :class:`Bounded`."""

    def __init__(
        self,
        text: str,
        tokens: list[tuple[str, str, int]],
        variables: Sequence[str],
        deadline: float | None,
        timeout: float,
    ) -> None:
        self.text = text
        self.tokens = tokens
        self.k = 0
        self.ctx = linalg.rational_polynomial_ring(list(variables) or ["_"])
        self.gens = dict(zip(variables, self.ctx.gens()))
        self.deadline = deadline
        self.timeout = timeout

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.k]

    def fail(self, what: str) -> ValueError:
        kind, tok, at = self.tokens[self.k]
        return ValueError(f"{what} expected at position {at}, found " + ("the end" if kind == "end" else repr(tok)))

    def piece(self, start: int) -> Callable[[], str]:
        """The text from ``start`` to the token read last, for an error message (shortened)."""
        end = self.tokens[self.k - 1][2] + len(self.tokens[self.k - 1][1])

        def shown() -> str:
            s = self.text[start:end].strip()
            return repr(s if len(s) <= 60 else s[:40] + " ... " + s[-15:]) + f" at position {start}"

        return shown

    def tick(self) -> None:
        if self.deadline is not None and _clock.now() > self.deadline:
            raise ComputationTimeoutError("parsing a polynomial", self.timeout)

    def expr(self, depth: int) -> Bounded:
        sign = 1
        if self.peek()[1] in ("+", "-"):
            sign = -1 if self.peek()[1] == "-" else 1
            self.k += 1
        first = self.term(depth)
        parts = [first if sign > 0 else first.neg()]
        while self.peek()[1] in ("+", "-"):
            s = -1 if self.peek()[1] == "-" else 1
            self.k += 1
            t = self.term(depth)
            parts.append(t if s > 0 else t.neg())
        while len(parts) > 1:  # pairwise: a sum of n terms in n log n, not n^2
            self.tick()
            parts = [parts[i].add(parts[i + 1]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
        return parts[0]

    def term(self, depth: int) -> Bounded:
        start = self.peek()[2]
        out = self.power(depth)
        while self.peek()[1] in ("*", "/"):
            op = self.peek()[1]
            self.k += 1
            at = self.peek()[2]
            rhs = self.power(depth)
            self.tick()
            if op == "*":
                out = out.mul(rhs, self.piece(start))
            else:
                if rhs.p.is_zero() or not rhs.p.is_constant():
                    raise ValueError(f"division by {'zero' if rhs.p.is_zero() else 'a non-constant'} at position {at}")
                c = rhs.p.leading_coefficient()
                out = out.scale(Fraction(int(c.q), int(c.p)), self.piece(start))
        return out

    def power(self, depth: int) -> Bounded:
        start = self.peek()[2]
        base = self.atom(depth)
        if self.peek()[1] not in ("^", "**"):
            return base
        self.k += 1
        kind, tok, at = self.peek()
        if kind != "num" or "." in tok:
            raise self.fail("a nonnegative integer exponent")
        if len(tok) > 6 or int(tok) > MAX_EXPONENT:
            raise InvalidArgumentError(f"exponent {tok} at position {at} is above the limit of {MAX_EXPONENT}")
        self.k += 1
        self.tick()
        return base.pow(int(tok), self.piece(start))

    def atom(self, depth: int) -> Bounded:
        kind, tok, at = self.peek()
        if kind == "num":
            self.k += 1
            try:
                return Bounded.constant(self.ctx, Fraction(tok))
            except InvalidArgumentError as exc:
                raise InvalidArgumentError(f"the number at position {at}: {exc}") from None
        if kind == "name":
            if tok not in self.gens:
                raise ValueError(f"{tok!r} at position {at} is not among the variables")
            self.k += 1
            return Bounded(self.gens[tok], 2, True)
        if tok == "(":
            if depth >= MAX_DEPTH:
                raise InvalidArgumentError(
                    f"parentheses nested more than {MAX_DEPTH} deep at position {at}, above the limit of {MAX_DEPTH}"
                )
            self.k += 1
            out = self.expr(depth + 1)
            if self.peek()[1] != ")":
                raise self.fail("')'")
            self.k += 1
            return out
        raise self.fail("a number, a variable or '('")
