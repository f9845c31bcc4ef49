"""Macaulay2's MonodromySolver against the package's own monodromy, on the same square system: prints; asserts nothing.

    python bench/engines.py [--sizes default|quick|D,E,A,FORM;...] [--timeout 600] [--ours-timeout 600]
                            [--modes default,told] [--keep DIR] [--workers 1,2]
    python bench/engines.py --scaling 4,1,4 [--scaling-seconds 90] [--workers 1,d1,2]

``--scaling``: paths per second of the package's monodromy against its workers, in the steady state: a state made
by a first run of ``--scaling-seconds`` in this process (thousands of solutions queued), then resumed for as long
with each entry of ``--workers`` (1: this process, a batch of 1,024 stepped in two threads; N > 1: a local Dask
cluster of N single-threaded processes, its start included; ``dN``: such a cluster for any N, ``d1`` giving the rate
of one single-threaded worker).

For each one-layer size ``(d, d', a)`` with ``a >= d`` (``A`` free: no chart needed) and a form ``G``
(:func:`ag_attention._landscape.metrics.metric`, seed 0): the square system of :mod:`ag_attention._landscape.square`
(``G`` and ``w`` at its scale), unknowns ``(A, V, lambda)``, parameters ``w``, a **fixed real slice** ``l`` (small
integers), ``x = x(A, V)`` the reduced coordinates and ``J = dx/d(A, V)``:

    J_A^T (G x - w) = 0,      J_V^T (G x - w) + lambda l = 0,      l . V - 1 = 0.

* **M2** (1.21, ``MonodromySolver``): the polynomials over ``CC[w][A, V, lambda]``, as a ``GateSystem`` (compiled
  straight-line programs: measured 93 paths/s on (2,2,2) against 66 as a ``PolySystem``; ``--m2-system poly``), seeded
  from Python (a random
  complex ``(A, V)`` on the slice, ``lambda = 0``, ``w0 = G x - eta``, ``J^T eta = 0``: as ``SquareSystem.seed``;
  ``createSeedPair`` cannot seed it, ``l . V - 1`` has no parameter).  Mode ``default``: ``monodromySolve`` with its
  defaults (complete graph, 4 nodes, 1 edge per pair; stop after 10 edges in a row without a new solution or when
  every edge is spent).  Mode ``told``: the same, told the expected count (``TargetSolutionCount``) and allowed to
  grow its graph (``completeGraphAugment``, one node per round, at most 10 rounds): what it costs M2 to reach the
  count when it knows it.  (In 1.21 the augmentation does not refresh ``HG.FirstDirectedEdge``, so the rule stops
  every new round at once; ``told`` calls MonodromySolver's own ``updateFirstDirectedEdge`` in its rule.)  Both
  pass a ``StoppingCriterion`` that is M2's own rule and also flushes the ``Verbose`` log (paths and solutions are
  read from it, also after a kill).  Each job in its own process group, killed after
  ``--timeout`` s.  Seconds: M2's ``elapsedTiming`` of ``monodromySolve`` (the whole job in brackets).
* **PHCpack** (2.4.86, Debian's ``python3-phcpy``, run by ``/usr/bin/python3`` in its own process group): the same
  system at the seed's target ``w0`` (fixed complex numbers, sympy-expanded), solved by ``phcpy.solver.solve``, the
  blackbox solver (it computes the total degree, multihomogeneous and mixed-volume root counts, tracks the smallest
  as its start system's paths, in ``--phc-tasks`` threads); the number of paths it starts is the root count it
  chose.  Mode ``phc`` in ``--modes``.
* **ours**: ``monodromy_ed(arch, G, fiber=1, seed=0)``: monodromy with charts that move, the trace test, then every
  solution certified (Krawczyk); seconds of monodromy + certification.

``exp.``: the ED degree of docs/math/landscape.md (msolve's count).  ``OMP_NUM_THREADS=1``; one job at a time.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from ag_attention import Architecture  # noqa: E402
from ag_attention._landscape.metrics import metric  # noqa: E402
from ag_attention._landscape.numerical import monodromy_ed  # noqa: E402
from ag_attention._landscape.square import SquareSystem, square_system  # noqa: E402

DEFAULT = [(2, 1, 2, "generic"), (3, 1, 3, "generic"), (2, 2, 2, "generic"), (3, 1, 3, "euclidean")]
QUICK = [(2, 1, 2, "generic")]
EXPECTED = {
    (2, 1, 2, "generic"): 14,
    (3, 1, 3, "generic"): 543,
    (2, 2, 2, "generic"): 284,
    (3, 1, 3, "euclidean"): 75,
    (2, 1, 2, "euclidean"): 6,
    (2, 2, 2, "euclidean"): 28,
}


def sizes_of(text: str) -> list[tuple[int, int, int, str]]:
    if text in ("default", "quick"):
        return DEFAULT if text == "default" else QUICK
    out = []
    for part in text.split(";"):
        d, e, a, *kind = part.split(",")
        out.append((int(d), int(e), int(a), kind[0] if kind else "generic"))
    return out


def seed_pair(S: SquareSystem, l: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(theta0, w0)``: a random complex point on the slice ``l . V = 1`` (``lambda = 0``) and a target for which it
    is a solution (``w0 = G x - eta``, ``J^T eta = 0``), at the system's scale."""
    d, e = S.d, S.e
    A = rng.standard_normal((d, d)) + 1j * rng.standard_normal((d, d))
    V = rng.standard_normal((e, d)) + 1j * rng.standard_normal((e, d))
    s = l @ V.reshape(-1)
    A, V = A * s, V / s
    u = np.concatenate([A.reshape(-1), V.reshape(-1)])[None, :]
    x, J = S._x(u)[0], S._Jx(u)[0]  # (n_x,), (n_x, n_u)
    _, sv, vh = np.linalg.svd(J.T)
    kernel = vh[int(np.sum(sv > 1e-10 * sv[0])) :].conj().T  # J^T kernel = 0
    eta = kernel @ (rng.standard_normal(kernel.shape[1]) + 1j * rng.standard_normal(kernel.shape[1]))
    w0 = S._tables()["G"] @ x - eta
    theta0 = np.concatenate([u[0], [0.0]])
    F, _ = S.evaluate(theta0[None, :], w0, jacobian=False, chart=l.astype(complex)[None, :])
    assert np.max(np.abs(F)) < 1e-9, f"seed residual {np.max(np.abs(F))}"
    return theta0, w0


