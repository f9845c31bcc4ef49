"""Their implicit ideal J against the package's closure ideal (:func:`compare_ideal`): one part of
:mod:`.their_code`.

Every generator of J vanishes on the package's parametrization with ``rank A <= at`` (exact substitution over QQ: J
is inside the closure's ideal); and Macaulay2 decides ``J == phi(I) + (the linear forms of J)``, with ``I`` the
package's closure ideal (``implicitize``, reduced coordinates for t = 2, full ones for t = 1) pushed into their
coordinates, and compares codimension, degree and Hilbert numerator.

Their t = 1 driver eliminates without ``minors(at+1, A)`` (their t > 1 driver adds it at its line 74): its ideal
is the one of ``a = d`` whatever ``at`` is; the golden files also keep the ideal with the rank constraint (not their
code), and the comparison uses the ideal their code computes, against the package's closure at ``a = d``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..._algebra import implicitize
from ..._architecture import Architecture
from ..._errors import InvalidArgumentError
from ..._m2 import run_json
from ..._models import full_structure, reduced_keys
from .coordinates import _orbit3, reduced_form
from .families import on_image
from .golden import Golden, Terms
from .spans import _to_ring

__all__ = ["IdealComparison", "compare_ideal"]


@dataclass
class IdealComparison:
    """Their implicit ideal J (as their code computes it) against the package's closure ideal."""

    d: int
    at: int
    t: int
    package_rank: int  # the rank bound of the package's closure compared with (t = 1: d, as their elimination)
    generators: int
    vanishing: int  # generators of J that vanish on the package's parametrization (exact)
    equal: bool | None  # Macaulay2: J == phi(I) + linear(J); None when not asked
    theirs: dict[str, Any]  # codim, degree, dim, Hilbert numerator of J (their file)
    ours: dict[str, Any] = field(default_factory=dict)  # the same of phi(I) + linear(J) (Macaulay2)
    seconds: float = 0.0

    @property
    def agrees(self) -> bool:
        return (
            self.vanishing == self.generators
            and self.equal is not False
            and all(
                self.ours.get(k) == self.theirs.get(k)
                for k in ("codim", "degree", "hilbert_numerator")
                if k in self.ours
            )
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "d": self.d,
            "at": self.at,
            "t": self.t,
            "package_rank": self.package_rank,
            "generators": self.generators,
            "vanishing": self.vanishing,
            "equal": self.equal,
            "theirs": self.theirs,
            "ours": self.ours,
            "agrees": self.agrees,
            "seconds": round(self.seconds, 2),
        }


def _m2_poly(terms: Terms, names: Sequence[str]) -> str:
    parts = []
    for c, mono in terms:
        m = "*".join(f"{names[v]}^{e}" for v, e in mono)
        parts.append(f"({c.numerator}/{c.denominator})" + (f"*{m}" if m else ""))
    return " + ".join(parts) if parts else "0"


def _package_ideal_in_their_ring(g: Golden, rank: int, timeout: float) -> tuple[list[Terms], Any]:
    """The package's closure ideal of one layer ``(d, 1, rank)`` at ``t`` tokens, its generators pushed into their
    coordinates: reduced coordinate ``c[l,(u,v)] = w(u,v) y[(u,2),(v,2),(l,1)]`` (t = 2), full coordinate
    ``full_K = |S_3 K| y_K`` (t = 1)."""
    arch = Architecture((g.d, 1), (rank,), tokens=g.t)
    imp = implicitize(arch, coords="reduced" if g.t >= 2 else "full", field="QQ", timeout=timeout)
    position = {lab: i for i, lab in enumerate(g.labels)}
    if g.t >= 2:
        images: list[tuple[int, Fraction]] = []
        for row, _, u, v in reduced_keys(g.d, 1):
            lab = tuple(sorted(((u + 1, 2), (v + 1, 2), (row + 1, 1))))
            form = reduced_form(lab, g.d)
            ((_, q),) = form.items()
            images.append((position[lab], 1 / q))
        order = images
    else:
        keys, _ = full_structure(g.d, 1, 1)
        order = []
        for full_key in keys:
            features = tuple(sorted(int(f) + 1 for f in full_key[2]))
            order.append((position[features], Fraction(_orbit3(features))))
    out = []
    for gen in imp.generator_terms:
        terms: dict[tuple[tuple[int, int], ...], Fraction] = {}
        for exps, coefficient in gen:
            c = Fraction(coefficient)
            mono: dict[int, int] = {}
            for i, e in enumerate(exps):
                if e:
                    var, scale = order[i]
                    c *= scale**e
                    mono[var] = mono.get(var, 0) + e
            mono_key = tuple(sorted(mono.items()))
            terms[mono_key] = terms.get(mono_key, Fraction(0)) + c
        out.append([(q, k) for k, q in terms.items() if q])
    return out, imp


def compare_ideal(g: Golden, timeout: float = 900.0, m2: bool = True) -> IdealComparison:
    """Their J against the package's closure ideal (see the module docstring): the exact vanishing of J on the
    package's parametrization, and (``m2``) Macaulay2's equality and Hilbert data."""
    if g.ideal is None:
        raise InvalidArgumentError(f"{g.path}: the golden file has no implicit ideal")
    t0 = time.perf_counter()
    rank = g.at if g.t >= 2 else g.d  # their t = 1 elimination has no rank constraint
    gens = [_to_ring(g, terms) for terms in g.ideal["generators"]]
    vanish = sum(on_image(gens, g.d, g.t, rank, 1)) if gens else 0
    theirs = {k: g.ideal[k] for k in ("codim", "degree", "dim", "hilbert_numerator")}
    result = IdealComparison(g.d, g.at, g.t, rank, len(gens), vanish, None, theirs)
    if m2:
        pushed, imp = _package_ideal_in_their_ring(g, rank, timeout)
        names = [f"y{i}" for i in range(len(g.labels))]
        J = [_m2_poly(t, names) for t in g.ideal["generators"]]
        linear = [_m2_poly(t, names) for t in g.ideal["generators"] if max(sum(e for _, e in m) for _, m in t) == 1]
        I = [_m2_poly(t, names) for t in pushed]
        body = (
            f"L = QQ[{', '.join(names)}];\n"
            f"J = ideal({{{', '.join(J) or '0_L'}}});\n"
            f"K = ideal({{{', '.join(I + linear) or '0_L'}}});\n"
            "h = numerator reduceHilbert hilbertSeries K;\n"
            'result = hashTable {"equal" => J == K, "codim" => codim K, "degree" => degree K, '
            '"dim" => dim K, "hilbert" => apply(listForm h, t -> {first t#0, t#1})};\n'
        )
        job = run_json(
            body,
            schema={"equal": bool, "codim": int, "degree": int, "dim": int, "hilbert": list},
            timeout=timeout,
            label=f"their J at ({g.d},{g.at},{g.t}) against the closure",
        )
        r = job.payload
        num: dict[int, int] = {int(e): int(c) for e, c in r["hilbert"]}
        result.equal = bool(r["equal"])
        result.ours = {
            "codim": r["codim"],
            "degree": r["degree"],
            "dim": r["dim"],
            "hilbert_numerator": [num.get(k, 0) for k in range(max(num) + 1)] if num else [0],
            "implicitize_seconds": round(imp.seconds, 1),
            "cached": imp.cached,
        }
    result.seconds = time.perf_counter() - t0
    return result
