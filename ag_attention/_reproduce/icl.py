"""Training dynamics of in-context learning, predicted by the geometry: ``ag-attention reproduce icl``.

Zhang, Singh, Latham and Saxe, *Training Dynamics of In-Context Learning in Linear Attention* (arXiv:2501.16265,
ICML 2025; code ``yedizhang/linattn-icl``, read at commit 9a481d5) train several heads of linear (lightning)
attention with a skip connection on in-context linear regression.  With merged key-query matrices (the package's
``A``, free) the loss drops once; with separate rank-one ``Q, K`` heads it goes from saddle to saddle, one principal
component at a time.  This module reproduces both regimes and predicts every plateau from the geometry.

**The task** (their ``data.py``, ``train.py``): ``x ~ N(0, Lambda)`` in ``R^D`` with ``Lambda = Q diag(lambda) Q^T``
(``Q`` a seeded random rotation, ``lambda_d`` proportional to ``D, D-1, ..., 1`` with trace ``T = 1``), a task
``w ~ N(0, I_D)`` per sequence, labels ``y_n = w . x_n`` without noise, ``N`` context tokens ``(x_n, y_n)`` and a
query ``(x_q, 0)``; the prediction is the query's output ``y``-entry, the loss the mean squared error over a fixed
training set, minimized by full-batch gradient descent (their ``SGD`` on the whole set).

**The network** is the package's: one lightning layer ``phi(X)_i = X_i + sum_h sum_j (x_i^T A_h x_j) V_h x_j`` on
``t = N + 1`` tokens of width ``D + 1``, ``H`` heads, the skip connection; merged heads have ``A_h`` free, separate
heads ``A_h = Q_h^T K_h`` of rank one; only the ``y``-row ``v_h / N`` of ``V_h`` reaches the loss.  The query's
``y``-output is linear in the tensor ``Theta = sum_h v_h (x) A_h^T``, so the loss is a quadratic form in ``Theta``
whose coefficients (a Gram matrix of the features ``C (x) x_q``, ``C = X^T X / N``) are computed once; gradient
descent then costs ``O((D+1)^6)`` a step whatever ``N`` and the number of sequences (exact same loss: the test
checks the package's forward pass against it).

**The geometry.**  With the blocks their initialisation sets to zero left at zero (their population gradient
vanishes: odd in ``w``), the prediction is ``w^T S M x_q``, ``S = sum_n x_n x_n^T / N``, ``M = sum_h v_{h,y}
A_h[:D,:D]^T``, and the population loss is, with ``E[S B S] = ((N+1)/N) Lambda B Lambda + (1/N) tr(B Lambda)
Lambda``, in the eigenbasis of ``Lambda``::

    L(M) = L* + sum_{i,j} w_ij (M_ij - m*_i delta_ij)^2,   w_ij = lambda_j lambda_i ((N+1) lambda_i + T) / N,
    m*_i = N / ((N+1) lambda_i + T),   L* = T - sum_i r_i,   r_i = N lambda_i^2 / ((N+1) lambda_i + T).

Merged heads reach every ``M`` (a linear space): the only critical values are ``T`` (``M = 0``, where every head
sits at Theorem 3.4's critical point ``A = 0, V = 0``) and the minimum ``L*``.  Separate rank-one heads reach
``M`` of rank ``<= H``, and a plateau with ``m`` heads active sits on the stratum ``{rank M <= m}``: its loss is a
critical value of ``L`` restricted to that determinantal variety.  The weights ``w_ij = alpha_i beta_j`` have rank
one, so ``L`` is the Euclidean distance after ``M -> diag(alpha)^(1/2) M diag(beta)^(1/2)`` and the critical points on
``{rank <= m}`` are the ``C(D, m)`` subsets ``S`` of eigen-directions (Eckart–Young), with the exact critical
values ``T - sum_{i in S} r_i``.  Both facts are computed, not assumed: each subset point is checked critical in
exact arithmetic (:func:`subset_is_critical`), and the ED degree of ``{rank <= m}`` for the loss's metric,
counted by :func:`ag_attention.ideal_ed_degree` (msolve modulo two primes, probabilistic), is ``C(D, m)``: there
are no others.  The predicted plateaus are the smallest critical values on each stratum, ``L_m = T - (r_1 + ... +
r_m)`` with the ``m`` largest eigenvalues (the values of their notebook's ``loss_at_saddle``).

**Saddles with heads** (:data:`SADDLES`, Zhang, Saxe and Latham, arXiv:2512.20607): a fixed point of a network with
``m`` heads, with zero heads added, is a fixed point of the wider network (their Theorem 1, type III), and training
goes from saddle to saddle adding one head at a time.  Its linear self-attention is the separate rank-one
parametrisation above (``attnS`` of the same repository): the plateau ``L_m`` is the ``m``-head fixed point
``M_S``.  Checked exactly (:func:`embedded_fixed_point`: zero gradient in every head, and one new head lowers the
loss by ``2 lambda_j^2 eps^3``) and in the runs (``m`` active heads at ``L_m``).

Predictions are for the population loss; the training loss is a mean over the ``P`` training sequences, so
observation and prediction differ by its sampling error: at each plateau the standard deviation ``sd`` of the
squared error at the plateau's weights is measured on fresh sequences, and the plateau agrees when the training loss
lies within :data:`Z_BOUND` standard errors ``sd / sqrt(P)`` of ``L_m``.  ``dims``, ``heads``, ``context`` and
``steps`` (:func:`settings_for`) set ``D``, the heads, ``N`` and the steps; the predictions follow them.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from .._checks import check_int
from .._files import atomic_write
from .._progress import bar, ticking
from .._sweep import OKABE_ITO
from .icl_dynamics import (
    MAX_ED_D,
    Run,
    Task,
    critical_values,
    eigenvalues,
    embedded_fixed_point,
    features,
    find_plateaus,
    forward_agreement,
    gains,
    make_task,
    network_of,
    plateau_predictions,
    record_schedule,
    sampling_error,
    stratum_ed_degree,
    subset_is_critical,
    train,
)
from .icl_plateaus import RANK_RTOL, final_state, nearest_critical, observe, plateau_geometry, plateau_row
from .icl_settings import (  # LIMITS, MAX_BYTES, MAX_SECONDS: re-exported (the CLI and the registry import them here)
    FULL,
    LIMITS,
    MAX_BYTES,
    MAX_SECONDS,
    QUICK,
    SPREAD_SEQUENCES,
    Setting,
    estimate,
    settings_for,
)
from .report import FIGURE_FORMATS, Check, Report, Table, output_directory, pyplot, save_figure, written
from .sources import Source

__all__ = [
    "icl_figure",
    "WORK",
    "SADDLES",
    "Setting",
    "QUICK",
    "FULL",
    "LIMITS",
    "MAX_SECONDS",
    "MAX_BYTES",
    "settings_for",
    "estimate",
    "eigenvalues",
    "gains",
    "critical_values",
    "plateau_predictions",
    "subset_is_critical",
    "embedded_fixed_point",
    "Task",
    "features",
    "make_task",
    "Run",
    "train",
    "record_schedule",
    "find_plateaus",
    "sampling_error",
    "network_of",
    "forward_agreement",
    "stratum_ed_degree",
    "final_sentence",
    "reproduce_icl",
]

WORK = (
    "Zhang, Singh, Latham, Saxe, Training Dynamics of In-Context Learning in Linear Attention "
    "(arXiv:2501.16265, ICML 2025; code yedizhang/linattn-icl @ 9a481d5)"
)
SADDLES = (
    "Zhang, Saxe, Latham, Saddle-to-Saddle Dynamics Explains A Simplicity Bias Across Neural Network "
    "Architectures (arXiv:2512.20607, ICLR 2026; its linear self-attention: the separate rank-one heads above)"
)


# ---------------------------------------------------------------------------------------------- where the weights sit


# ---------------------------------------------------------------------------------------------- the report


def icl_figure(runs: list[Run], setting: Setting) -> Any:
    """Loss curves of one setting (log steps), the predicted critical values ``L_m`` dashed (one legend entry),
    detected plateaus as dots; left merged heads, right separate rank-one heads (one line style per number of
    heads). A pyplot figure: the caller closes it (:func:`_figure` saves it as PNG, PDF and SVG)."""
    plt = pyplot()
    predictions = plateau_predictions(eigenvalues(setting.D), setting.N)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    palette = [OKABE_ITO[c] for c in ("vermillion", "bluish green", "reddish purple", "sky blue", "orange")]
    styles = ["-", "--", ":", "-."]
    for ax, regime in zip(axes, ("merged", "separate")):
        for m, L in enumerate(predictions):
            ax.axhline(float(L), color="0.6", ls="--", lw=0.8, label=None if m else "predicted critical values $L_m$")
            ax.text(
                1.0, float(L), f" $L_{m}$", transform=ax.get_yaxis_transform(), va="center", fontsize=8, color="0.35"
            )
        seen = set()
        for r in runs:
            if r.regime != regime:
                continue
            if regime == "merged":
                color, ls = OKABE_ITO["blue"], "-"
            else:
                i = setting.heads_separate.index(r.heads) if r.heads in setting.heads_separate else 0
                color, ls = palette[i % len(palette)], styles[i % len(styles)]
            label = None if r.heads in seen else f"{r.heads} head{'s' * (r.heads != 1)}"
            seen.add(r.heads)
            keep = r.steps > 0
            ax.semilogx(
                r.steps[keep],
                r.losses[keep],
                color=color,
                ls=ls,
                lw=1.4,
                alpha=0.85,
                label=label,
                gid=f"run:{regime}:{r.heads}:{r.seed}",
            )
            for p in r.plateaus:
                ax.plot([p["step"]], [p["loss"]], "o", color="black", ms=3.5)
        ax.set_title("merged key-query (A free)" if regime == "merged" else "separate key-query (rank-one heads)")
        ax.set_xlabel("gradient step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower left")
    axes[0].set_ylabel("training loss (mean squared error)")
    fig.suptitle(
        f"In-context linear regression, D = {setting.D}, N = {setting.N} (seeds "
        f"{', '.join(map(str, setting.seeds))}): loss curves and detected plateaus (dots);\n"
        "dashed: the predicted critical values $L_m$ of the loss on the strata rank M <= m",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def _figure(runs: list[Run], setting: Setting, path: Path) -> list[Path]:
    """:func:`icl_figure` saved as PNG, PDF and SVG (atomically); the paths written."""
    fig = icl_figure(runs, setting)
    try:
        return save_figure(fig, path)
    finally:
        pyplot().close(fig)


#: an observed plateau agrees with its prediction when its training loss lies within this many standard errors
#: ``se = sd / sqrt(P)`` of it (``sd`` of the squared error at the plateau's weights, ``P`` training sequences)
Z_BOUND = 4.0


def _predictions(report: Report, setting: Setting, seed: int) -> dict[str, Any]:
    """The exact critical values, their completeness (every subset critical; ED degrees ``C(D, m)``), and the
    saddles of :data:`SADDLES` (an ``m``-head fixed point with zero heads added is a fixed point, left by one head)."""
    lam = eigenvalues(setting.D)
    crit = critical_values(lam, setting.N)
    t0 = time.perf_counter()
    bad = [S for S in crit if not subset_is_critical(lam, setting.N, S)]
    report.add(
        Check(
            "every subset point M_S is a critical point of the population loss on its rank stratum",
            f"D={setting.D}, N={setting.N}",
            "exact gradient over QQ against the tangent space",
            f"{len(crit)} of {len(crit)}",
            f"{len(crit) - len(bad)} of {len(crit)}",
            not bad,
            time.perf_counter() - t0,
        )
    )
    saddles = _saddle_check(report, setting, lam)
    eds = []
    if setting.D > MAX_ED_D:
        report.findings.append(
            f"D={setting.D}: the ED degrees of the strata are not counted above D = {MAX_ED_D} "
            "(the subset points are still checked critical, exactly)."
        )
    for m in range(1, setting.D if setting.D <= MAX_ED_D else 1):
        t0 = time.perf_counter()
        r = stratum_ed_degree(lam, setting.N, m, seed=seed)
        eds.append({"m": m, "ed_degree": r.value, "counts": [list(c) for c in r.counts]})
        report.add(
            Check(
                "the critical points of the loss on {rank M <= m} are exactly the C(D, m) subset points "
                "(ED degree for the loss's metric)",
                f"D={setting.D}, N={setting.N}, m={m}",
                "ideal_ed_degree, msolve modulo " + ", ".join(str(p) for p, _, _ in r.counts) + " (probabilistic)",
                math.comb(setting.D, m),
                r.value,
                r.value == math.comb(setting.D, m),
                time.perf_counter() - t0,
            )
        )
    return {
        "eigenvalues": [str(l) for l in lam],
        "predicted_plateaus": [str(p) for p in plateau_predictions(lam, setting.N)],
        "critical_values": {",".join(map(str, S)) or "-": str(v) for S, v in crit.items()},
        "ed_degrees": eds,
        "saddles": saddles,
    }


def _saddle_check(report: Report, setting: Setting, lam: Sequence[Fraction]) -> list[dict[str, Any]]:
    """Theorem 1 of :data:`SADDLES` (type III), exactly, for the most heads of the setting."""
    H = max(setting.heads_separate)
    top = min(H, setting.D)
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    ok = True
    for m in range(top + 1):
        grad, descent = embedded_fixed_point(lam, setting.N, tuple(range(m)), H)
        ok &= grad == 0 and (descent is not None and descent < 0) == (m < top)
        rows.append({"m": m, "largest_gradient": str(grad), "cubic_descent": None if descent is None else str(descent)})
    report.add(
        Check(
            "the plateau L_m is an m-head fixed point with H - m zero heads added: a fixed point of the "
            "H-head network, left by adding one head (loss falls as -2 lambda_j^2 eps^3) while m < min(H, D)",
            f"D={setting.D}, N={setting.N}, H={H}, m = 0..{top}",
            "exact gradient in every head's (v_h, k_h, q_h) and the cubic term along one new head, over QQ",
            f"gradient 0; descent for m < {top}",
            "; ".join(f"m={r['m']}: {r['largest_gradient']}, {r['cubic_descent'] or 'none'}" for r in rows),
            ok,
            time.perf_counter() - t0,
        )
    )
    return rows


def _run_checks(report: Report, setting: Setting, run: Run, agree: float) -> None:
    pred = plateau_predictions(eigenvalues(setting.D), setting.N)
    case = f"D={setting.D}, N={setting.N}, {run.heads} heads, seed {run.seed}"
    report.add(
        Check(
            "the package's forward pass (query's y-output) equals the trainer's quadratic form",
            f"{case}, {run.regime}",
            "float64 on 8 test sequences, largest relative difference",
            "< 1e-9",
            f"{agree:.1e}",
            agree < 1e-9,
            run.seconds,
        )
    )
    matched = [int(p["stratum"]) for p in run.plateaus]
    last = setting.D if run.regime == "merged" else min(run.heads, setting.D)
    ok = (
        bool(matched)
        and all(abs(p["z_train"]) <= Z_BOUND for p in run.plateaus)
        and matched == sorted(set(matched))
        and matched[0] == 0
    )
    if run.regime == "merged":
        ok &= matched == [0, setting.D]
        claim = "merged heads: one drop, from the plateau at T (M = 0) to the minimum L*"
        expected = f"L_0 = {float(pred[0]):.4f}, L_{setting.D} = {float(pred[-1]):.4f}"
    else:
        claim = (
            "separate rank-one heads: every plateau at the minimum L_m of a stratum {rank M <= m}, m increasing "
            f"from 0 (at most min(H, D) = {last}: H rank-one heads reach rank <= H)"
        )
        expected = f"L_0 .. L_{last} (of " + ", ".join(f"{float(x):.4f}" for x in pred[: last + 1]) + ")"
    report.add(
        Check(
            claim,
            f"{case}, {run.regime}",
            "plateaus detected in the training curve against the exact "
            f"critical values: |training loss - L_m| <= {Z_BOUND:g} se, se = sd / sqrt(P) the standard error "
            "of a mean over the P training sequences; the stratum is rank M at the plateau",
            expected,
            ", ".join(f"L_{p['stratum']}: {p['loss']:.4f} (z = {p['z_train']:+.1f})" for p in run.plateaus)
            or "no plateau",
            ok,
            run.seconds,
        )
    )
    if run.regime == "separate":
        rank_ok = all(
            p["geometry"]["rank_M"] == int(p["stratum"]) and p["geometry"]["subset"] == list(range(p["stratum"]))
            for p in run.plateaus
        )
        report.add(
            Check(
                "at a plateau of stratum m the matrix M has rank m, on the m largest eigen-directions, and "
                "m heads are active (the others at zero: heads are added one at a time)",
                f"{case}, separate",
                f"singular values of M and head sizes |v_hy| |A_h| above {RANK_RTOL} max m*_i",
                [int(p["stratum"]) for p in run.plateaus],
                [p["geometry"]["rank_M"] for p in run.plateaus],
                rank_ok and all(p["geometry"]["active_heads"] == int(p["stratum"]) for p in run.plateaus),
            )
        )


def _one_seed(
    report: Report, setting: Setting, s: int, seed: int, timeout: float, rows: list[list[Any]], progress: Any
) -> tuple[list[Run], list[dict[str, Any]]]:
    """Every run of one seed: trained, its plateaus found and observed, checked (each then counted on
    ``progress``); the runs and their JSON."""
    lam = eigenvalues(setting.D)
    pred = plateau_predictions(lam, setting.N)
    crit = critical_values(lam, setting.N)
    task = make_task(setting.D, setting.N, setting.train, setting.test, seed + s)
    plan = [("merged", setting.heads_merged, setting.init_merged, setting.lr_merged, setting.steps_merged)]
    plan += [
        ("separate", H, setting.init_separate, setting.lr_separate, setting.steps_separate)
        for H in setting.heads_separate
    ]
    runs, entries = [], []
    for regime, heads, init, lr, steps in plan:
        run = train(task, regime, heads, init, lr, steps, s, setting.record_every)
        run.plateaus = find_plateaus(run.steps, run.losses)
        for p in run.plateaus:
            p["geometry"] = plateau_geometry(task, run, p, lam, timeout)
            p.update(observe(task, run, p["record"], pred, seed + s))
            # the critical value nearest to the observed loss, whatever its stratum (a cross-check of m)
            p["nearest_critical"] = list(nearest_critical(p["loss"], crit)[0])
            rows.append(plateau_row(setting, run, p))
        agree = forward_agreement(task, run, len(run.steps) - 1)
        runs.append(run)
        _run_checks(report, setting, run, agree)
        progress.update(1)
        entries.append(
            {
                "regime": regime,
                "seed": s,
                "heads": heads,
                "seconds": round(run.seconds, 2),
                "forward_agreement": agree,
                "plateaus": run.plateaus,
                "final": final_state(task, run, pred, seed + s),
                "final_loss": float(run.losses[-1]),
                "final_test_loss": float(run.test_losses[-1]),
                "curve": [[int(a), float(b), float(c)] for a, b, c in zip(run.steps, run.losses, run.test_losses)][
                    ::10
                ],
            }
        )
    return runs, entries


TABLE_NOTE = (
    "Predicted: L_m = T - (r_1 + ... + r_m), the smallest critical value of the population loss on {rank M <= m}, m "
    "= rank M at the plateau (exact rationals, shown rounded). Observed: the training loss at the record in the middle "
    "(log time) of a stretch where the training curve, averaged in bins of 0.005 decades, changes by less than 2 % "
    "per decade of steps, and the test loss there. se: the standard error of the training loss as a mean over the P "
    "training sequences, sd / sqrt(P), sd the standard deviation of the squared error at the plateau's weights on "
    f"{SPREAD_SEQUENCES:,} fresh sequences; z: (loss - L_m) / se (test: with the test set's se; the test loss also "
    f"carries the excess population loss of weights fitted to P sequences). rank M: singular values above {RANK_RTOL} "
    "times the largest entry of the minimizer M*; active heads: |v_hy| |A_h| above the same (the others sit near "
    "Theorem 3.4's critical point A_h = 0, V_h = 0); |M - M_S| / |M_S|: distance to the predicted critical point "
    "(M_0 = 0: absolute). Local rank: of the package's network at the plateau's weights with t = 3 tokens; exact: the "
    "float weights as rationals, where every tiny head counts; float64: the Jacobian's numerical rank at relative "
    "tolerance 1e-3."
)


def reproduce_icl(
    out: str | Path | None = None,
    *,
    quick: bool = False,
    seed: int = 0,
    dims: int | None = None,
    heads: int | Sequence[int] | None = None,
    context: int | None = None,
    steps: int | None = None,
    settings: Sequence[Setting] | None = None,
    geometry_timeout: float = 60.0,
) -> Report:
    """Both regimes of :data:`WORK` (the saddles of :data:`SADDLES`), the plateaus detected in the loss curves, the
    critical values predicted on the rank strata, the weights' geometry at each plateau; the report, and with
    ``out`` its files (``report.md``, ``report.json``, ``icl.json``, ``icl.png``).  ``quick``: :data:`QUICK`
    (about 15 s of CPU); else :data:`FULL` (about 2 minutes).  ``dims`` (``D``), ``heads`` (the rank-one heads' run or
    runs; merged heads: the most of them), ``context`` (``N``) and ``steps`` (of every run) replace those of the
    quick setting, or of the full run's first (``D = 4``, five seeds), alone: see :func:`settings_for`."""
    plan = tuple(settings) if settings is not None else settings_for(quick, dims, heads, context, steps)
    seed = check_int(seed, "seed", minimum=0)
    report = _new_report(plan, quick, seed)
    data: dict[str, Any] = {"work": WORK, "saddles": SADDLES, "z_bound": Z_BOUND, "settings": []}
    all_runs: list[tuple[Setting, list[Run]]] = []
    rows: list[list[Any]] = []
    total = sum(len(s.seeds) * (1 + len(s.heads_separate)) for s in plan)
    with bar(total=total, desc="in-context learning", unit="training run") as progress, ticking(progress):
        for setting in plan:
            entry: dict[str, Any] = {"setting": setting.to_dict(), **_predictions(report, setting, seed), "runs": []}
            runs: list[Run] = []
            for s in setting.seeds:
                these, entries = _one_seed(report, setting, s, seed, geometry_timeout, rows, progress)
                runs += these
                entry["runs"] += entries
            all_runs.append((setting, runs))
            data["settings"].append(entry)
            report.findings += _findings(setting, runs, entry["runs"])
    report.tables.append(_plateau_table(rows))
    report.record_engines(msolve=True)
    if out is not None:
        _write(report, output_directory(out), data, all_runs)
    return report


