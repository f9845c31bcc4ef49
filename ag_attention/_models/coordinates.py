"""The coordinates of one lightning layer, defined once (docs/math/model.md (model-reduced-coordinates)).

Every module that writes a point of the neuromanifold of one layer takes its
coordinates from here: their keys and order, their names and labels, their
values at weights ``(A, V)`` over any arithmetic, and the validation of
"one plain lightning layer, ``t >= 2`` for reduced coordinates".
The Macaulay2 package (``m2scripts/LightningAttention.m2``) builds the same
coordinates; ``tests/data/coordinates.json`` pins both to one set of values.

* **reduced coordinates** (keys ``(k, m, i, j)``, 0-based, ``i <= j``): the
  coefficient of ``z_i z_j`` in ``q_{k,m}(z) = (A_k . z)(V_m . z)``, i.e.
  ``A_{ki} V_{mi}`` if ``i = j`` and ``A_{ki} V_{mj} + A_{kj} V_{mi}``
  otherwise (:func:`reduced_terms`), in the order ``(k, m, (i, j))`` with
  ``(i, j)`` in :func:`quadratic_monomials` order;
* **full coordinates** (keys ``(i, m, (w1, w2, w3))``): the coefficient of
  the cubic monomial ``x_{w1} x_{w2} x_{w3}`` of the flattened inputs
  (``w = token * d + entry``) in ``(y_i)_m``, those not identically zero,
  sorted by key; ``full = L . reduced`` (:func:`full_structure`).

Values are computed with the arithmetic passed as ``F``: ``None`` for Python's
operators (ints, Fractions, floats and float64 arrays, python-flint
polynomials of :mod:`ag_attention._exact.linalg`, object arrays), or an object
with ``add``, ``mul`` and ``scale``, e.g. :class:`ag_attention._exact.field.GFp`
(vectorized residues) or :class:`ag_attention._numeric.Float64`.  Weight
matrices are nested sequences (``A[k][i]``) or arrays whose last two axes are
the matrix (``A[..., k, i]``: a batch of points at once).

>>> reduced_names(2, 1)
('q11z11', 'q11z12', 'q11z22', 'q21z11', 'q21z12', 'q21z22')
>>> reduced_coordinates([[1, 2], [3, 4]], [[5, 6]])
[5, 16, 12, 15, 38, 24]
>>> reduced_label((0, 1, 0, 2)), named_labels(["c_2"], 2, 1)[0]
('q[1,2] coefficient of z1*z3', 'c_2: coefficient of z1*z1 in q[1,1] = (A_1.z)(V_1.z)')
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache, reduce
from typing import Any, Protocol

import numpy as np

from .._architecture import Architecture
from .._checks import check_choice
from .._errors import InvalidArgumentError

__all__ = [
    "COORDINATES",
    "ReducedKey",
    "FullKey",
    "Arithmetic",
    "quadratic_monomials",
    "reduced_keys",
    "reduced_count",
    "reduced_names",
    "reduced_label",
    "reduced_meaning",
    "reduced_terms",
    "full_structure",
    "full_label",
    "full_meaning",
    "labels",
    "named_labels",
    "reduced_coordinates",
    "full_coordinates",
    "full_from_reduced",
    "coordinates",
    "one_layer_problem",
    "check_one_layer",
]

#: the two coordinate systems of one layer
COORDINATES = ("reduced", "full")

#: ``(k, m, i, j)``: the coefficient of ``z_i z_j`` (``i <= j``) in ``q_{k,m}``, 0-based
ReducedKey = tuple[int, int, int, int]
#: ``(i, m, (w1, w2, w3))``: the coefficient of ``x_{w1} x_{w2} x_{w3}`` in ``(y_i)_m``, 0-based, ``w`` sorted
FullKey = tuple[int, int, tuple[int, ...]]


class Arithmetic(Protocol):
    """What the evaluators need of a domain other than Python's operators (``GFp``, ``Float64``)."""

    def add(self, a: Any, b: Any) -> Any: ...

    def mul(self, a: Any, b: Any) -> Any: ...

    def scale(self, a: Any, c: int) -> Any: ...


