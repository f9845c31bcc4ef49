"""Every path of the multihomogeneous Bezout bound, to check a monodromy count from outside it: prints; asserts nothing.

    python bench/multihomogeneous.py --size 4,1,4 [--state FILE [--add NEW]] [--paths N] [--seed 1] [--out FILE.npz]

For a one-layer size ``(d, d', d)`` (``a = d``: the unknowns are ``A`` (``d^2``), ``V`` (``d' d``) and ``lambda``),
the landscape's square system for the generic form (the one of ``bench/landscape.py --reach``) at a target ``w``
(the base of the monodromy state ``--state``, else a random complex one), in one random complex chart ``l . V = 1``,
is reached from a *linear-product start system* of the same multidegrees (docs/math/landscape.md, the Bezout bound):
each equation ``dL/dA_i`` (multidegree ``(1,2,0)``) becomes a product of a random affine form in ``A`` and two in
``V``, each ``dL/dV_j + lambda l_j`` (``(2,1,1)``) a product of two forms in ``A``, one in ``V`` and one in
``lambda``, the slice stays.  Its solutions, one linear system per choice of factors, number exactly the bound
(:func:`ag_attention._landscape.formula.ed_upper_bound`: 34 at (2,1,2), 1,947 at (3,1,3), 167,172 at (4,1,4)).  The
homotopy ``(1 - t) gamma S + t F`` (random ``gamma``) is tracked by the package's tracker from ``t = 0`` to 1: with
probability one every isolated regular solution of ``F`` ends one path, so the distinct regular ends (Newton-refined,
told apart by the rescaling's invariants) are the solution set, up to the paths that failed (said by reason; a path
to a singular end or to infinity fails). A second pass tracks again, carefully (smaller steps, Newton to 1e-9), the
paths that failed short of infinity and those that share their end with another (one of them jumped). Beside a
state: how many of its solutions the paths reached, and the ends it lacks (written to ``--out``; with ``--add NEW``
the state with them added, for ``bench/landscape.py --reach --resume``).

Measured: (2,1,2) and (3,1,3) give their decided counts, 14 and 543 (2 s, 29 s).  (4,1,4) beside the state of
35,963 solutions whose trace test failed at 5e-8: the first 102,400 of the 167,172 paths (the first pass, 2,188 s
on 2 threads beside other work) reached 22,039 distinct regular ends, one of them not in the state: ``|x| = 6,240``
(the largest solution; the monodromy's largest had 2,210; 24 loops and 1.2 million random starts had missed it).
Added to the state, the loops found nothing more and the trace test passed at 5.1e-14 on two pencils: 35,964,
the Segre prediction, decided, all certified (docs/math/landscape.md, the reach).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from ag_attention import Architecture  # noqa: E402
from ag_attention._landscape import generic_start as N  # noqa: E402
from ag_attention._landscape.ed import metric_form  # noqa: E402
from ag_attention._landscape.formula import ed_upper_bound  # noqa: E402
from ag_attention._landscape.square import SquareSystem, square_system  # noqa: E402
from ag_attention._numeric import tracker as T  # noqa: E402
from ag_attention._numeric.homotopy import Deduplicator, random_parameter  # noqa: E402


class LinearProduct:
    """The start system and the homotopy ``(1 - t) gamma S(z) + t F(z; w)`` as a parametric system in ``t``."""

    n_parameters = 1

    def __init__(self, S: SquareSystem, w: np.ndarray, rng: np.random.Generator) -> None:
        self.S, self.w = S, w
        self.nA, self.nV = S.n_A, S.e * S.d
        self.n = S.n

        def cn(*shape: int) -> np.ndarray:
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / np.sqrt(2)

        nA, nV = self.nA, self.nV
        self.l = cn(nV)  # the chart l . V = 1
        self.alpha, self.alpha0 = cn(nA, nA), cn(nA)  # dL/dA_i: alpha_i . A + alpha0_i
        self.beta, self.beta0 = cn(nA, 2, nV), cn(nA, 2)  # ... times two forms in V
        self.pi, self.pi0 = cn(nV, 2, nA), cn(nV, 2)  # dL/dV_j: two forms in A
        self.rho, self.rho0 = cn(nV, nV), cn(nV)  # ... one in V
        self.sig, self.sig0 = cn(nV), cn(nV)  # ... one in lambda
        self.gamma = np.exp(2j * np.pi * rng.random())

    def charts(self, k: int) -> np.ndarray:
        return np.repeat(self.l[None], k, axis=0)

    def start(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The start system's values and Jacobian on a batch."""
        nA, nV = self.nA, self.nV
        A, V, lam = z[:, :nA], z[:, nA : nA + nV], z[:, -1]
        a = A @ self.alpha.T + self.alpha0
        b = np.einsum("bk,ick->bic", V, self.beta) + self.beta0
        p = np.einsum("bk,jck->bjc", A, self.pi) + self.pi0
        r = V @ self.rho.T + self.rho0
        s = lam[:, None] * self.sig + self.sig0
        F = np.concatenate([a * b[:, :, 0] * b[:, :, 1], p[:, :, 0] * p[:, :, 1] * r * s, (V @ self.l - 1)[:, None]], 1)
        J = np.zeros((z.shape[0], self.n, self.n), dtype=complex)
        J[:, :nA, :nA] = (b[:, :, 0] * b[:, :, 1])[:, :, None] * self.alpha[None]
        J[:, :nA, nA : nA + nV] = (a * b[:, :, 1])[:, :, None] * self.beta[None, :, 0] + (a * b[:, :, 0])[
            :, :, None
        ] * self.beta[None, :, 1]
        rs = r * s
        J[:, nA : nA + nV, :nA] = (p[:, :, 1] * rs)[:, :, None] * self.pi[None, :, 0] + (p[:, :, 0] * rs)[
            :, :, None
        ] * self.pi[None, :, 1]
        J[:, nA : nA + nV, nA : nA + nV] = (p[:, :, 0] * p[:, :, 1] * s)[:, :, None] * self.rho[None]
        J[:, nA : nA + nV, -1] = p[:, :, 0] * p[:, :, 1] * r * self.sig[None]
        J[:, -1, nA : nA + nV] = self.l[None]
        return F, J

    def evaluate(self, z: np.ndarray, p: np.ndarray, jacobian: bool = True, dp: np.ndarray | None = None) -> Any:
        z = np.asarray(z, dtype=complex)
        B = z.shape[0]
        t = np.broadcast_to(np.asarray(p, dtype=complex), (B, 1))[:, 0]
        Ft, Jt = self.S.evaluate(z, self.w, True, chart=self.charts(B))
        Fs, Js = self.start(z)
        F = (1 - t)[:, None] * self.gamma * Fs + t[:, None] * Ft
        J = (1 - t)[:, None, None] * self.gamma * Js + t[:, None, None] * Jt if jacobian else None
        if dp is None:
            return F, J
        return F, J, (Ft - self.gamma * Fs) * np.broadcast_to(np.asarray(dp, dtype=complex), (B, 1))

    def solutions(self) -> np.ndarray:
        """Every solution of the start system: one choice of a factor per equation whose linear systems in ``A``,
        ``V`` and ``lambda`` are square."""
        nA, nV = self.nA, self.nV
        rows: list[np.ndarray] = []
        for jl in range(nV):  # the equation whose lambda form vanishes
            lam = -self.sig0[jl] / self.sig[jl]
            others = [j for j in range(nV) if j != jl]
            for k in range(nV):
                for R in itertools.combinations(others, k):  # these vanish on their V form
                    rest = [j for j in others if j not in R]  # ... and these on one of their A forms
                    for pis in itertools.product((0, 1), repeat=len(rest)):
                        for Bs in itertools.combinations(range(nA), nV - 1 - k):  # dL/dA_i on a V form
                            for bis in itertools.product((0, 1), repeat=len(Bs)):
                                MV = [self.l] + [self.rho[j] for j in R] + [self.beta[i, c] for i, c in zip(Bs, bis)]
                                cV = [1.0] + [-self.rho0[j] for j in R] + [-self.beta0[i, c] for i, c in zip(Bs, bis)]
                                keep = [i for i in range(nA) if i not in Bs]
                                MA = [self.alpha[i] for i in keep] + [self.pi[j, c] for j, c in zip(rest, pis)]
                                cA = [-self.alpha0[i] for i in keep] + [-self.pi0[j, c] for j, c in zip(rest, pis)]
                                A = np.linalg.solve(np.array(MA), np.array(cA))
                                V = np.linalg.solve(np.array(MV), np.array(cV))
                                rows.append(np.concatenate([A, V, [lam]]))
        return np.array(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="2,1,2", help="d,e,d (one layer, t = 2, a = d)")
    ap.add_argument("--state", help="a monodromy state of bench/landscape.py --reach: its base and its solutions")
    ap.add_argument("--paths", type=int, help="a random subset of the paths (default: all)")
    ap.add_argument("--seed", type=int, default=1, help="the start system's, the chart's and gamma's seed")
    ap.add_argument("--chunk", type=int, default=4096, help="paths tracked at once")
    ap.add_argument("--out", default="results/multihomogeneous.npz", help="the ends not in the state")
    ap.add_argument("--add", help="write the state with the ends not in it (their loops queued) to this file")
    args = ap.parse_args()
    d, e, a = (int(v) for v in args.size.split(","))
    if a != d:
        print(f"--size {args.size}: only a = d (the unknowns A, V, lambda); a < d has the groups B, K, V, lambda")
        return 2
    arch = Architecture.single_layer(d, e, a, tokens=2)
    S = square_system(arch, metric_form("generic", d, e, 2, 0, None, arch.causal)[0])
    rng = np.random.default_rng(args.seed)
    known = None
    if args.state:
        state = N.monodromy_state(S, 0, args.state)
        w, known = state.p0, S.invariants(state.found.array(), state.found.chart_array(S.n_chart))
    else:
        w = random_parameter(rng, np.ones(S.n_x, dtype=complex))
    H = LinearProduct(S, w, rng)
    t0 = time.perf_counter()
    z0 = H.solutions()
    bound = ed_upper_bound(d, e, a).value
    print(f"({d},{e},{a}): {len(z0)} start solutions (the Bezout bound: {bound}) in {time.perf_counter() - t0:.1f} s")
    track_all(S, H, z0, known, args)
    return 0


