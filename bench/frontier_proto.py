"""Prototype: the degree formula of one layer against msolve counts (docs/math/degree.md).

1. ``degree``: for each size (d, d', a), the square system over GF(p) whose
   solutions are ``deg M * fiber`` (ag_attention._algebra.certificate), counted
   by msolve twice (p = 2^31 - 1, seed 0; p = 65521, seed 1), each under a time
   limit; a size whose first run times out is not run again.
2. ``t1``: the same for one token (the cubic map x -> (x^T A x) V x).
3. ``m2``: Macaulay2 1.21 on the same systems (``degree I`` and F4), small sizes.
4. ``monomials``: monomials of degree k in the reduced coordinates per weight
   of the torus of GL_d x GL_d x GL_d' (the size of interpolating the
   equations one multidegree at a time).
5. ``equations``: dim I_k per weight, one weight per Weyl orbit, from the exact
   pullback (A free; each coordinate has at most two terms, a product of k of
   them at most 2^k), i.e. the number of equations of degree k.

    python bench/frontier_proto.py [degree|t1|m2|monomials|equations|affine|all] [--timeout 120] [--sizes 3,2,3;4,1,4] [--json FILE]

One CPU-heavy process at a time (msolve runs with one thread).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import Counter

from ag_attention._algebra.certificate import build_system, certify_degree, m2_script
from ag_attention._algebra.degree import degree_formula
from ag_attention._algebra.msolve import MSolveTimeoutError, find_msolve, msolve_version
from ag_attention._models.parametrization import quadratic_monomials

SIZES = [(2, 1, 2), (2, 2, 2), (3, 1, 2), (3, 1, 3), (3, 2, 1), (3, 2, 2), (3, 2, 3), (2, 1, 1), (3, 1, 1),
         (2, 3, 2), (4, 1, 1), (4, 1, 2), (4, 1, 4), (2, 4, 2), (2, 5, 2), (4, 1, 3), (3, 3, 1), (3, 3, 3),
         (5, 1, 1), (5, 1, 5)]
T1_SIZES = [(2, 1, 1), (2, 1, 2), (2, 2, 1), (3, 1, 1), (3, 1, 2), (3, 2, 1), (3, 2, 2), (2, 3, 1), (4, 1, 1),
            (4, 1, 2), (3, 3, 1), (4, 2, 1)]
M2_SIZES = [(2, 1, 2), (2, 2, 2), (2, 1, 1), (3, 1, 1), (3, 1, 2), (3, 1, 3), (2, 3, 2), (3, 2, 1), (3, 2, 3)]
RUNS = [(2147483647, 0), (65521, 1)]
ROWS: list[dict] = []


def _run(size, tokens, prime, seed, timeout, normalization="chart"):
    try:
        c = certify_degree(*size, tokens=tokens, prime=prime, seed=seed, timeout=timeout,
                           normalization=normalization)
    except MSolveTimeoutError:
        return None, None
    return c.count, c.solutions.seconds


def degree_table(sizes, tokens: int, timeout: float) -> None:
    print(f"\nt = {tokens}: msolve counts vs formula (limit {timeout:g} s per run; chart normalization; "
          f"runs (p, seed) = {RUNS})")
    print("| (d, d', a) | dim | deg (formula) | fiber | count p=2^31-1 s=0 | s | count p=65521 s=1 | s | unknowns | agrees |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        f = degree_formula(*size, tokens=tokens)
        shape = build_system(*size, tokens=tokens).shape
        results = []
        for prime, seed in RUNS:
            count, secs = _run(size, tokens, prime, seed, timeout)
            results.append((count, secs))
            if count is None:
                break
        while len(results) < len(RUNS):
            results.append(("-", None))
        cells = []
        for count, secs in results:
            cells += [("timeout" if count is None else str(count)), ("-" if secs is None else f"{secs:.2f}")]
        counts = [c for c, _ in results if isinstance(c, int)]
        agrees = "yes" if counts and all(c == f.count for c in counts) else ("n/a" if not counts else "NO")
        print(f"| {size} | {f.dimension} | {f.degree} | {f.fiber} | " + " | ".join(cells)
              + f" | {shape.split(' in ')[1].split()[0]} | {agrees} |", flush=True)
        ROWS.append({"kind": f"t={tokens}", "size": size, "dimension": f.dimension, "degree": f.degree,
                     "fiber": f.fiber, "runs": [{"prime": p, "seed": s, "count": c, "seconds": t}
                                                 for (p, s), (c, t) in zip(RUNS, results)], "shape": shape})


def affine_check(sizes, timeout: float) -> None:
    print("\nSecond normalization (random affine form = 1, random linear form of V = 1), p = 2^31-1, seed 2")
    print("| (d, d', a) | formula count | count | s |")
    print("|---|---|---|---|")
    for size in sizes:
        f = degree_formula(*size)
        count, secs = _run(size, 2, 2147483647, 2, timeout, normalization="affine")
        print(f"| {size} | {f.count} | {'timeout' if count is None else count} | "
              f"{'-' if secs is None else f'{secs:.2f}'} |", flush=True)
        ROWS.append({"kind": "affine", "size": size, "count": count, "seconds": secs, "formula_count": f.count})


def m2_table(sizes, timeout: float) -> None:
    from ag_attention._errors import M2TimeoutError
    from ag_attention._m2.runner import LocalBackend

    b = LocalBackend()
    ok, why = b.available()
    if not ok:
        print(f"\nMacaulay2: unavailable ({why})")
        return
    print(f"\nMacaulay2 {b.version()} on the same systems (wall time of the M2 process, incl. ~0.4 s start-up), "
          f"limit {timeout:g} s; msolve on the same system for comparison")
    print("| (d, d', a) | p | count | msolve s | M2 `degree I` s | M2 F4 s |")
    print("|---|---|---|---|---|---|")
    from ag_attention._algebra.msolve import count_solutions
    for size in sizes:
        for prime in (32003, 2147483647):
            sy = build_system(*size, prime=prime, seed=0)
            ms = count_solutions(sy.variables, sy.polynomials, prime, timeout=timeout)
            cells = []
            for strategy in ("default", "F4"):
                try:
                    o = b.run(m2_script(sy, strategy), timeout=timeout, with_package=False)
                    got = o.stdout.strip().splitlines()[-1] if o.stdout.strip() else "?"
                    mark = "" if got == str(ms.count) else f" (M2 says {got})"
                    cells.append(f"{o.seconds:.2f}{mark}")
                except M2TimeoutError:
                    cells.append("timeout")
            print(f"| {size} | {prime} | {ms.count} | {ms.seconds:.2f} | {cells[0]} | {cells[1]} |", flush=True)
            ROWS.append({"kind": "m2", "size": size, "prime": prime, "count": ms.count, "msolve": ms.seconds,
                         "m2_default": cells[0], "m2_f4": cells[1]})


def weights(d: int, e: int) -> list[tuple[int, ...]]:
    """Torus weight of each reduced coordinate c_(k,m,(i,j)) in Z^d x Z^d x Z^d'."""
    out = []
    for k in range(d):
        for m in range(e):
            for i, j in quadratic_monomials(d):
                w = [0] * (2 * d + e)
                w[k] += 1
                w[d + i] += 1
                w[d + j] += 1
                w[2 * d + m] += 1
                out.append(tuple(w))
    return out


