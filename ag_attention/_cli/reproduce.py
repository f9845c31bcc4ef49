"""``ag-attention reproduce WHAT``: reproduce a result of the paper, writing its report (report.md, report.json and
its figures).

The reproductions are the table :data:`ag_attention._reproduce.registry.REPRODUCTIONS`: the choices of ``WHAT``,
``reproduce WHAT --help`` and the dispatch read it when the parser is built and when the command runs.  The options
of particular reproductions (``--wide``, the icl sizes, theorem-3.4's Macaulay2 options) are arguments here; a
reproduction lists those that apply to it (:attr:`~ag_attention._reproduce.registry.Reproduction.options`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._argtypes import integer, nonempty, seconds
from .._errors import InvalidArgumentError, OutputError
from .._m2 import BACKENDS
from .._reproduce import M2_TIMEOUT, Reproduction, Request, output_directory, pyplot, registry, rescue
from .common import EXIT_FAILED, EXIT_OUTPUT, add_output, with_provenance

__all__ = ["OWN_OPTIONS", "add_parsers", "cmd_reproduce", "finish_report"]

#: the options only some reproductions take (default None: given when not None), in the order the parser defines
#: them and the command checks them
OWN_OPTIONS = (
    "--wide",
    "--dims",
    "--heads",
    "--context",
    "--steps",
    "--max-m2-size",
    "--backend",
    "--m2-timeout",
    "--no-m2",
    "--full",
)


def _written(out: Any, since: float | None) -> list[str]:
    """The files of ``out`` (recursively) written by this run: modified at or after ``since`` (every file when
    ``since`` is None), so the list names what is there, figures and tables included."""
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
    started = time.time()
    entry = registry.REPRODUCTIONS[args.what]
    if args.out is None:
        args.out = entry.out
    _check_options(args, entry)
    output_directory(args.out)  # before any computation: a bad --out fails at once
    if entry.figures:
        pyplot()  # the pictures need matplotlib
    report = entry.run(_request(args))
    status = finish_report(report, args.out, as_json=args.json, since=started)
    if entry.after is not None:
        entry.after(report)  # e.g. a Macaulay2 item timed out or failed: exit 3, after the report is written
    return status


def _dest(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def _check_options(args: argparse.Namespace, entry: Reproduction) -> None:
    """Refuse the options that do not apply to ``reproduce WHAT`` (exit 2), before any work."""
    if args.seed < 0:
        raise InvalidArgumentError(f"--seed={args.seed}: must be a non-negative integer")
    if args.full and args.quick:
        raise InvalidArgumentError("--full and --quick: choose one")
    if args.quick and "--quick" not in entry.options:
        raise InvalidArgumentError(f"--quick: {_only_for('--quick')}, not {args.what}")
    for option in OWN_OPTIONS:
        if getattr(args, _dest(option)) is None:
            continue
        if option not in entry.options:
            raise InvalidArgumentError(f"{option}: {_only_for(option)}, not {args.what}")
        if option == "--wide" and args.quick:
            raise InvalidArgumentError("--wide and --quick: choose one")


def _only_for(option: str) -> str:
    """``only for `reproduce theorem-3.4``` (every reproduction that takes ``option``)."""
    names = [f"`reproduce {name}`" for name, r in registry.REPRODUCTIONS.items() if option in r.options]
    return f"only for {' and '.join(names)}" if names else "for no reproduction"


def _request(args: argparse.Namespace) -> Request:
    """What the command line asks of the reproduction: ``--out``, ``--quick``, ``--seed``, the options only some
    take, and a log's one line per item."""
    # a terminal gets the progress bar; a log (CI) gets one line per item instead
    lines = (
        None
        if args.json or args.quiet or sys.stderr.isatty()
        else (lambda s: print(f"  {s}", file=sys.stderr, flush=True))
    )
    options = {_dest(option): getattr(args, _dest(option)) for option in OWN_OPTIONS}
    return Request(args.out, quick=args.quick, seed=args.seed, options=options, progress=lines)


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
        if what in registry.REPRODUCTIONS:
            print(_help_of(registry.REPRODUCTIONS[what]))
        else:
            parser.print_help()
        parser.exit()


def _help_of(entry: Reproduction) -> str:
    """``reproduce WHAT --help``: what the reproduction does, where it writes, the options that apply."""
    usage = " ".join([f"[{option}]" for option in ("--out DIR", *entry.options, "--json", "--quiet")])
    return (
        f"usage: ag-attention reproduce {entry.name} {usage}\n\n{entry.name}: {entry.help}.\n"
        f"Writes report.md, report.json (and its figures) into --out (default {entry.out}).\n"
        f"Options that apply: {', '.join([*entry.options, '--out', '--json', '--quiet'])}.\n"
        "Every option: ag-attention reproduce --help"
    )


def add_parsers(sub: Any) -> None:
    """``reproduce``, with its options."""
    p = sub.add_parser(
        "reproduce", help="reproduce a result of the paper, writing report.md and report.json", add_help=False
    )
    p.add_argument("-h", "--help", action=_ReproduceHelp, help="show this help (after WHAT: that result's) and exit")
    p.add_argument(
        "what",
        choices=list(registry.REPRODUCTIONS),  # read when the parser is built
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
