"""The registry of their families (:data:`FAMILIES`), their members in any ring, and the checks that they vanish on
the parametrization (:func:`check_family`, :func:`on_image`, :func:`linear_span`): one part of :mod:`.invariants`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..._checks import check_choice
from ..._errors import InvalidArgumentError
from ..._exact import linalg
from ..._models import reduced_keys
from .constructions import (
    _fraction,
    context_syzygies,
    cross_column_cubics,
    lie_certificate,
    lie_minors,
    linear_relations,
    low_rank_minors,
    resultant_quartics,
    t1_low_rank,
    veronese,
)
from .coordinates import Poly, Value, _check_size, reduced_ring, their_coordinates, their_labels, their_ring

__all__ = ["Family", "FAMILIES", "family_members", "FamilyCheck", "check_family", "on_image", "linear_span"]


# ---------------------------------------------------------------------------------------------- registry and checks
@dataclass(frozen=True)
class Family:
    """One family of their invariants: where it lives (``t >= 2`` or ``t = 1``) and how it is built."""

    name: str
    regime: str  # "t>=2" or "t=1"
    description: str
    build: Callable[[int, int, int, int, Value], list[Poly]] = field(repr=False)
    #: the smallest d (and a) where the family is an invariant by its construction; below, members are checked too
    hypothesis: str = ""


def _veronese(r: int) -> Callable[[int, int, int, int, Value], list[Poly]]:
    def build(d: int, t: int, j: int, a: int, y: Value) -> list[Poly]:
        parts = veronese(d, t, j, a, y, r)
        return parts["internal"] + parts["cross-target"] + parts["block"]

    return build


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "linear",
            "t>=2",
            "linear relations: context copies (t >= 3) and the symmetrization of the output-token coefficients",
            lambda d, t, j, a, y: linear_relations(d, t, j, y),
        ),
        Family(
            "low-rank",
            "t>=2",
            "(a+1)-minors of the flattening F_n (rows u <= v, columns l), a < d",
            low_rank_minors,
            "a < d",
        ),
        Family(
            "cubics",
            "t>=2",
            "cross-column cubics: coefficients of the 3x3 minors of the pencil sum_k c_k M_k",
            lambda d, t, j, a, y: cross_column_cubics(d, t, j, y),
            "d >= 3",
        ),
        Family(
            "syzygies",
            "t>=2",
            "context syzygies: relations among the maximal minors of Phi(V) applied to F_n (degree d)",
            lambda d, t, j, a, y: context_syzygies(d, t, j, y),
        ),
        Family(
            "veronese-2",
            "t>=2",
            "Veronese/catalecticant relations of order r = 2 (quartics): internal, cross-target and block 2x2 minors",
            _veronese(2),
            "2 <= min(d, a)",
        ),
        Family(
            "veronese-3",
            "t>=2",
            "Veronese/catalecticant relations of order r = 3 (degree 6)",
            _veronese(3),
            "3 <= min(d, a)",
        ),
        Family(
            "resultants",
            "t>=2",
            "resultant quartics of the slice quadrics restricted to lines (pairs of slices; "
            "six coefficients for triples)",
            lambda d, t, j, a, y: resultant_quartics(d, t, j, y),
        ),
        Family(
            "t1-low-rank",
            "t=1",
            "(2a+2)-minors of N = (y[k,k,l]), 2a + 2 <= d",
            lambda d, t, j, a, y: t1_low_rank(d, a, y),
            "2a + 2 <= d",
        ),
        Family(
            "t1-lie",
            "t=1",
            "Lie-flattening (Chow-type, split (2,1)) maximal minors of the sl_d action on the cubic",
            lambda d, t, j, a, y: lie_minors(d, y),
            "d >= 3",
        ),
    )
}


def family_members(name: str, d: int, t: int, a: int | None = None, j: int = 1, ring: str = "theirs") -> list[Poly]:
    """The members of family ``name`` at ``(d, t, a)`` with values in ``ring``: ``"theirs"`` (polynomials in their
    coordinates), ``"reduced"`` (pulled back to our reduced coordinates: :func:`reduced_form`) or ``"weights"``
    (their parametrization substituted: zero exactly when the member vanishes on the image)."""
    check_choice(name, "family", FAMILIES)
    a = _check_size(d, t, j, a)
    fam = FAMILIES[name]
    if (fam.regime == "t=1") != (t == 1):
        raise InvalidArgumentError(f"family={name!r} is for {fam.regime}, got t={t}")
    check_choice(ring, "ring", ("theirs", "reduced", "weights"))
    if ring == "theirs":
        y: Value = their_ring(d, t, j)[1].__getitem__
    elif ring == "reduced":
        y = reduced_ring(d)[1]
    else:
        y = their_coordinates(d, t, j, a).values.__getitem__
    return fam.build(d, t, j, a, y)


@dataclass
class FamilyCheck:
    """One family at one size: how many members, how many are nonzero polynomials, how many vanish on the image."""

    family: str
    d: int
    t: int
    a: int
    members: int  # as built (their constructions keep duplicates and zeros)
    nonzero: int  # nonzero polynomials in their coordinates
    distinct: int  # distinct up to sign among the nonzero ones
    degrees: tuple[int, ...]
    vanishing: int  # nonzero members that vanish on the parametrization (exact)
    method: str
    seconds: float
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.vanishing == self.nonzero

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "d": self.d,
            "t": self.t,
            "a": self.a,
            "members": self.members,
            "nonzero": self.nonzero,
            "distinct": self.distinct,
            "degrees": list(self.degrees),
            "vanishing": self.vanishing,
            "method": self.method,
            "seconds": round(self.seconds, 2),
            "note": self.note,
        }


def check_family(name: str, d: int, t: int, a: int | None = None, j: int = 1) -> FamilyCheck:
    """Build family ``name`` at ``(d, t, a)`` in their coordinates and on the parametrization: every nonzero member
    must be the zero polynomial in the weights (their scaled coefficients of ``V X X^T A X``, ``A = B C`` for
    ``a < d``), which is exactly membership in the ideal of the closure.

    The Lie-flattening minors for ``d >= 4`` (``C(d+2, 3)`` choose ``d^2 - 1`` of them) are decided at once by
    :func:`lie_certificate`: a nonzero kernel vector over QQ[weights] makes every maximal minor zero.
    """
    t0 = time.perf_counter()
    a = _check_size(d, t, j, a)
    if name == "t1-lie" and d >= 3:
        rows, cols = math.comb(d + 2, 3), d * d - 1
        cert = lie_certificate(d)
        ok = all(cert[k] for k in ("depends_on_sym_A_only", "product_zero", "kernel_vector_nonzero", "trace_zero"))
        n = math.comb(rows, cols)
        return FamilyCheck(
            name,
            d,
            t,
            a,
            n,
            n,
            n,
            (cols,),
            n if ok else 0,
            "a kernel vector of the Lie matrix over QQ[weights] (lie_certificate)",
            time.perf_counter() - t0,
            note=f"{rows} x {cols} matrix: every {cols}-minor at once",
        )
    built = family_members(name, d, t, a, j, "theirs")
    on_image = family_members(name, d, t, a, j, "weights")
    if len(built) != len(on_image):  # the same construction in two rings: a mismatch is a bug
        raise AssertionError(f"{name} at {(d, t, a)}: {len(built)} members in their ring, {len(on_image)} on the image")
    keep = [i for i, m in enumerate(built) if not m.is_zero()]
    distinct = {_up_to_sign(built[i]) for i in keep}
    vanishing = sum(on_image[i].is_zero() for i in keep)
    degrees = tuple(sorted({built[i].total_degree() for i in keep}))
    return FamilyCheck(
        name,
        d,
        t,
        a,
        len(built),
        len(keep),
        len(distinct),
        degrees,
        vanishing,
        "exact substitution of their parametrization (python-flint over QQ)",
        time.perf_counter() - t0,
    )


def _up_to_sign(p: Poly) -> str:
    s = str(p)
    return min(s, str(-p))


# ------------------------------------------------------------------------------------------ polynomials on the image
def on_image(polys: Sequence[Poly], d: int, t: int, a: int | None = None, j: int = 1) -> list[bool]:
    """For polynomials in their coordinates (:func:`their_ring`): does each vanish on the image (rank ``<= a``),
    i.e. lie in the ideal of the closure?  Exact: their parametrization substituted over QQ."""
    R, gens = their_ring(d, t, j)
    th = their_coordinates(d, t, j, a)
    images = [th.values[lab] for lab in their_labels(d, t, j)]
    out = []
    for p in polys:
        if p.context() != R:
            raise InvalidArgumentError(f"polys: {p} is not in the ring of their coordinates for d={d}, t={t}, j={j}")
        out.append(p.compose(*images, ctx=th.ring).is_zero())
    return out


def linear_span(d: int, t: int, j: int = 1) -> dict[str, int]:
    """The linear relations against every linear relation among their coordinates: the rank of the family
    (coefficient vectors over QQ) and ``#their coordinates - #reduced coordinates`` (the kernel of the map onto
    our coordinates, which is onto for ``t >= 2``: the cross coordinates are our reduced ones, scaled)."""
    R, gens = their_ring(d, t, j)
    members = [p for p in family_members("linear", d, t, None, j, "theirs") if not p.is_zero()]
    rows = []
    for p in members:
        row = [Fraction(0)] * len(gens)
        for exps, c in p.to_dict().items():
            row[list(exps).index(1)] = _fraction(c)
        rows.append(row)
    return {
        "members": len(members),
        "rank": linalg.rank_rational(rows) if rows else 0,
        "kernel": len(gens) - len(reduced_keys(d, 1)),
    }
