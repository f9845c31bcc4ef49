"""Counting certificate for the degree of one lightning layer (docs/math/degree.md, section 4).

A general linear section of the closure ``M`` (affine cone of dimension
``n = dim M``) by ``n - 1`` homogeneous linear forms and one affine one meets
it in ``deg M`` points; their preimages in the weights, one per rescaling
class, are ``deg M * fiber`` points.  This module writes that square system
over GF(p) and counts its solutions with msolve.

Weights (coordinates of the system), all charts of open dense subsets on which
the weights are determined by ``phi`` up to the generic fiber:

* ``t >= 2``: ``A = B [I_a | K]`` for ``a < d`` (``B``: ``d x a``, ``K``:
  ``a x (d-a)``; the chart "first ``a`` columns of ``A`` independent", an
  isomorphism onto its image), ``A`` free for ``a >= d``;
* ``t = 1``: ``S = A + A^T`` symmetric of rank ``<= r = min(2a, d)``, as
  ``S = [I; K^T] S0 [I | K]`` with ``S0`` symmetric ``r x r`` (the chart
  "leading principal ``r x r`` block invertible"); ``A = S / 2`` is put into the
  project's full coordinates, which only see ``A + A^T``;
* ``V`` free.

Normalizations (``normalization=``):

* ``"chart"`` (default): ``A[1,1] = 1`` (``B[1,1]``, ``S0[1,1]``) and
  ``V[1,1] = 1``, and ``n - 1`` random homogeneous linear forms in the
  coordinates: ``n - 1`` equations in ``n - 1`` unknowns (a chart of
  ``P(domain) x P(V)``);
* ``"affine"``: ``n - 1`` random homogeneous forms, one random affine form
  ``= 1`` in the coordinates, and a random linear form of ``V`` ``= 1``
  (kills the rescaling ``(cA, V/c)``): ``n + 1`` equations in ``n + 1``
  unknowns.

The linear forms are random combinations (coefficients in ``[0, p)`` from
``random.Random(seed)``) of the project's coordinate polynomials
(:class:`ag_attention._models.parametrization.Parametrization`, reduced or full)
pulled back along the chart.  Counting over GF(p) with random choices is
Monte-Carlo evidence, not a proof: for a good prime and general choices the
count equals the characteristic-0 one; unlucky choices change it, so every
size is run with two (prime, seed) pairs.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from math import comb
from typing import Any

from .. import _clock
from .._architecture import Architecture
from .._checks import check_choice
from .._errors import InvalidArgumentError, MSolveTimeoutError
from .._exact import ModularPolynomial, is_prime, linalg
from .._models import Parametrization
from .._resources import MemoryEstimate, require_memory
from .degree import DegreeFormula, degree_formula
from .msolve import MAX_PRIME, SolutionCount, count_solutions

__all__ = [
    "CountingSystem",
    "build_system",
    "system_memory",
    "certify_degree",
    "DegreeCertificate",
    "m2_script",
    "NORMALIZATIONS",
    "DEFAULT_PRIME",
]

NORMALIZATIONS = ("chart", "affine")
DEFAULT_PRIME = 2147483647  # 2^31 - 1, the project's default prime (msolve: p < 2^31)


@dataclass(frozen=True)
class CountingSystem:
    """A square polynomial system over GF(``prime``) whose solution count certifies a degree."""

    d: int
    d_out: int
    rank: int
    tokens: int
    coords: str
    normalization: str
    prime: int
    seed: int
    variables: tuple[str, ...]
    polynomials: tuple[str, ...]  # msolve / Macaulay2 syntax, coefficients in [0, p)
    dimension: int  # affine dimension of the closure (number of linear forms in the coordinates)
    ambient: int  # number of coordinates
    max_degree: int

    @property
    def shape(self) -> str:
        return f"{len(self.polynomials)} equations of degree <= {self.max_degree} in {len(self.variables)} unknowns"


def _equations(
    d: int,
    d_out: int,
    a: int,
    tokens: int,
    coords: str,
    normalization: str,
    prime: int,
    seed: int,
    n: int,
    names_t: tuple[str, ...],
    in_time: Callable[[], None],
) -> tuple[list[ModularPolynomial], int]:
    """The square system in the chart's unknowns ``names_t``: ``n - 1`` random linear forms in the coordinates
    pulled back to the weights (and, ``affine``, one more form set to 1 and a random normalization of ``V``);
    with the number of coordinates.  ``in_time()`` is called before each form (it raises past the deadline)."""
    rng = random.Random(seed)
    # the project's coordinates: bilinear in a_(k,l), v_(m,l) (AV weights, A free)
    P = Parametrization(Architecture.single_layer(d, d_out, None, tokens=tokens), coords=coords, params="AV")
    ctx = linalg.modular_polynomial_ring(names_t, prime, "degrevlex")
    A, V = _chart_weights(ctx, names_t, d, d_out, a, tokens, prime)
    subs = [A[k][l] for k in range(d) for l in range(d)] + [V[m][l] for m in range(d_out) for l in range(d)]
    if len(subs) != len(P.variables):  # pragma: no cover - guards the variable order of Parametrization
        raise AssertionError("unexpected variable order of the parametrization")
    # random linear forms in the coordinates, pulled back
    src = linalg.modular_polynomial_ring(P.variables, prime, "degrevlex")
    coords_mod = [src.from_dict({e: int(c) % prime for e, c in f.to_dict().items()}) for f in P.polynomials]

    def random_form() -> ModularPolynomial:
        f = src.constant(0)
        for c in coords_mod:
            f += rng.randrange(prime) * c
        return f

    one, zero = ctx.constant(1), ctx.constant(0)
    equations = []
    for _ in range(n - 1):
        in_time()
        equations.append(random_form().compose(*subs, ctx=ctx))
    in_time()
    if normalization == "affine":
        equations.append(random_form().compose(*subs, ctx=ctx) - one)
        lam = sum((rng.randrange(1, prime) * V[m][l] for m in range(d_out) for l in range(d)), zero)
        equations.append(lam - one)
    if len(equations) != len(names_t):  # pragma: no cover - proven square
        raise AssertionError(f"{len(equations)} equations in {len(names_t)} unknowns")
    return equations, len(P.polynomials)


def _check_prime(p: int) -> int:
    if isinstance(p, bool) or not isinstance(p, int) or not (2 < p < MAX_PRIME) or not is_prime(p):
        raise InvalidArgumentError(f"prime={p!r}: must be a prime 2 < p < 2^31 (msolve's prime fields)")
    return p


def _to_text(f: ModularPolynomial, names: tuple[str, ...]) -> str:
    terms = []
    for exps, coeff in sorted(f.to_dict().items(), key=lambda t: (-sum(t[0]), tuple(-e for e in t[0]))):
        c = int(coeff)
        if c == 0:
            continue
        mono = "*".join(n if e == 1 else f"{n}^{e}" for n, e in zip(names, exps) if e)
        terms.append(f"{c}*{mono}" if mono else str(c))
    return "+".join(terms) if terms else "0"


def _chart_names(d: int, d_out: int, a: int, tokens: int, normalization: str) -> tuple[str, ...]:
    """The unknowns of the chart of ``(A, V)``: ``A = B [I | K]`` (rank ``r < d``), ``A`` free, or for ``t = 1``
    the symmetric ``S = [I; K^T] S0 [I | K]``; then ``V``.  The chart normalization fixes the first entries."""
    names: list[str] = []
    if tokens >= 2:
        r = min(a, d)
        if r < d:
            names += [f"b{k}_{c}" for k in range(1, d + 1) for c in range(1, r + 1)]
            names += [f"k{c}_{l}" for c in range(1, r + 1) for l in range(r + 1, d + 1)]
        else:
            names += [f"a{k}_{l}" for k in range(1, d + 1) for l in range(1, d + 1)]
    else:
        r = min(2 * a, d)
        names += [f"s{i}_{j}" for i in range(1, r + 1) for j in range(i, r + 1)]
        if r < d:
            names += [f"k{c}_{l}" for c in range(1, r + 1) for l in range(r + 1, d + 1)]
    names += [f"v{m}_{l}" for m in range(1, d_out + 1) for l in range(1, d + 1)]
    if normalization == "chart":
        names.remove(names[0])  # b1_1, a1_1 or s1_1: equals A[1,1] (S[1,1]) in the chart
        names.remove("v1_1")
    return tuple(names)


Matrix = list[list[ModularPolynomial]]


def _chart_weights(
    ctx: Any, names: tuple[str, ...], d: int, d_out: int, a: int, tokens: int, prime: int
) -> tuple[Matrix, Matrix]:
    """``A`` and ``V`` as polynomials in the chart's unknowns (a name fixed by the normalization is 1)."""
    g: dict[str, ModularPolynomial] = dict(zip(names, ctx.gens()))
    one, zero = ctx.constant(1), ctx.constant(0)

    def var(name: str) -> ModularPolynomial:
        return g[name] if name in g else one

    def identity_and(r: int) -> Matrix:  # [I | K], r x d
        return [
            [(one if c == l else zero) if l <= r else var(f"k{c}_{l}") for l in range(1, d + 1)]
            for c in range(1, r + 1)
        ]

    if tokens >= 2:
        r = min(a, d)
        if r < d:
            Bm = [[var(f"b{k}_{c}") for c in range(1, r + 1)] for k in range(1, d + 1)]
            C = identity_and(r)
            A = [[sum((Bm[k][c] * C[c][l] for c in range(r)), zero) for l in range(d)] for k in range(d)]
        else:
            A = [[var(f"a{k}_{l}") for l in range(1, d + 1)] for k in range(1, d + 1)]
    else:
        r = min(2 * a, d)
        half = ctx.constant(pow(2, -1, prime))
        S0 = [[var(f"s{min(i, j)}_{max(i, j)}") for j in range(1, r + 1)] for i in range(1, r + 1)]
        # S = [I; K^T] S0 [I | K]: T = S0 [I | K] (r x d), S = [I | K]^T T
        IK = identity_and(r)
        T = [[sum((S0[c][e] * IK[e][l] for e in range(r)), zero) for l in range(d)] for c in range(r)]
        S = [[sum((IK[c][k] * T[c][l] for c in range(r)), zero) for l in range(d)] for k in range(d)]
        A = [[half * S[k][l] for l in range(d)] for k in range(d)]
    V = [[var(f"v{m}_{l}") for l in range(1, d + 1)] for m in range(1, d_out + 1)]
    return A, V


