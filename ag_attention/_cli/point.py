"""``ag-attention point``: the geometry of a network at its own weights (a weight file or a checkpoint)."""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from typing import Any

from .. import _clock
from .._argtypes import integer, positive_float, seconds
from .._errors import AgAttentionError, InvalidArgumentError
from .._point import (
    MODELS,
    Network,
    estimate_point,
    exact_parameter_limit,
    load_head_table,
    point_geometry,
    read_names_file,
)
from .._point import plot as point_plot  # looked up when used: tests replace plot_point
from .._positions import Rotary
from .common import ESTIMATE_FROM_PARAMETERS, EXIT_M2, EXIT_USAGE, add_output, emit

__all__ = ["add_parsers", "cmd_point"]


def _read_names(path: str) -> dict[str, str]:
    """A ``--names`` file: a JSON object of source tensor name -> ``layers.<l>.<q|k|v|o>`` (a regular file of at
    most 1 MiB: :func:`ag_attention._point.checkpoints.read_names_file`)."""
    return read_names_file(path)


def cmd_point(args: argparse.Namespace) -> int:
    if args.normalized and args.model == "lightning":
        raise InvalidArgumentError("--normalized and --as lightning: choose one")
    normalized = True if args.normalized else None if args.model is None else args.model == "normalized"
    if args.temperature is not None and not normalized:
        raise InvalidArgumentError("--temperature: only with softmax attention, said explicitly (--as normalized)")
    plot = None
    if args.plot is not None:
        plot = point_plot.check_plot_path(args.plot)  # before the work: a figure that cannot be written is said now
    names = None
    if args.names is not None:
        names = _read_names(args.names)
    if args.per_head:  # every head from its factors, at any size: no Jacobian, no rational converted
        return _per_head(args, names, normalized, plot)
    if args.csv is not None:
        raise InvalidArgumentError(f"--csv {args.csv}: the per-head table's; give --per-head too")
    net = Network.load(
        args.weights,
        tokens=args.tokens,
        rank=args.rank,
        causal=args.causal,
        positions=_positions(args),
        skip=args.skip,
        normalized=normalized,
        temperature=args.temperature or 1.0,
        denominator=args.denominator,
        heads=args.heads,
        names=names,
        max_parameters=exact_parameter_limit(),
        biases=not args.no_biases,
    )
    arch = net.architecture
    if arch.parameter_count >= ESTIMATE_FROM_PARAMETERS:  # lightning: the exact ranks; softmax: the float64 rank
        est = estimate_point(net, args.samples)
        print(
            f"ag-attention: point: {arch.describe()}, {arch.parameter_count:,} parameters: {est.describe()}"
            + ("" if args.timeout is None else f"; --timeout {args.timeout:g} s"),
            file=sys.stderr,
        )
    with _clock.interruptible():  # Ctrl-C (or SIGTERM) as a deadline: the steps that finished are printed
        g = point_geometry(
            net,
            seed=args.seed,
            samples=args.samples,
            rtol=args.rtol,
            numerical=True if plot is not None else None,
            timeout=args.timeout,
        )
    emit(args, g, allow_nan=False)  # first: a figure that fails never loses the result
    if not g.final:  # a partial result: printed, then said, exit 3
        print(f"ag-attention: point: NOT FINISHED: {g.stopped}", file=sys.stderr)
        return EXIT_M2
    return 0 if plot is None else _plot_after(lambda: point_plot.plot_point(g, plot), plot, "report", "spectrum plot")


def _positions(args: argparse.Namespace) -> Rotary | None:
    """The rotary positions ``--rope-theta`` (``--rotary-dims``) give, or None (the file's config decides)."""
    if args.rope_theta is None:
        if args.rotary_dims is not None:
            raise InvalidArgumentError(f"--rotary-dims={args.rotary_dims}: only with --rope-theta")
        return None
    return Rotary(Fraction(args.rope_theta), args.rotary_dims)


