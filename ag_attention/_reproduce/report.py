"""Reports of reproductions: one row per check, written as Markdown, JSON and (optionally) CSV.

A :class:`Check` records a claim of the paper, the case it was checked on,
the method, the expected and observed values and the verdict; for summaries
also the paper's result it is evidence for (a :class:`~.claims.Claim`), the
size ``(d, d', a)`` and short names of its techniques.  A :class:`Report`
collects checks, tables and findings, and writes ``report.md`` and
``report.json`` (top-level ``passed``, ``statements``, ``checks`` and
``provenance``).  A report with :class:`Verdict` rows opens with them (each
statement, its verdict, the sizes covered and the methods); with
``details_csv`` set, its checks go to that CSV beside the Markdown, which then
lists only the failed ones.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._algebra import msolve_version
from .._errors import AgAttentionError, ComputationError, InvalidArgumentError, OutputError
from .._figures import FORMATS, write_figures
from .._files import atomic_write, output_error, reserve
from .._m2 import get_backend
from .._provenance import provenance
from .._results import to_frame
from .claims import Claim
from .sources import Source

__all__ = [
    "Check",
    "Report",
    "Table",
    "contradiction",
    "Verdict",
    "output_directory",
    "rescue",
    "written",
    "pyplot",
    "save_figure",
    "FIGURE_FORMATS",
    "OUTPUT_RESERVE",
]

#: every figure is written in these formats, side by side
FIGURE_FORMATS = FORMATS  # PNG, then the vector formats PDF and SVG


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, (list, tuple)):
        return ",".join(_fmt(x) for x in v)
    if v is None:
        return "-"
    return str(v).replace("|", "\\|").replace("\n", " ")


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


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
    topic: Claim | None = None  # the paper's result this is evidence for
    size: tuple[int, ...] | None = None  # (d, d', a) of one layer, a = d for A free
    techniques: tuple[str, ...] = ()  # the methods in a few words each, for summaries

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
            "topic": None if self.topic is None else self.topic.value,
            "size": None if self.size is None else list(self.size),
            "techniques": list(self.techniques),
        }

    def __repr__(self) -> str:
        return f"Check({_short(self.claim)!r}, {self.case!r}, passed={bool(self.passed)})"


_BOUND = re.compile(r"^\s*(<=|>=|<|>|=)\s*(-?\d+(?:\.\d+)?)\b")
_HOLDS = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "=": lambda a, b: a == b,
}


def contradiction(check: Check) -> str | None:
    """What a passed check says against itself, or None: its expected value is a bound (``"< 3"``, ``"<= 12
    (the symmetries)"``) and its observed number is outside it (issue 30: a row "expected < 3, observed 3, pass")."""
    if not check.passed or not isinstance(check.expected, str) or isinstance(check.observed, bool):
        return None
    if not isinstance(check.observed, (int, float)):
        return None
    m = _BOUND.match(check.expected)
    if m is None:
        return None
    op, bound = m.group(1), float(m.group(2))
    if _HOLDS[op](float(check.observed), bound):
        return None
    return f"expected {check.expected!r}, observed {check.observed}, yet marked passed"


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""
    #: how the Markdown shows a column's values, ``f(value, row)`` with the row as {column: value}
    #: (the JSON keeps the values: booleans, lists, numbers)
    formats: dict[str, Callable[[Any, dict[str, Any]], str]] = field(default_factory=dict)
    #: where the table's expected values come from (outside, independent, theorem, regression: :mod:`.sources`);
    #: ``None``: the table holds no expected value, only what this run computed (every ``Table(...)`` of the package
    #: says which, tests/reproduce/test_sources.py)
    source: Source | None = None

    def to_markdown(self) -> str:
        out = [f"### {self.title}", ""]
        if self.source is not None:
            out += [f"Expected values: {self.source.label}.", ""]
        if self.note:
            out += [self.note, ""]
        out.append("| " + " | ".join(self.columns) + " |")
        out.append("|" + "---|" * len(self.columns))
        for row in self.rows:
            named = dict(zip(self.columns, row))
            cells = [self.formats[c](v, named) if c in self.formats else _fmt(v) for c, v in named.items()]
            out.append("| " + " | ".join(cells) + " |")
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "columns": self.columns,
            "rows": self.rows,
            "note": self.note,
            "source": None if self.source is None else self.source.to_dict(),
        }

    def __repr__(self) -> str:
        return f"Table({self.title!r}, {len(self.columns)} columns, {len(self.rows)} rows)"


