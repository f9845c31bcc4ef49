"""Benchmark of the Macaulay2 bridge (prints its figures).

1. Per-job overhead of each backend, side by side: an empty job (start M2,
   load LightningAttention, print JSON) in a fresh process, in a persistent
   session (the local default), in the container.
2. Implicitization of one layer (kernel of the parametrization, bigraded by
   (degree in A, degree in V)): reduced and full coordinates (t = 2), over QQ
   and ZZ/32003, on growing sizes, each under a time limit; the largest size
   that finishes is reported.
3. The same kernel without the grading (plain), to show what the grading buys.
4. Beyond the reach of the kernel: all equations of degree <= k by a truncated
   Groebner basis of the graph ideal (lowDegreeEquations).

    python bench/m2.py [--backend local|container] [--timeout 300] [--quick] [--overhead-only]
"""

from __future__ import annotations

import argparse
import statistics
import time

from ag_attention import Architecture
from ag_attention._algebra.implicitize import implicitize
from ag_attention._errors import M2TimeoutError
from ag_attention._m2.jobs import run_json
from ag_attention._m2.runner import ContainerBackend, LocalBackend
from ag_attention._m2.schema import NUMBER_STRING

SIZES = [(2, 1, 2), (2, 2, 2), (2, 3, 2), (3, 1, 1), (3, 1, 2), (3, 1, 3), (2, 4, 2), (3, 2, 1), (3, 2, 3)]


EMPTY = 'result = hashTable {"ok" => true};'


def _per_job(b, jobs: int) -> float:
    """Median seconds of ``jobs`` empty jobs (each its own script: no cache involved)."""
    times = []
    for i in range(jobs):
        t0 = time.perf_counter()
        run_json(f"{EMPTY}\n-- {i}", schema={"ok": bool}, backend=b, timeout=120, cache=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def overhead(backends) -> None:
    """Per-job overhead, side by side: a fresh process per job (what every job was before sessions), a
    persistent session (the local backend's default), the container."""
    print("\nPer-job overhead (empty job: start or reuse M2, load LightningAttention, print JSON)")
    for b in backends:
        ok, why = b.available()
        if not ok:
            print(f"  {b.name:<22} unavailable: {why}")
            continue
        b.version()
        if isinstance(b, LocalBackend):
            fresh = LocalBackend(b.executable, sessions=False)
            session = LocalBackend(b.executable, sessions=True)
            run_json(EMPTY, schema={"ok": bool}, backend=session, timeout=120, cache=False)  # the session starts
            f, s = _per_job(fresh, 5), _per_job(session, 50)
            print(f"  {'local, fresh process':<22} {f * 1000:8.1f} ms   median of 5   ({b.describe()})")
            print(f"  {'local, session':<22} {s * 1000:8.1f} ms   median of 50  ({f / s:.0f}x less)")
        else:
            print(f"  {b.name:<22} {_per_job(b, 3) * 1000:8.1f} ms   median of 3   ({b.describe()})")


def implicitization(backend, timeout: float, sizes) -> None:
    print(f"\nImplicitization (bigraded kernel), {backend.name} backend, limit {timeout:g} s per job")
    print(f"  {'size':<22} {'coords':<8} {'field':<9} {'n':>4} {'dim':>4} {'deg':>5} {'gens':>5} {'seconds':>9}")
    reached = {}
    for d, e, a in sizes:
        arch = Architecture((d, e), (a,), tokens=2)
        for coords in ("reduced", "full"):
            for field in ("QQ", "ZZ/32003"):
                label = f"d={d} d'={e} a={a}"
                try:
                    t0 = time.perf_counter()
                    r = implicitize(arch, coords=coords, field=field, backend=backend, timeout=timeout, cache=False)
                    secs = time.perf_counter() - t0
                    print(
                        f"  {label:<22} {coords:<8} {field:<9} {r.ambient_dimension:>4} {r.dimension:>4} {r.degree:>5} "
                        f"{len(r.generator_strings):>5} {secs:>8.2f}s"
                    )
                    reached[(coords, field)] = label
                except M2TimeoutError:
                    print(
                        f"  {label:<22} {coords:<8} {field:<9} {'':>4} {'':>4} {'':>5} {'':>5} "
                        f"{'> ' + format(timeout, 'g'):>8}s"
                    )
            if coords == "reduced" and d * e * d * (d + 1) // 2 > 18:
                break  # full coordinates of the large sizes: skip
    for (coords, field), label in sorted(reached.items()):
        print(f"  largest size finished ({coords}, {field}): {label}")


def plain_vs_graded(backend, timeout: float) -> None:
    print("\nGrading: kernel of d=3 d'=1 a=3 (18 reduced coordinates) over QQ")
    for hom in ("true", "false"):
        body = (
            f"P = lightningParametrization(3, 1, Homogenize => {hom});\n"
            "t0 = cpuTime(); I = closureIdeal P; t = cpuTime() - t0;\n"
            'result = hashTable {"gens" => numgens I, "seconds" => toString t};'
        )
        try:
            job = run_json(
                body, schema={"gens": int, "seconds": NUMBER_STRING}, backend=backend, timeout=timeout, cache=False
            )
            print(
                f"  Homogenize => {hom:<5}  {job.payload['gens']} generators, "
                f"{float(job.payload['seconds']):.1f} s of M2 CPU"
            )
        except M2TimeoutError:
            print(f"  Homogenize => {hom:<5}  > {timeout:g} s")


def low_degree(backend, timeout: float) -> None:
    print("\nLow-degree equations by truncated elimination, d=3 d'=2 a=3 (36 coordinates; the kernel does not finish)")
    for k in (2, 3):
        body = (
            "P = lightningParametrization(3, 2, CoefficientRing => ZZ/32003);\n"
            f"t0 = cpuTime(); J = lowDegreeEquations(P, {k}); t = cpuTime() - t0;\n"
            'result = hashTable {"gens" => numgens J, '
            '"degrees" => sort unique apply(flatten entries gens J, f -> sum degree f), '
            '"seconds" => toString t};'
        )
        try:
            job = run_json(
                body,
                schema={"gens": int, "degrees": [int], "seconds": NUMBER_STRING},
                backend=backend,
                timeout=timeout,
                cache=False,
            )
            p = job.payload
            print(f"  degree <= {k}: {p['gens']} minimal equations, {float(p['seconds']):.1f} s of M2 CPU")
        except M2TimeoutError:
            print(f"  degree <= {k}: > {timeout:g} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["local", "container"], default="local")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--overhead-only", action="store_true", help="the per-job overhead only")
    args = ap.parse_args()
    local, container = LocalBackend(), ContainerBackend()
    overhead([local, container])
    if args.overhead_only:
        return
    backend = local if args.backend == "local" else container
    implicitization(backend, args.timeout, SIZES[:4] if args.quick else SIZES)
    if not args.quick:
        plain_vs_graded(backend, args.timeout)
        low_degree(backend, args.timeout)


if __name__ == "__main__":
    main()
