"""msolve's text: the input file of a system over GF(p), and the leading ideals and parametrizations it prints.

Input (``msolve -h``): variables on the first line, the characteristic on the
second, then the polynomials separated by commas.  Output: the leading
monomials of a DRL Groebner basis (``-g 1``), whose standard monomials
:func:`count_standard_monomials` counts, and the header of a rational
parametrization (``-P 1``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError, MSolveOutputError

__all__ = [
    "format_input",
    "parse_leading_ideal",
    "parse_parametrization",
    "minimalize",
    "count_standard_monomials",
    "MAX_PRIME",
]

MAX_PRIME = 2**31  # msolve's prime fields: characteristic below 2^31


# ------------------------------------------------------------------- input
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


_TERM_SPLIT = re.compile(r"(?<=[^+\-^*])(?=[+-])")
_FACTOR = re.compile(r"([A-Za-z][A-Za-z0-9_]*)(?:\^(\d+))?|(\d+)")


def _normalize(poly: str, prime: int) -> str:
    """Write each term with one power per variable (``3*x*y*x`` -> ``3*x^2*y``) and, over GF(p), its integer
    coefficient reduced modulo ``p`` (``prime == 0``: over QQ, coefficients as they are).

    msolve 0.10.1 reads a repeated factor as one: ``x*x`` is taken for ``x``
    (measured: the closure's cubics ``x*y*y`` made an input msolve called
    inhomogeneous, and its Groebner basis held quadrics outside the ideal).
    msolve also reads a coefficient at or above ``p`` without reducing it
    (measured: ``4294967294*x`` = ``2p*x``, which is 0 modulo ``p = 2^31 - 1``,
    was taken for a nonzero term; a critical-point system over QQ sent modulo
    ``p`` unreduced counted 34 solutions where the reduced one counts 20), so
    every coefficient is reduced here, and a term that reduces to 0 dropped.
    A term that is not a product of integers and variables is refused when it
    holds an integer that would need reducing.
    """
    out = []
    for term in _TERM_SPLIT.split(poly):
        sign = term[0] if term[:1] in "+-" else ""
        body = term[len(sign) :]
        factors = body.split("*")
        matches = [_FACTOR.fullmatch(f) for f in factors]
        if not body or not all(matches):
            big = [int(k) for k in re.findall(r"(?<![\^\d])\d+", body)]
            if prime and any(k >= prime for k in big):
                raise InvalidArgumentError(
                    f"the term {term!r}: msolve reads its coefficient unreduced modulo "
                    f"{prime}; write the polynomial as a sum of coefficient*monomial terms"
                )
            out.append(term)
            continue
        coefficient = 1
        powers: dict[str, int] = {}
        numbers = 0
        for m in matches:
            assert m is not None
            if m.group(3) is not None:
                coefficient *= int(m.group(3))
                numbers += 1
            else:
                powers[m.group(1)] = powers.get(m.group(1), 0) + int(m.group(2) or 1)
        names = [m.group(1) for m in matches if m is not None and m.group(1)]
        if prime:
            reduced = coefficient % prime
            if reduced == 0:
                continue
            if sign == "-" and reduced > prime // 2:  # keep the sign when it makes the number shorter
                sign, reduced = "+", prime - reduced
            elif sign != "-" and reduced > prime // 2:
                sign, reduced = "-", prime - reduced
            changed = reduced != coefficient
            coefficient = reduced
        else:
            changed = False
        if len(set(names)) == len(names) and not changed and numbers <= 1:  # msolve reads it right
            out.append(term)
            continue
        monomial = "*".join(n if e == 1 else f"{n}^{e}" for n, e in powers.items())
        text = f"{coefficient}*{monomial}" if monomial else str(coefficient)
        out.append(sign + text)
    joined = "".join(out)
    return joined[1:] if joined.startswith("+") else joined


def format_input(variables: Sequence[str], prime: int, polynomials: Sequence[str]) -> str:
    """msolve's input file: variables, characteristic (``0``: QQ), polynomials (comma separated, one a line),
    each term written as msolve reads it right (:func:`_normalize`: powers merged, coefficients reduced mod p).

    >>> format_input(["x"], 7, ["15*x^2 - 8"])
    'x\\n7\\n1*x^2-1\\n'
    """
    variables = list(variables)
    if not variables:
        raise InvalidArgumentError("variables: at least one variable is needed")
    bad = [v for v in variables if not _NAME.match(v)]
    if bad:
        raise InvalidArgumentError(f"variables {bad[:3]}: msolve names are a letter followed by letters, digits, _")
    if len(set(variables)) != len(variables):
        raise InvalidArgumentError("variables: names must be distinct")
    if isinstance(prime, bool) or not isinstance(prime, int) or not (prime == 0 or 2 < prime < MAX_PRIME):
        raise InvalidArgumentError(f"prime={prime!r}: msolve needs a prime characteristic 2 < p < 2^31, or 0 (over QQ)")
    if not polynomials:
        raise InvalidArgumentError("polynomials: at least one polynomial is needed")
    texts = [str(f).replace(" ", "") for f in polynomials]
    if any(not f for f in texts):
        raise InvalidArgumentError("polynomials: an empty polynomial")
    polys = [_normalize(f, prime) for f in texts]
    vanish = [i for i, f in enumerate(polys) if not f]
    if vanish:  # every coefficient divisible by p: the reduction is another system (a bad prime for it)
        raise InvalidArgumentError(
            f"polynomials {vanish[:5]} vanish modulo {prime} (every coefficient is a multiple of it): {prime} is a "
            "bad prime for this system.  Where a prime was given (prime=), give another; the counts on data "
            "(critical_points, model_critical_points, the ED degrees) draw their primes and skip such a prime "
            "(prime_seed= or seed= draws others)"
        )
    return ",".join(variables) + "\n" + str(prime) + "\n" + ",\n".join(polys) + "\n"


# ------------------------------------------------------------------ output
_MONO = re.compile(r"([A-Za-z][A-Za-z0-9_]*)(?:\^(\d+))?")


def parse_leading_ideal(text: str, variables: Sequence[str]) -> list[tuple[int, ...]]:
    """Exponent vectors of the leading monomials printed by ``msolve -g 1``.

    ``[1]`` (the unit ideal) gives ``[(0, ..., 0)]``; ``[0]`` (zero ideal) ``[]``.
    """
    body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    m = re.search(r"\[(.*)\]\s*:\s*$", body, re.S)
    if not m:
        raise MSolveOutputError("no leading ideal [..]: in msolve's output", output=text)
    index = {v: i for i, v in enumerate(variables)}
    leads = []
    for item in m.group(1).split(","):
        item = item.strip()
        if not item:
            continue
        e = [0] * len(index)
        if item == "1":
            leads.append(tuple(e))
            continue
        if item == "0":
            continue
        for factor in item.split("*"):
            fm = _MONO.fullmatch(factor.strip())
            if not fm or fm.group(1) not in index:
                raise MSolveOutputError(f"cannot read the leading monomial {item!r}", output=text)
            e[index[fm.group(1)]] += int(fm.group(2) or 1)
        leads.append(tuple(e))
    return leads


def minimalize(gens: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The minimal generators among ``gens`` (monomials as exponent vectors)."""
    uniq = sorted(set(map(tuple, gens)), key=lambda g: (sum(g), g))
    if not uniq:
        return []
    G = np.array(uniq, dtype=np.int64)
    keep = np.ones(len(uniq), dtype=bool)
    for j in range(len(uniq)):  # earlier (smaller total degree) generators may divide later ones
        if keep[j]:
            divides = (G[j] <= G).all(axis=1)
            divides[: j + 1] = False
            keep &= ~divides
    return [g for g, k in zip(uniq, keep) if k]


