"""How close one layer's weights are to the strata of Theorem 3.4: float64 spectra with a stated tolerance.

Trained weights are never exactly singular; the question is how close, and to which stratum. For one layer
``(A, V)`` (``A = Q^T K``), in float64 from the exact values:

* the singular values of ``A`` and of ``V``;
* the **singular stratum** ``S = {rank A <= 1, rank V <= 1}`` (Theorem 3.4.3: its image is the singular locus):
  the nearest point of ``S`` keeps the top singular triple of each factor (Eckart-Young, each factor on its own,
  since ``S`` is a product), at distance ``sqrt(sum_{i >= 2} s_i(A)^2 + sum_{i >= 2} s_i(V)^2)``;
* the **critical set** ``C = {A = 0} u {V = 0} u {(u v^T, w v^T)}`` (Lemma A.3; the image of the pairs is the
  relative boundary, Theorem 3.4.2): the least of ``||A||``, ``||V||`` and ``sqrt(||A||^2 + ||V||^2 -
  lambda_max(A^T A + V^T V))``, the pair ``(A v v^T, V v v^T)`` for the top eigenvector ``v``.

**Which representative.** ``(c A, V / c)`` is the same function, at other distances. Distances are taken at the
*balanced* representative, ``||A|| = ||V||`` (``c = sqrt(||V|| / ||A||)``), and are also given relative to its norm
``||(A, V)||``: the relative distance is then the same for every representative of the function (tested), and it is
what the tolerance ``rtol`` compares with: **near-singular at rtol** when the relative distance to ``S`` is at most
``rtol``, **near-critical** likewise for ``C``. A float64 measurement (relative error about ``1e-15`` times the
conditioning): the exact verdicts (``singular``, ``critical_form``) stay beside it and are never replaced by it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import check_real
from .._errors import InvalidArgumentError

__all__ = ["RTOL", "NearStrata", "one_layer_strata", "check_rtol", "numerical_rank"]

#: the default relative tolerance of the near-stratum verdicts and of the numerical rank
RTOL = 1e-3


def check_rtol(rtol: Any) -> float:
    """``rtol`` as a float in (0, 1), or :class:`InvalidArgumentError` naming it."""
    return check_real(rtol, "rtol", minimum=0, maximum=1, strict=True)


def numerical_rank(singular_values: np.ndarray, rtol: float) -> int:
    """The number of singular values above ``rtol`` times the largest (0 for an empty or zero spectrum)."""
    s = np.asarray(singular_values, dtype=np.float64)
    if s.size == 0 or not s[0] > 0:
        return 0
    return int(np.sum(s > rtol * s[0]))


@dataclass(frozen=True)
class NearStrata:
    """One layer's distances to the strata of Theorem 3.4 at the balanced representative (module docstring)."""

    rtol: float
    singular_values_A: tuple[float, ...]
    singular_values_V: tuple[float, ...]
    scale: float  # c: the balanced representative is (c A, V / c)
    norm: float  # ||(c A, V / c)||, Frobenius
    distance_to_singular: float  # to {rank A <= 1, rank V <= 1}
    distance_to_critical: float  # to {A = 0} u {V = 0} u {(u v^T, w v^T)}
    nearest_singular: tuple[np.ndarray, np.ndarray]  # the nearest point of S (balanced representative)
    nearest_critical: tuple[np.ndarray, np.ndarray]  # the nearest point of C
    critical_part: str  # which part of C is nearest: "V = 0", "A = 0" or "pair"

    @property
    def relative_to_singular(self) -> float:
        return self.distance_to_singular / self.norm if self.norm > 0 else 0.0

    @property
    def relative_to_critical(self) -> float:
        return self.distance_to_critical / self.norm if self.norm > 0 else 0.0

    @property
    def near_singular(self) -> bool:
        return self.relative_to_singular <= self.rtol

    @property
    def near_critical(self) -> bool:
        return self.relative_to_critical <= self.rtol

    @property
    def numerical_ranks(self) -> tuple[int, int]:
        """``(rank A, rank V)`` at ``rtol`` (singular values above ``rtol`` times the largest)."""
        return (
            numerical_rank(np.array(self.singular_values_A), self.rtol),
            numerical_rank(np.array(self.singular_values_V), self.rtol),
        )

    def verdict(self) -> str:
        if self.near_critical:
            return f"near-critical at rtol {self.rtol:g} (nearest: {self.critical_part}); near-singular too"
        if self.near_singular:
            return f"near-singular at rtol {self.rtol:g} (rank A, rank V <= 1 within it)"
        return f"not near a stratum at rtol {self.rtol:g}"

    def to_dict(self) -> dict[str, Any]:
        ra, rv = self.numerical_ranks
        return {
            "rtol": self.rtol,
            "singular_values_A": list(self.singular_values_A),
            "singular_values_V": list(self.singular_values_V),
            "numerical_rank_A": ra,
            "numerical_rank_V": rv,
            "balanced_scale": self.scale,
            "norm": self.norm,
            "distance_to_singular": self.distance_to_singular,
            "relative_distance_to_singular": self.relative_to_singular,
            "near_singular": self.near_singular,
            "nearest_singular": {"A": self.nearest_singular[0].tolist(), "V": self.nearest_singular[1].tolist()},
            "distance_to_critical": self.distance_to_critical,
            "relative_distance_to_critical": self.relative_to_critical,
            "near_critical": self.near_critical,
            "nearest_critical_part": self.critical_part,
            "nearest_critical": {"A": self.nearest_critical[0].tolist(), "V": self.nearest_critical[1].tolist()},
            "verdict": self.verdict(),
            "status": "float64 measurement (relative error about 1e-15 times the conditioning), at the balanced "
            "representative ||A|| = ||V||; not a proof",
        }


