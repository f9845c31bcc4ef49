"""What a landscape computation will face, said before it starts: the size, the proven bounds, a time scale.

:func:`landscape_estimate` gives one line for ``ed-degree`` and ``critical-points`` (printed on standard error
before the work, with the limit that bounds it): the square system's unknowns, the ED degree's proven bounds
(:mod:`.formula`: the degree below for the generic form, the multihomogeneous Bezout number above), the Segre
prediction where it applies (a conjecture), and the seconds the numerical route would need for that many
solutions at the rates measured by ``python bench/landscape.py`` on this kind of machine (about 8 loop edges of
3 paths per solution, and one certification each: an order of magnitude, not a promise).  Nothing here runs a
solver.
"""

from __future__ import annotations

from .._architecture import Architecture
from .formula import ed_upper_bound, segre_ed_degree
from .system import check_layer

__all__ = ["landscape_estimate", "paths_per_second", "certify_seconds"]


def paths_per_second(n: int) -> float:
    """Path edges per second of one worker for a square system of ``n`` unknowns (fitted to bench/landscape.py:
    690/s at n = 9, (2,2,2); 600/s at n = 9, (3,1,1); fewer for larger systems, about as 1/n^2)."""
    return 6.0e4 / max(n, 1) ** 2


def certify_seconds(n: int) -> float:
    """Seconds to certify one solution of ``n`` unknowns (7 ms at n = 9, growing about as n^3)."""
    return 0.007 * (max(n, 1) / 9) ** 3


def landscape_estimate(arch: Architecture, timeout: float | None, workers: int | None = 1,
                       scheduler: str | None = None) -> str:
    """One line: the problem's size, its proven bounds, the prediction, and the time scale against ``timeout``."""
    from .._algebra.degree import degree_formula

    d, e, a, t = check_layer(arch)
    f = degree_formula(d, e, a, 2)
    fiber = f.fiber
    n = (d * a + a * (d - a) if a < d else d * d) + e * d + 1
    upper = ed_upper_bound(d, e, a, fiber).value
    segre = segre_ed_degree(d, e, a).value
    guess = segre if segre is not None else None
    parts = [f"one layer ({d},{e},{a}), t = {t}: a square system of {n} unknowns",
             f"generic ED degree >= {f.degree:,} (degree, proven), <= {upper:,} (Bezout, proven)"]
    if segre is not None:
        parts.append(f"the Segre formula predicts {segre:,} (a conjecture)")
    where = "a Dask cluster" if scheduler else (f"{workers} worker processes" if workers and workers > 1
                                                else "this process")
    if guess is not None:
        solutions = guess * fiber
        speed = paths_per_second(n) * (workers if workers and workers > 1 else 1)
        seconds = solutions * 24 / speed + solutions * certify_seconds(n) / max(1, workers or 1)
        parts.append(f"about {_duration(seconds)} for {solutions:,} solutions in {where}")
    parts.append("limit " + ("none" if timeout is None else f"{timeout:g} s (what is found by then is kept)"))
    return "; ".join(parts)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