#: the first pass (as the monodromy's loops), and the second, for the paths that failed short of infinity or jumped
FIRST = T.TrackerOptions(tolerance=1e-6, max_norm=1e6)
CAREFUL = T.TrackerOptions(initial_step=0.005, max_step=0.02, max_steps=40000, max_correction=1e-3, max_norm=1e6)


def track_rows(S: SquareSystem, H: LinearProduct, z0: np.ndarray, rows: np.ndarray, options: Any, args: Any,
               what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The paths ``rows``: each one's refined end (NaN where it failed), its reason and its invariants."""
    z = np.full((rows.size, S.n), np.nan, dtype=complex)
    reason = np.full(rows.size, "", dtype=object)
    t0 = time.perf_counter()
    with T.one_blas_thread():
        for start in range(0, rows.size, args.chunk):
            part = slice(start, start + args.chunk)
            r = T.track(H, z0[rows[part]], np.zeros(1, dtype=complex), np.ones(1, dtype=complex), options)
            ok = np.flatnonzero(r.ok)
            zz, last = T.newton(S, r.z[ok], H.w, iterations=3, chart=H.charts(ok.size))
            converged = np.zeros(r.ok.size, dtype=bool)
            converged[ok] = last < 1e-10
            block = np.full((r.ok.size, S.n), np.nan, dtype=complex)
            block[ok] = np.where(converged[ok, None], zz, np.nan)
            z[part] = block
            reason[part] = np.where(r.ok, np.where(converged, "", "not converged at the end"), r.reason)
            print(f"  {what}: {min(start + args.chunk, rows.size)} of {rows.size} paths "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    keys = np.full((rows.size, S.n_A * S.e * S.d), np.nan, dtype=complex)
    arrived = reason == ""
    keys[arrived] = S.invariants(z[arrived], H.charts(int(arrived.sum())))
    return z, reason, keys


def distinct(keys: np.ndarray) -> tuple[Deduplicator, np.ndarray]:
    """The distinct ends and each path's (-1 where it failed)."""
    ends = Deduplicator(keys.shape[1], seed=1)
    index = np.full(len(keys), -1, dtype=np.int64)
    for k, key in enumerate(keys):
        if not np.isnan(key[0]):
            i = ends.add(key)
            index[k] = i if i is not None else nearest_index(ends, key)
    return ends, index


def nearest_index(ends: Deduplicator, key: np.ndarray) -> int:
    return int(np.argmin(np.abs(np.array(ends.key_list) - key).max(axis=1)))


def track_all(S: SquareSystem, H: LinearProduct, z0: np.ndarray, known: np.ndarray | None, args: Any) -> None:
    """Both passes: every path, then again, carefully, those that failed short of infinity and those that share
    their end with another (a path jumped: with probability one each regular solution ends one path)."""
    rows = np.random.default_rng(args.seed).permutation(len(z0))[: args.paths]
    z, reason, keys = track_rows(S, H, z0, rows, FIRST, args, "first pass")
    index = report("first pass", S, H, z, reason, keys, known, args)
    shared = np.flatnonzero(np.isin(index, np.flatnonzero(np.bincount(index[index >= 0]) > 1)))
    again = np.union1d(np.flatnonzero((reason != "") & (reason != "diverged")), shared)
    if again.size:
        z2, reason2, keys2 = track_rows(S, H, z0, rows[again], CAREFUL, args, "careful pass")
        z[again], reason[again], keys[again] = z2, reason2, keys2
        what = f"after the careful pass of {again.size} ({shared.size} shared an end)"
        report(what, S, H, z, reason, keys, known, args)


def report(what: str, S: SquareSystem, H: LinearProduct, z: np.ndarray, reason: np.ndarray, keys: np.ndarray,
           known: np.ndarray | None, args: Any) -> np.ndarray:  # fmt: skip
    """One pass's distinct ends, failures, and beside a state: its solutions reached and the ends not in it (saved to
    ``args.out``); each path's end (its index among the distinct ends, -1 where it failed)."""
    ends, index = distinct(keys)
    shared = int((np.bincount(index[index >= 0]) > 1).sum()) if (index >= 0).any() else 0
    failed = {str(r): int((reason == r).sum()) for r in sorted(set(reason.tolist()) - {""})}
    line = f"  {what}: {len(ends)} distinct regular ends ({shared} reached twice or more); failed: {failed or 'none'}"
    if known is not None:
        seen = Deduplicator(keys.shape[1], seed=2)
        for key in known:
            seen.add(key)
        first = {int(i): k for k, i in reversed(list(enumerate(index))) if i >= 0}
        new = [k for i, k in first.items() if seen.add(ends.key_list[i]) is not None]
        line += f"; {len(ends) - len(new)} of the state's {len(known)}, {len(new)} not in it"
        if new:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            np.savez(args.out, z=z[new], chart=H.l, w=H.w)
            line += f" (written to {args.out}: z in the chart l, target w)"
            if args.add:
                line += "; " + add_to_state(S, args, z[new], H.l)
    print(line, flush=True)
    return index


def add_to_state(S: SquareSystem, args: Any, z: np.ndarray, chart: np.ndarray) -> str:
    """The state ``args.state`` with the solutions ``z`` (in the chart ``chart``) added, each queued for every loop,
    written to ``args.add``: ``bench/landscape.py --reach --resume`` then takes them through the loops, the trace
    test and the certification."""
    state = N.monodromy_state(S, 0, args.state)
    charts = np.repeat(chart[None], len(z), axis=0)
    z, _ = T.newton(S, z, state.p0, iterations=3, chart=charts)
    added = 0
    for point, key, ch in zip(z, S.invariants(z, charts), charts):
        index = state.found.add(point, key, ch)
        if index is not None:
            added += 1
            state.queue.extend((index, j) for j in range(len(state.corners)))
    state.save(args.add)
    return f"{added} added to the state, written to {args.add} ({len(state.found)} solutions)"


if __name__ == "__main__":
    raise SystemExit(main())
