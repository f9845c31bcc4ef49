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

Predictions are for the population loss; the training loss is measured on a finite training set (and the test
loss on a larger fresh one), so observation and prediction differ by the sampling error, stated per plateau.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .report import FIGURE_FORMATS, Check, Report, Table, output_directory, pyplot, save_figure, written

__all__ = ["WORK", "Setting", "QUICK", "FULL", "eigenvalues", "gains", "critical_values", "plateau_predictions",
           "subset_is_critical", "Task", "features", "make_task", "Run", "train", "find_plateaus", "network_of",
           "reproduce_icl"]

WORK = ("Zhang, Singh, Latham, Saxe, Training Dynamics of In-Context Learning in Linear Attention "
        "(arXiv:2501.16265, ICML 2025; code yedizhang/linattn-icl @ 9a481d5)")
#: the most bytes the feature matrices of one task may take (they are built in chunks of this size)
CHUNK_BYTES = 64 * 2**20
#: the most sequences of a task (training or test): beyond, the float64 Gram matrices gain nothing
MAX_SEQUENCES = 2_000_000
#: relative tolerance of the numerical ranks reported at a plateau (singular values of M below it are "off")
RANK_RTOL = 0.05  # relative to the largest entry of the minimizer M* (not to M: at M = 0 nothing is "on")


@dataclass(frozen=True)
class Setting:
    """One reproduction: the task (``D``, ``N``, sequences), the two regimes' heads, steps and step sizes."""

    D: int = 4
    N: int = 31
    train: int = 20_000
    test: int = 200_000
    heads_merged: int = 8
    #: the first is their figure's (H > D: every stratum visited); fewer heads stop on the stratum {rank <= H}
    heads_separate: tuple[int, ...] = (5, 2, 1)
    steps_merged: int = 3_000
    steps_separate: int = 60_000
    lr_merged: float = 0.1
    #: 0.5 passes the saddles faster but overshoots at the drops (the loss rose by up to 0.057 in a step; 0.3: 0.002)
    lr_separate: float = 0.3
    init_merged: float = 1e-3
    init_separate: float = 1e-2
    seeds: tuple[int, ...] = (0,)
    record_every: int = 10

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


#: about 16 s: D = 4 (their figures' size), one seed
QUICK = Setting()
#: about 2 minutes: D = 4 with five seeds and four times the data, and D = 3
FULL = (Setting(train=80_000, test=400_000, seeds=(0, 1, 2, 3, 4), heads_separate=(5, 3, 2, 1)),
        Setting(D=3, train=80_000, test=400_000, heads_separate=(4, 2, 1), seeds=(0, 1, 2)))


# ---------------------------------------------------------------------------------------------- exact predictions
def eigenvalues(D: int) -> tuple[Fraction, ...]:
    """Their covariance spectrum, largest first: ``lambda_d = (D + 1 - d) / (D (D + 1) / 2)``, trace 1."""
    if isinstance(D, bool) or not isinstance(D, int) or not 1 <= D <= 12:
        raise InvalidArgumentError(f"D={D!r}: must be an integer in 1..12")
    total = D * (D + 1) // 2
    return tuple(Fraction(D - i, total) for i in range(D))


def gains(lam: Sequence[Fraction], N: int) -> tuple[Fraction, ...]:
    """``r_i = N lambda_i^2 / ((N + 1) lambda_i + T)``: what learning direction ``i`` takes off the loss."""
    T = sum(lam, Fraction(0))
    return tuple(Fraction(N) * l * l / ((N + 1) * l + T) for l in lam)


def critical_values(lam: Sequence[Fraction], N: int) -> dict[tuple[int, ...], Fraction]:
    """Every critical value of the population loss on the strata ``{rank M <= m}``: subset -> ``T - sum r_S``."""
    r = gains(lam, N)
    T = sum(lam, Fraction(0))
    return {S: T - sum((r[i] for i in S), Fraction(0))
            for m in range(len(lam) + 1) for S in itertools.combinations(range(len(lam)), m)}


def plateau_predictions(lam: Sequence[Fraction], N: int) -> tuple[Fraction, ...]:
    """``L_0 = T, L_1, ..., L_D = L*``: the smallest critical value on each stratum (the ``m`` largest gains)."""
    r = sorted(gains(lam, N), reverse=True)
    T = sum(lam, Fraction(0))
    return tuple(T - sum(r[:m], Fraction(0)) for m in range(len(lam) + 1))


