"""The critical points of a squared loss on one layer's neuromanifold, as a polynomial system in the weights.

docs/math/landscape.md (landscape-count).  One lightning layer ``(d, d', a)``
with ``t >= 2`` tokens, its reduced coordinates ``x(theta)``
(:class:`~ag_attention.Parametrization`), a symmetric form ``G`` on them and a
target ``w``: the loss is ``L(theta) = x^T G x - 2 w^T x`` (up to a constant;
the squared loss on data is of this form with ``G`` the Gram form of the data,
:mod:`.metrics`), and its critical points in the weights solve

    J(theta)^T (G x(theta) - w) = 0,        J = dx / dtheta.

The weights are a chart of the domain: ``A`` free (``a >= d``), or
``A = B [I_a | K]`` (``a < d``: an isomorphism onto the open part of
``{rank A <= a}`` whose first ``a`` columns are independent, which removes
``GL_a``), and ``V`` free.  The rescaling ``(c A, V / c)`` leaves ``x`` fixed:
the slice ``l(V) = 1`` (a random linear form) meets each orbit once.  The
critical locus of the parametrization, where ``J`` drops rank, would add
spurious solutions (and whole components); it is removed with a Rabinowitsch
variable ``s``: ``s h(theta) = 1`` for a polynomial ``h`` vanishing on it
(Lemma A.3: ``A = u v^T, V = w v^T``, i.e. ``rank [A; V] <= 1``; ``A = 0``;
and, for ``a < d``, ``rank A < a``, where the chart's domain is singular):
``h`` is the product of a random combination of the 2 x 2 minors of
``[A; V]`` and either a random linear form of ``A`` (``A`` free) or a random
combination of the ``a x a`` minors of ``B``.  The random choices (slice,
``h``'s coefficients) avoid any given finite set of critical points for
generic choices.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._exact import linalg
from .._models import Parametrization, check_one_layer, laplace_determinant

__all__ = ["CriticalSystem", "critical_system", "check_layer", "loss_polynomial", "polynomial_text"]


def check_layer(arch: Architecture, what: str = "the loss landscape") -> tuple[int, int, int, int]:
    """``(d, d', a, t)`` of one plain lightning layer with ``t >= 2``, or an error naming what is not."""
    arch = check_one_layer(arch, what=what)
    d, e = arch.widths
    if arch.tokens < 2:
        raise InvalidArgumentError(
            f"tokens={arch.tokens}: {what} is computed for t >= 2 (reduced coordinates; for t = 1 the critical "
            "locus of the parametrization is not the one of Lemma A.3: use method='m2', the implicit side)"
        )
    a = min(arch.ranks[0], d)
    return d, e, a, arch.tokens


@dataclass(frozen=True)
class CriticalSystem:
    """The polynomial system (over GF(p), or QQ when ``prime == 0``) of the critical points of a loss."""

    d: int
    d_out: int
    rank: int
    tokens: int
    prime: int  # 0: rational coefficients
    variables: tuple[str, ...]  # the chart's unknowns, then "s" when the critical locus is removed
    polynomials: tuple[str, ...]
    removed: bool  # the Rabinowitsch equation removing the critical locus is part of it
    chart: str  # "A free" or "A = B [I | K]"
    slice_coefficients: tuple[int, ...] = ()  # l(V) = sum c_ml v_ml = 1, in the order of the v unknowns

    @property
    def shape(self) -> str:
        return f"{len(self.polynomials)} equations in {len(self.variables)} unknowns"


def polynomial_text(f: Any, names: Sequence[str]) -> str:
    """A flint polynomial (GF(p) or QQ) as msolve/Macaulay2 text in ``names``; over QQ its *primitive part*: times
    the lcm of its denominators and divided by the gcd of the numerators (integer coefficients without a common
    factor: the same zeros; msolve reads no fractions; and a polynomial times any nonzero rational gives the same
    text, so data scaled as ``(cX, c^3 Y)``, which multiplies the loss by ``c^6``, give the same system)."""
    items = sorted(f.to_dict().items(), key=lambda t: (-sum(t[0]), tuple(-e for e in t[0])))
    coeffs = [Fraction(int(c.p), int(c.q)) if hasattr(c, "q") else Fraction(int(c)) for _, c in items]
    scale = Fraction(math.lcm(*(c.denominator for c in coeffs))) if coeffs else Fraction(1)
    if coeffs and all(hasattr(c, "q") for _, c in items):  # over QQ: also divide by the content
        content = math.gcd(*(int(c * scale) for c in coeffs))
        if content:
            scale /= content
    terms = []
    for (exps, _), c in zip(items, coeffs):
        k = int(c * scale)
        if k == 0:
            continue
        mono = "*".join(n if e == 1 else f"{n}^{e}" for n, e in zip(names, exps) if e)
        terms.append(mono if (k == 1 and mono) else f"{k}*{mono}" if mono else str(k))
    return "+".join(terms).replace("+-", "-") if terms else "0"


def _chart(d: int, e: int, a: int) -> tuple[list[str], bool]:
    """Names of the chart's unknowns (``b``, ``k`` or ``a``; then ``v``) and whether ``A = B [I | K]``."""
    if a < d:
        names = [f"b{k}_{c}" for k in range(1, d + 1) for c in range(1, a + 1)]
        names += [f"k{c}_{l}" for c in range(1, a + 1) for l in range(a + 1, d + 1)]
    else:
        names = [f"a{k}_{l}" for k in range(1, d + 1) for l in range(1, d + 1)]
    names += [f"v{m}_{l}" for m in range(1, e + 1) for l in range(1, d + 1)]
    return names, a < d


def _minor_combination(M: list[list[Any]], size: int, rng: random.Random, scalar: Any, zero: Any) -> Any:
    """A random linear combination of the ``size x size`` minors of ``M`` (entries polynomials)."""
    rows, cols = len(M), len(M[0])
    total = zero
    for I in itertools.combinations(range(rows), size):
        for J in itertools.combinations(range(cols), size):
            sub = [[M[i][j] for j in J] for i in I]
            total += scalar(rng.randrange(1, 1 << 30)) * laplace_determinant(sub, zero)
    return total


def critical_system(
    arch: Architecture, G: Any, w: Sequence[Any], *, prime: int, seed: int = 0, remove_critical: bool = True
) -> CriticalSystem:
    """The system ``J^T (G x - w) = 0``, ``l(V) = 1`` (and ``s h = 1``) of one layer (see the module docstring).

    ``G``: an ``n x n`` symmetric matrix and ``w`` a vector of length ``n``
    (``n`` the reduced coordinates), integers or Fractions; ``prime`` a prime
    below 2^31 (coefficients mod p) or 0 (over QQ, for real solving).
    ``remove_critical=False`` leaves the critical locus in (for tests: the
    count is then wrong, or the system not zero-dimensional).
    """
    d, e, a, t = check_layer(arch)
    P = Parametrization(Architecture.single_layer(d, e, None, tokens=2), coords="reduced", params="AV")
    n = len(P.polynomials)
    G = np.asarray(G, dtype=object)
    if G.shape != (n, n) or len(w) != n:
        raise InvalidArgumentError(
            f"G must be {n} x {n} and w of length {n} (the reduced coordinates of "
            f"({d},{e})), got {G.shape} and {len(w)}"
        )
    rng = random.Random(seed)
    ch = _chart_ring(d, e, a, prime, extra=["s"] if remove_critical else [])
    names, chart, all_names, g, scalar, zero, one = (
        ch.names,
        ch.chart,
        ch.all_names,
        ch.gens,
        ch.scalar,
        ch.zero,
        ch.one,
    )
    A, V, Bm, x = ch.A, ch.V, ch.B, ch.x
    r = [sum((scalar(G[i, j]) * x[j] for j in range(n) if G[i, j] != 0), zero) - scalar(w[i]) for i in range(n)]
    equations = []
    for v in names:
        equations.append(sum((x[i].derivative(v) * r[i] for i in range(n)), zero))
    cut = [rng.randrange(1, 1 << 30) for _ in range(e * d)]
    slice_ = sum((scalar(cut[m * d + l]) * V[m][l] for m in range(e) for l in range(d)), zero) - one
    equations.append(slice_)
    if remove_critical:
        stacked = A + V
        h2 = _minor_combination(stacked, 2, rng, scalar, zero)
        if Bm is not None:
            h1 = _minor_combination(Bm, a, rng, scalar, zero)
        else:
            h1 = sum((scalar(rng.randrange(1, 1 << 30)) * A[k][l] for k in range(d) for l in range(d)), zero)
        equations.append(g["s"] * h1 * h2 - one)
    texts = tuple(polynomial_text(f, all_names) for f in equations)
    return CriticalSystem(
        d, e, a, t, prime, tuple(all_names), texts, remove_critical, "A = B [I | K]" if chart else "A free", tuple(cut)
    )


@dataclass(frozen=True)
class _ChartRing:
    """The chart's unknowns as polynomials (GF(p), or QQ for ``prime == 0``), ``A``, ``V`` and ``x(theta)``."""

    names: list[str]  # the chart's unknowns
    all_names: list[str]  # and the extra ones (``s``)
    chart: bool  # A = B [I | K]
    ring: Any
    gens: dict[str, Any]
    scalar: Any  # number -> constant polynomial
    zero: Any
    one: Any
    A: list[list[Any]]
    V: list[list[Any]]
    B: list[list[Any]] | None
    x: list[Any]  # the reduced coordinates


def _chart_ring(d: int, e: int, a: int, prime: int, extra: Sequence[str] = ()) -> _ChartRing:
    P = Parametrization(Architecture.single_layer(d, e, None, tokens=2), coords="reduced", params="AV")
    names, chart = _chart(d, e, a)
    all_names = names + list(extra)
    ctx: Any
    if prime:
        ctx = linalg.modular_polynomial_ring(all_names, prime, "degrevlex")

        def scalar(c: Any) -> Any:
            c = Fraction(c)
            return ctx.constant(c.numerator % prime * pow(c.denominator % prime, -1, prime) % prime)
    else:
        ctx = linalg.rational_polynomial_ring(all_names, "degrevlex")

        def scalar(c: Any) -> Any:
            return ctx.constant(linalg.rational(Fraction(c)))

    g = dict(zip(all_names, ctx.gens()))
    zero, one = ctx.constant(0), ctx.constant(1)
    Bm = None
    if chart:
        Bm = [[g[f"b{k}_{c}"] for c in range(1, a + 1)] for k in range(1, d + 1)]
        C = [
            [(one if c == l else zero) if l <= a else g[f"k{c}_{l}"] for l in range(1, d + 1)] for c in range(1, a + 1)
        ]
        A = [[sum((Bm[k][c] * C[c][l] for c in range(a)), zero) for l in range(d)] for k in range(d)]
    else:
        A = [[g[f"a{k}_{l}"] for l in range(1, d + 1)] for k in range(1, d + 1)]
    V = [[g[f"v{m}_{l}"] for l in range(1, d + 1)] for m in range(1, e + 1)]
    subs = [A[k][l] for k in range(d) for l in range(d)] + [V[m][l] for m in range(e) for l in range(d)]
    x = [_compose(f, subs, zero, scalar) for f in P.polynomials]
    return _ChartRing(names, all_names, chart, ctx, g, scalar, zero, one, A, V, Bm, x)


def loss_polynomial(arch: Architecture, G: Any, w: Sequence[Any], c: Any) -> tuple[list[str], Any]:
    """The chart's unknowns and ``L = x^T G x - 2 w^T x + c`` as a polynomial over QQ in them (python-flint)."""
    d, e, a, _ = check_layer(arch)
    ch = _chart_ring(d, e, a, 0)
    n = len(ch.x)
    G = np.asarray(G, dtype=object)
    if G.shape != (n, n) or len(w) != n:
        raise InvalidArgumentError(f"G must be {n} x {n} and w of length {n}, got {G.shape} and {len(w)}")
    quad = sum((ch.scalar(G[i, j]) * ch.x[i] * ch.x[j] for i in range(n) for j in range(n) if G[i, j] != 0), ch.zero)
    lin = sum((ch.scalar(2 * Fraction(w[i])) * ch.x[i] for i in range(n) if w[i] != 0), ch.zero)
    return ch.names, quad - lin + ch.scalar(c)


def _compose(f: Any, subs: list[Any], zero: Any, scalar: Any) -> Any:
    """``f`` (an integer polynomial in the AV weights) evaluated at the polynomials ``subs``."""
    total = zero
    for exps, c in f.to_dict().items():
        term = scalar(int(c))
        for s, k in zip(subs, exps):
            if k:
                term = term * s**k
        total += term
    return total
