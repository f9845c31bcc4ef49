"""``ag-attention dim``, ``fibers``, ``implicitize`` and ``degree``: the algebra of a neuromanifold (its dimension,
generic fibers, equations and degree)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._algebra import EQUATION_METHODS, closure_equations, degree
from .._algebra import METHODS as DEGREE_METHODS
from .._argtypes import integer, seconds
from .._errors import InvalidArgumentError
from .._exact import default_prime, dimension, estimate_dimension, fibers, long_sequences
from .._models import COORDINATES, PARAMETERS
from .._numeric import numerical_dimension
from .common import ESTIMATE_FROM_PARAMETERS, add_architecture, add_m2_options, add_output, architecture, emit

__all__ = ["add_parsers", "cmd_degree", "cmd_dim", "cmd_fibers", "cmd_implicitize"]


def cmd_dim(args: argparse.Namespace) -> int:
    arch = architecture(args)
    if arch.normalized:
        if args.prime is not None:
            raise InvalidArgumentError(
                f"--prime={args.prime}: normalized attention is computed in float64, not over GF(p)"
            )
        if args.timeout is not None:
            raise InvalidArgumentError(
                f"--timeout={args.timeout:g}: the float64 computation of normalized attention "
                "has no time limit (only the exact GF(p) one stops at --timeout)"
            )
        emit(args, numerical_dimension(arch, seed=args.seed, samples=args.samples))
        return 0
    kwargs: dict[str, Any] = {"seed": args.seed, "samples": args.samples, "timeout": args.timeout}
    if args.prime is not None:
        kwargs["prime"] = args.prime
    # said first, on a terminal or not (issue 30, T1): many parameters, or long sequences (t x t work)
    if arch.parameter_count >= ESTIMATE_FROM_PARAMETERS or long_sequences(arch, args.samples):
        prime = default_prime(arch) if args.prime is None else args.prime
        est = estimate_dimension(arch, prime, args.samples)
        print(
            f"ag-attention: dim: {arch.depth} layer{'s' if arch.depth > 1 else ''}, {arch.parameter_count:,} "
            f"parameters: {est.describe()}" + ("" if args.timeout is None else f"; --timeout {args.timeout:g} s"),
            file=sys.stderr,
        )
    emit(args, dimension(arch, **kwargs))
    return 0


def cmd_fibers(args: argparse.Namespace) -> int:
    arch = architecture(args)
    if arch.normalized:
        raise InvalidArgumentError("--normalized: the fiber check is exact and needs lightning attention")
    emit(args, fibers(arch, prime=args.prime, seed=args.seed))
    return 0


def cmd_implicitize(args: argparse.Namespace) -> int:
    result = closure_equations(
        architecture(args),
        method=args.method,
        max_degree=args.max_degree,
        coords=args.coords,
        field=args.field,
        weights=args.weights,
        backend=args.backend,
        timeout=args.timeout,
        cache=not args.no_cache,
        completeness=not args.no_completeness,
        completeness_timeout=args.completeness_timeout,
    )
    emit(args, result)
    return 0


def cmd_degree(args: argparse.Namespace) -> int:
    arch = architecture(args)
    emit(args, degree(arch, method=args.method, timeout=args.timeout, backend=args.backend, cache=not args.no_cache))
    return 0


def add_parsers(sub: Any) -> None:
    """``dim``, ``fibers``, ``implicitize`` and ``degree``, in this order."""
    _add_dim_command(sub)
    _add_fibers_command(sub)
    _add_implicitize_command(sub)
    _add_degree_command(sub)


def _add_dim_command(sub: Any) -> None:
    p = sub.add_parser(
        "dim",
        help="dimension of the neuromanifold (exact over GF(p))",
        description="Dimension of the neuromanifold: exact GF(p) Jacobian rank with a certificate.",
    )
    add_architecture(p)
    p.add_argument(
        "--prime",
        type=integer("--prime"),
        default=None,
        help="prime p < 2^31 (default 2^31 - 1; from 1,024 parameters 2097143, below 2^21: the BLAS rank)",
    )
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed (default 0)")
    p.add_argument(
        "--samples", type=integer("--samples", minimum=1), default=None, help="input sequences N (default: automatic)"
    )
    p.add_argument(
        "--timeout",
        type=seconds("--timeout"),
        default=None,
        help="seconds for the whole computation (default: none); stops inside the Jacobian and the ranks, "
        "exit 3. The estimated time and memory are printed first from 1,024 parameters or for long "
        "sequences (GF(p) only)",
    )
    add_output(p)
    p.set_defaults(func=cmd_dim)


def _add_fibers_command(sub: Any) -> None:
    p = sub.add_parser(
        "fibers",
        help="generic fibers vs. the symmetry families (Thm. 3.7), exact over GF(p)",
        description="Kernel of the Jacobian at a random point against the span of the symmetry tangents.",
    )
    add_architecture(p, allow_normalized=False)
    p.add_argument("--prime", type=integer("--prime"), default=None, help="prime p < 2^31 (default 2^31 - 1)")
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed (default 0)")
    add_output(p)
    p.set_defaults(func=cmd_fibers)


def _add_implicitize_command(sub: Any) -> None:
    p = sub.add_parser(
        "implicitize",
        help="Zariski closure of a one-layer neuromanifold (Macaulay2)",
        description="Ideal of the Zariski closure of the neuromanifold of one lightning layer, by Macaulay2.",
    )
    add_architecture(p, allow_normalized=False)
    p.add_argument("--coords", choices=COORDINATES, default="reduced", help="coordinates (default reduced)")
    p.add_argument("--field", default="QQ", help="QQ (default) or ZZ/p, e.g. ZZ/32003")
    p.add_argument("--weights", choices=PARAMETERS, default=None, help="weight ring (default AV)")
    p.add_argument(
        "--method",
        choices=EQUATION_METHODS,
        default="kernel",
        help="kernel: Macaulay2's kernel, the whole ideal (default); interpolate: all minimal generators "
        "up to --max-degree by exact interpolation per multidegree, then msolve's length test of "
        "completeness; auto: interpolation to degree 2, 3, ... until certified complete, else the kernel",
    )
    p.add_argument(
        "--max-degree",
        type=integer("--max-degree"),
        default=None,
        help="with --method interpolate (default 3) or auto (default 4)",
    )
    p.add_argument(
        "--no-completeness",
        action="store_true",
        help="with --method interpolate: skip the completeness tests (generators 'up to degree k')",
    )
    p.add_argument(
        "--completeness-timeout",
        type=seconds("--completeness-timeout"),
        default=None,
        help="seconds for the completeness tests together (default: --timeout)",
    )
    add_m2_options(p)
    add_output(p)
    p.set_defaults(func=cmd_implicitize)


def _add_degree_command(sub: Any) -> None:
    p = sub.add_parser(
        "degree",
        help="degree of the Zariski closure of one layer (formula, msolve count, Macaulay2)",
        description="Degree of the closure of one plain lightning layer: the proven formula "
        "(docs/math/degree.md), a GF(p) count of a linear section with msolve (two primes), "
        "or Macaulay2's kernel; auto = formula, confirmed by a count where that is fast.",
    )
    add_architecture(p, allow_normalized=False)
    p.add_argument("--method", choices=DEGREE_METHODS, default="auto", help="default auto")
    add_m2_options(p)
    add_output(p)
    p.set_defaults(func=cmd_degree)
