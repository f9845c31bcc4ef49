"""A model's critical equations on a slice of its fibers, the fiber degree, and what is removed: the systems of
:mod:`.models` (the mathematics: :mod:`.model`'s docstring, docs/math/landscape.md landscape-models).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _clock
from .._checks import check_int, check_seconds
from .._errors import ComputationTimeoutError, InvalidArgumentError, MSolveTimeoutError
from .._exact import linalg
from . import polytext
from .model import PolynomialModel
from .polytext import Poly, parse_polynomial
from .system import polynomial_text

__all__ = [
    "check_model",
    "check_common",
    "time_left",
    "slice_for",
    "Slice",
    "ModelSystem",
    "model_system",
    "fiber_system",
    "identity_slice",
    "parse_exclusions",
    "generic_rank",
    "random_slice",
    "gauge_slice",
    "bareiss_determinant",
    "MAX_TERMS",
    "check_slice_size",
]

#: the largest number of terms ``h = det(R J_L)`` may have (a bound computed before it is built)
MAX_TERMS = 100_000


@dataclass(frozen=True)
class Slice:
    """``theta = base + directions @ y``: an affine subspace of the parameters, of dimension ``len(directions[0])``
    (exact rationals, or residues mod a prime); ``gauge`` the equations it was given by (empty: random)."""

    base: tuple[Any, ...]
    directions: tuple[tuple[Any, ...], ...]  # m rows, r columns
    gauge: tuple[str, ...] = ()


def _jacobian_mod(model: PolynomialModel, point: Sequence[int], p: int) -> np.ndarray:
    """``J`` at ``point`` modulo ``p`` (``n x m`` int64)."""
    J = np.zeros((model.n, model.m), dtype=np.int64)
    for i, f in enumerate(model.polynomials):
        for e, c in f.items():
            cm = c.numerator % p * pow(c.denominator, -1, p) % p
            for j, k in enumerate(e):
                if k:
                    v = cm * k % p
                    for jj, kk in enumerate(e):
                        if kk:
                            v = v * pow(point[jj], kk - (jj == j), p) % p
                    J[i, j] = (J[i, j] + v) % p
    return J


def generic_rank(model: PolynomialModel, p: int, rng: random.Random) -> int:
    """The rank of ``J`` at a random point modulo ``p``: the dimension of ``X`` with high probability (never more)."""
    point = [rng.randrange(p) for _ in range(model.m)]
    return int(linalg.rank(_jacobian_mod(model, point, p), p))


def random_slice(model: PolynomialModel, r: int, rng: random.Random, p: int) -> Slice:
    """A random affine subspace of dimension ``r`` (residues mod ``p``; ``p = 0``: small integers, so that the
    rational system stays small)."""

    def draw() -> int:
        return rng.randrange(p) if p else rng.randint(-9, 9)

    return Slice(tuple(draw() for _ in range(model.m)), tuple(tuple(draw() for _ in range(r)) for _ in range(model.m)))


def _parameter_polynomial(model: PolynomialModel, text: Any, what: str, expected: str) -> Poly:
    """``text`` parsed in the model's parameters, or an error naming ``what``."""
    if not isinstance(text, str):
        raise InvalidArgumentError(f"{what} = {text!r}: {expected} is expected")
    try:
        return parse_polynomial(text, model.parameters)
    except InvalidArgumentError as exc:  # a limit: said as it is
        raise InvalidArgumentError(f"{what}: {exc}") from None
    except ValueError as exc:
        raise InvalidArgumentError(f"{what} = {text!r} is not a polynomial in the parameters: {exc}") from None


