"""The results of the paper that the reproductions check, as an enum (value: the paper's name)."""

from __future__ import annotations

import enum

__all__ = ["Claim", "STATEMENT"]


class Claim(enum.Enum):
    """A result of *Geometry of Lightning Self-Attention* that a check is evidence for."""

    THM_32 = "Thm. 3.2"
    COR_33 = "Cor. 3.3"
    THM_34_SINGULAR = "Thm. 3.4 (3)"
    COR_A1 = "Cor. A.1"
    LEMMA_A3 = "Lemma A.3"
    COR_A6 = "Cor. A.6"
    COR_38 = "Cor. 3.8"
    EQ_16 = "Eq. 16"


#: each result in a line (docs/math/dimension.md and docs/math/geometry.md give them in full)
STATEMENT = {
    Claim.THM_32: "fibers: only the rescalings (cA, V/c) generically; pair and swap at rank-one pairs; "
    "{A' = 0 or V' = 0} over 0",
    Claim.COR_33: "dim M = a(2d - a) + d d' - 1 (d' > 1 or a > 1; t >= 2)",
    Claim.THM_34_SINGULAR: "the singular points of M are exactly the phi(A, V) with rank A <= 1 and rank V <= 1",
    Claim.COR_A1: "phi(A, V) = 0 only if A = 0 or V = 0 (no base points)",
    Claim.LEMMA_A3: "(A, V) is critical iff A = u v^T, V = w v^T; the differential drops rank by d - 1 there",
    Claim.COR_A6: "the real points of the closure outside M are phi(u v^T, w conj(v)^T); "
    "Im v -> 0 gives a critical value",
    Claim.COR_38: "dim M of a deep network = Eq. 14 under the bottleneck assumption",
    Claim.EQ_16: "dim of the normalized network = Cor. 3.8 + L (Conjecture 3.10)",
}
