"""Parts 2 and 3 of ``reproduce landscape`` (:mod:`ag_attention._reproduce.landscape`): random data sets.

For random data sets of the smallest size with a nontrivial landscape, :data:`SMALLEST` ``= (d, d', a) = (2, 1, 2)``,
``t = 2``: every critical point (:func:`ag_attention.critical_points`: the complex count, the real ones with their
loss and Hessian signature), then gradient descent from random starts (:func:`gradient_descent`) and which certified
minimum each run reaches; the report's table, checks and figure of them.
"""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import _progress as progress
from .._architecture import Architecture
from .._errors import AgAttentionError
from .._landscape import critical_points, gram
from .._models import reduced_coordinates, reduced_keys
from .._sweep import OKABE_ITO, integer_ticks
from .report import Check, Report, Table, pyplot, save_figure

__all__ = [
    "SMALLEST",
    "MATCH",
    "CONVERGED",
    "DataSet",
    "layer",
    "coordinates_tensor",
    "gradient_descent",
    "data_sets",
    "data_table",
    "data_checks",
    "data_figure",
    "draw_data_figure",
]

SMALLEST = (2, 1, 2)
#: a run matches a minimum when its function (reduced coordinates) is this close, relative to the minimum's
MATCH = 1e-3
#: a run has converged when the gradient's norm is below this
CONVERGED = 1e-4


def layer(size: tuple[int, int, int], t: int) -> Architecture:
    """One lightning layer of ``size = (d, d', a)`` on ``t`` tokens (``a = d``: ``A`` of full rank)."""
    d, e, a = size
    return Architecture.single_layer(d, e, a if a < d else None, tokens=t)


def coordinates_tensor(d: int, e: int) -> np.ndarray:
    """``T`` with ``x_q = sum T[q, i, j] a_i v_j`` (``a = vec A``, ``v = vec V``): the reduced coordinates."""
    keys = reduced_keys(d, e)
    T = np.zeros((len(keys), d * d, e * d))
    for q, (k, m, i, j) in enumerate(keys):
        T[q, k * d + i, m * d + j] += 1
        if i != j:
            T[q, k * d + j, m * d + i] += 1
    return T


