"""The paper's dimension formulas, each with the hypotheses under which it is proven.

Nothing here computes a rank: these are the *predictions* the exact engine is
checked against.  Every prediction says which statement it comes from and
lists its hypotheses with whether each holds, so that a disagreement outside
the hypotheses is reported as "formula does not apply", not as a failure.

* Cor. 3.3 (one lightning layer): ``a(2d - a) + d d' - 1``; ``t >= 2``,
  ``a <= d``, ``d' > 1 or a > 1``.
* Cor. 3.8 (deep lightning): ``sum_i [a_i(2 d_{i-1} - a_i) + d_i d_{i-1}]
  - sum_{i<L} d_i^2 - L``; ``t >= 2``, ``a_i <= d_{i-1}``, widths that first
  shrink and then grow (bottleneck).
* Thm. 3.9 (one normalized layer): ``a(2d - a) + d d'`` (no rescaling).
* Eq. 16 (Conjecture 3.10, deep normalized): Cor. 3.8 + ``L``.

:func:`prove` gathers, for one architecture, everything the exact engine can
know before it measures a rank: the prediction, the proven upper bound of
docs/math/bounds.md, the symmetry count, the effective architecture, the
directions one sample adds.  It is the first step of
:func:`ag_attention.dimension` (prove, measure, decide).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._architecture import Architecture, check_architecture
from .bounds import (
    Spans,
    UpperBound,
    best_upper_bound,
    effective_architecture,
    matrix_product_fiber,
    symmetric_rank_dimension,
)
from .symmetries import symmetry_generators

__all__ = [
    "Hypothesis",
    "Expectation",
    "expected_dimension",
    "cor33",
    "cor38",
    "symmetry_count",
    "is_bottleneck",
    "matrix_product_fiber",
    "effective_architecture",
    "symmetric_rank_dimension",
    "Proven",
    "prove",
    "new_directions_per_sample",
    "attention_symmetries",
    "variant_fiber",
]


@dataclass(frozen=True)
class Hypothesis:
    """One hypothesis of a formula.

    ``source`` is ``"paper"`` for hypotheses stated in the paper (docs/math/dimension.md) and
    ``"ag-attention"`` for hypotheses this package found necessary by exact
    computation (each documented where it is added, with a counterexample).
    """

    statement: str
    holds: bool
    source: str = "paper"

    def to_dict(self) -> dict[str, Any]:
        return {"statement": self.statement, "holds": self.holds, "source": self.source}


@dataclass(frozen=True)
class Expectation:
    """A formula's prediction for the dimension of a neuromanifold.

    ``value`` is the formula evaluated on the architecture (``None`` when the
    paper has no formula for it); ``applies`` is True only when every
    hypothesis holds, i.e. when the paper proves (or, for Eq. 16, conjectures)
    the value.
    """

    formula: str | None
    value: int | None
    hypotheses: tuple[Hypothesis, ...] = ()
    note: str = ""
    conjectural: bool = False

    @property
    def applies(self) -> bool:
        return self.value is not None and all(h.holds for h in self.hypotheses)

    @property
    def failed_hypotheses(self) -> list[str]:
        return [h.statement for h in self.hypotheses if not h.holds]

    def hypotheses_text(self) -> str:
        """``hypotheses hold`` or ``does not apply, fails: ...`` (the failed statements)."""
        return "hypotheses hold" if self.applies else "does not apply, fails: " + "; ".join(self.failed_hypotheses)

    def fields(self) -> dict[str, Any]:
        """What a result's ``to_dict()`` says of the formula: value, name, whether it applies, what fails."""
        return {
            "expected": self.value,
            "formula": self.formula,
            "formula_applies": self.applies,
            "failed_hypotheses": self.failed_hypotheses,
            "conjectural": self.conjectural,
        }

    @property
    def paper_hypotheses_hold(self) -> bool:
        """All hypotheses as the paper states them (docs/math/dimension.md) hold (found ones ignored)."""
        return self.value is not None and all(h.holds for h in self.hypotheses if h.source == "paper")

    def to_dict(self) -> dict[str, Any]:
        return {
            "formula": self.formula,
            "value": self.value,
            "applies": self.applies,
            "paper_hypotheses_hold": self.paper_hypotheses_hold,
            "conjectural": self.conjectural,
            "hypotheses": [h.to_dict() for h in self.hypotheses],
            "note": self.note,
        }


