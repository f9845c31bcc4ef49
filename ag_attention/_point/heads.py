"""Every head's geometry at real sizes: ``A_h = W_q,h^T W_k,h`` and ``V_h = W_O,h W_v,h`` from their factors.

A checkpoint stores each head as thin factors (``d_h x d``), so its two matrices are products of rank at most
``d_h``; everything here is computed from the factors, never from the ``d x d`` products (GPT-2-small, 144
heads, d = 768, in seconds: ``bench/heads.py``). Per head (docs/math/point.md, point-heads):

* **exact ranks** of ``A_h`` and ``V_h`` at the exact binary values of the floats: the rank over GF(p)
  (``p`` below 2^21, BLAS: :func:`ag_attention._exact.linalg.rank`) is a lower bound on the rank over QQ; it
  is the rank over QQ when it equals ``d_h`` (the factors' own bound: ``rank L R <= d_h``), and otherwise the
  rank over QQ is computed exactly (FLINT, the factors scaled to integers): a rank below ``d_h`` is never a
  guess. ``A_h = 0`` or ``V_h = 0`` (a *dead* head) is decided the same way;
* the **singular values** in float64 (from the QR factors of the two factors: ``L R = U_1 (R_1 R_2^T) U_2^T``,
  a ``d_h x d_h`` SVD), with their error bound ``4 d_h eps ||L|| ||R||`` stated;
* **near-equal blocks**: consecutive singular values closer than ``rtol`` times the largest (within a block the
  singular vectors, a basis of the head's subspaces, are not identifiable);
* **distances to the rank strata** (Eckart-Young): the relative distance of ``A_h`` to ``rank <= j`` is
  ``sqrt(sum_{i >= j} s_i^2) / ||A_h||_F``; the numerical rank at ``rtol``;
* **near-dead**: the head's output scale (``||A_h|| ||V_h||``, invariant under the rescaling; ``||V_h||`` with
  softmax) below ``rtol`` times the layer's largest;
* the **verdict** the head ranks prove: a head is a critical point of its own parametrization ``(W_q, W_k, V)
  -> phi`` when ``V_h = 0`` (its ``W_q,h``, ``W_k,h`` are kernel directions), ``A_h = 0`` (lightning: its
  ``V_h``), or ``rank A_h < d_h <= d`` (then ``rank W_q,h < d_h`` or ``rank W_k,h < d_h``, and the image of
  ``(dQ, dK) -> dQ^T K + Q^T dK`` has dimension ``d (r_Q + r_K) - r_Q r_K < d_h (2d - d_h)``): its local rank is
  below Theorem 3.2's (3.9's) ``dim M_1``. The layer's local rank is at most the sum of its heads' bounds, so
  it is critical whenever its dimension is the heads' count ``H dim M_1`` (the secant not defective: not proven
  at these sizes); ``point`` decides it where the dimension is computed.

At a network's exact weights (:func:`head_kernel`, :func:`with_head_kernel`, :func:`softmax_head_bound`) the
kernel directions those verdicts name, exact rationals, bound the whole network's local rank from above with the
symmetry tangents: what decides a dead or rank-deficient head in ``point``'s report (lightning and softmax).
"""

from __future__ import annotations

import csv
import io
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from .._files import atomic_write
from .._numeric import check_rtol
from .._results import ResultMixin, to_frame
from .factors import GAP_RTOL, PRIME, near_equal_blocks, product_rank, product_singular_values, residues
from .grouped import GroupedLayer
from .head_blocks import TWIN_PROBES, Extra, FactorAtPoint, extra, factor, twins, variant_verdict, verdict
from .kernel import head_kernel, softmax_head_bound, with_head_kernel
from .plot import plot_heads

__all__ = [
    "FactorAtPoint",
    "HeadAtPoint",
    "HeadsTable",
    "head_table",
    "head_kernel",
    "with_head_kernel",
    "softmax_head_bound",
    "residues",
    "product_rank",
    "product_singular_values",
    "near_equal_blocks",
    "PRIME",
]


