"""``ag-attention reproduce WHAT``: reproduce a result of the paper, writing its report (report.md, report.json and
its figures)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from .._argtypes import integer, nonempty, seconds
from .._errors import InvalidArgumentError, OutputError
from .._m2.runner import BACKENDS
from .common import EXIT_FAILED, EXIT_OUTPUT, add_output, with_provenance

__all__ = ["REPRODUCE_HELP", "add_parsers", "cmd_reproduce", "finish_report"]

#: default seconds per Macaulay2 job of `reproduce theorem-3.4`
M2_TIMEOUT = 900.0

THEOREM_34_OPTIONS = ("--max-m2-size", "--backend", "--m2-timeout", "--no-m2", "--full")

ICL_OPTIONS = ("dims", "heads", "context", "steps")  # reproduce icl only


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
    from .._reproduce.report import rescue

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


def cmd_reproduce(args: argparse.Namespace) -> int:
    import time

    from .._reproduce.report import output_directory, pyplot

    started = time.time()
    _check_options(args)
    output_directory(args.out)  # before any computation: a bad --out fails at once
    if args.what in ("figure-3", "theorem-3.4", "open-questions", "training", "landscape", "icl"):
        pyplot()  # the pictures need matplotlib
    if args.what == "corollary-3.8":
        from .._reproduce.corollary38 import GRID, QUICK_GRID, reproduce_corollary_38

        report = reproduce_corollary_38(QUICK_GRID if args.quick else GRID, seed=args.seed)
    elif args.what == "figure-3":
        from .._reproduce.figure3 import reproduce_figure_3

        report = reproduce_figure_3(args.out, seed=args.seed, deltas=range(3, 7) if args.quick else range(3, 11))
    elif args.what == "certification":
        from .._reproduce.certification import reproduce_certification

        mode = "quick" if args.quick else ("wide" if args.wide else "standard")
        report = reproduce_certification(args.out, mode=mode, seed=args.seed)
    elif args.what == "training":
        from .._reproduce.training import reproduce_training

        report = reproduce_training(args.out, quick=args.quick, seed=args.seed)
    elif args.what == "related":
        from .._reproduce.related import reproduce_related

        report = reproduce_related(args.out, quick=args.quick, seed=args.seed)
    elif args.what == "icl":
        from .._reproduce.icl import LIMITS, reproduce_icl

        sizes = {name: getattr(args, name) for name in ICL_OPTIONS}
        for name, value in sizes.items():
            low, high = LIMITS[name]
            if value is not None and not low <= value <= high:
                raise InvalidArgumentError(f"--{name}={value}: must be an integer in {low}..{high:,}")
        report = reproduce_icl(args.out, quick=args.quick, seed=args.seed, **sizes)
    elif args.what == "landscape":
        from .._reproduce.landscape import reproduce_landscape

        report = reproduce_landscape(args.out, quick=args.quick, seed=args.seed)
    elif args.what == "open-questions":
        from .._reproduce.open_questions import reproduce_open_questions

        report = reproduce_open_questions(args.out, quick=args.quick, seed=args.seed)
    elif args.what == "theorem-3.4":
        report = _theorem_34(args)
    else:  # pragma: no cover - argparse restricts the choices
        raise InvalidArgumentError(f"unknown reproduction {args.what!r}")
    status = finish_report(report, args.out, as_json=args.json, since=started)
    if args.what == "theorem-3.4":
        from .._reproduce import theorem34 as t34

        t34.raise_for_m2_errors(report)  # a Macaulay2 item timed out or failed: exit 3, after the report is written
    return status


def _check_options(args: argparse.Namespace) -> None:
    """Refuse the options that do not apply to ``reproduce WHAT`` (exit 2), before any work."""
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


def _theorem_34(args: argparse.Namespace) -> Any:
    """``reproduce theorem-3.4``: its options, its run (the report)."""
    from pathlib import Path

    from .._reproduce import theorem34 as t34

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
    return t34.reproduce_theorem_34(opts, progress=lines)


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


def add_parsers(sub: Any) -> None:
    """``reproduce``, with its options."""
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
    g.add_argument("--backend", choices=BACKENDS, default=None, help="Macaulay2 backend (default auto)")
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
    add_output(p, compact=False)
    p.set_defaults(func=cmd_reproduce)