def _new_report(plan: Sequence[Setting], quick: bool, seed: int) -> Report:
    """The report before any run: its title, summary and the settings with their estimated cost."""
    return Report(
        "Training dynamics of in-context learning, predicted by the geometry",
        summary=(
            f"{WORK}; {SADDLES}: multi-head lightning attention with a skip connection trained on in-context "
            "linear regression. Merged key-query heads (A free) drop once; separate rank-one heads go from "
            "saddle to saddle, adding one head at a time. Each plateau's loss is predicted as the smallest "
            "critical value of the population loss on the stratum {rank M <= m} of the matrix the loss sees "
            "(exact rationals; every critical point accounted for by an ED degree), and set against the "
            "training and test losses observed, in standard errors of the finite training set."
        ),
        meta={
            "quick": quick,
            "seed": seed,
            "settings": [s.to_dict() for s in plan],
            "estimate": [dict(zip(("seconds", "bytes"), estimate(s))) for s in plan],
        },
    )


#: the columns of the plateau table (one row per plateau: :func:`~ag_attention._reproduce.icl_plateaus.plateau_row`)
PLATEAU_COLUMNS = (
    "size",
    "regime",
    "heads",
    "seed",
    "stratum",
    "from step",
    "to step",
    "predicted L_m",
    "training loss",
    "test loss",
    "training vs predicted",
    "se (training)",
    "z (training)",
    "z (test)",
    "rank M",
    "active heads",
    "|M - M_S| / |M_S|",
    "local rank (float64, rtol 1e-3)",
    "local rank (exact)",
)


