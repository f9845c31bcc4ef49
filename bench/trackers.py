"""Path tracking side by side: this package's tracker against PHCpack's on the same homotopies; prints, asserts nothing.

    python bench/trackers.py [--sizes "2,1,2;2,2,2;3,1,1"] [--phc /usr/bin/python3] [--timeout 600]

For each one-layer size ``(d, d', a)``: the square system of the landscape (:mod:`ag_attention._landscape.square`)
for the generic form of full rank (seed 0), its complete solution set over a random complex target ``w_0`` (the
package's stored generic set, :func:`ag_attention._landscape.numerical.homotopy_solutions`'s start: solved by
monodromy to the trace test the first time, then read from the result cache), all moved to one random complex
chart; then every solution tracked to another random complex target ``w_1``:

* **ours**: :func:`ag_attention._numeric.tracker.track`, the parameter homotopy ``(1 - t) w_0 + t w_1`` in one
  process and one BLAS thread (one core), with the monodromy's options (Newton tolerance 1e-6) and the default
  ones (1e-9), charts moving with the paths;
* **PHCpack** (Debian's ``python3-phcpy``, run by ``--phc``, the system Python): ``standard_double_track`` and
  ``ade_double_track`` (algorithmic differentiation) from the system at ``w_0`` to the system at ``w_1`` with a
  random gamma, one task, the same start solutions, the polynomials written out by sympy in the common chart; each
  tracker in a process of its own (measured: a second tracker in the same process fails with STORAGE_ERROR or a
  corrupted heap);
* **Macaulay2's MonodromySolver** (the ``passagemath-macaulay2`` wheel): named with why it did not run where it
  cannot (this package's probe of the wheel: on a CPU without AVX-512 its binary dies at start-up).

Each row: paths, paths arrived (distinct ends), seconds, paths per second.  The issue's target (three times today's
paths per second on one core) is printed beside ours.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from ag_attention import Architecture  # noqa: E402
from ag_attention._landscape import generic_start as N  # noqa: E402
from ag_attention._numeric import executors  # noqa: E402
from ag_attention._numeric import homotopy as H  # noqa: E402
from ag_attention._numeric import monodromy as M  # noqa: E402
from ag_attention._numeric.tracker import TrackerOptions, set_threads, track  # noqa: E402

#: paths per second of one core before this work (issue 45: "today about 200 per core")
BEFORE_PER_CORE = 200.0

PHC_SCRIPT = r"""
import json, sys, time
import phcpy  # noqa
from phcpy import trackers
from phcpy.solutions import make_solution, strsol2dict
job = json.load(open(sys.argv[1]))
names = job["names"]
sols = [make_solution(names, [complex(a, b) for a, b in s]) for s in job["start"]]
gamma = complex(*job["gamma"])
out = {}
for kind in sys.argv[3:]:  # one tracker per process: a second one in the same process corrupts phcpy's memory
    f = getattr(trackers, kind)
    t0 = time.perf_counter()
    try:
        ends = f(job["target"], job["start_system"], sols, gamma=gamma) if kind.startswith("standard") else f(
            job["target"], job["start_system"], sols, gamma=gamma, verbose=False)
    except TypeError:
        ends = f(job["target"], job["start_system"], sols, gamma=gamma)
    seconds = time.perf_counter() - t0
    pts = []
    for e in ends:
        d = strsol2dict(e)
        pts.append([[complex(d[n]).real, complex(d[n]).imag] for n in names])
    out[kind] = {"seconds": seconds, "ends": pts}