@dataclass(frozen=True)
class HeadAtPoint:
    """One head: its ``A_h`` and ``V_h``, dead / near-dead, and the verdict its ranks prove."""

    layer: int  # 1-based
    head: int  # 1-based
    size: int  # d_h
    width: int  # d
    A: FactorAtPoint
    V: FactorAtPoint
    scale: float  # the head's output scale relative to its layer's largest
    dead: str  # "V_h = 0", "A_h = 0" (lightning: softmax with A_h = 0 averages), or ""
    near_dead: bool
    critical: bool  # a critical point of its own parametrization, proven from its ranks
    reason: str  # why (the missing directions), or why not decided
    outputs: int = 0  # d' (the rows of W_O,h)
    normalized: bool = False
    # affine attention (docs/math/affine.md): the blocks the scores and values see, Q~^T K~ and W_O [W_v | b_v]
    affine_A: FactorAtPoint | None = None
    affine_V: FactorAtPoint | None = None
    # rotary positions (docs/math/rotary.md): (live frequency pairs, pairs), and the rank of the block that does
    # not turn (None when every coordinate turns)
    pairs: tuple[int, int] | None = None
    still_rank: int | None = None

    @property
    def plain(self) -> bool:
        """The paper's head (no biases, no rotary positions): the bounds of :meth:`bound` and :attr:`generic`."""
        return self.affine_A is None and self.affine_V is None and self.pairs is None

    @property
    def generic(self) -> int:
        """``dim M_1`` of one head (Theorem 3.2: ``a(2d - a) + d d' - 1``; softmax, Theorem 3.9: one more)."""
        a, d = min(self.size, self.width), self.width
        return a * (2 * d - a) + d * self.outputs - (0 if self.normalized else 1)

    @property
    def bound(self) -> int:
        """A proven upper bound on the head's own local rank, from its ranks (module docstring)."""
        a, d, dd = min(self.size, self.width), self.width, self.width * self.outputs
        if self.V.zero:
            return dd  # only dV moves phi
        if self.A.zero and not self.normalized:
            return a * (2 * d - a)  # only dA moves phi
        if self.A.rank < a:  # r_Q or r_K below a: the tangent image of (Q, K) -> Q^T K is at most d(2a-1)-a(a-1)
            return d * (2 * a - 1) - a * (a - 1) + dd - (0 if self.normalized else 1)
        return self.generic

    @property
    def name(self) -> str:
        """``layer.head`` numbered from 0, as Hugging Face and TransformerLens number them (``0.3``)."""
        return f"{self.layer - 1}.{self.head - 1}"

    def row(self) -> dict[str, Any]:
        """One row of the per-head table (:meth:`HeadsTable.rows`, ``--csv``): flat values, numbered from 0."""
        out: dict[str, Any] = {"layer": self.layer - 1, "head": self.head - 1, "head_size": self.size}
        for name, f in (("A", self.A), ("V", self.V), ("affine_A", self.affine_A), ("affine_V", self.affine_V)):
            out[f"rank_{name}"] = None if f is None else f.rank
            out[f"bound_{name}"] = None if f is None else f.bound
            out[f"numerical_rank_{name}"] = None if f is None else f.numerical_rank
            out[f"largest_{name}"] = None if f is None or not f.singular_values else f.singular_values[0]
            out[f"smallest_{name}"] = None if f is None or not f.singular_values else f.singular_values[-1]
            out[f"to_lower_rank_{name}"] = None if f is None else f.to_lower
            out[f"near_equal_{name}"] = None if f is None else len(f.blocks)
        out.update(
            live_pairs=None if self.pairs is None else self.pairs[0],
            pairs=None if self.pairs is None else self.pairs[1],
            still_rank=self.still_rank,
            scale=self.scale,
            dead=self.dead or None,
            near_dead=self.near_dead,
            critical=self.critical,
            reason=self.reason,
        )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer - 1,
            "head": self.head - 1,
            "head_size": self.size,
            "A": self.A.to_dict(),
            "V": self.V.to_dict(),
            "affine_A": None if self.affine_A is None else self.affine_A.to_dict(),
            "affine_V": None if self.affine_V is None else self.affine_V.to_dict(),
            "frequency_pairs": None if self.pairs is None else {"live": self.pairs[0], "pairs": self.pairs[1]},
            "still_rank": self.still_rank,
            "dead": self.dead or None,
            "scale": self.scale,
            "near_dead": self.near_dead,
            "critical": self.critical,
            "reason": self.reason,
        }


