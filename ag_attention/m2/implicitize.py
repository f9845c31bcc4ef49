"""Implicitization of one lightning layer with Macaulay2 (LightningAttention package).

:func:`implicitize` asks Macaulay2 for the ideal of the Zariski closure of the
neuromanifold of one layer (the kernel of the parametrization ring map), in
reduced or full coordinates, over QQ or a prime field, and returns an
:class:`Implicitization` with the generators as python-flint polynomials in
the coordinate variables ``c_1..c_n`` (whose meaning is
:attr:`ag_attention.models.parametrization.Parametrization.coordinates`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..architecture import Architecture
from ..errors import InvalidArgumentError
from ..exact import linalg
from ..exact.linalg import RationalPolynomial, RationalPolynomialRing
from ..exact.field import is_prime
from ..models.parametrization import COORDINATES
from .jobs import DEFAULT_TIMEOUT, run_json
from .parse import parse_polynomial
from .schema import Where

__all__ = ["Implicitization", "implicitize", "check_field", "parametrization_call", "RESULT_SCHEMA"]

_FIELD = re.compile(r"^ZZ/(\d+)$")


def check_field(field_: str) -> str:
    """``"QQ"`` or ``"ZZ/p"`` with ``p`` a prime below ``2^31``."""
    if field_ == "QQ":
        return field_
    m = _FIELD.match(str(field_).replace(" ", ""))
    if not m:
        raise InvalidArgumentError(f"field={field_!r}: must be QQ or ZZ/p for a prime p, e.g. ZZ/32003")
    p = int(m.group(1))
    if not (2 < p < 2**31) or not is_prime(p):
        raise InvalidArgumentError(f"field={field_!r}: {p} is not a prime between 3 and 2^31")
    return f"ZZ/{p}"


def parametrization_call(arch: Architecture, coords: str = "reduced", field_: str = "QQ", weights: str | None = None) -> str:
    """The Macaulay2 expression building the layer's parametrization (validated input only)."""
    if not isinstance(arch, Architecture):
        raise InvalidArgumentError(f"arch={arch!r}: must be an Architecture")
    if arch.depth != 1 or not arch.is_plain or arch.normalized:
        raise InvalidArgumentError(
            f"architecture {arch.describe()}: Macaulay2 implicitization is for one plain lightning layer"
        )
    if coords not in COORDINATES:
        raise InvalidArgumentError(f"coords={coords!r}: must be one of {', '.join(COORDINATES)}")
    if coords == "reduced" and arch.tokens < 2:
        raise InvalidArgumentError(f"tokens={arch.tokens}: reduced coordinates need t >= 2; use coords='full'")
    field_ = check_field(field_)
    d, e = arch.widths
    a = arch.ranks[0]
    weights = "AV" if weights is None else weights
    if weights not in ("AV", "QKV"):
        raise InvalidArgumentError(f"weights={weights!r}: must be AV or QKV")
    if weights == "AV":
        rank = "null" if a >= d else str(a)
    else:
        rank = str(a)
    return (
        f'lightningParametrization({d}, {e}, AttentionRank => {rank}, Tokens => {arch.tokens}, '
        f'Coordinates => "{coords}", Weights => "{weights}", CoefficientRing => {field_})'
    )


def _generators_parse(payload: dict[str, Any]) -> bool:
    variables = payload["variables"]
    if not variables or len(set(variables)) != len(variables):
        raise ValueError(f"the variables must be distinct names, got {variables[:5]}")
    ctx = linalg.rational_polynomial_ring(variables, "degrevlex")
    for g in payload["generators"]:
        parse_polynomial(g, variables, ctx)
    return True


#: what the implicitization job returns (the generators must parse as polynomials in the variables)
RESULT_SCHEMA = Where(
    {"generators": [str], "variables": [str], "dimension": int, "codimension": int, "degree": int, "m2_version": str},
    _generators_parse,
    "generators that are polynomials in the variables",
)


