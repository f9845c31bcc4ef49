"""The text of :class:`~ag_attention._point.report.PointGeometry` (``str(g)``, the CLI's ``point``), section by
section: the head lines, the local rank and its bounds, the verdicts, each layer, one layer's Theorem 3.4
questions, the float64 parts, the notes. Every line is printable: text from a file (a tensor name, a path) is
escaped (:func:`printable`), never a new line or a cursor move."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .._version import __version__

if TYPE_CHECKING:
    from .report import PointGeometry

__all__ = ["point_text", "printable"]


def printable(line: str) -> str:
    """``line`` with every control or non-printable character escaped (``\\n``, ``\\x1b``, ``\\u202e``): text
    from a file (a tensor name, a path) can never add a line to the report or move the cursor."""
    if line.isprintable():
        return line
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)


def _values(xs: Any) -> str:
    return "(" + ", ".join(f"{x:.3g}" for x in xs) + ")"


def _head(g: PointGeometry) -> list[str]:
    """The first lines: the model, the architecture, the point and how it was read (and a GQA layer's own model)."""
    arch = g.network.architecture
    if g.network.model:  # a checkpoint: the model analysed, the layout read, what was dropped
        head = f"Geometry at the point: {g.network.model}: {arch.describe()}, {g.parameters} parameters"
    else:
        read = f" (read as {g.network.layout})" if g.network.layout else ""
        head = f"Geometry at the point: {arch.describe()}, {g.parameters} parameters{read}"
    lines = [head, f"  point            {g.network.source}; {g.network.conversion}"]
    if g.network.grouped:  # the verdicts below are the ambient multi-head model's: say so first
        lines.append(
            f"  grouped-query    {g.grouped.summary() if g.grouped else 'its own model not analysed'}"
            f"; below: the ambient {arch.heads}-head model at this GQA point"
        )
    return lines


def _local_rank(g: PointGeometry) -> list[str]:
    """The local rank's bounds, the symmetry bound, and the kernel certificate's drops."""
    if g.local is None:
        return []
    lo, hi = g.local.lower, g.local.upper
    rank = (
        f"{lo} (exact)"
        if g.exact
        else f"rank <= {hi} (softmax: no exact lower bound)"
        if g.network.architecture.normalized
        else f"{lo} <= rank <= {hi} (not decided)"
    )
    lines = [f"  local rank       {rank}: {g.local.method}"]
    lines += [f"  {n[:13]:<15}  {n[15:]}" for n in g.local.notes if n.startswith("heads' kernel")]
    sym = g.parameters - g.local.symmetry_rank
    lines.append(
        f"  symmetry bound   {sym} = P - {g.local.symmetry_rank} (symmetry tangents at the point: "
        + ", ".join(f"{f.name} {f.rank}" for f in g.local.families)
        + ")"
    )
    cert = g.local.certificate
    if cert is not None:
        lines.append(f"  kernel proof     rank <= {cert.upper}: {cert.method}")
        for dr in cert.beyond_symmetries[:8]:
            lines.append(f"  drop {dr.index:<11} beyond the symmetries: {dr.describe()}")
        if len(cert.beyond_symmetries) > 8:
            lines.append(f"  drop ...         {len(cert.beyond_symmetries) - 8} more (all in the JSON report)")
    return lines


def _verdicts(g: PointGeometry) -> list[str]:
    """The generic dimension, the critical verdict, the fiber's dimension against the symmetries."""
    cert = "certified" if g.generic_certified else "lower bound"
    if g.generic_certificate.startswith("numerical"):  # softmax: a float64 rank meeting a proven bound
        cert = "float64"
    lines = [f"  generic dim      {g.generic_dimension} ({cert}: {g.generic_certificate})"]
    crit = {
        True: "yes: the local rank is below the generic dimension",
        False: "no: the local rank reaches it",
        None: "not decided",
    }[g.critical]
    if g.critical is None and g.critical_numerical is not None and g.numerical is not None:
        crit = (
            f"no (numerical: the float64 rank at the point, {g.numerical.rank}, reaches the generic dimension; a "
            "measurement, not a proof)"
            if not g.critical_numerical
            else f"yes (numerical: the float64 rank at the point, {g.numerical.rank}, is below the certified "
            "generic dimension; a measurement, not a proof)"
        )
    lines.append(
        f"  critical         {crit} (a critical point of the parametrization theta -> phi_theta, not of a loss)"
    )
    if g.fiber_dimension is not None:
        lines.append(
            f"  fiber (tangent)  dimension {g.fiber_dimension}; the symmetries span "
            f"{g.local.symmetry_rank if g.local else '?'}"
            + (" (they explain it)" if g.explained else " (directions beyond the symmetries)")
        )
    return lines


def _layers(g: PointGeometry) -> list[str]:
    """One line per layer: its heads' ranks, its own local rank, its flags."""
    lines = []
    for ly in g.layers:
        flag = (" rank-deficient" if ly.rank_deficient else "") + (" critical by itself" if ly.critical else "")
        loc = (
            ""
            if ly.local is None
            else (
                f"; its own local rank {ly.local.lower}"
                + ("" if ly.local.exact else f"..{ly.local.upper}")
                + f" of {ly.generic}"
            )
        )
        fv = f" (V_h = W_O,h W_v,h: at most {ly.full_v}, the head size)" if ly.factored_v else f" (at most {ly.full_v})"
        lines.append(
            f"  layer {ly.index}          rank A {list(ly.ranks_A)} (at most {ly.full_a}), rank V "
            f"{list(ly.ranks_V)}{fv}{loc}{flag}"
        )
    return lines


def _one_layer(g: PointGeometry) -> list[str]:
    """One plain layer: Theorem 3.4's stratum, verdicts, fiber, and the distance to the critical set."""
    o = g.one_layer
    if o is None:
        return []
    lines = [
        f"  stratum          {o.stratum}",
        f"  singular         {o.singular} ({o.verdict})",
        f"  critical form    {o.critical_form} (A = 0, V = 0, or A = u v^T, V = w v^T: Lemma A.3)",
        f"  boundary         {o.boundary}"
        + ("" if o.boundary is not None else " (outside Theorem 3.4's hypotheses: not decided)"),
        (
            f"  fiber            {o.fiber}"
            if o.fiber
            else f"  preimages        {len(o.preimages)} rational up to rescaling"
            + (f", {o.irrational_preimages} not over QQ" if o.irrational_preimages else "")
        ),
    ]
    if o.distance is not None:
        near, far = o.distance
        lines.append(
            f"  to critical set  {near:.6g} <= distance <= {far:.6g} (Frobenius, in (A, V))"
            if math.isfinite(far)
            else f"  to critical set  distance >= {near:.6g}, beyond float64's range (Frobenius, in (A, V))"
        )
    return lines


def _float64(g: PointGeometry) -> list[str]:
    """The float64 parts: one layer's singular values and near strata, the Jacobian's rank and spectrum, and why
    a part is unavailable."""
    lines = []
    if g.strata is not None:
        st = g.strata
        ra, rv = st.numerical_ranks
        lines += [
            f"  singular values  A {_values(st.singular_values_A)}, V {_values(st.singular_values_V)} "
            f"(float64; rank at rtol {st.rtol:g}: A {ra}, V {rv})",
            f"  near strata      {st.verdict()}: relative distance {st.relative_to_singular:.3g} to "
            f"rank A, rank V <= 1, {st.relative_to_critical:.3g} to the critical set ({st.critical_part}); "
            "float64 at the balanced representative, beside the exact verdicts above",
        ]
    if g.numerical is not None:
        n = g.numerical
        lines.append(
            f"  float64 rank     {n.rank if n.rank is not None else 'no verdict'} ({n.gap}; "
            f"{n.samples} samples; a measurement, not a proof)"
        )
        if n.singular_values:
            lines.append(
                f"  Jacobian         {len(n.singular_values)} singular values (column-normalized), "
                f"{_values(n.singular_values[:3])} .. {_values(n.singular_values[-3:])}; "
                f"rank at rtol {n.rtol:g}: {n.rank_at_rtol}"
            )
    lines += [f"  float64          unavailable: {why}" for why in g.float_unavailable.values()]
    return lines


def point_text(g: PointGeometry) -> str:
    """The report as text (``str(g)``), its sections in order, every line printable."""
    lines = _head(g)
    if g.stopped:  # a partial result: said before any verdict
        lines.append(f"  NOT FINISHED     stopped: {g.stopped}")
    lines += _local_rank(g) + _verdicts(g) + _layers(g)
    lines += g.heads.lines() if g.heads is not None else []
    lines += _one_layer(g) + _float64(g)
    lines += [f"  note             {x}" for x in g.notes]
    lines.append(f"  seed {g.seed}, {g.seconds:.2f} s, ag-attention {__version__}")
    return "\n".join(printable(line) for line in lines)
