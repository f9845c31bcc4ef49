"""Where each function of the Macaulay2 package stops being feasible: timings on growing sizes (prints only).

Each exported function of ``m2scripts/LightningAttention.m2`` (the file the
package ships, ``ag_attention/_m2/LightningAttention.m2``) is run by the local
``M2`` on sizes ``(d, d')`` (one layer, ``t = 2``, reduced coordinates, ``A``
free unless ``a`` is given) in increasing order, each size in a fresh
``M2 --script`` process with a wall-clock timeout (``--timeout``, default
120 s).  The time printed is M2's ``elapsedTime`` of the function alone; what
it needs first (the closure ideal for ``jacobianRankAt``, say) is computed
before the clock starts, but counts against the timeout.  A size that times
out stops the sizes at least as large in every index (d, d', a, k) for that
function.  ``--budget`` (default 1,200 s) bounds the whole run: what is left
when it is spent is printed as not run.

    python bench/m2_feasible.py [--timeout 120] [--budget 1200] [--only closureIdeal,...] [--package FILE]

docs/m2.md quotes its figures (measured on 2 shared cores, Macaulay2 1.21).
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ag_attention" / "_m2" / "LightningAttention.m2"


@dataclass(frozen=True)
class Case:
    """One function on one size: M2 code run before the clock (``setup``) and the timed expression."""

    function: str
    size: tuple[int, ...]  # (d, d') or (d, d', a) or (d, d', k): compared index by index
    label: str
    setup: str
    timed: str


def _par(d: int, e: int, a: int | None = None, weights: str = "AV", ring: str = "QQ") -> str:
    opts = [f"CoefficientRing => {ring}"]
    if a is not None:
        opts += [f"AttentionRank => {a}", f'Weights => "{weights}"']
    return f"P = lightningParametrization({d}, {e}, {', '.join(opts)});"


def _rank_one_point(d: int, e: int) -> str:
    # A = e_1 e_1^T, V = (first column e_1, zeros): a rank-one pair (a singular point, Thm. 3.4)
    return (
        f"A0 = matrix table({d}, {d}, (i, j) -> if i == 0 and j == 0 then 1_QQ else 0_QQ); "
        f"V0 = matrix table({e}, {d}, (i, j) -> if i == 0 and j == 0 then 1_QQ else 0_QQ); "
        "pt = pointOf(P, A0, V0);"
    )


def cases(has: set[str]) -> list[Case]:
    out: list[Case] = []
    small = [(2, 1), (2, 2), (3, 1), (2, 3), (3, 2), (4, 1)]

    def add(function: str, sizes: list[tuple[int, ...]], setup: object, timed: str) -> None:
        if function not in has:
            return
        for s in sizes:
            code = setup(*s) if callable(setup) else str(setup)
            label = "(" + ", ".join(map(str, s)) + ")"
            out.append(Case(function, s, label, code, timed))

    add("lightningParametrization", [(4, 4), (8, 8), (12, 12)], lambda d, e: "", "P = lightningParametrization(%d, %e)")
    add("closureDegree", [(8, 8), (12, 12)], lambda d, e: _par(d, e), "closureDegree P")
    add("closureIdeal", small, lambda d, e: _par(d, e), "closureIdeal P")
    add("closureIdeal", [(3, 2, 1), (4, 1, 1), (3, 3, 1), (4, 2, 1)], lambda d, e, a: _par(d, e, a), "closureIdeal P")
    add(
        "singularLocusIdeal",
        [(2, 1), (3, 1), (2, 2)],
        lambda d, e: _par(d, e) + " closureIdeal P;",
        "singularLocusIdeal P",
    )
    add("restrictedClosureIdeal", small, lambda d, e: _par(d, e), "restrictedClosureIdeal P")
    add("baseLocusType", small, lambda d, e: _par(d, e), "baseLocusType P")
    add("fiberComponents", small, lambda d, e: _par(d, e) + " " + _rank_one_point(d, e), "fiberComponents(P, pt)")
    add(
        "jacobianRankAt",
        small,
        lambda d, e: _par(d, e) + " " + _rank_one_point(d, e) + " I = closureIdeal P;",
        "jacobianRankAt(I, pt)",
    )
    add(
        "lowDegreeEquations",
        [(2, 2, 3), (2, 2, 4), (3, 1, 3), (3, 1, 4), (3, 2, 3), (4, 1, 3)],
        lambda d, e, k: _par(d, e, ring="ZZ/32003"),
        "lowDegreeEquations(P, %k)",
    )
    add(
        "lowDegreeEquations",
        [(2, 2, 3), (3, 1, 3), (3, 2, 2), (3, 2, 3), (4, 1, 3), (3, 2, 4), (4, 2, 3)],
        lambda d, e, k: "",
        "lowDegreeEquations(%d, %e, %k)",
    )
    add(
        "edDegree",
        [(2, 1), (2, 2)],
        lambda d, e: (
            _par(d, e, ring="ZZ/32003") + " setRandomSeed 0; kk = ZZ/32003; I = standardGrading closureIdeal P;"
            " n = numgens ring I; u = random(kk^n, kk^1);"
        ),
        "edDegree(I, id_(kk^n), u)",
    )
    add(
        "theorem34Checks",
        [(2, 1), (2, 2), (3, 1), (2, 3)],
        lambda d, e: _par(d, e) + " " + _rank_one_point(d, e) + ' pts = {{"rank one", pt}};',
        "theorem34Checks(P, pts, pts)",
    )
    return out


def _expression(case: Case) -> str:
    s = case.size
    text = case.timed.replace("%d", str(s[0])).replace("%e", str(s[1]))
    if "%k" in text:
        text = text.replace("%k", str(s[2]))
    return text


def _script(case: Case, package: Path) -> str:
    return "\n".join(
        [
            f'needsPackage("LightningAttention", FileName => "{package}");',
            case.setup,
            f"t0 = currentTime(); c0 = cpuTime(); r = ({_expression(case)}); c1 = cpuTime();",
            'print("CPU " | toString(c1 - c0));',
            'print("RESULT " | (if instance(r, Ideal) then "ideal of " | toString(numgens r) | " generators"'
            ' else if instance(r, List) then "list of " | toString(#r) | ": " | toString r'
            ' else if instance(r, HashTable) then toString class r | " with " | toString(#r) | " keys"'
            " else toString r));",
            "exit 0;",
        ]
    )


def run(case: Case, timeout: float, m2: str, package: Path) -> tuple[str, float | None, float, str]:
    """(status, CPU seconds of the function, wall seconds of the process, its result in brief)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.m2"
        path.write_text(_script(case, package))
        env = dict(os.environ, HOME=os.environ.get("HOME", "/root"))
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(
                [m2, "--script", str(path)],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
                cwd=tmp,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return "timeout", None, time.perf_counter() - t0, ""
        wall = time.perf_counter() - t0
        out = proc.stdout + proc.stderr
        cpu = re.search(r"^CPU ([0-9.e+-]+)", out, re.M)
        res = re.search(r"^RESULT (.*)$", out, re.M)
        if proc.returncode != 0 or not cpu:
            tail = " ".join(out.strip().splitlines()[-3:])[:160]
            return "error", None, wall, tail
        brief = res.group(1) if res else ""
        return "ok", float(cpu.group(1)), wall, brief if len(brief) <= 60 else brief[:57] + "..."


def _exported(package: Path) -> set[str]:
    text = package.read_text()
    block = text[text.index("export {") :]
    block = block[: block.index("}")]
    return set(re.findall(r'"(\w+)"', block))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per size (default 120)")
    ap.add_argument("--budget", type=float, default=1200.0, help="seconds for the whole run (default 1200)")
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--package", type=Path, default=PACKAGE, help="the package file (default: the one shipped)")
    args = ap.parse_args()
    m2 = shutil.which("M2")
    if m2 is None:
        raise SystemExit("M2 not found")
    has = _exported(args.package)
    if args.only:
        has &= set(args.only.split(","))
    version = subprocess.run([m2, "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"Macaulay2 {version}, {os.cpu_count()} cores; timeout {args.timeout:g} s per size; "
        f"package {args.package}\nCPU s: M2's cpuTime of the function alone; "
        "wall s: the whole M2 process (start-up, set-up, function)"
    )
    print(f"{'function':24s} {'size':12s} {'status':8s} {'CPU s':>9s} {'wall s':>7s}  result")
    start = time.perf_counter()
    stopped: dict[str, list[tuple[int, ...]]] = {}
    for case in cases(has):
        key = case.function + ("/interp" if "%d" in case.timed and "lowDegree" in case.function else "")
        if any(len(s) == len(case.size) and all(x >= y for x, y in zip(case.size, s)) for s in stopped.get(key, [])):
            print(f"{case.function:24s} {case.label:12s} {'skipped':8s} {'':>9s}  (a smaller size timed out)")
            continue
        left = args.budget - (time.perf_counter() - start)
        if left <= 5:
            print(f"{case.function:24s} {case.label:12s} {'not run':8s} {'':>9s}  (budget spent)")
            continue
        status, seconds, wall, result = run(case, min(args.timeout, left), m2, args.package)
        if status == "timeout":
            stopped.setdefault(key, []).append(case.size)
            print(
                f"{case.function:24s} {case.label:12s} {'timeout':8s} {'':>9s} {'>' + format(wall, '.0f'):>7s}",
                flush=True,
            )
        elif status == "error":
            print(f"{case.function:24s} {case.label:12s} {'error':8s} {'':>9s} {wall:7.1f}  {result}", flush=True)
        else:
            assert seconds is not None
            print(f"{case.function:24s} {case.label:12s} {'ok':8s} {seconds:9.2f} {wall:7.1f}  {result}", flush=True)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
