"""Reading Macaulay2's output: result markers, error messages, polynomials.

Generated scripts print one JSON document (made by ``jsonEncode`` of the
LightningAttention package: strings, integers, booleans, lists and hash tables
only) between the lines ``<<<AG-ATTENTION-JSON`` and ``AG-ATTENTION-JSON>>>``.
Polynomials travel as Macaulay2's ``toString`` and are parsed here into
polynomials over QQ in named variables (:data:`ag_attention.exact.linalg.RationalPolynomial`,
python-flint's ``fmpq_mpoly``).
"""

from __future__ import annotations

import json
import re
import signal
from typing import Any, Sequence

from ..errors import M2ExecutionError, M2OutputError, PolynomialSyntaxError
from ..exact import linalg
from ..exact.linalg import RationalPolynomial, RationalPolynomialRing

__all__ = ["BEGIN", "END", "extract_result", "parse_error", "parse_polynomial", "PolynomialSyntaxError"]

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
        for more in lines[n + 1:]:
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
            f"Macaulay2 {'was' if returncode < 0 else 'ended with'} {exit_status(returncode)} without an error message", output=(stderr + shown)[-2000:]
        )
    start = stdout.rfind(BEGIN)
    if start < 0:
        raise M2OutputError("Macaulay2 finished without printing a result (no result marker)",
                            output=printable(stdout + stderr))
    end = stdout.find(END, start)
    if end < 0:
        raise M2OutputError("Macaulay2's result is truncated (no end marker)", output=printable(stdout))
    text = stdout[start + len(BEGIN):end].strip()
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
_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+)|(?P<var>[A-Za-z][A-Za-z0-9']*(?:_(?:\d+|\([\d,\s]+\)))?)|(?P<op>[-+*/^()]))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos or m.lastgroup is None:
            raise PolynomialSyntaxError(f"cannot parse polynomial {text!r} at position {pos}: {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        out.append((kind, m.group(kind).replace(" ", "")))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str, ctx: RationalPolynomialRing, index: dict[str, int]):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.ctx = ctx
        self.gens = ctx.gens()
        self.index = index

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise PolynomialSyntaxError(f"unexpected end of polynomial {self.text!r}")
        self.i += 1
        return tok

    def expr(self) -> RationalPolynomial:
        sign = 1
        if self.peek() in (("op", "-"), ("op", "+")):
            sign = -1 if self.take()[1] == "-" else 1
        value = self.term() * sign
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            t = self.term()
            value = value + t if op == "+" else value - t
        return value

    def term(self) -> RationalPolynomial:
        value = self.power()
        while self.peek() in (("op", "*"), ("op", "/")):
            op = self.take()[1]
            rhs = self.power()
            if op == "*":
                value = value * rhs
            else:
                if not rhs.is_constant() or rhs == 0:
                    raise PolynomialSyntaxError(f"division by a non-constant in {self.text!r}")
                value = value * (1 / linalg.rational(rhs.leading_coefficient()))
        return value

    def power(self) -> RationalPolynomial:
        base = self.atom()
        if self.peek() == ("op", "^"):
            self.take()
            kind, val = self.take()
            if kind != "num":
                raise PolynomialSyntaxError(f"exponent must be an integer in {self.text!r}")
            base = base ** int(val)
        return base

    def atom(self) -> RationalPolynomial:
        kind, val = self.take()
        if kind == "num":
            return self.ctx.constant(int(val))
        if kind == "var":
            if val not in self.index:
                raise PolynomialSyntaxError(f"unknown variable {val!r} in {self.text!r}")
            return self.gens[self.index[val]]
        if val == "(":
            inner = self.expr()
            if self.take() != ("op", ")"):
                raise PolynomialSyntaxError(f"missing ')' in {self.text!r}")
            return inner
        if val == "-":
            return -self.atom()
        raise PolynomialSyntaxError(f"unexpected {val!r} in {self.text!r}")


def parse_polynomial(text: str, variables: Sequence[str], ctx: RationalPolynomialRing | None = None) -> RationalPolynomial:
    """Parse Macaulay2's ``toString`` of a polynomial in ``variables`` (QQ coefficients).

    >>> str(parse_polynomial("c_1^2*c_2-(3/2)*c_(2,1)+7", ["c_1", "c_2", "c_(2,1)"]))
    'c_1^2*c_2 - 3/2*c_(2,1) + 7'
    """
    names = [v.replace(" ", "") for v in variables]
    ctx = ctx or linalg.rational_polynomial_ring(names, "degrevlex")
    p = _Parser(text, ctx, {n: i for i, n in enumerate(names)})
    value = p.expr()
    rest = p.peek()
    if rest is not None:
        raise PolynomialSyntaxError(f"trailing input in polynomial {text!r} at {rest[1]!r}")
    return value