def system_memory(d: int, d_out: int, a: int, tokens: int, coords: str, normalization: str) -> MemoryEstimate:
    """What :func:`build_system` allocates at most, from the sizes alone (nothing is built).

    Each equation is a random linear form in the coordinates pulled back to
    the chart: at most (monomials of the entries of ``A`` or ``S``) x (the
    ``d' d`` entries of ``V``) terms, each a coefficient and a packed
    exponent vector (FLINT's ``nmod_mpoly``: at least 8 bits per variable),
    twice over while composing, plus about 40 bytes of text for msolve; the parametrization's
    coordinates as Python polynomials (about 400 bytes each) come first.
    """
    names = len(_chart_names(d, d_out, a, tokens, normalization))
    if tokens >= 2:
        r = min(a, d)
        a_monomials = d * d if r >= d else d * r + d * r * (d - r)
        coordinates = d_out * d * d * (d + 1) // 2 if coords == "reduced" else d_out * d * comb(d * tokens + 2, 3)
    else:
        r = min(2 * a, d)
        a_monomials = r * (r + 1) // 2 * (1 + r * (d - r)) ** 2
        coordinates = d_out * comb(d + 2, 3)
    terms = a_monomials * d_out * d
    equations = names
    # twice the packed size: FLINT's growth while composing (measured: within that of the peak resident size for
    # (6,3,3), (8,2,8), (10,4,5) with t = 2; above it for t = 1)
    per_term = 2 * (8 + 8 * -(-names // 8)) + 40
    return MemoryEstimate(
        400 * coordinates + equations * terms * per_term,
        {
            f"{equations:,} equations of up to {terms:,} terms in {names:,} unknowns": equations * terms * per_term,
            f"the {coordinates:,} coordinate polynomials": 400 * coordinates,
        },
    )


def build_system(
    d: int,
    d_out: int,
    a: int | None = None,
    tokens: int = 2,
    *,
    prime: int = DEFAULT_PRIME,
    seed: int = 0,
    normalization: str = "chart",
    coords: str | None = None,
    deadline: float | None = None,
    timeout: float | None = None,
) -> CountingSystem:
    """The counting system for one layer ``(d, d', a, t)``; ``coords`` defaults to reduced (``t >= 2``) / full
    (``t = 1``).

    Its memory (:func:`system_memory`) is checked before anything is built;
    past ``deadline`` (``_clock.now()``, the job's ``timeout`` seconds
    after it started) the building stops with :class:`MSolveTimeoutError`.
    """
    arch_formula = degree_formula(d, d_out, a, tokens)
    d, d_out, a, tokens = arch_formula.d, arch_formula.d_out, arch_formula.rank, arch_formula.tokens
    prime = _check_prime(prime)
    check_choice(normalization, "normalization", NORMALIZATIONS)
    if coords is None:
        coords = "reduced" if tokens >= 2 else "full"
    if coords == "reduced" and tokens < 2:
        raise InvalidArgumentError("coords='reduced' needs tokens >= 2")
    require_memory(
        system_memory(d, d_out, a, tokens, coords, normalization),
        f"the counting system of ({d},{d_out},{a}, t={tokens})",
        "count a smaller size (--method formula gives the degree of any size)",
    )
    label = f"building the counting system of ({d},{d_out},{a}, t={tokens})"

    def in_time() -> None:
        if deadline is not None and _clock.now() > deadline:
            raise MSolveTimeoutError(label, timeout if timeout is not None else 0.0)

    n = arch_formula.dimension
    names_t = _chart_names(d, d_out, a, tokens, normalization)
    equations, ambient = _equations(d, d_out, a, tokens, coords, normalization, prime, seed, n, names_t, in_time)
    texts = tuple(_to_text(f, names_t) for f in equations)
    if any(t == "0" for t in texts):
        raise InvalidArgumentError("a random linear form vanished identically: take another seed")
    return CountingSystem(
        d=d,
        d_out=d_out,
        rank=a,
        tokens=tokens,
        coords=coords,
        normalization=normalization,
        prime=prime,
        seed=seed,
        variables=names_t,
        polynomials=texts,
        dimension=n,
        ambient=ambient,
        max_degree=max(f.total_degree() for f in equations),
    )


@dataclass(frozen=True)
class DegreeCertificate:
    """A solution count next to the formula's ``degree * fiber``."""

    formula: DegreeFormula
    system: CountingSystem
    solutions: SolutionCount
    build_seconds: float

    @property
    def count(self) -> int | None:
        return self.solutions.count

    @property
    def agrees(self) -> bool:
        return self.count is not None and self.count == self.formula.count

    def to_dict(self) -> dict[str, Any]:
        s = self.system
        return {
            "d": s.d,
            "d_out": s.d_out,
            "rank": s.rank,
            "tokens": s.tokens,
            "coords": s.coords,
            "normalization": s.normalization,
            "prime": s.prime,
            "seed": s.seed,
            "shape": s.shape,
            "count": self.count,
            "distinct": self.solutions.distinct,
            "method": self.solutions.method,
            "formula_degree": self.formula.degree,
            "fiber": self.formula.fiber,
            "formula_count": self.formula.count,
            "agrees": self.agrees,
            "msolve_seconds": round(self.solutions.seconds, 3),
            "build_seconds": round(self.build_seconds, 3),
            "msolve": self.solutions.msolve,
        }

    def __str__(self) -> str:
        s = self.system
        return (
            f"(d, d', a, t) = ({s.d}, {s.d_out}, {s.rank}, {s.tokens}): {self.count} solutions "
            f"(formula {self.formula.degree} x {self.formula.fiber} = {self.formula.count}, "
            f"{'agrees' if self.agrees else 'DIFFERS'}), p = {s.prime}, seed = {s.seed}, "
            f"{self.solutions.seconds:.2f} s msolve"
        )


def certify_degree(
    d: int,
    d_out: int,
    a: int | None = None,
    tokens: int = 2,
    *,
    prime: int = DEFAULT_PRIME,
    seed: int = 0,
    normalization: str = "chart",
    method: str = "leading-ideal",
    linear_algebra: int = 44,
    timeout: float = 120.0,
    coords: str | None = None,
) -> DegreeCertificate:
    """Build the counting system and count its solutions with msolve (raises MSolveTimeoutError on timeout)."""
    t0 = time.perf_counter()
    deadline = _clock.now() + timeout
    system = build_system(
        d,
        d_out,
        a,
        tokens,
        prime=prime,
        seed=seed,
        normalization=normalization,
        coords=coords,
        deadline=deadline,
        timeout=timeout,
    )
    built = time.perf_counter() - t0
    left = deadline - _clock.now()
    label = f"degree ({system.d},{system.d_out},{system.rank},t={system.tokens})"
    if left <= 0:
        raise MSolveTimeoutError(label, timeout)
    sol = count_solutions(
        system.variables,
        system.polynomials,
        system.prime,
        method=method,
        timeout=left,
        linear_algebra=linear_algebra,
        label=label,
    )
    return DegreeCertificate(degree_formula(d, d_out, a, tokens), system, sol, built)


def m2_script(system: CountingSystem, strategy: str = "default") -> str:
    """A Macaulay2 script printing ``degree`` of the same system over ZZ/p (for timing comparisons).

    ``strategy``: ``"default"`` (``degree I``, Buchberger) or ``"F4"``
    (``groebnerBasis(I, Strategy => "F4")``, then the degree of the leading
    term ideal).
    """
    n = len(system.variables)
    ren = {v: f"x_{i}" for i, v in enumerate(system.variables)}
    import re

    pat = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
    polys = [pat.sub(lambda m: ren[m.group(0)], f) for f in system.polynomials]
    lines = [
        f"R = ZZ/{system.prime}[x_0..x_{n - 1}, MonomialOrder => GRevLex];",
        "I = ideal(" + ",\n  ".join(polys) + ");",
    ]
    if strategy == "F4":
        lines += ['G = groebnerBasis(I, Strategy => "F4");', "print degree ideal leadTerm G;"]
    elif strategy == "default":
        lines += ["print degree I;"]
    else:
        raise InvalidArgumentError(f"strategy={strategy!r}: must be 'default' or 'F4'")
    return "\n".join(lines) + "\n"
