"""Certified solutions of a square polynomial system: the Krawczyk test in ball arithmetic.

docs/math/landscape.md (landscape-certify).  For a square system ``F`` with a
ball evaluation (``ball_evaluate(box, parameter) -> (F(box), F'(box))``,
balls that hold every value over the box), a float64 approximation ``c`` of a
solution, a box ``X = c + [-r, r]^n + [-r, r]^n i`` and any matrix ``Y``
(here the float64 inverse of ``F'(c)``), the *Krawczyk operator*

    K(X) = c - Y F(c) + (I - Y F'(X)) (X - c)

has this property (Krawczyk 1969; Moore 1977; Rump 1983): **if K(X) lies in the
interior of X, then X holds exactly one solution of F = 0, and it is regular**
(``F'`` is invertible there).  Every operation runs in python-flint's ball
arithmetic (:mod:`ag_attention._exact.balls`), the exact coefficients of ``F``
enclosed by balls, so a success is a proof (up to the correctness of FLINT).

* **real**: when ``F`` has real coefficients and the box is centered on a real
  point, ``X`` is closed under complex conjugation; the conjugate of its unique
  solution is a solution in ``X``, hence the same one: the solution is *real*.
* **not real**: a box whose imaginary part excludes 0 in some coordinate holds
  no real point.
* **distinct**: solutions in pairwise disjoint boxes are distinct; a candidate
  whose box meets another certified box is not counted (it may be the same
  solution found twice).
* **conjugates**: for real ``F`` the conjugate box of a certified non-real box
  holds the conjugate solution: certified with no further work.

The count of certified distinct solutions is a *proven lower bound* on the
number of (regular) solutions at that parameter.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .. import _clock, _progress
from .._exact import balls

__all__ = [
    "BallSystem",
    "Certified",
    "Certification",
    "krawczyk",
    "certify_solutions",
    "certify_each",
    "distinct",
    "RADII",
]

#: the radii tried for each box, relative to ``1 + |c|`` (the first that passes is kept); the smallest last, for
#: ill-conditioned points (at (3,1,2), three of 7,965 with condition numbers 1.5e7 to 5.8e7 failed from 1e-11 up:
#: the Krawczyk contraction grows as cond x r, 1.6 at 1e-11 and 0.016 at 1e-13; the center is good to 128 bits)
RADII = (1e-11, 1e-9, 1e-7, 1e-5, 1e-13, 1e-15)
#: bits of the ball arithmetic
BITS = 128
#: a candidate the certification did not reach before its deadline
UNTRIED = "untried"


class BallSystem(Protocol):
    """What the certification needs of a square system (with charts, as in
    :class:`ag_attention._numeric.tracker.ParametricSystem`, its methods take ``chart=``, and
    ``ball_invariants(box, chart)`` tells solutions in different charts apart)."""

    @property
    def n(self) -> int: ...

    def evaluate(self, z: np.ndarray, p: np.ndarray, jacobian: bool = True, **chart: Any) -> Any: ...

    def ball_evaluate(
        self, box: np.ndarray, w: Sequence[Any], jacobian: bool = True, **chart: Any
    ) -> tuple[np.ndarray, Any]: ...


@dataclass(frozen=True)
class Certified:
    """One certified solution: the center and radius of its box, and whether it is proven real (True), proven
    not real (False) or neither (None)."""

    center: np.ndarray
    radius: float
    real: bool | None
    box: np.ndarray = field(repr=False)  # the complex balls (the unique solution lies in their product)
    chart: np.ndarray | None = None  # the chart the box is in (systems with charts)
    key: list[Any] | None = field(default=None, repr=False)  # balls of the chart-free invariants

    def __getstate__(self) -> dict[str, Any]:  # balls as integers (a Dask worker sends it back): balls.ball_parts
        return {
            "center": self.center,
            "radius": self.radius,
            "real": self.real,
            "box": balls.ball_parts(self.box),
            "chart": self.chart,
            "key": None if self.key is None else balls.ball_parts(self.key),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name in ("center", "radius", "real", "chart"):
            object.__setattr__(self, name, state[name])
        object.__setattr__(self, "box", balls.balls_from_parts(state["box"]))
        object.__setattr__(self, "key", None if state["key"] is None else list(balls.balls_from_parts(state["key"])))


@dataclass
class Certification:
    """The certified solutions among candidates, and what was not certified."""

    solutions: list[Certified]
    candidates: int
    failed: int  # candidates the Krawczyk test did not pass at any radius
    duplicates: int  # candidates whose certified box meets another's (not counted)
    conjugates: int  # solutions certified as the conjugates of certified ones
    seconds: float
    radii: tuple[float, ...] = RADII
    bits: int = BITS
    unchecked: int = 0  # candidates not tried before the deadline (the count is then a lower bound)

    @property
    def count(self) -> int:
        return len(self.solutions)

    @property
    def real(self) -> int:
        return sum(1 for s in self.solutions if s.real is True)

    @property
    def nonreal(self) -> int:
        return sum(1 for s in self.solutions if s.real is False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "certified": self.count,
            "real": self.real,
            "not_real": self.nonreal,
            "realness_undecided": self.count - self.real - self.nonreal,
            "candidates": self.candidates,
            "failed": self.failed,
            "duplicates": self.duplicates,
            "conjugates_added": self.conjugates,
            "unchecked": self.unchecked,
            "seconds": round(self.seconds, 3),
            "method": "Krawczyk test in ball arithmetic",
            "bits": self.bits,
            "radii": list(self.radii),
        }


def _charted(system: Any) -> bool:
    return bool(getattr(system, "n_chart", 0))


def krawczyk(
    system: Any,
    center: np.ndarray,
    radius: Any,
    parameter: Sequence[Any],
    Y: np.ndarray,
    chart: np.ndarray | None = None,
    refine: int = 2,
) -> np.ndarray | None:
    """The box ``c_i + [-r_i, r_i](1 + i)`` (``radius``: one ``r`` or one per coordinate) if the Krawczyk
    test proves it holds exactly one solution of ``F(.; parameter)``; None otherwise.

    The center ``c`` is first refined by ``refine`` Newton steps ``c - Y D F(c)`` at the working precision
    (:data:`BITS`: a center good to far more digits than float64's, so a tiny box passes even where ``F'`` is
    ill-conditioned); it is any point: the test proves what it proves for whatever center it gets.  In the
    variables ``y`` with ``z = c + D y`` (``D = diag(r_i)``, so the box is ``|Re y_i|, |Im y_i| <= 1``),
    ``K = -Y F(c) + (I - Y F'(X) D) [-1, 1]^n`` must lie in the interior of the unit box; ``Y`` approximates
    ``(F'(c) D)^{-1}``."""
    n = system.n
    r = np.broadcast_to(np.asarray(radius, dtype=float), (n,))
    kw = {"chart": chart} if _charted(system) else {}
    with balls.precision(BITS):
        Dm = balls.complex_matrix(np.diag(r))
        Ym = balls.complex_matrix(Y)
        c = balls.complex_box(center, 0.0)
        for _ in range(refine):
            Fc, _ = system.ball_evaluate(c, parameter, jacobian=False, **kw)
            step = Dm * (Ym * balls.complex_matrix([[v] for v in Fc]))
            c = balls.midpoints([c[i] - step[i, 0] for i in range(n)])
        Fc, _ = system.ball_evaluate(c, parameter, jacobian=False, **kw)
        X = balls.around(c, r)
        _, JX = system.ball_evaluate(X, parameter, jacobian=True, **kw)
        Fm = balls.complex_matrix([[v] for v in Fc])
        unit = balls.complex_matrix([[b] for b in balls.complex_box(np.zeros(n), 1.0)])
        identity = balls.complex_matrix(np.eye(n))
        K = (identity - Ym * (JX * Dm)) * unit - Ym * Fm
        for i in range(n):
            if not balls.strictly_inside(K[i, 0], unit[i, 0]):
                return None
    return X


def _scaled_inverse(J: np.ndarray, d: np.ndarray) -> np.ndarray | None:
    """An approximate inverse of ``J diag(d)``, computed with the rows equilibrated (better conditioned)."""
    JD = J * d[None, :]
    rows = np.max(np.abs(JD), axis=1)
    if not np.all(rows > 0):
        return None
    try:
        Y = np.linalg.inv(JD / rows[:, None]) / rows[None, :]
    except np.linalg.LinAlgError:
        return None
    return Y if np.isfinite(Y).all() else None


def certify_each(
    system: Any,
    candidates: np.ndarray,
    parameter: Sequence[Any],
    float_parameter: np.ndarray,
    real_system: bool,
    charts: np.ndarray | None = None,
    keep: Callable[..., bool] | None = None,
    wall_deadline: float | None = None,
) -> list[Certified | None | str]:
    """Each candidate through :func:`krawczyk` (and ``keep``), independently: its certified box, None (failed), or
    :data:`UNTRIED` (not tried before ``wall_deadline``, a ``time.time()``).  The task a Dask worker runs."""
    out: list[Certified | None | str] = []
    charted = _charted(system)
    for row, c in enumerate(np.atleast_2d(np.asarray(candidates, dtype=complex))):
        if wall_deadline is not None and time.time() > wall_deadline:
            out.append(UNTRIED)
            continue
        chart = charts[row] if charted and charts is not None else None
        got = _certify_one(system, c, parameter, float_parameter, real_system, chart)
        if got is not None and keep is not None and not (keep(got.box, chart) if charted else keep(got.box)):
            got = None
        out.append(got)
    return out


def certify_solutions(
    system: Any,
    candidates: np.ndarray,
    parameter: Sequence[Any],
    *,
    float_parameter: np.ndarray,
    real_system: bool,
    conjugates: bool = True,
    keep: Callable[..., bool] | None = None,
    charts: np.ndarray | None = None,
    desc: str = "certify",
    deadline: float | None = None,
    executor: Any = None,
) -> Certification:
    """Certify each candidate (rows of ``candidates``, in the charts ``charts``) by :func:`krawczyk`, at the radii
    :data:`RADII`.

    ``parameter``: the exact parameter (Fractions, or complex floats taken as exact); ``float_parameter`` its
    float64 value (for ``Y``).  ``real_system``: ``F`` has real coefficients (real charts included; then a
    candidate with a small imaginary part is first tried on a real-centered box, and the conjugates of non-real
    solutions are added).  ``keep``: an extra proof asked of each box (e.g. off a locus; called with the box, and
    the chart for systems with charts), a box failing it is counted as failed.  Distinct: boxes (or, with charts,
    the balls of the invariants) pairwise disjoint (:func:`distinct`).  ``deadline`` (``_clock.now()``): the
    candidates not reached by then are not certified (``unchecked``: the count is then a lower bound of what the
    candidates hold); ``executor``: a Dask executor (:mod:`.executors`) certifies chunks on its workers.
    """
    t0 = time.perf_counter()
    candidates = np.atleast_2d(np.asarray(candidates, dtype=complex))
    wall = None if deadline is None else _clock.wall(deadline)
    got: list[Certified | None | str] = []
    if executor is not None and getattr(executor, "kind", "") == "Dask" and len(candidates) > 1:
        got = executor.map_certify(
            system, candidates, parameter, float_parameter, real_system, charts, keep, wall, desc
        )
    else:
        charted = _charted(system)
        try:
            with _progress.bar(total=len(candidates), desc=desc, unit="solution") as bar:
                for row in range(len(candidates)):
                    bar.update()
                    if deadline is not None and _clock.now() > deadline:
                        break
                    got.extend(
                        certify_each(
                            system,
                            candidates[row : row + 1],
                            parameter,
                            float_parameter,
                            real_system,
                            None if not charted or charts is None else charts[row : row + 1],
                            keep,
                        )
                    )
        except KeyboardInterrupt:  # what is certified so far is kept: the rest untried
            pass
        got.extend([UNTRIED] * (len(candidates) - len(got)))
    return distinct(got, real_system and conjugates, time.perf_counter() - t0)


def distinct(got: list[Certified | None | str], conjugates: bool, seconds: float = 0.0) -> Certification:
    """The certified boxes ``got`` (None: failed) kept pairwise disjoint, in order, each followed by its conjugate
    (``conjugates``: a real system; the conjugate box of a certified non-real box holds the conjugate solution);
    a box meeting a kept one is a duplicate (not counted; unless it meets only added conjugates).  Overlaps are
    found by a sweep over the outward-rounded bounds of one coordinate (``O(N log N)`` plus the overlapping pairs),
    then decided on the balls (:func:`_meets`)."""
    items: list[Certified] = []
    mirror: list[bool] = []
    for g in got:
        if not isinstance(g, Certified):
            continue
        items.append(g)
        mirror.append(False)
        if conjugates and g.real is False:
            box = np.array([z.conjugate() for z in g.box], dtype=object)
            key = None if g.key is None else [z.conjugate() for z in g.key]
            items.append(Certified(np.conj(g.center), g.radius, False, box, g.chart, key))
            mirror.append(True)
    neighbours = _overlapping_pairs(items)
    kept: list[int] = []
    is_kept = np.zeros(len(items), dtype=bool)
    duplicates = added = 0
    for i in range(len(items)):
        hits = [j for j in neighbours.get(i, ()) if j < i and is_kept[j] and _meets(items[i], items[j])]
        if not hits:
            is_kept[i] = True
            kept.append(i)
            added += mirror[i]
        elif not mirror[i] and not any(mirror[j] for j in hits):
            duplicates += 1  # (the conjugate of one certified before is no duplicate of the candidates)
    unchecked = sum(1 for g in got if isinstance(g, str))
    failed = sum(1 for g in got if g is None)
    return Certification([items[i] for i in kept], len(got), failed, duplicates, added, seconds, unchecked=unchecked)


def _bounds(c: Certified) -> np.ndarray:
    """``(re_lo, re_hi, im_lo, im_hi)`` per coordinate of what tells solutions apart (invariants, else the box)."""
    return np.array([balls.ball_bounds(z) for z in (c.key if c.key is not None else c.box)], dtype=float)


def _overlapping_pairs(items: list[Certified]) -> dict[int, list[int]]:
    """For each item, the items whose bounds overlap its own in the sweep coordinate (a superset of those it may
    meet)."""
    if len(items) < 2:
        return {}
    B = np.array([_bounds(c) for c in items])  # (N, n, 4)
    mids = np.concatenate([(B[:, :, 0] + B[:, :, 1]) / 2, (B[:, :, 2] + B[:, :, 3]) / 2], axis=1)
    spread = np.nanvar(mids, axis=0)
    col = int(np.nanargmax(spread)) if np.isfinite(spread).any() else 0
    n = B.shape[1]
    lo = B[:, col % n, 0 if col < n else 2]
    hi = B[:, col % n, 1 if col < n else 3]
    order = np.argsort(lo, kind="stable")
    out: dict[int, list[int]] = {}
    active: list[int] = []
    for i in order:
        active = [j for j in active if hi[j] >= lo[i]]
        for j in active:
            out.setdefault(int(i), []).append(j)
            out.setdefault(j, []).append(int(i))
        active.append(int(i))
    return out


def _meets(a: Certified, b: Certified) -> bool:
    """Whether two certified solutions may be the same (their boxes, or their invariants' balls, overlap)."""
    if a.key is not None and b.key is not None:
        return not balls.boxes_disjoint(a.key, b.key)
    if np.max(np.abs(a.center - b.center)) > 4 * (a.radius + b.radius):
        return False
    return not balls.boxes_disjoint(a.box, b.box)


def _certify_one(
    system: Any,
    c: np.ndarray,
    parameter: Sequence[Any],
    float_parameter: np.ndarray,
    real_system: bool,
    chart: np.ndarray | None = None,
) -> Certified | None:
    kw = {"chart": None if chart is None else chart[None, :]} if _charted(system) else {}
    scale = 1 + float(np.max(np.abs(c)))
    tries: list[tuple[np.ndarray, bool]] = []
    if real_system and np.max(np.abs(c.imag)) < 1e-6 * scale:
        r = c.real.astype(complex)
        for _ in range(2):  # Newton in real arithmetic: F is real on real points
            F, J = system.evaluate(r[None, :], float_parameter, **kw)
            try:
                r = (r - np.linalg.solve(J[0], F[0])).real.astype(complex)
            except np.linalg.LinAlgError:
                break
        if np.isfinite(r).all():
            tries.append((r, True))
    tries.append((c, False))
    for center, real_centered in tries:
        _, J = system.evaluate(center[None, :], float_parameter, **kw)
        size = np.abs(center)
        shape = size + 1e-3 * float(np.max(size)) + 1e-300  # each coordinate's box in proportion to it
        Y = _scaled_inverse(J[0], shape)
        if Y is None:
            continue
        for rel in RADII:
            radii = rel * shape
            Yr = Y / rel  # the inverse of J diag(radii)
            box = krawczyk(system, center, radii, parameter, Yr, chart)
            if box is not None:
                real: bool | None = None  # realness means nothing for a system with complex coefficients
                if real_system and real_centered:
                    real = True
                elif real_system and any(balls.ball_bounds(z)[2] > 0 or balls.ball_bounds(z)[3] < 0 for z in box):
                    real = False
                key = None
                if hasattr(system, "ball_invariants") and _charted(system):
                    with balls.precision(BITS):
                        key = system.ball_invariants(box, chart)
                return Certified(center, float(np.max(radii)), real, box, chart, key)
    return None
