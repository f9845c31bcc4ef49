"""Path tracking side by side: this package's tracker against PHCpack's on the same homotopies; prints, asserts nothing.

    python bench/trackers.py [--sizes "2,1,2;2,2,2"] [--random "3,1,1;4,1,4"] [--paths 512] [--before 289e1c5]
                             [--phc /usr/bin/python3] [--timeout 600]

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
* **Macaulay2** where it runs: the wheel's MonodromySolver is named with why it did not run where it cannot (on a
  CPU without AVX-512 its binary dies at start-up); Debian's Macaulay2 (``M2`` on the path) then tracks the same
  paths with ``NumericalAlgebraicGeometry``'s ``track`` (the same start system, target and gamma as PHCpack's; its
  CPU time by ``cpuTime``): the same work as ours and PHCpack's, unlike a monodromy solve from scratch;
* **before**: the same paths with the package at ``--before`` (default 289e1c5, the tracker before this bench's
  last change: four Jacobians a step, the step halved or doubled), in a process of its own from ``git archive``.

``--random``: sizes where the generic set is expensive to solve ((3,1,1): > 30 min) are measured on ``--paths``
random start points instead (:meth:`~ag_attention._landscape.square.SquareSystem.random_start`: each a solution
over its own target, at sizes ``e^U(-1, 6)``), tracked to one random complex target: ours now against before, the
same ends (by the rescaling's invariants, relative 1e-6) counted.

Each row: paths, paths arrived (distinct ends), seconds, paths per second (and per CPU second); ours and before
each the best of three runs (``RUNS``).  The issue's target
(three times the paths per CPU second of before) is printed beside ours.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
from ag_attention._landscape.square import square_system  # noqa: E402
from ag_attention._numeric import executors  # noqa: E402
from ag_attention._numeric import homotopy as H  # noqa: E402
from ag_attention._numeric import monodromy as M  # noqa: E402
from ag_attention._numeric.tracker import TrackerOptions, set_threads, track  # noqa: E402

#: timed runs of each tracker on each row (ours and before alike): the best is printed
RUNS = 3

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


def distinct(S, z, charts) -> int:  # type: ignore[no-untyped-def]
    """How many distinct points the rows ``z`` (in the charts ``charts``) are, by the rescaling's invariants."""
    ends = H.Deduplicator(S.n)
    if len(z):
        keys = S.invariants(z, charts)
        for k in range(len(z)):
            ends.add(z[k], keys[k], charts[k])
    return len(ends)


def written(S, C, w0, w1, who: str) -> tuple[list[str], list[str], list[str]] | None:  # type: ignore[no-untyped-def]
    """The system at ``w0`` and at ``w1`` in the chart ``C[0]`` as polynomial strings, and the names; None (said)
    where sympy could not write them."""
    try:
        start_system, names = polynomials(S, C[0], w0)
        target, _ = polynomials(S, C[0], w1)
    except Exception as exc:  # noqa: BLE001 - a bench: say why and go on
        print(f"    {who}: the polynomials could not be written ({type(exc).__name__}: {exc})")
        return None
    return start_system, target, names