def cor33(d: int, d_out: int, a: int) -> int:
    """Cor. 3.3: ``a(2d - a) + d d' - 1`` with ``a`` capped at ``d``."""
    r = min(a, d)
    return r * (2 * d - r) + d * d_out - 1


def cor38(widths: tuple[int, ...], ranks: tuple[int, ...]) -> int:
    """Eq. 14 (Cor. 3.8), with each ``a_i`` capped at ``d_{i-1}``."""
    L = len(ranks)
    total = 0
    for i in range(L):
        d_in, d_out = widths[i], widths[i + 1]
        r = min(ranks[i], d_in)
        total += r * (2 * d_in - r) + d_out * d_in
    total -= sum(widths[i] ** 2 for i in range(1, L))
    return total - L


def is_bottleneck(widths: tuple[int, ...]) -> bool:
    """Widths first (weakly) shrink, then (weakly) grow: ``d_0 >= .. >= d_k <= .. <= d_L``."""
    k = widths.index(min(widths))
    return all(widths[i] >= widths[i + 1] for i in range(k)) and all(
        widths[i] <= widths[i + 1] for i in range(k, len(widths) - 1)
    )


def symmetry_count(arch: Architecture) -> int:
    """Dimension of the orbits of the known continuous symmetries, by counting.

    Families (docs/math/symmetries.md (symmetries-families)): ``GL_{a_i}`` on queries/keys of every head,
    ``GL_{d_i}`` between layers (not with skip connections), and one rescaling
    per head and layer (lightning only).  This is a count assuming the
    families act freely; the exact engine computes the true rank of their
    tangent vectors at the sampled point.
    """
    s = 0
    for layer in arch.layers:
        if arch.parametrization == "QKV" and arch.positions is not None:
            s += layer.heads * attention_symmetries(arch, layer.rank)
        elif arch.parametrization == "QKV":
            s += layer.heads * matrix_product_fiber(layer.rank, layer.d_in)
        if not arch.normalized:
            s += layer.heads
    if not arch.skip:
        s += sum(w * w for w in arch.widths[1:-1])
    if arch.bias:  # docs/math/affine.md: translations between layers, softmax's key and value biases
        s += symmetry_generators(arch) - _linear_generators(arch)
    return s


def _linear_generators(arch: Architecture) -> int:
    """The generators :func:`symmetry_generators` counts without biases (the families of the paper's model)."""
    return symmetry_generators(arch.with_(bias=""))


def _no_formula(arch: Architecture) -> Expectation:
    """Several heads, skip connections or a causal mask: the paper states no formula.

    The paper's setting is three hypotheses, each with its own truth value, so
    ``failed_hypotheses`` names only the ones this architecture breaks.
    """
    what = []
    if arch.heads != 1:
        what.append(f"{arch.heads} heads")
    if arch.skip:
        what.append("skip connections")
    if arch.causal:
        what.append("a causal mask")
    hyps = (
        Hypothesis("one head", arch.heads == 1),
        Hypothesis("no skip connections", not arch.skip),
        Hypothesis("no causal mask", not arch.causal),
    )
    return Expectation(
        None,
        None,
        hyps,
        note="the paper states no dimension formula for " + " and ".join(what) + " (Section 4: open)",
    )