def _metric(lam: Sequence[Fraction], N: int) -> tuple[list[list[Fraction]], list[Fraction]]:
    T = sum(lam, Fraction(0))
    w = [[lj * li * ((N + 1) * li + T) / N for lj in lam] for li in lam]
    target = [Fraction(N) / ((N + 1) * l + T) for l in lam]
    return w, target


def subset_is_critical(lam: Sequence[Fraction], N: int, S: Sequence[int]) -> bool:
    """Exact: is ``M_S`` (``m*_i`` on the diagonal entries of ``S``, zero elsewhere) a critical point of the loss on
    the rank-``|S|`` matrices?  The gradient ``2 w o (M_S - M*)`` must be normal to the tangent space ``{X: X_ij = 0
    for i, j not in S}^perp``, i.e. vanish on every row and column of ``S``."""
    w, target = _metric(lam, N)
    D = len(lam)
    chosen = set(S)
    for i in range(D):
        for j in range(D):
            value = (target[i] if i == j and i in chosen else 0) - (target[i] if i == j else 0)
            if (i in chosen or j in chosen) and w[i][j] * value != 0:
                return False
    return True


#: the largest D whose strata's ED degrees are counted (the (m+1)-minors of a D x D matrix of unknowns)
MAX_ED_D = 5


def _minor(names: Sequence[Sequence[str]], rows: Sequence[int], cols: Sequence[int]) -> str:
    """The determinant of a submatrix of unknowns, as a sum over permutations (a string for the ideal's parser)."""
    terms = []
    for perm in itertools.permutations(cols):
        inversions = sum(perm[i] > perm[j] for i in range(len(perm)) for j in range(i + 1, len(perm)))
        terms.append(("-" if inversions % 2 else "+") + "*".join(names[r][c] for r, c in zip(rows, perm)))
    return "".join(terms).lstrip("+")


