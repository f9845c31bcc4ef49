"""Other families through the general landscape API (:func:`~ag_attention.model_critical_points`), against
published counts: one of the works of ``ag-attention reproduce related`` (docs/related.md, related-models).

* **Linear convolutional networks** (Kohn, Montúfar, Shahverdi, Trager, arXiv:2304.05752; Shahverdi,
  arXiv:2401.16613): for generic data the number of complex critical points of the squared loss in the filters,
  every filter nonzero and one point per rescaling orbit, is the generic ED degree of the Segre variety
  ``P^(k_1 - 1) x ... x P^(k_L - 1)``, whatever the strides.  The expected number (:data:`LCN_SOURCE`, a
  *theorem* row, not a number they printed): that theorem, evaluated by the package's own Chern class formula
  (Draisma, Horobeţ, Ottaviani, Sturmfels, Thomas 2016, Thm. 5.8;
  :func:`~ag_attention._landscape.formula.segre_product_ed_degree`).  The paper's own tables are not in the
  repository's references (its text could not be read here), so no row is *outside*.  Ours: the critical points
  of a generic positive definite quadratic loss on the filters, counted on the gauge ``l_i(w_i) = 1``
  (``i < L``: one point per orbit, every filter but the last nonzero) with ``l(w_L) != 0`` excluded.
* **Deep linear networks** (Mehta, Chen, Tang, Hauenstein, arXiv:1810.07716; Bharadwaj, Hoşten,
  arXiv:2301.12651): ``L = 1/2 [sum_i |W_(H+1) ... W_1 x_i - y_i|^2 + sum_l |Lambda_l o W_l|^2]`` with generic
  data and entrywise regularization; ``N_C`` every complex critical point, ``N_C*`` those with every weight
  nonzero.  Their numbers (:data:`DLN_SOURCE`, *outside*): the authors' raw outputs (100 random instances per
  architecture) in their repository
  ``ayusbhar2/homotopy_continuatioNN`` at commit ``eb15bfd`` (``analysis/cloud_output/*.csv``; the mode over the
  runs).  Ours: ``model_critical_points(..., regularization=Lambda^2, exclude="none" / "torus")`` with random
  rational data and weights drawn from a wide range (a draw with two equal weights is not generic: measured, one
  such draw gave 69 instead of 73).
"""

from __future__ import annotations

import random
import time
from fractions import Fraction
from typing import Any

from ..._landscape import PolynomialModel, model_critical_points, segre_product_ed_degree
from ..report import Check, Report, Table
from ..sources import Source

__all__ = ["LCN_ROWS", "LCN_SOURCE", "DLN_ROWS", "DLN_SOURCE", "models_section", "lcn_count", "dln_counts"]

#: (filter sizes, strides, in the quick run): their count is the Segre product's generic ED degree
LCN_ROWS: tuple[tuple[tuple[int, ...], tuple[int, ...], bool], ...] = (
    ((2, 2), (1, 1), True),
    ((2, 3), (1, 1), True),
    ((3, 3), (1, 1), True),
    ((2, 2), (2, 1), True),
    ((3, 3), (2, 1), True),
    ((2, 2, 2), (1, 1, 1), True),
    ((2, 4), (1, 1), False),
    ((3, 4), (1, 1), False),
    ((2, 2, 3), (1, 1, 1), False),
    ((2, 2, 3), (2, 2, 1), False),
    ((2, 2, 2, 2), (1, 1, 1, 1), False),
    ((4, 4), (1, 1), False),
)

#: (d_i, H, m, d_x, d_y) -> (N_C, N_C*) from their repository's raw outputs (commit eb15bfd), and the quick flag
#: ((2, 1, 1, 2, 3): 73, 48 agree too, docs/related.md, but its torus count took 451 s: not in the run)
DLN_ROWS: tuple[tuple[tuple[int, int, int, int, int], tuple[int, int], bool], ...] = (
    ((1, 1, 1, 1, 1), (5, 4), True),
    ((1, 1, 1, 2, 2), (9, 8), True),
    ((1, 1, 2, 2, 2), (17, 16), True),
    ((1, 2, 1, 1, 1), (17, 16), True),
    ((2, 1, 1, 1, 1), (9, 0), True),
    ((2, 1, 1, 2, 2), (33, 16), True),
    ((3, 1, 1, 1, 1), (13, 0), True),
    ((1, 2, 2, 2, 2), (81, 80), False),
    ((2, 1, 2, 1, 2), (33, 16), False),
    ((3, 1, 1, 2, 1), (13, 0), False),
    ((3, 1, 1, 1, 2), (73, 0), False),
    ((1, 1, 2, 3, 4), (33, 32), False),
)