def _cc(z: complex) -> str:
    """A complex float64 for M2 (``toCC(0, 0)``, integers, would be a 1-bit CC and drag the whole point to 1 bit)."""
    return f"toCC({z.real:.16e},{z.imag:.16e})"


def m2_script(
    S: SquareSystem, l: np.ndarray, theta0: np.ndarray, w0: np.ndarray, told: int | None, gate: bool = True
) -> str:
    """The M2 job: the parametric system, the seed's residual, ``monodromySolve``, and the RESULT line."""
    d, e, n_x, nA = S.d, S.e, S.n_x, S.d * S.d
    u = [f"a_({k},{j})" for k in range(1, d + 1) for j in range(1, d + 1)]
    u += [f"v_({m},{j})" for m in range(1, e + 1) for j in range(1, d + 1)]
    xs = ["0"] * n_x
    for i, p, q, c in zip(*S.x_terms):
        xs[i] += f" + ({c})*{u[p]}*{u[q]}"
    G = "{" + ",\n  ".join("{" + ",".join(f"{v.numerator}/{v.denominator}" for v in row) + "}" for row in S.G) + "}"
    target = f" or any(toList HG.Vertices, v -> length v.PartialSols >= {told})" if told else ""
    refresh = "updateFirstDirectedEdge HG; " if told else ""  # the augmented rounds need it (module docstring)
    options = "Verbose => true, StoppingCriterion => crit"
    if told:
        options += (
            f", TargetSolutionCount => {told}, NumberOfNodes => 4, NumberOfEdges => 1, "
            "AugmentGraphFunction => completeGraphAugment, AugmentNodeCount => 1, AugmentNumberOfRepeats => 10"
        )
    lines = [
        'needsPackage "MonodromySolver";',
        "setRandomSeed 0;",
        f"R = CC[w_1..w_{n_x}][{', '.join(u)}, lam];",
        "u = {" + ", ".join(u) + "};",
        "x = {" + ",\n  ".join(xs) + "};",
        f"G = sub(matrix {G}, R);",
        f"r = flatten entries (G * transpose matrix {{x}} - transpose sub(matrix {{{{w_1..w_{n_x}}}}}, R));",
        "l = {" + ", ".join(str(int(v)) for v in l) + "};",
        "grad = apply(#u, j -> sum(#x, i -> r#i * diff(u#j, x#i)));",
        f"F = apply(#u, j -> if j < {nA} then grad#j else grad#j + lam * l#(j - {nA}))"
        f" | {{sum(#l, j -> l#j * u#(j + {nA})) - 1}};",
        "PS = gateSystem((polySystem F).PolyMap);" if gate else "PS = polySystem F;",
        "p0 = point {{" + ", ".join(_cc(z) for z in w0) + "}};",
        "x0 = point {{" + ", ".join(_cc(z) for z in theta0) + "}};",
        '<< "SEED residual=" << toString norm evaluate(PS, p0, x0) << endl << flush;',
        "-- M2's own rule (setStoppingCriterion, NumberOfRepeats => 10), flushing the Verbose log on the way",
        "debug MonodromySolver;" if told else "",
        f"crit = (n, HG) -> ({refresh}stdio << flush; n >= 10 or instance(HG.FirstDirectedEdge, Nothing){target});",
        f"T = elapsedTiming monodromySolve(PS, p0, {{x0}}, {options});",
        "(V, npaths) = T#1;",
        "best = max apply(toList V.Graph.Vertices, v -> length v.PartialSols);",
        '<< "RESULT solutions=" << length V.PartialSols << " best=" << best << " npaths=" << toString npaths'
        ' << " nodes=" << #V.Graph.Vertices << " seconds=" << toString T#0 << endl << flush;',
    ]
    return "\n".join(lines) + "\n"


