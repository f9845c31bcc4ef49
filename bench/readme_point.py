"""The README's trained-checkpoint example: a student trained on a critical teacher, saved as bf16, its report and
spectrum plot (prints the command it runs; writes examples/student-bf16.safetensors and
docs/_static/point-spectrum.png).

A one-layer network (widths 3,3, rank 2, t = 2) learns from a teacher at one of Lemma A.3's critical pairs
(A = u v^T, V = w v^T) by gradient descent (ag_attention._point.training, seeded); the student's weights are
rounded to bfloat16 (the dtype trained weights are usually saved in) and written to a .safetensors file with its
token count in __metadata__; then

    ag-attention point examples/student-bf16.safetensors --plot docs/_static/point-spectrum.png

reads it back (each bf16 number by its exact value) and draws the spectra.

    python bench/readme_point.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from ag_attention import Architecture
    from ag_attention._network import unflatten
    from ag_attention._point.safetensors import write_safetensors
    from ag_attention._point.training import train

    arch = Architecture((3, 3), (2,), tokens=2)
    run = train(arch, "critical", 40, seed=1, steps=3000, record_every=500)
    print(f"trained: final loss {run.records[-1].loss:.3g}, ended {run.end}", file=sys.stderr)
    w = unflatten(arch, run.theta)[0][0]
    tensors = {}
    for name in ("Q", "K", "V"):
        bits = np.asarray(w[name], dtype=np.float32).view(np.uint32)
        tensors[f"layers.0.heads.0.{name}"] = ("BF16", ((bits + 0x8000) >> 16).astype(np.uint16))  # round to bf16
    out = ROOT / "examples" / "student-bf16.safetensors"
    write_safetensors(out, tensors, {"tokens": "2"})
    cmd = ["ag-attention", "point", str(out.relative_to(ROOT)), "--plot", "docs/_static/point-spectrum.png"]
    print("$ " + " ".join(cmd), file=sys.stderr)
    subprocess.run([sys.executable, "-m", "ag_attention", *cmd[1:]], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