@dataclass(frozen=True)
class Implicitization:
    """The Zariski closure of a one-layer neuromanifold, computed by Macaulay2."""

    architecture: Architecture
    coordinates: str
    field: str
    weights: str
    variables: tuple[str, ...]
    generator_strings: tuple[str, ...]
    dimension: int  # affine dimension of the cone (Krull dimension of S/I)
    codimension: int
    degree: int
    backend: str
    m2_version: str
    seconds: float
    cached: bool
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def ambient_dimension(self) -> int:
        return len(self.variables)

    @cached_property
    def ring(self) -> RationalPolynomialRing:
        return linalg.rational_polynomial_ring(self.variables, "degrevlex")

    @cached_property
    def generators(self) -> list[RationalPolynomial]:
        """The generators as polynomials over QQ in ``variables`` (integers mod p for ZZ/p)."""
        return [parse_polynomial(s, self.variables, self.ring) for s in self.generator_strings]

    @property
    def generator_degrees(self) -> list[int]:
        return [int(g.total_degree()) for g in self.generators]

    def to_dict(self) -> dict[str, Any]:
        return {
            "architecture": self.architecture.to_dict(),
            "coordinates": self.coordinates,
            "field": self.field,
            "weights": self.weights,
            "generators": list(self.generator_strings),
            "generator_degrees": self.generator_degrees,
            "variables": list(self.variables),
            "dimension": self.dimension,
            "codimension": self.codimension,
            "degree": self.degree,
            "ambient_dimension": self.ambient_dimension,
            "backend": self.backend,
            "m2_version": self.m2_version,
            "seconds": round(self.seconds, 3),
            "cached": self.cached,
            **self.extra,
        }

    def __repr__(self) -> str:
        return (
            f"Implicitization({self.architecture.describe()}, {self.coordinates} coordinates over {self.field}: "
            f"{len(self.generator_strings)} generators, dim {self.dimension}, degree {self.degree}, "
            f"{self.backend} M2 {self.m2_version})"
        )

    def __str__(self) -> str:
        degs: dict[int, int] = {}
        for d in self.generator_degrees:
            degs[d] = degs.get(d, 0) + 1
        deg_text = ", ".join(f"{n} of degree {d}" for d, n in sorted(degs.items())) or "none (the whole space)"
        lines = [
            f"Zariski closure of the neuromanifold of {self.architecture.describe()}",
            f"  coordinates      {self.coordinates}, {self.ambient_dimension} ({self.weights} weights, over {self.field})",
            f"  dimension        {self.dimension} (affine cone), codimension {self.codimension}",
            f"  degree           {self.degree}",
            f"  generators       {len(self.generator_strings)}: {deg_text}",
        ]
        for s in self.generator_strings[:3]:
            lines.append(f"    {s if len(s) <= 110 else s[:107] + '...'}")
        if len(self.generator_strings) > 3:
            lines.append(f"    ... ({len(self.generator_strings) - 3} more)")
        lines.append(
            f"  Macaulay2 {self.m2_version} ({self.backend}), {self.seconds:.2f} s{' (cached)' if self.cached else ''}"
        )
        return "\n".join(lines)


def implicitize(
    arch: Architecture,
    *,
    coords: str = "reduced",
    field: str = "QQ",
    weights: str | None = None,
    backend: str = "auto",
    timeout: float = DEFAULT_TIMEOUT,
    cache: bool = True,
) -> Implicitization:
    """Ideal of the Zariski closure of the neuromanifold of one lightning layer.

    ``weights`` is ``"AV"`` (default; with ``a < d`` the weight ring is cut
    by the ``(a+1)``-minors of ``A``) or ``"QKV"``; both have the same image.
    """
    call = parametrization_call(arch, coords, field, weights)
    body = (
        f"P = {call};\n"
        "I = closureIdeal P;\n"
        "result = hashTable {\n"
        '  "generators" => apply(flatten entries gens I, toString),\n'
        '  "variables" => apply(gens ring I, toString),\n'
        '  "dimension" => dim I,\n'
        '  "codimension" => codim I,\n'
        '  "degree" => degree standardGrading I,\n'
        '  "m2_version" => version#"VERSION"\n'
        "};\n"
    )
    job = run_json(body, schema=RESULT_SCHEMA, backend=backend, timeout=timeout,
                   label=f"implicitize {arch.describe()} ({coords}, {field})", cache=cache)
    p = job.payload
    return Implicitization(
        architecture=arch,
        coordinates=coords,
        field=check_field(field),
        weights="AV" if weights is None else weights,
        variables=tuple(p["variables"]),
        generator_strings=tuple(p["generators"]),
        dimension=int(p["dimension"]),
        codimension=int(p["codimension"]),
        degree=int(p["degree"]),
        backend=job.backend,
        m2_version=job.m2_version,
        seconds=job.seconds,
        cached=job.cached,
    )