def run_job(argv: list[str], cwd: str, out_path: Path, timeout: float) -> tuple[int, bool, float]:
    """``argv`` in ``cwd`` (``HOME`` there), output to ``out_path``, in its own process group killed after
    ``timeout`` s: ``(return code, timed out, wall seconds)``."""
    t0 = time.perf_counter()
    with open(out_path, "w") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True, env={**os.environ, "HOME": cwd}
        )
        try:
            rc, timed_out = proc.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            rc, timed_out = proc.wait(), True
    return rc, timed_out, time.perf_counter() - t0


def run_m2(script: str, timeout: float) -> dict:
    """One M2 job in its own process group (killed after ``timeout`` s): the RESULT line, and from the Verbose log
    the paths tracked (the sum of ``trackedPaths``), the most solutions a node knew, the failed paths."""
    with tempfile.TemporaryDirectory(prefix="engines-") as tmp:
        path, out_path = Path(tmp) / "job.m2", Path(tmp) / "out.txt"
        path.write_text(script)
        rc, timed_out, wall = run_job(
            [
                "M2",
                "-q",
                "--silent",
                "--stop",
                "--no-debug",
                "--no-readline",
                "--no-randomize",
                str(path),
                "-e",
                "exit 0",
            ],
            tmp,
            out_path,
            timeout,
        )
        text = out_path.read_text(errors="replace")
    row: dict = {
        "wall": wall,
        "timeout": timed_out,
        "rc": rc,
        "paths": sum(int(v) for v in re.findall(r"trackedPaths : (\d+)", text)),
        "known": max((int(v) for v in re.findall(r": (\d+) known sols", text)), default=0),
        "failed": len(re.findall(r"a path failed", text)),
    }
    seed = re.search(r"SEED residual=(\S+)", text)
    row["residual"] = seed.group(1) if seed else None
    res = re.search(r"RESULT solutions=(\d+) best=(\d+) npaths=(\S+) nodes=(\d+) seconds=(\S+)", text)
    if res:
        row.update(
            solutions=int(res.group(1)),
            best=int(res.group(2)),
            npaths=res.group(3),
            nodes=int(res.group(4)),
            seconds=float(res.group(5)),
        )
    elif not timed_out:
        errors = [s.strip() for s in text.splitlines() if "error" in s and "back trace" not in s]
        row["error"] = " | ".join(errors[:3]) or text.strip()[-500:]
    return row


