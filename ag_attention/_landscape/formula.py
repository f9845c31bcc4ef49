"""The generic ED degree of a one-layer neuromanifold predicted from the Segre product upstairs (a conjecture).

``docs/math/degree.md`` proves that the projectivized neuromanifold of ``(d, d', a)`` (``t >= 2``) is the image
``Y = pi_L(X)`` of the Segre variety ``X = sigma(P(D_r) x P^{dd'-1})`` under a linear projection that is finite,
and birational except for ``d' = a = 1`` (``r = min(a, d)``, ``D_r`` the ``d x d`` matrices of rank ``<= r``).
The generic ED degree of a projective variety is the sum of its polar degrees (Draisma, Horobet, Ottaviani,
Sturmfels, Thomas, *The Euclidean distance degree of an algebraic variety*, Thm. 5.4), and for a smooth ``X`` of
dimension ``m`` it is ``sum_i (-1)^i (2^(m+1-i) - 1) deg c_i(X)`` (their Thm. 5.8). ``X`` is smooth exactly when
``D_r`` is: ``r = d`` (``P(D_d) = P^(d^2-1)``) or ``r = 1`` (``P^(d-1) x P^(d-1)``); then ``X`` is a Segre product
of projective spaces and its Chern classes are ``prod_j (1 + h_j)^(n_j + 1)``.

**Conjecture** (``docs/math/landscape.md``, landscape-formula): where the projection is birational, it keeps the
polar degrees, so the generic ED degree of the neuromanifold is the Segre product's. It holds at every size where
the package counted (six sizes, and ``(2,4,1)`` predicted before it was counted); it is not proven. This module
computes the Segre product's value exactly (integers), and says why where it does not apply.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from math import comb, factorial, prod

from .._checks import check_int
from .._errors import InvalidArgumentError
from .polar import polar_prediction

__all__ = ["SegrePrediction", "segre_ed_degree", "segre_product_ed_degree", "BezoutBound", "ed_upper_bound"]


def _multinomial(total: int, parts: tuple[int, ...]) -> int:
    if any(p < 0 for p in parts) or sum(parts) != total:
        return 0
    return factorial(total) // prod(factorial(p) for p in parts)


def _compositions(total: int, bounds: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Every ``(e_1, ..., e_k)`` with ``0 <= e_j <= bounds[j]`` and sum ``total``."""
    if not bounds:
        if total == 0:
            yield ()
        return
    for e in range(min(total, bounds[0]) + 1):
        for rest in _compositions(total - e, bounds[1:]):
            yield (e, *rest)


def segre_product_ed_degree(dims: tuple[int, ...]) -> int:
    """The generic ED degree of the Segre embedding of ``P^n1 x ... x P^nk`` (``dims = (n1, ..., nk)``), exactly.

    ``sum_i (-1)^i (2^(m+1-i) - 1) deg(c_i . H^(m-i))`` with ``c = prod_j (1 + h_j)^(n_j+1)``, ``H = sum_j h_j`` and
    ``int prod_j h_j^(n_j) = 1``, so ``deg(prod_j h_j^(e_j) . H^(m-i))`` is the multinomial coefficient
    ``(m-i)! / prod_j (n_j - e_j)!``.

    >>> segre_product_ed_degree((1, 2)), segre_product_ed_degree((1, 1)), segre_product_ed_degree((2,))
    (10, 6, 1)
    """
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence) or not dims:
        raise InvalidArgumentError(f"dims={dims!r}: must be a non-empty tuple of non-negative integers")
    dims = tuple(check_int(n, f"dims[{i}]", minimum=0) for i, n in enumerate(dims))
    m = sum(dims)
    total = 0
    for i in range(m + 1):
        deg_ci = 0
        for e in _compositions(i, tuple(n + 1 for n in dims)):
            coefficient = prod(comb(n + 1, ej) for n, ej in zip(dims, e))
            deg_ci += coefficient * _multinomial(m - i, tuple(n - ej for n, ej in zip(dims, e)))
        total += (-1) ** i * (2 ** (m + 1 - i) - 1) * deg_ci
    return total


@dataclass(frozen=True)
class SegrePrediction:
    """The Segre product's generic ED degree for ``(d, d', a)``, or ``None`` with the reason it does not apply."""

    d: int
    d_out: int
    a: int
    dims: tuple[int, ...]  # the projective spaces of the Segre product upstairs (empty when D_r is singular)
    value: int | None
    status: str

    def to_dict(self) -> dict[str, object]:
        return {
            "size": [self.d, self.d_out, self.a],
            "segre_factors": list(self.dims),
            "value": self.value,
            "status": self.status,
        }


