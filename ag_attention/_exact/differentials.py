"""Points of one lightning layer in reduced coordinates and the differential of its parametrization.

The reduced coordinates are those of :mod:`ag_attention._models.coordinates`;
here they are evaluated exactly at validated rational weights ``(A, V)``,
with their Jacobian in ``(A, V)`` and its restriction to the tangent space
of a determinantal variety ``{rank A <= r}``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._models import reduced_coordinates, reduced_count, reduced_keys, reduced_terms
from .rational import check_weight_shapes, integral, rank_factorization, rational_matrix

__all__ = ["reduced_point", "differential", "differential_on_rank_variety"]


def reduced_point(A: Any, V: Any) -> list[Any]:
    """Reduced coordinates of ``phi_{A,V}`` (exact; ints or Fractions), in Parametrization order."""
    A, V = rational_matrix(A, "A"), rational_matrix(V, "V")
    check_weight_shapes(A, V)
    return reduced_coordinates(A, V)


def differential(A: Any, V: Any) -> np.ndarray:
    """Jacobian of the reduced coordinates in ``(A, V)`` at a point (object array, exact).

    Columns: entries of ``A`` then of ``V``, row-major (the AV variable order).
    """
    A, V = rational_matrix(A), rational_matrix(V)
    d, e = len(A), len(V)
    J = np.zeros((reduced_count(d, e), d * d + e * d), dtype=object)
    for row, key in enumerate(reduced_keys(d, e)):
        for (k, l), (m, l2) in reduced_terms(key):  # d(A[k][l] V[m][l2]) = V[m][l2] dA[k][l] + A[k][l] dV[m][l2]
            J[row, k * d + l] += V[m][l2]
            J[row, d * d + m * d + l2] += A[k][l]
    return J


def differential_on_rank_variety(A: Any, V: Any) -> np.ndarray:
    """Image of the differential on the tangent space of ``{rank <= rank A} x Mat``.

    At a point with ``rank A = r`` the determinantal variety of rank ``<= r``
    is smooth with tangent space ``{X K + C Y}`` where the rows of ``K`` span
    the row space and the columns of ``C`` the column space of ``A`` (``A = C K``):
    the columns returned are the AV Jacobian applied to the spanning
    directions ``e_l K[c]`` and ``C[:, c] e_l^T``, then the V directions.
    """
    A = integral(rational_matrix(A))
    V = integral(rational_matrix(V))
    J = differential(A, V)
    d = A.shape[0]
    _, rref_rows = rank_factorization(A)
    scaled = (
        integral(np.array(rref_rows, dtype=object).reshape(len(rref_rows), d))
        if rref_rows
        else np.zeros((0, d), dtype=object)
    )
    # integer rows of K each scaled separately (same row space)
    K = np.array([integral(row) for row in np.array(scaled, dtype=object)], dtype=object).reshape(-1, d)
    pivots = [next(j for j in range(d) if row[j] != 0) for row in K]
    C = A[:, pivots]  # columns of A at the pivots span its column space
    JA = J[:, : d * d]
    cols = []
    for c in range(len(K)):
        for l in range(d):
            dA = np.zeros((d, d), dtype=object)
            dA[l, :] = K[c]
            cols.append(JA.dot(dA.ravel()))
            dA = np.zeros((d, d), dtype=object)
            dA[:, l] = C[:, c]
            cols.append(JA.dot(dA.ravel()))
    return np.column_stack(cols + [J[:, d * d + i] for i in range(J.shape[1] - d * d)])
