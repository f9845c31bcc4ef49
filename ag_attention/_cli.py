"""Command-line interface ``ag-attention``: argument parsing and printing only.

Exit status: 0 success, 1 a computation or check failed, 2 bad arguments,
3 Macaulay2 or msolve problem (not found, timed out, error).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ._architecture import Architecture, parse_sizes
from ._argtypes import integer, nonempty, positive_float, seconds
from ._errors import AgAttentionError, ComputationTimeoutError, InvalidArgumentError, M2Error, MSolveError, OutputError
from ._point.checkpoints import MODELS
from ._progress import quiet
from ._provenance import provenance
from ._version import __version__

EXIT_FAILED, EXIT_USAGE, EXIT_M2, EXIT_OUTPUT = 1, 2, 3, 4
#: ``point`` and ``dim`` print their estimated time and memory before the work from this many parameters on
ESTIMATE_FROM_PARAMETERS = 1024
#: default seconds per Macaulay2 job of `reproduce theorem-3.4`
M2_TIMEOUT = 900.0
THEOREM_34_OPTIONS = ("--max-m2-size", "--backend", "--m2-timeout", "--no-m2", "--full")
ICL_OPTIONS = ("dims", "heads", "context", "steps")  # reproduce icl only


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own errors: status 2, to stderr
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _add_architecture(p: argparse.ArgumentParser, *, allow_normalized: bool = True) -> None:
    g = p.add_argument_group("architecture")
    g.add_argument("--widths", required=True, help="d_0,...,d_L, e.g. 4,4,4")
    g.add_argument("--ranks", help="a_1,...,a_L (omit with --parametrization AV)")
    g.add_argument("--tokens", "-t", type=integer("--tokens"), default=2, help="sequence length t (default 2)")
    g.add_argument("--parametrization", choices=["QKV", "AV"], default=None, help="QKV (default) or AV (A free)")
    g.add_argument("--heads", type=integer("--heads"), default=1, help="attention heads per layer (default 1)")
    g.add_argument("--skip", action="store_true", help="skip connections x_i + phi(X)_i")
    g.add_argument("--causal", action="store_true", help="causal mask: token i attends to tokens j <= i only")
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


def _architecture(args: argparse.Namespace) -> Architecture:
    widths = parse_sizes(args.widths, "widths")
    # an empty --ranks is an error (parse_sizes says so), not "A free"
    parametrization = args.parametrization or ("QKV" if args.ranks is not None else "AV")
    ranks = parse_sizes(args.ranks, "ranks") if args.ranks is not None else None
    temperature = getattr(args, "temperature", None)
    if temperature is not None and not getattr(args, "normalized", False):
        raise InvalidArgumentError(
            f"--temperature={temperature:g}: only softmax attention has a temperature (add --normalized)"
        )
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


def _emit(args: argparse.Namespace, result: Any, *, allow_nan: bool = True) -> None:
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


# ----------------------------------------------------------------- commands
def cmd_dim(args: argparse.Namespace) -> int:
    arch = _architecture(args)
    if arch.normalized:
        from ._numeric import numerical_dimension

        if args.prime is not None:
            raise InvalidArgumentError(
                f"--prime={args.prime}: normalized attention is computed in float64, not over GF(p)"
            )
        if args.timeout is not None:
            raise InvalidArgumentError(
                f"--timeout={args.timeout:g}: the float64 computation of normalized attention "
                "has no time limit (only the exact GF(p) one stops at --timeout)"
            )
        _emit(args, numerical_dimension(arch, seed=args.seed, samples=args.samples))
        return 0
    from ._exact.cost import estimate_dimension, long_sequences
    from ._exact.dimension import default_prime, dimension

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
    _emit(args, dimension(arch, **kwargs))
    return 0


def _written(out: Any, since: float | None) -> list[str]:
    """The files of ``out`` (recursively) written by this run: modified at or after ``since`` (every file when
    ``since`` is None), so the list names what is there, figures and tables included."""
    from pathlib import Path

    root = Path(out)
    names = []
    for path in sorted(root.rglob("*")):
        try:
            st = path.lstat()
        except OSError:
            continue
        if path.is_file() and not path.is_symlink() and (since is None or st.st_mtime >= since - 1):
            names.append(str(path.relative_to(root)))
    return names


def finish_report(report: Any, out_dir: str, *, as_json: bool = False, since: float | None = None) -> int:
    """Write ``report`` under ``out_dir``, print its summary (or JSON) and the files, name every failed check
    on stderr; the exit status: 0 passed, 1 a check failed, 4 the report could not be written there (it is then
    written to a new temporary directory, or printed as JSON on standard output: nothing computed is lost)."""
    from ._reproduce.report import rescue

    try:
        out = report.write(out_dir)
    except OutputError as exc:
        saved = rescue(report, exc)
        if saved is not None:
            print(f"ag-attention: error: {exc}; the report was written to {saved} instead", file=sys.stderr)
        else:
            print(
                f"ag-attention: error: {exc}, and no temporary directory could hold it either: the report "
                "follows on standard output as JSON",
                file=sys.stderr,
            )
            print(json.dumps(with_provenance(report.to_dict()), indent=2, default=str))
        return EXIT_OUTPUT
    missing = report.meta.get("not_written") or []
    if as_json:
        print(json.dumps(with_provenance(report.to_dict()), indent=2, default=str))
    else:
        n = len(report.checks)
        print(f"{report.title}: {'PASSED' if report.passed else 'FAILED'} ({n} checks)")
        for f in report.findings:
            print(f"  finding: {f}")
        print(f"written to {out}: {', '.join(_written(out, since))}")
    for c in report.failures:
        print(f"FAILED: {c.claim} [{c.case}]: expected {c.expected}, observed {c.observed}", file=sys.stderr)
    for text in missing:  # a figure or a file of the run that could not be written (the report has the rest)
        print(f"ag-attention: error: {text}", file=sys.stderr)
    if missing:
        return EXIT_OUTPUT
    return 0 if report.passed else EXIT_FAILED


def _read_names(path: str) -> dict[str, str]:
    """A ``--names`` file: a JSON object of source tensor name -> ``layers.<l>.<q|k|v|o>`` (a regular file of at
    most 1 MiB: :func:`ag_attention._point.checkpoints.read_names_file`)."""
    from ._point.checkpoints import read_names_file

    return read_names_file(path)


def cmd_point(args: argparse.Namespace) -> int:
    from ._point import Network, point_geometry

    if args.normalized and args.model == "lightning":
        raise InvalidArgumentError("--normalized and --as lightning: choose one")
    normalized = True if args.normalized else None if args.model is None else args.model == "normalized"
    if args.temperature is not None and not normalized:
        raise InvalidArgumentError("--temperature: only with softmax attention, said explicitly (--as normalized)")
    plot = None
    if args.plot is not None:
        from ._point.plot import check_plot_path, plot_point

        plot = check_plot_path(args.plot)  # before the work: a figure that cannot be written is said now
    names = None
    if args.names is not None:
        names = _read_names(args.names)
    if args.per_head:  # every head from its factors, at any size: no Jacobian, no rational converted
        return _per_head(args, names, normalized, plot)
    from ._point.weights import exact_parameter_limit

    net = Network.load(
        args.weights,
        tokens=args.tokens,
        rank=args.rank,
        causal=args.causal,
        skip=args.skip,
        normalized=normalized,
        temperature=args.temperature or 1.0,
        denominator=args.denominator,
        heads=args.heads,
        names=names,
        max_parameters=exact_parameter_limit(),
    )
    arch = net.architecture
    if not arch.normalized and arch.parameter_count >= ESTIMATE_FROM_PARAMETERS:
        from ._point.estimate import estimate_point

        est = estimate_point(net, args.samples)
        print(
            f"ag-attention: point: {arch.describe()}, {arch.parameter_count:,} parameters: {est.describe()}"
            + ("" if args.timeout is None else f"; --timeout {args.timeout:g} s"),
            file=sys.stderr,
        )
    g = point_geometry(
        net,
        seed=args.seed,
        samples=args.samples,
        rtol=args.rtol,
        numerical=True if plot is not None else None,
        timeout=args.timeout,
    )
    _emit(args, g, allow_nan=False)  # first: a figure that fails never loses the result
    return 0 if plot is None else _plot_after(lambda: plot_point(g, plot), plot, "report", "spectrum plot")


def _per_head(args: argparse.Namespace, names: dict[str, str] | None, normalized: bool | None, plot: Any) -> int:
    """``point --per-head``: the per-head table (:mod:`ag_attention._point.heads`), and its heads x layers figure."""
    from ._point.heads import load_head_table

    table = load_head_table(args.weights, heads=args.heads, names=names, normalized=normalized, rtol=args.rtol)
    _emit(args, table, allow_nan=False)
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


def cmd_critical_points(args: argparse.Namespace) -> int:
    from pathlib import Path

    import numpy as np

    from ._landscape import critical_points
    from ._point.weights import Network, read_arrays

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
    arch = _architecture(args)
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
    )
    near = None
    if args.weights is not None:
        near = result.nearest(Network.load(args.weights, tokens=arch.tokens, rank=None))
    if getattr(args, "compact", False) and not args.json:
        raise InvalidArgumentError("--compact: only changes --json output (add --json)")
    if args.json:
        out = with_provenance(result.to_dict())
        if near is not None:
            out["nearest"] = near.to_dict()
        print(json.dumps(out, indent=None if args.compact else 2))
    else:
        print(result)
        if near is not None:
            print(f"  weights          {args.weights}: {near}")
    return 0 if result.final else EXIT_M2


def cmd_ed_degree(args: argparse.Namespace) -> int:
    from ._landscape import ed_degree

    arch = _architecture(args)
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
    _emit(args, result)
    return 0 if result.final else EXIT_M2


def _landscape_estimate(arch: Architecture, args: argparse.Namespace, command: str) -> None:
    """The size of the problem and what bounds it, on standard error before the work starts."""
    from ._landscape.estimate import landscape_estimate

    if getattr(args, "json", False) or getattr(args, "quiet", False):
        return
    print(
        f"ag-attention: {command}: {landscape_estimate(arch, args.timeout, args.workers, args.scheduler)}",
        file=sys.stderr,
    )


def cmd_fibers(args: argparse.Namespace) -> int:
    from ._exact.fibers import fibers

    arch = _architecture(args)
    if arch.normalized:
        raise InvalidArgumentError("--normalized: the fiber check is exact and needs lightning attention")
    _emit(args, fibers(arch, prime=args.prime, seed=args.seed))
    return 0


def cmd_implicitize(args: argparse.Namespace) -> int:
    from ._algebra.equations import closure_equations

    result = closure_equations(
        _architecture(args),
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
    _emit(args, result)
    return 0


def cmd_degree(args: argparse.Namespace) -> int:
    from ._algebra.closure_degree import degree

    arch = _architecture(args)
    _emit(args, degree(arch, method=args.method, timeout=args.timeout, backend=args.backend, cache=not args.no_cache))
    return 0


def cmd_m2_doctor(args: argparse.Namespace) -> int:
    from ._m2.doctor import doctor

    report = doctor()
    if args.json:
        print(json.dumps(with_provenance(report.to_dict()), indent=2))
    else:
        print(report)
    return 0 if report.ok else EXIT_M2


def cmd_reproduce(args: argparse.Namespace) -> int:
    import time

    from ._reproduce.report import output_directory, pyplot

    started = time.time()
    if args.seed < 0:
        raise InvalidArgumentError(f"--seed={args.seed}: must be a non-negative integer")
    if args.full and args.quick:
        raise InvalidArgumentError("--full and --quick: choose one")
    if args.wide and args.what != "certification":
        raise InvalidArgumentError(f"--wide: only for `reproduce certification`, not {args.what}")
    if args.wide and args.quick:
        raise InvalidArgumentError("--wide and --quick: choose one")
    if args.what != "icl":
        for name in ICL_OPTIONS:
            if getattr(args, name) is not None:
                raise InvalidArgumentError(f"--{name}: only for `reproduce icl`, not {args.what}")
    if args.what != "theorem-3.4":
        for option in THEOREM_34_OPTIONS:
            if getattr(args, option.lstrip("-").replace("-", "_")) is not None:
                raise InvalidArgumentError(f"{option}: only for `reproduce theorem-3.4`, not {args.what}")
    output_directory(args.out)  # before any computation: a bad --out fails at once
    if args.what in ("figure-3", "theorem-3.4", "open-questions", "training", "landscape", "icl"):
        pyplot()  # the pictures need matplotlib
    if args.what == "corollary-3.8":
        from ._reproduce.corollary38 import GRID, QUICK_GRID, reproduce_corollary_38

        report = reproduce_corollary_38(QUICK_GRID if args.quick else GRID, seed=args.seed)
    elif args.what == "figure-3":
        from ._reproduce.figure3 import reproduce_figure_3

        report = reproduce_figure_3(args.out, seed=args.seed, deltas=range(3, 7) if args.quick else range(3, 11))
    elif args.what == "certification":
        from ._reproduce.certification import reproduce_certification

        mode = "quick" if args.quick else ("wide" if args.wide else "standard")
        report = reproduce_certification(args.out, mode=mode, seed=args.seed)
    elif args.what == "training":
        from ._reproduce.training import reproduce_training

        report = reproduce_training(args.out, quick=args.quick, seed=args.seed)
    elif args.what == "related":
        from ._reproduce.related import reproduce_related

        report = reproduce_related(args.out, quick=args.quick, seed=args.seed)
    elif args.what == "icl":
        from ._reproduce.icl import LIMITS, reproduce_icl

        sizes = {name: getattr(args, name) for name in ICL_OPTIONS}
        for name, value in sizes.items():
            low, high = LIMITS[name]
            if value is not None and not low <= value <= high:
                raise InvalidArgumentError(f"--{name}={value}: must be an integer in {low}..{high:,}")
        report = reproduce_icl(args.out, quick=args.quick, seed=args.seed, **sizes)
    elif args.what == "landscape":
        from ._reproduce.landscape import reproduce_landscape

        report = reproduce_landscape(args.out, quick=args.quick, seed=args.seed)
    elif args.what == "open-questions":
        from ._reproduce.open_questions import reproduce_open_questions

        report = reproduce_open_questions(args.out, quick=args.quick, seed=args.seed)
    elif args.what == "theorem-3.4":
        from pathlib import Path

        from ._reproduce import theorem34 as t34

        if args.max_m2_size is None:
            m2_grid = t34.M2_GRID
        elif args.max_m2_size < 1:
            raise InvalidArgumentError(f"--max-m2-size={args.max_m2_size}: must be a positive number of coordinates")
        else:
            m2_grid = tuple(s for s in t34.M2_CANDIDATES if s.coordinates <= args.max_m2_size)
        opts = t34.Options(
            m2_grid=t34.QUICK_M2_GRID if args.quick else m2_grid,
            point_grid=t34.QUICK_POINT_GRID if args.quick else t34.POINT_GRID,
            equation_grid=(
                t34.QUICK_EQUATION_GRID if args.quick else t34.FULL_EQUATION_GRID if args.full else t34.EQUATION_GRID
            ),
            seed=args.seed,
            backend=args.backend or "auto",
            m2_timeout=M2_TIMEOUT if args.m2_timeout is None else args.m2_timeout,
            use_m2=not args.no_m2,
            out=Path(args.out),
        )
        # a terminal gets the progress bar; a log (CI) gets one line per item instead
        lines = (
            None
            if args.json or args.quiet or sys.stderr.isatty()
            else (lambda s: print(f"  {s}", file=sys.stderr, flush=True))
        )
        report = t34.reproduce_theorem_34(opts, progress=lines)
    else:  # pragma: no cover - argparse restricts the choices
        raise InvalidArgumentError(f"unknown reproduction {args.what!r}")
    status = finish_report(report, args.out, as_json=args.json, since=started)
    if args.what == "theorem-3.4":
        t34.raise_for_m2_errors(report)  # a Macaulay2 item timed out or failed: exit 3, after the report is written
    return status


def _add_point_command(sub: Any) -> None:
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
    p.add_argument("--causal", action="store_true", help="a causal mask")
    p.add_argument("--skip", action="store_true", help="skip connections")
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
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed of the sample inputs (default 0)")
    p.add_argument("--samples", type=integer("--samples"), default=None, help="input sequences (default: automatic)")
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
        help="seconds for the whole computation (default: none); stops inside the ranks, exit 3. The "
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
        help="draw the Jacobian's singular values (and for one layer those of A and V) into FILE "
        "(.png, .pdf or .svg); computes the float64 spectrum if it was not. FILE is checked before "
        "the work, the report printed before the figure is drawn (a figure that fails: exit 2)",
    )
    _add_output(p)
    p.set_defaults(func=cmd_point)


def _add_ed_command(sub: Any) -> None:
    p = sub.add_parser(
        "ed-degree",
        help="ED degree of one layer's closure: the critical points of a squared loss (msolve, Macaulay2)",
        description="The number of complex critical points of x -> (x - u)^T G (x - u) on the smooth points of the "
        "closure of one lightning layer (t >= 2), for generic u: G the identity on the reduced "
        "coordinates (euclidean), a random form (generic), or the Gram form of the squared loss on "
        "random data (data). docs/math/landscape.md",
    )
    _add_architecture(p, allow_normalized=False)
    p.add_argument(
        "--metric",
        choices=["euclidean", "generic", "data"],
        default="generic",
        help="the form the distance is measured with (default generic)",
    )
    p.add_argument(
        "--samples",
        type=integer("--samples"),
        default=None,
        help="input sequences of the data metric (default: a few more than make its form invertible)",
    )
    p.add_argument(
        "--method",
        choices=["auto", "count", "monodromy", "m2"],
        default="auto",
        help="count: the critical equations in the weights, counted by msolve over two primes "
        "(probabilistic); monodromy: homotopy continuation, every solution certified (a proven lower "
        "bound); m2: Lagrange conditions on Macaulay2's closure ideal; auto (default): monodromy and "
        "count side by side",
    )
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed of the data, forms and slices")
    _add_m2_options(
        p,
        timeout_help="seconds for the whole computation (monodromy, certification, the msolve counts "
        "beside it; the Macaulay2 route: its job and count); default 300. At the limit "
        "the result says NOT DECIDED with its proven bounds, exit 3",
    )
    _add_scale_options(p)
    _add_output(p)
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
        choices=["auto", "homotopy", "msolve"],
        default="auto",
        help="homotopy: monodromy and a parameter homotopy, every solution certified (Krawczyk); msolve: "
        "real root isolation over QQ and a count modulo two primes; auto (default): both, checked "
        "against each other",
    )
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed of the slices and the monodromy")
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
    _add_output(p)
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


def _add_output(p: argparse.ArgumentParser, compact: bool = True) -> None:
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print one JSON object (and no progress)")
    if compact:
        g.add_argument("--compact", action="store_true", help="with --json: one line")
    g.add_argument("--quiet", "-q", action="store_true", help="no progress bars (they show on a terminal after 2 s)")


def _add_m2_options(p: argparse.ArgumentParser, timeout_help: str = "seconds per Macaulay2 job (default 300)") -> None:
    g = p.add_argument_group("Macaulay2")
    g.add_argument(
        "--backend",
        choices=["auto", "local", "container"],
        default="auto",
        help="local M2, the container image, or auto (local if present)",
    )
    g.add_argument("--timeout", type=seconds("--timeout"), default=300.0, help=timeout_help)
    g.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")


def _add_dim_command(sub: Any) -> None:
    p = sub.add_parser(
        "dim",
        help="dimension of the neuromanifold (exact over GF(p))",
        description="Dimension of the neuromanifold: exact GF(p) Jacobian rank with a certificate.",
    )
    _add_architecture(p)
    p.add_argument(
        "--prime",
        type=integer("--prime"),
        default=None,
        help="prime p < 2^31 (default 2^31 - 1; from 1,024 parameters 2097143, below 2^21: the BLAS rank)",
    )
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed (default 0)")
    p.add_argument("--samples", type=integer("--samples"), default=None, help="input sequences N (default: automatic)")
    p.add_argument(
        "--timeout",
        type=seconds("--timeout"),
        default=None,
        help="seconds for the whole computation (default: none); stops inside the Jacobian and the ranks, "
        "exit 3. The estimated time and memory are printed first from 1,024 parameters or for long "
        "sequences (GF(p) only)",
    )
    _add_output(p)
    p.set_defaults(func=cmd_dim)


def _add_fibers_command(sub: Any) -> None:
    p = sub.add_parser(
        "fibers",
        help="generic fibers vs. the symmetry families (Thm. 3.7), exact over GF(p)",
        description="Kernel of the Jacobian at a random point against the span of the symmetry tangents.",
    )
    _add_architecture(p, allow_normalized=False)
    p.add_argument("--prime", type=integer("--prime"), default=None, help="prime p < 2^31 (default 2^31 - 1)")
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed (default 0)")
    _add_output(p)
    p.set_defaults(func=cmd_fibers)


def _add_implicitize_command(sub: Any) -> None:
    p = sub.add_parser(
        "implicitize",
        help="Zariski closure of a one-layer neuromanifold (Macaulay2)",
        description="Ideal of the Zariski closure of the neuromanifold of one lightning layer, by Macaulay2.",
    )
    _add_architecture(p, allow_normalized=False)
    p.add_argument("--coords", choices=["reduced", "full"], default="reduced", help="coordinates (default reduced)")
    p.add_argument("--field", default="QQ", help="QQ (default) or ZZ/p, e.g. ZZ/32003")
    p.add_argument("--weights", choices=["AV", "QKV"], default=None, help="weight ring (default AV)")
    p.add_argument(
        "--method",
        choices=["kernel", "interpolate", "auto"],
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
    _add_m2_options(p)
    _add_output(p)
    p.set_defaults(func=cmd_implicitize)


def _add_degree_command(sub: Any) -> None:
    p = sub.add_parser(
        "degree",
        help="degree of the Zariski closure of one layer (formula, msolve count, Macaulay2)",
        description="Degree of the closure of one plain lightning layer: the proven formula "
        "(docs/math/degree.md), a GF(p) count of a linear section with msolve (two primes), "
        "or Macaulay2's kernel; auto = formula, confirmed by a count where that is fast.",
    )
    _add_architecture(p, allow_normalized=False)
    p.add_argument("--method", choices=["auto", "formula", "count", "m2"], default="auto", help="default auto")
    _add_m2_options(p)
    _add_output(p)
    p.set_defaults(func=cmd_degree)


def _add_m2_command(sub: Any) -> None:
    p = sub.add_parser("m2", help="Macaulay2 backends")
    m2sub = p.add_subparsers(dest="m2_command", metavar="M2COMMAND", parser_class=_Parser)
    m2sub.required = True
    d = m2sub.add_parser("doctor", help="which Macaulay2 backends work here, with versions")
    _add_output(d, compact=False)
    d.set_defaults(func=cmd_m2_doctor)


#: what each reproduction does, and the options that apply to it (``reproduce WHAT --help``)
REPRODUCE_HELP = {
    "theorem-3.4": (
        "Theorem 3.4 (singular and boundary points of one layer): pointwise certificates on the candidate "
        "sizes and Macaulay2's closures",
        "--quick, --seed, --max-m2-size, --backend, --m2-timeout, --no-m2, --full",
    ),
    "corollary-3.8": ("Corollary 3.8 (and Cor. 3.3): exact dimensions against the formula", "--quick, --seed"),
    "figure-3": ("Figure 3: normalized and lightning networks, L = 2, t = 3, a_i = 2, d_i = delta", "--quick, --seed"),
    "open-questions": (
        "the open questions of Section 4: several heads, skip connections, causal masks, heads with a mask",
        "--quick, --seed",
    ),
    "certification": (
        "how many lightning dimensions are certified exact, per variant, and by which bound",
        "--quick, --wide, --seed",
    ),
    "training": ("training on the neuromanifold: where gradient descent ends, measured", "--quick, --seed"),
    "landscape": (
        "the loss landscape of one layer: ED degrees, critical points of 100 data sets, basins",
        "--quick, --seed",
    ),
    "related": ("published results about lightning attention, recomputed", "--quick, --seed"),
    "icl": (
        "training dynamics of in-context learning (Zhang, Singh, Latham, Saxe 2025): the plateaus of merged and "
        "separate key-query heads, predicted as critical values on the rank strata; heads added one at a time "
        "(Zhang, Saxe, Latham 2026)",
        "--quick, --seed, --dims, --heads, --context, --steps",
    ),
}


class _ReproduceHelp(argparse.Action):
    """``-h``: the reproduce help, and after ``WHAT`` what that reproduction does and which options apply."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: str = argparse.SUPPRESS,
        help: str | None = None,
    ) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        what = getattr(namespace, "what", None)
        if what in REPRODUCE_HELP:
            doc, options = REPRODUCE_HELP[what]
            print(
                f"usage: ag-attention reproduce {what} [--out DIR] [{options.replace(', ', '] [')}] [--json] "
                f"[--quiet]\n\n{what}: {doc}.\nWrites report.md, report.json (and its figures) into --out "
                f"(default results/{what}).\nOptions that apply: {options}, --out, --json, --quiet.\n"
                "Every option: ag-attention reproduce --help"
            )
        else:
            parser.print_help()
        parser.exit()