def _rank_one(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Singular values of ``M`` and its nearest matrix of rank <= 1."""
    if M.size == 0:
        return np.zeros(0), M.copy()
    U, s, Vt = np.linalg.svd(M, full_matrices=False)
    return s, s[0] * np.outer(U[:, 0], Vt[0])


def one_layer_strata(A: Any, V: Any, rtol: float = RTOL) -> NearStrata:
    """The distances of ``(A, V)`` (any real arrays: exact rationals are converted to float64) to the singular
    stratum and to the critical set, at the balanced representative, with the verdicts at ``rtol``."""
    rtol = check_rtol(rtol)
    A = np.asarray(np.asarray(A, dtype=object).astype(np.float64))
    V = np.asarray(np.asarray(V, dtype=object).astype(np.float64))
    if A.ndim != 2 or V.ndim != 2 or A.shape[0] != A.shape[1] or V.shape[1] != A.shape[1]:
        raise InvalidArgumentError(f"A {A.shape} and V {V.shape}: A must be d x d and V d' x d")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(V))):
        raise InvalidArgumentError("A and V must be finite in float64 (an entry overflows or is not a number)")
    nA, nV = float(np.linalg.norm(A)), float(np.linalg.norm(V))
    c = math.sqrt(nV / nA) if nA > 0 and nV > 0 else 1.0
    Ab, Vb = A * c, V / c
    sA, A1 = _rank_one(Ab)
    sV, V1 = _rank_one(Vb)
    norm = float(math.hypot(np.linalg.norm(Ab), np.linalg.norm(Vb)))
    d_sing = float(math.sqrt(float(np.sum(sA[1:] ** 2) + np.sum(sV[1:] ** 2))))
    # the critical set: V = 0, A = 0, or the nearest pair
    options: list[tuple[float, str, tuple[np.ndarray, np.ndarray]]] = [
        (float(np.linalg.norm(Vb)), "V = 0", (Ab.copy(), np.zeros_like(Vb))),
        (float(np.linalg.norm(Ab)), "A = 0", (np.zeros_like(Ab), Vb.copy())),
    ]
    M = Ab.T @ Ab + Vb.T @ Vb
    if M.size:
        w, U = np.linalg.eigh(M)
        v = U[:, -1]
        pair = (np.outer(Ab @ v, v), np.outer(Vb @ v, v))
        options.append((float(math.sqrt(max(0.0, float(np.trace(M) - w[-1])))), "pair", pair))
    dist, part, nearest = min(options, key=lambda o: o[0])
    # the singular values of the given A and V (the balanced ones are c and 1 / c times them)
    return NearStrata(
        rtol,
        tuple(float(x) for x in sA / c),
        tuple(float(x) for x in sV * c),
        c,
        norm,
        d_sing,
        dist,
        (A1, V1),
        nearest,
        part,
    )
