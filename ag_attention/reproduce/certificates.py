"""Typed certificates of singular and smooth points of one layer's neuromanifold.

:func:`ag_attention.exact.onelayer.certify` answers with a
:class:`~ag_attention.exact.onelayer.PointVerdict` whose ``reason`` is prose.
Here the kind of argument is a :class:`CertificateKind` and its numbers are
fields of a frozen :class:`Certificate`; the text is rendered only when a
certificate is printed (``str(certificate)``, which gives back the prose of
``certify`` word for word).

:func:`from_verdict` converts at the boundary: it recognizes each of
``certify``'s sentences and reads its numbers, and raises
:class:`~ag_attention.errors.ComputationError` on a sentence it does not know,
so a change of wording there cannot pass unnoticed.

>>> c = certify_point([[1, 2], [3, 5]], [[1, 1]], dimension=5)
>>> c.kind, c.singular, c.preimages, c.differential_rank
(<CertificateKind.IMMERSION: 'immersion'>, False, 1, 5)
>>> str(c)
'single preimage, smooth domain, differential of rank dim M (immersion)'
"""

from __future__ import annotations

import enum
import re
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import ComputationError
from ..exact.onelayer import PointVerdict, certify

__all__ = ["CertificateKind", "Certificate", "from_verdict", "certify_point"]


class CertificateKind(enum.Enum):
    """The argument that decides a point (value: a short label for tables)."""

    VERTEX = "vertex of the cone"  # the point 0 of a closure that spans its ambient space: singular
    WHOLE_SPACE = "whole ambient space"  # the point 0 of a closure that is the ambient space: smooth
    NOT_RATIONAL = "preimages not over QQ"  # undecided here; see the conjugate-point checks
    PAIR_AND_SWAP = "tangent excess: pair and swap"  # two preimages whose tangent images span > dim M
    DOMAIN_EXCESS = "tangent excess: singular domain"  # rank A < a: the domain's tangent space is too large
    SYMMETRIC_MINORS = "3x3 minors of the symmetric factor"  # d' = 1, a = 1: the cone over P^(d-1) x Y
    SINGULAR_DOMAIN = "single preimage, singular domain"  # rank A < a, one preimage (Zariski's main theorem)
    IMMERSION = "immersion"  # one preimage, smooth domain, differential of rank dim M: smooth
    RANK_DROP = "critical: rank drop"  # one preimage, differential of rank < dim M over QQ: singular
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Certificate:
    """A decided (or undecided) point with the numbers of its argument.

    ``differential_rank``: rank of the differential at the given weights (GF(p));
    ``span``: dimension spanned by the tangent images of all preimages (a lower bound);
    ``exact_rank``: the differential's rank over QQ (:attr:`CertificateKind.RANK_DROP`);
    ``symmetric_rank``, ``minors_rank``, ``minors_rank_is_bound``, ``codim``: the rank of the
    symmetric factor, the rank of the Jacobian of its 3x3 minors (a lower bound when
    ``minors_rank_is_bound``) and ``codim Y`` (:attr:`CertificateKind.SYMMETRIC_MINORS`).
    """

    kind: CertificateKind
    singular: bool | None
    preimages: int
    dimension: int | None = None
    differential_rank: int | None = None
    span: int | None = None
    exact_rank: int | None = None
    symmetric_rank: int | None = None
    minors_rank: int | None = None
    minors_rank_is_bound: bool = False
    codim: int | None = None

    @property
    def decided(self) -> bool:
        return self.singular is not None

    @property
    def summary(self) -> str:
        """A few words: the argument, without the numbers."""
        return _SUMMARY[self.kind]

    def to_dict(self) -> dict[str, Any]:
        """The kind (its name) and every number that is set."""
        d = {k: v for k, v in asdict(self).items() if v is not None and k != "kind"}
        if not self.minors_rank_is_bound:
            d.pop("minors_rank_is_bound")
        return {"kind": self.kind.name, **d}

    def __str__(self) -> str:
        return _render(self)


_SUMMARY = {
    CertificateKind.VERTEX: "the vertex of the cone",
    CertificateKind.WHOLE_SPACE: "the closure is the ambient space",
    CertificateKind.NOT_RATIONAL: "preimages not defined over QQ",
    CertificateKind.PAIR_AND_SWAP: "tangent excess: two preimages (pair and swap)",
    CertificateKind.DOMAIN_EXCESS: "tangent excess: the domain is singular there (rank A < a)",
    CertificateKind.SYMMETRIC_MINORS: "d' = 1, a = 1: the 3x3 minors of the symmetric factor",
    CertificateKind.SINGULAR_DOMAIN: "single preimage where the rank-bounded domain is singular",
    CertificateKind.IMMERSION: "single preimage, immersion",
    CertificateKind.RANK_DROP: "critical: single preimage, rank drop",
    CertificateKind.UNDECIDED: "undecided",
}