def count_standard_monomials(leads: Sequence[tuple[int, ...]], nvars: int) -> int | None:
    """``dim_k k[x]/I`` from the generators of the leading ideal; None if infinite (not zero-dimensional).

    Zero-dimensional iff every variable has a pure power among the
    generators.  The standard monomials are then enumerated once each (depth
    first, variables in non-decreasing order); ``e + x_i`` is standard iff
    ``e`` is and no generator with ``g_i = e_i + 1`` divides it.

    >>> count_standard_monomials([(2, 0), (0, 2)], 2), count_standard_monomials([(1, 1)], 2)
    (4, None)
    """
    gens = minimalize(leads)
    if any(len(g) != nvars for g in gens):
        raise InvalidArgumentError(f"leading monomials must have {nvars} exponents")
    if any(not any(g) for g in gens):
        return 0  # the unit ideal: no solution
    for i in range(nvars):
        if not any(g[i] > 0 and sum(g) == g[i] for g in gens):
            return None
    # by_var[i][k]: generators with exponent k in variable i
    by_var: list[dict[int, np.ndarray]] = []
    for i in range(nvars):
        groups: dict[int, list[tuple[int, ...]]] = {}
        for g in gens:
            if g[i] > 0:
                groups.setdefault(g[i], []).append(g)
        by_var.append({k: np.array(v, dtype=np.int64) for k, v in groups.items()})
    count = 0
    stack = [(np.zeros(nvars, dtype=np.int64), 0)]
    while stack:
        e, last = stack.pop()
        count += 1
        for i in range(last, nvars):
            cand = by_var[i].get(int(e[i]) + 1)
            f = e.copy()
            f[i] += 1
            if cand is None or not (cand <= f).all(axis=1).any():
                stack.append((f, i))
    return count


def _numbers(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def parse_parametrization(text: str) -> dict[str, Any]:
    """Header of ``msolve -P 1`` output over GF(p).

    ``{"dimension": -1}`` (no solution), ``{"dimension": 1}`` (positive
    dimensional) or ``{"dimension": 0, "characteristic", "nvars",
    "quotient_dimension", "variables", "eliminating_degree"}``.
    """
    s = text.strip()
    if re.fullmatch(r"\[\s*-1\s*\]\s*:?", s):
        return {"dimension": -1}
    m = re.match(r"\[\s*1\s*,", s)
    if m:
        return {"dimension": 1}
    m = re.match(
        r"\[\s*0\s*,\s*\[\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*\[([^\]]*)\]\s*,\s*\[([^\]]*)\]\s*,"
        r"\s*\[\s*1\s*,\s*\[\s*\[\s*(-?\d+)\s*,",
        s,
        re.S,
    )
    if not m:
        raise MSolveOutputError("cannot read msolve's parametrization header", output=text)
    names = [v.strip().strip("'\"") for v in m.group(4).split(",") if v.strip()]
    return {
        "dimension": 0,
        "characteristic": int(m.group(1)),
        "nvars": int(m.group(2)),
        "quotient_dimension": int(m.group(3)),
        "variables": names,
        "eliminating_degree": int(m.group(6)),
    }
