"""The model of ``reproduce icl`` (:mod:`ag_attention._reproduce.icl`): exact predictions, the task as quadratic forms,
the trainer, the plateau finder, and the trained weights as the package's network.

Predictions are exact rationals (:func:`plateau_predictions`, :func:`critical_values`); the trainer is full-batch
gradient descent on the loss as a quadratic form in ``Theta = sum_h v_h (x) A_h^T`` (the same loss as the package's
forward pass, checked by :func:`forward_agreement`); :func:`sampling_error` measures, at given weights, how far a
mean over a finite set of sequences may lie from the population loss the predictions are about.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from .._checks import check_int, check_real
from .._errors import InvalidArgumentError
from .._landscape import ideal_ed_degree
from .._network import forward
from .._numeric import Float64
from .._point import Network

#: the most bytes the feature matrices of one task may take (they are built in chunks of this size)
CHUNK_BYTES = 64 * 2**20
#: the most sequences of a task (training or test): beyond, the float64 Gram matrices gain nothing
MAX_SEQUENCES = 2_000_000


# ---------------------------------------------------------------------------------------------- exact predictions
def eigenvalues(D: int) -> tuple[Fraction, ...]:
    """Their covariance spectrum, largest first: ``lambda_d = (D + 1 - d) / (D (D + 1) / 2)``, trace 1."""
    D = check_int(D, "D", minimum=1, maximum=12)
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
    return {
        S: T - sum((r[i] for i in S), Fraction(0))
        for m in range(len(lam) + 1)
        for S in itertools.combinations(range(len(lam)), m)
    }


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


def embedded_fixed_point(
    lam: Sequence[Fraction], N: int, S: Sequence[int], heads: int
) -> tuple[Fraction, Fraction | None]:
    """Exact, in the eigenbasis: the saddles of Zhang, Saxe and Latham (arXiv:2512.20607,
    Theorem 1, type III) for rank-one heads.  The fixed point of an ``|S|``-head network (head ``h`` of ``S``:
    ``v_h = 1``, ``k_h = m*_i e_i``, ``q_h = e_i``, so ``M = M_S``) with ``heads - |S|`` heads of zero weights
    added.  Returns the largest absolute entry of the loss's gradient in every head's ``(v_h, k_h, q_h)`` (zero: a
    fixed point of the ``heads``-head network) and, when a zero head is left and a direction ``j`` is not in
    ``S``, the coefficient of ``eps^3`` in the loss along that head growing as ``eps (1, e_j, e_j)``, the most
    negative over ``j``: ``-2 w_jj m*_j = -2 lambda_j^2 < 0``, the loss falls cubically as one more head is added
    (a degenerate saddle: the Hessian vanishes on the zero heads), else ``None``."""
    D = len(lam)
    chosen = list(S)
    if len(set(chosen)) != len(chosen) or not all(0 <= i < D for i in chosen) or len(chosen) > heads:
        raise InvalidArgumentError(
            f"S={tuple(S)!r}, heads={heads}: distinct directions of 0..{D - 1}, at most one per head"
        )
    w, target = _metric(lam, N)
    M = [[target[i] if i == j and i in chosen else Fraction(0) for j in range(D)] for i in range(D)]
    G = [[2 * w[i][j] * (M[i][j] - (target[i] if i == j else 0)) for j in range(D)] for i in range(D)]
    zero = [Fraction(0)] * D
    unit = [[Fraction(int(i == j)) for j in range(D)] for i in range(D)]
    vs = [Fraction(1)] * len(chosen) + [Fraction(0)] * (heads - len(chosen))
    ks = [[target[i] * e for e in unit[i]] for i in chosen] + [zero] * (heads - len(chosen))
    qs = [unit[i] for i in chosen] + [zero] * (heads - len(chosen))
    largest = Fraction(0)
    for v, k, q in zip(vs, ks, qs):
        Gq = [sum((G[a][b] * q[b] for b in range(D)), Fraction(0)) for a in range(D)]
        Gtk = [sum((G[a][b] * k[a] for a in range(D)), Fraction(0)) for b in range(D)]
        grads = [sum((k[a] * Gq[a] for a in range(D)), Fraction(0))] + [v * x for x in Gq] + [v * x for x in Gtk]
        largest = max([largest] + [abs(x) for x in grads])
    free = [j for j in range(D) if j not in chosen]
    descent = min((-2 * w[j][j] * target[j] for j in free), default=None) if heads > len(chosen) else None
    return largest, descent


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

    D = len(lam)
    if not 1 <= m < D <= MAX_ED_D:
        raise InvalidArgumentError(f"m={m!r}, D={D}: the strata counted are 1 <= m < D <= {MAX_ED_D}")
    names = [[f"m{i}x{j}" for j in range(D)] for i in range(D)]
    gens = [
        _minor(names, r, c)
        for r in itertools.combinations(range(D), m + 1)
        for c in itertools.combinations(range(D), m + 1)
    ]
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
    z: np.ndarray = np.einsum("pab,pc->pabc", C, tokens[:, -1, :]).reshape(len(tokens), -1)
    return z


def _chunk(D: int, N: int) -> int:
    """Sequences per chunk: their features and tokens within :data:`CHUNK_BYTES`."""
    return max(1, CHUNK_BYTES // (8 * max((D + 1) ** 3, (N + 1) * (D + 1) * 2)))


def _moments(
    D: int, N: int, total: int, rng: np.random.Generator, chol: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float, tuple[np.ndarray, np.ndarray]]:
    n3 = (D + 1) ** 3
    per = _chunk(D, N)
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
    for name, value, low, high in (
        ("D", D, 1, 12),
        ("N", N, 1, 10_000),
        ("train", train, 1, MAX_SEQUENCES),
        ("test", test, 1, MAX_SEQUENCES),
    ):
        check_int(value, name, minimum=low, maximum=high)
    rng = np.random.default_rng(seed)
    Qr, R = np.linalg.qr(rng.standard_normal((D, D)))
    Qr = Qr * np.sign(np.diag(R))
    lam = np.array([float(l) for l in eigenvalues(D)])
    chol = np.linalg.cholesky(Qr @ np.diag(lam) @ Qr.T)
    # Gram matrices of (D + 1)^3 columns: up to 512 (D <= 7), BLAS threads only cost (measured at D = 4 on 2 busy
    # cores: 11 s against 2.4 s, a chunk's 1.2 s against 0.03 s)
    with threadpool_limits(limits=1 if (D + 1) ** 3 <= 512 else None, user_api="blas"):
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
        M: np.ndarray = np.einsum("h,hbc->bc", self.values[k][:, D], self.attention[k][:, :D, :D])
        return M


def train(
    task: Task, regime: str, heads: int, init: float, lr: float, steps: int, seed: int, record_every: int = 10
) -> Run:
    """Full-batch gradient descent from their initialisation: ``v_{h,y}`` and ``Q, K`` (or ``A``) Gaussian of scale
    ``init`` (``Q, K`` divided by ``sqrt(D + 1)``), ``v_{h,x} = 0``, ``K``'s and ``A``'s label column on the query side
    zero (trainable, as theirs)."""
    with threadpool_limits(limits=1, user_api="blas"):  # a matrix-vector product a step: BLAS threads only cost
        return _train(task, regime, heads, init, lr, steps, seed, record_every)


def _train(
    task: Task, regime: str, heads: int, init: float, lr: float, steps: int, seed: int, record_every: int = 10
) -> Run:
    if regime not in ("merged", "separate"):
        raise InvalidArgumentError(f"regime={regime!r}: 'merged' or 'separate'")
    for name, value in (("heads", heads), ("steps", steps), ("record_every", record_every)):
        check_int(value, name, minimum=1)
    for name, x in (("init", init), ("lr", lr)):
        check_real(x, name, minimum=0, strict=True)
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
    recorded = record_schedule(steps, record_every)
    for s in range(steps + 1):
        if regime == "separate":
            W = k[:, :, None] * q[:, None, :]
        theta = np.einsum("ha,hbc->abc", v, W).ravel()
        Gt = G @ theta
        if s in recorded:
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
    return Run(
        regime,
        heads,
        seed,
        lr,
        init,
        np.array(rec_steps),
        np.array(losses),
        np.array(tests),
        vs,
        Ws,
        time.perf_counter() - t0,
    )


#: records per run at most on the uniform grid (beyond, ``record_every`` grows), besides the logarithmic grid
MAX_RECORDS = 6_000
#: points per decade of the logarithmic grid of records (the plateau finder works in log time)
RECORDS_PER_DECADE = 100


def record_schedule(steps: int, record_every: int = 10) -> frozenset[int]:
    """The steps at which :func:`train` records: every ``record_every`` (more sparsely if that would exceed
    :data:`MAX_RECORDS`), a logarithmic grid of :data:`RECORDS_PER_DECADE` per decade, and the last step."""
    every = max(record_every, -(-steps // MAX_RECORDS))
    decades = math.log10(max(steps, 1))
    grid = np.unique(np.round(np.logspace(0, decades, int(RECORDS_PER_DECADE * decades) + 2)).astype(int))
    return frozenset(range(0, steps + 1, every)) | {int(g) for g in grid if g <= steps} | {steps}


def find_plateaus(
    steps: np.ndarray,
    losses: np.ndarray,
    flat: float = 0.02,
    min_decades: float = 0.02,
    merge: float = 0.01,
    bin_decades: float = 0.005,
) -> list[dict[str, Any]]:
    """The plateaus of a loss curve, from the curve alone, in logarithmic time (saddles last in proportion to the
    time already spent).  The records are averaged in bins of ``bin_decades`` of log time first (late in a run the
    records are dense in log time and the step-to-step jitter of gradient descent at a finite step size would
    otherwise dominate the slope); bins where the loss changes by less than ``flat`` (relative) per decade, runs of
    them longer than ``min_decades``, two neighbours whose losses differ by less than ``merge`` (relative) joined.
    Each: first and last step, the record in the middle (in log time) and the training loss at that record."""
    keep = np.flatnonzero(np.asarray(steps) > 0)
    if len(keep) < 3:
        return []
    s, L = np.asarray(steps, dtype=float)[keep], np.asarray(losses, dtype=float)[keep]
    u = np.log10(s)
    which = np.floor((u - u[0]) / bin_decades).astype(int)
    starts = np.flatnonzero(np.r_[True, np.diff(which) != 0])
    ends = np.r_[starts[1:], len(u)]  # bin k holds records starts[k] .. ends[k] - 1
    if len(starts) < 3:
        return []
    ub = np.array([u[a:b].mean() for a, b in zip(starts, ends)])
    Lb = np.array([L[a:b].mean() for a, b in zip(starts, ends)])
    rate = np.abs(np.gradient(Lb, ub)) / np.maximum(np.abs(Lb), 1e-300)
    runs: list[list[int]] = []
    for i, f in enumerate(rate < flat):
        if f and runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        elif f:
            runs.append([i, i])
    runs = [r for r in runs if u[ends[r[1]] - 1] - u[starts[r[0]]] >= min_decades]
    merged: list[list[int]] = []
    for r in runs:
        if merged and abs(Lb[r[0]] - Lb[merged[-1][1]]) <= merge * abs(Lb[merged[-1][1]]):
            merged[-1][1] = r[1]
        else:
            merged.append(r)
    out = []
    for a, b in merged:
        first, last = int(starts[a]), int(ends[b]) - 1
        mid = int(np.argmin(np.abs(u[first : last + 1] - (u[first] + u[last]) / 2))) + first
        out.append(
            {
                "first_step": int(s[first]),
                "last_step": int(s[last]),
                "record": int(keep[mid]),
                "step": int(s[mid]),
                "loss": float(L[mid]),
            }
        )
    return out


def sampling_error(task: Task, theta: np.ndarray, count: int = 20_000, seed: int = 0) -> dict[str, float]:
    """How far a mean over a finite set of sequences may lie from the population loss at the weights ``theta``:
    the squared error ``(<z, Theta> - y_q)^2`` on ``count`` fresh sequences of the task's distribution, its mean
    (an estimate of the population loss at ``theta``) and standard deviation ``sd``; the standard errors of the
    training loss (a mean over ``P`` sequences: ``sd / sqrt(P)``) and of the test loss."""
    count = check_int(count, "count", minimum=2)
    rng = np.random.default_rng([seed, 7919])
    lam = np.array([float(x) for x in eigenvalues(task.D)])
    chol = np.linalg.cholesky(task.rotation @ np.diag(lam) @ task.rotation.T)
    per = _chunk(task.D, task.N)
    total, total2, done = 0.0, 0.0, 0
    while done < count:
        k = min(per, count - done)
        Z, yq, _ = _features(task.D, task.N, k, rng, chol)
        r2 = (Z @ theta - yq) ** 2
        total, total2, done = total + float(r2.sum()), total2 + float(r2 @ r2), done + k
    mean = total / count
    sd = math.sqrt(max(total2 / count - mean * mean, 0.0) * count / (count - 1))
    return {
        "population_estimate": mean,
        "sd": sd,
        "sequences": count,
        "se_train": sd / math.sqrt(task.sequences[0]),
        "se_test": sd / math.sqrt(task.sequences[1]),
    }


# ---------------------------------------------------------------------------------------------- the package's network
def network_of(run: Run, record: int, N: int, tokens: int | None = None) -> Any:
    """The trained weights at ``record`` as the package's :class:`~ag_attention.Network` (one layer, ``H`` heads,
    skip connection): ``V_h = e_y v_h^T / N``; merged ``A_h = W_h^T``, separate ``Q_h = q_h^T``, ``K_h = k_h^T``
    (``W_h = k_h q_h^T``)."""

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

    net = network_of(run, record, task.N)
    tokens, _ = task.probe
    out = forward(net.architecture, Float64(), net.theta_float(), tokens)[:, -1, task.D]
    theta = np.einsum("ha,hbc->abc", run.values[record], run.attention[record]).ravel()
    ours = features(tokens, task.N) @ theta
    return float(np.max(np.abs(out - ours)) / max(float(np.max(np.abs(ours))), 1e-300))
