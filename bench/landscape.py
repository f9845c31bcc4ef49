"""The loss landscape at real sizes, the two routes side by side: prints; asserts nothing.

    python bench/landscape.py [--sizes all|quick|D,E,A;...] [--metrics generic,euclidean,data]
                              [--timeout 300] [--count-timeout 300] [--cap 10000] [--out FILE.jsonl]
                              [--critical] [--resume] [--workers N] [--save-dir DIR]
    python bench/landscape.py --reach [--timeout 600] [--workers 2] [--save-dir results/landscape]

``--reach``: the sizes the field asks about, generic form, the monodromy alone (its state in ``--save-dir``,
resumed where a file is there: a count of hours spread over several runs), one row each: the prediction (the
Segre formula, Chern-Mather classes where ``D_r`` is singular: a conjecture), the proven lower bounds (the degree,
the certified distinct images), the proven upper bound (Bezout), whether it is decided, its seconds (this run and
all runs of its file), workers and file; then the critical points of one Gaussian data set of (3,1,1).

For every one-layer size ``(d, d', a)`` with ``d <= 4``, ``d' <= 3``, ``a <= d`` (t = 2) and every metric:

* **monodromy** (the numerical route, ``ag_attention._landscape.numerical.monodromy_ed``): the solutions found,
  the certified ones and the certified distinct images (a *proven* lower bound on the ED degree), how it stopped
  (the trace test, fresh loops, the time limit ``--timeout`` or the cap ``--cap`` on the ED degree), its paths
  and seconds (monodromy, then certification);
* **count** (msolve over two primes, probabilistic, ``ed_degree(method="count")``): the value and seconds, or
  ``> T s`` after ``--count-timeout`` per prime;
* **Segre** (generic rows): the generic ED degree of the Segre product upstairs
  (``ag_attention._landscape.formula.segre_ed_degree``, exact), the conjectured value, where it applies.

Every row is appended to ``--out`` (JSON lines, default ``results/bench-landscape.jsonl``) as soon as it is done;
``--resume`` skips the rows already there.  ``--critical`` (alone, without the table): the critical points of one
Gaussian data set for (3,1,1), (3,1,3) and (2,3,2), each twice: with an empty result cache (the generic form of the
data's rank solved) and again (one homotopy from the stored form), beside the time before (a monodromy per data set;
target 120 s).  The summary says which sizes are within the
cap, the largest reached, where both routes finished and whether they agree, and whether each certified bound
equals the count.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.setdefault("OMP_NUM_THREADS", "1")  # small batched linear algebra: threads only cost

from ag_attention import Architecture  # noqa: E402
from ag_attention._algebra.degree import degree_formula  # noqa: E402
from ag_attention._errors import AgAttentionError, MSolveTimeoutError  # noqa: E402
from ag_attention._landscape.ed import ed_degree  # noqa: E402
from ag_attention._landscape.formula import segre_ed_degree  # noqa: E402
from ag_attention._landscape.metrics import metric  # noqa: E402
from ag_attention._landscape.numerical import monodromy_ed  # noqa: E402

ALL = [(d, e, a) for d in (2, 3, 4) for e in (1, 2, 3) for a in range(1, d + 1)]
QUICK = [(2, 1, 2), (2, 1, 1), (2, 2, 2), (3, 1, 3)]


def sizes_of(text: str) -> list[tuple[int, int, int]]:
    if text == "all":
        return ALL
    if text == "quick":
        return QUICK
    return [tuple(int(v) for v in part.split(",")) for part in text.split(";")]  # type: ignore[misc]


def one_row(size: tuple[int, int, int], kind: str, args: argparse.Namespace) -> dict:
    d, e, a = size
    t = args.tokens if kind == "data" else 2  # only the data form depends on t
    arch = Architecture.single_layer(d, e, a, tokens=t)
    fiber = degree_formula(d, e, a, 2).fiber
    row: dict = {"size": list(size), "metric": kind, "fiber": fiber, "tokens": t}
    if kind == "generic":
        row["segre"] = segre_ed_degree(d, e, a).value
    G, _ = metric(kind, d, e, t, seed=0)
    t0 = time.perf_counter()
    try:
        save = None
        if args.save_dir:
            Path(args.save_dir).mkdir(parents=True, exist_ok=True)
            save = Path(args.save_dir) / f"monodromy-{d}{e}{a}-{kind}-t{t}.npz"
        resume = save if save is not None and save.exists() and args.resume else None
        m = monodromy_ed(
            arch,
            G,
            fiber=fiber,
            seed=0,
            timeout=args.timeout,
            max_solutions=args.cap * fiber + 1,
            workers=args.workers,
            save=save,
            resume=resume,
        )
        row["monodromy"] = {**m.to_dict(), "ed": -(-m.found // fiber), "seconds": round(time.perf_counter() - t0, 1)}
    except AgAttentionError as exc:
        row["monodromy"] = {"error": str(exc), "seconds": round(time.perf_counter() - t0, 1)}
    if args.count_timeout > 0:
        t0 = time.perf_counter()
        try:
            r = ed_degree(arch, metric=kind, method="count", timeout=args.count_timeout, seed=0)
            if r.final:
                row["count"] = {
                    "ed": r.ed_degree,
                    "seconds": round(time.perf_counter() - t0, 1),
                    "per_prime": [c.seconds for c in r.counts],
                    "msolve": r.msolve,
                }
            else:  # the counts did not finish within the limit
                row["count"] = {"timeout": args.count_timeout, "seconds": round(time.perf_counter() - t0, 1)}
        except MSolveTimeoutError:
            row["count"] = {"timeout": args.count_timeout, "seconds": round(time.perf_counter() - t0, 1)}
        except AgAttentionError as exc:
            row["count"] = {"error": str(exc), "seconds": round(time.perf_counter() - t0, 1)}
    return row


def show(row: dict) -> str:
    m, c = row.get("monodromy", {}), row.get("count", {})
    if "error" in m:
        mono = f"error: {m['error'][:60]}"
    else:
        stop = {
            "trace test": "trace",
            "known count": "known",
            "max_solutions": "cap",
            "time limit": "time",
            "interrupted": "int",
        }.get(m["stop"], m["stop"][:5])
        mono = (
            f"{m['ed']:>6} (>= {m['certified_images']:>6} proven) {stop:>5} {m['paths']:>7} paths "
            f"{m['seconds_monodromy']:>7.1f} + {m['seconds_certification']:>6.1f} s"
        )
    if "ed" in c:
        count = f"{c['ed']:>6} {c['seconds']:>7.1f} s"
    elif "timeout" in c:
        count = f"{'> ' + str(int(c['timeout'])) + ' s':>15}"
    elif c:
        count = f"error: {c['error'][:40]}"
    else:
        count = "-"
    kind = row["metric"] + (f" t={row['tokens']}" if row.get("tokens", 2) != 2 else "")
    segre = f" | Segre {row['segre']}" if row.get("segre") is not None else ""
    return f"{str(tuple(row['size'])):10} {kind:9} | {mono} | {count}{segre}"


#: before the generic form (issue 45, measured at 0a36023 on the same kind of 2-core machine, idle): seconds of
#: critical_points(method="auto") on these data, a monodromy on each data set's own form
BEFORE = {(3, 1, 1): 237.0}


def critical(args: argparse.Namespace) -> None:
    """Critical points of one Gaussian data set per size, twice: with an empty result cache (the generic form of the
    data's rank solved by monodromy, then stored) and again (one homotopy from the stored solutions), beside the
    time before (a monodromy on each data set's form, :data:`BEFORE`)."""
    import tempfile

    import numpy as np

    from ag_attention import critical_points

    load = os.getloadavg()[0]
    print(f"critical points, {args.workers} worker(s), load {load:.1f}; cache: a new directory", flush=True)
    cache = tempfile.mkdtemp(prefix="bench-landscape-cache-")
    os.environ["AG_ATTENTION_CACHE_DIR"] = cache
    for size, samples in (((3, 1, 1), 8), ((3, 1, 3), 8), ((2, 3, 2), 6)):
        if args.sizes != "all" and size not in sizes_of(args.sizes):
            continue
        d, e, a = size
        rng = np.random.default_rng(1)
        X = [rng.standard_normal((2, d)) for _ in range(samples)]
        Y = [rng.standard_normal((2, e)) for _ in range(samples)]
        for run in ("first (solves the generic form)", "again (from the stored form)"):
            t0 = time.perf_counter()
            r = critical_points(
                Architecture.single_layer(d, e, a, tokens=2), X, Y, timeout=args.timeout, workers=args.workers
            )
            took = time.perf_counter() - t0
            m = r.monodromy or {}
            before = BEFORE.get(size)
            print(
                f"  {size}, {samples} Gaussian sequences, {run}: {r.complex_certified} certified (generic form of "
                f"rank {m.get('rank')}: {r.complex_generic}, {m.get('stop')}), msolve {r.complex_pure}, "
                f"{len(r.points)} real: {r.minima} minima, {r.saddles} saddles, final {r.final}; {took:.1f} s"
                + (f" (before: {before:.0f} s)" if before else ""),
                flush=True,
            )


REACH = [(2, 6, 1), (3, 1, 2), (3, 2, 2), (4, 1, 1), (4, 1, 2), (4, 1, 3), (4, 1, 4)]


def reach(args: argparse.Namespace) -> None:
    """The reach table (module docstring)."""
    import numpy as np

    from ag_attention import critical_points

    save_dir = Path(args.save_dir or "results/landscape")
    save_dir.mkdir(parents=True, exist_ok=True)
    print(
        f"reach: generic form, monodromy alone, {args.timeout:g} s per size this run, {args.workers} worker(s); "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    print(
        f"  | {'size':9} {'predicted':>13} {'degree':>7} {'proven >=':>10} {'found':>8} {'Bezout <=':>14} "
        f"{'status':<34} {'s (run)':>8} {'s (all)':>8}  file"
    )
    for size in REACH if args.sizes == "all" else sizes_of(args.sizes):
        d, e, a = size
        arch = Architecture.single_layer(d, e, a, tokens=2)
        path = save_dir / f"monodromy-{d}{e}{a}.npz"
        t0 = time.perf_counter()
        r = ed_degree(
            arch,
            metric="generic",
            method="monodromy",
            timeout=args.timeout,
            workers=args.workers,
            save=path,
            resume=path if path.exists() else None,
        )
        run = time.perf_counter() - t0
        m = r.monodromy or {}
        degree = next((v for side, source, v in r.bounds if side == "lower" and source.startswith("the degree")), None)
        status = f"decided: {r.ed_degree:,}" if r.final else f"not decided ({m.get('stop')})"
        predicted = (r.prediction or {}).get("value")
        total = json.loads(str(np.load(path)["meta"]))["seconds"] if path.exists() else run
        row = {
            "reach": list(size),
            "predicted": predicted,
            "degree": degree,
            "lower_bound": r.lower_bound,
            "found": m.get("found"),
            "upper_bound": r.upper_bound,
            "final": r.final,
            "ed_degree": r.ed_degree,
            "stop": m.get("stop"),
            "seconds_run": round(run, 1),
            "seconds_all": round(total, 1),
            "workers": args.workers,
            "executor": m.get("executor"),
            "file": str(path),
            "trace_deviation": m.get("trace_deviation"),
        }
        with Path(args.out).open("a") as f:
            f.write(json.dumps(row) + "\n")
        shown = "-" if predicted is None else f"{predicted:,}"
        print(
            f"  | {str(size):9} {shown:>13} {degree or '-':>7} {r.lower_bound:>10,} {m.get('found') or 0:>8,} "
            f"{r.upper_bound:>14,} {status:<34} {run:>8.0f} {total:>8.0f}  {path}",
            flush=True,
        )
    rng = np.random.default_rng(1)
    X = [rng.standard_normal((2, 3)) for _ in range(8)]
    Y = [rng.standard_normal((2, 1)) for _ in range(8)]
    t0 = time.perf_counter()
    c = critical_points(
        Architecture.single_layer(3, 1, 1, tokens=2), X, Y, timeout=max(args.timeout, 300), workers=args.workers
    )
    print(
        f"critical points of (3,1,1), 8 Gaussian sequences (seed 1): {c.complex_certified} certified, "
        f"{c.complex_pure} counted by msolve, {len(c.points)} real ({c.minima} minima), final {c.final}; "
        f"{time.perf_counter() - t0:.1f} s (target: 120 s)",
        flush=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="all")
    ap.add_argument("--metrics", default="generic,euclidean,data")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds of monodromy per row")
    ap.add_argument("--count-timeout", type=float, default=300.0, help="seconds per msolve count (0: no count)")
    ap.add_argument("--cap", type=int, default=10000, help="stop the monodromy above this ED degree")
    ap.add_argument("--tokens", type=int, default=2, help="t of the data form (the others do not depend on t)")
    ap.add_argument("--workers", type=int, default=1, help="Dask worker processes of the monodromy (1: this process)")
    ap.add_argument("--save-dir", default=None, help="keep each row's monodromy state here (with --resume: go on)")
    ap.add_argument("--out", default="results/bench-landscape.jsonl")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--critical", action="store_true")
    ap.add_argument("--reach", action="store_true", help="the reach table (module docstring)")
    args = ap.parse_args()
    if args.reach:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        reach(args)
        return 0
    if args.critical:  # the critical points alone (module docstring)
        critical(args)
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if args.resume and out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((tuple(r["size"]), r["metric"], r.get("tokens", 2)))
    print(
        f"{os.cpu_count()} cores; monodromy {args.timeout:g} s (with its certification), count "
        f"{args.count_timeout:g} s; cap {args.cap}; {args.workers} worker(s)",
        flush=True,
    )
    print(f"{'size':10} {'metric':9} | {'monodromy: ED (proven bound) stop paths seconds':66} | count", flush=True)
    rows = []
    for size in sizes_of(args.sizes):
        for kind in args.metrics.split(","):
            if (size, kind, args.tokens if kind == "data" else 2) in done:
                continue
            row = one_row(size, kind, args)
            rows.append(row)
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(show(row), flush=True)
    both = [r for r in rows if "ed" in r.get("count", {}) and "ed" in r.get("monodromy", {})]
    agree = [r for r in both if r["count"]["ed"] == r["monodromy"]["ed"]]
    proven = [r for r in both if r["count"]["ed"] == r["monodromy"]["certified_images"]]
    print(
        f"both routes finished on {len(both)} rows; they agree on {len(agree)}; the certified bound equals the count "
        f"on {len(proven)}"
    )
    predicted = [r for r in rows if r.get("segre") is not None]
    matched = [r for r in predicted if r["segre"] in (r.get("count", {}).get("ed"), r.get("monodromy", {}).get("ed"))]
    print(f"the Segre formula applies to {len(predicted)} generic rows; a finished route equals it on {len(matched)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
