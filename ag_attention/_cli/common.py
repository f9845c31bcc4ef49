"""What the commands share: the parser class, the architecture and output options, printing a result with its
provenance, and the exit statuses."""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction
from typing import Any, NoReturn

from .._architecture import PARAMETRIZATIONS, Architecture, parse_sizes
from .._argtypes import integer, positive_float, seconds
from .._errors import InvalidArgumentError
from .._m2 import BACKENDS
from .._positions import Rotary
from .._provenance import provenance

__all__ = [
    "EXIT_FAILED",
    "EXIT_USAGE",
    "EXIT_M2",
    "EXIT_OUTPUT",
    "ESTIMATE_FROM_PARAMETERS",
    "Parser",
    "add_architecture",
    "add_m2_options",
    "add_output",
    "architecture",
    "emit",
    "with_provenance",
]

EXIT_FAILED, EXIT_USAGE, EXIT_M2, EXIT_OUTPUT = 1, 2, 3, 4
#: ``point`` and ``dim`` print their estimated time and memory before the work from this many parameters on
ESTIMATE_FROM_PARAMETERS = 1024


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own errors: status 2, to stderr
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def add_architecture(p: argparse.ArgumentParser, *, allow_normalized: bool = True) -> None:
    g = p.add_argument_group("architecture")
    g.add_argument("--widths", required=True, help="d_0,...,d_L, e.g. 4,4,4")
    g.add_argument("--ranks", help="a_1,...,a_L (omit with --parametrization AV)")
    g.add_argument("--tokens", "-t", type=integer("--tokens"), default=2, help="sequence length t (default 2)")
    g.add_argument("--parametrization", choices=PARAMETRIZATIONS, default=None, help="QKV (default) or AV (A free)")
    g.add_argument("--heads", type=integer("--heads"), default=1, help="attention heads per layer (default 1)")
    g.add_argument("--skip", action="store_true", help="skip connections x_i + phi(X)_i")
    g.add_argument("--causal", action="store_true", help="causal mask: token i attends to tokens j <= i only")
    g.add_argument(
        "--bias",
        default="",
        metavar="LETTERS",
        help="biases on the projections, letters of qkvo (e.g. qkvo: GPT-2, BERT; qkv: Qwen2): affine attention, "
        "docs/math/affine.md",
    )
    g.add_argument(
        "--rope",
        type=positive_float("--rope"),
        default=None,
        metavar="BASE",
        help="rotary positions with this base (rope_theta, e.g. 10000): docs/math/rotary.md",
    )
    g.add_argument(
        "--rotary-dims",
        type=integer("--rotary-dims"),
        default=None,
        metavar="D",
        help="with --rope: the first D coordinates of each head turn (partial rotary; default all)",
    )
    if allow_normalized:
        g.add_argument(
            "--normalized",
            action="store_true",
            help="softmax attention (float64; certified by ball arithmetic up to 400 parameters)",
        )
        g.add_argument(
            "--temperature",
            type=positive_float("--temperature"),
            default=None,
            help="softmax temperature (default 1; needs --normalized)",
        )


def architecture(args: argparse.Namespace) -> Architecture:
    widths = parse_sizes(args.widths, "widths")
    # an empty --ranks is an error (parse_sizes says so), not "A free"
    parametrization = args.parametrization or ("QKV" if args.ranks is not None else "AV")
    ranks = parse_sizes(args.ranks, "ranks") if args.ranks is not None else None
    temperature = getattr(args, "temperature", None)
    if temperature is not None and not getattr(args, "normalized", False):
        raise InvalidArgumentError(
            f"--temperature={temperature:g}: only softmax attention has a temperature (add --normalized)"
        )
    rope, dims = getattr(args, "rope", None), getattr(args, "rotary_dims", None)  # critical-points has neither
    if dims is not None and rope is None:
        raise InvalidArgumentError(f"--rotary-dims={dims}: only with --rope BASE")
    return Architecture(
        widths,
        ranks,
        tokens=args.tokens,
        parametrization=parametrization,
        heads=args.heads,
        skip=args.skip,
        causal=args.causal,
        normalized=getattr(args, "normalized", False),
        temperature=1.0 if temperature is None else temperature,
        bias=getattr(args, "bias", ""),
        positions=None if rope is None else Rotary(Fraction(rope), dims),
    )


def _engines(d: dict[str, Any]) -> dict[str, str | None]:
    """The external engines a result's dictionary says it used (Macaulay2, msolve), with their versions."""
    m2 = d.get("m2_version")
    if m2 is None and isinstance(d.get("m2"), dict):
        m2 = d["m2"].get("m2_version")
    msolve = d.get("msolve") if isinstance(d.get("msolve"), str) else None
    return {"macaulay2": m2, "msolve": msolve}


def with_provenance(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` with a ``provenance`` object (:func:`ag_attention._provenance`) unless it carries one already."""
    if "provenance" in d:
        return d
    return {**d, "provenance": provenance(**_engines(d))}


def emit(args: argparse.Namespace, result: Any, *, allow_nan: bool = True) -> None:
    """Print ``result``: its JSON with ``--json`` (``allow_nan=False``: a NaN or infinity is an error, never
    invalid JSON), else its summary."""
    if getattr(args, "compact", False) and not getattr(args, "json", False):
        raise InvalidArgumentError("--compact: only changes --json output (add --json)")
    if getattr(args, "json", False):
        print(
            json.dumps(
                with_provenance(result.to_dict()),
                indent=None if args.compact else 2,
                sort_keys=False,
                allow_nan=allow_nan,
            )
        )
    else:
        print(result)


def add_output(p: argparse.ArgumentParser, compact: bool = True) -> None:
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print one JSON object (and no progress)")
    if compact:
        g.add_argument("--compact", action="store_true", help="with --json: one line")
    g.add_argument(
        "--quiet", "-q", action="store_true", help="no progress (a bar on a terminal after 2 s, else a line every 10 s)"
    )


def add_m2_options(p: argparse.ArgumentParser, timeout_help: str = "seconds per Macaulay2 job (default 300)") -> None:
    g = p.add_argument_group("Macaulay2")
    g.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="local (M2 on PATH), wheel (passagemath-macaulay2 in this Python), container (the image), or auto: the "
        "first of them that works",
    )
    g.add_argument("--timeout", type=seconds("--timeout"), default=300.0, help=timeout_help)
    g.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
