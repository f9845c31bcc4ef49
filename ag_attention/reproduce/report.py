"""Reports of reproductions: one row per check, written as Markdown and JSON.

A :class:`Check` records a claim of the paper, the case it was checked on,
the method, the expected and observed values and the verdict.  A
:class:`Report` collects checks (and free-form tables), and writes
``report.md`` and ``report.json`` (top-level ``passed`` and ``checks``).
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError

__all__ = ["Check", "Report", "Table", "output_directory", "pyplot"]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, (list, tuple)):
        return ",".join(_fmt(x) for x in v)
    if v is None:
        return "-"
    return str(v).replace("|", "\\|").replace("\n", " ")


@dataclass
class Check:
    claim: str
    case: str
    method: str
    expected: Any
    observed: Any
    passed: bool
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "case": self.case,
            "method": self.method,
            "expected": self.expected,
            "observed": self.observed,
            "passed": bool(self.passed),
            "seconds": round(self.seconds, 3),
            "details": self.details,
        }


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""

    def to_markdown(self) -> str:
        out = [f"### {self.title}", ""]
        if self.note:
            out += [self.note, ""]
        out.append("| " + " | ".join(self.columns) + " |")
        out.append("|" + "---|" * len(self.columns))
        out += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in self.rows]
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "columns": self.columns, "rows": self.rows, "note": self.note}


@dataclass
class Report:
    title: str
    summary: str = ""
    checks: list[Check] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.time)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "passed": self.passed,
            "summary": self.summary,
            "checks": [c.to_dict() for c in self.checks],
            "failures": [f"{c.claim} [{c.case}]" for c in self.failures],
            "findings": self.findings,
            "tables": [t.to_dict() for t in self.tables],
            "meta": {**self.meta, "python": platform.python_version(), "seconds": round(time.time() - self.started, 2)},
        }

    def to_markdown(self) -> str:
        n, bad = len(self.checks), len(self.failures)
        out = [f"# {self.title}", ""]
        verdict = "PASSED" if self.passed else f"FAILED ({bad} of {n} checks)"
        out += [f"**{verdict}**: {n} checks, {time.time() - self.started:.1f} s.", ""]
        if self.summary:
            out += [self.summary, ""]
        if self.meta:
            out += ["Run: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in self.meta.items()), ""]
        if self.findings:
            out += ["## Findings", ""] + [f"- {f}" for f in self.findings] + [""]
        if self.checks:
            out += ["## Checks", "", "| claim | case | method | expected | observed | verdict | seconds |", "|---|---|---|---|---|---|---|"]
            for c in self.checks:
                out.append(
                    f"| {_fmt(c.claim)} | {_fmt(c.case)} | {_fmt(c.method)} | {_fmt(c.expected)} | "
                    f"{_fmt(c.observed)} | {'pass' if c.passed else '**FAIL**'} | {c.seconds:.2f} |"
                )
            out.append("")
        for t in self.tables:
            out.append(t.to_markdown())
        return "\n".join(out)

    def write(self, out_dir: str | os.PathLike[str]) -> Path:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        _atomic_write(out / "report.json", json.dumps(self.to_dict(), indent=2, default=str) + "\n")
        _atomic_write(out / "report.md", self.to_markdown())
        return out


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def output_directory(path: str | os.PathLike[str]) -> Path:
    """``path`` as a writable directory (created if needed), or an error naming it."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test.{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise InvalidArgumentError(f"--out={str(path)!r}: not a writable directory ({exc.strerror or exc})") from None
    return out


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, or an error saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise InvalidArgumentError(
            "the pictures need matplotlib: pip install 'ag-attention[plot]' (or pip install matplotlib)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt

