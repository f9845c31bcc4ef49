"""The forms ``G`` the distance is measured with: Euclidean, generic, and the Gram form of a data set.

docs/math/landscape.md (landscape-metrics).  On the reduced coordinates
``x`` of one layer (``n`` of them; ``x_{k,m,ij}`` the coefficient of
``z_i z_j`` in ``q_{k,m}(z) = (A_k . z)(V_m . z)``, :mod:`ag_attention._models.coordinates`):

* ``euclidean``: the identity (each coordinate the plain coefficient of its
  monomial: a rescaling of the coordinates changes the ED degree, so this is
  a convention, stated with every result);
* ``generic``: a random symmetric matrix (the generic ED degree, an
  invariant of the variety);
* ``data``: the Gram form of the squared loss on ``N`` input sequences
  ``X_1..X_N`` (``t`` tokens each): the outputs are linear in ``x``,
  ``f(X_n) = E(X_n) x`` (:func:`evaluation_matrix`), so
  ``sum_n |E(X_n) x - Y_n|^2 = x^T G x - 2 w^T x + const`` with
  ``G = sum_n E(X_n)^T E(X_n)`` and ``w = sum_n E(X_n)^T Y_n``.

The forms are one table, :data:`METRICS` (name -> :class:`Metric`: how the form is built on given coordinates,
:class:`Space`, and the flags the routes read); :mod:`.ed`, :mod:`.ideal_ed` and :mod:`.models` read the entry,
never the name, so a new metric is one entry (docs/developer.md).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._checks import check_choice, check_int
from .._errors import InvalidArgumentError
from .._models import reduced_keys

__all__ = [
    "METRICS",
    "Metric",
    "Space",
    "evaluation_matrix",
    "gram",
    "metric",
    "data_inputs",
    "default_samples",
    "reduced_coordinates",
]


def evaluation_matrix(X: Any, d: int, e: int, causal: bool = False) -> np.ndarray:
    """``E(X)``: the outputs of one layer on the sequence ``X`` (``t x d``, tokens as rows) as a linear map of
    the reduced coordinates, ``(t d') x n`` (exact: object array).

    ``f(X)_{i,m} = sum_j sum_k X[i,k] q_{k,m}(X[j])`` (``j <= i`` with a causal mask), and the coefficient of
    ``x_{k,m,ab}`` in it is ``X[i,k] sum_j X[j,a] X[j,b]``.
    """
    X = np.asarray(X, dtype=object)
    if X.ndim != 2 or X.shape[1] != d:
        raise InvalidArgumentError(f"an input sequence must be t x d = ? x {d}, got shape {X.shape}")
    t = X.shape[0]
    keys = reduced_keys(d, e)
    E = np.zeros((t * e, len(keys)), dtype=object)
    for i in range(t):
        js = range(i + 1) if causal else range(t)
        for col, (k, m, a, b) in enumerate(keys):
            E[i * e + m, col] = X[i, k] * sum((X[j, a] * X[j, b] for j in js), 0)
    return E


def gram(
    inputs: Iterable[Any], targets: Sequence[Any] | None, d: int, e: int, causal: bool = False
) -> tuple[np.ndarray, np.ndarray | None, Any]:
    """``(G, w, c)`` with ``sum_n |E(X_n) x - Y_n|^2 = x^T G x - 2 w^T x + c`` (``w, c`` None without targets).

    Exact: the sequences are taken :data:`GRAM_CHUNK` at a time, their ``E`` stacked and brought to integers over
    a common denominator, ``E^T E`` and ``E^T Y`` formed in integers (Python's, through numpy), and divided once
    per chunk (measured at (4,4) with 40 Gaussian float sequences: 34 s with a Fraction per product)."""
    n = len(reduced_keys(d, e))
    G = np.zeros((n, n), dtype=object)
    w = np.zeros(n, dtype=object) if targets is not None else None
    c: Any = 0
    Es: list[np.ndarray] = []
    Ys: list[np.ndarray] = []

    def flush() -> None:
        nonlocal G, w, c
        if not Es:
            return
        E, dE = _integers(np.concatenate(Es))
        G = G + _divide(E.T.dot(E), dE * dE)
        if w is not None:
            Y, dY = _integers(np.concatenate(Ys))
            w = w + _divide(E.T.dot(Y), dE * dY)
            c += Fraction(int(Y.dot(Y)), dY * dY)
        Es.clear()
        Ys.clear()

    for idx, X in enumerate(inputs):
        E = evaluation_matrix(X, d, e, causal)
        Es.append(E)
        if targets is not None:
            Y = np.asarray(targets[idx], dtype=object).reshape(-1)
            if Y.shape[0] != E.shape[0]:
                raise InvalidArgumentError(
                    f"targets[{idx}] has {Y.shape[0]} entries, the outputs {E.shape[0]} "
                    f"(t x d' = {E.shape[0] // e} x {e})"
                )
            Ys.append(Y)
        if len(Es) >= GRAM_CHUNK:
            flush()
    flush()
    if w is not None and all(isinstance(v, Fraction) and v.denominator == 1 for v in np.concatenate([G.flat, w])):
        G = np.vectorize(int, otypes=[object])(G)  # integers stay integers (the old arithmetic's types)
        w = np.vectorize(int, otypes=[object])(w)
        c = int(c) if Fraction(c).denominator == 1 else c
    return G, w, c


#: sequences per exact integer product in :func:`gram`
GRAM_CHUNK = 256


def _integers(M: np.ndarray) -> tuple[np.ndarray, int]:
    """``(M * D, D)``: an object array of exact rationals as Python integers over their common denominator."""
    values = [v if isinstance(v, Fraction) else Fraction(v) for v in M.flat]  # (floats by their exact value)
    den = 1
    for q in values:
        if den % q.denominator:
            den = math.lcm(den, q.denominator)
    out = np.empty(M.shape, dtype=object)
    flat = out.reshape(-1)
    for k, q in enumerate(values):
        flat[k] = q.numerator * (den // q.denominator)
    return out, den


def _divide(M: np.ndarray, den: int) -> np.ndarray:
    """The integer array ``M`` divided by ``den``, as exact Fractions."""
    out: np.ndarray = np.vectorize(lambda v: Fraction(int(v), den), otypes=[object])(M)
    return out


#: the most random sequences the data form is built from: its rank is at most the number of reduced coordinates,
#: and each sequence costs about 0.4 ms (d = 3, d' = 2, t = 3), so 100,000 take under a minute; 10^9 took
#: 2.2 GB and growing after 60 s (the sequences were all made first)
MAX_DATA_SAMPLES = 100_000


def data_inputs(d: int, t: int, samples: int, seed: int) -> Iterator[np.ndarray]:
    """``samples`` random integer input sequences (``t x d``, entries in ``[-9, 9]``) from ``seed``, one at a
    time (memory does not grow with ``samples``)."""
    return _sequences(d, t, samples, random.Random(seed))


def _sequences(d: int, t: int, samples: int, rng: random.Random) -> Iterator[np.ndarray]:
    for _ in range(samples):
        yield np.array([[rng.randint(-9, 9) for _ in range(d)] for _ in range(t)], dtype=object)


@dataclass(frozen=True)
class Space:
    """The coordinates a form is built on: ``n`` of them, and what the routes know of them.

    ``prime``: the entries are wanted modulo it (the modular routes: :mod:`.ideal_ed`, :mod:`.models`), else
    exact; ``layer``: ``(d, d', t)`` when they are one layer's reduced coordinates (``t >= 2``), with the mask
    (``causal``) and the data set's size (``samples``); ``coordinates`` and ``monomial``: how a description
    names them and each of their monomials."""

    n: int
    seed: int = 0
    prime: int | None = None
    layer: tuple[int, int, int] | None = None
    causal: bool = False
    samples: int | None = None
    coordinates: str = "the reduced coordinates"
    monomial: str = "monomial"


#: a form's builder: the symmetric ``n x n`` matrix (an object array: exact, or integers mod ``space.prime``) on
#: ``space``, drawing what is random from ``rng``, and its one-line description
Build = Callable[[Space, random.Random], tuple[np.ndarray, str]]


@dataclass(frozen=True)
class Metric:
    """One entry of :data:`METRICS`: what the form is, how it is built, and the flags the routes read.

    ``generic``: a generic form, so the paper's degree formula bounds the ED degree from below and the Segre
    formula predicts it (:func:`~.ed.ed_degree`); ``drawn``: drawn at random from the seed, so it is for ED degrees
    only, never a loss's given form (:func:`~.models.model_critical_points`); ``data``: built from random input
    sequences of one layer, so it takes ``samples``, depends on ``t`` and exists only on a layer's reduced
    coordinates (not for ``t = 1``, an ideal or a model)."""

    summary: str
    build: Build
    generic: bool = False
    drawn: bool = False
    data: bool = False


def _identity(space: Space, rng: random.Random) -> tuple[np.ndarray, str]:
    return np.eye(space.n, dtype=int).astype(object), (
        f"identity on {space.coordinates} (each the plain coefficient of its {space.monomial}; "
        "a rescaling of the coordinates changes the count)"
    )


def _random_symmetric(space: Space, rng: random.Random) -> tuple[np.ndarray, str]:
    n, p = space.n, space.prime
    G = np.zeros((n, n), dtype=object)
    for i in range(n):
        for j in range(i, n):
            G[i, j] = G[j, i] = rng.randrange(1, p) if p else Fraction(rng.randint(-(10**6), 10**6))
    on = "" if space.layer is not None else f" on {space.coordinates}"
    return G, f"a random symmetric form{on} (seed {space.seed})"


def default_samples(n: int, t: int, e: int) -> int:
    """The data form's default number of sequences: a few more than make its Gram form (rank <= ``n``) invertible."""
    return -(-n // (t * e)) + 2


def _data_form(space: Space, rng: random.Random) -> tuple[np.ndarray, str]:
    if space.layer is None:
        raise InvalidArgumentError("metric='data': the Gram form of a data set lives on one layer's coordinates")
    d, e, t = space.layer
    n = space.n
    N = check_int(space.samples if space.samples is not None else default_samples(n, t, e), "samples", minimum=1)
    if N > MAX_DATA_SAMPLES:
        raise InvalidArgumentError(
            f"samples={N:,}: at most {MAX_DATA_SAMPLES:,} sequences (the data form has "
            f"rank at most {n}, the reduced coordinates; more sequences only cost time, "
            "about 0.4 ms each)"
        )
    G, _, _ = gram(_sequences(d, t, N, rng), None, d, e, space.causal)
    return G, f"the Gram form of the squared loss on {N} random input sequences of {t} tokens (seed {space.seed})"


#: the forms, by name: a new metric is one entry (docs/developer.md); the routes read its flags, never its name
METRICS: dict[str, Metric] = {
    "euclidean": Metric("the identity on the coordinates (a convention: a rescaling changes the count)", _identity),
    "generic": Metric("a random symmetric form (the generic ED degree)", _random_symmetric, generic=True, drawn=True),
    "data": Metric("the Gram form of the squared loss on random input sequences", _data_form, drawn=True, data=True),
}


def metric(
    kind: str, d: int, e: int, t: int, *, seed: int, samples: int | None = None, causal: bool = False
) -> tuple[np.ndarray, str]:
    """The form ``G`` of ``kind`` (:data:`METRICS`) on the reduced coordinates, and its description."""
    kind = check_choice(kind, "metric", METRICS)
    space = Space(len(reduced_keys(d, e)), seed, layer=(d, e, t), causal=causal, samples=samples)
    return METRICS[kind].build(space, random.Random(seed))


def reduced_coordinates(A: Any, V: Any) -> np.ndarray:
    """The reduced coordinates ``x(A, V)`` (float64, or complex for complex weights): ``x_{k,m,ab}`` the
    coefficient of ``z_a z_b`` in ``(A_k . z)(V_m . z)``, in the order of :func:`reduced_keys`.

    >>> reduced_coordinates([[1, 2], [0, 1]], [[3, 1]]).tolist()
    [3.0, 7.0, 2.0, 0.0, 3.0, 1.0]
    """
    A = np.asarray(A)
    V = np.asarray(V)
    d, e = A.shape[0], V.shape[0]
    dtype = complex if np.iscomplexobj(A) or np.iscomplexobj(V) else float
    out = np.empty(len(reduced_keys(d, e)), dtype=dtype)
    for i, (k, m, a, b) in enumerate(reduced_keys(d, e)):
        out[i] = A[k, a] * V[m, a] if a == b else A[k, a] * V[m, b] + A[k, b] * V[m, a]
    return out