def phc_polynomials(S: SquareSystem, l: np.ndarray, w0: np.ndarray) -> list[str]:
    """The square system at the target ``w0`` as PHCpack strings (variables ``a11.., v11.., lam``)."""
    import sympy as sp

    d, e, n_x, nA = S.d, S.e, S.n_x, S.d * S.d
    names = [f"a{k}{j}" for k in range(1, d + 1) for j in range(1, d + 1)]
    names += [f"v{m}{j}" for m in range(1, e + 1) for j in range(1, d + 1)]
    u = sp.symbols(names)
    lam = sp.Symbol("lam")
    x = [sp.Integer(0)] * n_x
    for i, p, q, c in zip(*S.x_terms):
        x[i] += sp.nsimplify(float(c), rational=True) * u[p] * u[q]
    G = sp.Matrix([[sp.Rational(v.numerator, v.denominator) for v in row] for row in S.G])
    W = [sp.Float(z.real, 17) + sp.I * sp.Float(z.imag, 17) for z in w0]
    r = [sum(G[i, k] * x[k] for k in range(n_x)) - W[i] for i in range(n_x)]
    F = []
    for j, uj in enumerate(u):
        g = sum(r[i] * sp.diff(x[i], uj) for i in range(n_x))
        F.append(sp.expand(g if j < nA else g + lam * int(l[j - nA])))
    F.append(sum(int(l[j]) * u[nA + j] for j in range(len(l))) - 1)

    def text(f: sp.Expr) -> str:
        terms = []
        for monom, coef in sp.Poly(f, *u, lam).terms():
            c = complex(coef)
            mon = "*".join(f"{v}^{k}" if k > 1 else str(v) for v, k in zip([*names, "lam"], monom) if k)
            terms.append(f"({c.real:.17e} + {c.imag:.17e}*i)" + (f"*{mon}" if mon else ""))
        return " + ".join(terms) + ";"

    return [text(f) for f in F]


PHC_JOB = """
import json, sys, time
from phcpy.solver import solve
pols = json.load(open(sys.argv[1]))
t0 = time.perf_counter()
sols = solve(pols, verbose=True, tasks=int(sys.argv[2]), dictionary_output=True)
secs = time.perf_counter() - t0
ok = [s for s in sols if s.get("err", 1) < 1e-8 and s.get("rco", 0) > 1e-12]
print("RESULT", json.dumps({"solutions": len(sols), "regular": len(ok), "seconds": secs}), flush=True)
"""


def run_phc(pols: list[str], timeout: float, tasks: int) -> dict:
    """PHCpack's blackbox solver on ``pols`` in its own process group (killed after ``timeout`` s): the solutions,
    the regular ones (residual < 1e-8, rco > 1e-12), its root counts and the paths it started."""
    import json

    with tempfile.TemporaryDirectory(prefix="engines-phc-") as tmp:
        Path(tmp, "pols.json").write_text(json.dumps(pols))
        Path(tmp, "job.py").write_text(PHC_JOB)
        rc, timed_out, wall = run_job(
            ["/usr/bin/python3", "job.py", "pols.json", str(tasks)], tmp, Path(tmp) / "out.txt", timeout
        )
        text = Path(tmp, "out.txt").read_text(errors="replace")
    row: dict = {"wall": wall, "timeout": timed_out, "rc": rc}
    for key, pat in (
        ("total_degree", r"total degree\s*:\s*(\d+)"),
        ("mixed_volume", r"mixed volume\s*:\s*(\d+)"),
        ("multihomogeneous", r"-homogeneous Bezout number\s*:\s*(\d+)"),
    ):
        m = re.search(pat, text, re.IGNORECASE)
        if m:
            row[key] = int(m.group(1))
    res = re.search(r"RESULT (\{.*\})", text)
    if res:
        row.update(json.loads(res.group(1)))
    elif not timed_out:
        row["error"] = text.strip()[-500:]
    return row