json.dump(out, open(sys.argv[2], "w"))
"""


def start_set(d: int, e: int, a: int) -> tuple[object, np.ndarray, np.ndarray, np.ndarray]:
    """The stored generic set of full rank (solved to the trace test when missing): system, points, charts, w_0."""
    arch = Architecture.single_layer(d, e, a, tokens=2)
    n_x = e * d * d * (d + 1) // 2
    start = N.generic_start(arch, n_x, 0, None)
    S, state = start.system, start.state
    if start.source != "stored" or state.trace is None or state.trace >= M.TRACE_TOLERANCE:
        with executors.executor(S, M.LOOP_OPTIONS, H.CAREFUL, workers=1) as ex:
            r = state.run(ex, desc=f"monodromy {arch.describe()}")
        print(f"  ({d},{e},{a}): generic set solved: {r.count} solutions, {r.stop}, {r.seconds:.0f} s", flush=True)
        N.store(start)
    charts = state.found.chart_array(S.n_chart)
    return S, state.found.array(), charts, state.p0


def one_chart(S, z, charts, rng):  # type: ignore[no-untyped-def]
    """The points in one random complex chart (refined there); the chart."""
    c = S.random_chart(rng, real=False)
    A, V = S.unpack(z, charts)
    C = np.broadcast_to(c, (z.shape[0], c.size)).copy()
    theta = S.pack(A, V, C)
    return theta, C


def polynomials(S, chart: np.ndarray, w: np.ndarray) -> tuple[list[str], list[str]]:  # type: ignore[no-untyped-def]
    """The square system at ``w`` in the fixed ``chart`` as PHCpack strings (sympy), and the variables' names."""
    import sympy as sp

    names = [f"z{k}" for k in range(S.n)]
    th = sp.symbols(names)
    d, e, a = S.d, S.e, S.a
    l = chart[: e * d]
    if S.charted:
        R = chart[e * d :].reshape(d, d)
        Bm = sp.Matrix(d, a, th[: d * a])
        K = sp.Matrix(a, d - a, th[d * a : S.n_A])
        CR = sp.Matrix(R[:a, :]) + K * sp.Matrix(R[a:, :])
        A = Bm * CR
    else:
        A = sp.Matrix(d, d, th[: d * d])
    V = sp.Matrix(e, d, th[S.n_A : S.n_A + e * d])
    u = list(A) + list(V)  # row-major, as the system's u
    i_, p_, q_, c_ = S.x_terms
    x = [sp.Integer(0)] * S.n_x
    for i, p, q, c in zip(i_, p_, q_, c_):
        x[int(i)] += float(c) * u[int(p)] * u[int(q)]
    G = S._tables()["G"]
    r = [sum(float(G[i, k]) * x[k] for k in range(S.n_x)) - complex(w[i]) for i in range(S.n_x)]
    m = S.n_A + e * d
    F = []
    for j in range(m):
        f = sum(r[i] * sp.diff(x[i], th[j]) for i in range(S.n_x))
        if j >= S.n_A:
            f += th[-1] * complex(l[j - S.n_A])
        F.append(f)
    F.append(sum(complex(l[k]) * V[k] for k in range(e * d)) - 1)
    out = []
    for f in F:
        poly = sp.Poly(sp.expand(f), *th)
        terms = []
        for mono, coef in poly.terms():
            cz = complex(coef)
            if cz == 0:
                continue
            factors = "*".join(f"{names[k]}^{p}" if p > 1 else names[k] for k, p in enumerate(mono) if p)
            terms.append(f"({cz.real:+.17e}{cz.imag:+.17e}*i)" + (f"*{factors}" if factors else ""))
        out.append(" + ".join(terms) + ";")
    return out, names


def ours(S, theta, C, w0, w1, options, label):  # type: ignore[no-untyped-def]
    set_threads(1)  # one core: no second thread stepping half of each batch
    with H.one_blas_thread():
        t0, c0 = time.perf_counter(), time.process_time()
        res = track(S, theta, w0, w1, options, None, C)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    ok = np.flatnonzero(res.ok)
    ends = H.Deduplicator(S.n)
    keys = S.invariants(res.z[ok], res.chart[ok])
    for k, row in enumerate(ok):
        ends.add(res.z[row], keys[k], res.chart[row])
    show(label, theta.shape[0], len(ends), seconds, float(np.median(res.steps)), cpu)
    return seconds


def show(
    label: str, paths: int, arrived: int, seconds: float, steps: float | None = None, cpu: float | None = None
) -> None:
    """One row; ``cpu``: the process's CPU seconds (one thread: the core's time, what a loaded machine does not
    inflate by waiting), printed beside the wall clock where known."""
    per = paths / seconds if seconds > 0 else float("inf")
    more = f", median {steps:.0f} steps" if steps is not None else ""
    if cpu is not None and cpu > 0:
        more += f", {cpu:.2f} CPU s: {paths / cpu:.0f} paths per CPU second"
    print(f"    {label:42} {paths:>6} paths, {arrived:>6} distinct ends, {seconds:8.2f} s: {per:8.0f} paths/s{more}")


