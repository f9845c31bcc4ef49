"""Degree of the closure of one lightning layer, in closed form (docs/math/degree.md).

The coordinates of ``phi_{A,V}`` are *linear* in ``A (x) V``, so the
projectivized neuromanifold is the image of a Segre product under a linear
projection whose centre misses it.  Its degree is then

    deg = binom(m + n, m) * deg(domain) / (generic fiber size),

``m`` = dimension of the projectivized ``A``-domain, ``n = d d' - 1``:

* ``t >= 2`` (reduced or full coordinates): domain ``D_a`` = ``d x d``
  matrices of rank ``<= a``; generic fiber 1, except ``d' = 1, a = 1,
  d >= 2``: 2 (the swap ``(u v^T, w z^T) -> (u z^T, w v^T)``).
* ``t = 1`` (full coordinates; ``phi`` only sees ``S = A + A^T``): domain the
  symmetric matrices of rank ``<= r = min(2a, d)``; generic fiber 1, except
  ``d' = 1, r = 2``: 3 (the cubic ``l1 l2 l`` is quadric x linear form in
  three ways).

Every number is an exact integer (the products of binomial quotients as one
exact integer division, checked to be integral); a degree of more than
:data:`MAX_DEGREE_DIGITS` digits, estimated first with floats, is refused.
The proof is in docs/math/degree.md;
:mod:`ag_attention._algebra.certificate` counts the same number of points with
msolve.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from math import comb, lgamma, log, prod
from typing import Any, NamedTuple

from .._architecture import Architecture
from .._checks import check_int
from .._errors import InvalidArgumentError
from .._models import Hypothesis, check_one_layer

__all__ = [
    "DegreeFormula",
    "degree_formula",
    "determinantal_degree",
    "symmetric_determinantal_degree",
    "determinantal_dimension",
    "symmetric_determinantal_dimension",
    "segre_degree",
]


def _positive(name: str, value: Any) -> int:
    return check_int(value, name, minimum=1)


def determinantal_dimension(d: int, a: int) -> int:
    """Affine dimension of the ``d x d`` matrices of rank ``<= a``: ``a(2d - a)`` (``a`` capped at ``d``)."""
    a = min(a, d)
    return a * (2 * d - a)


def determinantal_degree(d: int, a: int) -> int:
    """Degree of the ``d x d`` matrices of rank ``<= a`` (Harris, *Algebraic Geometry*, Ex. 19.10).

    ``prod_{i=0}^{d-a-1} binom(d+i, a) / binom(a+i, a)``; 1 when ``a >= d``
    (all matrices).  For ``m x n`` matrices of rank ``<= k`` Harris gives
    ``prod_{i=0}^{n-k-1} binom(m+i, k) / binom(k+i, k)``.

    >>> [determinantal_degree(2, 1), determinantal_degree(3, 1), determinantal_degree(3, 2), determinantal_degree(4, 2)]
    [2, 6, 3, 20]
    """
    d = _positive("d", d)
    a = min(_positive("a", a), d)
    return _integral_ratio(
        [comb(d + i, a) for i in range(d - a)],
        [comb(a + i, a) for i in range(d - a)],
        f"determinantal degree of ({d}, {a})",
    )


def symmetric_determinantal_dimension(d: int, r: int) -> int:
    """Affine dimension of the symmetric ``d x d`` matrices of rank ``<= r``: ``r(2d - r + 1)/2``."""
    r = min(r, d)
    return r * (2 * d - r + 1) // 2


def symmetric_determinantal_degree(d: int, r: int) -> int:
    """Degree of the symmetric ``d x d`` matrices of rank ``<= r`` (Harris and Tu, Topology 23, 1984).

    ``prod_{k=0}^{d-r-1} binom(d+k, d-r-k) / binom(2k+1, k)``; 1 when ``r >= d``.

    >>> [symmetric_determinantal_degree(2, 1), symmetric_determinantal_degree(3, 1),
    ...  symmetric_determinantal_degree(3, 2), symmetric_determinantal_degree(4, 2),
    ...  symmetric_determinantal_degree(4, 1)]
    [2, 4, 3, 10, 8]
    """
    d = _positive("d", d)
    r = min(_positive("r", r), d)
    return _integral_ratio(
        [comb(d + k, d - r - k) for k in range(d - r)],
        [comb(2 * k + 1, k) for k in range(d - r)],
        f"symmetric determinantal degree of ({d}, {r})",
    )


def _integral_ratio(numerators: list[int], denominators: list[int], what: str) -> int:
    """``prod(numerators) / prod(denominators)``, known to be an integer: one exact division of integers
    (a product of Fractions reduces a gcd at every step: minutes at d = 5000)."""
    num, den = prod(numerators), prod(denominators)
    q, rest = divmod(num, den)
    if rest:  # pragma: no cover - the formulas are integral
        raise ArithmeticError(f"{what} is not an integer")
    return q


def _log10_comb(n: int, k: int) -> float:
    return (lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)) / log(10)


def degree_digits(d: int, d_out: int, a: int, tokens: int) -> float:
    """About how many decimal digits the degree of the closure has (floats only: nothing large is computed)."""
    n = d * d_out - 1
    if tokens >= 2:
        r = min(a, d)
        dom = determinantal_dimension(d, r) - 1
        dom_log = sum(_log10_comb(d + i, r) - _log10_comb(r + i, r) for i in range(d - r))
    else:
        r = min(2 * a, d)
        dom = symmetric_determinantal_dimension(d, r) - 1
        dom_log = sum(_log10_comb(d + k, d - r - k) - _log10_comb(2 * k + 1, k) for k in range(d - r))
    return _log10_comb(dom + n, n) + dom_log + 1


#: the formula is computed exactly for degrees of at most this many digits (Python prints up to 4,300)
MAX_DEGREE_DIGITS = 4000


def segre_degree(m: int, deg_x: int, n: int, deg_y: int) -> int:
    """Degree of the Segre image of ``X x Y`` (projective dimensions ``m``, ``n``): ``binom(m+n, m) deg X deg Y``."""
    return comb(m + n, m) * deg_x * deg_y


@dataclass(frozen=True)
class DegreeFormula:
    """The degree of the closure of one lightning layer and why it holds.

    ``degree`` is the degree of the Zariski closure of the neuromanifold (an
    affine cone; equal to the degree of its projectivization).  ``fiber`` is
    the number of points of a general fiber of the projection, so a general
    linear section of the closure pulls back to ``count = degree * fiber``
    weight classes (what ``ag_attention._algebra.certificate`` counts).
    ``applies`` is True when every hypothesis holds (the statement is then
    proven in docs/math/degree.md); otherwise ``degree`` is None.
    """

    d: int
    d_out: int
    rank: int
    tokens: int
    degree: int
    fiber: int
    dimension: int  # affine dimension of the closure
    domain: str
    domain_dimension: int  # projective dimension of the A- (or S-) domain
    domain_degree: int
    segre_degree: int
    hypotheses: tuple[Hypothesis, ...] = ()
    explanation: str = ""
    formula: str = "docs/math/degree.md"
    notes: tuple[str, ...] = field(default=())

    @property
    def applies(self) -> bool:
        return self.degree is not None and all(h.holds for h in self.hypotheses)

    @property
    def count(self) -> int | None:
        """Points of a general linear section pulled back to the weights (up to rescaling)."""
        return None if self.degree is None else self.degree * self.fiber

    def __iter__(self) -> Iterator[int | str | None]:  # ``degree, explanation = degree_formula(...)``
        yield self.degree
        yield self.explanation

    def to_dict(self) -> dict[str, Any]:
        return {
            "d": self.d,
            "d_out": self.d_out,
            "rank": self.rank,
            "tokens": self.tokens,
            "degree": self.degree,
            "fiber": self.fiber,
            "count": self.count,
            "dimension": self.dimension,
            "domain": self.domain,
            "domain_dimension": self.domain_dimension,
            "domain_degree": self.domain_degree,
            "segre_degree": self.segre_degree,
            "applies": self.applies,
            "hypotheses": [h.to_dict() for h in self.hypotheses],
            "explanation": self.explanation,
            "formula": self.formula,
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        head = f"deg = {self.degree}" if self.degree is not None else "no formula"
        return f"(d, d', a, t) = ({self.d}, {self.d_out}, {self.rank}, {self.tokens}): {head}; {self.explanation}"


class _Domain(NamedTuple):
    """The domain of the Segre-type projection (dimension, degree, name), its generic fiber, and the words."""

    dimension: int
    degree: int
    name: str
    fiber: int
    hypotheses: tuple[Hypothesis, ...]
    explanation: str
    notes: tuple[str, ...]


def _tokens_domain(d: int, d_out: int, a: int, n: int) -> _Domain:
    """``t >= 2``: ``P(D_r) x P^n``, ``D_r`` the ``d x d`` matrices of rank ``<= r = min(a, d)``."""
    r = min(a, d)
    dom_dim = determinantal_dimension(d, r) - 1
    dom_deg = determinantal_degree(d, r)
    domain = f"P^{{{d * d - 1}}} (A free)" if r == d else f"P(D_{r}) (d x d, rank <= {r})"
    swap = d_out == 1 and r == 1 and d >= 2
    hyps = (
        Hypothesis("t >= 2 (reduced coordinates determine phi, Prop. A.5)", True),
        Hypothesis("base-point free: (Az)_k (Vz)_m = 0 for all k, m only if A = 0 or V = 0 (Cor. A.1)", True),
        Hypothesis("one plain lightning layer over a field of characteristic 0 (C or Q)", True),
    )
    why = f"deg = binom({dom_dim}+{n}, {n}) * deg D = {comb(dom_dim + n, n)} * {dom_deg}" + (
        " / 2 (d' = 1, a = 1: the projection is 2:1, the swap (u v^T, w z^T) <-> (u z^T, w v^T))"
        if swap
        else " (the projection is birational: generic fibers are the rescalings, Thm. 3.2)"
    )
    notes = ("reduced and full coordinates (any t >= 2) give the same degree: full = L . reduced with L injective",)
    return _Domain(dom_dim, dom_deg, domain, 2 if swap else 1, hyps, why, notes)


def _one_token_domain(d: int, d_out: int, a: int, n: int) -> _Domain:
    """``t = 1``: ``P(Sym_{<= r}) x P^n``, the symmetric ``S = A + A^T`` of rank ``<= r = min(2a, d)``."""
    r = min(2 * a, d)
    dom_dim = symmetric_determinantal_dimension(d, r) - 1
    dom_deg = symmetric_determinantal_degree(d, r)
    domain = (
        f"P(Sym^2) (symmetric {d} x {d}, S = A + A^T free)"
        if r == d
        else f"P(Sym_{{<= {r}}}) (symmetric, rank <= {r} = min(2a, d))"
    )
    triple = d_out == 1 and r == 2 and d >= 2
    hyps = (
        Hypothesis("t = 1: phi(x) = (x^T A x) V x, coordinates = coefficients of the cubics (full coordinates)", True),
        Hypothesis("base-point free: (x^T S x)(V x) = 0 only if S = 0 or V = 0", True),
        Hypothesis("one plain lightning layer over a field of characteristic 0 (C or Q)", True),
    )
    why = f"deg = binom({dom_dim}+{n}, {n}) * deg Sym_<={r} = {comb(dom_dim + n, n)} * {dom_deg}" + (
        " / 3 (d' = 1, rank S = 2: the cubic l1 l2 l is quadric x line in three ways)"
        if triple
        else " (the projection is birational: S and V are determined up to rescaling)"
    )
    notes = ("t = 1 sees only S = A + A^T; every symmetric matrix of rank <= min(2a, d) is A + A^T with rank A <= a",)
    return _Domain(dom_dim, dom_deg, domain, 3 if triple else 1, hyps, why, notes)


def degree_formula(
    d: int | Architecture, d_out: int | None = None, a: int | None = None, tokens: int = 2
) -> DegreeFormula:
    """Degree of the closure of one lightning layer ``R^d -> R^{d'}``, rank ``A <= a``, ``t`` tokens.

    ``a=None`` (or ``a >= d``): ``A`` free.  Accepts an :class:`Architecture`
    with one plain lightning layer instead of ``(d, d_out, a, tokens)``.
    Reduced and full coordinates have the same degree for ``t >= 2`` (they
    differ by an injective linear map); ``t = 1`` is the variety of the
    cubic map ``x -> (x^T A x) V x`` (full coordinates).

    >>> degree_formula(3, 1, 2).degree, degree_formula(3, 2, 1).degree, degree_formula(3, 2, 3).degree
    (108, 756, 1287)
    >>> f = degree_formula(2, 1, 1); (f.degree, f.fiber, f.count)
    (3, 2, 6)
    >>> degree_formula(3, 1, 1, tokens=1).degree   # Chow variety of triangles in P^2
    15
    """
    if isinstance(d, Architecture):
        arch = check_one_layer(d, what="the degree formula")
        d, d_out = arch.widths
        a = arch.ranks[0]
        tokens = arch.tokens
    d = _positive("d", d)
    d_out = _positive("d_out", d_out)
    a = d if a is None else _positive("a", a)
    tokens = _positive("tokens", tokens)
    digits = degree_digits(d, d_out, a, tokens)
    if digits > MAX_DEGREE_DIGITS:
        raise InvalidArgumentError(
            f"the degree of (d, d', a, t) = ({d}, {d_out}, {min(a, d)}, {tokens}) has about {digits:,.0f} digits; the "
            f"formula is computed exactly up to {MAX_DEGREE_DIGITS:,} digits: use smaller sizes"
        )
    n = d * d_out - 1  # projective dimension of the V-space
    dom = _tokens_domain(d, d_out, a, n) if tokens >= 2 else _one_token_domain(d, d_out, a, n)
    dom_dim, dom_deg, domain, fiber, hyps, why, notes = dom
    seg = segre_degree(dom_dim, dom_deg, n, 1)
    if seg % fiber:  # pragma: no cover - proven integral
        raise ArithmeticError(f"{seg} is not divisible by the fiber size {fiber}")
    return DegreeFormula(
        d=d,
        d_out=d_out,
        rank=a,
        tokens=tokens,
        degree=seg // fiber,
        fiber=fiber,
        dimension=dom_dim + n + 1,
        domain=domain,
        domain_dimension=dom_dim,
        domain_degree=dom_deg,
        segre_degree=seg,
        hypotheses=hyps,
        explanation=why,
        notes=notes,
    )