def gradient_descent(
    G: np.ndarray, w: np.ndarray, c: float, T: np.ndarray, starts: np.ndarray, steps: int = 10000, tol: float = 1e-8
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradient descent with backtracking (Armijo) on ``L(a, v) = x^T G x - 2 w^T x + c``, ``x = T(a, v)``, from
    each row of ``starts`` at once (each run its own step), each iterate moved along its rescaling orbit to
    ``|a| = |v|`` (the same function and loss: better conditioned steps).

    Returns per run the final reduced coordinates ``x`` (rows), the loss and the gradient's norm (float64)."""
    na = T.shape[1]

    def balanced(theta: np.ndarray) -> np.ndarray:
        na_ = np.linalg.norm(theta[:, :na], axis=1)
        nv_ = np.linalg.norm(theta[:, na:], axis=1)
        k = np.where((na_ > 0) & (nv_ > 0), np.sqrt(nv_ / np.where(na_ > 0, na_, 1.0)), 1.0)
        return np.concatenate([theta[:, :na] * k[:, None], theta[:, na:] / k[:, None]], axis=1)

    def loss_grad(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a, v = theta[:, :na], theta[:, na:]
        x = np.einsum("qij,si,sj->sq", T, a, v)
        r = x @ G - w
        value = np.einsum("sq,sq->s", x, x @ G) - 2 * x @ w + c
        ga = 2 * np.einsum("qij,sq,sj->si", T, r, v)
        gv = 2 * np.einsum("qij,sq,si->sj", T, r, a)
        return value, np.concatenate([ga, gv], axis=1), x

    theta = balanced(np.array(starts, dtype=float))
    value, g, x = loss_grad(theta)
    step = np.full(len(theta), 1e-2)
    for _ in range(steps):
        gn = np.einsum("sp,sp->s", g, g)
        active = (gn >= tol**2) & (step > 1e-16)
        if not active.any():
            break
        new = balanced(theta - step[:, None] * g)
        nv, ng, nx = loss_grad(new)
        accept = active & (nv <= value - 0.5 * step * gn)
        theta = np.where(accept[:, None], new, theta)
        value = np.where(accept, nv, value)
        g = np.where(accept[:, None], ng, g)
        x = np.where(accept[:, None], nx, x)
        step = np.where(accept, step * 2, np.where(active, step / 2, step))
    return x, value, np.sqrt(np.einsum("sp,sp->s", g, g))


def _data_set(rng: random.Random, d: int, e: int, t: int, samples: int) -> tuple[list[Any], list[Any]]:
    X = [[[rng.randint(-3, 3) for _ in range(d)] for _ in range(t)] for _ in range(samples)]
    Y = [[[rng.randint(-3, 3) for _ in range(e)] for _ in range(t)] for _ in range(samples)]
    return X, Y


@dataclass
class DataSet:
    index: int
    complex: int
    real: int
    minima: int
    saddles: int
    undecided: int
    seconds: float
    reached: list[int]  # runs ending at each minimum (sorted by loss)
    elsewhere: int  # runs converged (gradient below CONVERGED) but at no certified minimum
    stalled: int = 0  # runs whose gradient is still above CONVERGED after the steps
    error: str = ""


def data_sets(count: int, samples: int, starts: int, timeout: float, seed: int) -> list[DataSet]:
    """``count`` random data sets of :data:`SMALLEST` (``samples`` sequences of ``t = 2`` tokens each): every
    critical point (msolve, ``timeout`` each), and where ``starts`` gradient-descent runs end."""
    d, e, a = SMALLEST
    arch = layer(SMALLEST, 2)
    T = coordinates_tensor(d, e)
    rng = random.Random(seed)
    out = []
    with progress.bar(total=count, desc="critical points of random data sets", unit="data set") as b:
        for idx in range(count):
            X, Y = _data_set(rng, d, e, 2, samples)
            t0 = time.perf_counter()
            try:
                r = critical_points(arch, X, Y, method="msolve", seed=seed + idx, timeout=timeout)
            except AgAttentionError as exc:
                out.append(DataSet(idx, 0, 0, 0, 0, 0, time.perf_counter() - t0, [], 0, error=str(exc)))
                b.update(1)
                continue
            seconds = time.perf_counter() - t0
            G, w, c = gram([np.array(x, dtype=object) for x in X], [np.array(y, dtype=object) for y in Y], d, e)
            Gf, wf, cf = np.array(G, dtype=float), np.array(w, dtype=float), float(c)
            minima = [p for p in r.points if p.signature == "minimum"]
            targets = [np.array([float(v) for v in reduced_coordinates(p.A.tolist(), p.V.tolist())]) for p in minima]
            nrng = np.random.default_rng([seed, idx])
            xs, _, gnorms = gradient_descent(Gf, wf, cf, T, nrng.standard_normal((starts, T.shape[1] + T.shape[2])))
            reached, elsewhere, stalled = _basins(targets, xs, gnorms)
            out.append(
                DataSet(
                    idx,
                    int(r.complex_pure or 0),
                    len(r.points),
                    r.minima,
                    r.saddles,
                    sum(1 for p in r.points if p.undecided),
                    seconds,
                    reached,
                    elsewhere,
                    stalled,
                )
            )
            b.update(1)
    return out


def _basins(targets: list[np.ndarray], xs: np.ndarray, gnorms: np.ndarray) -> tuple[list[int], int, int]:
    """Where the runs ended: how many at each of the minima ``targets`` (within :data:`MATCH`), elsewhere with a
    gradient below :data:`CONVERGED`, or not converged."""
    reached = [0] * len(targets)
    elsewhere = stalled = 0
    for x, gnorm in zip(xs, gnorms):
        hit = [
            k
            for k, m in enumerate(targets)
            if float(np.linalg.norm(x - m)) <= MATCH * max(1.0, float(np.linalg.norm(m)))
        ]
        if hit:
            reached[hit[0]] += 1
        elif gnorm > CONVERGED:
            stalled += 1
        else:
            elsewhere += 1
    return reached, elsewhere, stalled


def data_table(sets: list[DataSet], samples: int, starts: int) -> Table:
    """The report's table of the data sets: one row each."""
    return Table(
        "Random data sets of (d,d',a) = (2,1,2), t = 2",
        [
            "data set",
            "complex",
            "real",
            "minima",
            "saddles",
            "undecided",
            "runs at each minimum",
            "runs elsewhere",
            "not converged",
            "seconds",
        ],
        [
            [
                s.index,
                s.complex,
                s.real,
                s.minima,
                s.saddles,
                s.undecided,
                s.reached,
                s.elsewhere,
                s.stalled,
                round(s.seconds, 2),
            ]
            for s in sets
        ],
        note=(
            f"{samples} input sequences per data set (entries in [-3, 3]), {starts} gradient-descent "
            "runs each; minima sorted by loss"
        ),
        source=None,
    )


def data_checks(report: Report, sets: list[DataSet], ed_data: int | None, samples: int) -> list[str]:
    ok = [s for s in sets if not s.error]
    for s in sets:
        if s.error:
            report.add(
                Check(
                    "every critical point of the data set is found",
                    f"data set {s.index}",
                    "msolve over QQ",
                    "a zero-dimensional system",
                    s.error,
                    False,
                    s.seconds,
                    size=SMALLEST,
                )
            )
    if ed_data is not None:
        same = [s for s in ok if s.complex == ed_data]
        report.add(
            Check(
                "each data set has as many complex critical points as the data ED degree",
                f"{len(ok)} data sets of (2,1,2), t = 2",
                "msolve's count mod p",
                ed_data,
                sorted(Counter(s.complex for s in ok).items()),
                len(same) == len(ok),
                sum(s.seconds for s in ok),
                size=SMALLEST,
            )
        )
    if not ok:
        return []
    real = Counter(s.real for s in ok)
    minima = Counter(s.minima for s in ok)
    runs = sum(sum(s.reached) + s.elsewhere + s.stalled for s in ok)
    at_min = sum(sum(s.reached) for s in ok)
    best = sum(s.reached[0] for s in ok if s.reached)
    missed = sum(1 for s in ok for k in s.reached if k == 0)
    total_minima = sum(s.minima for s in ok)
    return [
        f"{len(ok)} random data sets of (d,d',a) = (2,1,2), t = 2, {samples} sequences each: "
        f"real critical points {dict(sorted(real.items()))} (number: data sets), local minima "
        f"{dict(sorted(minima.items()))}; {sum(s.undecided for s in ok)} Hessian signatures undecided.",
        f"Gradient descent (float64, {runs} runs from random starts): {at_min} end at a certified minimum "
        f"({100 * at_min / max(1, runs):.0f}%), {best} at the one of least loss "
        f"({100 * best / max(1, runs):.0f}%), {sum(s.elsewhere for s in ok)} converge elsewhere (the critical "
        f"locus V = 0 or A = 0, or a saddle), {sum(s.stalled for s in ok)} have not converged after 10,000 steps; "
        f"{missed} of {total_minima} minima are reached by no run.",
    ]


def draw_data_figure(sets: list[DataSet]) -> Any:
    """The data sets' histograms (real critical points, minima) and where gradient descent ends, three panels: a
    pyplot figure (the caller closes it; :func:`data_figure` saves it)."""
    plt = pyplot()
    ok = [s for s in sets if not s.error]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    panels = [
        (axes[0], [s.real for s in ok], "real critical points (pure)", OKABE_ITO["blue"]),
        (axes[1], [s.minima for s in ok], "local minima (certified)", OKABE_ITO["vermillion"]),
    ]
    for ax, values, label, color in panels:
        counts = Counter(values)
        xs = sorted(counts)
        ax.bar(xs, [counts[x] for x in xs], color=color, width=0.7, label=f"{len(values)} data sets")
        ax.set_xlabel(label)
        ax.set_ylabel("data sets")
        integer_ticks(ax, "x")
        integer_ticks(ax, "y")
        ax.legend(fontsize=8)
    share: dict[Any, float] = defaultdict(float)
    for s in ok:
        runs = sum(s.reached) + s.elsewhere + s.stalled
        for k, n in enumerate(s.reached):
            share[k + 1] += n / max(1, runs)
        share["elsewhere"] += s.elsewhere / max(1, runs)
        share["not converged"] += s.stalled / max(1, runs)
    keys = sorted(k for k in share if isinstance(k, int)) + [k for k in ("elsewhere", "not converged") if share[k]]
    axes[2].bar(
        [str(k) for k in keys],
        [share[k] / max(1, len(ok)) for k in keys],
        color=OKABE_ITO["bluish green"],
        width=0.7,
        label=f"{len(ok)} data sets",
    )
    axes[2].set_xlabel("minimum reached (1 = least loss)")
    axes[2].set_ylabel("mean share of gradient-descent runs")
    axes[2].legend(fontsize=8)
    fig.suptitle(
        "The squared loss of one lightning layer ($d = 2$, $d' = 1$, $t = 2$) on random data sets.\n"
        "How many real critical points and minima, and where gradient descent ends."
    )
    fig.tight_layout()
    return fig


def data_figure(sets: list[DataSet], path: Path) -> list[Path]:
    """:func:`draw_data_figure` of ``sets`` saved as PNG, PDF and SVG (atomically); the paths written."""
    fig = draw_data_figure(sets)
    try:
        return save_figure(fig, path)
    finally:
        pyplot().close(fig)
