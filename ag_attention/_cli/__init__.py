"""Command-line interface ``ag-attention``: argument parsing and printing only.

Exit status: 0 success, 1 a computation or check failed, 2 bad arguments,
3 Macaulay2 or msolve problem (not found, timed out, error).

One module per command group: :mod:`.algebra` (``dim``, ``fibers``, ``implicitize``, ``degree``), :mod:`.point`,
:mod:`.landscape` (``ed-degree``, ``critical-points``), :mod:`.m2` (``m2 doctor``), :mod:`.reproduce`; what they
share in :mod:`.common`.  This module is the front door: :func:`build_parser` and :func:`main` (the console script
``ag-attention = ag_attention._cli:main``).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from collections.abc import Sequence

from .._errors import AgAttentionError, ComputationTimeoutError, InvalidArgumentError, M2Error, MSolveError, OutputError
from .._progress import interval, quiet
from .._version import __version__
from . import algebra, landscape, m2, point, reproduce
from .common import EXIT_FAILED, EXIT_M2, EXIT_OUTPUT, EXIT_USAGE, Parser, with_provenance
from .reproduce import finish_report

__all__ = [
    "EXIT_FAILED",
    "EXIT_M2",
    "EXIT_OUTPUT",
    "EXIT_USAGE",
    "build_parser",
    "finish_report",
    "main",
    "with_provenance",
]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="ag-attention",
        description="Exact algebraic geometry of (lightning) self-attention networks.",
    )
    parser.add_argument("--version", action="version", version=f"ag-attention {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    algebra.add_parsers(sub)  # dim, fibers, implicitize, degree
    point.add_parsers(sub)
    landscape.add_parsers(sub)  # ed-degree, critical-points
    m2.add_parsers(sub)
    reproduce.add_parsers(sub)

    # deferred (imported by `import ag_attention` anyway): tests/test_layout.py checks its import graph counts a
    # deferred import as an edge on this one
    from .._sweep import add_parser as add_sweep_parser

    add_sweep_parser(sub)  # ag-attention sweep GRID.toml --out DIR [--scheduler ADDRESS] [--workers N] [--resume]
    return parser


def _stdout_problem() -> str | None:
    """Why nothing can be printed (standard output closed), or None: checked before any work."""
    if sys.stdout is None:
        return "standard output is closed"
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):  # no descriptor (a stream in memory: a test's capture): fine
        return None
    try:
        os.fstat(fd)
    except OSError as exc:
        return "standard output is closed" if exc.errno == errno.EBADF else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = _stdout_problem()
    if problem is not None:
        if sys.stderr is not None:
            print(f"ag-attention: error: {problem}: nothing could be printed (nothing was computed)", file=sys.stderr)
        return EXIT_OUTPUT
    try:
        interval()  # a bad AG_ATTENTION_PROGRESS_INTERVAL: refused (exit 2) before any work
        with quiet(args.quiet or args.json):
            status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler below
        return status
    except BrokenPipeError:
        # the reader went away (`... | head -1`): no traceback, and nothing more to write
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EBADF):
            raise
        # standard output cannot take the result (a full disk, /dev/full): said, no traceback
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(f"ag-attention: error: cannot write to standard output: {exc.strerror}", file=sys.stderr)
        return EXIT_OUTPUT
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