def m2_line(label: str, m2: dict, timeout: float) -> str:
    if "seconds" in m2:
        sols = f"{m2['best']}" + (f" ({m2['solutions']} at the last node)" if m2["best"] != m2["solutions"] else "")
        secs = f"{m2['seconds']:.1f} ({m2['wall']:.0f})"
        rate = f"{m2['paths'] / m2['seconds']:.0f}" if m2["seconds"] > 0 else "-"
        extra = f"{m2['nodes']} nodes, npaths={m2['npaths']}"
    elif m2["timeout"]:
        sols, secs, rate = f">= {m2['known']}", f"timeout after {timeout:.0f} s", f"~{m2['paths'] / m2['wall']:.0f}"
        extra = "killed"
    else:
        sols, secs, rate, extra = "error", f"({m2['wall']:.0f})", "-", m2.get("error", "")
    extra += f", {m2['failed']} failed paths" if m2["failed"] else ""
    return f"  | {label:<14} {sols:>7} {'-':>6} {m2['paths']:>7} {secs:>22} {rate:>8}   {extra}"


def scaling(size: tuple[int, ...], workers: list[str], seconds: float) -> None:
    """Paths per second against workers from one saved state (module docstring)."""
    import shutil

    from ag_attention._m2.cluster import LocalDaskCluster
    from ag_attention._numeric.homotopy import one_blas_thread
    from ag_attention._numeric.monodromy import Monodromy, monodromy_solve

    d, e, a = size
    arch = Architecture.single_layer(d, e, a, tokens=2)
    G, _ = metric("generic", d, e, 2, seed=0)
    S = square_system(arch, G)
    z0, p0, c0 = S.seed(np.random.default_rng(0))
    fp = S.fingerprint(0)
    with tempfile.TemporaryDirectory() as tmp, one_blas_thread():
        state = Path(tmp) / "state.npz"
        first = monodromy_solve(S, z0, p0, seed=0, chart0=c0, timeout=seconds, save=state, fingerprint=fp)
        before = Monodromy.resume(S, state, fingerprint=fp)
        print(
            f"({d},{e},{a}) generic, {S.n} unknowns: a state of {first.count:,} solutions and {len(before.queue):,} "
            f"queued pairs after {seconds:g} s; load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        print(
            f"  | {'workers':<28} {'paths':>8} {'seconds':>8} {'paths/s':>8} {'solutions':>10} "
            f"{'driver CPU us/path':>19}"
        )
        for w in workers:
            copy = Path(tmp) / f"state-{w}.npz"
            shutil.copy(state, copy)
            t0, c0 = time.perf_counter(), time.process_time()
            if w.startswith("d"):  # a Dask cluster of N single-threaded workers even for N = 1: the per-worker rate
                with LocalDaskCluster(int(w[1:])) as address:
                    r = monodromy_solve(S, z0, p0, timeout=seconds, scheduler=address, resume=copy, fingerprint=fp)
            else:
                r = monodromy_solve(S, z0, p0, timeout=seconds, workers=int(w), resume=copy, fingerprint=fp)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            paths = r.paths - before.paths
            driver = f"{1e6 * cpu / max(paths, 1):>19.0f}" if w != "1" else f"{'(tracks itself)':>19}"
            print(
                f"  | {r.executor[:28]:<28} {paths:>8,} {wall:>8.1f} {paths / wall:>8.0f} {r.count:>10,} {driver}",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="default", help="default | quick | D,E,A,FORM;... (a >= d)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per M2 job")
    ap.add_argument("--ours-timeout", type=float, default=600.0, help="seconds of our monodromy")
    ap.add_argument(
        "--modes",
        default="default,told",
        help="M2 modes: default, told (told the expected count); phc: PHCpack's blackbox solver",
    )
    ap.add_argument("--phc-tasks", type=int, default=2, help="PHCpack's threads (mode phc)")
    ap.add_argument("--m2-system", choices=("gate", "poly"), default="gate", help="GateSystem or PolySystem")
    ap.add_argument("--keep", metavar="DIR", help="also write each M2 script to DIR")
    ap.add_argument(
        "--workers",
        default="1",
        help="ours with each of these numbers of workers (e.g. 1,2; with --scaling also dN: a Dask cluster of N)",
    )
    ap.add_argument("--scaling", metavar="D,E,A", help="paths/s against --workers in the steady state, generic form")
    ap.add_argument("--scaling-seconds", type=float, default=90.0)
    args = ap.parse_args()
    if args.scaling:
        scaling(tuple(int(v) for v in args.scaling.split(",")), args.workers.split(","), args.scaling_seconds)
        return
    modes = args.modes.split(",")
    load = os.getloadavg()[0]
    print(
        f"MonodromySolver (M2 1.21, {args.m2_system} system) vs ag_attention's monodromy; {os.cpu_count()} cores, "
        f"load {load:.1f} at start{' (loaded: another job is running)' if load > 0.8 else ''}",
        flush=True,
    )
    blocks = []
    for d, e, a, kind in sizes_of(args.sizes):
        if a < d:
            print(f"  skipping ({d},{e},{a}): a < d needs charts, not compared")
            continue
        arch = Architecture.single_layer(d, e, a, tokens=2)
        G, _ = metric(kind, d, e, 2, seed=0)
        S = square_system(arch, G)
        rng = np.random.default_rng(0)
        l = rng.integers(1, 4, size=e * d) * rng.choice([-1, 1], size=e * d)  # the fixed real slice
        theta0, w0 = seed_pair(S, l, rng)
        exp = EXPECTED.get((d, e, a, kind))
        head = f"({d},{e},{a}) {kind}: {S.n} unknowns, {S.n_x} parameters, slice l = {list(map(int, l))}, exp. {exp}"
        lines = []
        for mode in modes:
            if mode == "phc":
                phc = run_phc(phc_polynomials(S, l, w0), args.timeout, args.phc_tasks)
                print(f"  {head}\n    PHCpack: {phc}", flush=True)
                counts = ", ".join(
                    f"{k} {phc[k]}" for k in ("total_degree", "multihomogeneous", "mixed_volume") if k in phc
                )
                if "seconds" in phc:
                    lines.append(
                        f"  | {'PHCpack':<14} {phc['regular']:>7} {'-':>6} {'-':>7} "
                        f"{phc['seconds']:>16.1f} ({phc['wall']:.0f}) {'-':>8}   root counts: {counts}"
                    )
                else:
                    lines.append(
                        f"  | {'PHCpack':<14} {'-':>7} {'-':>6} {'-':>7} "
                        f"{f'timeout after {args.timeout:.0f} s' if phc['timeout'] else 'error':>22} "
                        f"{'-':>8}   root counts: {counts} {phc.get('error', '')[:200]}"
                    )
                continue
            told = exp if mode == "told" else None
            if mode == "told" and not exp:
                continue
            script = m2_script(S, l, theta0, w0, told, gate=args.m2_system == "gate")
            if args.keep:
                Path(args.keep).mkdir(parents=True, exist_ok=True)
                Path(args.keep, f"engines-{d}{e}{a}-{kind}-{mode}.m2").write_text(script)
            m2 = run_m2(script, args.timeout)
            print(f"  {head}\n    M2 {mode}: {m2}", flush=True)
            lines.append(m2_line(f"M2 {mode}" + (f" {told}" if told else ""), m2, args.timeout))
        for workers in (int(w) for w in args.workers.split(",")):
            ours = monodromy_ed(arch, G, fiber=1, seed=0, timeout=args.ours_timeout, workers=workers)
            print(f"    ours ({workers} worker{'s' if workers > 1 else ''}): {ours.to_dict()}", flush=True)
            secs = f"{ours.seconds_monodromy:.1f} + {ours.seconds_certification:.1f} cert"
            label = "ours" if workers == 1 else f"ours, {workers} Dask"
            lines.append(
                f"  | {label:<14} {ours.found:>7} {ours.certified:>6} {ours.paths:>7} {secs:>22} "
                f"{ours.paths / max(ours.seconds_monodromy, 1e-9):>8.0f}   stop: {ours.stop}"
            )
        blocks.append((head, lines))

    print(
        f"\nload {os.getloadavg()[0]:.1f} at the end.  sols: distinct solutions found (M2: the most any node of its "
        "graph holds); paths: paths tracked (M2: the Verbose log's sum); seconds: M2's monodromySolve (whole job), "
        "ours: monodromy + certification; paths/s over the monodromy seconds."
    )
    print(f"  | {'engine':<14} {'sols':>7} {'cert.':>6} {'paths':>7} {'seconds':>22} {'paths/s':>8}")
    for head, lines in blocks:
        print(head)
        print("\n".join(lines))


if __name__ == "__main__":
    main()