def _plateau_table(rows: list[list[Any]]) -> Table:
    return Table(
        "Plateaus: the predicted critical values against the observed losses",
        list(PLATEAU_COLUMNS),
        rows,
        note=TABLE_NOTE,
        source=Source.theorem(
            WORK + ": plateaus at the critical values of the population loss on the rank strata, "
            "L_m evaluated exactly by the package"
        ),
    )


def _write(report: Report, base: Path, data: dict[str, Any], all_runs: list[tuple[Setting, list[Run]]]) -> None:
    """``icl.json``, the first setting's figure (``icl.png``, ``icl.svg``) and the report's files into ``base``."""
    written(report, lambda: atomic_write(base / "icl.json", json.dumps(data, indent=1) + "\n"))
    figs = written(report, lambda: _figure(all_runs[0][1], all_runs[0][0], base / "icl.png"))
    if figs:
        report.meta["figures"] = [f"icl.{ext}" for ext in FIGURE_FORMATS]
    report.meta["data"] = "icl.json"
    written(report, lambda: report.write(base))


def final_sentence(regime: str, heads: int, seed: int, D: int, final: dict[str, Any]) -> str:
    """The report's sentence on where a run ended, from its JSON ``final`` entry alone (the test reads both)."""
    k, top = final["stratum"], (D if regime == "merged" else min(heads, D))
    where = (
        f"at L_{k} = {final['predicted_float']:.4f} (z = {final['z_train']:+.1f})"
        if abs(final["z_train"]) <= Z_BOUND
        else f"{'below' if final['z_train'] < 0 else 'above'} L_{k} = {final['predicted_float']:.4f} "
        f"(z = {final['z_train']:+.1f}: between plateaus)"
    )
    reach = (
        f"the minimum of the stratum its {heads} heads can reach"
        if k == top
        else f"before reaching L_{top}, the minimum of the stratum its {heads} heads can reach"
    )
    return (
        f"{regime}, {heads} head{'s' * (heads != 1)}, seed {seed}: training ended at step {final['step']:,} with "
        f"training loss {final['loss']:.4f} (test {final['test_loss']:.4f}) and rank M = {k}, {where}, {reach}"
        f"{'' if final['on_plateau'] else ' (the last stretch not yet flat)'}."
    )


