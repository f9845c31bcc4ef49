"""Memory estimates against the measured peak RSS (prints the figures; asserts nothing about them).

Every engine estimates, from the sizes alone, the memory it will allocate
(``ag_attention/_resources.py``; ``run_memory`` for the exact engine,
``numeric_memory`` for float64) and refuses before allocating when it does not
fit.  This runs six shapes, each in a fresh process, and prints the estimate
(plus the process's memory before the computation) beside the peak resident
set size the kernel measured (``VmHWM``): which part of the computation
dominates differs between them (Jacobian and FLINT copy; backward adjoints of
many samples; t x t arrays of many tokens; heads and skip connections; the
float64 SVD; many tokens in float64).

The ratio depends on the allocator, the C library, the BLAS and the kernel
(pages that are freed but kept, transparent huge pages, fragmentation), so it
is a figure of this machine, not a test: the test suite checks what cannot
flake instead (``tests/test_resources.py``: the estimate is at least what
numpy allocates, counted by ``tracemalloc``, and at most twice that).

    python bench/resources.py
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (engine, architecture and samples): what dominates the peak is in the comment
SHAPES: list[tuple[str, dict[str, object]]] = [
    ("exact", {"widths": [24, 24, 24], "ranks": [12, 12], "tokens": 2}),  # Jacobian and FLINT copy
    ("exact", {"widths": [4, 4], "ranks": [2], "tokens": 2, "samples": 200000}),  # many samples: adjoints
    ("exact", {"widths": [3, 3], "ranks": [3], "tokens": 40, "samples": 2000}),  # t x t arrays
    ("exact", {"widths": [6, 6], "ranks": [3], "tokens": 2, "heads": 3, "skip": True, "samples": 20000}),
    ("numeric", {"widths": [24, 24], "ranks": [12], "tokens": 3, "normalized": True}),  # float64 SVD
    ("numeric", {"widths": [3, 3], "ranks": [2], "tokens": 30, "normalized": True, "samples": 3000}),
]

_MEASURE = textwrap.dedent(
    """
    import json, math, sys
    import flint, numpy  # loaded before the baseline, as the engines load them
    from ag_attention import Architecture
    from ag_attention._resources import current_rss
    kind, spec = sys.argv[1], json.loads(sys.argv[2])
    samples = spec.pop("samples", None)
    arch = Architecture.from_dict(spec)
    base = current_rss()
    if kind == "exact":
        from ag_attention._exact.dimension import dimension
        from ag_attention._exact.sampling import planning_bound, run_memory, sampling_plan
        N, k = sampling_plan(arch, planning_bound(arch), samples)
        estimate = run_memory(arch, N, k).peak
        dimension(arch, samples=samples, recheck=False, max_doublings=0)
    else:
        from ag_attention._numeric import new_directions_per_sample, numeric_memory, numerical_dimension
        N = samples or max(1, math.ceil(1.5 * arch.parameter_count / new_directions_per_sample(arch)) + 1)
        estimate = numeric_memory(arch, N).peak
        numerical_dimension(arch, samples=N, raise_on_no_gap=False)
    # VmHWM: the peak RSS of this process's own memory.  getrusage's ru_maxrss is not: Linux carries the
    # parent's high-water mark across fork and exec, so under a large parent it reports the parent's size.
    with open("/proc/self/status") as fh:
        hwm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
    print(json.dumps({"base": base, "estimate": estimate, "peak": hwm}))
    """
)


def _label(kind: str, spec: dict[str, object]) -> str:
    from ag_attention import Architecture

    arch = Architecture.from_dict({k: v for k, v in spec.items() if k != "samples"})
    samples = spec.get("samples")
    return f"{kind:<7} {arch.describe()}" + (f", N = {samples:,}" if samples else "")


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main() -> int:
    sys.path.insert(0, str(ROOT))
    print(
        f"Memory estimates against the measured peak RSS (VmHWM), {platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores"
    )
    print(f"{'shape':<58} {'base':>8} {'estimate':>10} {'base+est.':>10} {'peak RSS':>10} {'(b+e)/peak':>10} {'s':>6}")
    worst = 0.0
    for kind, spec in SHAPES:
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", _MEASURE, kind, json.dumps(spec)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
        if out.returncode != 0:
            print(f"{_label(kind, spec)}: failed\n{out.stderr}", file=sys.stderr)
            return 1
        m = json.loads(out.stdout)
        predicted = m["base"] + m["estimate"]
        ratio = predicted / m["peak"]
        worst = max(worst, abs(ratio - 1.0))
        print(
            f"{_label(kind, spec):<58} {_mib(m['base']):>8} {_mib(m['estimate']):>10} {_mib(predicted):>10} "
            f"{_mib(m['peak']):>10} {ratio:>10.2f} {time.perf_counter() - t0:>6.1f}"
        )
    print(f"largest deviation of (base + estimate) from the peak RSS: {worst:.0%} (six shapes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