def _add_reproduce_command(sub: Any) -> None:
    p = sub.add_parser(
        "reproduce", help="reproduce a result of the paper, writing report.md and report.json", add_help=False
    )
    p.add_argument("-h", "--help", action=_ReproduceHelp, help="show this help (after WHAT: that result's) and exit")
    p.add_argument(
        "what",
        choices=[
            "theorem-3.4",
            "corollary-3.8",
            "figure-3",
            "open-questions",
            "certification",
            "training",
            "landscape",
            "related",
            "icl",
        ],
        help="which result",
    )
    p.add_argument("--out", type=nonempty("--out"), default=None, help="output directory (default results/WHAT)")
    p.add_argument("--quick", action="store_true", help="a smaller grid")
    p.add_argument("--seed", type=integer("--seed"), default=0)
    c = p.add_argument_group("certification only")
    c.add_argument(
        "--wide",
        action="store_true",
        default=None,
        help="also sweeps/certification-wide.toml (widths <= 4, heads <= 3: 41,220 networks)",
    )
    i = p.add_argument_group("icl only (any of them: the quick setting, or the full run's D = 4, with it replaced)")
    i.add_argument("--dims", type=integer("--dims"), default=None, help="input dimension D (default 4; 1..12)")
    i.add_argument(
        "--heads",
        type=integer("--heads"),
        default=None,
        help="rank-one heads of the saddle-to-saddle run, and merged heads (default 5, 2, 1 and 8)",
    )
    i.add_argument("--context", type=integer("--context"), default=None, help="context tokens N (default 31)")
    i.add_argument(
        "--steps",
        type=integer("--steps"),
        default=None,
        help="gradient steps of every run (default 3,000 merged, 60,000 separate)",
    )
    g = p.add_argument_group("theorem-3.4 only")
    g.add_argument(
        "--max-m2-size",
        type=integer("--max-m2-size"),
        default=None,
        help="Macaulay2 items on the candidate sizes with at most this many reduced coordinates "
        "(default: every size that finishes: up to 24, and d=3, d'=2, a=1 with 36)",
    )
    g.add_argument(
        "--backend", choices=["auto", "local", "container"], default=None, help="Macaulay2 backend (default auto)"
    )
    g.add_argument(
        "--m2-timeout",
        type=seconds("--m2-timeout"),
        default=None,
        help=f"seconds per Macaulay2 job (default {M2_TIMEOUT:g})",
    )
    g.add_argument(
        "--no-m2", action="store_true", default=None, help="skip the Macaulay2 items (pointwise certificates only)"
    )
    g.add_argument(
        "--full",
        action="store_true",
        default=None,
        help="also the larger sizes checked by the closure's equations ((4,1,4): about 70 s more)",
    )
    _add_output(p, compact=False)
    p.set_defaults(func=cmd_reproduce)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ag-attention",
        description="Exact algebraic geometry of (lightning) self-attention networks.",
    )
    parser.add_argument("--version", action="version", version=f"ag-attention {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    _add_dim_command(sub)
    _add_fibers_command(sub)
    _add_implicitize_command(sub)
    _add_degree_command(sub)
    _add_point_command(sub)
    _add_ed_command(sub)
    _add_critical_command(sub)
    _add_m2_command(sub)
    _add_reproduce_command(sub)

    from ._sweep.cli import add_parser as add_sweep_parser

    add_sweep_parser(sub)  # ag-attention sweep GRID.toml --out DIR [--scheduler ADDRESS] [--workers N] [--resume]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "out", "unset") is None:
        args.out = f"results/{args.what}"
    try:
        with quiet(args.quiet or args.json):
            status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler below
        return status
    except BrokenPipeError:
        # the reader went away (`... | head -1`): no traceback, and nothing more to write
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except InvalidArgumentError as exc:
        print(f"ag-attention: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except M2Error as exc:
        print(f"ag-attention: Macaulay2: {exc}", file=sys.stderr)
        return EXIT_M2
    except MSolveError as exc:  # the other external solver: the same exit status
        print(f"ag-attention: msolve: {exc}", file=sys.stderr)
        return EXIT_M2
    except OutputError as exc:  # a file could not be written (full disk, permission, planted link)
        print(f"ag-attention: error: {exc}", file=sys.stderr)
        return EXIT_OUTPUT
    except ComputationTimeoutError as exc:  # in-process work stopped at its --timeout: as an external job killed
        print(f"ag-attention: {exc}", file=sys.stderr)
        return EXIT_M2
    except AgAttentionError as exc:
        print(f"ag-attention: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("ag-attention: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