REPOSITORY = "ayusbhar2/homotopy_continuatioNN"
COMMIT = "eb15bfd"

#: every LCN row's expected value: Shahverdi's theorem evaluated by our formula (no number printed by them)
LCN_SOURCE = Source.theorem(
    "Shahverdi, arXiv:2401.16613 (the theorem of its abstract), evaluated by segre_product_ed_degree "
    "(Draisma, Horobeţ, Ottaviani, Sturmfels, Thomas 2016, Thm. 5.8)"
)

#: every DLN row's expected values: the authors' published raw outputs
DLN_SOURCE = Source.outside(
    f"Bharadwaj, Hoşten, arXiv:2301.12651: raw outputs in {REPOSITORY}@{COMMIT}, analysis/cloud_output/*.csv "
    "(the mode over 100 instances)"
)


def _wide(rng: random.Random) -> Fraction:
    return Fraction(rng.randint(-(10**6), 10**6), rng.randint(1, 10**3))


def lcn_count(filters: tuple[int, ...], strides: tuple[int, ...], seed: int, timeout: float = 600.0) -> Any:
    """The critical points of a generic positive definite quadratic loss on a linear convolutional network, one per
    rescaling orbit, every filter nonzero (module docstring)."""
    rng = random.Random(seed)
    M = PolynomialModel.linear_convolutional(filters, strides)
    n = M.n
    B = [[rng.randint(-20, 20) for _ in range(n)] for _ in range(n + 2)]
    G = [[sum(B[k][i] * B[k][j] for k in range(n + 2)) for j in range(n)] for i in range(n)]
    w = [rng.randint(-20, 20) for _ in range(n)]
    gauge = [
        " + ".join(f"{rng.randint(1, 9)}*w{i}_{j}" for j in range(1, k + 1)) + " - 1"
        for i, k in enumerate(filters[:-1], 1)
    ]
    last = len(filters)
    exclude = [" + ".join(f"{rng.randint(1, 9)}*w{last}_{j}" for j in range(1, filters[-1] + 1))]
    return model_critical_points(M, loss=(G, w, 0), gauge=gauge, exclude=exclude, seed=seed, timeout=timeout)


def dln_counts(di: int, H: int, m: int, dx: int, dy: int, seed: int, timeout: float = 600.0) -> tuple[Any, Any]:
    """``(N_C, N_C*)`` results for the regularized deep linear network of Bharadwaj and Hoşten (module docstring)."""
    rng = random.Random(seed)
    M = PolynomialModel.deep_linear([dx] + [di] * H + [dy])
    X = [[_wide(rng) for _ in range(dx)] for _ in range(m)]
    Y = [[_wide(rng) for _ in range(dy)] for _ in range(m)]
    lam = [Fraction(rng.randint(1, 10**6), 10**6) ** 2 for _ in range(M.m)]
    loss = PolynomialModel.regression_loss(X, Y)
    none, torus = (
        model_critical_points(M, loss=loss, regularization=lam, exclude=ex, seed=seed, timeout=timeout)
        for ex in ("none", "torus")
    )
    return none, torus


def models_section(report: Report, quick: bool, seed: int) -> dict[str, Any]:
    """Item 4: the two tables, row by row (the expected number, ours, its source: theorem for 4a, outside for
    4b)."""
    lcn = _lcn_checks(report, quick, seed)
    dln = _dln_checks(report, quick, seed)
    _models_tables(report, lcn, dln)
    return {"lcn": lcn, "dln": dln}