def attention_symmetries(arch: Architecture, a: int) -> int:
    """Dimension of the group acting on a head's queries and keys: ``GL_a`` (``a^2``), or with rotary positions the
    rotations' commutant, ``D + (a - D)^2`` (``D`` the turning coordinates; docs/math/rotary.md)."""
    rot = arch.positions
    if rot is None:
        return a * a
    D = rot.rotated(a)
    return D + (a - D) ** 2


def variant_fiber(arch: Architecture) -> int:
    """The generic fiber dimension of one affine or rotary layer with one head (docs/math/affine.md,
    docs/math/rotary.md): the queries' and keys' group, the rescaling (lightning), and under softmax the key bias
    (without rotary positions) and the value biases beyond one (rows summing to one pass them through)."""
    a, d_out = arch.ranks[0], arch.widths[1]
    fiber = attention_symmetries(arch, a)
    if not arch.normalized:
        return fiber + 1
    if "k" in arch.bias:  # the key bias on the coordinates that do not turn cancels
        fiber += a - (0 if arch.positions is None else arch.positions.rotated(a))
    values = ("v" in arch.bias) + ("o" in arch.bias)
    return fiber + d_out * max(0, values - 1)


def _variant(arch: Architecture) -> Expectation:
    """One layer of affine or rotary attention (docs/math/affine.md (affine-dimension), docs/math/rotary.md
    (rotary-dimension)): ``P`` minus :func:`variant_fiber`; proven for lightning, certified on a grid for softmax."""
    d, d_out, a = arch.widths[0], arch.widths[1], arch.ranks[0]
    what = " and ".join(
        x for x in (f"biases {arch.bias}" if arch.bias else "", "rotary positions" if arch.positions else "") if x
    )
    hyps = [
        Hypothesis("t >= 2", arch.tokens >= 2),
        Hypothesis("one layer", arch.depth == 1, source="ag-attention"),
        Hypothesis("one head", arch.heads == 1),
        Hypothesis("no skip connections", not arch.skip),
        Hypothesis("no causal mask", not arch.causal, source="ag-attention"),
        Hypothesis("a <= d", a <= d),
    ]
    if not arch.normalized:
        hyps.append(Hypothesis("d' > 1 or a > 1", d_out > 1 or a > 1))
    if arch.positions is not None:
        hyps.append(
            Hypothesis(
                "the frequencies separate the planes (2 theta_f != +-2 theta_g, 4 theta_f != 0 mod 2 pi)",
                arch.positions.distinct(a),
                source="ag-attention",
            )
        )
    if arch.depth != 1:
        return Expectation(None, None, tuple(hyps), note=f"no formula for several layers with {what}")
    name = "Prop. " + ("rotary" if arch.positions is not None else "affine")
    proof = "docs/math/rotary.md (rotary-dimension)" if arch.positions else "docs/math/affine.md (affine-dimension)"
    value = arch.parameter_count - variant_fiber(arch)
    if arch.normalized:
        return Expectation(
            name + " (softmax)",
            value,
            tuple(hyps),
            note=f"one softmax layer with {what}: P minus its proven symmetries ({proof}); the lower bound is "
            "certified on a grid of sizes, not proven in general",
            conjectural=True,
        )
    return Expectation(name, value, tuple(hyps), note=f"one lightning layer with {what}: proven ({proof})")


def _one_layer(arch: Architecture, hyps: list[Hypothesis], cap_note: str) -> Expectation:
    """Thm. 3.9 (softmax) or Cor. 3.3 (lightning) for one layer."""
    d, d_out, a = arch.widths[0], arch.widths[1], arch.ranks[0]
    hyps.append(Hypothesis("a <= d", a <= d))
    if arch.normalized:
        r = min(a, d)
        return Expectation(
            "Thm. 3.9",
            r * (2 * d - r) + d * d_out,
            tuple(hyps),
            note="one normalized layer: fibers are single points, no rescaling" + cap_note,
        )
    hyps.append(Hypothesis("d' > 1 or a > 1", d_out > 1 or a > 1))
    note = cap_note.strip()
    bound = best_upper_bound(arch)
    if arch.tokens == 1 and bound is not None:
        note = (
            "t = 1: phi(x) = (x^T A x) V x depends on A only through A + A^T, "
            f"so dim <= {bound.value} ({bound.describe()}, derived by ag-attention)"
        )
    return Expectation("Cor. 3.3", cor33(d, d_out, a), tuple(hyps), note=note)