def stratum_ed_degree(lam: Sequence[Fraction], N: int, m: int, seed: int = 0, timeout: float = 300.0) -> Any:
    """The ED degree of ``{rank M <= m}`` (``D x D``, its ``(m+1)``-minors) for the loss's metric ``w_ij`` (a
    diagonal form on the entries), counted by :func:`ag_attention.ideal_ed_degree` (probabilistic: two primes)."""
    from .._landscape.ideal_ed import ideal_ed_degree

    D = len(lam)
    if not 1 <= m < D <= MAX_ED_D:
        raise InvalidArgumentError(f"m={m!r}, D={D}: the strata counted are 1 <= m < D <= {MAX_ED_D}")
    names = [[f"m{i}x{j}" for j in range(D)] for i in range(D)]
    gens = [_minor(names, r, c) for r in itertools.combinations(range(D), m + 1)
            for c in itertools.combinations(range(D), m + 1)]
    w, _ = _metric(lam, N)
    metric = [[w[k // D][k % D] if k == l else Fraction(0) for l in range(D * D)] for k in range(D * D)]
    return ideal_ed_degree([x for row in names for x in row], gens, metric=metric, seed=seed, timeout=timeout)


# ---------------------------------------------------------------------------------------------- the task
@dataclass
class Task:
    """A training set and a test set as the quadratic forms of the loss in ``Theta`` (float64)."""

    D: int
    N: int
    rotation: np.ndarray
    gram: np.ndarray  # (n^3, n^3) mean of z z^T over the training sequences, n = D + 1
    moment: np.ndarray  # (n^3,) mean of y_q z
    energy: float  # mean of y_q^2
    test_gram: np.ndarray
    test_moment: np.ndarray
    test_energy: float
    sequences: tuple[int, int]
    probe: tuple[np.ndarray, np.ndarray]  # a few test sequences (tokens (P, N+1, D+1)) and their labels

    def loss(self, theta: np.ndarray, test: bool = False) -> float:
        if test:
            G, b, c = self.test_gram, self.test_moment, self.test_energy
        else:
            G, b, c = self.gram, self.moment, self.energy
        return float(c - 2 * b @ theta + theta @ G @ theta)


Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]


def _features(D: int, N: int, count: int, rng: np.random.Generator, chol: np.ndarray) -> Arrays:
    x = rng.standard_normal((count, N + 1, D)) @ chol.T
    w = rng.standard_normal((count, D))
    y = np.einsum("pnd,pd->pn", x, w)
    tokens = np.concatenate([x, y[..., None]], axis=2)
    labels = tokens[:, -1, D].copy()
    tokens[:, -1, D] = 0.0  # the query's label is hidden
    return features(tokens, N), labels, tokens


def features(tokens: np.ndarray, N: int) -> np.ndarray:
    """``z = C (x) x_q`` per sequence, ``C = X^T X / N`` over all its tokens: the query's ``y``-output is
    ``<z, Theta>``.  ``tokens``: ``(sequences, N + 1, D + 1)``, the query last."""
    C = np.einsum("pna,pnb->pab", tokens, tokens) / N
    return np.einsum("pab,pc->pabc", C, tokens[:, -1, :]).reshape(len(tokens), -1)


def _moments(D: int, N: int, total: int, rng: np.random.Generator,
             chol: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, tuple[np.ndarray, np.ndarray]]:
    n3 = (D + 1) ** 3
    per = max(1, CHUNK_BYTES // (8 * max(n3, (N + 1) * (D + 1) * 2)))
    G = np.zeros((n3, n3))
    b = np.zeros(n3)
    c = 0.0
    probe = (np.zeros((0, N + 1, D + 1)), np.zeros(0))
    done = 0
    while done < total:
        k = min(per, total - done)
        Z, yq, tokens = _features(D, N, k, rng, chol)
        G += Z.T @ Z
        b += Z.T @ yq
        c += float(yq @ yq)
        if not done:
            probe = (tokens[:8].copy(), yq[:8].copy())
        done += k
    return G / total, b / total, c / total, probe


def make_task(D: int, N: int, train: int, test: int, seed: int) -> Task:
    """The training and test sets of one seed (rotation, inputs, tasks), as quadratic forms."""
    for name, value, low, high in (("D", D, 1, 12), ("N", N, 1, 10_000), ("train", train, 1, MAX_SEQUENCES),
                                   ("test", test, 1, MAX_SEQUENCES)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidArgumentError(f"{name}={value!r}: must be an integer in {low}..{high:,}")
    rng = np.random.default_rng(seed)
    Qr, R = np.linalg.qr(rng.standard_normal((D, D)))
    Qr = Qr * np.sign(np.diag(R))
    lam = np.array([float(l) for l in eigenvalues(D)])
    chol = np.linalg.cholesky(Qr @ np.diag(lam) @ Qr.T)
    G, b, c, _ = _moments(D, N, train, rng, chol)
    tG, tb, tc, probe = _moments(D, N, test, rng, chol)
    return Task(D, N, Qr, G, b, c, tG, tb, tc, (train, test), probe)


# ---------------------------------------------------------------------------------------------- training
@dataclass
class Run:
    """One gradient-descent run: the recorded steps, training and test losses, and the weights at each record."""

    regime: str  # "merged" or "separate"
    heads: int
    seed: int
    lr: float
    init: float
    steps: np.ndarray
    losses: np.ndarray
    test_losses: np.ndarray
    values: list[np.ndarray]  # v_h (H, D+1) per record
    attention: list[np.ndarray]  # W_h = A_h^T (H, D+1, D+1) per record
    seconds: float
    plateaus: list[dict[str, Any]] = field(default_factory=list)

    def effective(self, k: int, D: int) -> np.ndarray:
        """``M = sum_h v_{h,y} A_h[:D,:D]^T`` at record ``k`` (the matrix the loss sees)."""
        return np.einsum("h,hbc->bc", self.values[k][:, D], self.attention[k][:, :D, :D])


def train(task: Task, regime: str, heads: int, init: float, lr: float, steps: int, seed: int,
          record_every: int = 10) -> Run:
    """Full-batch gradient descent from their initialisation: ``v_{h,y}`` and ``Q, K`` (or ``A``) Gaussian of scale
    ``init`` (``Q, K`` divided by ``sqrt(D + 1)``), ``v_{h,x} = 0``, ``K``'s and ``A``'s label column on the query side
    zero (trainable, as theirs)."""
    if regime not in ("merged", "separate"):
        raise InvalidArgumentError(f"regime={regime!r}: 'merged' or 'separate'")
    for name, value in (("heads", heads), ("steps", steps), ("record_every", record_every)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidArgumentError(f"{name}={value!r}: must be a positive integer")
    for name, x in (("init", init), ("lr", lr)):
        if not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0):
            raise InvalidArgumentError(f"{name}={x!r}: must be a positive number")
    D, n = task.D, task.D + 1
    rng = np.random.default_rng(10_000 + seed)
    v = np.zeros((heads, n))
    v[:, D] = rng.standard_normal(heads) * init
    if regime == "merged":
        W = rng.standard_normal((heads, n, n)) * init
        W[:, D, :D] = 0.0
    else:
        k = rng.standard_normal((heads, n)) * init / math.sqrt(n)
        q = rng.standard_normal((heads, n)) * init / math.sqrt(n)
        k[:, D] = 0.0
    G, b = task.gram, task.moment
    rec_steps, losses, tests, vs, Ws = [], [], [], [], []
    t0 = time.perf_counter()
    for s in range(steps + 1):
        if regime == "separate":
            W = k[:, :, None] * q[:, None, :]
        theta = np.einsum("ha,hbc->abc", v, W).ravel()
        Gt = G @ theta
        if s % record_every == 0 or s == steps:
            rec_steps.append(s)
            losses.append(float(task.energy - 2 * b @ theta + theta @ Gt))
            tests.append(task.loss(theta, test=True))
            vs.append(v.copy())
            Ws.append(W.copy())
        if s == steps:
            break
        g = (2 * (Gt - b)).reshape(n, n, n)
        gv = np.einsum("abc,hbc->ha", g, W)
        gW = np.einsum("abc,ha->hbc", g, v)
        v = v - lr * gv
        if regime == "merged":
            W = W - lr * gW
        else:
            gk = np.einsum("hbc,hc->hb", gW, q)
            gq = np.einsum("hbc,hb->hc", gW, k)
            k, q = k - lr * gk, q - lr * gq
    return Run(regime, heads, seed, lr, init, np.array(rec_steps), np.array(losses), np.array(tests), vs, Ws,
               time.perf_counter() - t0)


def find_plateaus(steps: np.ndarray, losses: np.ndarray, flat: float = 0.02, min_decades: float = 0.02,
                  merge: float = 0.01) -> list[dict[str, Any]]:
    """The plateaus of a loss curve, from the curve alone, in logarithmic time (saddles last in proportion to the
    time already spent): records where the loss changes by less than ``flat`` (relative) per decade of steps, runs
    of them longer than ``min_decades``, two neighbours whose losses differ by less than ``merge`` (relative)
    joined.  Each: first and last step, the record in the middle (in log time) and the loss there."""
    keep = np.flatnonzero(np.asarray(steps) > 0)
    if len(keep) < 3:
        return []
    s, L = np.asarray(steps, dtype=float)[keep], np.asarray(losses, dtype=float)[keep]
    u = np.log10(s)
    rate = np.abs(np.gradient(L, u)) / np.maximum(np.abs(L), 1e-300)
    runs: list[list[int]] = []
    for i, f in enumerate(rate < flat):
        if f and runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        elif f:
            runs.append([i, i])
    runs = [r for r in runs if u[r[1]] - u[r[0]] >= min_decades]
    merged: list[list[int]] = []
    for r in runs:
        if merged and abs(L[r[0]] - L[merged[-1][1]]) <= merge * abs(L[merged[-1][1]]):
            merged[-1][1] = r[1]
        else:
            merged.append(r)
    out = []
    for a, b in merged:
        mid = int(np.argmin(np.abs(u[a:b + 1] - (u[a] + u[b]) / 2))) + a
        out.append({"first_step": int(s[a]), "last_step": int(s[b]), "record": int(keep[mid]),
                    "step": int(s[mid]), "loss": float(L[mid])})
    return out


# ---------------------------------------------------------------------------------------------- the package's network
def network_of(run: Run, record: int, N: int, tokens: int | None = None) -> Any:
    """The trained weights at ``record`` as the package's :class:`~ag_attention.Network` (one layer, ``H`` heads,
    skip connection): ``V_h = e_y v_h^T / N``; merged ``A_h = W_h^T``, separate ``Q_h = q_h^T``, ``K_h = k_h^T``
    (``W_h = k_h q_h^T``)."""
    from .._point.weights import Network

    v, W = run.values[record], run.attention[record]
    H, n = v.shape
    arrays: dict[str, np.ndarray] = {}
    for h in range(H):
        V = np.zeros((n, n))
        V[n - 1] = v[h] / N
        arrays[f"layers.0.heads.{h}.V"] = V
        if run.regime == "merged":
            arrays[f"layers.0.heads.{h}.A"] = W[h].T.copy()
        else:
            u, s, vt = np.linalg.svd(W[h])
            arrays[f"layers.0.heads.{h}.Q"] = (vt[0] * math.sqrt(s[0]))[None, :]
            arrays[f"layers.0.heads.{h}.K"] = (u[:, 0] * math.sqrt(s[0]))[None, :]
    return Network.from_weights(arrays, tokens=tokens or N + 1, skip=True)


def forward_agreement(task: Task, run: Run, record: int) -> float:
    """Largest relative difference between the package's forward pass (the query's ``y``-output) and the trainer's
    prediction ``<z, Theta>`` on the probe sequences."""
    from .._network import forward
    from .._numeric import Float64

    net = network_of(run, record, task.N)
    tokens, _ = task.probe
    out = forward(net.architecture, Float64(), net.theta_float(), tokens)[:, -1, task.D]
    theta = np.einsum("ha,hbc->abc", run.values[record], run.attention[record]).ravel()
    ours = features(tokens, task.N) @ theta
    return float(np.max(np.abs(out - ours)) / max(float(np.max(np.abs(ours))), 1e-300))


# ---------------------------------------------------------------------------------------------- where the weights sit
def _geometry(task: Task, run: Run, plateau: dict[str, Any], lam: Sequence[Fraction], timeout: float) -> dict[str, Any]:
    from .._point.report import point_geometry

    k = plateau["record"]
    D = task.D
    M = task.rotation.T @ run.effective(k, D) @ task.rotation  # in the eigenbasis of Lambda
    s = np.linalg.svd(M, compute_uv=False)
    _, target = _metric(lam, task.N)
    scale = float(max(target))  # the largest entry of the minimizer M*: what "off" is measured against
    rank = int(np.sum(s > RANK_RTOL * scale))
    heads = [float(abs(run.values[k][h][D]) * np.linalg.norm(run.attention[k][h][:D, :D])) for h in range(run.heads)]
    active = sum(x > RANK_RTOL * scale for x in heads)
    diag = np.diag(M)
    S = tuple(sorted(int(i) for i in np.argsort(-np.abs(diag))[:rank]))
    MS = np.diag([float(target[i]) if i in S else 0.0 for i in range(D)])
    rel = float(np.linalg.norm(M - MS) / max(np.linalg.norm(MS), 1.0 if not S else 1e-300))
    out: dict[str, Any] = {"singular_values_M": [float(x) for x in s], "rank_M": rank, "active_heads": active,
                           "head_sizes": heads, "subset": list(S), "distance_to_M_S": rel}
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


# ---------------------------------------------------------------------------------------------- the report
def _match(value: float, crit: dict[tuple[int, ...], Fraction]) -> tuple[tuple[int, ...], Fraction]:
    return min(crit.items(), key=lambda kv: (abs(float(kv[1]) - value), len(kv[0])))


def _figure(runs: list[Run], setting: Setting, path: Path) -> list[Path]:
    """Loss curves of one setting (log steps), the predicted critical values ``L_m`` dashed, detected plateaus as
    dots; left merged heads, right separate rank-one heads (one line style per number of heads)."""
    from .._sweep.summary import OKABE_ITO

    plt = pyplot()
    predictions = plateau_predictions(eigenvalues(setting.D), setting.N)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    palette = [OKABE_ITO[c] for c in ("vermillion", "bluish green", "reddish purple", "sky blue", "orange")]
    styles = ["-", "--", ":", "-."]
    for ax, regime in zip(axes, ("merged", "separate")):
        for m, L in enumerate(predictions):
            ax.axhline(float(L), color="0.6", ls="--", lw=0.8)
            ax.text(1.0, float(L), f" $L_{m}$", transform=ax.get_yaxis_transform(), va="center", fontsize=8,
                    color="0.35")
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
            ax.semilogx(r.steps[keep], r.losses[keep], color=color, ls=ls, lw=1.4, alpha=0.85, label=label,
                        gid=f"run:{regime}:{r.heads}:{r.seed}")
            for p in r.plateaus:
                ax.plot([p["step"]], [p["loss"]], "o", color="black", ms=3.5)
        ax.set_title("merged key-query (A free)" if regime == "merged" else "separate key-query (rank-one heads)")
        ax.set_xlabel("gradient step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower left")
    axes[0].set_ylabel("training loss (mean squared error)")
    fig.suptitle(f"In-context linear regression, D = {setting.D}, N = {setting.N} (seeds "
                 f"{', '.join(map(str, setting.seeds))}): loss curves and detected plateaus (dots);\n"
                 "dashed: the predicted critical values $L_m$ of the loss on the strata rank M <= m", fontsize=10)
    fig.tight_layout()
    try:
        return save_figure(fig, path)
    finally:
        plt.close(fig)


#: how far (relative) an observed plateau may lie from its predicted critical value: the sampling error of the
#: training loss on a finite training set (within 2.5 % at 20,000 sequences, measured), with room
TOLERANCE = 0.05


def _predictions(report: Report, setting: Setting, seed: int) -> dict[str, Any]:
    """The exact critical values and their completeness (every subset critical; ED degrees ``C(D, m)``)."""
    lam = eigenvalues(setting.D)
    crit = critical_values(lam, setting.N)
    t0 = time.perf_counter()
    bad = [S for S in crit if not subset_is_critical(lam, setting.N, S)]
    report.add(Check("every subset point M_S is a critical point of the population loss on its rank stratum",
                     f"D={setting.D}, N={setting.N}", "exact gradient over QQ against the tangent space",
                     f"{len(crit)} of {len(crit)}", f"{len(crit) - len(bad)} of {len(crit)}", not bad,
                     time.perf_counter() - t0))
    eds = []
    if setting.D > MAX_ED_D:
        report.findings.append(f"D={setting.D}: the ED degrees of the strata are not counted above D = {MAX_ED_D} "
                               "(the subset points are still checked critical, exactly).")
    for m in range(1, setting.D if setting.D <= MAX_ED_D else 1):
        t0 = time.perf_counter()
        r = stratum_ed_degree(lam, setting.N, m, seed=seed)
        eds.append({"m": m, "ed_degree": r.value, "counts": [list(c) for c in r.counts]})
        report.add(Check("the critical points of the loss on {rank M <= m} are exactly the C(D, m) subset points "
                         "(ED degree for the loss's metric)", f"D={setting.D}, N={setting.N}, m={m}",
                         "ideal_ed_degree, msolve modulo " + ", ".join(str(p) for p, _, _ in r.counts)
                         + " (probabilistic)", math.comb(setting.D, m), r.value, r.value == math.comb(setting.D, m),
                         time.perf_counter() - t0))
    return {"eigenvalues": [str(l) for l in lam],
            "predicted_plateaus": [str(p) for p in plateau_predictions(lam, setting.N)],
            "critical_values": {",".join(map(str, S)) or "-": str(v) for S, v in crit.items()}, "ed_degrees": eds}


def _run_checks(report: Report, setting: Setting, run: Run, agree: float) -> None:
    pred = plateau_predictions(eigenvalues(setting.D), setting.N)
    case = f"D={setting.D}, N={setting.N}, {run.heads} heads, seed {run.seed}"
    report.add(Check("the package's forward pass (query's y-output) equals the trainer's quadratic form",
                     f"{case}, {run.regime}", "float64 on 8 test sequences, largest relative difference",
                     "< 1e-9", f"{agree:.1e}", agree < 1e-9, run.seconds))
    observed = [p["loss"] for p in run.plateaus]
    matched = [int(p["stratum"]) for p in run.plateaus]
    last = setting.D if run.regime == "merged" else min(run.heads, setting.D)
    ok = (bool(observed) and all(abs(o - float(pred[m])) <= TOLERANCE * float(pred[m])
                                 for o, m in zip(observed, matched))
          and matched == sorted(set(matched)) and matched[0] == 0)
    if run.regime == "merged":
        ok &= matched == [0, setting.D]
        claim = "merged heads: one drop, from the plateau at T (M = 0) to the minimum L*"
        expected = f"L_0 = {float(pred[0]):.4f}, L_{setting.D} = {float(pred[-1]):.4f}"
    else:
        claim = ("separate rank-one heads: every plateau at the minimum L_m of a stratum {rank M <= m}, m increasing "
                 f"from 0 (at most min(H, D) = {last}: H rank-one heads reach rank <= H)")
        expected = f"L_0 .. L_{last} (of " + ", ".join(f"{float(x):.4f}" for x in pred[:last + 1]) + ")"
    report.add(Check(claim, f"{case}, {run.regime}", "plateaus detected in the training curve against the exact "
                     f"critical values (relative difference <= {TOLERANCE:.0%}); the stratum is rank M at the plateau",
                     expected, ", ".join(f"L_{m}: {o:.4f}" for m, o in zip(matched, observed)) or "no plateau", ok,
                     run.seconds))
    if run.regime == "separate":
        rank_ok = all(p["geometry"]["rank_M"] == int(p["stratum"]) and p["geometry"]["subset"] == list(range(p["stratum"]))
                      for p in run.plateaus)
        report.add(Check("at a plateau of stratum m the matrix M has rank m, on the m largest eigen-directions, and "
                         "m heads are active", f"{case}, separate",
                         f"singular values of M and head sizes |v_hy| |A_h| above {RANK_RTOL} max m*_i",
                         [int(p["stratum"]) for p in run.plateaus],
                         [p["geometry"]["rank_M"] for p in run.plateaus],
                         rank_ok and all(p["geometry"]["active_heads"] == int(p["stratum"]) for p in run.plateaus)))


def reproduce_icl(out: str | Path | None = None, *, quick: bool = False, seed: int = 0,
                  settings: Sequence[Setting] | None = None, geometry_timeout: float = 60.0) -> Report:
    """Both regimes of :data:`WORK`, the plateaus detected in the loss curves, the critical values predicted on the
    rank strata, the weights' geometry at each plateau; the report, and with ``out`` its files (``report.md``,
    ``report.json``, ``icl.json``, ``icl.png``).  ``quick``: :data:`QUICK` (about 16 s); else :data:`FULL` (about
    2 minutes)."""
    from .._files import atomic_write

    if not isinstance(quick, bool):
        raise InvalidArgumentError(f"quick={quick!r}: must be True or False")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidArgumentError(f"seed={seed!r}: must be a non-negative integer")
    plan = tuple(settings) if settings is not None else ((QUICK,) if quick else FULL)
    report = Report(
        "Training dynamics of in-context learning, predicted by the geometry",
        summary=(f"{WORK}: multi-head lightning attention with a skip connection trained on in-context linear "
                 "regression. Merged key-query heads (A free) drop once; separate rank-one heads go from saddle to "
                 "saddle. Each plateau's loss is predicted as the smallest critical value of the population loss on "
                 "the stratum {rank M <= m} of the matrix the loss sees (exact rationals; every critical point "
                 "accounted for by an ED degree), and set against the training and test losses observed."),
        meta={"quick": quick, "seed": seed, "settings": [s.to_dict() for s in plan]},
    )
    data: dict[str, Any] = {"work": WORK, "settings": []}
    all_runs: list[tuple[Setting, list[Run]]] = []
    rows = []
    for setting in plan:
        lam = eigenvalues(setting.D)
        pred = plateau_predictions(lam, setting.N)
        crit = critical_values(lam, setting.N)
        entry: dict[str, Any] = {"setting": setting.to_dict(), **_predictions(report, setting, seed), "runs": []}
        runs: list[Run] = []
        for s in setting.seeds:
            task = make_task(setting.D, setting.N, setting.train, setting.test, seed + s)
            plan_runs = [("merged", setting.heads_merged, setting.init_merged, setting.lr_merged, setting.steps_merged)]
            plan_runs += [("separate", H, setting.init_separate, setting.lr_separate, setting.steps_separate)
                          for H in setting.heads_separate]
            for regime, heads, init, lr, steps in plan_runs:
                run = train(task, regime, heads, init, lr, steps, s, setting.record_every)
                run.plateaus = find_plateaus(run.steps, run.losses)
                for p in run.plateaus:
                    p["test_loss"] = float(run.test_losses[p["record"]])
                    p["geometry"] = _geometry(task, run, p, lam, geometry_timeout)
                    m = p["geometry"]["rank_M"]
                    p["stratum"] = m
                    p["predicted"] = str(pred[m])
                    # the critical value nearest to the observed loss, whatever its stratum (a cross-check of m)
                    p["nearest_critical"] = list(_match(p["loss"], crit)[0])
                agree = forward_agreement(task, run, len(run.steps) - 1)
                runs.append(run)
                _run_checks(report, setting, run, agree)
                for i, p in enumerate(run.plateaus):
                    g = p["geometry"]
                    L = float(pred[p["stratum"]])
                    rows.append([f"D={setting.D}", regime, run.heads, s, f"L_{p['stratum']}", p["first_step"],
                                 p["last_step"], f"{L:.5f}", f"{p['loss']:.5f}", f"{p['test_loss']:.5f}",
                                 f"{(p['loss'] - L) / L:+.2%}", f"{(p['test_loss'] - L) / L:+.2%}", g["rank_M"],
                                 g["active_heads"], f"{g['distance_to_M_S']:.3f}",
                                 g.get("local_rank_float", "-"), g.get("local_rank_exact", "-")])
                entry["runs"].append({"regime": regime, "seed": s, "heads": heads, "seconds": round(run.seconds, 2),
                                      "forward_agreement": agree, "plateaus": run.plateaus,
                                      "final_loss": float(run.losses[-1]),
                                      "final_test_loss": float(run.test_losses[-1]),
                                      "curve": [[int(a), float(b), float(c)] for a, b, c in
                                                zip(run.steps, run.losses, run.test_losses)][::10]})
        all_runs.append((setting, runs))
        data["settings"].append(entry)
        report.findings += _findings(setting, runs)
    report.tables.append(Table(
        "Plateaus: the predicted critical values against the observed losses",
        ["size", "regime", "heads", "seed", "stratum", "from step", "to step", "predicted L_m", "training loss",
         "test loss", "training vs predicted", "test vs predicted", "rank M", "active heads", "|M - M_S| / |M_S|",
         "local rank (float64, rtol 1e-3)", "local rank (exact)"], rows,
        note=("Predicted: L_m = T - (r_1 + ... + r_m), the smallest critical value of the population loss on "
              "{rank M <= m}, m = rank M at the plateau (exact rationals, shown rounded). Observed: the loss in the "
              "middle (log time) of a stretch where the training curve changes by less than 2 % per decade of "
              f"steps, on the training set and on a fresh test set. rank M: singular values above {RANK_RTOL} times "
              "the largest entry of the minimizer M*; active heads: |v_hy| |A_h| above the same (the others sit near "
              "Theorem 3.4's critical point A_h = 0, V_h = 0); |M - M_S| / |M_S|: distance to the predicted "
              "critical point (M_0 = 0: absolute). Local rank: of the package's network at the plateau's weights "
              "with t = 3 tokens; exact: the float weights as rationals, where every tiny head counts; float64: the "
              "Jacobian's numerical rank at relative tolerance 1e-3.")))
    report.record_engines(msolve=True)
    if out is not None:
        base = output_directory(out)
        written(report, lambda: atomic_write(base / "icl.json", json.dumps(data, indent=1) + "\n"))
        figs = written(report, lambda: _figure(all_runs[0][1], all_runs[0][0], base / "icl.png"))
        if figs:
            report.meta["figures"] = [f"icl.{ext}" for ext in FIGURE_FORMATS]
        report.meta["data"] = "icl.json"
        written(report, lambda: report.write(base))
    return report


def _findings(setting: Setting, runs: list[Run]) -> list[str]:
    pred = plateau_predictions(eigenvalues(setting.D), setting.N)
    out = [f"D={setting.D}, N={setting.N}: the predicted plateaus L_m = " + ", ".join(str(p) for p in pred)
           + f" (about {', '.join(f'{float(p):.4f}' for p in pred)})."]
    for regime in ("merged", "separate"):
        these = [r for r in runs if r.regime == regime]
        diffs = [(p["loss"] - float(pred[p["stratum"]])) / float(pred[p["stratum"]]) for r in these for p in r.plateaus]
        tdiffs = [(p["test_loss"] - float(pred[p["stratum"]])) / float(pred[p["stratum"]])
                  for r in these for p in r.plateaus]
        if not diffs:
            continue
        out.append(f"{regime} heads: {len(diffs)} plateaus in {len(these)} runs; training loss minus prediction from "
                   f"{min(diffs):+.2%} to {max(diffs):+.2%}, test loss from {min(tdiffs):+.2%} to {max(tdiffs):+.2%}. "
                   "The prediction is the population loss; the training loss is measured on the "
                   f"{setting.train:,} sequences the weights were fitted to and the test loss on {setting.test:,} "
                   "fresh ones: both differ from it by sampling error.")
    for r in runs:
        if r.regime != "separate":
            continue
        seen = [int(p["stratum"]) for p in r.plateaus]
        top = min(r.heads, setting.D)
        missing = [m for m in range(top + 1) if m not in seen and m < max(seen, default=0)]
        if seen and max(seen) < top:
            out.append(f"separate, {r.heads} heads, seed {r.seed}: training ended on the plateau L_{max(seen)} "
                       f"({r.steps[-1]:,} steps), before reaching L_{top}, the minimum of the stratum its "
                       f"{r.heads} heads can reach.")
        if missing:
            out.append(f"separate, {r.heads} heads, seed {r.seed}: the plateaus at " + ", ".join(f"L_{m}" for m in missing)
                       + " were not resolved (the loss passed them in less than 0.02 decades of steps: the heads "
                       "learned those directions almost together).")
    return out
