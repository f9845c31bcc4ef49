"""The monomials a lightning network's output can use: the count behind the ``monomial-span`` bound.

docs/math/bounds.md (bounds-monomial-span): without skip connections the
output is homogeneous of degree ``3^L`` in the inputs, with them odd of degree
at most ``3^L``; without a mask ``f_1`` determines ``f`` and is invariant under
permuting tokens ``2..t``, so its coordinates lie in the span of the orbit
sums of monomials; with a mask token ``i`` is a polynomial in the first ``i``
tokens.  The count is skipped (``None``) where it is astronomically large and
so never the smallest bound.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb

from .._architecture import Architecture

__all__ = ["orbit_counts", "monomial_count", "MAX_SPAN_DEGREE", "MAX_SPAN_DEPTH", "MAX_CAUSAL_TOKENS"]

#: monomial-span is skipped past this degree with several tokens (the count grows like degree^(t d), never binding)
MAX_SPAN_DEGREE = 729
#: and past this depth (degree 3^L) altogether
MAX_SPAN_DEPTH = 8
#: and, with a causal mask, past this many tokens (one count per token)
MAX_CAUSAL_TOKENS = 64


@lru_cache(maxsize=256)
def orbit_counts(d: int, others: int, max_degree: int) -> tuple[int, ...]:
    """For each degree ``0..max_degree``: monomials in token 1's ``d`` variables and ``others`` more tokens, up to
    permuting those tokens.

    A basis of the polynomials invariant under the permutations of tokens
    ``2..t``: the orbit sums.  An orbit is token 1's monomial with a multiset
    of ``others`` monomials (one per other token, degree 0 allowed).
    """

    def count(deg: int) -> int:
        return comb(deg + d - 1, d - 1)

    if others == 0:
        return tuple(count(k) for k in range(max_degree + 1))
    # a multiset of total degree m has at most m non-constant monomials: more tokens add only constants
    others = min(others, max_degree)
    # multisets[s][m]: multisets of s monomials of total degree m (count(j) kinds of degree j)
    multisets = [[0] * (max_degree + 1) for _ in range(others + 1)]
    multisets[0][0] = 1
    for j in range(max_degree + 1):
        kinds = count(j)
        new = [row[:] for row in multisets]
        for s in range(others):
            for m in range(max_degree + 1 - j):
                if not multisets[s][m]:
                    continue
                n = 1  # add n items of degree j: C(kinds + n - 1, n) multisets of them
                while s + n <= others and m + n * j <= max_degree:
                    new[s + n][m + n * j] += multisets[s][m] * comb(kinds + n - 1, n)
                    n += 1
        multisets = new
    last = multisets[others]
    return tuple(sum(count(k) * last[deg - k] for k in range(deg + 1)) for deg in range(max_degree + 1))


def monomial_count(arch: Architecture) -> tuple[int, str] | None:
    """``d_L`` times the number of monomials (or orbit sums) the output can use, and how it was counted.

    >>> from ag_attention import Architecture
    >>> monomial_count(Architecture((3, 2), (2,), tokens=1))  # cubic maps C^3 -> C^2
    (20, 'f_1 determines f; its monomials up to permutations of tokens 2..t, degree 3')
    """
    if arch.depth > MAX_SPAN_DEPTH:
        return None
    d, t, n = arch.widths[0], arch.tokens, 3**arch.depth
    degrees = range(1, n + 1, 2) if arch.skip else range(n, n + 1)  # a skip connection adds odd degrees below 3^L
    if arch.causal and t > 1:  # token i is a polynomial in tokens 1..i
        if t > MAX_CAUSAL_TOKENS:
            return None
        value = sum(comb(k + i * d - 1, i * d - 1) for i in range(1, t + 1) for k in degrees)
        why = "token i: monomials in the first i tokens"
    else:  # f is equivariant: f_1 determines f, and is invariant under permutations of tokens 2..t
        if t > 1 and n > MAX_SPAN_DEGREE:
            return None
        counts = orbit_counts(d, t - 1, n)
        value = sum(counts[k] for k in degrees)
        why = "f_1 determines f; its monomials up to permutations of tokens 2..t"
    return arch.widths[-1] * value, f"{why}, {f'odd degrees <= {n}' if arch.skip else f'degree {n}'}"