def segre_ed_degree(d: int, d_out: int, a: int) -> SegrePrediction:
    """The generic ED degree that the Segre product ``P(D_r) x P^(dd'-1)`` has, as a prediction for the
    neuromanifold of ``(d, d', a)`` (``t >= 2``): a conjecture where the projection is birational (for ``r = 1`` or
    ``d`` from Chern classes, for ``1 < r < d`` from the Chern-Mather classes of :mod:`.polar`), ``value=None``
    with the reason at ``d' = a = 1``.

    >>> p = segre_ed_degree(2, 2, 1)
    >>> p.value, p.dims
    (196, (1, 1, 3))
    >>> segre_ed_degree(2, 1, 1).value is None, segre_ed_degree(3, 1, 2).value
    (True, 7965)
    """
    for name, v in (("d", d), ("d_out", d_out), ("a", a)):
        check_int(v, name, minimum=1)
    r = min(a, d)
    k = d * d_out - 1
    if d_out == 1 and r == 1 and d >= 2:
        return SegrePrediction(
            d, d_out, a, (), None, "does not apply: the projection is 2:1 (d' = a = 1), not birational"
        )
    if r == d:
        dims: tuple[int, ...] = (d * d - 1, k)
    elif r == 1:
        dims = (d - 1, d - 1, k)
    else:  # D_r singular: the polar degrees from its Chern-Mather classes (polar.py), written before any count
        p = polar_prediction(d, d_out, a)
        return SegrePrediction(
            d,
            d_out,
            a,
            (),
            p.value,
            f"conjecture: the generic ED degree of the Segre product upstairs, P(D_{r}) singular: "
            "its polar degrees from the Chern-Mather classes of the determinantal variety "
            "(polar.py: torus localization on its Nash blowup, and Schubert2; proven for the "
            "product); for the neuromanifold an argument, not reviewed (docs/math/landscape.md, "
            "landscape-polar)",
        )
    dims = tuple(n for n in dims if n > 0)
    return SegrePrediction(
        d,
        d_out,
        a,
        dims,
        segre_product_ed_degree(dims),
        "conjecture: the generic ED degree of the Segre product upstairs (proven for it); equal "
        "to the neuromanifold's at every size counted, not proven for the neuromanifold",
    )


@dataclass(frozen=True)
class BezoutBound:
    """A proven upper bound on the ED degree of ``(d, d', a)`` (``t >= 2``, any form ``G``): the multihomogeneous
    Bezout number of the square critical system of :mod:`.square` divided by the fiber."""

    d: int
    d_out: int
    a: int
    groups: tuple[str, ...]  # the unknowns' groups
    bezout: int  # the multihomogeneous Bezout number of the square system
    fiber: int
    value: int  # bezout // fiber

    def to_dict(self) -> dict[str, object]:
        return {
            "size": [self.d, self.d_out, self.a],
            "groups": list(self.groups),
            "bezout": self.bezout,
            "fiber": self.fiber,
            "value": self.value,
            "status": "proven upper bound",
        }


def _mhom_coefficient(rows: Sequence[tuple[tuple[int, ...], int]], target: tuple[int, ...]) -> int:
    """The coefficient of ``prod_g h_g^(target_g)`` in ``prod_rows (sum_g deg_g h_g)^count``: a dynamic program over
    the exponents used so far (each equation picks the group of one of its variables)."""
    table: dict[tuple[int, ...], int] = {tuple(0 for _ in target): 1}
    for degrees, count in rows:
        for _ in range(count):
            nxt: dict[tuple[int, ...], int] = {}
            for used, c in table.items():
                for g, dg in enumerate(degrees):
                    if dg and used[g] < target[g]:
                        key = used[:g] + (used[g] + 1,) + used[g + 1 :]
                        nxt[key] = nxt.get(key, 0) + c * dg
            table = nxt
    return table.get(target, 0)


def ed_upper_bound(d: int, d_out: int, a: int, fiber: int = 1) -> BezoutBound:
    """A proven upper bound on the ED degree of one layer, for every form (docs/math/landscape.md, landscape-bounds).

    The square system (:mod:`.square`) in the groups of unknowns ``A`` (or ``B``, ``K`` for ``a < d``), ``V`` and
    ``lambda``: ``x`` is bilinear in ``(A, V)`` and ``A = B [I | K] R`` bilinear in ``(B, K)``, so ``L = x^T G x -
    2 w^T x`` has multidegree at most ``(2, 2)`` (``(2, 2, 2)``); ``dL/dA = 0`` has multidegree ``(1, 2)``,
    ``dL/dV + lambda l = 0`` ``(2, 1, 1)``, the slice ``l . V = 1`` ``(0, 1, 0)``.  The multihomogeneous Bezout
    theorem bounds the isolated solutions in the product of projective spaces, hence in the affine chart, by the
    coefficient of ``prod_g h_g^(n_g)`` in ``prod_i (sum_g deg_g(F_i) h_g)``.  For a generic target every
    critical point of the smooth part is ``fiber`` regular (isolated) solutions, so ``ED <= bezout / fiber``.

    >>> ed_upper_bound(2, 1, 2).bezout, ed_upper_bound(2, 1, 2).value
    (34, 34)
    """
    for name, v in (("d", d), ("d_out", d_out), ("a", a), ("fiber", fiber)):
        check_int(v, name, minimum=1)
    r = min(a, d)
    ed = d_out * d
    if r == d:
        groups: tuple[str, ...] = ("A", "V", "lambda")
        rows: list[tuple[tuple[int, ...], int]] = [((1, 2, 0), d * d), ((2, 1, 1), ed), ((0, 1, 0), 1)]
        target: tuple[int, ...] = (d * d, ed, 1)
    else:
        groups = ("B", "K", "V", "lambda")
        rows = [((1, 2, 2, 0), d * r), ((2, 1, 2, 0), r * (d - r)), ((2, 2, 1, 1), ed), ((0, 0, 1, 0), 1)]
        target = (d * r, r * (d - r), ed, 1)
    bezout = _mhom_coefficient(rows, target)
    return BezoutBound(d, d_out, a, groups, bezout, fiber, bezout // fiber)