# ------------------------------------------------------------------ keys, names, labels
def quadratic_monomials(d: int) -> list[tuple[int, int]]:
    """``(i, j)``, ``0 <= i <= j < d``: the monomials ``z_i z_j`` in a fixed order."""
    return [(i, j) for i in range(d) for j in range(i, d)]


def reduced_keys(d: int, e: int) -> list[ReducedKey]:
    """``(k, m, i, j)`` of each reduced coordinate, in their order."""
    return [(k, m, i, j) for k in range(d) for m in range(e) for (i, j) in quadratic_monomials(d)]


def reduced_count(d: int, e: int) -> int:
    """``d d' d(d+1)/2``: the number of reduced coordinates."""
    return d * e * d * (d + 1) // 2


def reduced_names(d: int, e: int) -> tuple[str, ...]:
    """``q12z13``: the coefficient of ``z1 z3`` in ``q_{1,2}`` (``q1x12z1x3`` once an index reaches 10).

    Plain identifiers, read the same by Macaulay2, sympy, msolve and python-flint.
    """
    sep = "x" if max(d, e) >= 10 else ""
    return tuple(f"q{k + 1}{sep}{m + 1}z{i + 1}{sep}{j + 1}" for k, m, i, j in reduced_keys(d, e))


def reduced_label(key: ReducedKey, sep: str = " ") -> str:
    """``q[1,2] coefficient of z1*z3`` (1-based), the label of :class:`~ag_attention.Parametrization`
    (``sep=": "``: ``q[1,2]: coefficient of z1*z3``)."""
    k, m, i, j = key
    return f"q[{k + 1},{m + 1}]{sep}coefficient of z{i + 1}*z{j + 1}"


def reduced_meaning(key: ReducedKey) -> str:
    """``coefficient of z1*z3 in q[1,2] = (A_1.z)(V_2.z)``: what a variable named for the key stands for."""
    k, m, i, j = key
    return f"coefficient of z{i + 1}*z{j + 1} in q[{k + 1},{m + 1}] = (A_{k + 1}.z)(V_{m + 1}.z)"


def _monomial_text(mono: tuple[int, ...], d: int) -> str:
    return "*".join(f"x{w // d + 1}_{w % d + 1}" for w in mono)


def full_label(key: FullKey, d: int, sep: str = " ") -> str:
    """``(y1)_1 coefficient of x1_1*x2_1*x2_2`` (1-based; ``x{token}_{entry}``; ``sep`` as in :func:`reduced_label`)."""
    i, m, mono = key
    return f"(y{i + 1})_{m + 1}{sep}coefficient of {_monomial_text(mono, d)}"


def full_meaning(key: FullKey, d: int) -> str:
    """``coefficient of x1_1*x2_1*x2_2 in (y1)_1``."""
    i, m, mono = key
    return f"coefficient of {_monomial_text(mono, d)} in (y{i + 1})_{m + 1}"


def _check_coords(coords: str) -> None:
    check_choice(coords, "coords", COORDINATES)


def labels(d: int, e: int, coords: str = "reduced", tokens: int = 2, sep: str = " ") -> list[str]:
    """The label of every coordinate, in order (:func:`reduced_label` or :func:`full_label`).

    >>> labels(2, 1, sep=": ")[1]
    'q[1,1]: coefficient of z1*z2'
    """
    _check_coords(coords)
    if coords == "reduced":
        return [reduced_label(key, sep) for key in reduced_keys(d, e)]
    return [full_label(key, d, sep) for key in full_structure(d, e, tokens)[0]]