def _deep(arch: Architecture, hyps: list[Hypothesis], cap_note: str) -> Expectation:
    """Cor. 3.8 (lightning) or Eq. 16 (softmax, Conjecture 3.10) for several layers, with their hypotheses."""
    L = arch.depth
    hyps.append(Hypothesis("a_i <= d_{i-1} for all i", all(a <= d for a, d in zip(arch.ranks, arch.widths))))
    hyps.append(Hypothesis("widths shrink then grow (bottleneck)", is_bottleneck(arch.widths)))
    # Found by exact computation over all 3240 architectures with L in {2, 3},
    # widths <= 4, t = 2: the formula holds in every case with these two, and
    # e.g. widths (2,3,3) ranks (2,2) give 12 (not 16), widths 4,4,4,4 ranks
    # 1,2,2 give 40 (not 44).
    hidden = arch.widths[:-1]
    hyps.append(
        Hypothesis(
            "no hidden layer wider than an earlier one (d_0 >= ... >= d_{L-1})",
            all(hidden[i] >= hidden[i + 1] for i in range(len(hidden) - 1)),
            source="ag-attention",
        )
    )
    hyps.append(Hypothesis("a_i >= 2 for i < L", all(a >= 2 for a in arch.ranks[:-1]), source="ag-attention"))
    value = cor38(arch.widths, arch.ranks)
    eff = effective_architecture(arch)
    if eff.widths != arch.widths:
        extra = (
            f"hidden layers wider than an earlier one: same neuromanifold as widths {','.join(map(str, eff.widths))} "
            f"ranks {','.join(map(str, eff.ranks))}, "
            f"where Cor. 3.8 gives {cor38(eff.widths, eff.ranks) + (L if arch.normalized else 0)}"
        )
        cap_note = (cap_note + "; " if cap_note else " ") + extra
    if arch.normalized:
        return Expectation(
            "Eq. 16",
            value + L,
            tuple(hyps),
            note="Conjecture 3.10: Cor. 3.8 + L (normalization removes the rescaling)" + cap_note,
            conjectural=True,
        )
    return Expectation("Cor. 3.8", value, tuple(hyps), note=cap_note.strip())


def expected_dimension(arch: Architecture) -> Expectation:
    """The paper's predicted dimension for ``arch`` and whether it is proven there."""
    arch = check_architecture(arch)
    if arch.causal and arch.tokens == 1:  # one token attends to itself only: the mask is vacuous
        return expected_dimension(arch.with_(causal=False))
    if arch.positions is not None and arch.tokens == 1:  # position 0 turns nothing: R_0 = I
        return expected_dimension(arch.with_(positions=None))
    if not arch.is_linear_attention:
        return _variant(arch)
    if not arch.is_plain:
        return _no_formula(arch)
    capped = any(a > d for a, d in zip(arch.ranks, arch.widths))
    cap_note = " (a_i capped at d_{i-1}: docs/math/dimension.md (dimension-rank-cap))" if capped else ""
    hyps: list[Hypothesis] = [Hypothesis("t >= 2", arch.tokens >= 2)]
    if arch.depth == 1:
        return _one_layer(arch, hyps, cap_note)
    return _deep(arch, hyps, cap_note)