def _lcn_checks(report: Report, quick: bool, seed: int) -> list[dict[str, Any]]:
    """The linear convolutional networks of :data:`LCN_ROWS` against the Segre product's generic ED degree."""
    lcn: list[dict[str, Any]] = []
    for ks, ss, fast in LCN_ROWS:
        if quick and not fast:
            continue
        expected = segre_product_ed_degree(tuple(k - 1 for k in ks))
        t0 = time.perf_counter()
        r = lcn_count(ks, ss, seed)
        lcn.append(
            {
                "filters": list(ks),
                "strides": list(ss),
                "expected": expected,
                "source": LCN_SOURCE.to_dict(),
                "ours": r.complex_count,
                "real": len(r.points),
                "minima": r.minima,
                "final": r.final,
                "seconds": round(time.perf_counter() - t0, 2),
            }
        )
        report.add(
            Check(
                "a linear convolutional network's critical points (generic data, every filter nonzero, "
                "one per rescaling orbit) number the Segre product's generic ED degree (Shahverdi 2024)",
                f"filters {ks}, strides {ss}",
                "model_critical_points, msolve modulo two primes; expected: " + LCN_SOURCE.label,
                expected,
                r.complex_count,
                r.final and r.complex_count == expected,
                time.perf_counter() - t0,
            )
        )
    return lcn


def _dln_checks(report: Report, quick: bool, seed: int) -> list[dict[str, Any]]:
    """The deep linear networks of :data:`DLN_ROWS` against their repository's counts."""
    dln: list[dict[str, Any]] = []
    for (di, H, m, dx, dy), (nc, nstar), fast in DLN_ROWS:
        if quick and not fast:
            continue
        t0 = time.perf_counter()
        every, torus = dln_counts(di, H, m, dx, dy, seed)
        dln.append(
            {
                "arch": [di, H, m, dx, dy],
                "theirs": [nc, nstar],
                "source": DLN_SOURCE.to_dict(),
                "ours": [every.complex_count, torus.complex_count],
                "real": len(every.points),
                "minima": every.minima,
                "seconds": round(time.perf_counter() - t0, 2),
            }
        )
        report.add(
            Check(
                "a regularized deep linear network's complex critical points: all of them (N_C) and "
                f"those with every weight nonzero (N_C*), as in {REPOSITORY}@{COMMIT}",
                f"(d_i, H, m, d_x, d_y) = ({di},{H},{m},{dx},{dy})",
                "model_critical_points(regularization=, exclude='none' / 'torus'); expected: " + DLN_SOURCE.label,
                f"{nc}, {nstar}",
                f"{every.complex_count}, {torus.complex_count}",
                every.final and torus.final and (every.complex_count, torus.complex_count) == (nc, nstar),
                time.perf_counter() - t0,
            )
        )
    return dln


def _models_tables(report: Report, lcn: list[dict[str, Any]], dln: list[dict[str, Any]]) -> None:
    """The tables 4a and 4b."""
    report.tables.append(
        Table(
            "4a. Linear convolutional networks: critical points against the Segre product's generic ED degree",
            ["filters", "strides", "expected (Segre formula)", "ours (complex)", "real", "minima", "seconds", "source"],
            [
                [
                    str(tuple(r["filters"])),
                    str(tuple(r["strides"])),
                    r["expected"],
                    r["ours"],
                    r["real"],
                    r["minima"],
                    r["seconds"],
                    r["source"]["kind"],
                ]
                for r in lcn
            ],
            note=f"source {LCN_SOURCE.label}: our evaluation of their theorem, not a number they printed (their "
            "tables could not be read here); ours: probabilistic (msolve modulo two primes), real points proven "
            "(isolation over QQ)",
            source=LCN_SOURCE,
        )
    )
    report.tables.append(
        Table(
            "4b. Deep linear networks with entrywise L2 regularization: N_C and N_C*",
            ["(d_i,H,m,d_x,d_y)", "theirs N_C, N_C*", "ours N_C, N_C*", "real", "minima", "seconds", "source"],
            [
                [
                    str(tuple(r["arch"])),
                    f"{r['theirs'][0]}, {r['theirs'][1]}",
                    f"{r['ours'][0]}, {r['ours'][1]}",
                    r["real"],
                    r["minima"],
                    r["seconds"],
                    r["source"]["kind"],
                ]
                for r in dln
            ],
            note=f"source {DLN_SOURCE.label} (HomotopyContinuation.jl); ours: msolve modulo two primes "
            "(probabilistic), real points proven",
            source=DLN_SOURCE,
        )
    )