def gauge_slice(model: PolynomialModel, gauge: Sequence[str]) -> Slice:
    """The affine subspace given by linear equations in the parameters (exact, over QQ)."""
    rows = []
    for i, g in enumerate(gauge):
        poly = _parameter_polynomial(model, g, f"gauge[{i}]", "a linear equation (text)")
        if any(sum(e) > 1 for e in poly):
            raise InvalidArgumentError(f"gauge[{i}] = {g!r} is not linear in the parameters")
        row = [poly.get(tuple(int(j == k) for j in range(model.m)), Fraction(0)) for k in range(model.m)]
        if not any(row):
            raise InvalidArgumentError(f"gauge[{i}] = {g!r} has no parameter")
        rows.append(row + [-poly.get((0,) * model.m, Fraction(0))])
    R, rank = linalg.rref_rational(rows)
    if rank < len(rows):
        raise InvalidArgumentError(f"gauge: the {len(rows)} equations are dependent (rank {rank})")
    pivots = [next(j for j, v in enumerate(row) if v) for row in R[:rank]]
    if model.m in pivots:
        raise InvalidArgumentError("gauge: the equations have no common solution")
    free = [j for j in range(model.m) if j not in pivots]
    base = [Fraction(0)] * model.m
    for row, piv in zip(R, pivots):
        base[piv] = Fraction(row[model.m])
    dirs = [[Fraction(0)] * len(free) for _ in range(model.m)]
    for c, j in enumerate(free):
        dirs[j][c] = Fraction(1)
        for row, piv in zip(R, pivots):
            dirs[piv][c] = -Fraction(row[j])
    return Slice(tuple(base), tuple(tuple(r) for r in dirs), tuple(gauge))


@dataclass(frozen=True)
class ModelSystem:
    """The critical equations of a loss on a slice (module docstring), as text for msolve."""

    variables: tuple[str, ...]  # y1, ..., yr, then s
    polynomials: tuple[str, ...]
    prime: int  # 0: over QQ
    slice: Slice
    loss: Any = None  # over QQ: the loss as a polynomial in y1..yr (python-flint), for the Hessians


class _SliceRing:
    """The model restricted to a slice, as python-flint polynomials in ``y1..yr`` (and ``s``)."""

    def __init__(self, model: PolynomialModel, sl: Slice, p: int) -> None:
        r = len(sl.directions[0]) if sl.directions else 0
        self.r, self.p = r, p
        self.names = tuple(f"y{j}" for j in range(1, r + 1)) + ("s",)
        self.ctx: Any
        if p:
            self.ctx = linalg.modular_polynomial_ring(self.names, p)
        else:
            self.ctx = linalg.rational_polynomial_ring(self.names)
        gens = self.ctx.gens()
        self.y, self.s = gens[:r], gens[r]
        theta = [
            self.scalar(b) + sum((self.scalar(row[c]) * self.y[c] for c in range(r) if row[c]), self.ctx.constant(0))
            for b, row in zip(sl.base, sl.directions)
        ]
        self.theta = theta
        src: Any = (
            linalg.modular_polynomial_ring(model.parameters, p)
            if p
            else linalg.rational_polynomial_ring(model.parameters)
        )
        self.src = src
        self.model, self.slice = model, sl
        check_slice_size(model, sl, p)
        self.x: list[Any] = []
        for f in model.polynomials:
            if p:
                g = src.from_dict({e: c.numerator % p * pow(c.denominator, -1, p) % p for e, c in f.items()})
            else:
                g = src.from_dict({e: linalg.rational(c) for e, c in f.items()})
            self.x.append(g.compose(*theta, ctx=self.ctx) if f else self.ctx.constant(0))
        self.J = [[xi.derivative(c) for c in range(r)] for xi in self.x]

    def scalar(self, c: Any) -> Any:
        c = Fraction(c)
        if self.p:
            return self.ctx.constant(c.numerator % self.p * pow(c.denominator % self.p, -1, self.p) % self.p)
        return self.ctx.constant(linalg.rational(c))

    def restrict(self, f: Poly) -> Any:
        """A polynomial in the model's parameters, restricted to the slice."""
        p = self.p
        if p:
            g = self.src.from_dict({e: c.numerator % p * pow(c.denominator, -1, p) % p for e, c in f.items()})
        else:
            g = self.src.from_dict({e: linalg.rational(c) for e, c in f.items()})
        return g.compose(*self.theta, ctx=self.ctx) if f else self.ctx.constant(0)

    def removal(self, remove: Any, rng: random.Random, end: float | None) -> Any:
        """The polynomial ``h`` of ``s h = 1``: the ramification's (``"ramification"``), the product of the given
        polynomials (``exclude``: a list of :data:`Poly`), or None (nothing removed)."""
        if isinstance(remove, str):
            h = self.ramification(rng, end)
            if h == self.ctx.constant(0):
                raise InvalidArgumentError(
                    f"the parametrization restricted to the slice has rank < {self.r} "
                    "everywhere: the gauge is not transversal to the fibers (or the random "
                    "slice is special: another seed)"
                )
            return h
        if not remove:
            return None
        check_slice_size(self.model, self.slice, self.p, remove)
        h = self.ctx.constant(1)
        for f in remove:
            h = h * self.restrict(f)
        if h == self.ctx.constant(0):
            raise InvalidArgumentError("exclude: a polynomial vanishes on the whole slice (nothing would be left)")
        return h

    def ramification(self, rng: random.Random, end: float | None = None) -> Any:
        """``h = det(R J_L)`` for a random ``R`` (module docstring), or an error when it would be too large."""
        r, n = self.r, len(self.x)
        deg = max((f.total_degree() for row in self.J for f in row), default=0)
        terms = math.comb(r + r * max(deg, 0), r)
        if terms > MAX_TERMS:
            raise InvalidArgumentError(
                f"the ramification polynomial det(R J) of this model on its slice could have "
                f"{terms:,} terms (r = {r}, entries of degree {deg}; limit {MAX_TERMS:,}): "
                "too large for the symbolic route; use method='implicit' or a smaller model"
            )
        Rm = [[rng.randrange(1, self.p) if self.p else rng.randint(1, 99) for _ in range(n)] for _ in range(r)]
        M = [
            [
                sum(
                    (self.scalar(Rm[a][i]) * self.J[i][c] for i in range(n) if not self.J[i][c].is_zero()),
                    self.ctx.constant(0),
                )
                for c in range(r)
            ]
            for a in range(r)
        ]
        return bareiss_determinant(M, self.ctx.constant(0), self.ctx.constant(1), end)