# ------------------------------------------------------------------ Lemma 3.6: what one more sample can add
# The exact engine (ag_attention._exact.dimension) and the float64 one (ag_attention._numeric) size their samples
# with the same bound; prove() records it.
def new_directions_per_sample(arch: Architecture) -> int:
    """Bound ``b`` on the rank one more input sequence can add, once shared weights are seen.

    A plain lightning network computes ``Y = (V_L ... V_1) X (S_1^T ... S_L^T)``
    with ``t x t`` attention matrices ``S_i`` (Lemma 3.6), so beyond the
    ``d_L x d_0`` product of the values a sample carries at most ``t^2`` new
    directions; several heads or skip connections give ``(H + skip)^L`` such
    products.  Never more than the ``t d_L`` outputs.  With softmax rows
    summing to one, a plain network's ``S`` has only ``t (t - 1)`` free
    entries (and at least one direction is assumed).  Biases and rotary positions keep a ``t x t`` matrix of weights
    per head (docs/math/affine.md, docs/math/rotary.md) and add a few constant directions: the same count is used,
    an underestimate at worst, which only plans more samples.

    >>> new_directions_per_sample(Architecture((3, 2), (2,), tokens=3))
    6
    >>> new_directions_per_sample(Architecture((3, 3), (2,), tokens=3, normalized=True))
    6
    """
    t = arch.tokens
    paths: int = (arch.heads + int(arch.skip)) ** arch.depth  # int ** int is typed Any (a negative power is a float)
    if not arch.normalized:
        return min(t * arch.widths[-1], t * t * paths)
    per = t * (t - 1) if arch.heads == 1 and not arch.skip and not arch.causal else t * t * paths
    return max(1, min(arch.output_size, per))


@dataclass(frozen=True)
class Proven:
    """What is known of a network from its architecture alone, before any rank is measured.

    The first step of :func:`ag_attention.dimension` (docs/math/certificates.md
    (certificates-steps)): nothing here is sampled, and every field but
    :attr:`symmetry_count` and :attr:`expected` is proven.

    ``bound`` is the smallest upper bound of docs/math/bounds.md that applies
    (with the engine's spans when :func:`prove` is given them), ``None`` when
    none does; ``effective`` is the narrower architecture with the same
    neuromanifold (:func:`effective_architecture`), proven alike, ``None``
    when the architecture is its own; ``directions_per_sample`` the bound of
    Lemma 3.6 on what one more input sequence adds to the rank
    (:func:`new_directions_per_sample`).
    ``symmetry_count`` is a count (the families acting freely), not a bound:
    the runs compute the rank of the symmetry tangents.
    """

    architecture: Architecture
    parameters: int
    expected: Expectation
    bound: UpperBound | None
    symmetry_count: int
    effective: Proven | None
    directions_per_sample: int

    @property
    def planning_bound(self) -> int:
        """The rank to plan the samples for: ``P`` minus the symmetries, or the proven bound where smaller."""
        target = self.parameters - self.symmetry_count
        if self.bound is not None:
            target = min(target, self.bound.value)
        return max(target, 1)


def prove(arch: Architecture, spans: Spans | None = None) -> Proven:
    """Everything provable of ``arch`` before a rank is measured (the effective architecture's too).

    ``spans`` is passed to :func:`ag_attention._models.bounds.best_upper_bound`
    (the engine passes :func:`ag_attention._exact.spans.output_span`).

    >>> p = prove(Architecture((2, 3, 3), (2, 2), tokens=2))
    >>> p.expected.value, p.bound.value, p.effective.architecture.describe()
    (16, 12, 'widths 2,2,3 ranks 2,2 t=2')
    """
    expected = expected_dimension(arch)  # what the paper predicts
    bound = best_upper_bound(arch, spans)  # what docs/math/bounds.md proves
    eff = effective_architecture(arch)  # a narrower network with the same neuromanifold
    return Proven(
        architecture=arch,
        parameters=arch.parameter_count,
        expected=expected,
        bound=bound,
        symmetry_count=symmetry_count(arch),
        effective=None if eff == arch else prove(eff, spans),
        directions_per_sample=new_directions_per_sample(arch),
    )
