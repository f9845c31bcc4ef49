"""What ``reproduce icl`` (:mod:`ag_attention._reproduce.icl`) observes at a plateau: where the weights sit, the losses.

At each plateau a run's weights are placed on a stratum (``rank M``, :func:`rank_at`), their geometry measured
(:func:`plateau_geometry`: active heads, the distance to the predicted critical point, the network's local rank),
and the losses set against the stratum's predicted critical value in standard errors (:func:`observe`).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .._point import point_geometry
from .icl_dynamics import Run, Task, _metric, eigenvalues, network_of, sampling_error
from .icl_settings import SPREAD_SEQUENCES, Setting

__all__ = ["RANK_RTOL", "rank_at", "plateau_geometry", "nearest_critical", "observe", "final_state", "plateau_row"]

#: relative tolerance of the numerical ranks reported at a plateau (singular values of M below it are "off")
RANK_RTOL = 0.05  # relative to the largest entry of the minimizer M* (not to M: at M = 0 nothing is "on")


def rank_at(task: Task, run: Run, k: int, lam: Sequence[Fraction]) -> tuple[int, np.ndarray, np.ndarray]:
    """``rank M`` at record ``k`` (singular values above :data:`RANK_RTOL` times the largest entry of the minimizer
    ``M*``: what "off" is measured against), ``M`` in the eigenbasis of ``Lambda``, its singular values."""
    M = task.rotation.T @ run.effective(k, task.D) @ task.rotation
    s = np.linalg.svd(M, compute_uv=False)
    _, target = _metric(lam, task.N)
    return int(np.sum(s > RANK_RTOL * float(max(target)))), M, s


def plateau_geometry(
    task: Task, run: Run, plateau: dict[str, Any], lam: Sequence[Fraction], timeout: float
) -> dict[str, Any]:
    k = plateau["record"]
    D = task.D
    rank, M, s = rank_at(task, run, k, lam)
    _, target = _metric(lam, task.N)
    scale = float(max(target))
    heads = [float(abs(run.values[k][h][D]) * np.linalg.norm(run.attention[k][h][:D, :D])) for h in range(run.heads)]
    active = sum(x > RANK_RTOL * scale for x in heads)
    diag = np.diag(M)
    S = tuple(sorted(int(i) for i in np.argsort(-np.abs(diag))[:rank]))
    MS = np.diag([float(target[i]) if i in S else 0.0 for i in range(D)])
    rel = float(np.linalg.norm(M - MS) / max(np.linalg.norm(MS), 1.0 if not S else 1e-300))
    out: dict[str, Any] = {
        "singular_values_M": [float(x) for x in s],
        "rank_M": rank,
        "active_heads": active,
        "head_sizes": heads,
        "subset": list(S),
        "distance_to_M_S": rel,
    }
    try:
        net = network_of(run, k, task.N, tokens=3)
        geo = point_geometry(net, numerical=True, rtol=1e-3, timeout=timeout)
        out["local_rank_exact"] = geo.local_rank
        out["local_rank_float"] = None if geo.numerical is None else geo.numerical.rank_at_rtol
        out["generic_dimension"] = geo.generic_dimension
        out["parameters"] = geo.parameters
    except Exception as exc:  # a geometry that does not finish in time is reported, not fatal
        out["local_rank_error"] = f"{type(exc).__name__}: {exc}"
    return out


def nearest_critical(value: float, crit: dict[tuple[int, ...], Fraction]) -> tuple[tuple[int, ...], Fraction]:
    return min(crit.items(), key=lambda kv: (abs(float(kv[1]) - value), len(kv[0])))


def observe(task: Task, run: Run, record: int, pred: Sequence[Fraction], seed: int) -> dict[str, Any]:
    """The losses at ``record`` against the prediction of the stratum ``rank M`` there, in standard errors."""
    lam = eigenvalues(task.D)
    rank, _, _ = rank_at(task, run, record, lam)
    theta = np.einsum("ha,hbc->abc", run.values[record], run.attention[record]).ravel()
    spread = sampling_error(task, theta, SPREAD_SEQUENCES, seed=seed * 1_000 + record)
    L = float(pred[rank])
    loss, test = float(run.losses[record]), float(run.test_losses[record])
    return {
        "stratum": rank,
        "predicted": str(pred[rank]),
        "predicted_float": L,
        "test_loss": test,
        "sampling": spread,
        "z_train": (loss - L) / spread["se_train"],
        "z_test": (test - L) / spread["se_test"],
    }


def final_state(task: Task, run: Run, pred: Sequence[Fraction], seed: int) -> dict[str, Any]:
    """Where the run ended: the last record's losses, rank M there and its stratum's prediction."""
    k = len(run.steps) - 1
    out = {"step": int(run.steps[k]), "loss": float(run.losses[k]), **observe(task, run, k, pred, seed)}
    out["on_plateau"] = bool(run.plateaus) and run.plateaus[-1]["last_step"] == out["step"]
    return out


def plateau_row(setting: Setting, run: Run, p: dict[str, Any]) -> list[Any]:
    g, L = p["geometry"], p["predicted_float"]
    return [
        f"D={setting.D}",
        run.regime,
        run.heads,
        run.seed,
        f"L_{p['stratum']}",
        p["first_step"],
        p["last_step"],
        f"{L:.5f}",
        f"{p['loss']:.5f}",
        f"{p['test_loss']:.5f}",
        f"{(p['loss'] - L) / L:+.2%}",
        f"{p['sampling']['se_train']:.5f}",
        f"{p['z_train']:+.2f}",
        f"{p['z_test']:+.2f}",
        g["rank_M"],
        g["active_heads"],
        f"{g['distance_to_M_S']:.3f}",
        g.get("local_rank_float", "-"),
        g.get("local_rank_exact", "-"),
    ]
