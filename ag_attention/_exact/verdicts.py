"""The verdict of :func:`ag_attention._exact.singular.certify`: the kind of argument and its numbers.

The kind is a :class:`CertificateKind`; its numbers (preimages, ranks, the
span of the tangent images, ``dim M``, the symmetric factor's minors) are
fields of the frozen :class:`PointVerdict`.  Text exists only when a verdict is
printed (``str(verdict)``, also ``verdict.reason``); nothing parses it.

>>> v = PointVerdict(CertificateKind.RANK_DROP, True, 1, dimension=14, exact_rank=12)
>>> v.kind.name, v.decided, v.summary
('RANK_DROP', True, 'critical: single preimage, rank drop')
>>> print(v)  # doctest: +NORMALIZE_WHITESPACE
critical: single preimage, differential of rank 12 < dim M = 14 over QQ (a smooth point would make the finite
birational map a local isomorphism)
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Any

from .._checks import shown
from .._errors import InvalidArgumentError

__all__ = ["CertificateKind", "PointVerdict"]


class _Labelled(enum.EnumMeta):
    """``CertificateKind(value)`` refuses what is no label (an array, a number) with the package's error before
    Enum's own lookup, which fails on an unhashable value with an exception of its own (an array's ambiguous truth
    value) and never reaches ``_missing_``."""

    def __call__(cls, value: object, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and not isinstance(value, (str, cls)):
            labels = ", ".join(repr(k.value) for k in cls)  # type: ignore[var-annotated]
            raise InvalidArgumentError(f"value={shown(value)}: must be the label of a CertificateKind, one of {labels}")
        return super().__call__(value, *args, **kwargs)


class CertificateKind(enum.Enum, metaclass=_Labelled):
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

    @classmethod
    def _missing_(cls, value: object) -> CertificateKind:
        """``CertificateKind(label)`` of a label that is none: the package's error, naming the value and the labels."""
        labels = ", ".join(repr(k.value) for k in cls)
        raise InvalidArgumentError(f"value={shown(value)}: must be the label of a CertificateKind, one of {labels}")


@dataclass(frozen=True)
class PointVerdict:
    """Is a point singular (``True``), smooth (``False``) or undecided (``None``), and by which argument.

    ``preimages``: the rational preimages (up to the symmetries) found;
    ``differential_rank``: rank of the differential at the given weights (GF(p));
    ``span``: dimension spanned by the tangent images of all preimages (a lower bound);
    ``exact_rank``: the differential's rank over QQ (kind ``RANK_DROP``);
    ``symmetric_rank``, ``minors_rank``, ``minors_rank_is_bound``, ``codim``: the rank of the
    symmetric factor, the rank of the Jacobian of its 3x3 minors (a lower bound when
    ``minors_rank_is_bound``) and ``codim Y`` (kind ``SYMMETRIC_MINORS``).
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

    @property
    def reason(self) -> str:
        """The argument in words, with its numbers (rendered from the kind and the fields)."""
        return _render(self)

    def to_dict(self) -> dict[str, Any]:
        """The kind (its name), every number that is set, and the reason in words."""
        d = {k: v for k, v in asdict(self).items() if v is not None and k != "kind"}
        if not self.minors_rank_is_bound:
            d.pop("minors_rank_is_bound")
        return {"kind": self.kind.name, **d, "reason": self.reason}

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

_FIXED = {
    CertificateKind.VERTEX: "the vertex of a cone that spans its ambient space",
    CertificateKind.WHOLE_SPACE: "the closure is the whole ambient space",
    CertificateKind.NOT_RATIONAL: "preimages not defined over QQ (use the conjugate-point checks)",
    CertificateKind.SINGULAR_DOMAIN: (
        "single preimage where the rank-bounded domain is singular (rank A < a): a smooth, hence normal, "
        "image point would make the finite birational map a local isomorphism (Zariski's main theorem)"
    ),
    CertificateKind.IMMERSION: "single preimage, smooth domain, differential of rank dim M (immersion)",
    CertificateKind.UNDECIDED: "undecided by the parametrization",
}
_EXCESS_WHAT = {
    CertificateKind.PAIR_AND_SWAP: "two preimages (pair and swap)",
    CertificateKind.DOMAIN_EXCESS: "the domain is singular there (rank A < a)",
}


def _render(v: PointVerdict) -> str:
    if v.kind in _FIXED:
        return _FIXED[v.kind]
    if v.kind in _EXCESS_WHAT:
        return f"tangent excess: {_EXCESS_WHAT[v.kind]}; their tangent images span >= {v.span} > dim M = {v.dimension}"
    if v.kind is CertificateKind.RANK_DROP:
        return (
            f"critical: single preimage, differential of rank {v.exact_rank} < dim M = {v.dimension} over QQ "
            "(a smooth point would make the finite birational map a local isomorphism)"
        )
    return (
        "d' = 1, a = 1 (phi is 2:1): the closure is the cone over P^(d-1) x Y, Y = {symmetric rank <= 2}, "
        "whose ideal is generated by the 3x3 minors (Kutz 1974); their Jacobian at the symmetric factor "
        f"(rank {v.symmetric_rank}) has rank {'>= ' if v.minors_rank_is_bound else ''}{v.minors_rank} "
        f"{'<' if v.singular else '='} codim Y = {v.codim}"
    )
