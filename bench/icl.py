"""``reproduce icl``, timed, and its gradient step against the token-level step it replaces.

Prints, side by side:

* the wall and CPU time of ``ag-attention reproduce icl --quick`` and of ``--heads 3 --dims 3 --quick`` (issue 38's
  saddle-to-saddle run), each from an empty cache (issue 29's target: 2 minutes), and with ``--full`` of the full run
  (the CPU time is the child's user + system: on a shared machine the wall time also counts the others' work);
* one full-batch gradient step of the trainer (the loss as a quadratic form in ``Theta``, ``O((D+1)^6)``) against
  the same step computed token by token (predictions ``v^T C W x_q`` for every sequence, then the gradient), on the
  quick setting's training set, and the largest relative difference of the two gradients.

Asserts nothing.

    python bench/icl.py [--full]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))

from ag_attention._reproduce.icl import QUICK, eigenvalues, features  # noqa: E402


def token_level_step(tokens: np.ndarray, labels: np.ndarray, v: np.ndarray, W: np.ndarray, N: int):
    """Loss and gradients from the sequences themselves (what the quadratic form replaces)."""
    C = np.einsum("pna,pnb->pab", tokens, tokens) / N
    xq = tokens[:, -1, :]
    pred = np.einsum("ha,pab,hbc,pc->p", v, C, W, xq)
    r = pred - labels
    loss = float(np.mean(r * r))
    gv = 2 * np.einsum("p,pab,hbc,pc->ha", r, C, W, xq) / len(labels)
    gW = 2 * np.einsum("p,ha,pab,pc->hbc", r, v, C, xq) / len(labels)
    return loss, gv, gW


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="also time the full run (a few minutes)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("--quick",), ("--heads", "3", "--dims", "3", "--quick")] + ([()] if args.full else [])
        for i, extra in enumerate(runs):
            t0 = time.perf_counter()
            before = os.times()
            env = dict(os.environ, AG_ATTENTION_CACHE_DIR=f"{tmp}/cache{i}")  # no cached ED count
            proc = subprocess.run(
                [sys.executable, "-m", "ag_attention", "reproduce", "icl", *extra, "--out", f"{tmp}/icl{i}", "--quiet"],
                capture_output=True,
                text=True,
                env=env,
            )
            after = os.times()
            cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
            print(
                f"reproduce icl {' '.join(extra) or '(full)'}: {time.perf_counter() - t0:.1f} s wall, {cpu:.1f} s "
                f"CPU (exit {proc.returncode}; target for --quick: 120 s)"
            )
    # one gradient step, both ways, on the quick setting's training set
    s = QUICK
    rng = np.random.default_rng(0)
    D, N, P, H = s.D, s.N, s.train, s.heads_separate[0]
    lam = np.array([float(x) for x in eigenvalues(D)])
    x = rng.standard_normal((P, N + 1, D)) * np.sqrt(lam)
    w = rng.standard_normal((P, D))
    y = np.einsum("pnd,pd->pn", x, w)
    tokens = np.concatenate([x, y[..., None]], axis=2)
    labels = tokens[:, -1, D].copy()
    tokens[:, -1, D] = 0.0
    n = D + 1
    v = rng.standard_normal((H, n))
    W = rng.standard_normal((H, n, n))
    t0 = time.perf_counter()
    loss_t, gv_t, gW_t = token_level_step(tokens, labels, v, W, N)
    token_seconds = time.perf_counter() - t0
    Z = features(tokens, N)
    t0 = time.perf_counter()
    G, b, c0 = Z.T @ Z / P, Z.T @ labels / P, float(labels @ labels / P)
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    reps = 200
    for _ in range(reps):
        theta = np.einsum("ha,hbc->abc", v, W).ravel()
        Gt = G @ theta
        loss_q = c0 - 2 * b @ theta + theta @ Gt
        g = (2 * (Gt - b)).reshape(n, n, n)
        gv_q = np.einsum("abc,hbc->ha", g, W)
        gW_q = np.einsum("abc,ha->hbc", g, v)
    quad_seconds = (time.perf_counter() - t0) / reps
    diff = max(
        float(np.max(np.abs(gv_q - gv_t)) / np.max(np.abs(gv_t))),
        float(np.max(np.abs(gW_q - gW_t)) / np.max(np.abs(gW_t))),
    )
    print(
        f"one gradient step, {P:,} sequences of {N + 1} tokens, {H} heads: quadratic form {quad_seconds * 1e3:.3f} ms "
        f"(after a {setup:.2f} s Gram matrix) against token by token {token_seconds * 1e3:.1f} ms "
        f"({token_seconds / quad_seconds:,.0f} times); losses {loss_q:.6f} / {loss_t:.6f}, gradients differ by "
        f"{diff:.1e} (relative)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
