"""Frontier of one layer: every method on every size, side by side, and how far each gets in the time limit.

For each single layer (d, d', a) with 2 <= d <= 4, 1 <= d' <= 4, 1 <= a <= d,
t = 2 (reduced coordinates: d d' d(d+1)/2 of them), and a few t = 1 sizes
(full coordinates: d' binom(d+2, 3)), this runs

* ``kernel``: Macaulay2's kernel of the parametrization
  (:func:`ag_attention._algebra.implicitize.implicitize`, reduced coordinates for
  t = 2 and full ones for t = 1, over ZZ/32003 unless ``--kernel-field``):
  dimension, degree and the number of minimal generators (``trim``) per degree;
* ``interp3`` and ``interp4``: all minimal generators of degree <= 3 and <= 4
  by interpolation per torus multidegree
  (:func:`ag_attention._algebra.interpolation.low_degree_equations`, three
  primes, lifted to QQ and verified by exact substitution): their number per
  degree, written ``n1+n2+n3(+n4)``.  The package's memory guard comes first:
  a size it refuses is recorded as ``refused`` with its reason.  t = 2 only
  (there are no reduced coordinates for t = 1);
* ``count``: ``degree(arch, method="count")``: msolve counts the points of a
  general linear section pulled back to the weights, twice (two primes, two
  sections; ``degree x fiber`` each);
* ``formula``: ``degree(arch, method="formula")``, the closed formula of
  docs/math/degree.md;

each under its own time limit (``--timeout``, default 300 s per size and
method) and without any cache (``cache=False``), so every figure is a fresh
computation.  Each (size, method) runs in its own Python process (this file
with ``--worker``), in its own session; at the time limit the whole process
group is killed, together with every process it started (Macaulay2 and msolve
run in sessions of their own and also die with their parent), so nothing
hangs.  Jobs run one at a time (the machine has 2 cores; msolve runs with one
thread).  The time printed is the wall time of the library call inside the
worker (Macaulay2 start-up and its version query included; Python start-up
and imports not).

Sizes are run in order of (number of coordinates, formula degree).  Once a
method times out on a size it is not run on any *larger* size of the same
family (same t): a size at least as large in both the number of coordinates
and the degree (the two things that make elimination, interpolation and
counting harder).  Those cells read ``skipped (timed out on (d,d',a))``.
d = 1 is left out (the closure is the whole space, degree 1).

Output: one Markdown table (rows = sizes, columns = methods; cells
``result (seconds)``, ``timeout``, ``skipped ...``, ``refused ...`` or
``n/a``), printed row by row as they finish; an ``agree`` column checks that
the degrees (kernel, count, formula) are equal and that the kernel's number
of minimal generators of each degree <= 4 equals interpolation's; then, per
method and t, the largest size finished within the limit (by number of
coordinates, and by degree) and the first size that timed out.  ``--json
FILE`` writes every row (rewritten after each row, so a partial run keeps
what it measured).

    python bench/frontier.py [--timeout 300] [--sizes "3,2,3;4,1,4;3,1,1,1"] [--methods kernel,count,formula]
                             [--kernel-field ZZ/32003] [--json FILE]

A size is ``d,d',a`` (t = 2) or ``d,d',a,t``.  The full default set (36 sizes
with t = 2, 7 with t = 1) took 67 min with ``--timeout 300`` on 2 cores shared
with other jobs (load about 3; times there were up to twice those of an idle
machine, e.g. the kernel of (3,2,1) 257 s against 147 s).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone

METHODS = ("kernel", "interp3", "interp4", "count", "formula")
SIZES_T2 = [(d, e, a) for d in (2, 3, 4) for e in (1, 2, 3, 4) for a in range(1, d + 1)]
SIZES_T1 = [(2, 1, 1), (2, 2, 1), (3, 1, 1), (3, 1, 2), (3, 2, 1), (4, 1, 1), (4, 1, 2)]
#: seconds after the limit before the worker is killed from outside (the library kills its own M2/msolve first)
GRACE = 5.0
MARKER = "FRONTIER-RESULT "


# ------------------------------------------------------------------ worker
def _worker(spec: dict) -> dict:
    """One (size, method) in this process; returns what is printed after MARKER."""
    from ag_attention._architecture import Architecture
    from ag_attention._errors import InsufficientMemoryError, M2TimeoutError, MSolveTimeoutError

    d, e, a, t = spec["d"], spec["e"], spec["a"], spec["t"]
    method, timeout = spec["method"], spec["timeout"]
    arch = Architecture.single_layer(d, e, a, tokens=t)
    t0 = time.perf_counter()
    try:
        if method == "kernel":
            from ag_attention._algebra.implicitize import implicitize

            r = implicitize(
                arch, coords="reduced" if t >= 2 else "full", field=spec["field"], timeout=timeout, cache=False
            )
            secs = time.perf_counter() - t0
            degs: dict[int, int] = {}
            for g in r.generator_degrees:
                degs[g] = degs.get(g, 0) + 1
            return {
                "status": "ok",
                "seconds": secs,
                "degree": r.degree,
                "dimension": r.dimension,
                "codimension": r.codimension,
                "generators": len(r.generator_strings),
                "generator_degrees": {str(k): v for k, v in sorted(degs.items())},
                "field": r.field,
                "backend": r.backend,
                "m2_version": r.m2_version,
                "m2_seconds": r.seconds,
                "ambient_dimension": r.ambient_dimension,
            }
        if method in ("interp3", "interp4"):
            from ag_attention._algebra.interpolation import low_degree_equations

            k = int(method[-1])
            r = low_degree_equations(arch.with_(tokens=2), max_degree=k)  # reduced coordinates: any t >= 2
            secs = time.perf_counter() - t0
            return {
                "status": "ok",
                "seconds": secs,
                "generator_count": {str(D): n for D, n in r.generator_count.items()},
                "ideal_dimension": {str(D): r.ideal_dimension(D) for D in sorted(r.blocks)},
                "primes": list(r.primes),
                "verified": r.verified,
            }
        if method in ("count", "formula"):
            from ag_attention._algebra.closure_degree import degree

            r = degree(arch, method=method, timeout=timeout, cache=False)
            secs = time.perf_counter() - t0
            return {
                "status": "ok",
                "seconds": secs,
                "degree": r.degree,
                "dimension": r.dimension,
                "fiber": r.fiber_size,
                "counts": [c.to_dict() for c in r.counts],
                "msolve": r.msolve,
            }
        raise ValueError(f"unknown method {method}")
    except InsufficientMemoryError as exc:
        return {"status": "refused", "reason": str(exc), "seconds": time.perf_counter() - t0}
    except (M2TimeoutError, MSolveTimeoutError) as exc:
        return {"status": "timeout", "reason": str(exc), "seconds": time.perf_counter() - t0}
    except Exception as exc:  # noqa: BLE001 - every failure is a cell of the table
        return {"status": "error", "reason": f"{type(exc).__name__}: {exc}", "seconds": time.perf_counter() - t0}


def _descendants(root: int) -> list[int]:
    """Every live process below ``root`` (children, grandchildren, ...), from /proc."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                text = fh.read()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        parent[int(entry)] = int(fields[1])
    out, frontier = [], [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        frontier += kids
    return out


def _kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL the worker's process group and every process it started (by id, with their groups)."""
    below = _descendants(proc.pid)
    own = os.getpgrp()
    for pid in [proc.pid] + below:
        try:
            pgid = os.getpgid(pid)
        except ProcessLookupError:
            continue
        try:
            if pgid != own and pgid in (proc.pid, pid):  # a group the worker or one of its children leads
                os.killpg(pgid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def run_job(size: tuple[int, int, int, int], method: str, timeout: float, field: str) -> dict:
    d, e, a, t = size
    spec = {"d": d, "e": e, "a": a, "t": t, "method": method, "timeout": timeout, "field": field}
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout + GRACE)
    except subprocess.TimeoutExpired:
        _kill_tree(proc)
        proc.communicate()
        return {"status": "timeout", "reason": f"killed after {timeout + GRACE:g} s", "wall": time.perf_counter() - t0}
    except BaseException:
        _kill_tree(proc)
        proc.communicate()
        raise
    wall = time.perf_counter() - t0
    lines = [ln for ln in out.splitlines() if ln.startswith(MARKER)]
    if not lines:
        tail = " ".join(err.split())[-300:]
        return {
            "status": "error",
            "reason": f"worker exited with {proc.returncode}: {tail or 'no output'}",
            "wall": wall,
        }
    res = json.loads(lines[-1][len(MARKER) :])
    res["wall"] = wall
    if res["status"] == "ok" and res["seconds"] > timeout:  # e.g. two msolve runs, each under the limit
        res = {
            "status": "timeout",
            "reason": f"finished in {res['seconds']:.1f} s > {timeout:g} s",
            "late_result": res,
            "wall": wall,
        }
    return res


# ------------------------------------------------------------------- sizes
def coordinates(d: int, e: int, t: int) -> int:
    return d * e * d * (d + 1) // 2 if t >= 2 else e * math.comb(d + 2, 3)


def formula_degree(d: int, e: int, a: int, t: int) -> int | None:
    from ag_attention._algebra.degree import degree_formula
    from ag_attention._architecture import Architecture

    return degree_formula(Architecture.single_layer(d, e, a, tokens=t)).degree


def parse_sizes(text: str) -> list[tuple[int, int, int, int]]:
    out = []
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        nums = [int(x) for x in part.split(",")]
        if len(nums) == 3:
            nums.append(2)
        if len(nums) != 4 or min(nums) < 1 or nums[2] > nums[0]:
            raise SystemExit(f"--sizes: {part!r} must be d,d',a or d,d',a,t with 1 <= a <= d")
        out.append(tuple(nums))
    return out


def order(sizes):
    """t = 2 first, then t = 1; within each, by (coordinates, formula degree, d, d', a)."""
    return sorted(sizes, key=lambda s: (-s[3], coordinates(s[0], s[1], s[3]), formula_degree(*s) or 0, s))


def label(size) -> str:
    d, e, a, t = size
    return f"({d},{e},{a})" + ("" if t == 2 else f" t={t}")


# ------------------------------------------------------------------- cells
def _fmt_s(x: float) -> str:
    return f"{x:.1f} s" if x >= 10 else f"{x:.2f} s"


def cell(method: str, r: dict) -> str:
    st = r["status"]
    if st == "ok":
        if method == "kernel":
            degs = " ".join(f"{k}:{v}" for k, v in r["generator_degrees"].items())
            return f"deg {r['degree']}, dim {r['dimension']}, {r['generators']} gens [{degs}] ({_fmt_s(r['seconds'])})"
        if method.startswith("interp"):
            counts = "+".join(str(v) for _, v in sorted(r["generator_count"].items(), key=lambda kv: int(kv[0])))
            return f"{counts} ({_fmt_s(r['seconds'])})"
        return f"{r['degree']} ({_fmt_s(r['seconds'])})"
    if st == "timeout":
        late = r.get("late_result")
        return f"timeout (done in {late['seconds']:.1f} s)" if late else "timeout"
    if st == "skipped":
        return f"skipped (timed out on {r['because']})"
    if st == "n/a":
        return f"n/a ({r['reason']})"
    reason = r.get("reason", "")
    if st == "refused":
        short = reason.split(" (largest arrays")[0]
        short = short.split(" needs ")[-1] if " needs " in short else short
        return f"refused: needs {short}"[:110]
    return f"{st}: {reason[:80]}"


def agreement(cells: dict) -> str:
    """Degrees of kernel, count and formula equal; kernel minimal generators per degree <= k equal interp's."""
    problems, checked = [], 0
    degs = {m: cells[m]["degree"] for m in ("kernel", "count", "formula") if cells.get(m, {}).get("status") == "ok"}
    if len(degs) >= 2:
        checked += 1
        if len(set(degs.values())) != 1:
            problems.append("degrees " + ", ".join(f"{m} {v}" for m, v in degs.items()))
    k = cells.get("kernel", {})
    for m in ("interp3", "interp4"):
        c = cells.get(m, {})
        if k.get("status") == "ok" and c.get("status") == "ok":
            checked += 1
            for D, n in c["generator_count"].items():
                if k["generator_degrees"].get(D, 0) != n:
                    problems.append(f"{m} degree {D}: {n} vs kernel {k['generator_degrees'].get(D, 0)}")
    if problems:
        return "NO: " + "; ".join(problems)
    return "yes" if checked else "-"


# -------------------------------------------------------------------- main
def versions() -> dict:
    info = {"python": sys.version.split()[0], "machine": platform.platform(), "cpus": os.cpu_count()}
    try:
        from ag_attention._algebra.msolve import find_msolve, msolve_version

        info["msolve"] = msolve_version(find_msolve())
    except Exception as exc:  # noqa: BLE001
        info["msolve"] = f"unavailable ({exc})"
    try:
        from ag_attention._m2.runner import get_backend

        b = get_backend("auto")
        info["macaulay2"] = f"{b.version()} ({b.name})"
    except Exception as exc:  # noqa: BLE001
        info["macaulay2"] = f"unavailable ({exc})"
    return info


def largest(rows: list[dict], methods, timeout: float) -> list[str]:
    lines = []
    for t in sorted({r["tokens"] for r in rows}, reverse=True):
        fam = [r for r in rows if r["tokens"] == t]
        lines.append(
            f"\nLargest size reached within {timeout:g} s, t = {t} ({'reduced' if t >= 2 else 'full'} coordinates):"
        )
        for m in methods:
            ok = [r for r in fam if r["cells"][m]["status"] == "ok"]
            timed = [r for r in fam if r["cells"][m]["status"] == "timeout"]
            other = sorted({r["cells"][m]["status"] for r in fam} - {"ok", "timeout"})
            if not ok:
                text = "none"
            else:
                by_n = max(ok, key=lambda r: (r["coordinates"], r["formula_degree"] or 0))
                by_deg = max(ok, key=lambda r: (r["formula_degree"] or 0, r["coordinates"]))
                text = (
                    f"most coordinates {by_n['label']} ({by_n['coordinates']} coordinates, degree "
                    f"{by_n['formula_degree']}); largest degree {by_deg['label']} (degree {by_deg['formula_degree']}, "
                    f"{by_deg['coordinates']} coordinates); {len(ok)}/{len(fam)} sizes"
                )
            if timed:
                text += f"; first timeout {timed[0]['label']}"
            if other:
                counts = ", ".join(f"{s} {sum(r['cells'][m]['status'] == s for r in fam)}" for s in other)
                text += f" ({counts})"
            lines.append(f"  {m:<8} {text}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per size and method (default 300)")
    ap.add_argument("--sizes", default=None, help="e.g. '3,2,3;4,1,4;3,1,1,1' (d,d',a[,t]; t = 2 by default)")
    ap.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated subset of {','.join(METHODS)}")
    ap.add_argument(
        "--kernel-field", default="ZZ/32003", help="field of the Macaulay2 kernel: ZZ/p (default ZZ/32003) or QQ"
    )
    ap.add_argument("--json", default=None, help="write all rows as JSON to this file")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        print(MARKER + json.dumps(_worker(json.loads(args.worker))), flush=True)
        return
    if not (args.timeout > 0):
        raise SystemExit("--timeout must be positive")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise SystemExit(f"--methods: unknown {bad}; choose from {', '.join(METHODS)}")
    methods = [m for m in METHODS if m in methods]
    sizes = parse_sizes(args.sizes) if args.sizes else [s + (2,) for s in SIZES_T2] + [s + (1,) for s in SIZES_T1]
    sizes = order(dict.fromkeys(sizes))

    info = versions()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    print(
        f"Frontier of one layer: {len(sizes)} sizes x {len(methods)} methods, limit {args.timeout:g} s per cell, "
        f"no cache, one job at a time"
    )
    print(
        f"Macaulay2 {info['macaulay2']} (kernel over {args.kernel_field}); msolve {info['msolve']}; "
        f"python {info['python']}; {info['cpus']} CPUs; {started}"
    )
    print(
        "kernel: degree, dimension of the affine cone, minimal generators [degree:number]; interpK: minimal "
        "generators of degree 1+2+...+K; count, formula: degree. N = coordinates (reduced for t = 2, full for t = 1)."
    )
    print(
        "A timeout skips the method on every later size of the same t with at least as many coordinates "
        "and at least the same degree.\n"
    )
    print("| size | N | " + " | ".join(methods) + " | agree |")
    print("|---|---|" + "---|" * len(methods) + "---|", flush=True)

    timed_out: dict[tuple[str, int], list[tuple[int, int, str]]] = {}
    rows: list[dict] = []
    t_start = time.perf_counter()
    for size in sizes:
        d, e, a, t = size
        n = coordinates(d, e, t)
        deg = formula_degree(*size)
        cells: dict[str, dict] = {}
        for m in methods:
            if m.startswith("interp") and t < 2:
                cells[m] = {"status": "n/a", "reason": "t = 1"}
                continue
            blocker = next((lab for (n0, g0, lab) in timed_out.get((m, t), []) if n >= n0 and (deg or 0) >= g0), None)
            if blocker is not None:
                cells[m] = {"status": "skipped", "because": blocker}
                continue
            r = run_job(size, m, args.timeout, args.kernel_field)
            cells[m] = r
            if r["status"] == "timeout":
                timed_out.setdefault((m, t), []).append((n, deg or 0, label(size)))
        row = {
            "size": [d, e, a],
            "tokens": t,
            "label": label(size),
            "coordinates": n,
            "formula_degree": deg,
            "cells": cells,
            "agree": agreement(cells),
        }
        rows.append(row)
        print(
            f"| {row['label']} | {n} | " + " | ".join(cell(m, cells[m]) for m in methods) + f" | {row['agree']} |",
            flush=True,
        )
        if args.json:
            _write_json(args.json, rows, methods, args, info, started, time.perf_counter() - t_start, final=False)
    for line in largest(rows, methods, args.timeout):
        print(line)
    total = time.perf_counter() - t_start
    print(f"\nTotal {total / 60:.1f} min.", flush=True)
    if args.json:
        _write_json(args.json, rows, methods, args, info, started, total, final=True)


def _write_json(path, rows, methods, args, info, started, seconds, final: bool) -> None:
    data = {
        "benchmark": "bench/frontier.py",
        "started": started,
        "complete": final,
        "seconds": round(seconds, 1),
        "timeout": args.timeout,
        "methods": methods,
        "kernel_field": args.kernel_field,
        "versions": info,
        "rows": rows,
    }
    if final:
        data["largest"] = largest(rows, methods, args.timeout)[1:]
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(data, fh, indent=1, default=str)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