# certify's sentences, word for word (exact/onelayer.py); {…} are the numbers
_FIXED = {
    CertificateKind.VERTEX: "the vertex of a cone that spans its ambient space",
    CertificateKind.WHOLE_SPACE: "the closure is the whole ambient space",
    CertificateKind.NOT_RATIONAL: "preimages not defined over QQ (use the conjugate-point checks)",
    CertificateKind.SINGULAR_DOMAIN: (
        "single preimage where the rank-bounded domain is singular (rank A < a): a smooth, hence normal, "
        "image point would make the finite birational map a local isomorphism (Zariski's main theorem)"),
    CertificateKind.IMMERSION: "single preimage, smooth domain, differential of rank dim M (immersion)",
    CertificateKind.UNDECIDED: "undecided by the parametrization",
}
_EXCESS = "tangent excess: {what}; their tangent images span >= {span} > dim M = {dimension}"
_EXCESS_WHAT = {CertificateKind.PAIR_AND_SWAP: "two preimages (pair and swap)",
                CertificateKind.DOMAIN_EXCESS: "the domain is singular there (rank A < a)"}
_RANK_DROP = ("critical: single preimage, differential of rank {exact_rank} < dim M = {dimension} over QQ "
              "(a smooth point would make the finite birational map a local isomorphism)")
_SYMMETRIC = ("d' = 1, a = 1 (phi is 2:1): the closure is the cone over P^(d-1) x Y, Y = {{symmetric rank <= 2}}, "
              "whose ideal is generated by the 3x3 minors (Kutz 1974); their Jacobian at the symmetric factor "
              "(rank {symmetric_rank}) has rank {bound}{minors_rank} {relation} codim Y = {codim}")


def _render(c: Certificate) -> str:
    if c.kind in _FIXED:
        return _FIXED[c.kind]
    if c.kind in _EXCESS_WHAT:
        return _EXCESS.format(what=_EXCESS_WHAT[c.kind], span=c.span, dimension=c.dimension)
    if c.kind is CertificateKind.RANK_DROP:
        return _RANK_DROP.format(exact_rank=c.exact_rank, dimension=c.dimension)
    return _SYMMETRIC.format(symmetric_rank=c.symmetric_rank, bound=">= " if c.minors_rank_is_bound else "",
                             minors_rank=c.minors_rank, relation="<" if c.singular else "=", codim=c.codim)


def _pattern(template: str) -> re.Pattern[str]:
    """A sentence template with ``{name}`` fields as a regular expression with named integer groups."""
    parts = re.split(r"(\{\w+\})", template.replace("{{", "\0").replace("}}", "\1"))
    out = []
    for part in parts:
        if re.fullmatch(r"\{\w+\}", part):
            name = part[1:-1]
            out.append({"bound": r"(?P<bound>(>= )?)", "relation": r"(?P<relation>[=<])",
                        "what": r"(?P<what>.+)"}.get(name, rf"(?P<{name}>\d+)"))
        else:
            out.append(re.escape(part.replace("\0", "{").replace("\1", "}")))
    return re.compile("".join(out))


_EXCESS_RE, _RANK_DROP_RE, _SYMMETRIC_RE = _pattern(_EXCESS), _pattern(_RANK_DROP), _pattern(_SYMMETRIC)


def _make(kind: CertificateKind, v: PointVerdict, **numbers: Any) -> Certificate:
    return Certificate(kind, v.singular, v.preimages, v.dimension, v.differential_rank, v.span, **numbers)


def from_verdict(v: PointVerdict) -> Certificate:
    """The certificate of ``certify``'s verdict (its prose recognized, its numbers read)."""
    for kind, sentence in _FIXED.items():
        if v.reason == sentence:
            return _make(kind, v)
    if m := _EXCESS_RE.fullmatch(v.reason):
        excess = next((k for k, what in _EXCESS_WHAT.items() if what == m["what"]), None)
        if excess is not None:
            return _make(excess, v)
    if m := _RANK_DROP_RE.fullmatch(v.reason):
        return _make(CertificateKind.RANK_DROP, v, exact_rank=int(m["exact_rank"]))
    if m := _SYMMETRIC_RE.fullmatch(v.reason):
        return _make(CertificateKind.SYMMETRIC_MINORS, v, symmetric_rank=int(m["symmetric_rank"]),
                     minors_rank=int(m["minors_rank"]), minors_rank_is_bound=bool(m["bound"]), codim=int(m["codim"]))
    raise ComputationError(f"certify gave a reason this package does not know (exact/onelayer.py changed?): {v.reason!r}")


def certify_point(A: Any, V: Any, *, dimension: int, rank_bound: int | None = None) -> Certificate:
    """:func:`ag_attention.exact.onelayer.certify` as a typed :class:`Certificate`."""
    return from_verdict(certify(A, V, dimension=dimension, rank_bound=rank_bound))
