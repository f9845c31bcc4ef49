"""Exact pointwise geometry of one lightning layer: fibers, differentials, certificates.

Everything here works from the parametrization alone (no implicit equations)
and with exact arithmetic, so it applies to every size.  Points are in
reduced coordinates (docs/math/model.md (model-reduced-coordinates),
:mod:`ag_attention._models.coordinates`): the ``d x d'`` array of quadrics
``q_{k,m}(z) = (A z)_k (V z)_m``.  The implementation is in four modules,
all re-exported here:

* :mod:`.differentials`: :func:`reduced_point` (the point of weights
  ``(A, V)``), :func:`differential` (the Jacobian of the parametrization
  there) and its restriction to a determinantal variety;
* :mod:`.factorization`: :func:`fiber` recovers *all* complex preimages
  ``(A', V')`` (up to the rescaling ``(cA', V'/c)``) of a point from its
  quadrics alone, by unique factorization: ``m'_{m0}`` divides
  ``g = gcd_k q_{k,m0}``, so its candidates are the linear factors of ``g``
  (one or two); each candidate determines the rest by exact division and is
  kept if consistent;
* :mod:`.singular`: :func:`certify` decides whether the image point of a
  weight pair is a singular point of the neuromanifold, with a certificate
  (tangent excess, critical, smooth; see there);
* :mod:`.rational`: exact ranks over QQ and GF(p) of rational matrices, and
  rank factorizations.
"""

from __future__ import annotations

from .differentials import differential, differential_on_rank_variety, reduced_point
from .factorization import Fiber, Preimage, fiber, quadrics
from .rational import exact_rank, integral, rank_factorization, rank_mod_p
from .singular import CertificateKind, PointVerdict, certify, symmetric_rank2_jacobian

__all__ = [
    "reduced_point",
    "differential",
    "differential_on_rank_variety",
    "exact_rank",
    "rank_mod_p",
    "integral",
    "Fiber",
    "Preimage",
    "fiber",
    "quadrics",
    "PointVerdict",
    "CertificateKind",
    "certify",
    "symmetric_rank2_jacobian",
    "rank_factorization",
]