@dataclass(frozen=True)
class Verdict:
    """One statement of the paper, summed up over the checks that are evidence for it."""

    label: str  # "Thm. 3.4 (1)"
    statement: str
    evidence: str  # the results and checks behind the verdict
    checks: int
    failed: int
    sizes: tuple[tuple[int, ...], ...]
    methods: tuple[str, ...]
    note: str = ""

    @classmethod
    def of(cls, label: str, statement: str, evidence: str, checks: Sequence[Check], note: str = "") -> Verdict:
        sizes = sorted({c.size for c in checks if c.size is not None})
        methods = sorted({t for c in checks for t in c.techniques})
        return cls(
            label,
            statement,
            evidence,
            len(checks),
            sum(not c.passed for c in checks),
            tuple(sizes),
            tuple(methods),
            note,
        )

    @property
    def passed(self) -> bool | None:
        """True if every check passed, False if one failed, None if nothing was checked."""
        return None if self.checks == 0 else self.failed == 0

    @property
    def verdict(self) -> str:
        if self.passed is None:
            return "not checked"
        if self.passed:
            return f"holds ({self.checks} checks)"
        return f"**FAILS** ({self.failed} of {self.checks} checks)"

    def sizes_text(self) -> str:
        """The sizes in a few words: how many, and the ranges of d, d' and a."""
        if not self.sizes:
            return "-"
        ranges = []
        for name, i in (("d", 0), ("d'", 1), ("a", 2)):
            values = sorted({s[i] for s in self.sizes if len(s) > i})
            if values:
                ranges.append(f"{name} = {values[0]}" + (f"..{values[-1]}" if values[-1] != values[0] else ""))
        return f"{len(self.sizes)}: " + ", ".join(ranges)

    def __repr__(self) -> str:
        return f"Verdict({self.label!r}, passed={self.passed}, checks={self.checks}, failed={self.failed})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "statement": self.statement,
            "evidence": self.evidence,
            "passed": self.passed,
            "checks": self.checks,
            "failed": self.failed,
            "sizes": [list(s) for s in self.sizes],
            "methods": list(self.methods),
            "note": self.note,
        }