def named_labels(names: Sequence[str], d: int, e: int, coords: str = "reduced", tokens: int = 2) -> list[str]:
    """``name: meaning`` for variables ``names`` standing for the coordinates in order (``--json``'s labels).

    >>> named_labels(reduced_names(2, 1), 2, 1)[1]
    'q11z12: coefficient of z1*z2 in q[1,1] = (A_1.z)(V_1.z)'
    >>> named_labels(["c_1"], 2, 1, "full", tokens=2)
    ['c_1: coefficient of x1_1*x1_1*x1_1 in (y1)_1']
    """
    _check_coords(coords)
    if coords == "reduced":
        meanings = [reduced_meaning(key) for key in reduced_keys(d, e)]
    else:
        meanings = [full_meaning(key, d) for key in full_structure(d, e, tokens)[0]]
    return [f"{name}: {text}" for name, text in zip(names, meanings)]


# ------------------------------------------------------------------ the map
def reduced_terms(key: ReducedKey) -> tuple[tuple[tuple[int, int], tuple[int, int]], ...]:
    """The products ``A[k][l] V[m][l']`` whose sum is the reduced coordinate ``key``, as ``((k, l), (m, l'))``.

    >>> reduced_terms((0, 0, 0, 1))
    (((0, 0), (0, 1)), ((0, 1), (0, 0)))
    """
    k, m, i, j = key
    if i == j:
        return (((k, i), (m, i)),)
    return (((k, i), (m, j)), ((k, j), (m, i)))


@lru_cache(maxsize=64)
def _full_structure(d: int, e: int, tokens: int) -> tuple[tuple[FullKey, ...], tuple[tuple[tuple[int, int], ...], ...]]:
    # from (y_i)_m = sum_j sum_k x_i[k] q_{k,m}(x_j): the reduced coordinate (k, m, (u, v)) contributes,
    # for every token j, to the coefficient of x_i[k] x_j[u] x_j[v] in (y_i)_m
    col = {key: n for n, key in enumerate(reduced_keys(d, e))}
    entries: dict[FullKey, dict[int, int]] = {}
    for i in range(tokens):
        for m in range(e):
            for j in range(tokens):
                for k in range(d):
                    for u, v in quadratic_monomials(d):
                        mono = tuple(sorted((i * d + k, j * d + u, j * d + v)))
                        row = entries.setdefault((i, m, mono), {})
                        c = col[(k, m, u, v)]
                        row[c] = row.get(c, 0) + 1
    keys = tuple(sorted(entries))
    return keys, tuple(tuple(sorted(entries[key].items())) for key in keys)


def full_structure(d: int, e: int, tokens: int) -> tuple[list[FullKey], np.ndarray]:
    """The full coordinates' keys and the integer matrix ``L`` with ``full = L . reduced``.

    Each row of ``L`` has a nonzero entry (no full coordinate is identically
    zero); for ``tokens >= 2`` the rows ``x_1[k] x_2[u] x_2[v]`` of ``y_1``
    are the unit vectors of the reduced coordinates, so ``L`` has a left
    inverse (docs/math/model.md (model-full-from-reduced)).
    """
    keys, rows = _full_structure(d, e, tokens)
    L = np.zeros((len(keys), reduced_count(d, e)), dtype=np.int64)
    for r, row in enumerate(rows):
        for c, n in row:
            L[r, c] = n
    return list(keys), L


def _entry(M: Any, r: int, c: int) -> Any:
    if isinstance(M, np.ndarray) and M.ndim > 2:
        return M[..., r, c]
    if isinstance(M, np.ndarray):
        return M[r, c]
    return M[r][c]


def _rows(M: Any) -> int:
    return int(M.shape[-2]) if isinstance(M, np.ndarray) else len(M)


def reduced_coordinates(A: Any, V: Any, F: Arithmetic | None = None) -> list[Any]:
    """The reduced coordinates of ``phi_{A,V}``, in order, computed with ``F`` (None: Python's operators).

    ``A`` is ``d x d`` and ``V`` ``d' x d`` (shapes are not checked here: see
    :func:`ag_attention._exact.onelayer.reduced_point` for validated input).
    """
    d, e = _rows(A), _rows(V)
    out = []
    for key in reduced_keys(d, e):
        products = [_product(_entry(A, *a), _entry(V, *v), F) for a, v in reduced_terms(key)]
        out.append(reduce(lambda x, y: x + y if F is None else F.add(x, y), products))
    return out


