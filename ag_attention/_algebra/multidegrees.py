"""The torus grading of the reduced coordinates, their monomials by multidegree, and points of the image.

Scaling row ``k`` of ``A`` by ``s_k``, row ``m`` of ``V`` by ``u_m`` and the
variable ``z_i`` by ``w_i`` multiplies the reduced coordinate ``x_{k,m,ij}``
by ``s_k u_m w_i w_j``: its multidegree is ``(e_k, e_m, e_i + e_j)`` in
``Z^d x Z^{d'} x Z^d`` (:func:`torus_weight`), and the ideal of the closure
is homogeneous for it (:mod:`ag_attention._algebra.interpolation`).
"""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np

from .._exact import GFp
from .._models import ReducedKey, reduced_coordinates, reduced_keys

__all__ = [
    "Multidegree",
    "torus_weight",
    "torus_weights",
    "monomials_by_multidegree",
    "evaluate_monomials",
    "image_points",
    "mu_split",
    "IndexPermutations",
]

#: ``(alpha, beta, gamma)``: the exponents of the rows of A, the rows of V and the variables z
Multidegree = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def torus_weight(key: ReducedKey, d: int, e: int) -> np.ndarray:
    """The multidegree of the reduced coordinate ``key`` as one vector of ``Z^(2d + d')``."""
    k, m, i, j = key
    w = np.zeros(2 * d + e, dtype=np.int64)
    w[k] += 1
    w[d + m] += 1
    w[d + e + i] += 1
    w[d + e + j] += 1
    return w


def torus_weights(d: int, e: int) -> np.ndarray:
    """:func:`torus_weight` of every reduced coordinate, one row each, in their order."""
    return np.array([torus_weight(k, d, e) for k in reduced_keys(d, e)])


def image_points(d: int, e: int, a: int, n: int, F: GFp, rng: np.random.Generator) -> np.ndarray:
    """``n`` random points of the image over GF(p): rows of reduced coordinates of ``phi_{A,V}``.

    ``A = B C`` with ``B`` (``d x a``), ``C`` (``a x d``) random when ``a < d``.
    """
    if a < d:
        B, C = F.random(rng, (n, d, a)), F.random(rng, (n, a, d))
        A = F.einsum("nka,nai->nki", B, C)
    else:
        A = F.random(rng, (n, d, d))
    V = F.random(rng, (n, e, d))
    return np.stack(reduced_coordinates(A, V, F), axis=1)


def monomials_by_multidegree(n: int, degree: int, weights: np.ndarray) -> dict[tuple[int, ...], list[tuple[int, ...]]]:
    """Monomials of ``degree`` in ``n`` variables (sorted index tuples), grouped by flat multidegree
    (``alpha + beta + gamma`` as one tuple; :func:`mu_split` splits it)."""
    monos = list(itertools.combinations_with_replacement(range(n), degree))
    if not monos:
        return {}
    sums = weights[np.array(monos, dtype=np.int64)].sum(axis=1)  # (#monomials, 2d + d')
    keys, inverse = np.unique(sums, axis=0, return_inverse=True)
    blocks: dict[tuple[int, ...], list[tuple[int, ...]]] = defaultdict(list)
    names = [tuple(int(x) for x in k) for k in keys]
    for mono, g in zip(monos, inverse.ravel().tolist()):
        blocks[names[g]].append(mono)
    return dict(blocks)


def evaluate_monomials(points: np.ndarray, monos: list[tuple[int, ...]], F: GFp) -> np.ndarray:
    """The values of the monomials ``monos`` (index tuples) at the rows of ``points``: ``(N, len(monos))``."""
    idx = np.array(monos, dtype=np.int64)  # (s, D)
    out = points[:, idx[:, 0]]
    for c in range(1, idx.shape[1]):
        out = F.mul(out, points[:, idx[:, c]])
    return out  # (N, s)


def mu_split(mu: tuple[int, ...], d: int, e: int) -> Multidegree:
    """``(alpha, beta, gamma)`` of a flat multidegree vector."""
    return tuple(mu[:d]), tuple(mu[d : d + e]), tuple(mu[d + e :])


class IndexPermutations:
    """Permutations of the indices, ``S_d x S_{d'} x S_d`` (rows of A, rows of V, the variable z), on multidegrees.

    Permuting the rows of ``A`` or ``V`` or the variables ``z`` maps the image
    of the parametrization to itself (``A -> P A``, ``V -> P' V``,
    ``(A, V) -> (A Q^T, V Q^T)`` keep the rank of ``A``), so it permutes the
    reduced coordinates, preserves the closure's ideal and maps the
    component of multidegree ``mu`` onto that of the permuted ``mu``.  Every
    multidegree has a representative (``alpha``, ``beta``, ``gamma`` each
    non-increasing) and a permutation carrying it there: :meth:`carry`.
    """

    def __init__(self, d: int, e: int) -> None:
        self.d, self.e = d, e
        keys = reduced_keys(d, e)
        self._index = {k: v for v, k in enumerate(keys)}
        self._keys = np.array(keys, dtype=np.int64)  # (n, 4): k, m, i, j

    def representative(self, mu: tuple[int, ...]) -> tuple[int, ...]:
        """The flat multidegree with each of ``alpha``, ``beta``, ``gamma`` sorted non-increasing."""
        d, e = self.d, self.e
        return (
            tuple(sorted(mu[:d], reverse=True))
            + tuple(sorted(mu[d : d + e], reverse=True))
            + tuple(sorted(mu[d + e :], reverse=True))
        )

    def carry(self, mu: tuple[int, ...]) -> tuple[tuple[int, ...], np.ndarray]:
        """``(rep, sigma)``: ``mu``'s representative and a variable map sending its monomials to ``mu``'s.

        ``sigma[v]`` is the reduced coordinate that variable ``v`` becomes, so
        a monomial ``m`` of multidegree ``rep`` becomes ``sorted(sigma[m])``
        of multidegree ``mu``.
        """
        d, e = self.d, self.e

        def order(part: tuple[int, ...]) -> np.ndarray:  # rep index r -> the index of mu holding rep[r]
            return np.array(sorted(range(len(part)), key=lambda i: (-part[i], i)), dtype=np.int64)

        oa, ob, oz = order(mu[:d]), order(mu[d : d + e]), order(mu[d + e :])
        k, m = oa[self._keys[:, 0]], ob[self._keys[:, 1]]
        i, j = oz[self._keys[:, 2]], oz[self._keys[:, 3]]
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        sigma = np.array(
            [self._index[(int(a), int(b), int(c), int(f))] for a, b, c, f in zip(k, m, lo, hi)], dtype=np.int64
        )
        return self.representative(mu), sigma

    @staticmethod
    def apply(sigma: np.ndarray, mono: tuple[int, ...]) -> tuple[int, ...]:
        """The image of the monomial ``mono`` (sorted indices) under the variable map ``sigma``."""
        return tuple(sorted(int(sigma[v]) for v in mono))
