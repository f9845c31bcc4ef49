"""``ag-attention m2 doctor``: which Macaulay2 backends work here."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .._m2 import doctor  # doctor.doctor looked up when used: tests replace it
from .common import EXIT_M2, Parser, add_output, with_provenance

__all__ = ["add_parsers", "cmd_m2_doctor"]


def cmd_m2_doctor(args: argparse.Namespace) -> int:
    report = doctor.doctor()
    if args.json:
        print(json.dumps(with_provenance(report.to_dict()), indent=2))
    else:
        print(report)
    return 0 if report.ok else EXIT_M2


def add_parsers(sub: Any) -> None:
    """``m2`` and its sub-command ``doctor``."""
    p = sub.add_parser("m2", help="Macaulay2 backends")
    m2sub = p.add_subparsers(dest="m2_command", metavar="M2COMMAND", parser_class=Parser)
    m2sub.required = True
    d = m2sub.add_parser("doctor", help="which Macaulay2 backends work here, with versions")
    add_output(d, compact=False)
    d.set_defaults(func=cmd_m2_doctor)
