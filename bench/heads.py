"""Every head of a GPT-2-small-shaped checkpoint, timed (issue 37: all 144 heads in <= 60 s on 2 cores).

Seeded Gaussian float32 weights in GPT-2's layout (12 layers, ``attn.c_attn.weight`` ``768 x 2304`` and
``attn.c_proj.weight`` ``768 x 768``, 12 heads of 64, zero biases, the causal mask buffers and the MLP) are written
to a ``.safetensors`` file with ``heads = 12`` in its metadata; then
:func:`ag_attention._point.head_readers.load_head_table` (``ag-attention point --per-head``) reads it and computes every
head's exact ranks, spectra, blocks and distances. ``--dead L.H`` zeroes head ``H``'s value rows in layer ``L``
and ``--rank-one L.H`` keeps one query row of it: both must be found and decided.

    python bench/heads.py [--layers 12] [--heads 12] [--width 768] [--seed 0] [--dead 3.5] [--rank-one 7.2]
                          [--keep gpt2.safetensors]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from ag_attention._point.head_readers import load_head_table
from ag_attention._point.safetensors import write_safetensors


def gpt2_like(
    path: Path, layers: int, heads: int, E: int, seed: int, dead: list[tuple[int, int]], rank_one: list[tuple[int, int]]
) -> None:
    rng = np.random.default_rng(seed)
    d = E // heads
    tensors: dict[str, tuple[str, np.ndarray]] = {}
    for l in range(layers):
        qkv = (rng.standard_normal((E, 3 * E)) / np.sqrt(E)).astype("<f4")  # Conv1D: x W, W = [W_q; W_k; W_v]^T
        for L, H in dead:
            if L == l + 1:
                qkv[:, 2 * E + (H - 1) * d : 2 * E + H * d] = 0  # W_v,h = 0: V_h = 0
        for L, H in rank_one:
            if L == l + 1:
                qkv[:, (H - 1) * d + 1 : H * d] = 0  # one query row left: rank A_h = 1
        p = f"h.{l}."
        tensors[p + "attn.c_attn.weight"] = ("F32", qkv)
        tensors[p + "attn.c_attn.bias"] = ("F32", np.zeros(3 * E, "<f4"))
        tensors[p + "attn.c_proj.weight"] = ("F32", (rng.standard_normal((E, E)) / np.sqrt(E)).astype("<f4"))
        tensors[p + "attn.c_proj.bias"] = ("F32", np.zeros(E, "<f4"))
        tensors[p + "mlp.c_fc.weight"] = ("F32", np.zeros((E, 4), "<f4"))
    write_safetensors(path, tensors, metadata={"heads": str(heads)})


def _pair(text: str) -> tuple[int, int]:
    layer, head = text.split(".")
    return int(layer), int(head)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dead", type=_pair, action="append", default=[])
    ap.add_argument("--rank-one", type=_pair, action="append", default=[])
    ap.add_argument(
        "--keep", metavar="FILE", help="write the checkpoint here (and keep it) instead of a temporary file"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "gpt2.safetensors"
        t0 = time.perf_counter()
        gpt2_like(path, args.layers, args.heads, args.width, args.seed, args.dead, args.rank_one)
        written = time.perf_counter() - t0
        t0 = time.perf_counter()
        table = load_head_table(path)
        seconds = time.perf_counter() - t0
    print("\n".join(str(table).splitlines()[:2]))
    for h in table.heads:
        if h.dead or h.critical or h.near_dead:
            print(f"  head {h.layer}.{h.head}: {h.reason}")
    print(
        f"{len(table.heads)} heads ({args.layers} layers x {args.heads}, d = {args.width}): "
        f"written in {written:.1f} s, read and analysed in {seconds:.1f} s "
        f"(the table alone: {table.seconds:.1f} s; target <= 60 s)"
    )


if __name__ == "__main__":
    main()
