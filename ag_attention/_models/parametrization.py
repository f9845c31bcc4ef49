"""Exact polynomial parametrization of one lightning layer.

docs/math/model.md (model-one-layer, model-reduced-coordinates) states it.

The coordinates of ``phi`` are integer polynomials in the weights
(:data:`ag_attention._flint.IntegerPolynomial`, python-flint's ``fmpz_mpoly``):

* **reduced coordinates** (``t >= 2``, Prop. A.5): the coefficients of the
  ``d x d'`` quadratic forms ``q_{k,m}(z) = (row_k(A) . z)(row_m(V) . z)`` in
  the monomials ``z_i z_j`` (``i <= j``): ``d d' d(d+1)/2`` coordinates, in
  the order ``(k, m, (i, j))``;
* **full coordinates**: the coefficients of every output coordinate
  ``(y_i)_m`` in the cubic monomials of the ``d t`` input variables, keeping
  the ones that are not identically zero.

Both are defined (keys, order, labels, values) in
:mod:`ag_attention._models.coordinates`; this class evaluates them on the
polynomial weights.

Weights: ``"AV"`` (variables ``a_(k,l)``, ``v_(m,l)``; with a rank bound
``a < d`` the domain is cut by the ``(a+1)``-minors of ``A``, see
:attr:`Parametrization.domain_equations`) or ``"QKV"`` (``q_(c,l)``,
``k_(c,l)``, ``v_(m,l)``, with ``A = Q^T K``).  Variable names are valid
Macaulay2 indexed variables, so polynomials print in a form Macaulay2 reads.
Indices are 1-based like the paper's.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .._architecture import Architecture, check_architecture
from .._checks import check_choice
from .._errors import InvalidArgumentError
from .._flint import IntegerNumber, IntegerPolynomial, IntegerPolynomialRing, integer_polynomial_ring
from .coordinates import (
    COORDINATES,
    check_one_layer,
    full_from_reduced,
    full_label,
    full_structure,
    quadratic_monomials,
    reduced_coordinates,
    reduced_keys,
    reduced_label,
)

__all__ = ["Parametrization", "COORDINATES", "PARAMETERS", "quadratic_monomials", "laplace_determinant"]

PARAMETERS = ("AV", "QKV")


@dataclass(frozen=True)
class Coordinate:
    """Meaning of one coordinate of the ambient space."""

    label: str  # human readable
    key: tuple[Any, ...]  # ("reduced", k, m, i, j) or ("full", i, m, monomial exponents)


class Parametrization:
    """The map from weights to the coordinates of ``phi`` for one layer.

    Parameters
    ----------
    arch:
        A single-layer architecture (``widths=(d, d')``).
    coords:
        ``"reduced"`` or ``"full"``.
    params:
        ``"AV"`` or ``"QKV"``; default: the architecture's parametrization.

    Examples
    --------
    >>> P = Parametrization(Architecture.single_layer(2, 1), "reduced")
    >>> P.ambient_dimension, len(P.variables)
    (6, 6)
    >>> str(P.polynomials[1])
    'a_(1,2)*v_(1,1) + a_(1,1)*v_(1,2)'
    """

    def __init__(self, arch: Architecture, coords: str = "reduced", params: str | None = None):
        arch = check_one_layer(check_architecture(arch), coords, "an exact polynomial parametrization")
        params = params or arch.parametrization
        check_choice(params, "params", PARAMETERS)
        self.arch = arch
        self.coords = coords
        self.params = params
        self.d, self.d_out = arch.widths
        self.rank_bound = min(arch.ranks[0], self.d)
        self.tokens = arch.tokens

    # ---------------------------------------------------------- variables
    @cached_property
    def variables(self) -> tuple[str, ...]:
        d, e, a = self.d, self.d_out, self.arch.ranks[0]
        names: list[str] = []
        if self.params == "AV":
            names += [f"a_({k},{l})" for k in range(1, d + 1) for l in range(1, d + 1)]
        else:
            names += [f"q_({c},{l})" for c in range(1, a + 1) for l in range(1, d + 1)]
            names += [f"k_({c},{l})" for c in range(1, a + 1) for l in range(1, d + 1)]
        names += [f"v_({m},{l})" for m in range(1, e + 1) for l in range(1, d + 1)]
        return tuple(names)

    @cached_property
    def ring(self) -> IntegerPolynomialRing:
        return integer_polynomial_ring(self.variables, "degrevlex")

    @cached_property
    def gens(self) -> dict[str, IntegerPolynomial]:
        return dict(zip(self.variables, self.ring.gens()))

    def matrix(self, name: str) -> list[list[IntegerPolynomial]]:
        """The weight matrix ``name`` in ``{"A", "V", "Q", "K"}`` as polynomials."""
        g = self.gens
        d, e, a = self.d, self.d_out, self.arch.ranks[0]
        if name == "V":
            return [[g[f"v_({m},{l})"] for l in range(1, d + 1)] for m in range(1, e + 1)]
        if name in ("Q", "K"):
            if self.params != "QKV":
                raise InvalidArgumentError(f"{name} is not a weight of the AV parametrization")
            s = name.lower()
            return [[g[f"{s}_({c},{l})"] for l in range(1, d + 1)] for c in range(1, a + 1)]
        if name == "A":
            if self.params == "AV":
                return [[g[f"a_({k},{l})"] for l in range(1, d + 1)] for k in range(1, d + 1)]
            Q, K = self.matrix("Q"), self.matrix("K")
            zero = self.ring.constant(0)
            return [[sum((Q[c][k] * K[c][l] for c in range(a)), zero) for l in range(d)] for k in range(d)]
        raise InvalidArgumentError(f"unknown weight matrix {name!r}")

    # -------------------------------------------------------- coordinates
    @cached_property
    def reduced(self) -> tuple[list[Coordinate], list[IntegerPolynomial]]:
        keys = reduced_keys(self.d, self.d_out)
        coords = [Coordinate(reduced_label(key), ("reduced", *key)) for key in keys]
        return coords, reduced_coordinates(self.matrix("A"), self.matrix("V"))

    @cached_property
    def _full_structure(self) -> tuple[list[Coordinate], np.ndarray]:
        """Full coordinates and the integer matrix ``L`` with ``full = L . reduced``
        (:func:`ag_attention._models.coordinates.full_structure`)."""
        keys, L = full_structure(self.d, self.d_out, self.tokens)
        return [Coordinate(full_label(key, self.d), ("full", *key)) for key in keys], L

    @cached_property
    def full(self) -> tuple[list[Coordinate], list[IntegerPolynomial]]:
        """Coefficients of ``(y_i)_m`` in the cubic monomials of the inputs ``x_(j,l)``.

        Every one of them is a non-negative integer combination of reduced
        coordinates, none identically zero.
        """
        coords = self._full_structure[0]
        polys = full_from_reduced(self.reduced[1], self.d, self.d_out, self.tokens)
        return coords, polys

    @property
    def coordinates(self) -> list[Coordinate]:
        return (self.reduced if self.coords == "reduced" else self.full)[0]

    @property
    def polynomials(self) -> list[IntegerPolynomial]:
        return (self.reduced if self.coords == "reduced" else self.full)[1]

    @property
    def ambient_dimension(self) -> int:
        return len(self.polynomials)

    @cached_property
    def domain_equations(self) -> list[IntegerPolynomial]:
        """``(a+1)``-minors of ``A`` when the AV parametrization carries a rank bound ``a < d``."""
        if self.params != "AV" or self.rank_bound >= self.d:
            return []
        A = self.matrix("A")
        r = self.rank_bound + 1
        out = []
        for rows in itertools.combinations(range(self.d), r):
            for cols in itertools.combinations(range(self.d), r):
                out.append(laplace_determinant([[A[i][j] for j in cols] for i in rows], self.ring.constant(0)))
        return out

    # ------------------------------------------------------------- linear map
    def full_from_reduced(self) -> np.ndarray:
        """Integer matrix ``L`` with ``full = L . reduced`` (docs/math/model.md (model-full-from-reduced)).

        For ``t >= 2`` each reduced coordinate is itself a full coordinate
        (the ``x_1[k] x_2^alpha`` terms of ``y_1``), so ``L`` has a left inverse.
        """
        L: np.ndarray = self._full_structure[1].copy()
        return L

    # ------------------------------------------------------------ evaluation
    def evaluate(self, point: Sequence[int]) -> list[int]:
        """Integer values of the coordinates at an integer weight vector."""
        vals = [IntegerNumber(int(v)) for v in point]
        return [int(f(*vals)) for f in self.polynomials]

    def jacobian_mod(self, point: Sequence[int], p: int) -> np.ndarray:
        """Jacobian matrix (coordinates x variables) at ``point``, entries mod ``p``."""
        vals = [IntegerNumber(int(v)) for v in point]
        n = len(self.variables)
        J = np.zeros((self.ambient_dimension, n), dtype=np.int64)
        for r, f in enumerate(self.polynomials):
            for c in range(n):
                df = f.derivative(c)
                if not df.is_zero():
                    J[r, c] = int(df(*vals)) % p
        return J

    def weights_vector(self, **mats: np.ndarray) -> list[int]:
        """Flatten weight matrices (``A=..., V=...`` or ``Q=..., K=..., V=...``) in variable order."""
        order = ["A", "V"] if self.params == "AV" else ["Q", "K", "V"]
        missing = [m for m in order if m not in mats]
        if missing:
            raise InvalidArgumentError(f"missing weight matrices {missing} for the {self.params} parametrization")
        out: list[int] = []
        for name in order:
            M = np.asarray(mats[name], dtype=object)
            want = (len(self.matrix(name)), self.d)
            if M.shape != want:
                raise InvalidArgumentError(f"{name} has shape {M.shape}, expected {want}")
            out += [int(v) for v in M.ravel()]
        return out

    def __repr__(self) -> str:
        return (
            f"Parametrization({self.arch.describe()}, coords={self.coords!r}, params={self.params!r}, "
            f"{len(self.variables)} variables -> {self.ambient_dimension} coordinates)"
        )


def laplace_determinant(M: list[list[Any]], zero: Any) -> Any:
    """The determinant of a square matrix of polynomials (any ring with ``*``, ``+``, ``-``), by Laplace expansion
    along the first row: for the small minors of the parametrizations and the loss landscape."""
    n = len(M)
    if n == 1:
        return M[0][0]
    total = zero
    for j in range(n):
        minor = [row[:j] + row[j + 1 :] for row in M[1:]]
        term = M[0][j] * laplace_determinant(minor, zero)
        total = total + term if j % 2 == 0 else total - term
    return total
