"""Chern–Mather classes and polar degrees of determinantal varieties, and the generic ED degree of the Segre
product ``P(D_r) x P^(dd'-1)`` for every rank ``r`` (exact integers).

:mod:`ag_attention._landscape.formula` covers ``r = 1`` and ``r = d``, where ``D_r`` (the ``d x d`` matrices of
rank ``<= r``) is smooth. For ``1 < r < d`` it is singular along ``D_(r-1)`` and the Chern classes are replaced by
the Chern–Mather classes. What each step rests on:

* **Generic ED degree = sum of polar degrees** (Draisma, Horobeț, Ottaviani, Sturmfels, Thomas, *The Euclidean
  distance degree of an algebraic variety*, Found. Comput. Math. 16 (2016), arXiv:1309.0049, Thm. 5.4), for any
  projective variety and a general quadratic form.
* **Polar degrees from Chern–Mather classes** (Piene, *Cycles polaires et classes de Chern pour les variétés
  projectives singulières*, 1988; the formula the ED literature uses, e.g. Aluffi–Harris, arXiv:1708.00024, §1):
  for ``X`` of dimension ``m`` with ``mu_i = deg(c^M_i(X) . H^(m-i))``,
  ``delta_j = sum_{i <= j} (-1)^i binom(m-i+1, j-i) mu_i`` (``delta_0 = deg X``), hence
  ``gED(X) = sum_i (-1)^i (2^(m+1-i) - 1) mu_i``: Thm. 5.8 of Draisma et al. with ``c^M`` for ``c``. For smooth
  ``X``, ``c^M = c`` and this is the sum :func:`formula.segre_product_ed_degree` computes.
* **The Chern–Mather class of P(D_r)** is ``nu_* (c(T~) ∩ [Z])`` for the Nash blowup
  ``nu: Z -> P(D_r)``. The tangent space of ``D_r`` at a matrix of rank ``r`` is
  ``E(K, I) = {B : B(K) ⊂ I}`` (``K`` the kernel, ``I`` the image), so ``Z = {([A], K, I) : A(K) = 0,
  im A ⊂ I}`` (``K`` in ``Gr(d-r, d)``, ``I`` in ``Gr(r, d)``), the projective bundle ``P(Hom(C^d/K, I))`` over
  ``Gr(d-r, d) x Gr(r, d)``: smooth, and the closure of the graph of the Gauss map. Its Nash bundle is
  ``T~ = Hom(O(-1), E(K, I)/O(-1))``, so ``c(T~) = c(E(K, I) ⊗ O(1))``. The degrees ``mu_i`` are computed here by
  torus localization (Atiyah–Bott) on ``Z``: ``binom(d, r)^2 r^2`` fixed points, exact fractions, an integer at
  the end. The same resolution underlies Xiping Zhang, *Chern classes and characteristic cycles of determinantal
  varieties*, J. Algebra 497 (2018), arXiv:1605.05380, whose formulas are degrees of Chern classes of universal
  bundles over Grassmannians (the tests evaluate ours that way too, in Macaulay2's Schubert2).
* **Products**: the Nash blowup of ``X_1 x X_2`` is the product of the Nash blowups, so
  ``c^M(X_1 x X_2) = c^M(X_1) x c^M(X_2)``, and in the Segre embedding (``H = h_1 + h_2``)
  ``deg(c^M_k . H^(M-k)) = sum_{a+b=k} binom(M-k, m_1-a) mu^(1)_a mu^(2)_b``; ``c(P^n) = (1+h)^(n+1)``.

Checks (tests/landscape/test_polar.py): ``mu_0`` is the classical degree of ``D_r``, ``mu_m`` the Euler
characteristic ``d^2 binom(d-1, r-1)``, the polar degrees of ``P(D_r)`` are those of its dual ``P(D_(d-r))``
reversed, ``r in {1, d}`` reproduces :mod:`formula`, Schubert2 reproduces the ``mu_i``, and msolve counts the
critical points of a generic form on ``P(D_2)`` (3 x 3: 39), on ``P(D_2)`` (4 x 4: 1,350) and on
``P(D_2) x P^1`` (3 x 3: 810).

**For the neuromanifold.** The projectivized neuromanifold of ``(d, d', a)`` (``t >= 2``) is the image of the
Segre variety ``X = sigma(P(D_r) x P^(dd'-1))``, ``r = min(a, d)``, under a finite linear projection, birational
except at ``d' = a = 1`` (docs/math/degree.md). *Claim* (landscape-formula's conjecture): where the projection is
birational, the neuromanifold's generic ED degree is :func:`determinantal_segre_ed_degree`. Argument (written
with this module, not yet reviewed; notes/polar-report.md, section 5): the projection is injective on every limit
of tangent spaces of ``X`` except on a locus of the Nash blowup of codimension ``(r-1)^2 + d'(d-1)``, where its
kernel has dimension ``d - 1``; that codimension is ``>= d`` exactly when ``d' >= 2`` or ``a >= 2``, and then the
conormal variety of the image is the proper, generically reduced intersection of ``X``'s with the hyperplanes
through the centre, so every polar degree is kept. The lemma is tested exactly; the claim agrees with the seven
sizes counted (``r in {1, d}``); for ``1 < r < d`` the values here are predictions, written before any count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import combinations
from math import comb, prod

from .._checks import check_int
from .._errors import InvalidArgumentError

__all__ = [
    "PolarPrediction",
    "chern_mather_determinantal",
    "chern_mather_projective_space",
    "chern_mather_segre_product",
    "determinantal_degree",
    "determinantal_segre_chern_mather",
    "determinantal_segre_ed_degree",
    "determinantal_segre_polar_degrees",
    "ed_degree_from_chern_mather",
    "polar_degrees",
    "polar_prediction",
]


def _positive(name: str, value: object) -> int:
    return check_int(value, name, minimum=1)


def _rank(d: int, r: object) -> int:
    r = _positive("r", r)
    if r > d:
        raise InvalidArgumentError(f"r={r}: must be at most d={d}")
    return r


def _degrees(name: str, values: Sequence[int]) -> tuple[int, ...]:
    out = tuple(values)
    if not out or any(isinstance(v, bool) or not isinstance(v, int) for v in out):
        raise InvalidArgumentError(f"{name}={values!r}: must be a non-empty sequence of integers")
    return out


def determinantal_degree(d: int, r: int) -> int:
    """The degree of ``P(D_r)``, ``d x d`` matrices of rank ``<= r``: ``prod_{i<d-r} binom(d+i, r)/binom(r+i, r)``
    (Harris, *Algebraic Geometry*, Ex. 19.10), the first polar degree.

    >>> [determinantal_degree(3, 2), determinantal_degree(4, 2), determinantal_degree(5, 2)]
    [3, 20, 175]
    """
    d = _positive("d", d)
    r = _rank(d, r)
    num = prod(comb(d + i, r) for i in range(d - r))
    den = prod(comb(r + i, r) for i in range(d - r))
    assert num % den == 0
    return num // den


def _elementary_symmetric(weights: Sequence[int]) -> list[int]:
    e = [1] + [0] * len(weights)
    for w in weights:
        for k in range(len(weights), 0, -1):
            e[k] += e[k - 1] * w
    return e


def _localize(d: int, r: int, sigma: Sequence[int], tau: Sequence[int]) -> tuple[int, ...]:
    """``deg(c^M_i(P(D_r)) . h^(m-i))`` by localization on the Nash blowup ``Z``, for the torus acting on
    ``A`` by ``A -> diag(sigma) A - A diag(tau)`` (weight of ``E_ij``: ``sigma_i - tau_j``).

    A fixed point of ``Z`` is a coordinate ``K = <e_j : j in SK>``, ``I = <e_i : i in SI>`` and a coordinate
    line ``<E_(i0 j0)>`` in ``Hom(C^d/K, I)`` (``i0 in SI``, ``j0`` not in ``SK``). Its tangent weights:
    ``Hom(K, C^d/K)``, ``Hom(I, C^d/I)``, ``Hom(line, Hom(C^d/K, I)/line)``; the Nash bundle's:
    ``Hom(line, E(K, I)/line)``; ``h = c_1(O(1)) = -w(line)``. The weights must make every tangent weight
    nonzero (distinct ``sigma_i - tau_j``); the result does not depend on them.
    """
    m = r * (2 * d - r) - 1
    total = [Fraction(0)] * (m + 1)
    diff = {(i, j): sigma[i] - tau[j] for i in range(d) for j in range(d)}
    for SK in combinations(range(d), d - r):
        not_k = [j for j in range(d) if j not in SK]
        grass_k = [tau[jp] - tau[j] for j in SK for jp in not_k]
        for SI in combinations(range(d), r):
            not_i = [i for i in range(d) if i not in SI]
            grass_i = [sigma[ip] - sigma[i] for i in SI for ip in not_i]
            # E(K, I) = {B : B(K) ⊂ I}: every E_ij except i outside I and j in K
            e_index = [(i, j) for i in range(d) for j in range(d) if not (i in not_i and j in SK)]
            for i0 in SI:
                for j0 in not_k:
                    w0 = diff[i0, j0]
                    fiber = [diff[i, j] - w0 for i in SI for j in not_k if (i, j) != (i0, j0)]
                    tangent = grass_k + grass_i + fiber
                    nash = [diff[ij] - w0 for ij in e_index if ij != (i0, j0)]
                    den = prod(tangent)
                    if den == 0:
                        raise ValueError(
                            "the torus weights leave a tangent weight zero (choose distinct sigma_i - tau_j)"
                        )
                    e = _elementary_symmetric(nash)
                    h = -w0
                    for i in range(m + 1):
                        total[i] += Fraction(e[i] * h ** (m - i), den)
    out = []
    for value in total:
        if value.denominator != 1:  # pragma: no cover - would be a bug in the localization
            raise ArithmeticError(f"localization gave a non-integer {value} for ({d}, {r})")
        out.append(int(value))
    return tuple(out)


@cache
def _chern_mather_determinantal(d: int, r: int) -> tuple[int, ...]:
    # sigma_i - tau_j = i - d*j: distinct for distinct (i, j), so every tangent weight is nonzero
    return _localize(d, r, list(range(d)), [d * j for j in range(d)])


def chern_mather_determinantal(
    d: int, r: int, weights: tuple[Sequence[int], Sequence[int]] | None = None
) -> tuple[int, ...]:
    """``(mu_0, ..., mu_m)``, ``mu_i = deg(c^M_i(P(D_r)) . h^(m-i))`` for the ``d x d`` matrices of rank ``<= r``
    (``m = r(2d - r) - 1``), exact: ``mu_0`` is the degree, ``mu_m`` the Euler characteristic weighted by the
    local Euler obstruction. Proven (Nash blowup and torus localization: see the module docstring).
    ``weights``: the torus weights ``(sigma, tau)`` of the localization (every ``sigma_i - tau_j`` distinct; the
    result does not depend on them: a check), by default fixed ones.

    >>> chern_mather_determinantal(2, 1)  # P^1 x P^1: c = (1+h_1)^2 (1+h_2)^2
    (2, 4, 4)
    >>> chern_mather_determinantal(3, 2)  # the determinant cubic of P^8
    (3, 18, 54, 102, 126, 102, 54, 18)
    """
    d = _positive("d", d)
    r = _rank(d, r)
    if weights is not None:
        sigma, tau = (list(w) for w in weights)
        if len(sigma) != d or len(tau) != d or len({a - b for a in sigma for b in tau}) != d * d:
            raise InvalidArgumentError(
                f"weights={weights!r}: two lists of {d} integers with every difference sigma_i - tau_j distinct"
            )
        return _localize(d, r, sigma, tau)
    return _chern_mather_determinantal(d, r)  # cached after the arguments are checked (True == 1 as a key)


def chern_mather_projective_space(n: int) -> tuple[int, ...]:
    """``deg(c_i(P^n) . h^(n-i)) = binom(n+1, i)`` (``P^n`` is smooth: ``c^M = c = (1+h)^(n+1)``).

    >>> chern_mather_projective_space(2)
    (1, 3, 3)
    """
    n = check_int(n, "n", minimum=0)
    return tuple(comb(n + 1, i) for i in range(n + 1))


def chern_mather_segre_product(*factors: Sequence[int]) -> tuple[int, ...]:
    """The Chern–Mather degrees of the Segre embedding of ``X_1 x ... x X_k`` from those of the factors (each a
    sequence ``mu_0..mu_(m_j)``): ``c^M`` is multiplicative and ``H = sum h_j``, so
    ``deg(c^M_k . H^(M-k)) = sum_{a_1+...=k} (M-k)! / prod (m_j-a_j)! * prod mu^(j)_(a_j)``.

    >>> chern_mather_segre_product((1, 2), (1, 2))  # P^1 x P^1 again
    (2, 4, 4)
    """
    if not factors:
        raise InvalidArgumentError("factors: at least one factor is needed")
    mus = [_degrees("factor", f) for f in factors]
    out: tuple[int, ...] = mus[0]
    for mu in mus[1:]:
        m1, m2 = len(out) - 1, len(mu) - 1
        M = m1 + m2
        new = []
        for k in range(M + 1):
            new.append(sum(comb(M - k, m1 - a) * out[a] * mu[k - a] for a in range(max(0, k - m2), min(k, m1) + 1)))
        out = tuple(new)
    return out


def polar_degrees(chern_mather: Sequence[int]) -> tuple[int, ...]:
    """The polar degrees ``(delta_0, ..., delta_m)`` of a projective variety of dimension ``m`` from its
    Chern–Mather degrees (Piene): ``delta_j = sum_{i<=j} (-1)^i binom(m-i+1, j-i) mu_i``; ``delta_0`` is the
    degree, the last nonzero one the degree of the dual variety when that is a hypersurface.

    >>> polar_degrees((3, 18, 54, 102, 126, 102, 54, 18))  # det cubic; dual P^2 x P^2 has (6, 12, 12, 6, 3)
    (3, 6, 12, 12, 6, 0, 0, 0)
    """
    mu = _degrees("chern_mather", chern_mather)
    m = len(mu) - 1
    return tuple(sum((-1) ** i * comb(m - i + 1, j - i) * mu[i] for i in range(j + 1)) for j in range(m + 1))


def ed_degree_from_chern_mather(chern_mather: Sequence[int]) -> int:
    """The generic ED degree ``sum_i (-1)^i (2^(m+1-i) - 1) mu_i`` (the sum of :func:`polar_degrees`).

    >>> ed_degree_from_chern_mather(chern_mather_determinantal(3, 2))  # = P^2 x P^2's (duality)
    39
    """
    mu = _degrees("chern_mather", chern_mather)
    m = len(mu) - 1
    return sum((-1) ** i * (2 ** (m + 1 - i) - 1) * mu[i] for i in range(m + 1))


def _size(d: int, d_out: int, a: int) -> tuple[int, int, int]:
    return _positive("d", d), _positive("d_out", d_out), _positive("a", a)


def determinantal_segre_chern_mather(d: int, d_out: int, a: int) -> tuple[int, ...]:
    """Chern–Mather degrees of the Segre product ``P(D_r) x P^(dd'-1)`` upstairs of ``(d, d', a)``,
    ``r = min(a, d)``."""
    d, d_out, a = _size(d, d_out, a)
    return chern_mather_segre_product(
        chern_mather_determinantal(d, min(a, d)), chern_mather_projective_space(d * d_out - 1)
    )


def determinantal_segre_polar_degrees(d: int, d_out: int, a: int) -> tuple[int, ...]:
    """The polar degrees of the Segre product ``P(D_r) x P^(dd'-1)`` (``delta_0`` its degree).

    >>> determinantal_segre_polar_degrees(2, 1, 2)  # P^3 x P^1
    (4, 6, 4, 0, 0)
    """
    return polar_degrees(determinantal_segre_chern_mather(d, d_out, a))


def determinantal_segre_ed_degree(d: int, d_out: int, a: int) -> int:
    """The generic ED degree of the Segre product ``sigma(P(D_r) x P^(dd'-1))``, ``r = min(a, d)``, for any
    sizes (proven for the Segre product; for the neuromanifold see :func:`polar_prediction`).

    >>> [determinantal_segre_ed_degree(*s) for s in [(2, 1, 2), (2, 2, 1), (3, 1, 3), (3, 1, 2)]]
    [14, 196, 543, 7965]
    """
    return ed_degree_from_chern_mather(determinantal_segre_chern_mather(d, d_out, a))


@dataclass(frozen=True)
class PolarPrediction:
    """The generic ED degree predicted for the neuromanifold of ``(d, d', a)`` (``t >= 2``), or ``None``."""

    d: int
    d_out: int
    a: int
    rank: int
    singular: bool  # D_r singular (1 < r < d): Chern–Mather classes, not Chern classes
    polar_degrees: tuple[int, ...]  # of the Segre product upstairs
    upstairs: int  # generic ED degree of the Segre product upstairs (always defined)
    value: int | None  # the prediction for the neuromanifold (None where the projection is 2:1)
    status: str

    def to_dict(self) -> dict[str, object]:
        return {
            "size": [self.d, self.d_out, self.a],
            "rank": self.rank,
            "singular": self.singular,
            "polar_degrees": list(self.polar_degrees),
            "upstairs": self.upstairs,
            "value": self.value,
            "status": self.status,
        }


def polar_prediction(d: int, d_out: int, a: int) -> PolarPrediction:
    """The neuromanifold's generic ED degree as the Segre product's, for every rank (the singular ones too).

    ``value`` is ``None`` at ``d' = a = 1`` (``d >= 2``), where the projection is 2:1 and the values differ
    (``(2,1,1)``: 10 against 34 upstairs). Elsewhere it is the Segre product's generic ED degree: proven for the
    Segre product; for the neuromanifold it is landscape-formula's conjecture, with the argument of the polar
    report (not yet reviewed), agreeing with the seven sizes counted.

    >>> p = polar_prediction(3, 1, 2)
    >>> p.value, p.singular, p.polar_degrees[0]
    (7965, True, 108)
    >>> polar_prediction(2, 1, 1).value is None
    True
    """
    d, d_out, a = _size(d, d_out, a)
    r = min(a, d)
    polar = determinantal_segre_polar_degrees(d, d_out, a)
    upstairs = sum(polar)
    singular = 1 < r < d
    if d_out == 1 and r == 1 and d >= 2:
        return PolarPrediction(
            d,
            d_out,
            a,
            r,
            singular,
            polar,
            upstairs,
            None,
            "does not apply: the projection is 2:1 (d' = a = 1), not birational",
        )
    return PolarPrediction(
        d,
        d_out,
        a,
        r,
        singular,
        polar,
        upstairs,
        upstairs,
        "the generic ED degree of the Segre product upstairs (proven for it, from "
        + ("Chern-Mather classes" if singular else "Chern classes")
        + "); for the neuromanifold: equal where counted, argued (not reviewed) where not",
    )