def _layer(
    layer: GroupedLayer, normalized: bool, rtol: float, p: int, gap_rtol: float = GAP_RTOL
) -> list[tuple[int, int, int, FactorAtPoint, FactorAtPoint, float, int, Extra]]:
    """Each head of one layer: ``(index, d_h, d, A_h, V_h, output scale, d', affine and rotary extras)``."""
    found = []
    for h, (Q, W_O) in enumerate(zip(layer.Q, layer.W_O)):
        g = h // layer.group
        K, W_v = layer.K[g], layer.W_v[g]
        A = factor(Q.T, K, rtol, p, gap_rtol)
        V = factor(W_O, W_v, rtol, p, gap_rtol)
        x = extra(layer, h, Q, K, W_O, W_v, rtol, p)
        sa, sv = (x.affine_A or A).norm, (x.affine_V or V).norm
        found.append((h, Q.shape[0], Q.shape[1], A, V, sv if normalized else sa * sv, W_O.shape[0], x))
    return found


def head_table(
    layers: Sequence[GroupedLayer],
    *,
    normalized: bool,
    rtol: float = 1e-3,
    model: str = "",
    p: int = PRIME,
    gap_rtol: float = GAP_RTOL,
    notes: Sequence[str] = (),
    factored_values: bool = True,
) -> HeadsTable:
    """The table of every head of ``layers`` (each in its factors: :class:`~ag_attention._point.grouped.GroupedLayer`,
    float or exact arrays) at ``rtol`` (module docstring); ``normalized``: softmax (``A_h = 0`` is then not dead);
    ``gap_rtol``: the relative gap below which two singular values are near-equal (:func:`near_equal_blocks`);
    ``notes``: what the reading said (ignored tensors, biases, positions), kept with the table;
    ``factored_values``: ``V_h = W_O,h W_v,h`` is the checkpoint's own parametrization, so a rank of ``V_h`` below
    ``d_h`` is decided critical like ``A_h``'s (False where the model analyses ``V_h`` free: ``point``'s report)."""
    rtol = check_rtol(rtol)
    t0 = time.perf_counter()
    heads: list[HeadAtPoint] = []
    with threadpool_limits(limits=1, user_api="blas"):  # d_h-sized products: BLAS threads only cost (10x beside a
        found_layers = [_layer(layer, normalized, rtol, p, gap_rtol) for layer in layers]  # busy core: 44 s, 4 s)
    for l, found in enumerate(found_layers):
        top = max((f[5] for f in found), default=0.0)
        for h, size, width, A, V, scale, outputs, x in found:
            rel = scale / top if top > 0 else 0.0
            if x == Extra():
                critical, reason = verdict(A, V, size, width, normalized, factored_values)
                dead = "V_h = 0" if V.zero else "A_h = 0" if A.zero and not normalized else ""
            else:
                critical, reason, dead = variant_verdict(A, V, x, size, normalized)
            heads.append(
                HeadAtPoint(
                    l + 1,
                    h + 1,
                    size,
                    width,
                    A,
                    V,
                    rel,
                    dead,
                    rel < rtol and not dead,
                    critical,
                    reason,
                    outputs,
                    normalized,
                    x.affine_A,
                    x.affine_V,
                    x.pairs,
                    x.still_rank,
                )
            )
    pairs = twins(layers, p)
    return HeadsTable(
        tuple(heads), len(layers), normalized, rtol, p, time.perf_counter() - t0, model, tuple(notes), gap_rtol, pairs
    )


