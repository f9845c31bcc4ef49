"""Orbits of weight pairs ``(A, V)`` of one layer under ``GL_d x GL_d x GL_{d'}``.

The group acts by ``(A, V) -> (g A h^{-1}, k V h^{-1})`` (``h`` on the input
space ``W``, ``g`` on the rows of ``A``, ``k`` on the rows of ``V``) and
linearly on the coordinates of ``phi``: the array of quadrics
``q_{k,m}(z) = (A z)_k (V z)_m`` becomes ``(g (x) k) q o h^{-1}``.  So it
preserves the neuromanifold and its closure, and the singular locus and the
rank-one locus are unions of orbits.

A pair is a representation ``U <-A- W -V-> U'`` of the quiver of type A_3;
by Gabriel's theorem it is a direct sum of the six indecomposables
(``U``, ``W``, ``U'``, ``W->U``, ``W->U'``, ``U<-W->U'``), so there are finitely
many orbits, one for each multiplicity vector with the right dimensions.
Checking one representative per orbit therefore decides the whole singular
locus.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Orbit", "orbit_representatives"]


@dataclass(frozen=True)
class Orbit:
    """One orbit: multiplicities of the indecomposables and a 0/1 representative."""

    d: int
    d_out: int
    to_a: int  # W -> U only
    to_v: int  # W -> U' only
    to_both: int  # U <- W -> U'
    A: np.ndarray
    V: np.ndarray

    @property
    def rank_a(self) -> int:
        return self.to_a + self.to_both

    @property
    def rank_v(self) -> int:
        return self.to_v + self.to_both

    @property
    def critical(self) -> bool:
        """``A = u v^T, V = w v^T`` with the same ``v`` (Lemma A.3), both nonzero."""
        return self.rank_a == 1 and self.rank_v == 1 and self.to_both == 1

    @property
    def zero(self) -> bool:
        return self.rank_a == 0 or self.rank_v == 0

    @property
    def label(self) -> str:
        kind = "critical" if self.critical else "zero" if self.zero else f"rank A={self.rank_a}, rank V={self.rank_v}"
        return f"[{self.to_a},{self.to_v},{self.to_both}] {kind}"


def orbit_representatives(d: int, d_out: int, rank: int | None = None) -> list[Orbit]:
    """All orbits with ``rank A <= rank`` (default ``d``), including the zero ones."""
    rank = d if rank is None else rank
    out = []
    for to_a in range(d + 1):
        for to_v in range(d_out + 1):
            for to_both in range(min(d, d_out) + 1):
                if to_a + to_both > min(rank, d):
                    continue
                if to_a + to_v + to_both > d or to_v + to_both > d_out:
                    continue
                A = np.zeros((d, d), dtype=np.int64)
                V = np.zeros((d_out, d), dtype=np.int64)
                # basis of W: [to A | to V | to both | killed]
                for i in range(to_a):
                    A[i, i] = 1
                for i in range(to_v):
                    V[i, to_a + i] = 1
                for i in range(to_both):
                    A[to_a + i, to_a + to_v + i] = 1
                    V[to_v + i, to_a + to_v + i] = 1
                out.append(Orbit(d, d_out, to_a, to_v, to_both, A, V))
    return out