def _per_head(args: argparse.Namespace, names: dict[str, str] | None, normalized: bool | None, plot: Any) -> int:
    """``point --per-head``: the per-head table (:mod:`ag_attention._point.heads`), and its heads x layers figure."""
    table = load_head_table(
        args.weights,
        heads=args.heads,
        names=names,
        normalized=normalized,
        rtol=args.rtol,
        biases=not args.no_biases,
        gap_rtol=args.gap_rtol,
        positions=_positions(args),
    )
    emit(args, table, allow_nan=False)
    if args.csv is not None:
        written = table.write_csv(args.csv)
        print(f"ag-attention: the per-head table ({len(table.heads)} rows) written to {written}", file=sys.stderr)
    return 0 if plot is None else _plot_after(lambda: table.plot(plot), plot, "table", "heads x layers figure")


def _plot_after(draw: Any, plot: Any, printed: str, figure: str) -> int:
    """Draw ``--plot`` after the printed result: a failure (matplotlib's own errors included) is an exit-2
    message that loses nothing, the result being printed already."""
    sys.stdout.flush()
    try:
        written = draw()
    except Exception as exc:
        reason = str(exc) if isinstance(exc, AgAttentionError) else f"{type(exc).__name__}: {exc}"
        print(
            f"ag-attention: error: --plot {plot}: not written ({reason}); the {printed} above is complete",
            file=sys.stderr,
        )
        return EXIT_USAGE
    print(f"ag-attention: {figure} written to {written}", file=sys.stderr)
    return 0