def _entry_bits(sl: Slice, p: int) -> int:
    """The bits of the slice's coefficients (a residue mod ``p``, or exact rationals for ``p = 0``)."""
    entries = [Fraction(c) for row in (sl.base, *sl.directions) for c in row]
    return 31 if p else max((c.numerator.bit_length() + c.denominator.bit_length() for c in entries), default=1)


def _on_slice(f: Poly, r: int, entry: int, p: int, widths: Sequence[int]) -> tuple[int, int, int]:
    """``(terms, degree, bits)``: upper bounds for ``f`` restricted to a slice of dimension ``r`` whose
    coefficients have ``entry`` bits, parameter ``j`` becoming a polynomial of ``widths[j]`` terms (so that
    ``theta_j^k`` has at most ``C(widths[j] - 1 + k, k)`` terms, and a monomial of degree ``k`` at most
    ``C(r + k, r)``)."""
    if not f:
        return 0, 0, 0
    d = max(sum(e) for e in f)
    powers: dict[tuple[int, int], int] = {}
    total = 0
    for e in f:
        one = polytext.monomials(r, sum(e))
        prod = 1
        for j, k in enumerate(e):
            if k and prod <= one:
                if (j, k) not in powers:
                    powers[j, k] = polytext.monomials(widths[j], k, True) if widths[j] else 0
                prod *= powers[j, k]
        total += min(one, prod)
    terms = min(polytext.monomials(r, d), total)
    own = max(c.numerator.bit_length() + c.denominator.bit_length() for c in f.values())
    return terms, d, 31 if p else own + len(f).bit_length() + d * (entry + (r + 1).bit_length())


def check_slice_size(model: PolynomialModel, sl: Slice, p: int, exclusions: Sequence[Poly] = ()) -> None:
    """Refuse, before FLINT composes them, coordinates whose restriction to the slice ``sl`` (an affine substitution
    of the parameters: dense in general), their squared loss or the product of the ``exclusions`` on the slice
    that would be beyond the limits of :mod:`.polytext` (the slice's coefficients residues mod ``p``, or exact
    over QQ for ``p = 0``)."""
    r = len(sl.directions[0]) if sl.directions else 0
    if r == 0:
        return
    entry = _entry_bits(sl, p)
    widths = [int(b != 0) + sum(1 for c in row if c) for b, row in zip(sl.base, sl.directions)]
    largest = (0, 0, 0)  # (terms, degree, bits) of the largest coordinate on the slice
    every = 0  # the terms of all coordinates on the slice
    for i, f in enumerate(model.polynomials):
        terms, d, bits = _on_slice(f, r, entry, p, widths)

        def what(i: int = i, d: int = d) -> str:
            return f"{model.name}: coordinate {i} (degree {d}) restricted to a slice of dimension {r}"

        polytext.check_size(what, terms, d, bits)
        largest = max(largest, (terms, d, bits))
        every += terms
    terms, d, bits = largest
    polytext.check_size(  # sum Q_ij x_i x_j - 2 u^T x + c (+ a regularization's r squares)
        lambda: f"{model.name}: the squared loss on a slice of dimension {r} (degree {2 * d})",
        min(polytext.monomials(r, 2 * d), every * every + every + r + 1),
        2 * d,
        31 if p else 2 * bits + terms.bit_length() + 8,
        every * every,
    )
    if exclusions:
        sizes = [_on_slice(f, r, entry, p, widths) for f in exclusions]
        degree = sum(d for _, d, _ in sizes)
        most = max(t for t, _, _ in sizes)
        product = min(math.prod(t for t, _, _ in sizes), polytext.monomials(r, degree))
        polytext.check_size(
            lambda: f"exclude: the product of the {len(sizes)} polynomials on a slice of dimension {r}",
            product,
            degree,
            31 if p else sum(b + t.bit_length() for t, _, b in sizes),
            product * most,
        )


