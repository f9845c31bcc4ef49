"""Any polynomial model ``x: C^m -> C^n``, and its critical equations on a slice of its fibers.

docs/math/landscape.md (landscape-models).  A model is ``n`` polynomials ``x_1(theta), ..., x_n(theta)`` with
rational coefficients in ``m`` parameters: one lightning layer (:meth:`PolynomialModel.from_layer`, the reduced
coordinates in ``(A, V)``), a deep linear network (:meth:`PolynomialModel.deep_linear`, the entries of
``W_L ... W_1``), a linear convolutional network (:meth:`PolynomialModel.linear_convolutional`, the coefficients of
a product of polynomials), or anyone's (:func:`polynomial_model`: polynomials as text, or a Python function of the
parameters).  Its image's closure ``X`` is the *neuromanifold*; the squared loss ``(x - u)^T Q (x - u)`` (or
``x^T G x - 2 w^T x + c`` on data) is studied in the parameters.

**The slice.**  The generic fiber of ``x`` has dimension ``k = m - r`` (``r`` the generic rank of the Jacobian
``J``, the dimension of ``X``; computed exactly modulo a prime at a random point: a lower bound that is the value
with probability about ``1 - deg / p``).  The parameters are restricted to an affine subspace ``L`` of dimension
``r``: ``theta = theta_0 + B y`` (random, or the solutions of given linear *gauge* equations); a generic ``L``
meets the generic fiber in ``delta`` points (the *fiber degree*, counted), transversally.  On ``L`` the critical
equations of the loss are ``J_L(y)^T Q (x_L(y) - u) = 0`` (``r`` equations, ``r`` unknowns).  Where ``J_L`` has
full rank ``r``, ``x_L`` is a local isomorphism onto ``X`` and a solution is a critical point of the distance on
``X``; where it drops rank (the *ramification*: the critical locus of the parametrization, where whole families
of spurious solutions live) the solutions are removed with a Rabinowitsch variable ``s``: ``s h(y) = 1``,
``h = det(R J_L)`` for a random ``r x n`` matrix ``R`` (Cauchy–Binet: a random combination of the maximal minors
of ``J_L``; it vanishes on the ramification, and for a generic ``R`` at none of the finitely many solutions).  For
generic data every critical point of the distance on the smooth points of ``X`` has exactly ``delta`` preimages on
``L`` (Draisma et al. 2016: the critical points of generic data avoid any proper closed subset of ``X``), so
``ED degree = (solutions) / delta``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._checks import check_int, check_type
from .._errors import InvalidArgumentError
from .._exact import linalg
from .._models import Parametrization, check_one_layer
from .polytext import Bounded, Poly, parse_polynomial, to_poly

__all__ = ["PolynomialModel", "polynomial_model", "MAX_PARAMETERS"]

#: the largest number of parameters (and of coordinates) a model may have
MAX_PARAMETERS = 200


def _name_ok(name: str) -> bool:
    return (
        bool(name)
        and name[0].isascii()
        and name[0].isalpha()
        and all(c.isascii() and (c.isalnum() or c == "_") for c in name)
    )


@dataclass(frozen=True, eq=False)
class PolynomialModel:
    """``n`` polynomials with rational coefficients in ``m`` named parameters (exponent tuple -> coefficient)."""

    parameters: tuple[str, ...]
    polynomials: tuple[Poly, ...]
    name: str

    def __post_init__(self) -> None:
        """The fields checked by their types (:func:`polynomial_model` and the class methods build them right)."""
        how = "(build a model with polynomial_model)"
        check_type(self.parameters, "parameters", tuple, f"a tuple of names {how}")
        check_type(self.polynomials, "polynomials", tuple, f"a tuple of polynomials {how}")
        check_type(self.name, "name", str, "a string")
        for i, p in enumerate(self.parameters):
            check_type(p, f"parameters[{i}]", str, "a name")
        for i, f in enumerate(self.polynomials):
            check_type(f, f"polynomials[{i}]", dict, f"a polynomial (exponents -> coefficient) {how}")

    @property
    def m(self) -> int:
        return len(self.parameters)

    @property
    def n(self) -> int:
        return len(self.polynomials)

    @property
    def degree(self) -> int:
        return max((sum(e) for f in self.polynomials for e in f), default=0)

    def describe(self) -> str:
        return f"{self.name} ({self.m} parameters, {self.n} coordinates, degree {self.degree})"

    def evaluate(self, theta: Sequence[Any]) -> list[Any]:
        """``x(theta)`` (exact for exact input)."""
        if len(theta) != self.m:
            raise InvalidArgumentError(f"theta: {self.m} values expected (one per parameter), got {len(theta)}")
        out = []
        for f in self.polynomials:
            total: Any = 0
            for e, c in f.items():
                term: Any = c
                for v, k in zip(theta, e):
                    if k:
                        term = term * v**k
                total = total + term
            out.append(total)
        return out

    # ---------------------------------------------------------------- families
    @classmethod
    def from_layer(cls, arch: Architecture) -> PolynomialModel:
        """One plain lightning layer ``(d, d', a)``: its reduced coordinates (the coefficients of the quadrics
        ``(A_k . z)(V_m . z)``) in the entries of ``A`` (``a >= d``) or of ``A = P K`` (``P`` of size ``d x a``,
        ``K`` of size ``a x d``: rank ``<= a``) and ``V``.  Parameters ``a{k}_{l}`` (or ``p``, ``k``), ``v{m}_{l}``."""

        arch = check_one_layer(arch, what="PolynomialModel.from_layer")
        if arch.heads != 1 or arch.skip or arch.normalized or not arch.is_linear_attention:
            raise InvalidArgumentError(
                "PolynomialModel.from_layer: one plain lightning layer "
                "(one head, no skip connection, no softmax, no biases, no rotary positions)"
            )
        d, e = arch.widths
        a = min(arch.ranks[0], d)
        P = Parametrization(Architecture.single_layer(d, e, None, tokens=2), coords="reduced", params="AV")
        names_v = [f"v{m}_{l}" for m in range(1, e + 1) for l in range(1, d + 1)]
        if a >= d:
            names = [f"a{k}_{l}" for k in range(1, d + 1) for l in range(1, d + 1)] + names_v
            return cls(tuple(names), tuple(to_poly(f) for f in P.polynomials), f"lightning layer {arch.describe()}")
        names = (
            [f"p{k}_{c}" for k in range(1, d + 1) for c in range(1, a + 1)]
            + [f"k{c}_{l}" for c in range(1, a + 1) for l in range(1, d + 1)]
            + names_v
        )
        ctx = linalg.rational_polynomial_ring(names)
        g = dict(zip(names, ctx.gens()))
        A = [
            sum((g[f"p{k}_{c}"] * g[f"k{c}_{l}"] for c in range(1, a + 1)), ctx.constant(0))
            for k in range(1, d + 1)
            for l in range(1, d + 1)
        ]
        subs = A + [g[v] for v in names_v]
        polys = [to_poly(_compose_int(f, subs, ctx)) for f in P.polynomials]
        return cls(tuple(names), tuple(polys), f"lightning layer {arch.describe()}")

    @classmethod
    def deep_linear(cls, widths: Sequence[int]) -> PolynomialModel:
        """The linear network ``x -> W_L ... W_1 x`` with ``widths = (d_0, ..., d_L)``: the entries of the
        product (``d_L x d_0``, row by row) in the entries of ``W_i`` (``d_i x d_(i-1)``, parameters
        ``w{i}_{row}_{col}``)."""
        widths = _positive_ints(widths, "widths", at_least=2)
        names, mats = [], []
        for i in range(1, len(widths)):
            rows, cols = widths[i], widths[i - 1]
            mats.append([[f"w{i}_{r}_{c}" for c in range(1, cols + 1)] for r in range(1, rows + 1)])
            names += [n for row in mats[-1] for n in row]
        _check_size(len(names), "parameters")
        ctx = linalg.rational_polynomial_ring(names)
        g = dict(zip(names, ctx.gens()))
        P = [[g[n] for n in row] for row in mats[0]]
        for M in mats[1:]:
            P = [
                [sum((g[M[i][k]] * P[k][j] for k in range(len(P))), ctx.constant(0)) for j in range(len(P[0]))]
                for i in range(len(M))
            ]
        polys = [to_poly(f) for row in P for f in row]
        return cls(tuple(names), tuple(polys), f"deep linear network {'-'.join(map(str, widths))}")

    @classmethod
    def linear_convolutional(cls, filters: Sequence[int], strides: Sequence[int] | None = None) -> PolynomialModel:
        """The linear convolutional network with filter sizes ``k_1, ..., k_L`` and strides ``s_1, ..., s_L``
        (default 1; Kohn, Montúfar, Shahverdi, Trager 2023; Shahverdi 2024): its end-to-end filter is the
        coefficient vector of ``p_L(t^(S_L)) ... p_2(t^(S_2)) p_1(t)``, ``p_i(t) = sum_j w{i}_{j} t^(j-1)`` and
        ``S_i = s_1 ... s_(i-1)`` (the last stride never matters); with stride one, the convolution of the filters
        (``k_1 + ... + k_L - L + 1`` coordinates)."""
        ks = _positive_ints(filters, "filters", at_least=1)
        ss = (1,) * len(ks) if strides is None else _positive_ints(strides, "strides", at_least=len(ks))
        if len(ss) != len(ks):
            raise InvalidArgumentError(f"strides={list(ss)!r}: one per filter ({len(ks)}) expected")
        names = [f"w{i}_{j}" for i, k in enumerate(ks, 1) for j in range(1, k + 1)]
        _check_size(len(names), "parameters")
        ctx = linalg.rational_polynomial_ring(names)
        g = dict(zip(names, ctx.gens()))
        prod: list[Any] = [ctx.constant(1)]
        step = 1
        for i, k in enumerate(ks, 1):
            w = [g[f"w{i}_{j}"] for j in range(1, k + 1)]
            out = [ctx.constant(0)] * (len(prod) + (k - 1) * step)
            for a_, pa in enumerate(prod):
                for b_, wb in enumerate(w):
                    out[a_ + b_ * step] = out[a_ + b_ * step] + pa * wb
            prod = out
            step *= ss[i - 1]
        _check_size(len(prod), "coordinates")
        stride = "stride 1" if set(ss) == {1} else f"strides {'-'.join(map(str, ss))}"
        return cls(
            tuple(names),
            tuple(to_poly(f) for f in prod),
            f"linear convolutional network, filters {'-'.join(map(str, ks))}, {stride}",
        )

    @staticmethod
    def regression_loss(inputs: Any, targets: Any) -> tuple[list[list[Fraction]], list[Fraction], Fraction]:
        """``(G, w, c)`` with ``sum_i |W x_i - y_i|^2 = vec(W)^T G vec(W) - 2 w^T vec(W) + c`` for a model whose
        coordinates are a ``d_out x d_in`` matrix ``W`` row by row (:meth:`deep_linear`): ``inputs`` ``N x d_in``,
        ``targets`` ``N x d_out`` (rows are samples; exact rationals, floats by their exact binary value)."""
        Xa, Ya = np.asarray(inputs, dtype=object), np.asarray(targets, dtype=object)
        if Xa.ndim != 2 or Ya.ndim != 2 or Xa.shape[0] != Ya.shape[0] or Xa.shape[0] == 0:
            raise InvalidArgumentError(
                f"inputs {Xa.shape} and targets {Ya.shape}: two matrices with one row per "
                "sample (the same number of rows, at least one) are expected"
            )
        try:
            X = [[Fraction(v) for v in row] for row in Xa]
            Y = [[Fraction(v) for v in row] for row in Ya]
        except (TypeError, ValueError, OverflowError) as exc:
            raise InvalidArgumentError(f"inputs/targets: not finite numbers ({exc})") from None
        din, dout = len(X[0]), len(Y[0])
        C = [[sum((x[a] * x[b] for x in X), Fraction(0)) for b in range(din)] for a in range(din)]
        G = [
            [C[a % din][b % din] if a // din == b // din else Fraction(0) for b in range(din * dout)]
            for a in range(din * dout)
        ]
        w = [sum((y[r] * x[col] for x, y in zip(X, Y)), Fraction(0)) for r in range(dout) for col in range(din)]
        c = sum((v * v for y in Y for v in y), Fraction(0))
        return G, w, c


def _positive_ints(values: Any, what: str, at_least: int) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise InvalidArgumentError(f"{what}={values!r}: a list of positive integers is expected")
    out = []
    for i, v in enumerate(values):
        out.append(check_int(v, f"{what}[{i}]", minimum=1))
    if len(out) < at_least:
        raise InvalidArgumentError(f"{what}={list(out)!r}: at least {at_least} expected")
    return tuple(out)


def _check_size(k: int, what: str) -> None:
    if k > MAX_PARAMETERS:
        raise InvalidArgumentError(f"{k} {what}: at most {MAX_PARAMETERS} (the symbolic routes would not finish)")


def _compose_int(f: Any, subs: Sequence[Any], ctx: Any) -> Any:
    total = ctx.constant(0)
    for e, c in f.to_dict().items():
        term = ctx.constant(int(c))
        for s, k in zip(subs, e):
            if k:
                term = term * s**k
        total += term
    return total


def polynomial_model(parameters: Any, polynomials: Any, *, name: str | None = None) -> PolynomialModel:
    """A model from its parameters and its coordinates.

    ``parameters``: names (a letter, then letters, digits or ``_``), or a count ``m`` (names ``t1, ..., tm``).
    ``polynomials``: a list of texts in the grammar of :func:`~ag_attention.ideal_ed_degree` (numbers, the
    parameters, ``+ - * / ^``, parentheses; a sympy expression's ``str`` qualifies), or a function: it is called
    once with a numpy object array of the parameters as exact polynomials (``+ - *``, ``**`` with non-negative
    integer exponents, ``/`` by a number, ``@`` of object arrays; constants ``int`` or ``fractions.Fraction``: a
    float is refused) and returns the coordinates (any nesting of lists or arrays, flattened in C order; numbers
    allowed).  Either way each product and power is sized before it is expanded: beyond a limit (a degree above
    10,000, more than 100,000 terms, ...: docs/manual/api.md, api-polynomial-text) it raises
    :class:`~ag_attention.InvalidArgumentError` naming the limit and the piece.

    >>> M = polynomial_model(["a", "b"], ["a*b", "a^2", "b^2"], name="a cone")
    >>> M.describe()
    'a cone (2 parameters, 3 coordinates, degree 2)'
    >>> polynomial_model(2, lambda t: [t[0] * t[1], t[0] ** 2]).parameters
    ('t1', 't2')
    """
    if isinstance(parameters, (int, np.integer)) and not isinstance(parameters, bool):
        if parameters < 1:
            raise InvalidArgumentError(f"parameters={parameters!r}: at least one parameter")
        _check_size(int(parameters), "parameters")
        names = tuple(f"t{i}" for i in range(1, int(parameters) + 1))
    elif isinstance(parameters, Sequence) and not isinstance(parameters, (str, bytes)) and parameters:
        names = tuple(parameters)
        for v in names:
            if not isinstance(v, str) or not _name_ok(v):
                raise InvalidArgumentError(f"parameters: {v!r} is not a name (a letter, then letters, digits or _)")
        if len(set(names)) != len(names):
            raise InvalidArgumentError(f"parameters: {sorted(v for v in names if names.count(v) > 1)[0]!r} is repeated")
        _check_size(len(names), "parameters")
    else:
        raise InvalidArgumentError(f"parameters={parameters!r}: a non-empty list of names or a positive count")
    if callable(polynomials):
        polys = _from_callable(polynomials, names)
    else:
        if isinstance(polynomials, (str, bytes)) or not isinstance(polynomials, Sequence) or not polynomials:
            raise InvalidArgumentError(
                f"polynomials: a non-empty list of polynomials (text) or a function is expected, got {polynomials!r}"
            )
        polys = []
        for i, f in enumerate(polynomials):
            if isinstance(f, bool) or not isinstance(f, (str, int, Fraction)) and not hasattr(f, "free_symbols"):
                raise InvalidArgumentError(f"polynomials[{i}] = {f!r}: a polynomial as text is expected")
            try:
                polys.append(parse_polynomial(str(f), names))
            except InvalidArgumentError as exc:  # a limit: said as it is
                raise InvalidArgumentError(f"polynomials[{i}]: {exc}") from None
            except ValueError as exc:
                raise InvalidArgumentError(
                    f"polynomials[{i}] = {str(f)!r} is not a polynomial in the parameters "
                    f"(numbers, parameters, + - * / ^, parentheses): {exc}"
                ) from None
    _check_size(len(polys), "coordinates")
    if all(set(f) <= {(0,) * len(names)} for f in polys):
        raise InvalidArgumentError("polynomials: every coordinate is constant (the image is a point)")
    return PolynomialModel(
        names, tuple(polys), name or f"model x({', '.join(names[:4])}" + (", ..." if len(names) > 4 else "") + ")"
    )


def _flatten(value: Any, out: list[Any], depth: int) -> None:
    """Lists, tuples and arrays flattened in C order; a polynomial is a leaf (numpy would read it as a sequence of
    its coefficients, so ``np.asarray`` is not used on it)."""
    if depth > 32:
        raise InvalidArgumentError("polynomials: the function's result is nested more than 32 deep")
    if isinstance(value, np.ndarray):
        for v in value.reshape(-1) if value.dtype == object else value.reshape(-1).tolist():
            _flatten(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _flatten(v, out, depth + 1)
    else:
        out.append(value)


class _Poly:
    """A parameter polynomial handed to a user's function: ``+ - *``, ``**`` (a non-negative integer), ``/`` by a
    nonzero number, with ints and ``Fraction`` on either side (python-flint alone refuses ``Fraction * poly``).
    Products and powers are sized before they are expanded (:class:`~.polytext.Bounded`: a limit raises
    :class:`~ag_attention.InvalidArgumentError` before FLINT is called)."""

    __slots__ = ("b",)
    __array_priority__ = 1000

    def __init__(self, b: Bounded) -> None:
        self.b = b

    @property
    def p(self) -> Any:
        return self.b.p

    def _of(self, x: Any) -> Bounded:
        if isinstance(x, _Poly):
            return x.b
        if isinstance(x, bool) or not isinstance(x, (int, Fraction, np.integer)):
            raise TypeError(f"{x!r} ({type(x).__name__}) is not exact: use int or fractions.Fraction")
        return Bounded.constant(self.p.context(), Fraction(int(x)) if isinstance(x, np.integer) else x)

    def _product(self, o: Bounded) -> Callable[[], str]:
        def what() -> str:
            return (
                f"polynomials: a product of polynomials of {self.b.terms:,} and {o.terms:,} terms "
                f"(degrees {self.b.degree:,} and {o.degree:,})"
            )

        return what

    def __add__(self, o: Any) -> _Poly:
        return _Poly(self.b.add(self._of(o)))

    __radd__ = __add__

    def __sub__(self, o: Any) -> _Poly:
        return _Poly(self.b.add(self._of(o), -1))

    def __rsub__(self, o: Any) -> _Poly:
        return _Poly(self._of(o).add(self.b, -1))

    def __mul__(self, o: Any) -> _Poly:
        other = self._of(o)
        return _Poly(self.b.mul(other, self._product(other)))

    __rmul__ = __mul__

    def __neg__(self) -> _Poly:
        return _Poly(self.b.neg())

    def __pos__(self) -> _Poly:
        return self

    def __truediv__(self, o: Any) -> _Poly:
        if isinstance(o, _Poly) or self._of(o).p.is_zero():
            raise TypeError("a polynomial may only be divided by a nonzero number")
        c = 1 / Fraction(int(o) if isinstance(o, np.integer) else o)
        return _Poly(self.b.scale(c, self._product(self._of(c))))

    def __pow__(self, k: Any) -> _Poly:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise TypeError(f"exponent {k!r}: a non-negative integer is expected")
        e = int(k)

        def what() -> str:
            t = self.b.terms
            return f"polynomials: p**{e:,} of a polynomial p of {t:,} term{'s' * (t != 1)} and degree {self.b.degree:,}"

        return _Poly(self.b.pow(e, what))


def _from_callable(f: Callable[[np.ndarray], Any], names: tuple[str, ...]) -> list[Poly]:
    ctx = linalg.rational_polynomial_ring(names)
    theta = np.empty(len(names), dtype=object)
    for i, g in enumerate(ctx.gens()):  # one by one: numpy would read a polynomial as a sequence of terms
        theta[i] = _Poly(Bounded(g, 2, True))
    try:
        out = f(theta)
    except InvalidArgumentError:  # a limit (:class:`_Poly`): said as it is
        raise
    except Exception as exc:  # the caller's function: its error is reported, named
        raise InvalidArgumentError(f"polynomials: the function raised {type(exc).__name__}: {exc}") from None
    flat: list[Any] = []
    _flatten(out, flat, 0)
    if not flat:
        raise InvalidArgumentError("polynomials: the function returned no coordinate")
    polys = []
    for i, v in enumerate(flat):
        if isinstance(v, (int, Fraction, np.integer)) and not isinstance(v, bool):
            polys.append({(0,) * len(names): Fraction(int(v)) if not isinstance(v, Fraction) else v} if v else {})
        elif isinstance(v, _Poly):
            polys.append(to_poly(v.p))
        else:
            raise InvalidArgumentError(
                f"polynomials: coordinate {i} returned by the function is {v!r} "
                f"({type(v).__name__}), not a polynomial in the parameters (floats are "
                "not exact: use fractions.Fraction)"
            )
    return polys