def add_parsers(sub: Any) -> None:
    """``point``, with its options."""
    p = sub.add_parser(
        "point",
        help="geometry at given weights: local rank, critical or not, fiber, Theorem 3.4 (one layer)",
        description="The geometry of a network at its own weights, read from a .npz, .safetensors, or (PyTorch's "
        "torch.load(weights_only=True)) .pt/.bin file, arrays named layers.{l}.heads.{h}.{Q,K,V} (or .A "
        "with --rank), l and h from 0, or saved as checkpoints are "
        "(MultiheadAttention in_proj_weight/out_proj, q_proj/k_proj/v_proj/o_proj with grouped-query "
        "attention, BERT query/key/value, GPT-2 Conv1D c_attn/c_proj, fused Wqkv/qkv_proj; --heads, "
        "--names FILE): each head's V is W_O,h W_v,h. Floats "
        "become their exact binary value in their own format, bf16 and fp8 included (or multiples of 1/N "
        "with --denominator N).",
    )
    p.add_argument("weights", help="a .npz, .safetensors, .pt or .bin file")
    p.add_argument(
        "--tokens",
        "-t",
        type=integer("--tokens"),
        default=None,
        help="sequence length t (required unless the .safetensors file's __metadata__ gives tokens)",
    )
    p.add_argument("--rank", type=integer("--rank"), default=None, help="the bound a on rank A, when the file gives A")
    p.add_argument(
        "--heads",
        type=integer("--heads"),
        default=None,
        help="heads per layer (default: the file's __metadata__ heads, or its names'; a contradiction is "
        "refused): required when a checkpoint's layout leaves it open",
    )
    p.add_argument(
        "--names",
        default=None,
        metavar="FILE",
        help="a JSON mapping of the file's tensor names to layers.<l>.<q|k|v|o> (a regular file of at most 1 MiB)",
    )
    p.add_argument(
        "--causal",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a causal mask (default: the model's own: a decoder's config or layout, e.g. GPT-2, LLaMA, is causal, an "
        "encoder's is not; --no-causal drops it)",
    )
    p.add_argument(
        "--rope-theta",
        type=positive_float("--rope-theta"),
        default=None,
        metavar="BASE",
        help="rotary positions with this base (rope_theta), for a file without its config.json (docs/math/rotary.md)",
    )
    p.add_argument(
        "--rotary-dims",
        type=integer("--rotary-dims"),
        default=None,
        metavar="D",
        help="with --rope-theta: the first D coordinates of each head turn (partial rotary; default: all)",
    )
    p.add_argument("--skip", action="store_true", help="skip connections")
    p.add_argument(
        "--csv",
        default=None,
        metavar="FILE",
        help="with --per-head: also write the per-head table as CSV, one row per head (written atomically)",
    )
    p.add_argument(
        "--gap-rtol",
        type=positive_float("--gap-rtol"),
        default=1e-6,
        help="with --per-head: two singular values whose relative gap is at most this are near-equal (their "
        "singular vectors not identifiable at that precision; default 1e-6: random heads have none)",
    )
    p.add_argument(
        "--no-biases",
        action="store_true",
        help="read the paper's model without biases: exactly zero biases dropped, a nonzero one refused (default: "
        "the projections' biases are part of the model, affine attention, docs/math/affine.md)",
    )
    _add_model_options(p)
    _add_work_options(p)
    add_output(p)
    p.set_defaults(func=cmd_point)


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """``point``'s model: ``--as``, ``--normalized``, ``--temperature``, ``--denominator``."""
    p.add_argument(
        "--as",
        dest="model",
        choices=MODELS,
        default=None,
        help="the model analysed: normalized (softmax) or lightning (softmax removed). Default: the model "
        "the layout was trained as: normalized for every checkpoint layout (MultiheadAttention, "
        "q_proj/..., BERT, GPT-2, fused), lightning for the package's names and a --names mapping",
    )
    p.add_argument("--normalized", action="store_true", help="softmax attention (float64 only): --as normalized")
    p.add_argument(
        "--temperature",
        type=positive_float("--temperature"),
        default=None,
        help="softmax temperature (default 1, times sqrt(d_h) for a checkpoint's score scale; needs --as normalized)",
    )
    p.add_argument(
        "--denominator",
        type=integer("--denominator"),
        default=None,
        help="round every float to the nearest multiple of 1/N (default: its exact binary value)",
    )


def _add_work_options(p: argparse.ArgumentParser) -> None:
    """``point``'s work: the samples, tolerance and time limit, ``--per-head`` and ``--plot``."""
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed of the sample inputs (default 0)")
    p.add_argument(
        "--samples", type=integer("--samples", minimum=1), default=None, help="input sequences (default: automatic)"
    )
    p.add_argument(
        "--rtol",
        type=positive_float("--rtol"),
        default=1e-3,
        help="relative tolerance of the float64 verdicts: the numerical rank, and for one layer "
        "near-singular / near-critical (default 1e-3; the exact verdicts do not depend on it)",
    )
    p.add_argument(
        "--timeout",
        type=seconds("--timeout"),
        default=None,
        help="seconds for the whole computation (default: none); stops inside the ranks and prints what the "
        "finished steps found (final: false, NOT FINISHED naming the step), exit 3; so does Ctrl-C. The "
        "estimated time and memory are printed first for networks of 1,024 parameters or more",
    )
    p.add_argument(
        "--per-head",
        action="store_true",
        help="only every head's geometry, at any size (GPT-2-small's 144 heads in seconds): exact ranks "
        "of A_h = W_q,h^T W_k,h and V_h = W_O,h W_v,h, singular values, near-equal blocks, dead and "
        "near-dead heads, distances to the rank strata at --rtol, the verdicts the head ranks prove; "
        "with --plot, a heads x layers figure (no --tokens needed)",
    )
    p.add_argument(
        "--plot",
        default=None,
        metavar="FILE",
        help="draw the Jacobian's singular values (and for one layer those of A and V) into FILE, in the "
        "format of its suffix: .png (150 dpi) or the vector formats .pdf and .svg (for papers: sharp at "
        "any size); computes the float64 spectrum if it was not. FILE is checked before the work, the "
        "report printed before the figure is drawn (a figure that fails: exit 2)",
    )