def monomials_per_weight(d: int, e: int, degree: int) -> Counter:
    """Number of degree-``degree`` monomials in the reduced coordinates of each torus weight."""
    ws = weights(d, e)
    counts: Counter = Counter()
    for combo in itertools.combinations_with_replacement(range(len(ws)), degree):
        counts[tuple(map(sum, zip(*(ws[c] for c in combo))))] += 1
    return counts


def dominant(w: tuple[int, ...], d: int, e: int) -> tuple[int, ...]:
    """Representative of the Weyl group orbit (S_d x S_d x S_d' permuting each block)."""
    return tuple(sorted(w[:d], reverse=True)) + tuple(sorted(w[d:2 * d], reverse=True)) + tuple(
        sorted(w[2 * d:], reverse=True))


def monomial_table(sizes, degrees) -> None:
    print("\nMonomials per torus weight (GL_d x GL_d x GL_d' on reduced coordinates)")
    print("| (d, d') | N coords | k | monomials | weights | orbits (S_d x S_d x S_d') | max per weight | "
          "median | sum over orbit representatives |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d, e in sizes:
        N = d * e * d * (d + 1) // 2
        for k in degrees:
            t0 = time.perf_counter()
            c = monomials_per_weight(d, e, k)
            reps = {dominant(w, d, e): n for w, n in c.items()}
            vals = sorted(c.values())
            print(f"| ({d}, {e}) | {N} | {k} | {sum(vals)} | {len(c)} | {len(reps)} | {vals[-1]} | "
                  f"{vals[len(vals) // 2]} | {sum(reps.values())} |", flush=True)
            ROWS.append({"kind": "monomials", "d": d, "d_out": e, "k": k, "monomials": sum(vals), "weights": len(c),
                         "orbits": len(reps), "max": vals[-1], "sum_reps": sum(reps.values()),
                         "seconds": time.perf_counter() - t0})


def _pullbacks(d: int, e: int, a: int | None = None) -> list[dict]:
    """Each reduced coordinate as a polynomial in the weights: {sorted tuple of variable ids: coefficient}.

    ``a`` None or ``>= d``: variables A (ids ``k*d + l``) and V; else ``A = Q^T K``
    with Q, K of size ``a x d`` (at most ``2a`` terms a coordinate).
    """
    free = a is None or a >= d
    nA = d * d if free else 2 * a * d
    vid = lambda m, l: nA + m * d + l  # noqa: E731

    def A_entry(k, l):
        if free:
            return {(k * d + l,): 1}
        return {(c * d + k, a * d + c * d + l): 1 for c in range(a)}  # Q_(c,k) K_(c,l)

    def times_v(poly, m, l, out):
        for mono, cf in poly.items():
            key = tuple(sorted(mono + (vid(m, l),)))
            out[key] = out.get(key, 0) + cf

    out = []
    for k in range(d):
        for m in range(e):
            for i, j in quadratic_monomials(d):
                f: dict = {}
                times_v(A_entry(k, i), m, j, f)
                if i != j:
                    times_v(A_entry(k, j), m, i, f)
                out.append(f)
    return out


def orbit_size(w: tuple[int, ...], d: int, e: int) -> int:
    from math import factorial

    size = 1
    for block in (w[:d], w[d:2 * d], w[2 * d:]):
        n = factorial(len(block))
        for v in Counter(block).values():
            n //= factorial(v)
        size *= n
    return size


def equations_per_weight(d: int, e: int, degree: int, a: int | None = None, prime: int = 32003) -> dict:
    """dim I_k of the closure (reduced coordinates) per torus weight, exactly, from the symbolic pullback.

    Only one weight per orbit of S_d x S_d x S_d' (the ideal is invariant);
    the kernel of (monomials of weight w) -> C[A, V]_(k, k) is computed by a
    rank over GF(prime) (a lower bound for the rank over Q, so the kernel
    dimension printed is an upper bound, exact for all but finitely many p).
    """
    import flint

    ws = weights(d, e)
    pb = _pullbacks(d, e, a)
    groups: dict[tuple, list[tuple[int, ...]]] = {}
    for combo in itertools.combinations_with_replacement(range(len(ws)), degree):
        w = tuple(map(sum, zip(*(ws[c] for c in combo))))
        if w == dominant(w, d, e):
            groups.setdefault(w, []).append(combo)
    total_eq, total_mon, biggest = 0, 0, (0, 0)
    t0 = time.perf_counter()
    for w, monos in groups.items():
        rows: dict[tuple, int] = {}
        cols = []
        for combo in monos:
            poly = {(): 1}
            for c in combo:
                nxt: dict = {}
                for mono, cf in poly.items():
                    for mono2, cf2 in pb[c].items():
                        key = tuple(sorted(mono + mono2))
                        nxt[key] = nxt.get(key, 0) + cf * cf2
                poly = nxt
            cols.append(poly)
            for key in poly:
                rows.setdefault(key, len(rows))
        M = flint.nmod_mat(len(rows), len(cols), prime)
        for j, poly in enumerate(cols):
            for key, cf in poly.items():
                M[rows[key], j] = cf % prime
        kernel = len(cols) - M.rank()
        size = orbit_size(w, d, e)
        total_eq += kernel * size
        total_mon += len(cols) * size
        biggest = max(biggest, (len(cols), len(rows)))
    return {"d": d, "d_out": e, "a": a, "k": degree, "monomials": total_mon, "equations": total_eq,
            "hilbert": total_mon - total_eq, "orbits": len(groups), "largest matrix (cols, rows)": biggest,
            "seconds": round(time.perf_counter() - t0, 2)}


def equations_table(sizes, degrees) -> None:
    print("\nEquations per degree from one weight per Weyl orbit (exact pullback, rank over GF(32003))")
    print("| (d, d', a) | k | monomials | dim I_k | H_M(k) | orbit representatives | largest matrix (cols x rows) | s |")
    print("|---|---|---|---|---|---|---|---|")
    for d, e, a in sizes:
        for k in degrees:
            r = equations_per_weight(d, e, k, a)
            c, rr = r["largest matrix (cols, rows)"]
            print(f"| ({d}, {e}, {a}) | {k} | {r['monomials']} | {r['equations']} | {r['hilbert']} | {r['orbits']} | "
                  f"{c} x {rr} | {r['seconds']} |", flush=True)
            ROWS.append(dict(r, kind="equations"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", default="all", choices=["degree", "t1", "m2", "monomials", "equations", "affine", "all"])
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--sizes", default=None, help="e.g. '3,2,3;4,1,4'")
    ap.add_argument("--json", default=None, help="write the rows as JSON to this file")
    args = ap.parse_args()
    sizes = [tuple(int(x) for x in s.split(",")) for s in args.sizes.split(";")] if args.sizes else None
    exe = find_msolve()
    print(f"msolve {msolve_version(exe)} at {exe}; flags -g 1 -l 44 -t 1 (leading ideal of a DRL basis, "
          f"probabilistic sparse linear algebra); python {sys.version.split()[0]}")
    if args.what in ("degree", "all"):
        degree_table(sizes or SIZES, 2, args.timeout)
    if args.what in ("affine", "all"):
        affine_check(sizes or [(2, 1, 2), (2, 1, 1), (2, 2, 2), (3, 1, 1), (3, 1, 2), (3, 1, 3), (2, 3, 2),
                               (3, 2, 1)], args.timeout)
    if args.what in ("t1", "all"):
        degree_table(sizes or T1_SIZES, 1, args.timeout)
    if args.what in ("m2", "all"):
        m2_table(sizes or M2_SIZES, args.timeout)
    if args.what in ("monomials", "all"):
        monomial_table([(s[0], s[1]) for s in sizes] if sizes else [(3, 2), (3, 3), (4, 1)], (2, 3, 4))
    if args.what in ("equations", "all"):
        equations_table(sizes or [(2, 1, 2), (2, 1, 1), (2, 2, 2), (3, 1, 1), (3, 1, 2), (3, 1, 3), (3, 2, 1),
                                  (3, 2, 3)], (2, 3, 4))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(ROWS, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