def _product(a: Any, v: Any, F: Arithmetic | None) -> Any:
    return a * v if F is None else F.mul(a, v)


def full_coordinates(A: Any, V: Any, tokens: int, F: Arithmetic | None = None) -> list[Any]:
    """The full coordinates of ``phi_{A,V}`` on ``tokens`` tokens: ``L . reduced`` (:func:`full_structure`)."""
    return full_from_reduced(reduced_coordinates(A, V, F), _rows(A), _rows(V), tokens, F)


def full_from_reduced(red: Sequence[Any], d: int, e: int, tokens: int, F: Arithmetic | None = None) -> list[Any]:
    """``L . red``: the full coordinates from the values ``red`` of the reduced ones."""
    if len(red) != reduced_count(d, e):
        raise InvalidArgumentError(f"red: d={d}, d'={e} has {reduced_count(d, e)} reduced coordinates, got {len(red)}")
    _, rows = _full_structure(d, e, tokens)
    out = []
    for row in rows:
        terms = [red[c] if n == 1 else (n * red[c] if F is None else F.scale(red[c], n)) for c, n in row]
        out.append(reduce(lambda x, y: x + y if F is None else F.add(x, y), terms))
    return out


def coordinates(A: Any, V: Any, coords: str = "reduced", tokens: int = 2, F: Arithmetic | None = None) -> list[Any]:
    """Reduced or full coordinates of ``phi_{A,V}`` (reduced ones need ``tokens >= 2`` to determine ``phi``)."""
    _check_coords(coords)
    if coords == "reduced":
        if tokens < 2:
            raise InvalidArgumentError(f"tokens={tokens}: {_REDUCED_NEEDS_TWO}")
        return reduced_coordinates(A, V, F)
    return full_coordinates(A, V, tokens, F)


# ------------------------------------------------------------------ validation
_REDUCED_NEEDS_TWO = "reduced coordinates need t >= 2 (Prop. A.5); use coords='full'"


def one_layer_problem(arch: object, coords: str | None = None, what: str = "this computation") -> str | None:
    """Why ``arch`` (with ``coords``, if given) is not one plain lightning layer with valid coordinates; None if it is.

    The message names the offending value and says what ``what`` is for.
    """
    if not isinstance(arch, Architecture):
        return f"arch={arch!r}: must be an Architecture"
    if arch.depth != 1:
        return (
            f"widths={arch.widths}: {what} is for one layer (one plain lightning layer; "
            "the dimension engine handles deep networks)"
        )
    if not arch.is_lightning or not arch.is_plain:
        return (
            f"architecture {arch.describe()}: {what} is for one plain lightning layer "
            "(one head, no skip connection, no causal mask, no softmax, no biases, no rotary positions)"
        )
    if coords is not None and coords not in COORDINATES:
        return f"coords={coords!r}: must be one of {', '.join(COORDINATES)}"
    if coords == "reduced" and arch.tokens < 2:
        return f"tokens={arch.tokens}: {_REDUCED_NEEDS_TWO}"
    return None


def check_one_layer(arch: object, coords: str | None = None, what: str = "this computation") -> Architecture:
    """``arch`` if it is one plain lightning layer (and ``t >= 2`` for reduced coordinates), else an
    :class:`~ag_attention.InvalidArgumentError` naming the value (:func:`one_layer_problem`).

    >>> check_one_layer(Architecture((2, 1), (2,), tokens=1), "reduced")
    Traceback (most recent call last):
    ...
    ag_attention._errors.InvalidArgumentError: tokens=1: reduced coordinates need t >= 2 (Prop. A.5); use coords='full'
    """
    problem = one_layer_problem(arch, coords, what)
    if problem is not None:
        raise InvalidArgumentError(problem)
    assert isinstance(arch, Architecture)
    return arch