def ours(S, theta, C, w0, w1, options, label):  # type: ignore[no-untyped-def]
    set_threads(1)  # one core: no second thread stepping half of each batch
    with H.one_blas_thread():
        warm = w0[:2] if np.ndim(w0) == 2 else w0
        track(S, theta[:2], warm, w1, options, None, C[:2])  # as before's: the system's tables, numpy's linalg
        seconds = cpu = float("inf")
        for _ in range(RUNS):  # the best of RUNS runs (before's too): one run swung by 30 % beside other work
            t0, c0 = time.perf_counter(), time.process_time()
            res = track(S, theta, w0, w1, options, None, C)
            seconds, cpu = min(seconds, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    arrived = distinct(S, res.z[res.ok], res.chart[res.ok])
    show(label, theta.shape[0], arrived, seconds, float(np.median(res.steps)), cpu)
    return res.z, res.chart, res.ok, cpu


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
    system = written(S, C, w0, w1, "PHCpack")
    if system is None:
        return
    start_system, target, names = system
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
        arrived = distinct(S, finite, C[: finite.shape[0]])
        show(f"PHCpack {kind} (one task)", theta.shape[0], arrived, r["seconds"])


BEFORE_SCRIPT = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from ag_attention import Architecture
from ag_attention._landscape import generic_start as N
from ag_attention._landscape.square import square_system
from ag_attention._numeric import homotopy as H, monodromy as M
from ag_attention._numeric.tracker import TrackerOptions, set_threads, track
job = np.load(sys.argv[2])
d, e, a, rank = (int(v) for v in job["size"])
S = square_system(Architecture.single_layer(d, e, a, tokens=2), N.generic_form(d, e, rank, 0))
options = M.LOOP_OPTIONS if bool(job["loop"]) else TrackerOptions()
set_threads(1)
with H.one_blas_thread():
    w0 = job["w0"][:2] if job["w0"].ndim == 2 else job["w0"]
    track(S, job["theta"][:2], w0, job["w1"], options, None, job["C"][:2])  # warm: the system's tables, numpy's linalg
    wall = cpu = float("inf")
    for _ in range(RUNS):  # the best of RUNS runs, as ours
        t0, c0 = time.perf_counter(), time.process_time()
        r = track(S, job["theta"], job["w0"], job["w1"], options, None, job["C"])
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
np.savez(sys.argv[3], z=r.z, chart=r.chart, ok=r.ok, steps=r.steps, wall=wall, cpu=cpu)
"""


def same_ends(S, a, b) -> int:  # type: ignore[no-untyped-def]
    """How many paths of two runs (``(z, chart, ok)`` each) ended at the same point (the rescaling's invariants)."""
    ia, ib = np.asarray(S.invariants(a[0], a[1])), np.asarray(S.invariants(b[0], b[1]))
    d = np.linalg.norm(ia - ib, axis=1) / (1 + np.linalg.norm(ia, axis=1))
    return int(np.sum((d < 1e-6) & a[2] & b[2]))


def before(S, size, theta, C, w0, w1, loop: bool, rev: str, mine, timeout: float) -> None:  # type: ignore[no-untyped-def]
    """The same paths with the package at ``rev`` (``git archive`` into a temporary directory, its own process)."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            archive = subprocess.run(
                ["git", "-C", str(root), "archive", rev, "ag_attention"], capture_output=True, timeout=60, check=True
            )
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, timeout=60, check=True)
        except (subprocess.SubprocessError, OSError) as exc:
            print(f"    before ({rev}): not run ({type(exc).__name__}: {exc})")
            return
        job, out = Path(tmp, "job.npz"), Path(tmp, "out.npz")
        np.savez(job, size=np.array(size), theta=theta, C=C, w0=w0, w1=w1, loop=loop)
        try:
            p = subprocess.run(
                [sys.executable, "-c", BEFORE_SCRIPT.replace("RUNS", str(RUNS)), tmp, str(job), str(out)],
                capture_output=True,
                text=True,
                timeout=timeout,
                start_new_session=True,
                env={**os.environ, "OMP_NUM_THREADS": "1"},
            )
        except subprocess.TimeoutExpired:
            print(f"    before ({rev}): not finished within {timeout:g} s")
            return
        if p.returncode != 0 or not out.exists():
            print(f"    before ({rev}): failed ({(p.stderr or p.stdout).strip().splitlines()[-1:]})")
            return
        r = np.load(out)
        arrived = distinct(S, r["z"][r["ok"]], r["chart"][r["ok"]])
        label = f"before ({rev}), the same options"
        show(label, theta.shape[0], arrived, float(r["wall"]), float(np.median(r["steps"])), float(r["cpu"]))
        same = same_ends(S, (r["z"], r["chart"], r["ok"]), mine)
        ratio = float(r["cpu"]) / mine[3]
        print(f"      same ends as ours: {same} of {theta.shape[0]}; ours per CPU second: x{ratio:.2f}")


M2_SCRIPT = """needsPackage "NumericalAlgebraicGeometry";
R = CC[{names}];
S = {{{start}}};
T = {{{target}}};
sols = {{{sols}}};
t0 = cpuTime();
E = track(S, T, sols, gamma => {gamma});
seconds = cpuTime() - t0;
print("SECONDS " | toString seconds);
scan(E, p -> print(toString status p | " " | demark(" ", apply(coordinates p, c -> format(0, realPart c) | " " |
    format(0, imaginaryPart c)))));
"""


def m2_number(z: complex) -> str:
    return f"({z.real:+.17e}{z.imag:+.17e}*ii)"


def macaulay2(S, theta, C, w0, w1, timeout: float, rng) -> None:  # type: ignore[no-untyped-def]
    """The wheel's MonodromySolver where it runs (else why not); Debian's Macaulay2 tracking the same paths."""
    from ag_attention._m2.wheel import WheelBackend

    try:
        ok = WheelBackend().available()
    except Exception as exc:  # noqa: BLE001 - a bench: say why
        ok = f"{type(exc).__name__}: {exc}"
    if ok is not True:
        print(f"    Macaulay2 MonodromySolver (the wheel): not run here: {ok}")
    m2 = shutil.which("M2")
    if m2 is None:
        print("    Macaulay2 (Debian's) track: not run (no M2 on the path; apt-get install macaulay2)")
        return
    system = written(S, C, w0, w1, "Macaulay2")
    if system is None:
        return
    start_system, target, names = system
    gamma = complex(rng.standard_normal(), rng.standard_normal())

    def m2_poly(text: str) -> str:
        return text.rstrip(";").replace("*i)", "*ii)")

    script = M2_SCRIPT.format(
        names=", ".join(names),
        start=", ".join(m2_poly(f) for f in start_system),
        target=", ".join(m2_poly(f) for f in target),
        sols=", ".join("{" + ", ".join(m2_number(v) for v in row) + "}" for row in theta),
        gamma=m2_number(gamma),
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "track.m2")
        path.write_text(script)
        flags = ["-q", "--silent", "--stop", "--no-debug", "--no-readline", "--no-randomize"]
        try:
            p = subprocess.run(
                [m2, *flags, str(path), "-e", "exit 0"],
                capture_output=True,
                text=True,
                timeout=timeout,
                start_new_session=True,
                env={**os.environ, "HOME": tmp},
            )
        except subprocess.TimeoutExpired:
            print(f"    Macaulay2 (Debian's) track: not finished within {timeout:g} s")
            return
    lines = p.stdout.splitlines()
    secs = [float(line.split()[1]) for line in lines if line.startswith("SECONDS ")]
    if p.returncode != 0 or not secs:
        print(f"    Macaulay2 (Debian's) track: failed ({(p.stderr or p.stdout).strip().splitlines()[-1:]})")
        return
    ends = []
    for line in lines:
        parts = line.split()
        if parts and parts[0] == "Regular":
            vals = [float(v) for v in parts[1:]]
            ends.append([complex(vals[2 * k], vals[2 * k + 1]) for k in range(len(vals) // 2)])
    E = np.array(ends, dtype=complex).reshape(len(ends), S.n)
    show("Macaulay2 1.21 NAG track (Debian's, CPU)", theta.shape[0], distinct(S, E, C[: len(ends)]), secs[0])


def random_rows(text: str, paths: int, rev: str, timeout: float) -> None:
    """Ours now and before on ``paths`` random start points of each size (module docstring)."""
    for size in text.split(";"):
        d, e, a = (int(v) for v in size.split(","))
        arch = Architecture.single_layer(d, e, a, tokens=2)
        rank = e * d * d * (d + 1) // 2
        S = square_system(arch, N.generic_form(d, e, rank, 0))
        rng = np.random.default_rng(11)
        theta, w0, C = (np.array(v) for v in zip(*[S.random_start(rng) for _ in range(paths)]))
        w1 = rng.standard_normal(S.n_x) + 1j * rng.standard_normal(S.n_x)
        print(f"  ({d},{e},{a}): {paths} random start points (their own targets) to one random complex target")
        mine = ours(S, theta, C, w0, w1, M.LOOP_OPTIONS, "ours, the monodromy's options (1e-6)")
        before(S, (d, e, a, rank), theta, C, w0, w1, True, rev, mine, timeout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2,1,2;2,2,2", help="sizes measured on their stored generic set")
    ap.add_argument("--random", default="3,1,1;4,1,4", help="sizes measured on random start points ('' for none)")
    ap.add_argument("--paths", type=int, default=512, help="random start points per --random size")
    ap.add_argument("--before", default="289e1c5", help="the revision whose tracker is measured beside ours")
    ap.add_argument("--phc", default="/usr/bin/python3", help="a Python with phcpy (Debian's python3-phcpy)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for PHCpack and Macaulay2 per size")
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; target: x3 the paths per CPU second of before")
    for text in filter(None, args.sizes.split(";")):
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
        rank = e * d * d * (d + 1) // 2
        for loop, options, label in (
            (True, M.LOOP_OPTIONS, "ours, the monodromy's options (1e-6)"),
            (False, TrackerOptions(), "ours, the default options (1e-9)"),
        ):
            mine = ours(S, theta, C, w0, w1, options, label)
            before(S, (d, e, a, rank), theta, C, w0, w1, loop, args.before, mine, args.timeout)
        phcpack(S, theta, C, w0, w1, args.phc, args.timeout, rng)
        macaulay2(S, theta, C, w0, w1, args.timeout, rng)
    if args.random:
        random_rows(args.random, args.paths, args.before, args.timeout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
