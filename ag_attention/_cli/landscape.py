"""``ag-attention ed-degree`` and ``critical-points``: the loss landscape of one layer (ED degrees, the critical
points of a data set's squared loss)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._argtypes import integer, seconds
from .._errors import InvalidArgumentError
from .._landscape import CRITICAL_METHODS, ED_METHODS, METRICS, critical_points, ed_degree, landscape_estimate
from .._point import Network, read_arrays
from .common import (
    EXIT_M2,
    EXIT_OUTPUT,
    add_architecture,
    add_m2_options,
    add_output,
    architecture,
    emit,
    with_provenance,
)

__all__ = ["add_parsers", "cmd_critical_points", "cmd_ed_degree"]


def cmd_ed_degree(args: argparse.Namespace) -> int:
    arch = architecture(args)
    _landscape_estimate(arch, args, "ed-degree")
    result = ed_degree(
        arch,
        metric=args.metric,
        method=args.method,
        samples=args.samples,
        seed=args.seed,
        timeout=args.timeout,
        backend=args.backend,
        cache=not args.no_cache,
        workers=args.workers,
        scheduler=args.scheduler,
        save=args.save,
        resume=args.resume,
    )
    emit(args, result)
    return _saved(result, 0 if result.final else EXIT_M2)


def cmd_critical_points(args: argparse.Namespace) -> int:
    data = read_arrays(Path(args.data))
    missing = [k for k in ("inputs", "targets") if k not in data]
    if missing:
        raise InvalidArgumentError(
            f"{args.data}: no array named {missing[0]!r} (expected 'inputs', N x t x d, and "
            f"'targets', N x t x d'; found {', '.join(sorted(data)) or 'none'})"
        )
    X, Y = np.asarray(data["inputs"]), np.asarray(data["targets"])
    if X.ndim != 3 or Y.ndim != 3:
        raise InvalidArgumentError(
            f"{args.data}: 'inputs' and 'targets' must be 3-d (N x t x d and N x t x d'), got "
            f"shapes {X.shape} and {Y.shape}"
        )
    if args.tokens is not None and args.tokens != X.shape[1]:
        raise InvalidArgumentError(f"--tokens={args.tokens}, but the data's sequences have {X.shape[1]} tokens")
    args.tokens = X.shape[1]
    arch = architecture(args)
    if getattr(args, "compact", False) and not args.json:  # every option checked before the work
        raise InvalidArgumentError("--compact: only changes --json output (add --json)")
    weights = None
    if args.weights is not None:
        weights = Network.load(args.weights, tokens=arch.tokens, rank=None)
        if tuple(weights.architecture.widths) != tuple(arch.widths):
            raise InvalidArgumentError(
                f"--weights {args.weights}: widths {','.join(map(str, weights.architecture.widths))}, but the "
                f"layer is {','.join(map(str, arch.widths))} (--widths)"
            )
    _landscape_estimate(arch, args, "critical-points")
    result = critical_points(
        arch,
        list(X),
        list(Y),
        method=args.method,
        seed=args.seed,
        timeout=args.timeout,
        msolve_timeout=args.msolve_timeout,
        denominator=args.denominator,
        workers=args.workers,
        scheduler=args.scheduler,
        save=args.save,
        resume=args.resume,
        prime_seed=args.prime_seed,
    )
    near = None if weights is None else result.nearest(weights)
    if args.json:
        out = with_provenance(result.to_dict())
        if near is not None:
            out["nearest"] = near.to_dict()
        print(json.dumps(out, indent=None if args.compact else 2))
    else:
        print(result)
        if near is not None:
            print(f"  weights          {args.weights}: {near}")
    return _saved(result, 0 if result.final else EXIT_M2)


def _saved(result: Any, status: int) -> int:
    """``status``, or :data:`EXIT_OUTPUT` with the reason on stderr when the state file (``--save``) could not be
    written: the result is printed before, never lost."""
    why = (getattr(result, "monodromy", None) or {}).get("save_error")
    if why:
        print(f"ag-attention: the state was not saved: {why}", file=sys.stderr)
        return EXIT_OUTPUT
    return status


def _landscape_estimate(arch: Architecture, args: argparse.Namespace, command: str) -> None:
    """The size of the problem and what bounds it, on standard error before the work starts."""
    if getattr(args, "json", False) or getattr(args, "quiet", False):
        return
    print(
        f"ag-attention: {command}: {landscape_estimate(arch, args.timeout, args.workers, args.scheduler)}",
        file=sys.stderr,
    )


def add_parsers(sub: Any) -> None:
    """``ed-degree`` and ``critical-points``, in this order."""
    _add_ed_command(sub)
    _add_critical_command(sub)


def _add_ed_command(sub: Any) -> None:
    p = sub.add_parser(
        "ed-degree",
        help="ED degree of one layer's closure: the critical points of a squared loss (msolve, Macaulay2)",
        description="The number of complex critical points of x -> (x - u)^T G (x - u) on the smooth points of the "
        "closure of one lightning layer (t >= 2), for generic u: G the identity on the reduced "
        "coordinates (euclidean), a random form (generic), or the Gram form of the squared loss on "
        "random data (data). docs/math/landscape.md",
    )
    add_architecture(p, allow_normalized=False)
    p.add_argument(
        "--metric",
        choices=list(METRICS),
        default="generic",
        help="the form the distance is measured with (default generic)",
    )
    p.add_argument(
        "--samples",
        type=integer("--samples", minimum=1),
        default=None,
        help="input sequences of the data metric (default: a few more than make its form invertible)",
    )
    p.add_argument(
        "--method",
        choices=["auto", *(m for m in ED_METHODS if m != "auto")],  # the default first, as --help always listed it
        default="auto",
        help="count: the critical equations in the weights, counted by msolve over two primes "
        "(probabilistic); monodromy: homotopy continuation, every solution certified (a proven lower "
        "bound); m2: Lagrange conditions on Macaulay2's closure ideal; auto (default): monodromy and "
        "count side by side",
    )
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed of the data, forms and slices")
    add_m2_options(
        p,
        timeout_help="seconds for the whole computation (monodromy, certification, the msolve counts "
        "beside it; the Macaulay2 route: its job and count); default 300. At the limit "
        "the result says NOT DECIDED with its proven bounds, exit 3",
    )
    _add_scale_options(p)
    add_output(p)
    p.set_defaults(func=cmd_ed_degree)


def _add_critical_command(sub: Any) -> None:
    p = sub.add_parser(
        "critical-points",
        help="every critical point of a data set's squared loss on one layer, classified",
        description="The critical points of L(A, V) = sum_n |f(X_n) - Y_n|^2 for one lightning layer and the data "
        "of FILE.npz (arrays 'inputs', N x t x d, and 'targets', N x t x d'; floats by their exact "
        "binary value, any scale): their number (certified by homotopy continuation and the Krawczyk "
        "test, a proven lower bound; counted by msolve, probabilistic), the real ones with their loss and "
        "class (minimum, saddle), and with --weights, the one a trained network sits nearest to. "
        "docs/math/landscape.md",
    )
    g = p.add_argument_group("architecture")
    g.add_argument("--widths", required=True, help="d,d' (one layer)")
    g.add_argument("--ranks", help="a, the bound on rank A (default: A free)")
    g.add_argument("--tokens", "-t", type=integer("--tokens"), default=None, help="tokens (default: the data's)")
    g.add_argument("--causal", action="store_true", help="causal mask")
    p.set_defaults(parametrization=None, heads=1, skip=False)
    p.add_argument("--data", required=True, help="a .npz file with arrays 'inputs' and 'targets'")
    p.add_argument(
        "--weights",
        default=None,
        help="a one-layer network (.npz or .safetensors, as for `point`): which critical point it sits at",
    )
    p.add_argument(
        "--method",
        choices=CRITICAL_METHODS,
        default="auto",
        help="homotopy: monodromy and a parameter homotopy, every solution certified (Krawczyk); msolve: "
        "real root isolation over QQ and a count modulo two primes; auto (default): both, checked "
        "against each other",
    )
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed of the slices and the monodromy")
    p.add_argument(
        "--prime-seed",
        type=integer("--prime-seed"),
        default=None,
        help="seed of msolve's counting primes, drawn with the data's SHA-256 (default: fresh entropy, recorded "
        "in the result; give it to reproduce the primes)",
    )
    p.add_argument(
        "--timeout",
        type=seconds("--timeout"),
        default=300.0,
        help="seconds for the whole computation (default 300); at the limit the result says NOT FINAL "
        "and keeps what was found, exit 3",
    )
    p.add_argument(
        "--msolve-timeout",
        type=seconds("--msolve-timeout"),
        default=None,
        help="seconds per msolve job (default 60 with --method auto, --timeout with --method msolve)",
    )
    p.add_argument(
        "--denominator",
        type=integer("--denominator"),
        default=None,
        help="round every float to the nearest multiple of 1/N (default: its exact binary value)",
    )
    _add_scale_options(p)
    add_output(p)
    p.set_defaults(func=cmd_critical_points)


def _add_scale_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scale out and keep (the monodromy)")
    g.add_argument(
        "--workers",
        type=integer("--workers"),
        default=None,
        help="worker processes of a local Dask cluster on 127.0.0.1 for the paths and certifications (1: "
        "this process; default: this process when the estimate is under 2 minutes, else one per "
        "core)",
    )
    g.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="a running Dask scheduler (tcp://HOST:PORT): its workers track the paths",
    )
    g.add_argument(
        "--save",
        default=None,
        metavar="FILE",
        help="keep the monodromy's state in FILE (written atomically every minute and at the end)",
    )
    g.add_argument(
        "--resume",
        default=None,
        metavar="FILE",
        help="continue the monodromy saved in FILE (the same size, form, data and seed)",
    )