def _big_stack() -> None:
    """PHCpack's Ada runtime raises STORAGE_ERROR on long polynomials with the default 8 MB stack (measured at
    (2,2,2)): the child gets the largest stack allowed."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))


def phcpack(S, theta, C, w0, w1, python: str, timeout: float, rng) -> None:  # type: ignore[no-untyped-def]
    try:
        start_system, names = polynomials(S, C[0], w0)
        target, _ = polynomials(S, C[0], w1)
    except Exception as exc:  # noqa: BLE001 - a bench: say why and go on
        print(f"    PHCpack: the polynomials could not be written ({type(exc).__name__}: {exc})")
        return
    gamma = complex(rng.standard_normal(), rng.standard_normal())
    with tempfile.TemporaryDirectory() as tmp:
        job, out, script = Path(tmp, "job.json"), Path(tmp, "out.json"), Path(tmp, "phc.py")
        job.write_text(
            json.dumps(
                {
                    "names": names,
                    "start": [[[v.real, v.imag] for v in s] for s in theta],
                    "start_system": start_system,
                    "target": target,
                    "gamma": [gamma.real, gamma.imag],
                }
            )
        )
        script.write_text(PHC_SCRIPT)
        got = {}
        for kind in ("standard_double_track", "ade_double_track"):
            try:
                p = subprocess.run(
                    [python, str(script), str(job), str(out), kind],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    start_new_session=True,
                    preexec_fn=_big_stack,
                )
            except FileNotFoundError:
                print(f"    PHCpack: not run ({python} not found; apt-get install python3-phcpy)")
                return
            except subprocess.TimeoutExpired:
                print(f"    PHCpack {kind}: not finished within {timeout:g} s")
                continue
            if p.returncode != 0 or not out.exists():
                print(f"    PHCpack {kind}: not run ({(p.stderr or p.stdout).strip().splitlines()[-1:]})")
                continue
            got.update(json.loads(out.read_text()))
            out.unlink()
    for kind, r in got.items():
        ends = np.array([[complex(a, b) for a, b in s] for s in r["ends"]])
        finite = ends[np.all(np.isfinite(ends), axis=1) & (np.abs(ends).max(axis=1) < 1e8)]
        dedup = H.Deduplicator(S.n)
        keys = S.invariants(finite, C[: finite.shape[0]]) if finite.size else finite
        arrived = sum(dedup.add(finite[k], keys[k], C[0]) is not None for k in range(finite.shape[0]))
        show(f"PHCpack {kind} (one task)", theta.shape[0], arrived, r["seconds"])


def macaulay2() -> None:
    from ag_attention._m2.wheel import WheelBackend

    try:
        ok = WheelBackend().available()
    except Exception as exc:  # noqa: BLE001 - a bench: say why
        ok = f"{type(exc).__name__}: {exc}"
    if ok is not True:
        print(f"    Macaulay2 MonodromySolver (the wheel): not run here: {ok}")
    else:
        print("    Macaulay2 MonodromySolver (the wheel): available, not yet wired into this bench")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2,1,2;2,2,2;3,1,1")
    ap.add_argument("--phc", default="/usr/bin/python3", help="a Python with phcpy (Debian's python3-phcpy)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for PHCpack per size")
    args = ap.parse_args()
    print(
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; before: about {BEFORE_PER_CORE:.0f} paths/s a core; "
        f"target x3: {3 * BEFORE_PER_CORE:.0f}",
        flush=True,
    )
    for text in args.sizes.split(";"):
        d, e, a = (int(v) for v in text.split(","))
        rng = np.random.default_rng(7)
        S, z, charts, w0 = start_set(d, e, a)
        theta, C = one_chart(S, z, charts, rng)
        theta, last = H.newton(S, theta, w0, iterations=3, chart=C)
        good = last < 1e-8
        theta, C = theta[good], C[good]
        w1 = H.random_parameter(rng, w0)
        print(
            f"  ({d},{e},{a}): {theta.shape[0]} start solutions in one chart ({int((~good).sum())} dropped)", flush=True
        )
        ours(S, theta, C, w0, w1, M.LOOP_OPTIONS, "ours, the monodromy's options (1e-6)")
        ours(S, theta, C, w0, w1, TrackerOptions(), "ours, the default options (1e-9)")
        phcpack(S, theta, C, w0, w1, args.phc, args.timeout, rng)
        macaulay2()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
