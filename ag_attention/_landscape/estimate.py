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

from .._algebra import degree_formula
from .._architecture import Architecture
from .._numeric import default_workers
from .formula import ed_upper_bound, segre_ed_degree
from .system import check_layer

__all__ = [
    "landscape_estimate",
    "paths_per_second",
    "certify_seconds",
    "choose_workers",
    "predicted_solutions",
    "AUTO_SECONDS",
]

#: with ``workers=None`` a problem estimated to take longer than this (in one process) runs on a local Dask cluster
#: of one process per core: below it, the cluster's start (about 5 s) and the latency of its tasks cost more than
#: they bring (measured at (4,1,4): in the steady state two workers track as fast as one process stepping its batch
#: in two threads, and certify twice as fast)
AUTO_SECONDS = 120.0

#: a local cluster is chosen by default only under a time limit of at least this many seconds: starting it and
#: sending it the system takes 3 to 6 s on 2 cores (measured at (4,4,4): 5.5 s), which a short limit cannot spare
CLUSTER_MIN_TIMEOUT = 60.0


def paths_per_second(n: int, workers: int = 1) -> float:
    """Path edges per second for a square system of ``n`` unknowns: in this process (``workers=1``, a batch stepped in
    two threads), or on ``workers`` single-threaded Dask workers (each about half of that). Fitted to
    ``python bench/engines.py --scaling``: 600/s at n = 9, 218/s at n = 21 in one process; two workers 208/s."""
    one = 600.0 * (9.0 / max(n, 1)) ** 1.2
    return float(one if workers <= 1 else one * workers / 2)


def certify_seconds(n: int) -> float:
    """Seconds to certify one solution of ``n`` unknowns (7 ms at n = 9, growing about as n^3)."""
    return 0.007 * (max(n, 1) / 9) ** 3


def _expected(arch: Architecture) -> tuple[int, int, int | None]:
    """``(unknowns, fiber, expected solutions or None)``: the prediction times the fiber, else the degree's."""

    d, e, a, _ = check_layer(arch)
    f = degree_formula(d, e, a, 2)
    n = (d * a + a * (d - a) if a < d else d * d) + e * d + 1
    segre = segre_ed_degree(d, e, a).value
    return n, f.fiber, None if segre is None else segre * f.fiber


def predicted_solutions(arch: Architecture) -> int | None:
    """The solutions a generic form's square system is predicted to have (the Segre prediction times the fiber, a
    conjecture; None without one): the monodromy's progress bar counts towards it."""
    return _expected(arch)[2]


def choose_workers(
    arch: Architecture, workers: int | None, scheduler: str | None = None, timeout: float | None = None
) -> int:
    """``workers`` as given; for ``None``, one per core (a local Dask cluster) when the problem is estimated to take
    more than :data:`AUTO_SECONDS` in one process and ``timeout`` leaves room to start the cluster (at least
    :data:`CLUSTER_MIN_TIMEOUT`), else 1 (this process)."""

    if workers is not None or scheduler is not None:
        return 1 if workers is None else workers
    if timeout is not None and timeout < CLUSTER_MIN_TIMEOUT:
        return 1
    n, fiber, expected = _expected(arch)
    cores = default_workers()
    if expected is None or cores < 2:
        return 1
    return cores if expected * 24 / paths_per_second(n) > AUTO_SECONDS else 1


def landscape_estimate(
    arch: Architecture, timeout: float | None, workers: int | None = 1, scheduler: str | None = None
) -> str:
    """One line: the problem's size, its proven bounds, the prediction, and the time scale against ``timeout``."""
    d, e, a, t = check_layer(arch)
    f = degree_formula(d, e, a, 2)
    fiber = f.fiber
    n = (d * a + a * (d - a) if a < d else d * d) + e * d + 1
    upper = ed_upper_bound(d, e, a, fiber).value
    segre = segre_ed_degree(d, e, a).value
    guess = segre if segre is not None else None
    parts = [
        f"one layer ({d},{e},{a}), t = {t}: a square system of {n} unknowns",
        f"generic ED degree >= {f.degree:,} (degree, proven), <= {upper:,} (Bezout, proven)",
    ]
    if segre is not None:
        parts.append(f"the Segre formula predicts {segre:,} (a conjecture)")
    workers = choose_workers(arch, workers, scheduler, timeout)
    where = (
        "a Dask cluster"
        if scheduler
        else (f"a local Dask cluster of {workers} worker processes" if workers > 1 else "this process")
    )
    if guess is not None:
        solutions = guess * fiber
        seconds = solutions * 24 / paths_per_second(n, workers) + solutions * certify_seconds(n) / workers
        parts.append(f"about {_duration(seconds)} for {solutions:,} solutions in {where}")
    else:
        parts.append(f"in {where}")
    parts.append("limit " + ("none" if timeout is None else f"{timeout:g} s (what is found by then is kept)"))
    return "; ".join(parts)


def _duration(seconds: float) -> str:
    """``seconds`` in words, with the range the estimate holds to (half to twice, idle) or, beyond a year, as out
    of reach."""
    if seconds > 3.2e7:
        return f"{seconds / 3.156e7:.1e} years (out of reach: what the limit finds is kept)"

    def one(s: float) -> str:
        return f"{s:.0f} s" if s < 90 else (f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h")

    return f"{one(seconds)} ({one(seconds / 2)} to {one(2 * seconds)} idle, more under load)"