@dataclass(frozen=True)
class HeadsTable(ResultMixin):
    """Every head's geometry (module docstring): ``heads`` in layer-major order."""

    heads: tuple[HeadAtPoint, ...]
    layers: int
    normalized: bool
    rtol: float
    prime: int
    seconds: float
    model: str = ""
    notes: tuple[str, ...] = ()  # what the reading said: ignored tensors, biases, positions, grouped-query heads
    gap_rtol: float = GAP_RTOL
    twins: tuple[tuple[int, int, int, str], ...] = ()  # (layer, head, head, kind), 1-based: proportional functions

    def dead(self) -> list[HeadAtPoint]:
        return [h for h in self.heads if h.dead]

    def critical(self) -> list[HeadAtPoint]:
        return [h for h in self.heads if h.critical]

    def grid(self, what: str = "scale") -> np.ndarray:
        """A ``heads x layers`` array of ``scale``, ``rank_A``, ``rank_V`` or ``critical`` (the figure's data)."""
        per = max((h.head for h in self.heads), default=0)
        out = np.full((per, self.layers), np.nan)
        for h in self.heads:
            out[h.head - 1, h.layer - 1] = {
                "scale": h.scale,
                "rank_A": h.A.rank,
                "rank_V": h.V.rank,
                "critical": float(h.critical),
            }[what]
        return out

    def plot(self, path: Any) -> Any:
        """Draw the heads x layers figure into ``path`` (matplotlib): the relative output scale, dead and
        critical heads marked; returns the path written."""

        return plot_heads(self, path)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "normalized": self.normalized,
            "rtol": self.rtol,
            "prime": self.prime,
            "layers": self.layers,
            "heads": [h.to_dict() for h in self.heads],
            "numbering": "layer.head from 0 (Hugging Face, TransformerLens)",
            "gap_rtol": self.gap_rtol,
            "notes": list(self.notes),
            "dead": [[h.layer - 1, h.head - 1] for h in self.dead()],
            "critical": [[h.layer - 1, h.head - 1] for h in self.critical()],
            "twins": [{"layer": l - 1, "heads": [a - 1, b - 1], "kind": k} for l, a, b, k in self.twins],
            "layers_bounds": [
                {"layer": l - 1, "local_rank_upper": u, "heads_count": c, "critical_heads": [h - 1 for h in k]}
                for l, u, c, k in self.layer_bounds()
            ],
            "seconds": round(self.seconds, 3),
        }

    def lines(self) -> list[str]:
        """One line per head (the report's table)."""
        out = []
        for h in self.heads:
            a, v = h.A, h.V
            flag = (
                f"  {h.reason.split(':')[0]}: critical (its own parametrization, proven)"
                if h.critical
                else "  near-dead"
                if h.near_dead
                else ""
            )
            blocks = [f"{n}: {', '.join(f'{s}x{c}' for s, c in f.blocks)}" for n, f in (("A", a), ("V", v)) if f.blocks]
            extra = ""
            if h.affine_A is not None and h.affine_V is not None:
                extra += (
                    f"; with biases A~ {h.affine_A.rank}/{h.affine_A.bound}, V~ {h.affine_V.rank}/{h.affine_V.bound}"
                )
            if h.pairs is not None:
                extra += f"; frequency pairs live {h.pairs[0]}/{h.pairs[1]}"
                extra += "" if h.still_rank is None else f", still block rank {h.still_rank}"
            out.append(
                f"  head {h.name:<9} rank A {a.rank}/{a.bound} (numerical {a.numerical_rank}), V {v.rank}/{v.bound} "
                f"(numerical {v.numerical_rank}){extra}; "
                f"s_A {_range(a)}, s_V {_range(v)}; to rank-1 lower A {_dist(a)}, V {_dist(v)}; "
                f"scale {h.scale:.3g}" + (f"; near-equal {'; '.join(blocks)}" if blocks else "") + flag
            )
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One flat dictionary per head (:meth:`HeadAtPoint.row`): the table as ``--csv`` writes it."""
        return [h.row() for h in self.heads]

    def to_frame(self) -> Any:
        """The per-head table as a :class:`pandas.DataFrame`, one row per head (pandas: the extra ``frames``)."""
        return to_frame(self.rows())

    def write_csv(self, path: str | os.PathLike[str]) -> Path:
        """The per-head table as CSV (:meth:`rows`), written atomically (never through a link someone planted)."""
        rows = self.rows()
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["layer", "head"])
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
        target = Path(path)
        atomic_write(target, buffer.getvalue())
        return target

    def twin_lines(self) -> list[str]:
        out = []
        for l, a, b, kind in self.twins:
            out.append(
                f"  heads {l - 1}.{a - 1}, {l - 1}.{b - 1}  {kind} functions (probabilistic: {TWIN_PROBES} random "
                f"probes mod {self.prime} agree): the layer is a point of the model with one head fewer, and moving "
                "the two against each other is a kernel direction of its parametrization (critical wherever the "
                "layer's dimension exceeds that model's)"
            )
        return out

    def __str__(self) -> str:
        n = len(self.heads)
        head = (
            f"Heads at the point: {n} heads in {self.layers} layer{'s' if self.layers > 1 else ''}"
            + (f", {self.model}" if self.model else "")
            + f"; rtol {self.rtol:g}, near-equal below a relative gap of {self.gap_rtol:g}; heads numbered "
            "layer.head from 0 (as Hugging Face and TransformerLens)"
        )
        summary = (
            f"  ranks            exact over QQ at the floats' binary values (GF({self.prime}) where full, "
            f"FLINT otherwise), beside the numerical rank at rtol; singular values float64; {len(self.dead())} dead, "
            f"{sum(h.near_dead for h in self.heads)} near-dead, {len(self.critical())} critical by their ranks, "
            f"{len(self.twins)} pair(s) of proportional heads"
        )
        notes = [f"  note             {n}" for n in self.notes]
        return "\n".join(
            [head, summary, *self.lines(), *self.twin_lines(), *self.layer_lines(), *notes, f"  {self.seconds:.2f} s"]
        )

    def layer_bounds(self) -> list[tuple[int, int, int, list[int]]]:
        """Per layer ``(layer, upper bound on its local rank, H dim M_1, critical heads)``: the local rank is at
        most the sum of its heads' (the differential is their sum on disjoint parameters), each bounded by its
        ranks; ``H dim M_1`` bounds ``dim M`` (the heads' secant), equal where the secant is not defective."""
        out = []
        for l in range(1, self.layers + 1):
            heads = [h for h in self.heads if h.layer == l]
            if not all(h.plain for h in heads):  # biases or rotary positions: the heads' counts are not these
                continue
            out.append(
                (l, sum(h.bound for h in heads), sum(h.generic for h in heads), [h.head for h in heads if h.critical])
            )
        return out

    def layer_lines(self) -> list[str]:
        out = []
        for l, upper, count, critical in self.layer_bounds():
            if critical:
                out.append(
                    f"  layer {l:<11}  local rank <= {upper:,} < {count:,} = the heads' count H dim M_1 "
                    f"(heads {critical} critical by their ranks): critical if dim M = H dim M_1 (the heads' "
                    "secant not defective: not proven at this size; point decides it where dim M is computed)"
                )
        return out


def _range(f: FactorAtPoint) -> str:
    s = [x for x in f.singular_values if x > 0]
    return "0" if not s else f"{s[0]:.3g}..{s[-1]:.3g}"


def _dist(f: FactorAtPoint) -> str:
    return "-" if f.to_lower is None else f"{f.to_lower:.2g}"
