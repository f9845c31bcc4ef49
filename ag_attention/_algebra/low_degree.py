"""The equations of one layer's closure by degree and multidegree: :class:`LowDegreeEquations`.

The result of :func:`ag_attention._algebra.interpolation.low_degree_equations`:
the minimal generators over QQ of each multidegree (:class:`Block`), their
counts, orbits under permutations of the indices and decomposition as a
``GL_d x GL_{d'} x GL_d`` representation, and what is known about
completeness (:mod:`ag_attention._algebra.completeness`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .._errors import ComputationError
from .._models import named_labels
from .._results import ResultMixin
from .multidegrees import Multidegree
from .representations import decompose

__all__ = ["Block", "LowDegreeEquations"]


@dataclass(frozen=True)
class Block:
    """One multidegree: its monomials, the dimension of the ideal there, its minimal generators."""

    multidegree: Multidegree
    monomials: int
    ideal_dimension: int
    generators: tuple[dict[tuple[int, ...], Fraction], ...]  # over QQ: monomial (sorted indices) -> coefficient

    @property
    def representative(self) -> Multidegree:
        """The non-increasing member of its orbit under permutations of the indices."""
        a, b, c = self.multidegree
        return (
            tuple(sorted(map(int, a), reverse=True)),
            tuple(sorted(map(int, b), reverse=True)),
            tuple(sorted(map(int, c), reverse=True)),
        )


@dataclass
class LowDegreeEquations(ResultMixin):
    """All minimal generators of degree ``<= max_degree`` of the closure's ideal, over QQ, verified.

    In a notebook it shows as its summary and a table of its fields
    (``_repr_markdown_``); ``to_frame()`` gives it as a one-row pandas
    ``DataFrame`` (its columns: the flattened ``to_dict()``).
    """

    d: int
    e: int
    a: int
    max_degree: int
    primes: tuple[int, ...]
    seed: int
    blocks: dict[int, list[Block]]
    variables: tuple[str, ...]
    seconds: float
    verified: bool  # every generator vanishes on the parametrization (exact substitution over QQ)
    extra: dict[str, Any] = field(default_factory=dict)
    #: the length test of ``ag_attention._algebra.completeness``, when it was run
    #: (``length_test.certified``: the ideal is complete)
    length_test: Any = None
    #: the leading-ideal test of ``ag_attention._algebra.completeness``, when it was run
    leading_test: Any = None

    def ideal_dimension(self, degree: int) -> int:
        return sum(b.ideal_dimension for b in self.blocks.get(degree, []))

    def hilbert_function(self, degree: int) -> int:
        """``dim (S/I)_D``: monomials of degree ``D`` minus equations."""
        n = len(self.variables)
        return math.comb(n + degree - 1, degree) - self.ideal_dimension(degree)

    def generators_of_degree(self, degree: int) -> list[dict[tuple[int, ...], Fraction]]:
        return [g for b in self.blocks.get(degree, []) for g in b.generators]

    @property
    def generator_count(self) -> dict[int, int]:
        return {D: len(self.generators_of_degree(D)) for D in sorted(self.blocks)}

    def orbits(self, degree: int) -> list[tuple[Multidegree, int, int]]:
        """``(representative, number of multidegrees in the orbit, generators per multidegree)``."""
        acc: dict[Multidegree, list[int]] = defaultdict(list)
        for b in self.blocks.get(degree, []):
            if b.generators:
                acc[b.representative].append(len(b.generators))
        out = []
        for rep, counts in sorted(acc.items(), reverse=True):
            if len(set(counts)) != 1:  # permutations preserve the ideal: a mismatch is a bug
                raise ComputationError(f"multidegrees of the orbit of {rep} have different generator counts {counts}")
            out.append((rep, len(counts), counts[0]))
        return out

    def representations(self, degree: int) -> list[tuple[Multidegree, int, int]]:
        """The minimal generators of ``degree`` as a ``GL_d x GL_{d'} x GL_d`` representation (rows of A, rows
        of V, the variable z): ``((lambda, mu, nu), multiplicity, dimension)`` per irreducible summand, from the
        generator counts per multidegree (docs/math/degree.md, section 6)."""

        character: dict[Multidegree, int] = {}
        for b in self.blocks.get(degree, []):
            if b.generators:
                alpha, beta, gamma = b.multidegree
                key = (tuple(map(int, alpha)), tuple(map(int, beta)), tuple(map(int, gamma)))
                character[key] = character.get(key, 0) + len(b.generators)
        found = decompose(character, (self.d, self.e, self.d))
        if sum(m * dim for _, m, dim in found) != self.generator_count.get(degree, 0):
            raise ComputationError(f"degree {degree}: the irreducibles do not add up to the generators")
        return found

    @staticmethod
    def _irreducible_text(shape: Multidegree, m: int, dim: int) -> str:
        name = " x ".join("S" + str(tuple(part)).replace(",)", ")") for part in shape)
        return f"{m} x [{name}] (dim {dim})" if m > 1 else f"[{name}] (dim {dim})"

    @property
    def certified_complete(self) -> bool:
        return any(t is not None and t.certified for t in (self.leading_test, self.length_test))

    @property
    def cohen_macaulay(self) -> str | None:
        """What the tests say about ``R/I`` being Cohen-Macaulay (None: nothing)."""
        if self.length_test is None:
            return None
        if self.length_test.certified:
            return "yes (proven by the length test)"
        if self.leading_test is not None and self.leading_test.certified and self.length_test.length is not None:
            return (
                f"no, unless {self.length_test.prime} is an unlucky prime: the complete ideal gives length "
                f"{self.length_test.length} > deg M = {self.length_test.degree}"
            )
        return None

    @property
    def complete(self) -> str:
        """What is known about completeness: certified, or every generator of degree <= max_degree is here."""
        for name, t in (("leading-ideal test", self.leading_test), ("length test", self.length_test)):
            if t is not None and t.certified:
                return (
                    f"certified: these generators (degree <= {self.max_degree}) generate the whole ideal "
                    f"({name}: {t.summary()})"
                )
        text = f"up to degree {self.max_degree}: all minimal generators of degree <= {self.max_degree}; "
        tests = [t.summary() for t in (self.leading_test, self.length_test) if t is not None]
        return text + ("; ".join(tests) if tests else "higher degrees not examined")

    def coordinate_labels(self) -> list[str]:
        return named_labels(self.variables, self.d, self.e)

    def to_dict(self) -> dict[str, Any]:
        return {
            "d": self.d,
            "d_out": self.e,
            "rank": self.a,
            "coordinates": "reduced",
            "method": "interpolate",
            "max_degree": self.max_degree,
            "primes": list(self.primes),
            "seed": self.seed,
            "generator_count": {str(D): n for D, n in self.generator_count.items()},
            "ideal_dimension": {str(D): self.ideal_dimension(D) for D in sorted(self.blocks)},
            "hilbert_function": {str(D): self.hilbert_function(D) for D in sorted(self.blocks)},
            "orbits": {
                str(D): [
                    {
                        "alpha": list(r[0]),
                        "beta": list(r[1]),
                        "gamma": list(r[2]),
                        "multidegrees": n,
                        "generators_each": g,
                    }
                    for r, n, g in self.orbits(D)
                ]
                for D in sorted(self.blocks)
            },
            "representations": {
                str(D): [
                    {
                        "A_rows": list(sh[0]),
                        "V_rows": list(sh[1]),
                        "z": list(sh[2]),
                        "multiplicity": m,
                        "dimension": dim,
                    }
                    for sh, m, dim in self.representations(D)
                ]
                for D in sorted(self.blocks)
            },
            "complete": self.complete,
            "certified_complete": self.certified_complete,
            "cohen_macaulay": self.cohen_macaulay,
            "length_test": None if self.length_test is None else self.length_test.to_dict(),
            "leading_ideal_test": None if self.leading_test is None else self.leading_test.to_dict(),
            "verified": self.verified,
            "notes": {k: str(v) for k, v in self.extra.items()},
            "variables": list(self.variables),
            "coordinate_labels": self.coordinate_labels(),
            "generators": {str(D): self.polynomial_strings(D) for D in sorted(self.blocks)},
            "seconds": round(self.seconds, 3),
        }

    def __repr__(self) -> str:
        return (
            f"LowDegreeEquations(d={self.d}, d'={self.e}, a={self.a}: generators by degree {self.generator_count}, "
            f"primes {len(self.primes)}, {'verified' if self.verified else 'not verified'})"
        )

    def __str__(self) -> str:
        lines = [
            f"Equations of the closure of d={self.d}, d'={self.e}, a={self.a} (reduced coordinates, "
            f"{len(self.variables)}), by interpolation per torus multidegree",
        ]
        for D in sorted(self.blocks):
            n = self.generator_count[D]
            orbit_text = ", ".join(f"{r} x{size}: {g}" for r, size, g in self.orbits(D)[:4])
            more = f", ... ({len(self.orbits(D)) - 4} more orbits)" if len(self.orbits(D)) > 4 else ""
            lines.append(
                f"  degree {D}: {n} minimal generators (dim I_{D} = {self.ideal_dimension(D)})"
                + (f"; orbits (alpha, beta, gamma) x size: per multidegree: {orbit_text}{more}" if n else "")
            )
            if n:
                irreps = self.representations(D)
                shown = ", ".join(self._irreducible_text(*r) for r in irreps[:6])
                extra = f", ... ({len(irreps) - 6} more)" if len(irreps) > 6 else ""
                lines.append(f"    as GL(A rows) x GL(V rows) x GL(z): {len(irreps)} irreducible(s): {shown}{extra}")
        verified = "every generator vanishes on the parametrization (exact substitution over QQ)"
        lines += [
            f"  complete         {self.complete}",
            f"  verified         {verified if self.verified else 'no'}",
            f"  primes {', '.join(map(str, self.primes))} (counts agree), seed {self.seed}, {self.seconds:.2f} s",
        ]
        if self.leading_test is not None:
            t = self.leading_test
            lines.append(
                f"  leading ideals   {t.summary()}; msolve {t.seconds_j:.2f} s (J) + {t.seconds_i:.2f} s (elimination)"
            )
        if self.length_test is not None:
            t = self.length_test
            lines.append(f"  length test      {t.summary()}; prime {t.prime}, seed {t.seed}, {t.seconds:.2f} s")
        if self.cohen_macaulay is not None:
            lines.append(f"  Cohen-Macaulay   {self.cohen_macaulay}")
        lines += [f"  {k:<16} {v}" for k, v in self.extra.items()]
        return "\n".join(lines)

    def polynomial_strings(self, degree: int) -> list[str]:
        out = []
        for g in self.generators_of_degree(degree):
            terms = []
            for mono, c in sorted(g.items(), reverse=True):
                m = "*".join(self.variables[i] for i in mono)
                terms.append(f"{c}*{m}")
            out.append(" + ".join(terms).replace("+ -", "- "))
        return out
