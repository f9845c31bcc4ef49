"""The loss landscape of one layer, reproduced: ``ag-attention reproduce landscape [--quick]`` (issue 22).

Three parts (docs/math/landscape.md states what each number proves):

1. **ED degrees** (:func:`ag_attention.ed_degree`) of every size of :data:`FULL` (:data:`QUICK`), for the
   Euclidean, generic and data forms, ``t = 2`` and ``t = 3`` (only the data form depends on ``t``), each
   counted in the weights over two primes, and on the implicit side (Macaulay2's closure ideal, msolve) where
   that finishes: the two routes must agree.  Beside each: the closure's dimension and degree, and for a
   hypersurface the ED degree of a general hypersurface of the same degree.  Checks: two primes agree, the
   routes agree, no special form exceeds the generic count, and the data form equals the generic one
   exactly when ``d' = 1`` (a conjecture from the sizes, tested on all of them).
2. **Critical points of random data sets** (:func:`ag_attention.critical_points`) of the smallest size with
   a nontrivial landscape, ``(d, d', a) = (2, 1, 2)``, ``t = 2``: for each data set the complex count (equal
   to the data ED degree), the real ones isolated with their loss and Hessian signature, the histogram figure.
3. **Basins**: gradient descent (float64, backtracking) from random starts on each data set, and which of
   the certified minima each run reaches (its function within :data:`MATCH` relative of the minimum's; a run
   whose gradient is still above :data:`CONVERGED` counts as not converged).
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
from .._errors import AgAttentionError, M2TimeoutError, MSolveTimeoutError
from .report import FIGURE_FORMATS, Check, Report, Table, pyplot, save_figure, written

__all__ = [
    "Plan",
    "QUICK",
    "FULL",
    "reproduce_landscape",
    "gradient_descent",
    "hypersurface_ed_degree",
    "coordinates_tensor",
]


@dataclass(frozen=True)
class Plan:
    sizes: tuple[tuple[int, int, int], ...]  # (d, d', a) of the ED table
    tokens: tuple[int, ...]  # t of the data form
    m2_sizes: tuple[tuple[int, int, int], ...]  # where the implicit route runs too
    timeout: float  # per count
    data_sets: int
    starts: int  # gradient descent runs per data set
    samples: int  # input sequences per data set
    one_token: bool = True  # t = 1 (euclidean, generic) on the implicit side, at the sizes of m2_sizes


QUICK = Plan(
    sizes=((2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2)),
    tokens=(2, 3),
    m2_sizes=((2, 1, 1), (2, 1, 2)),
    timeout=60.0,
    data_sets=10,
    starts=10,
    samples=5,
)
FULL = Plan(
    sizes=((2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2), (2, 3, 1), (2, 3, 2), (3, 1, 1), (3, 1, 2), (3, 1, 3)),
    tokens=(2, 3),
    m2_sizes=((2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2), (3, 1, 1)),
    timeout=300.0,
    data_sets=100,
    starts=20,
    samples=5,
)
METRIC_NAMES = ("euclidean", "generic", "data")
SMALLEST = (2, 1, 2)
#: a run matches a minimum when its function (reduced coordinates) is this close, relative to the minimum's
MATCH = 1e-3
#: a run has converged when the gradient's norm is below this
CONVERGED = 1e-4


def hypersurface_ed_degree(n: int, degree: int) -> int:
    """The ED degree of a general affine cone over a hypersurface of ``degree`` in ``P^{n-1}`` (Draisma et al.,
    *The Euclidean distance degree of an algebraic variety*, Cor. 2.9): ``degree * sum_{i<n-1} (degree-1)^i``."""
    return degree * sum((degree - 1) ** i for i in range(n - 1))


def _arch(size: tuple[int, int, int], t: int) -> Architecture:
    d, e, a = size
    return Architecture.single_layer(d, e, a if a < d else None, tokens=t)


# ------------------------------------------------------------------ 1. the ED table
@dataclass
class _Row:
    size: tuple[int, int, int]
    t: int
    metric: str
    count: int | None
    count_seconds: float | None
    counts: tuple[int, ...]
    fiber: int | None
    m2: int | None
    m2_seconds: float | None
    failed: str  # why a route did not finish ("" if both did or were not asked)
    dimension: int
    degree: int | None
    coordinates: int


def _ed_rows(plan: Plan, seed: int) -> list[_Row]:
    from .._algebra.closure_degree import degree
    from .._exact.dimension import dimension
    from .._landscape.ed import ed_degree
    from .._models.coordinates import reduced_count

    jobs = [(size, t, m) for size in plan.sizes for m in METRIC_NAMES for t in (plan.tokens if m == "data" else (2,))]
    if plan.one_token:
        jobs += [(size, 1, m) for size in plan.m2_sizes for m in ("euclidean", "generic")]
    rows = []
    with progress.bar(total=len(jobs), desc="ED degrees", unit="count") as b:
        for size, t, m in jobs:
            arch = _arch(size, t)
            failed = []
            count = count_s = fiber = m2 = m2_s = None
            counts: tuple[int, ...] = ()
            closure: tuple[int, int, int] | None = None
            if t >= 2:
                try:
                    r = ed_degree(arch, metric=m, method="count", seed=seed, timeout=plan.timeout)
                    if r.final:
                        count, count_s, fiber = r.ed_degree, r.seconds, r.fiber
                        counts = tuple(c.solutions for c in r.counts)
                    else:  # the counts did not finish within the limit (the result says so, no value)
                        failed.append(f"count > {plan.timeout:g} s")
                except (MSolveTimeoutError, M2TimeoutError):
                    failed.append(f"count > {plan.timeout:g} s")
                except AgAttentionError as exc:
                    failed.append(f"count: {exc}")
            if size in plan.m2_sizes:
                try:
                    r = ed_degree(arch, metric=m, method="m2", seed=seed, timeout=plan.timeout)
                    m2, m2_s, closure = r.ed_degree, r.seconds, r.closure
                except (MSolveTimeoutError, M2TimeoutError):
                    failed.append(f"implicit > {plan.timeout:g} s")
                except AgAttentionError as exc:
                    failed.append(f"implicit: {exc}")
            if t == 1:  # the closure of one token, in its full coordinates, from Macaulay2
                dim1 = closure[0] if closure else dimension(_arch(size, 1)).dimension
                rows.append(
                    _Row(
                        size,
                        1,
                        m,
                        None,
                        None,
                        (),
                        None,
                        m2,
                        m2_s,
                        "; ".join(failed) or "count: needs t >= 2",
                        dim1,
                        closure[2] if closure else None,
                        size[1] * (size[0] + 2) * (size[0] + 1) * size[0] // 6,
                    )
                )
                b.update(1)
                continue
            try:
                deg: int | None = degree(_arch(size, 2)).degree
            except AgAttentionError:
                deg = None
            rows.append(
                _Row(
                    size,
                    t,
                    m,
                    count,
                    count_s,
                    counts,
                    fiber,
                    m2,
                    m2_s,
                    "; ".join(failed),
                    dimension(_arch(size, 2)).dimension,
                    deg,
                    reduced_count(size[0], size[1]),
                )
            )
            b.update(1)
    return rows


def _ed_table(rows: list[_Row]) -> Table:
    out = []
    for r in rows:
        codim = r.coordinates - r.dimension
        general = hypersurface_ed_degree(r.coordinates, r.degree) if codim == 1 and r.degree is not None else None
        out.append(
            [
                f"({r.size[0]},{r.size[1]},{r.size[2]})",
                r.t,
                r.metric,
                r.count,
                r.m2,
                None if r.count_seconds is None else round(r.count_seconds, 1),
                None if r.m2_seconds is None else round(r.m2_seconds, 1),
                r.dimension,
                codim,
                r.degree,
                general,
                r.failed or None,
            ]
        )
    return Table(
        "ED degrees of one layer's closure",
        [
            "(d,d',a)",
            "t",
            "metric",
            "ED (count)",
            "ED (implicit)",
            "count s",
            "implicit s",
            "dim",
            "codim",
            "degree",
            "general hypersurface",
            "not finished",
        ],
        out,
        note=(
            "count: the critical equations in the weights (critical locus removed), msolve over two primes, "
            "divided by the generic fiber; implicit: Macaulay2's closure ideal over GF(32003), Lagrange "
            "conditions counted by msolve. Both probabilistic (random data, primes). t = 1: the full coordinates "
            "(the cubics' coefficients), the implicit route only. Euclidean: the identity "
            "on the reduced coordinates (the plain coefficients of the quadrics; another scaling changes "
            "it). general hypersurface: the ED degree of a general cone over a hypersurface of that degree "
            "(codimension 1 only: no variety is determined by its dimension and degree in higher "
            "codimension)."
        ),
        formats={
            c: (lambda v, row: "-" if v is None else str(v))
            for c in (
                "ED (count)",
                "ED (implicit)",
                "count s",
                "implicit s",
                "degree",
                "general hypersurface",
                "not finished",
            )
        },
    )


def _ed_checks(report: Report, rows: list[_Row]) -> list[str]:
    findings = []
    for r in rows:
        case = f"(d,d',a) = {r.size}, t = {r.t}, {r.metric}"
        if r.counts:
            report.add(
                Check(
                    "two primes and two random data give the same count",
                    case,
                    "msolve over GF(2^31-1) and GF(2^31-19)",
                    r.counts[0],
                    r.counts[1],
                    r.counts[0] == r.counts[1],
                    r.count_seconds or 0.0,
                    size=r.size,
                )
            )
        if r.count is not None and r.m2 is not None:
            report.add(
                Check(
                    "the count in the weights equals the count on the implicit side",
                    case,
                    "msolve in the weights / Macaulay2's closure + msolve",
                    r.count,
                    r.m2,
                    r.count == r.m2,
                    (r.count_seconds or 0.0) + (r.m2_seconds or 0.0),
                    size=r.size,
                )
            )
    value = {(r.size, r.t, r.metric): (r.count if r.count is not None else r.m2) for r in rows}
    for (size, t, m), v in value.items():
        g = value.get((size, 1 if t == 1 else 2, "generic"))  # t = 1 is another variety
        if m != "generic" and v is not None and g is not None:
            report.add(
                Check(
                    "no special form has more critical points than a generic one",
                    f"(d,d',a) = {size}, t = {t}, {m}",
                    "the counts above",
                    f"<= {g}",
                    v,
                    v <= g,
                    size=size,
                )
            )
    # the conjecture: data = generic exactly when d' = 1
    tested = [
        (size, t)
        for (size, t, m), v in value.items()
        if m == "data" and v is not None and value.get((size, 2, "generic")) is not None
    ]
    holds = [(s, t) for s, t in tested if (value[(s, t, "data")] == value[(s, 2, "generic")]) == (s[1] == 1)]
    if tested:
        report.add(
            Check(
                "conjecture: the data form's ED degree is the generic one exactly when d' = 1",
                f"{len(tested)} (size, t) with both counts",
                "the counts above",
                len(tested),
                len(holds),
                len(holds) == len(tested),
            )
        )
        findings.append(
            f"The data form's ED degree equals the generic one on every size with d' = 1 and is smaller on every "
            f"size with d' >= 2 ({len(holds)} of {len(tested)} (size, t) pairs agree with this; conjecture). "
            "Why d' >= 2 differs: each output coordinate sees the same inputs, so the Gram form of any data set is "
            "G0 (x) I_{d'} in the (k, m, ij) order (proven: docs/math/landscape.md), a special form."
        )
    reached = [r for r in rows if r.metric == "generic" and r.count is not None]
    if reached:
        top = max(reached, key=lambda r: r.count or 0)
        findings.append(
            f"The largest generic ED degree counted: {top.count} at (d,d',a) = {top.size} "
            f"({top.count_seconds:.1f} s for two primes)."
        )
    return findings


# ------------------------------------------------------------------ 2 and 3. data sets, critical points, basins
def coordinates_tensor(d: int, e: int) -> np.ndarray:
    """``T`` with ``x_q = sum T[q, i, j] a_i v_j`` (``a = vec A``, ``v = vec V``): the reduced coordinates."""
    from .._models.coordinates import reduced_keys

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
class _DataSet:
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


def _data_sets(plan: Plan, seed: int) -> list[_DataSet]:
    from .._landscape.critical import critical_points
    from .._landscape.metrics import gram
    from .._models.coordinates import reduced_coordinates

    d, e, a = SMALLEST
    arch = _arch(SMALLEST, 2)
    T = coordinates_tensor(d, e)
    rng = random.Random(seed)
    out = []
    with progress.bar(total=plan.data_sets, desc="critical points of random data sets", unit="data set") as b:
        for idx in range(plan.data_sets):
            X, Y = _data_set(rng, d, e, 2, plan.samples)
            t0 = time.perf_counter()
            try:
                r = critical_points(arch, X, Y, method="msolve", seed=seed + idx, timeout=plan.timeout)
            except AgAttentionError as exc:
                out.append(_DataSet(idx, 0, 0, 0, 0, 0, time.perf_counter() - t0, [], 0, error=str(exc)))
                b.update(1)
                continue
            seconds = time.perf_counter() - t0
            G, w, c = gram([np.array(x, dtype=object) for x in X], [np.array(y, dtype=object) for y in Y], d, e)
            Gf, wf, cf = np.array(G, dtype=float), np.array(w, dtype=float), float(c)
            minima = [p for p in r.points if p.signature == "minimum"]
            targets = [np.array([float(v) for v in reduced_coordinates(p.A.tolist(), p.V.tolist())]) for p in minima]
            reached = [0] * len(minima)
            elsewhere = stalled = 0
            nrng = np.random.default_rng([seed, idx])
            xs, _, gnorms = gradient_descent(
                Gf, wf, cf, T, nrng.standard_normal((plan.starts, T.shape[1] + T.shape[2]))
            )
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
            out.append(
                _DataSet(
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


def _data_checks(report: Report, sets: list[_DataSet], ed_data: int | None, samples: int) -> list[str]:
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


def _figure(sets: list[_DataSet], path: Path) -> list[Path]:
    from .._sweep.summary import OKABE_ITO, integer_ticks

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
    try:
        return save_figure(fig, path)
    finally:
        plt.close(fig)


def reproduce_landscape(
    out: str | Path | None = None, *, quick: bool = False, seed: int = 0, plan: Plan | None = None
) -> Report:
    """Run the plan (:data:`QUICK` or :data:`FULL`), return the report (and write it with its figure under
    ``out``)."""
    plan = plan or (QUICK if quick else FULL)
    t0 = time.perf_counter()
    report = Report(
        "The loss landscape of one lightning layer: ED degrees and critical points",
        summary=(
            "The number of complex critical points of a squared distance on the closure of one layer (the ED "
            "degree) for the Euclidean form on the reduced coordinates, a generic form and the Gram form of "
            "random data; each counted in the weights (critical locus removed, two primes) and, where it "
            "finishes, on the implicit side (Macaulay2's closure ideal); then every critical point of random data "
            "sets of the smallest size, the real ones isolated (msolve) and classified by their Hessian (ball "
            "arithmetic), and where gradient descent from random starts ends (float64). docs/math/landscape.md"
        ),
        meta={"seed": seed, "plan": "quick" if plan == QUICK else "full" if plan == FULL else "custom"},
    )
    rows = _ed_rows(plan, seed)
    report.tables.append(_ed_table(rows))
    report.findings += _ed_checks(report, rows)
    ed_data = next((r.count for r in rows if r.size == SMALLEST and r.metric == "data" and r.t == 2), None)
    sets = _data_sets(plan, seed)
    report.tables.append(
        Table(
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
                f"{plan.samples} input sequences per data set (entries in [-3, 3]), {plan.starts} gradient-descent "
                "runs each; minima sorted by loss"
            ),
        )
    )
    report.findings += _data_checks(report, sets, ed_data, plan.samples)
    report.meta["data_sets"] = len(sets)
    report.meta["seconds_data_sets"] = round(sum(s.seconds for s in sets), 1)
    report.meta["seconds"] = round(time.perf_counter() - t0, 1)
    report.record_engines(msolve=True, macaulay2=True)
    if out is not None:
        target = Path(out)
        if written(report, lambda: _figure(sets, target / "landscape.png")):
            report.meta["figures"] = [f"landscape.{ext}" for ext in FIGURE_FORMATS]
    return report