@dataclass
class Report:
    title: str
    summary: str = ""
    checks: list[Check] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    verdicts: list[Verdict] = field(default_factory=list)
    verdict_heading: str = "Statements"
    #: the external engines used, name -> version (None: not used): the ``provenance`` object
    engines: dict[str, str | None] = field(default_factory=dict)

    def record_engines(self, *, msolve: bool = False, macaulay2: bool = False, backend: str = "auto") -> None:
        """Ask the versions of the engines a reproduction ran (msolve, Macaulay2) for its provenance; an engine that
        cannot be asked is recorded as ``unknown`` (it ran, so it is named)."""

        if msolve:
            try:
                self.engines["msolve"] = msolve_version()
            except AgAttentionError:
                self.engines["msolve"] = "unknown"
        if macaulay2:
            try:
                self.engines["macaulay2"] = get_backend(backend).version()
            except AgAttentionError:
                self.engines["macaulay2"] = "unknown"

    #: a file name: the checks are written there as CSV and the Markdown lists only failures
    details_csv: str | None = None

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def add(self, check: Check) -> Check:
        """Record ``check``; one that contradicts itself (an expected bound such as ``"< 3"`` or ``"<= 3"`` beside
        a number observed outside it, marked passed) is a bug of its producer and raises."""
        bad = contradiction(check)
        if bad is not None:
            raise ComputationError(f"check {check.claim!r} ({check.case}) contradicts itself: {bad} (bug)")
        self.checks.append(check)
        return check

    def __repr__(self) -> str:
        return (
            f"Report({self.title!r}, passed={self.passed}, checks={len(self.checks)}, "
            f"failures={len(self.failures)}, findings={len(self.findings)}, tables={len(self.tables)})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "passed": self.passed,
            "summary": self.summary,
            "statements": [v.to_dict() for v in self.verdicts],
            "checks": [c.to_dict() for c in self.checks],
            "failures": [f"{c.claim} [{c.case}]" for c in self.failures],
            "findings": self.findings,
            "tables": [t.to_dict() for t in self.tables],
            "meta": {**self.meta, "seconds": round(time.time() - self.started, 2)},
            "provenance": provenance(**self.engines),
        }

    def _verdicts_markdown(self) -> list[str]:
        out = [
            f"## {self.verdict_heading}",
            "",
            "| result | statement | verdict | sizes (d, d', a) | evidence | methods |",
            "|---|---|---|---|---|---|",
        ]
        for v in self.verdicts:
            out.append(
                f"| {_fmt(v.label)} | {_fmt(v.statement)}{' (note)' if v.note else ''} | {v.verdict} | "
                f"{v.sizes_text()} | {_fmt(v.evidence)} | {_fmt('; '.join(v.methods)) if v.methods else '-'} |"
            )
        notes = [f"- {v.label}: {v.note}" for v in self.verdicts if v.note]
        if notes:
            out += ["", "Notes:", ""] + notes
        out += ["", "Sizes covered:", ""]
        out += [
            f"- {v.label}: " + (", ".join("(" + ",".join(map(str, s)) + ")" for s in v.sizes) or "none")
            for v in self.verdicts
        ]
        return out + [""]

    def _checks_markdown(self) -> list[str]:
        rows = self.failures if self.details_csv else self.checks
        if self.details_csv:
            out = [
                f"## Failed checks ({len(rows)} of {len(self.checks)})",
                "",
                f"All {len(self.checks)} checks, one per row, are in `{self.details_csv}` (and in `report.json`).",
                "",
            ]
            if not rows:
                return out
        else:
            out = ["## Checks", ""]
        out += ["| claim | case | method | expected | observed | verdict | seconds |", "|---|---|---|---|---|---|---|"]
        out += [
            f"| {_fmt(c.claim)} | {_fmt(c.case)} | {_fmt(c.method)} | {_fmt(c.expected)} | "
            f"{_fmt(c.observed)} | {'pass' if c.passed else '**FAIL**'} | {c.seconds:.2f} |"
            for c in rows
        ]
        return out + [""]

    def to_markdown(self) -> str:
        n, bad = len(self.checks), len(self.failures)
        out = [f"# {self.title}", ""]
        verdict = "PASSED" if self.passed else f"FAILED ({bad} of {n} checks)"
        out += [f"**{verdict}**: {n} checks, {time.time() - self.started:.1f} s.", ""]
        if self.verdicts:
            out += self._verdicts_markdown()
        if self.summary:
            out += [self.summary, ""]
        if self.meta:
            out += ["Run: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in self.meta.items()), ""]
        if self.findings:
            out += ["## Findings", ""] + [f"- {f}" for f in self.findings] + [""]
        if self.checks:
            out += self._checks_markdown()
        for t in self.tables:
            out.append(t.to_markdown())
        return "\n".join(out)

    def _repr_markdown_(self) -> str:
        """The report as a notebook shows it: its Markdown."""
        return self.to_markdown()

    def to_frame(self) -> Any:
        """The checks as a :class:`pandas.DataFrame`, one row per check (typed columns; needs pandas)."""

        return to_frame([c.to_dict() for c in self.checks])

    def to_csv(self) -> str:
        """The checks, one per row (``details`` stay in the JSON)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(
            [
                "result",
                "claim",
                "case",
                "d",
                "d'",
                "a",
                "techniques",
                "method",
                "expected",
                "observed",
                "passed",
                "seconds",
            ]
        )
        for c in self.checks:
            size = list(c.size or ())[:3] + [""] * (3 - len(c.size or ()))
            w.writerow(
                [
                    c.topic.value if c.topic else "",
                    c.claim,
                    c.case,
                    *size,
                    "; ".join(c.techniques),
                    c.method,
                    _csv_value(c.expected),
                    _csv_value(c.observed),
                    "true" if c.passed else "false",
                    f"{c.seconds:.3f}",
                ]
            )
        return buf.getvalue()

    def write(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write ``report.md``, ``report.json`` and the CSV of the checks into ``out_dir``, each atomically and
        never through a planted link; :class:`~ag_attention.OutputError` names the file that could not be
        written (the report object keeps everything: write it elsewhere)."""
        out = Path(out_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise output_error(out, exc, "create the directory") from None
        if self.details_csv:
            atomic_write(out / self.details_csv, self.to_csv())
        atomic_write(out / "report.json", json.dumps(self.to_dict(), indent=2, default=str) + "\n")
        atomic_write(out / "report.md", self.to_markdown())
        return out


def _csv_value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, default=str)


#: bytes a reproduction may write into its ``--out`` (Theorem 3.4: 2.4 MB; the widest certification report less):
#: reserved before the work starts, so a full disk is refused then, not after the computation
OUTPUT_RESERVE = 16 * 2**20


def output_directory(path: str | os.PathLike[str], reserve_bytes: int = OUTPUT_RESERVE) -> Path:
    """``path`` as a writable directory (created if needed) with room for ``reserve_bytes``, or an error naming it.

    The room is checked by allocating it (:func:`ag_attention._files.reserve`): an empty test file fits on a
    full disk, a reservation does not.
    """
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidArgumentError(f"--out={str(path)!r}: not a writable directory ({exc.strerror or exc})") from None
    try:
        reserve(out, reserve_bytes)
    except OutputError as exc:
        raise OutputError(
            f"--out={str(path)!r}: {exc}; the outputs need up to {reserve_bytes / 2**20:.0f} MiB",
            path=str(out),
            errno=exc.errno,
        ) from None
    return out


def written(report: Report, write: Callable[[], Any]) -> Any:
    """``write()`` (a figure, a JSON file, the report itself) during a run; when it cannot be written, the
    :class:`~ag_attention.OutputError` is recorded in ``report.meta["not_written"]`` and the run goes on (its
    results are kept; the CLI then exits with status 4 naming what is missing)."""
    try:
        return write()
    except OutputError as exc:
        report.meta.setdefault("not_written", []).append(str(exc))
        return None


def rescue(report: Report, failed: OutputError) -> Path | None:
    """Write ``report`` into a new directory of the temporary directory after writing it where asked failed;
    the directory, or None when that fails too."""
    try:
        tmp = Path(tempfile.mkdtemp(prefix="ag-attention-unsaved-"))
        report.write(tmp)
    except (OSError, OutputError):
        return None
    return tmp


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, or an error saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise InvalidArgumentError(
            "the pictures need matplotlib: pip install matplotlib (the package's extra 'plot')"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: str | os.PathLike[str]) -> list[Path]:
    """Save ``fig`` as ``path`` with each suffix of :data:`FIGURE_FORMATS` (PNG first, then the vector formats PDF
    and SVG), atomically (:func:`ag_attention._figures.write_figure`); the paths written."""
    base = Path(path)
    try:
        base.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise output_error(base.parent, exc, "create the directory") from None
    return write_figures(fig, base, FIGURE_FORMATS)
