"""Is a point of one lightning layer's neuromanifold singular?  Decided with a certificate.

:func:`certify` answers from the parametrization alone (no implicit
equations), with exact arithmetic, as a typed verdict
(:class:`~ag_attention._exact.verdicts.PointVerdict`: a
:class:`~ag_attention._exact.verdicts.CertificateKind` and its numbers):

- *singular, tangent excess*: the differentials at all preimages map the
  Zariski tangent spaces of the domain into the Zariski tangent space of
  the closure; if their images span more than ``dim M`` (a lower bound by a
  GF(p) rank), the point is singular.  This covers two branches (pair and
  swap) and points where a rank-bounded domain is itself singular.
- *singular, critical*: a single preimage where the differential drops
  rank (an exact rank over QQ).  If the point were smooth, hence normal,
  the finite birational map would be a local isomorphism there (Zariski's
  main theorem) and its differential injective modulo rescaling.
- *smooth*: a single preimage, the domain smooth there and the
  differential of rank ``dim M``: the map is a proper injective immersion
  near the point, so the image germ is smooth.
- ``d' = 1, a = 1`` (``phi`` is 2:1): the closure is a cone over a Segre
  product with the symmetric matrices of rank ``<= 2``, decided by the
  Jacobian of their 3x3 minors (:func:`symmetric_rank2_jacobian`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._checks import check_int
from .._errors import ComputationError
from .._models import quadratic_monomials
from .differentials import differential, differential_on_rank_variety, reduced_point
from .factorization import Preimage, fiber
from .field import DEFAULT_PRIME, check_prime
from .rational import check_weight_shapes, exact_rank, rank_mod_p, rational_matrix
from .verdicts import CertificateKind, PointVerdict

__all__ = ["PointVerdict", "CertificateKind", "certify", "symmetric_rank2_jacobian"]


def symmetric_rank2_jacobian(S: Sequence[Sequence[Any]], prime: int = DEFAULT_PRIME) -> tuple[int, int]:
    """``(rank, codim)``: the Jacobian of the 3x3 minors of a symmetric ``d x d`` matrix at ``S``.

    The variables are the entries ``s_ij``, ``i <= j``.  The 3x3 minors
    generate the (prime) ideal of the symmetric matrices of rank <= 2 (Kutz
    1974), of codimension ``c = d(d+1)/2 - (2d - 1)``; at a point of that
    variety the Jacobian has rank ``c`` exactly where it is smooth.  The
    gradient of ``det S[I, J]`` is its cofactor matrix, so at a rank-one ``S``
    the Jacobian is zero.  The rank is over GF(p): a lower bound, decisive
    when it equals ``c``; a rank below ``c`` is recomputed over QQ.
    """
    d = len(S)
    codim = d * (d + 1) // 2 - (2 * d - 1) if d >= 3 else 0
    index = {ij: n for n, ij in enumerate(quadratic_monomials(d))}
    rows = []
    for I in itertools.combinations(range(d), 3):
        for J in itertools.combinations(range(d), 3):
            M = [[S[i][j] for j in J] for i in I]
            row = [0] * len(index)
            for a_, i in enumerate(I):
                for b_, j in enumerate(J):
                    minor = [[M[r][c] for c in range(3) if c != b_] for r in range(3) if r != a_]
                    cof = (-1) ** (a_ + b_) * (minor[0][0] * minor[1][1] - minor[0][1] * minor[1][0])
                    row[index[(min(i, j), max(i, j))]] += cof
            rows.append(row)
    if not rows:
        return 0, codim
    jac = np.array(rows, dtype=object)
    r = rank_mod_p(jac, prime)
    return (r if r == codim else exact_rank(jac)), codim


def _check_arguments(dimension: object, rank_bound: object, prime: object) -> None:
    check_int(dimension, "dimension", minimum=0)  # dim M
    if rank_bound is not None:  # None: A free
        check_int(rank_bound, "rank_bound", minimum=1)
    check_prime(prime)


def _tangent_images(pre: list[Preimage], a: int, d: int) -> tuple[list[np.ndarray], list[bool]]:
    """The image of the differential at each preimage, and whether the domain is smooth there."""
    images = []
    smooth_domain = []
    for Ap, Vp in pre:
        r = exact_rank(np.array(Ap, dtype=object))
        if r < a:
            images.append(differential(Ap, Vp))  # Zariski tangent space of the domain: everything
            smooth_domain.append(a >= d)  # A free: smooth everywhere
        else:
            images.append(differential(Ap, Vp) if a >= d else differential_on_rank_variety(Ap, Vp))
            smooth_domain.append(True)
    return images, smooth_domain


def _own_rank(A: list[list[Any]], V: list[list[Any]], a: int, prime: int) -> int:
    """The GF(p) rank of the differential at the given weights (on the rank variety when it is smooth there)."""
    d = len(A)
    own = (
        differential(A, V)
        if a >= d or exact_rank(np.array(A, dtype=object)) < a
        else differential_on_rank_variety(A, V)
    )
    return rank_mod_p(own, prime)


def _symmetric_factor_verdict(
    pre: list[Preimage], prime: int, own_rank: int, span: int, dimension: int
) -> PointVerdict:
    """``d' = 1, a = 1``: ``phi(u v^T, w z^T) = u w sym(v z^T)``, the cone over the Segre product of
    ``P^(d-1)`` and ``Y = P{symmetric rank <= 2}``, singular at a nonzero point exactly where ``Y`` is."""
    Ap, Vp = pre[0]
    d = len(Ap)
    u_idx = next(k for k in range(d) if any(Ap[k]))
    vrow, zrow = Ap[u_idx], Vp[0]
    S = [[vrow[i] * zrow[j] + vrow[j] * zrow[i] for j in range(d)] for i in range(d)]
    jr, codim = symmetric_rank2_jacobian(S, prime)
    return PointVerdict(
        CertificateKind.SYMMETRIC_MINORS,
        jr < codim,
        len(pre),
        dimension,
        own_rank,
        span,
        symmetric_rank=exact_rank(np.array(S, dtype=object)),
        minors_rank=jr,
        minors_rank_is_bound=jr == codim,
        codim=codim,
    )


def _single_preimage_verdict(
    image: np.ndarray, smooth_domain: bool, own_rank: int, span: int, dimension: int
) -> PointVerdict | None:
    """A birational map with a single preimage: singular, smooth or critical (None: undecided)."""
    if not smooth_domain:
        return PointVerdict(CertificateKind.SINGULAR_DOMAIN, True, 1, dimension, own_rank, span)
    if span == dimension:
        return PointVerdict(CertificateKind.IMMERSION, False, 1, dimension, own_rank, span)
    exact = exact_rank(image)
    if exact < dimension:
        return PointVerdict(CertificateKind.RANK_DROP, True, 1, dimension, own_rank, span, exact_rank=exact)
    return None


def certify(
    A: Any,
    V: Any,
    *,
    dimension: int,
    rank_bound: int | None = None,
    prime: int = DEFAULT_PRIME,
) -> PointVerdict:
    """Is ``phi_{A,V}`` a singular point of the (rank-bounded) neuromanifold? With a certificate.

    ``dimension`` is ``dim M`` (affine cone); ``rank_bound`` the bound ``a`` on
    ``rank A`` (``None``: ``A`` free).  See the module docstring.
    """
    A = rational_matrix(A, "A")
    V = rational_matrix(V, "V")
    check_weight_shapes(A, V)
    d, e = len(A), len(V)
    _check_arguments(dimension, rank_bound, prime)
    a = d if rank_bound is None else min(rank_bound, d)
    x = reduced_point(A, V)
    if all(v == 0 for v in x):
        if dimension < len(x):
            return PointVerdict(CertificateKind.VERTEX, True, 0, dimension)
        return PointVerdict(CertificateKind.WHOLE_SPACE, False, 0, dimension)
    fb = fiber(x, d, e)
    if fb.irrational_pairs:
        return PointVerdict(CertificateKind.NOT_RATIONAL, None, fb.count, dimension)
    pre = [p for p in fb.preimages if exact_rank(np.array(p[0], dtype=object)) <= a]
    if not pre:  # pragma: no cover - the given weights are a preimage
        raise ComputationError("the fiber lost the given preimage (bug)")
    images, smooth_domain = _tangent_images(pre, a, d)
    span = rank_mod_p(np.column_stack(images), prime)
    own_rank = _own_rank(A, V, a, prime)
    if span > dimension:
        kind = CertificateKind.PAIR_AND_SWAP if len(pre) > 1 else CertificateKind.DOMAIN_EXCESS
        return PointVerdict(kind, True, len(pre), dimension, own_rank, span)
    if not (e > 1 or a > 1):  # Cor. A.2: birational unless d' = 1, a = 1, where phi is 2:1 (pair and swap)
        return _symmetric_factor_verdict(pre, prime, own_rank, span, dimension)
    if len(pre) == 1:
        verdict = _single_preimage_verdict(images[0], smooth_domain[0], own_rank, span, dimension)
        if verdict is not None:
            return verdict
    return PointVerdict(CertificateKind.UNDECIDED, None, len(pre), dimension, own_rank, span)
