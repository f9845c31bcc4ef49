"""The full softmax point of a tiny GPT-2 with biases, timed: issue 44's target, beside what it replaces.

The network of issue 44: a GPT-2 layout (``transformer.h.<l>.attn.c_attn``/``c_proj``, a ``config.json`` with
``model_type`` gpt2 and 4 heads), 2 layers of 4 heads, ``d = 16``, weights of size 0.02 (transformers' init) and
attention biases of size 0.1, ``t = 3``; read as trained: softmax, causal, affine. Built with NumPy alone (the
same tensors ``save_pretrained`` writes: docs/manual/checkpoints.md), so the benchmark needs no transformers.

Printed, for each run: the estimate ``ag-attention point`` prints first, the wall time of the whole command, its
exit status and verdict; then the same under load (a CPU hog on every core), and the deadline kept: ``--timeout``
10, 30, 60 s against the wall time (target: within 10 % + 2 s). The figure it replaces: 534 s idle and "critical:
not decided" at 0a36023 (issue 44), ``--timeout 240`` returning after 374 s on a loaded machine.

    python bench/softmax_point.py [--no-load] [--timeouts 10,30,60]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BEFORE = "534 s idle, critical not decided; --timeout 240 returned after 374 s loaded (0a36023, issue 44)"
E, H, L, T = 16, 4, 2, 3


def checkpoint(directory: Path) -> Path:
    """A save_pretrained-shaped GPT-2 directory: config.json and model.safetensors."""
    from ag_attention._point.safetensors import write_safetensors

    rng = np.random.default_rng(1)
    tensors = {}
    for l in range(L):
        p = f"transformer.h.{l}.attn."
        tensors[p + "c_attn.weight"] = ("F32", (rng.standard_normal((E, 3 * E)) * 0.02).astype("<f4"))
        tensors[p + "c_attn.bias"] = ("F32", (rng.standard_normal(3 * E) * 0.1).astype("<f4"))
        tensors[p + "c_proj.weight"] = ("F32", (rng.standard_normal((E, E)) * 0.02).astype("<f4"))
        tensors[p + "c_proj.bias"] = ("F32", (rng.standard_normal(E) * 0.1).astype("<f4"))
    directory.mkdir(parents=True, exist_ok=True)
    write_safetensors(directory / "model.safetensors", tensors)
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": E, "n_head": H, "n_layer": L}
    (directory / "config.json").write_text(json.dumps(config))
    return directory


def _hog(seconds: float) -> None:  # pragma: no cover - a CPU load for the benchmark
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def run(path: Path, timeout: float | None) -> tuple[float, int, str, str]:
    """``(wall seconds, exit status, the estimate line, the verdict line)`` of one ``ag-attention point``."""
    cmd = [sys.executable, "-m", "ag_attention", "point", str(path), "-t", str(T)]
    if timeout is not None:
        cmd += ["--timeout", str(timeout)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    estimate = next((x for x in done.stderr.splitlines() if "estimated" in x), "")
    m = re.search(r"estimated ([^(]*) \(", estimate)
    verdict = next((x.strip() for x in done.stdout.splitlines() if x.strip().startswith("critical")), "")
    if not verdict:
        verdict = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    return wall, done.returncode, m.group(1) if m else "-", verdict[:110]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-load", action="store_true", help="skip the runs under a CPU load")
    ap.add_argument("--timeouts", default="10,30,60", help="the --timeout values checked (default 10,30,60)")
    args = ap.parse_args()
    timeouts = [float(x) for x in args.timeouts.split(",") if x]
    with tempfile.TemporaryDirectory(prefix="ag-attention-softmax-point-") as tmp:
        path = checkpoint(Path(tmp) / "gpt2")
        print(f"tiny GPT-2 with biases: {L} layers x {H} heads, d = {E}, t = {T}; {os.cpu_count()} cores")
        print(f"before: {BEFORE}")
        print(f"{'load':<6} {'--timeout':>9} {'estimate':>10} {'wall':>8} {'exit':>4}  verdict")
        for loaded in (False, True) if not args.no_load else (False,):
            hogs = []
            if loaded:
                hogs = [multiprocessing.Process(target=_hog, args=(3600,)) for _ in range(os.cpu_count() or 2)]
                for h in hogs:
                    h.start()
            try:
                for timeout in [None, *timeouts]:
                    wall, status, estimate, verdict = run(path, timeout)
                    kept = "" if timeout is None else ("  kept" if wall <= 1.1 * timeout + 2 else "  OVERRUN")
                    shown = "-" if timeout is None else f"{timeout:g}"
                    print(
                        f"{'busy' if loaded else 'idle':<6} {shown:>9} {estimate:>10} {wall:7.1f}s {status:>4}  "
                        f"{verdict}{kept}"
                    )
            finally:
                for h in hogs:
                    h.terminate()
                    h.join()


if __name__ == "__main__":
    main()