def bareiss_determinant(M: list[list[Any]], zero: Any, one: Any, end: float | None = None) -> Any:
    """The determinant of a square matrix of polynomials, fraction-free (Bareiss: every division exact); a
    :class:`~ag_attention.ComputationTimeoutError` once ``_clock.now()`` passes ``end``."""
    n = len(M)
    if n == 0:
        return one
    M = [row[:] for row in M]
    sign, prev = 1, one
    for k in range(n - 1):
        if M[k][k] == zero:
            swap = next((i for i in range(k + 1, n) if M[i][k] != zero), None)
            if swap is None:
                return zero
            M[k], M[swap] = M[swap], M[k]
            sign = -sign
        for i in range(k + 1, n):
            if end is not None and _clock.now() > end:
                raise ComputationTimeoutError(f"building the ramification polynomial (a {n} x {n} determinant)", 0.0)
            for j in range(k + 1, n):
                M[i][j] = (M[i][j] * M[k][k] - M[i][k] * M[k][j]) / prev
        prev = M[k][k]
    return M[n - 1][n - 1] if sign > 0 else -M[n - 1][n - 1]


def model_system(
    model: PolynomialModel,
    sl: Slice,
    Q: Sequence[Sequence[Any]],
    u: Sequence[Any],
    *,
    prime: int,
    rng: random.Random,
    constant: Any = 0,
    end: float | None = None,
    remove: Any = "ramification",
    regularization: Sequence[Any] | None = None,
) -> ModelSystem:
    """``J_L^T (Q x_L - u) = 0, s h = 1`` on the slice ``sl`` (``Q``, ``u`` exact or residues mod ``prime``): the
    critical points of ``x^T Q x - 2 u^T x`` (for the distance to ``u'`` take ``u = Q u'``).  ``remove``:
    ``"ramification"``, or polynomials (:data:`Poly` in the model's parameters) that must not vanish, or ``()``.
    ``regularization``: weights ``lambda_j`` adding ``sum_j lambda_j theta_j^2`` to the loss (then ``sl`` is
    usually the identity: every parameter free)."""
    S = _SliceRing(model, sl, prime)
    n = len(S.x)
    zero = S.ctx.constant(0)
    quad = sum((S.scalar(Q[i][j]) * S.x[i] * S.x[j] for i in range(n) for j in range(n) if Q[i][j]), zero)
    loss = quad - sum((S.scalar(2 * Fraction(u[i])) * S.x[i] for i in range(n) if u[i]), zero) + S.scalar(constant)
    if regularization is not None:
        loss = loss + sum((S.scalar(lam) * t * t for lam, t in zip(regularization, S.theta) if lam), zero)
    eqs = [loss.derivative(c) for c in range(S.r)]
    h = S.removal(remove, rng, end)
    names = S.names
    if h is None:
        names = names[:-1]
        ctx = linalg.modular_polynomial_ring(names, prime) if prime else linalg.rational_polynomial_ring(names)
        eqs = [f.compose(*(ctx.gens()[: S.r] + (ctx.constant(0),)), ctx=ctx) for f in eqs]
        if not prime:
            loss = loss.compose(*(ctx.gens()[: S.r] + (ctx.constant(0),)), ctx=ctx)
    else:
        eqs.append(S.s * h - S.ctx.constant(1))
    return ModelSystem(names, tuple(polynomial_text(f, names) for f in eqs), prime, sl, None if prime else loss)


