"""Reading Macaulay2's output: result markers and error messages.

Generated scripts print one JSON document (made by ``jsonEncode`` of the
LightningAttention package: strings, integers, booleans, lists and hash tables
only) between the lines ``<<<AG-ATTENTION-JSON`` and ``AG-ATTENTION-JSON>>>``.
Polynomials travel as their ``listForm`` (exponent vectors and integer
coefficients, see :mod:`ag_attention._algebra.implicitize`), never as text to parse.
"""

from __future__ import annotations

import json
import re
import signal
from typing import Any

from .._errors import M2ExecutionError, M2OutputError

__all__ = ["BEGIN", "END", "extract_result", "parse_error"]

BEGIN = "<<<AG-ATTENTION-JSON"
END = "AG-ATTENTION-JSON>>>"

# "/tmp/x/job.m2:3:5:(3):[1]: error: no method ..."
_ERROR_LINE = re.compile(r"^(?P<loc>\S+?:\d+:\d+)(?::\(\d+\))?(?::\[\d+\])?: error: (?P<msg>.*)$")
_TRACE_LINE = re.compile(r"^(?P<loc>\S+?:\d+:\d+)(?::\(\d+\))?(?::\[\d+\])?: --back trace--")


def parse_error(stderr: str, script_name: str = "job.m2") -> tuple[str, str | None] | None:
    """Macaulay2's error message and its location (preferring the job script's line)."""
    lines = stderr.splitlines()
    for n, line in enumerate(lines):
        m = _ERROR_LINE.match(line.strip())
        if not m:
            continue
        msg = [m.group("msg").strip()]
        origin = m.group("loc").rsplit("/", 1)[-1]
        in_script = origin if origin.startswith(script_name + ":") else None
        for more in lines[n + 1 :]:
            s = more.strip()
            t = _TRACE_LINE.match(s)
            if t:
                loc = t.group("loc").rsplit("/", 1)[-1]
                if in_script is None and loc.startswith(script_name + ":"):
                    in_script = loc
                continue
            if _ERROR_LINE.match(s):
                break
            if s.startswith("--") and "back" not in s:
                msg.append(s.lstrip("- ").rstrip())
        text = " ".join(x for x in msg if x)
        if in_script is None:
            return text, origin
        if in_script == origin:
            return text, in_script
        return text, f"{in_script} (raised at {origin})"
    return None


_UNDECODABLE = re.compile("[\udc80-\udcff]")


def printable(text: str) -> str:
    """``text`` with lone surrogates (bytes that were not UTF-8, kept by ``surrogateescape``) shown as ``\\xNN``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def exit_status(returncode: int) -> str:
    """``exit status 3`` or ``killed by SIGKILL``: how a process ended, for messages."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def extract_result(stdout: str, stderr: str, returncode: int, *, script_name: str = "job.m2") -> Any:
    """The JSON between the markers, or the right exception.

    ``stdout`` may hold bytes that were not UTF-8 as lone surrogates (the
    runner decodes with ``surrogateescape``): inside the result they are an
    :class:`M2OutputError`.
    """
    stderr = printable(stderr)
    if returncode != 0:
        shown = printable(stdout)
        err = parse_error(stderr, script_name) or parse_error(shown, script_name)
        if err is not None:
            raise M2ExecutionError(err[0], location=err[1], output=stderr or shown)
        raise M2ExecutionError(
            f"Macaulay2 {'was' if returncode < 0 else 'ended with'} {exit_status(returncode)} without an error message",
            output=(stderr + shown)[-2000:],
        )
    start = stdout.rfind(BEGIN)
    if start < 0:
        raise M2OutputError(
            "Macaulay2 finished without printing a result (no result marker)", output=printable(stdout + stderr)
        )
    end = stdout.find(END, start)
    if end < 0:
        raise M2OutputError("Macaulay2's result is truncated (no end marker)", output=printable(stdout))
    text = stdout[start + len(BEGIN) : end].strip()
    bad = _UNDECODABLE.search(text)
    if bad:
        byte = bad.group(0).encode("utf-8", "surrogateescape")[0]
        raise M2OutputError(
            f"Macaulay2's result is not valid UTF-8 (byte 0x{byte:02x} at character {bad.start()} of the result)",
            output=printable(text),
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise M2OutputError(f"Macaulay2's result is not valid JSON ({exc.msg} at {exc.pos})", output=text) from None


# ------------------------------------------------------------------ polynomials
_TOKEN = re.compile(r"\s*(?:(?P<num>\d+)|(?P<var>[A-Za-z][A-Za-z0-9']*(?:_(?:\d+|\([\d,\s]+\)))?)|(?P<op>[-+*/^()]))")
