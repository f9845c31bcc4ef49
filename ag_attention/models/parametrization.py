"""Exact polynomial parametrization of one lightning layer (docs/math/model.md (model-one-layer, model-reduced-coordinates)).

The coordinates of ``phi`` are integer polynomials in the weights
(:data:`ag_attention.exact.linalg.IntegerPolynomial`, python-flint's ``fmpz_mpoly``):

* **reduced coordinates** (``t >= 2``, Prop. A.5): the coefficients of the
  ``d x d'`` quadratic forms ``q_{k,m}(z) = (row_k(A) . z)(row_m(V) . z)`` in
  the monomials ``z_i z_j`` (``i <= j``): ``d d' d(d+1)/2`` coordinates, in
  the order ``(k, m, (i, j))``;
* **full coordinates**: the coefficients of every output coordinate
  ``(y_i)_m`` in the cubic monomials of the ``d t`` input variables, keeping
  the ones that are not identically zero.

Weights: ``"AV"`` (variables ``a_(k,l)``, ``v_(m,l)``; with a rank bound
``a < d`` the domain is cut by the ``(a+1)``-minors of ``A``, see
:attr:`Parametrization.domain_equations`) or ``"QKV"`` (``q_(c,l)``,
``k_(c,l)``, ``v_(m,l)``, with ``A = Q^T K``).  Variable names are valid
Macaulay2 indexed variables, so polynomials print in a form Macaulay2 reads.
Indices are 1-based like the paper's.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from ..architecture import Architecture
from ..errors import InvalidArgumentError
from ..exact import linalg
from ..exact.linalg import IntegerPolynomial

__all__ = ["Parametrization", "COORDINATES", "PARAMETERS", "quadratic_monomials"]

COORDINATES = ("reduced", "full")
PARAMETERS = ("AV", "QKV")


def quadratic_monomials(d: int) -> list[tuple[int, int]]:
    """``(i, j)``, ``0 <= i <= j < d``: the monomials ``z_i z_j`` in a fixed order."""
    return [(i, j) for i in range(d) for j in range(i, d)]


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
        if not isinstance(arch, Architecture):
            raise InvalidArgumentError(f"arch={arch!r}: must be an Architecture")
        if arch.depth != 1:
            raise InvalidArgumentError(
                f"widths={arch.widths}: exact parametrizations are for one layer (use the dimension engine for deep networks)"
            )
        if not arch.is_lightning or not arch.is_plain:
            raise InvalidArgumentError(
                f"architecture {arch.describe()}: polynomial parametrizations are for one plain lightning layer"
            )
        if coords not in COORDINATES:
            raise InvalidArgumentError(f"coords={coords!r}: must be one of {', '.join(COORDINATES)}")
        params = params or arch.parametrization
        if params not in PARAMETERS:
            raise InvalidArgumentError(f"params={params!r}: must be one of {', '.join(PARAMETERS)}")
        if coords == "reduced" and arch.tokens < 2:
            raise InvalidArgumentError(
                f"tokens={arch.tokens}: reduced coordinates need t >= 2 (Prop. A.5); use coords='full'"
            )
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
    def ring(self) -> linalg.IntegerPolynomialRing:
        return linalg.integer_polynomial_ring(self.variables, "degrevlex")

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
        A, V = self.matrix("A"), self.matrix("V")
        coords, polys = [], []
        for k in range(self.d):
            for m in range(self.d_out):
                for i, j in quadratic_monomials(self.d):
                    if i == j:
                        f = A[k][i] * V[m][i]
                    else:
                        f = A[k][i] * V[m][j] + A[k][j] * V[m][i]
                    coords.append(Coordinate(f"q[{k + 1},{m + 1}] coefficient of z{i + 1}*z{j + 1}", ("reduced", k, m, i, j)))
                    polys.append(f)
        return coords, polys

    @cached_property
    def _full_structure(self) -> tuple[list[Coordinate], np.ndarray]:
        """Full coordinates and the 0/1 matrix ``L`` with ``full = L . reduced``.

        From ``(y_i)_m = sum_j sum_k x_i[k] q_{k,m}(x_j)``: the reduced
        coordinate ``(k, m, (u, v))`` contributes, for every token ``j``, to
        the coefficient of ``x_i[k] x_j[u] x_j[v]`` in ``(y_i)_m``.
        """
        d, t = self.d, self.tokens
        col = {c.key[1:]: n for n, c in enumerate(self.reduced[0])}
        entries: dict[tuple[int, int, tuple[int, ...]], dict[int, int]] = {}
        for i in range(t):
            for m in range(self.d_out):
                for j in range(t):
                    for k in range(d):
                        for (u, v) in quadratic_monomials(d):
                            mono = tuple(sorted((i * d + k, j * d + u, j * d + v)))
                            row = entries.setdefault((i, m, mono), {})
                            c = col[(k, m, u, v)]
                            row[c] = row.get(c, 0) + 1
        keys = sorted(entries)
        L = np.zeros((len(keys), len(col)), dtype=np.int64)
        coords = []
        for r, key in enumerate(keys):
            i, m, mono = key
            for c, n in entries[key].items():
                L[r, c] = n
            label = "*".join(f"x{w // d + 1}_{w % d + 1}" for w in mono)
            coords.append(Coordinate(f"(y{i + 1})_{m + 1} coefficient of {label}", ("full", i, m, mono)))
        return coords, L

    @cached_property
    def full(self) -> tuple[list[Coordinate], list[IntegerPolynomial]]:
        """Coefficients of ``(y_i)_m`` in the cubic monomials of the inputs ``x_(j,l)``.

        Every one of them is a non-negative integer combination of reduced
        coordinates, none identically zero.
        """
        coords, L = self._full_structure
        red = self.reduced[1]
        zero = self.ring.constant(0)
        polys = []
        for row in L:
            f = zero
            for c in np.flatnonzero(row):
                f = f + int(row[c]) * red[c]
            polys.append(f)
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
                out.append(_det([[A[i][j] for j in cols] for i in rows], self.ring.constant(0)))
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
        vals = [linalg.IntegerNumber(int(v)) for v in point]
        return [int(f(*vals)) for f in self.polynomials]

    def jacobian_mod(self, point: Sequence[int], p: int) -> np.ndarray:
        """Jacobian matrix (coordinates x variables) at ``point``, entries mod ``p``."""
        vals = [linalg.IntegerNumber(int(v)) for v in point]
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


def _det(M: list[list[IntegerPolynomial]], zero: IntegerPolynomial) -> IntegerPolynomial:
    n = len(M)
    if n == 1:
        return M[0][0]
    total = zero
    for j in range(n):
        minor = [row[:j] + row[j + 1:] for row in M[1:]]
        term = M[0][j] * _det(minor, zero)
        total = total + term if j % 2 == 0 else total - term
    return total
