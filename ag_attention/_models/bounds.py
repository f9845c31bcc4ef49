"""Proven upper bounds on the dimension of a lightning neuromanifold.

A GF(p) rank is a proven lower bound on ``dim M``; a dimension is *exact*
when a proven upper bound meets it.  The engine's own upper bound is
``P - rank T(theta)`` (the symmetry tangents); this module gives the others,
each proven in docs/math/bounds.md under the anchor named by its
:attr:`UpperBound.name`:

``one-token`` (bounds-one-token)
    ``t = 1``, one head: ``f`` factors through symmetric forms on nested row
    spaces (any depth).
``parallel-tokens`` (bounds-parallel-tokens)
    One head, no mask, ``t >= 2``, a rank-one layer ``l``: its output tokens
    are parallel and the layers after it act as on one token.
``width-one`` (bounds-width-one)
    No skip connections, a layer of (effective) width 1 (``d_0 = 1`` too):
    every later layer maps the tokens to one fixed vector times a fixed
    polynomial, any number of heads.
``heads`` (bounds-heads)
    One layer of ``H`` heads: the sum of ``H`` points of the one-head
    neuromanifold (a secant), so at most ``H`` times its dimension.
``span`` (bounds-span)
    One layer: the functions are linear in a tensor ``T``; the dimension of
    the space of those tensors (exactly the linear span of ``M``).
``head-mixing`` (bounds-head-mixing)
    One layer: ``f`` is linear in ``sum_h A_h (x) V_h``, a matrix of rank at
    most ``H``.
``value-space`` (bounds-value-space)
    One layer with ``H d' < d``: every value ``V_h x_j`` sees ``x_j`` only
    through a subspace of dimension ``H d'``.
``composition`` (bounds-composition)
    Several layers: the sum of the layers' bounds, minus the ``GL_{d_i}``
    between layers (without skip connections), on the effective widths.
``monomial-span`` (bounds-monomial-span)
    Any network: the number of monomials the output coordinates can use (weak,
    but it holds for every architecture).

Nothing here is conjectural: a bound is returned only under the hypotheses of
its proof (softmax attention gets none).  :func:`best_upper_bound` is their
minimum, the one the engine and the certificates use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from math import comb

from .._architecture import Architecture, check_architecture
from .monomials import monomial_count

#: a proven lower bound on the dimension of the span of a network's outputs (generic weights, all inputs)
Spans = Callable[[Architecture], int]

__all__ = [
    "UpperBound",
    "BOUND_NAMES",
    "upper_bounds",
    "best_upper_bound",
    "one_layer_bounds",
    "monomial_span",
    "effective_architecture",
    "matrix_product_fiber",
    "symmetric_rank_dimension",
]

#: every bound's name, with the page and anchor of its proof
BOUND_NAMES: dict[str, str] = {
    "one-token": "docs/math/bounds.md (bounds-one-token)",
    "parallel-tokens": "docs/math/bounds.md (bounds-parallel-tokens)",
    "width-one": "docs/math/bounds.md (bounds-width-one)",
    "heads": "docs/math/bounds.md (bounds-heads)",
    "span": "docs/math/bounds.md (bounds-span)",
    "head-mixing": "docs/math/bounds.md (bounds-head-mixing)",
    "value-space": "docs/math/bounds.md (bounds-value-space)",
    "composition": "docs/math/bounds.md (bounds-composition)",
    "monomial-span": "docs/math/bounds.md (bounds-monomial-span)",
}


@dataclass(frozen=True, order=True)
class UpperBound:
    """``dim M <= value``, proven by the argument ``name``; ``detail`` gives the numbers.

    The names, each with the section of docs/math/bounds.md that proves it:
    ``one-token``, ``parallel-tokens``, ``width-one``, ``heads``, ``span``,
    ``head-mixing``, ``value-space``, ``composition``, ``monomial-span``
    (:attr:`proof` says where).  Returned by :func:`ag_attention.upper_bounds`.
    """

    value: int
    name: str
    detail: str

    @property
    def proof(self) -> str:
        """Where the proof is written down."""
        return BOUND_NAMES[self.name]

    def describe(self) -> str:
        return f"{self.name} bound: dim <= {self.value} ({self.detail}; proof: {self.proof})"


def _sym2(n: int) -> int:
    return n * (n + 1) // 2


def matrix_product_fiber(a: int, d: int) -> int:
    """Dimension of the generic fiber of ``(Q, K) -> Q^T K`` with ``Q, K`` of size ``a x d``.

    ``a^2`` (Lemma 3.1) when ``a <= d``; ``2ad - d^2`` when ``a > d`` (then
    ``Q^T K`` is a generic ``d x d`` matrix).
    """
    return a * a if a <= d else 2 * a * d - d * d


def symmetric_rank_dimension(d: int, r: int) -> int:
    """Dimension of the symmetric ``d x d`` matrices of rank at most ``r``."""
    r = min(r, d)
    return r * (2 * d - r + 1) // 2


def _low_rank(rows: int, cols: int, r: int) -> int:
    """Dimension of the ``rows x cols`` matrices of rank at most ``r``."""
    r = min(r, rows, cols)
    return r * (rows + cols - r)


def _one_token_terms(widths: tuple[int, ...], ranks: tuple[int, ...]) -> tuple[int, list[int], int]:
    """The one-token factorization's pieces: flags, the forms ``S_i``, the map ``M`` (docs: bounds-one-token).

    ``w_0 = d_0``, ``w_i = min(w_{i-1}, d_i)``: the flag of row spaces
    ``R_1 ⊇ ... ⊇ R_L`` costs ``sum w_{i+1}(w_i - w_{i+1})``, the form of
    layer ``i`` (rank ``<= min(2 a_i, w_{i-1})``) ``dim Sym_{<= r}(C^{w_{i-1}})``,
    and ``M = V_L ... V_1`` on ``R_L`` costs ``d_L w_L``.
    """
    w = [widths[0]]
    for d in widths[1:]:
        w.append(min(w[-1], d))
    flags = sum(w[i + 1] * (w[i] - w[i + 1]) for i in range(len(ranks)))
    forms = [symmetric_rank_dimension(w[i], min(2 * a, w[i])) for i, a in enumerate(ranks)]
    return flags, forms, widths[-1] * w[-1]


def _one_token(arch: Architecture) -> UpperBound | None:
    if arch.tokens != 1 or arch.heads != 1 or arch.skip:
        return None
    flags, forms, m = _one_token_terms(arch.widths, arch.ranks)
    value = flags + sum(forms) + m - arch.depth
    return UpperBound(
        value,
        "one-token",
        f"t = 1: f factors through symmetric forms ({'+'.join(map(str, forms))}) on nested row spaces "
        f"(flags {flags}) and M ({m}), modulo {arch.depth} rescaling(s)",
    )


def _parallel_tokens(arch: Architecture, spans: Spans | None) -> UpperBound | None:
    """One head, ``t >= 2``, no mask: the first rank-one layer makes the tokens parallel."""
    if arch.tokens < 2 or arch.heads != 1 or arch.skip or arch.causal or 1 not in arch.ranks:
        return None
    l = arch.ranks.index(1) + 1  # 1-based
    L = arch.depth
    d = arch.widths[l - 1]
    flags, forms, m = _one_token_terms(arch.widths[l - 1 :], arch.ranks[l - 1 :])
    tail = flags + sum(forms[1:]) + m
    if l == 1:
        value = 2 * d + tail - (L + 1)
        return UpperBound(
            value,
            "parallel-tokens",
            f"rank-one layer 1: f_i = s_i sigma^e h(X X^T k), q and k in C^{d}, "
            f"the one-token tail {tail}, modulo {L + 1} rescalings",
        )
    prefix = best_upper_bound(arch.with_(widths=arch.widths[:l], ranks=arch.ranks[: l - 1]), spans)
    if prefix is None or effective_architecture(arch).widths[:l] != arch.widths[:l]:
        return None  # GL_{d_{l-1}} acts freely only when the prefix's outputs span C^{d_{l-1}}
    value = prefix.value + 2 * d + tail - d * d - (L - l + 2)
    return UpperBound(
        value,
        "parallel-tokens",
        f"rank-one layer {l}: the first {l - 1} layer(s) (dim <= {prefix.value}), q and k in C^{d}, "
        f"the one-token tail {tail}, modulo GL_{d} and {L - l + 2} rescalings",
    )


def _width_one(arch: Architecture, spans: Spans | None) -> UpperBound | None:
    """A width-1 layer ``l`` (``e_l = 1``, ``0 <= l < L``): ``f_i = P_i(Y) c``, ``Y`` its output, ``c`` in
    ``C^{d_L}``."""
    if arch.skip:
        return None
    eff = effective_architecture(arch)
    e = eff.widths
    best: UpperBound | None = None
    d_out = arch.widths[-1]
    for l in range(arch.depth):
        if e[l] != 1:
            continue
        if l == 0:
            bound = UpperBound(d_out, "width-one", f"d_0 = 1: f_i(X) = P_i(X) c with fixed P_i and c in C^{d_out}")
        else:
            # the first l layers of the effective network (the same functions), their output in C^1
            widths = (*e[:l], 1)
            prefix = best_upper_bound(
                eff.with_(widths=widths)
                if eff.parametrization == "AV"
                else eff.with_(widths=widths, ranks=eff.ranks[:l]),
                spans,
            )
            if prefix is None:
                continue
            bound = UpperBound(
                prefix.value + d_out - 1,
                "width-one",
                f"layer {l} has effective width 1: its output Y (dim <= {prefix.value}, {prefix.name}) "
                f"and c in C^{d_out}, modulo one rescaling",
            )
        if best is None or bound.value < best.value:
            best = bound
    return best


def one_layer_bounds(d: int, d_out: int, a: int, heads: int, tokens: int) -> list[UpperBound]:
    """The bounds of one lightning layer ``C^d -> C^{d_out}`` of rank ``a``, ``heads`` heads, ``tokens`` tokens.

    They hold with or without a causal mask, and for a skip connection too
    (it adds the fixed term ``X``: a translate).  For ``heads = 1`` the list
    holds the one-head count (the symmetries ``GL_a`` and the rescaling act
    freely on one layer).
    """
    H, t = heads, tokens
    if t >= 2:
        one = 2 * a * d + d * d_out - matrix_product_fiber(a, d) - 1
        one_why = (
            f"one head: 2ad + dd' - {matrix_product_fiber(a, d)} - 1 (the fiber of (Q, K) -> Q^T K, "
            "and the rescaling acting freely)"
        )
        span = d_out * d * _sym2(d)
        span_why = f"T in C^{d_out} (x) C^{d} (x) Sym^2 C^{d}"
        mix = _low_rank(d * d, d_out * d, H)
        mix_why = f"sum_h A_h (x) V_h: a {d * d} x {d_out * d} matrix of rank <= {H}"
    else:
        flags, forms, m = _one_token_terms((d, d_out), (a,))
        one = flags + forms[0] + m - 1
        one_why = f"one head, t = 1: Sym_<={min(2 * a, d)}(C^{d}) and V, modulo 1 rescaling"
        span = d_out * comb(d + 2, 3)
        span_why = f"cubic maps C^{d} -> C^{d_out}"
        mix = _low_rank(_sym2(d), d_out * d, H)
        mix_why = f"sum_h sym(A_h) (x) V_h: a {_sym2(d)} x {d_out * d} matrix of rank <= {H}"
    out = [
        UpperBound(H * one, "heads", one_why if H == 1 else f"{H} x ({one_why})"),
        UpperBound(span, "span", span_why),
        UpperBound(mix, "head-mixing", mix_why),
    ]
    u = H * d_out
    if u < d:
        if t >= 2:
            value = d_out * d * (_sym2(d) - _sym2(d - u)) + u * (d - u)
            what = f"forms on C^{d} vanishing on a {d - u}-dimensional subspace"
        else:
            value = d_out * (comb(d + 2, 3) - comb(d - u + 2, 3)) + u * (d - u)
            what = f"cubics in the ideal of a {u}-dimensional space of linear forms"
        out.append(UpperBound(value, "value-space", f"values in a {u}-dimensional subspace: {what}"))
    return out


def effective_architecture(arch: Architecture) -> Architecture:
    """A narrower architecture with the same neuromanifold (no skip connections).

    Layer ``i`` maps every token into ``sum_h V_{i,h} S_{i-1}``, a subspace of
    dimension at most ``e_i = min(d_i, H e_{i-1})`` (``e_0 = d_0``).  Choosing
    bases ``U_i`` of such subspaces and writing ``V_{i,h} U_{i-1} = U_i V'_{i,h}``,
    ``Q'_{i,h} = Q_{i,h} U_{i-1}``, ``K'_{i,h} = K_{i,h} U_{i-1}`` turns the
    network into one with hidden widths ``e_i`` and ranks
    ``min(a_i, e_{i-1})`` computing the same function; conversely the narrow
    network embeds in the wide one.  Hence ``M(d) = M(e)`` exactly.  (Found
    here: with widths that grow before the last layer, e.g. ``(2, 3, 3)``,
    Cor. 3.8 on the given widths overcounts; on the effective widths it is
    the computed value.)  A causal mask changes nothing here: it acts on the
    token indices, the change of basis on the features.
    """
    if arch.skip or not arch.is_linear_attention:  # biases add constants to the tokens: not proven there
        return arch
    e = [arch.widths[0]]
    for i in range(1, arch.depth):
        e.append(min(arch.widths[i], arch.heads * e[-1]))
    e.append(arch.widths[-1])
    ranks = tuple(min(a, e[i]) for i, a in enumerate(arch.ranks))
    if tuple(e) == arch.widths and ranks == arch.ranks:
        return arch
    if arch.parametrization == "AV":
        return arch.with_(widths=tuple(e))
    return arch.with_(widths=tuple(e), ranks=ranks)


def _block(arch: Architecture, first: int, last: int) -> Architecture:
    """Layers ``first..last`` (1-based, inclusive) of ``arch`` as a network of their own."""
    return arch.with_(widths=arch.widths[first - 1 : last + 1], ranks=arch.ranks[first - 1 : last])


def _direct(arch: Architecture, spans: Spans | None) -> list[UpperBound]:
    """The bounds of ``arch`` that do not split it into blocks of layers."""
    out = [b for b in (_one_token(arch), _parallel_tokens(arch, spans), _width_one(arch, spans)) if b is not None]
    if arch.depth == 1:
        out.extend(one_layer_bounds(arch.widths[0], arch.widths[1], arch.ranks[0], arch.heads, arch.tokens))
    span = monomial_span(arch)
    if span is not None:
        out.append(span)
    return out


#: the longest block of layers whose own bounds composition tries (longer blocks are cut)
MAX_BLOCK = 4


def _full_span(arch: Architecture, first: int, k: int, spans: Spans | None) -> str | None:
    """How the outputs of layers ``first..k`` are proven to span ``C^{d_k}``, or ``None`` if they are not.

    By the widths (``d_k <= d_{first-1}, ..., d_{k-1}``: the span lemma of
    docs/math/bounds.md (bounds-composition)), or by ``spans``, a proven lower
    bound on the span (the engine's: a rank over GF(p) of the block's outputs).
    """
    if arch.widths[k] <= min(arch.widths[first - 1 : k]):
        return "widths"
    if spans is not None and spans(_block(arch, first, k)) >= arch.widths[k]:
        return "GF(p) rank of the outputs"
    return None


def _best_segmentation(arch: Architecture, spans: Spans | None) -> tuple[int, str]:
    """The best bound over every way of cutting the layers into consecutive blocks (of at most
    :data:`MAX_BLOCK` layers), with the blocks; a cut subtracts ``d^2`` when the block just before it spans.

    Docs/math/bounds.md (bounds-composition) proves the bound for a segmentation
    with that condition at each cut.  (The recursion over ranges ``j..m`` split
    at ``k`` that this replaces asked the span of ``j..k`` at each cut, a range
    that contains the block before the cut, whose span then follows: for a
    given segmentation it never subtracts more than cutting block by block from
    the left, which asks each block's own span.  So the minimum is the same
    and this is its dynamic program over suffixes: ``O(L * MAX_BLOCK)`` bounds
    of blocks instead of ``O(L^3)`` steps and a recursion ``L`` deep.)
    """
    depth = arch.depth
    best: list[tuple[int, str]] = [(0, "")] * (depth + 2)  # best[f]: layers f..depth
    for first in range(depth, 0, -1):
        choice: tuple[int, str] | None = None
        for last in range(first, min(first + MAX_BLOCK - 1, depth) + 1):
            span = f"{first}" if first == last else f"{first}-{last}"
            block = min(_direct(_block(arch, first, last), spans), key=lambda b: b.value)
            text = f"layers {span}: {block.value} ({block.name})"
            value = block.value
            if last < depth:
                how = None if arch.skip else _full_span(arch, first, last, spans)
                junction = 0 if how is None else arch.widths[last] ** 2
                rest = best[last + 1]
                gl = (
                    ""
                    if arch.skip
                    else (
                        f" - GL_{arch.widths[last]} ({junction}, span by {how})"
                        if how
                        else f" (no GL_{arch.widths[last]}: span not proven)"
                    )
                )
                value += rest[0] - junction
                text = f"{text} + {rest[1]}{gl}"
            if choice is None or value < choice[0]:
                choice = (value, text)
        assert choice is not None
        best[first] = choice
    return best[1]


def _composition(arch: Architecture, spans: Spans | None) -> UpperBound | None:
    """Several layers: blocks of layers, their bounds added, minus the free ``GL`` between blocks."""
    if arch.depth < 2:
        return None
    eff = arch if arch.skip else effective_architecture(arch)
    value, blocks = _best_segmentation(eff, spans)
    direct = _direct(eff, spans)
    if direct and value >= min(b.value for b in direct):
        return None  # no cut helps: the direct bounds say it already
    where = "" if eff == arch else f" (effective widths {','.join(map(str, eff.widths))})"
    return UpperBound(value, "composition", blocks + where)


def monomial_span(arch: Architecture) -> UpperBound | None:
    """The number of monomials the output can use: an upper bound on the linear span for every network."""
    if arch.normalized:
        return None
    counted = monomial_count(arch)
    if counted is None:
        return None
    return UpperBound(counted[0], "monomial-span", counted[1])


def upper_bounds(arch: Architecture, spans: Spans | None = None) -> list[UpperBound]:
    """Every proven upper bound of this module that applies to ``arch`` (none for softmax attention).

    ``spans`` (optional) gives a proven lower bound on the span of a network's
    outputs; :func:`ag_attention.dimension` passes the engine's (a rank over
    GF(p), docs/math/bounds.md (bounds-composition)), which lets more cuts of
    the composition bound subtract their ``GL``.  Without it the widths decide.

    >>> from ag_attention import Architecture
    >>> [(b.name, b.value) for b in upper_bounds(Architecture((3, 2), (2,), tokens=1, heads=2))]
    [('heads', 22), ('span', 20), ('head-mixing', 20), ('monomial-span', 20)]
    """
    arch = check_architecture(arch)
    return list(_all_bounds(arch, spans))


@lru_cache(maxsize=4096)
def _all_bounds(arch: Architecture, spans: Spans | None) -> tuple[UpperBound, ...]:
    """:func:`upper_bounds`, cached: prefixes and blocks recur (``Architecture`` is frozen and hashable).  None is
    proven for softmax, affine or rotary attention: their proofs use ``x_i^T A x_j`` with one ``A`` and linear maps
    (the engine's symmetry bound holds for them, docs/math/affine.md, docs/math/rotary.md)."""
    if arch.normalized or not arch.is_linear_attention:
        return ()
    out = _direct(arch, spans)
    eff = arch if arch.skip else effective_architecture(arch)
    if eff != arch:  # the same neuromanifold: its bounds hold here
        note = f"; on the effective widths {','.join(map(str, eff.widths))}"
        out.extend(UpperBound(b.value, b.name, b.detail + note) for b in _direct(eff, spans))
    comp = _composition(arch, spans)
    if comp is not None:
        out.append(comp)
    return tuple(out)


def best_upper_bound(arch: Architecture, spans: Spans | None = None) -> UpperBound | None:
    """The smallest of :func:`upper_bounds` (the first listed among equal values), or ``None``.

    >>> from ag_attention import Architecture
    >>> best_upper_bound(Architecture((3, 2), (2,), tokens=1, heads=2)).describe()
    'span bound: dim <= 20 (cubic maps C^3 -> C^2; proof: docs/math/bounds.md (bounds-span))'
    """
    bounds = upper_bounds(arch, spans)
    if not bounds:
        return None
    return min(bounds, key=lambda b: b.value)
