"""The result of :func:`~.ed.ed_degree`: :class:`EDDegree` (the value, or what is proven when it is not decided)
and :class:`EDCount` (one msolve count)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._architecture import Architecture
from .._provenance import provenance
from .._results import ResultMixin
from .critical import Route

__all__ = ["EDCount", "EDDegree"]


@dataclass(frozen=True)
class EDCount:
    """One count: its prime and seed, the number of solutions in the weights, msolve's seconds."""

    prime: int
    seed: int
    solutions: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"prime": self.prime, "seed": self.seed, "solutions": self.solutions, "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class EDDegree(ResultMixin):
    """The ED degree of one layer's closure for a metric, with how it was computed and what it proves.

    ``ed_degree`` is the value only when it is decided (``final``): both msolve counts agree (probabilistic), or the
    monodromy met its stopping rule with every solution certified (numerical, with the proven lower bound equal to
    it), or the implicit route finished.  Otherwise it is None and the result holds what is known: ``lower_bound``
    (proven), ``upper_bound`` (proven), ``found`` (the monodromy's solutions when a limit stopped it), the Segre
    prediction (a conjecture) and why it is not decided (``status``)."""

    architecture: Architecture
    metric: str
    metric_description: str
    method: str  # "count", "monodromy", "m2", or "undecided"
    ed_degree: int | None
    fiber: int  # solutions in the weights per critical point (count)
    counts: tuple[EDCount, ...]  # the counts (method count)
    prime: int | None  # the prime field of the value (count, m2); None for the numerical route
    seed: int
    seconds: float
    samples: int | None = None  # input sequences of the data metric
    notes: tuple[str, ...] = field(default=())
    closure: tuple[int, int, int] | None = None  # (dimension, codimension, degree) from Macaulay2 (method m2)
    routes: tuple[Route, ...] = field(default=())
    lower_bound: int | None = None  # proven: certified solutions with pairwise disjoint images (monodromy), or deg
    monodromy: dict[str, Any] | None = None
    msolve: str | None = None  # msolve's version, when it ran
    macaulay2: str | None = None
    upper_bound: int | None = None  # proven: the multihomogeneous Bezout number over the fiber (formula.py)
    bounds: tuple[tuple[str, str, int], ...] = field(default=())  # (side, source, value), each proven
    prediction: dict[str, Any] | None = None  # the Segre formula's value and status (a conjecture)
    status: str = "decided"  # why the value is not decided, when it is not

    @property
    def final(self) -> bool:
        return self.ed_degree is not None

    @property
    def certificate(self) -> str:
        if self.method == "undecided":
            return f"not decided: ED degree >= {self.lower_bound or 0:,} (proven lower bound)" + (
                f", <= {self.upper_bound:,} (proven upper bound)" if self.upper_bound is not None else ""
            )
        if self.method == "monodromy":
            m = self.monodromy or {}
            return (
                f"numerical, with a proven lower bound: monodromy found {m.get('found')} solutions in the "
                f"weights ({self.fiber} per critical point), stopped by {m.get('stop')!r} (trace deviation "
                f"{m.get('trace_deviation')}); {m.get('certified')} of them certified by the Krawczyk test, "
                f"{self.lower_bound} with pairwise disjoint images: ED degree >= {self.lower_bound} (proven), "
                "equal to the value; one random target and form"
            )
        if self.method == "count":
            runs = ", ".join(f"{c.solutions} over GF({c.prime}) (seed {c.seed})" for c in self.counts)
            return (
                f"probabilistic: the critical equations in the weights (critical locus removed, on a slice of "
                f"the rescaling) have {runs} solutions, {self.fiber} per critical point; two primes, two "
                "random data and slices agree (a bad prime or unlucky choice changes a count with probability "
                "about degree / p)"
            )
        return (
            f"probabilistic: Macaulay2's closure ideal over GF({self.prime}) and its Lagrange conditions at "
            "random data (random combinations of the generators; no solution at a singular point for generic "
            "data), their solutions counted by msolve (the degree of a zero-dimensional ideal)"
        )

    def headline(self) -> str:
        """The first line: the value, or that it is not decided with the proven bounds."""
        what = f"ED degree of {self.architecture.describe()} ({self.metric})"
        if self.final:
            return f"{what}: {self.ed_degree}"
        known = []
        if self.lower_bound:
            known.append(f">= {self.lower_bound:,} (proven lower bound)")
        if self.upper_bound is not None:
            known.append(f"<= {self.upper_bound:,} (proven upper bound)")
        text = f"{what}: NOT DECIDED ({self.status}): " + ", ".join(known)
        m = self.monodromy or {}
        if m.get("found") is not None and self.fiber:
            text += f"; monodromy found {-(-int(m['found']) // self.fiber)} before its limit"
        if self.prediction and self.prediction.get("value") is not None:
            text += f"; the Segre formula predicts {self.prediction['value']:,} (a conjecture)"
        return text

    def to_dict(self) -> dict[str, Any]:

        return {
            "architecture": self.architecture.to_dict(),
            "final": self.final,
            "ed_degree": self.ed_degree,
            "status": self.status,
            "metric": self.metric,
            "metric_description": self.metric_description,
            "method": self.method,
            "certificate": self.certificate,
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
            "bounds": [{"side": side, "source": source, "value": value} for side, source, value in self.bounds],
            "prediction": self.prediction,
            "fiber": self.fiber,
            "counts": [c.to_dict() for c in self.counts],
            "monodromy": self.monodromy,
            "routes": [r.to_dict() for r in self.routes],
            "prime": self.prime,
            "seed": self.seed,
            "samples": self.samples,
            "seconds": round(self.seconds, 3),
            "coordinates": "reduced (the coefficients of the quadrics q_km(z) = (A_k z)(V_m z))",
            "notes": list(self.notes),
            "provenance": provenance(msolve=self.msolve, macaulay2=self.macaulay2),
        }

    def __repr__(self) -> str:
        value = self.ed_degree if self.final else f">= {self.lower_bound} (not decided)"
        return f"EDDegree({self.architecture.describe()}, metric {self.metric}: {value}, {self.method})"

    def __str__(self) -> str:
        lines = [
            self.headline(),
            f"  metric           {self.metric}: {self.metric_description}",
            f"  method           {self.method}",
            f"  certificate      {self.certificate}",
        ]
        for side, source, value in self.bounds:
            lines.append(f"  {side + ' bound':<16} {value:,} ({source})")
        if self.prediction is not None:
            predicted = self.prediction.get("value")
            shown = "-" if predicted is None else f"{predicted:,}"
            lines.append(f"  prediction       {shown} ({self.prediction['status']})")
        lines += [f"  route            {r.name}: {r.outcome} ({r.seconds:.1f} s)" for r in self.routes]
        field_ = f"prime {self.prime}, " if self.prime is not None else ""
        lines.append(f"  {field_}seed {self.seed}, {self.seconds:.2f} s")
        lines += [f"  note             {n}" for n in self.notes]
        return "\n".join(lines)
