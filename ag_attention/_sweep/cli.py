"""``ag-attention sweep GRID.toml --out DIR``: the command line of :func:`ag_attention._sweep.sweep`.

:func:`add_parser` adds the ``sweep`` command to ``ag-attention``'s
subparsers (``ag_attention._cli`` imports this module, never the other way
round); :func:`main` runs it on its own (``python -m ag_attention._sweep
GRID.toml --out DIR``), with the same parser, messages and exit statuses as
``ag-attention sweep`` (tests/sweep/test_cli.py compares them): 0
every row computed, 1 some row or the cluster failed (the finished rows are
kept: ``--resume`` completes the run), 2 bad arguments (a message naming the
value, on standard error; also ``--resume`` with another grid), 4 a file could
not be written (a full disk, a symbolic link planted in DIR: the message names
the file), 130 interrupted.  Stored lines set aside on ``--resume`` are said
on standard error (``ag-attention: warning: ...``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from .._argtypes import integer, seconds
from .._errors import AgAttentionError, InvalidArgumentError, M2Error, MSolveError, OutputError
from .._progress import interval, quiet
from .._provenance import provenance
from .run import DEFAULT_TIMEOUT, sweep
from .store import JournalWarning

__all__ = ["add_parser", "cmd_sweep", "main"]

#: ``ag-attention``'s exit statuses (``ag_attention._cli``)
EXIT_FAILED, EXIT_USAGE, EXIT_M2, EXIT_OUTPUT, EXIT_INTERRUPTED = 1, 2, 3, 4, 130


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``sweep`` to an ``add_subparsers()`` object; the parser (its ``func`` is :func:`cmd_sweep`)."""

    p: argparse.ArgumentParser = subparsers.add_parser(
        "sweep",
        help="dimensions of every architecture of a grid file, into DIR/results.parquet",
        description="Compute the dimension of every architecture of a grid file (TOML: [[architecture]] tables "
        "and [product] ranges: the docs page 'Sweep grid files', docs/grid.md) on all local cores or a "
        "Dask cluster, "
        "streaming rows to DIR (crash-safe, resumable), then DIR/results.parquet, summary.md, "
        "summary.json and dimension-vs-formula.png/.pdf/.svg.",
    )
    p.add_argument("grid", help="grid file (TOML)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument(
        "--scheduler", default=None, metavar="ADDRESS", help="Dask scheduler tcp://HOST:PORT (default: local processes)"
    )
    p.add_argument(
        "--workers",
        type=integer("--workers"),
        default=None,
        metavar="N",
        help="local: processes (default: all cores); Dask: workers to wait for (default 1)",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--resume",
        action="store_true",
        help="complete the run in DIR: keep its finished rows, compute the rest (the same grid, prime and "
        "seed: another grid is refused with exit 2, use --overwrite); stored lines that are not "
        "valid rows are moved to DIR/journal.rejected, with a warning",
    )
    g.add_argument("--overwrite", action="store_true", help="delete the results in DIR first")
    p.add_argument("--prime", type=integer("--prime"), default=None, help="prime p < 2^31 (default 2^31 - 1)")
    p.add_argument("--seed", type=integer("--seed"), default=0, help="random seed of every row (default 0)")
    p.add_argument(
        "--timeout",
        type=seconds("--timeout"),
        default=DEFAULT_TIMEOUT,
        help="seconds to wait for the scheduler to answer and connect, for its workers, and through a "
        f"loss of all of them (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument("--no-plots", action="store_true", help="no dimension-vs-formula plots")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print one JSON object (and no progress)")
    o.add_argument(
        "--quiet", "-q", action="store_true", help="no progress (a bar on a terminal after 2 s, else a line every 10 s)"
    )
    p.set_defaults(func=cmd_sweep)
    return p


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run the sweep of ``args``; print the summary (or JSON); 1 if a row failed."""

    kwargs: dict[str, Any] = {}
    if args.prime is not None:
        kwargs["prime"] = args.prime
    if args.seed < 0:
        raise InvalidArgumentError(f"--seed={args.seed}: must be a non-negative integer")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", JournalWarning)
        try:
            result = sweep(
                args.grid,
                args.out,
                scheduler=args.scheduler,
                workers=args.workers,
                resume=args.resume,
                overwrite=args.overwrite,
                seed=args.seed,
                timeout=args.timeout,
                plots=not args.no_plots,
                **kwargs,
            )
        finally:  # rows set aside are said on stderr as a warning of the command, also when the run fails
            for w in caught:
                if issubclass(w.category, JournalWarning):
                    print(f"ag-attention: warning: {w.message}", file=sys.stderr)
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if args.json:
        print(json.dumps({**result.to_dict(), "provenance": provenance()}, indent=2))
    else:
        print(result)
    if result.errors:
        print(
            f"ag-attention: {result.errors} architecture(s) failed: see the error column of {result.results}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ag_attention._sweep GRID --out DIR ...``: ``ag-attention sweep`` (the same parser, messages and
    exit statuses, as ``ag_attention._cli.main`` gives them)."""
    parser = argparse.ArgumentParser(prog="ag-attention")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["sweep", *(sys.argv[1:] if argv is None else argv)])  # its errors: exit 2
    try:
        interval()  # a bad AG_ATTENTION_PROGRESS_INTERVAL: refused (exit 2) before any work
        with quiet(args.quiet or args.json):
            status = cmd_sweep(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler below
        return status
    except BrokenPipeError:  # the reader went away: nothing more to write
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except (InvalidArgumentError, OutputError) as exc:  # bad arguments; a file that could not be written
        print(f"ag-attention: error: {exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, InvalidArgumentError) else EXIT_OUTPUT
    except (M2Error, MSolveError) as exc:  # (a sweep runs neither)
        print(f"ag-attention: {'Macaulay2' if isinstance(exc, M2Error) else 'msolve'}: {exc}", file=sys.stderr)
        return EXIT_M2
    except AgAttentionError as exc:
        print(f"ag-attention: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("ag-attention: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