def _findings(setting: Setting, runs: list[Run], entries: list[dict[str, Any]]) -> list[str]:
    pred = plateau_predictions(eigenvalues(setting.D), setting.N)
    out = [
        f"D={setting.D}, N={setting.N}: the predicted plateaus L_m = "
        + ", ".join(str(p) for p in pred)
        + f" (about {', '.join(f'{float(p):.4f}' for p in pred)})."
    ]
    for regime in ("merged", "separate"):
        ps = [p for r in runs if r.regime == regime for p in r.plateaus]
        if not ps:
            continue
        z, zt = [p["z_train"] for p in ps], [p["z_test"] for p in ps]
        se = [p["sampling"]["se_train"] / p["predicted_float"] for p in ps]
        out.append(
            f"{regime} heads: {len(ps)} plateaus in {sum(r.regime == regime for r in runs)} runs; training "
            f"loss minus prediction from {min(z):+.1f} to {max(z):+.1f} standard errors (se = sd / sqrt(P), "
            f"{min(se):.2%} to {max(se):.2%} of L_m at P = {setting.train:,}; bound {Z_BOUND:g}), test loss "
            f"from {min(zt):+.1f} to {max(zt):+.1f} of its own (P = {setting.test:,}). The prediction is the "
            "population loss: the training loss is a mean over the sequences the weights were fitted to."
        )
    for r, e in zip(runs, entries):
        out.append(final_sentence(r.regime, r.heads, r.seed, setting.D, e["final"]))
        seen = [int(p["stratum"]) for p in r.plateaus]
        top = min(r.heads, setting.D)
        missing = [m for m in range(top + 1) if m not in seen and m < max(seen, default=0)]
        if r.regime == "separate" and missing:
            out.append(
                f"separate, {r.heads} head{'s' * (r.heads != 1)}, seed {r.seed}: the plateaus at "
                + ", ".join(f"L_{m}" for m in missing)
                + " were not resolved (the loss passed them in less than 0.02 decades of steps: the heads "
                "learned those directions almost together)."
            )
    return out
