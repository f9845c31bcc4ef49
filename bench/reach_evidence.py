"""What a saved monodromy state says beyond its count, for a size left undecided: prints; asserts nothing.

    python bench/reach_evidence.py --size 4,1,4 --state results/landscape/monodromy-414.npz
                                   [--worst 20] [--loops 0,23] [--starts 6000] [--workers 2]

The state of ``python bench/landscape.py --reach`` (the generic form, seed 0; its fingerprint is checked) is read,
nothing in it is changed, and three questions about its solutions are answered:

* **accuracy**: the ``--worst`` solutions of the largest condition number are refined by Newton with the residual
  in 256-bit balls (:meth:`~ag_attention._landscape.square.SquareSystem.ball_evaluate`, the point kept as a sum of
  two float64s); how far they move, and how far the sums of their coordinates ``x`` (what the trace test adds up)
  move, against the trace test's deviation times its scale: a deviation that float64 rounding explains moves the
  sums by as much as the deviation;
* **closure under the loops**: the loops ``--loops`` of the state (their corners as stored) run again on every
  solution: the paths that fail, the distinct ends (a loop permutes a complete set: every end is a solution found,
  each reached once), and the solutions each loop fixes (a missing solution is fixed by every loop that maps the
  found set onto itself);
* **random starts**: ``--starts`` start pairs of the system at each of three ranges of sizes (``e^U(-12,-7)``,
  ``e^U(-7,-1)``, ``e^U(6,11)``; monodromy injects ``e^U(-1,6)``), carried to the base: how many arrive, how many
  at solutions not found.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import flint  # noqa: E402
import numpy as np  # noqa: E402

from ag_attention import Architecture  # noqa: E402
from ag_attention._exact import balls  # noqa: E402
from ag_attention._landscape import generic_start as N  # noqa: E402
from ag_attention._landscape.ed import metric_form  # noqa: E402
from ag_attention._landscape.square import SquareSystem, square_system  # noqa: E402
from ag_attention._numeric import monodromy as M  # noqa: E402
from ag_attention._numeric.homotopy import Deduplicator  # noqa: E402
from ag_attention._numeric.polylines import track_job  # noqa: E402


def refine(S: SquareSystem, z: np.ndarray, chart: np.ndarray, w: np.ndarray, steps: int = 3) -> np.ndarray:
    """Newton from ``z`` with the residual in 256-bit balls (the point a sum of two float64s): the refined point,
    rounded to float64."""
    high, low = z.copy(), np.zeros_like(z)
    with balls.precision(256):
        for _ in range(steps):
            box = [flint.acb(complex(a)) + flint.acb(complex(b)) for a, b in zip(high, low)]
            F, _ = S.ball_evaluate(np.array(box, dtype=object), list(w), jacobian=False, chart=chart)
            _, J = S.evaluate(high[None], w, True, chart=chart[None])
            dz = np.linalg.solve(J[0], np.array([complex(f.mid()) for f in F]))
            new = [b - flint.acb(complex(v)) for b, v in zip(box, dz)]
            high = np.array([complex(v.mid()) for v in new])
            low = np.array([complex((v - flint.acb(complex(h))).mid()) for v, h in zip(new, high)])
    return high


def accuracy(S: SquareSystem, state: M.Monodromy, worst: int) -> None:
    z, charts, p0 = state.found.array(), state.found.chart_array(S.n_chart), state.p0
    assert charts is not None
    _, J = S.evaluate(z, p0, True, chart=charts)
    sv = np.linalg.svd(J, compute_uv=False)
    cond = sv[:, 0] / sv[:, -1]
    x = S.trace_coordinates(z, charts)
    size = float(np.abs(x).sum(axis=0).max())
    moved, shift = 0.0, np.zeros(x.shape[1], dtype=complex)
    t0 = time.perf_counter()
    for i in np.argsort(-cond)[:worst]:
        r = refine(S, z[i], charts[i], p0)
        moved = max(moved, float(np.abs(r - z[i]).max() / (1 + np.abs(z[i]).max())))
        shift += S.trace_coordinates(r[None], charts[i][None])[0] - x[i]
    print(
        f"  accuracy: condition numbers {np.median(cond):.2g} (median) to {cond.max():.2g}; the {worst} worst refined"
    )
    print(f"    with 256-bit residuals ({time.perf_counter() - t0:.1f} s): moved at most {moved:.2g} (relative);")
    print(f"    the sums of x moved {np.abs(shift).max():.2g} = {np.abs(shift).max() / size:.2g} of their scale")
    if state.trace is not None:
        print(f"    (the trace test's deviation: {state.trace:.2g} of the scale {size:.4g}, {state.trace * size:.2g})")


def loops(S: SquareSystem, state: M.Monodromy, which: list[int], workers: int) -> None:
    z, charts = state.found.array(), state.found.chart_array(S.n_chart)
    keys = S.invariants(z, charts)
    for L in which:
        t0 = time.perf_counter()
        e = track_job(S, L, z, charts, state.corners[L][None], np.zeros(len(z), dtype=np.int64), M.LOOP_OPTIONS,
                      threads=workers)  # fmt: skip
        good = e.ok
        image = nearest(keys, S.invariants(e.z[good], e.chart[good] if e.chart is not None else None))
        src = e.index[good]
        fixed = int((image == src).sum())
        print(
            f"  loop {L} ({time.perf_counter() - t0:.0f} s): {int((~good).sum())} paths failed; "
            f"{len(set(image.tolist()))} distinct ends of {int(good.sum())}; {fixed} solutions fixed"
        )


def nearest(keys: np.ndarray, ends: np.ndarray, chunk: int = 2000) -> np.ndarray:
    """The index of the found solution nearest to each end (by invariants, Euclidean)."""
    K = np.concatenate([keys.real, keys.imag], axis=1)
    E = np.concatenate([ends.real, ends.imag], axis=1)
    sq = (K * K).sum(axis=1)
    out = np.empty(len(E), dtype=np.int64)
    for a in range(0, len(E), chunk):
        block = E[a : a + chunk]
        out[a : a + chunk] = ((block * block).sum(axis=1)[:, None] + sq[None] - 2 * block @ K.T).argmin(axis=1)
    return out


def starts(S: SquareSystem, state: M.Monodromy, k: int, workers: int) -> None:
    z, charts = state.found.array(), state.found.chart_array(S.n_chart)
    seen = Deduplicator(S.invariants(z[:1], None if charts is None else charts[:1]).shape[1])
    for key in S.invariants(z, charts):
        seen.add(key)
    rng = np.random.default_rng(2026)
    for lo, hi in ((-12.0, -7.0), (-7.0, -1.0), (6.0, 11.0)):
        pairs = [S.seed(rng, size=float(np.exp(rng.uniform(lo, hi)))) for _ in range(k)]
        zz, cc = np.array([p[0] for p in pairs]), np.array([p[2] for p in pairs])
        vs = np.stack([np.stack([p[1], state.p0]) for p in pairs])
        t0 = time.perf_counter()
        e = track_job(S, 0, zz, cc, vs, np.arange(k), M.LOOP_OPTIONS, threads=workers)
        good = np.flatnonzero(e.ok)
        keys = S.invariants(e.z[good], None if e.chart is None else e.chart[good])
        new = sum(seen.add(key) is not None for key in keys)
        print(
            f"  {k} random starts of sizes e^U({lo:g},{hi:g}) ({time.perf_counter() - t0:.0f} s): "
            f"{good.size} arrived, {new} at a solution not found before"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="4,1,4", help="d,e,a (one layer, t = 2)")
    ap.add_argument("--state", required=True, help="the monodromy state (bench/landscape.py --reach --save-dir)")
    ap.add_argument("--worst", type=int, default=20, help="the worst-conditioned solutions refined")
    ap.add_argument("--loops", default="0", help="the stored loops run again ('' for none)")
    ap.add_argument("--starts", type=int, default=6000, help="random starts per range of sizes (0 for none)")
    ap.add_argument("--workers", type=int, default=2, help="threads stepping the paths")
    args = ap.parse_args()
    d, e, a = (int(v) for v in args.size.split(","))
    arch = Architecture.single_layer(d, e, a, tokens=2)
    S = square_system(arch, metric_form("generic", d, e, 2, 0, None, arch.causal)[0])  # the reach's form
    state = N.monodromy_state(S, 0, args.state)
    print(f"({d},{e},{a}): {len(state.found)} solutions, {state.paths} paths, {len(state.corners)} loops; "
          f"trace deviation {state.trace} on {state.trace_pencils} pencil(s)")  # fmt: skip
    accuracy(S, state, args.worst)
    loops(S, state, [int(v) for v in args.loops.split(",") if v], args.workers)
    if args.starts:
        starts(S, state, args.starts, args.workers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