def fiber_system(
    model: PolynomialModel, sl: Slice, *, prime: int, rng: random.Random, end: float | None = None
) -> ModelSystem:
    """``x_L(y) = x_L(y*)``, ``s h = 1`` for a random ``y*``: its solutions are the fiber through ``y*`` on the
    slice (their number is the fiber degree ``delta``)."""
    S = _SliceRing(model, sl, prime)
    point = [rng.randrange(prime) for _ in range(S.r)] + [0]
    eqs = [xi - S.scalar(int(xi(*point))) for xi in S.x]
    eqs = [f for f in eqs if not f.is_zero()]
    h = S.ramification(rng, end)
    eqs.append(S.s * h - S.ctx.constant(1))
    return ModelSystem(S.names, tuple(polynomial_text(f, S.names) for f in eqs), prime, sl)


def parse_exclusions(model: PolynomialModel, exclude: Any) -> Any:
    """``exclude`` checked: ``"ramification"``, ``"torus"`` (every parameter nonzero), ``"none"``, or a list of
    polynomials (text in the parameters) that must not vanish; the list as :data:`Poly`, or the string."""
    if isinstance(exclude, str):
        if exclude == "ramification":
            return exclude
        if exclude == "none":
            return ()
        if exclude == "torus":
            return tuple({tuple(int(i == j) for i in range(model.m)): Fraction(1)} for j in range(model.m))
        raise InvalidArgumentError(f"exclude={exclude!r}: 'ramification', 'torus', 'none' or a list of polynomials")
    if not isinstance(exclude, Sequence):
        raise InvalidArgumentError(f"exclude={exclude!r}: 'ramification', 'torus', 'none' or a list of polynomials")
    out = []
    for i, f in enumerate(exclude):
        poly = _parameter_polynomial(model, f, f"exclude[{i}]", "a polynomial (text)")
        if not poly:
            raise InvalidArgumentError(f"exclude[{i}] = {f!r} is zero: it vanishes everywhere")
        out.append(poly)
    return tuple(out)


def identity_slice(model: PolynomialModel) -> Slice:
    """Every parameter free (``theta = y``)."""
    return Slice(
        tuple(0 for _ in range(model.m)), tuple(tuple(int(i == j) for j in range(model.m)) for i in range(model.m))
    )


def check_model(model: Any, what: str) -> PolynomialModel:
    """``model`` if it is a :class:`~.model.PolynomialModel`, else an error naming ``what``."""
    if not isinstance(model, PolynomialModel):
        raise InvalidArgumentError(
            f"{what}: model={model!r} is not a PolynomialModel (make one with "
            "polynomial_model, PolynomialModel.from_layer, .deep_linear or "
            ".linear_convolutional)"
        )
    return model


def check_common(seed: Any, timeout: Any, gauge: Any) -> tuple[int, float, tuple[str, ...]]:
    """``(seed, timeout, gauge)`` checked: the arguments :mod:`.models`' two functions share."""
    seed = check_int(seed, "seed", minimum=0)
    if gauge is None:
        return seed, check_seconds(timeout), ()
    if isinstance(gauge, str) or not isinstance(gauge, Sequence):
        raise InvalidArgumentError(f"gauge={gauge!r}: a list of linear equations (text) is expected")
    return seed, check_seconds(timeout), tuple(gauge)


def time_left(end: float, label: str) -> float:
    """The seconds left before ``end`` (``time.monotonic``), or a timeout naming ``label`` when under one."""
    left = end - _clock.now()
    if left < 1.0:
        raise MSolveTimeoutError(label, max(0.0, left))
    return left


def slice_for(model: PolynomialModel, gauge: tuple[str, ...], r: int, rng: random.Random, p: int) -> Slice:
    """The slice of the ``r``-dimensional image: random (modulo ``p``; ``p = 0``: over QQ), or ``gauge``'s."""
    if not gauge:
        return random_slice(model, r, rng, p)
    sl = gauge_slice(model, gauge)
    free = len(sl.directions[0]) if sl.directions else 0
    if free != r:
        raise InvalidArgumentError(
            f"gauge: leaves {free} free parameters, but the image has dimension {r}: a gauge "
            f"must fix the {model.m - r}-dimensional fibers with exactly {model.m - r} "
            "independent linear equations"
        )
    return sl
