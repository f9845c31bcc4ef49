#!/usr/bin/env python3
"""Run the Macaulay2 code of Alexandr, Duan and Montúfar on its own and keep what it computes as golden files.

Their repository, ``yuliaalexandr/algebraic-invariants-of-lightning-self-attention``, holds the drivers
``generateInvariants(t>1).m2`` and ``generateInvariants(t=1).m2`` and one helper per family of invariants.  This
script runs **their** code, pinned to commit ``d57db8210fbd`` (every file's git blob id is checked before
anything runs), in Macaulay2 1.21, and writes for each case one gzip'd JSON file under
``ag_attention/_reproduce/related/data/aldm/`` (package data: the wheel ships them): their parameter ring (one
name per variable), their coordinates (labels and the parametrization their driver computes), the members of every
family as their helpers return them, and, where asked, the implicit ideal their driver eliminates (minimal
generators, codim, degree, Hilbert numerator).  Beside them it writes ``MANIFEST.json``: the sha256 of every golden
file in the directory and the commit and blob ids of their code.  The loader
(``ag_attention/_reproduce/related/their_code.py``: ``load_golden``) refuses a file whose digest, schema or
provenance is not the expected one.  The tests (``tests/reproduce/related/test_their_code.py``,
``tests/reproduce/related/test_golden.py``) and ``ag-attention reproduce related`` read these files; nothing is
fetched at test time.

How their code is run (the deviations are recorded in each file):

* The driver's set-up lines are read **from their driver file** at the pinned commit, by line number (t > 1:
  50-55, 61-65, 72-75, 88; t = 1: 35-52, 59-64, 71, 77-88), and executed as they are; their helpers are loaded
  unchanged.  What follows them is ours: it calls the helpers the way the driver's lines 95-146 do and prints
  every polynomial as exponent vectors and exact coefficients.
* The driver itself cannot run end to end in Macaulay2 1.21: line 129 applies ``ideal`` to an Ideal (no such
  method in 1.21), so ``gens H#"all"`` is used; the Veronese helper refuses ``r = 2 > at``, so that family is
  skipped at ``at = 1``; the 12 lines of ``linez`` are hard-wired to ``d = 3``, so other ``d`` take the package's
  ``lines_for(d)`` (recorded in the file).
* Their t = 1 driver eliminates without ``minors(at+1, A)``; its ideal is kept as theirs, and the ideal with the
  rank constraint (the same elimination plus ``minors(at+1, A)``, **not their code**) is stored beside it,
  labelled.

Usage (the repository from ``git clone`` or the library's ``fetch`` mirror; a bare git directory works)::

    python scripts/aldm_golden.py --repo /path/to/algebraic-invariants-of-lightning-self-attention \\
        [--cases 3,1,2 4,2,2 ...] [--ideal] [--timeout 1800] [--out ag_attention/_reproduce/related/data/aldm]
    python scripts/aldm_golden.py --fix-ring [--out DIR]

All cases take about 6 minutes here (their resultant quartics: about 30 s at d = 3, not finished in 13 and in
20 minutes at (4, 2, 2), hence --no-resultants there, the default without --cases; their implicit ideal at
(3,2,2) and (3,3,2): under a minute each, at t = 1, d = 3: about 3 minutes).  The golden files
come from these three calls:

    python scripts/aldm_golden.py --repo REPO --cases 2,1,2 2,2,2 3,1,2 3,2,2 3,3,2 --ideal
    python scripts/aldm_golden.py --repo REPO --cases 4,2,2 4,3,2 4,4,2 --no-resultants
    python scripts/aldm_golden.py --repo REPO --cases 2,1,1 3,1,1 3,1,3 --ideal

``--fix-ring`` migrates files written before ``parameter_ring`` was one name per variable (it was split at every
comma: ``["a_(1", "1)", ...]``): the names are joined again (:func:`fix_ring`), the files rewritten and the manifest
written; Macaulay2 is not run.  The three calls above, run again with the fixed parser (6.5 minutes here), gave
the migrated files byte for byte, all 11 (the same manifest).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# one source for what the files record and what the loader expects
# (E402: these imports come after the sys.path line, so that the script runs from a checkout)
from ag_attention._reproduce.related.invariants import REPOSITORY  # noqa: E402 - after sys.path
from ag_attention._reproduce.related.their_code import (  # noqa: E402 - after sys.path
    GOLDEN_DIRECTORY,
    GOLDEN_SCHEMA,
    MANIFEST,
    golden_manifest,
)
from ag_attention._reproduce.related.their_code import THEIR_BLOBS as BLOBS  # noqa: E402 - after sys.path
from ag_attention._reproduce.related.their_code import THEIR_COMMIT as COMMIT  # noqa: E402 - after sys.path
from ag_attention._reproduce.related.their_code import THEIR_COMMIT_DATE as COMMIT_DATE  # noqa: E402 - after sys.path

#: the driver lines executed verbatim (1-based, inclusive)
CROSS_LINES = ((50, 55), (61, 65), (88, 88))
CROSS_IDEAL_LINES = ((72, 75),)
SINGLE_LINES = ((35, 52), (71, 71), (77, 88))
SINGLE_IDEAL_LINES = ((59, 64),)
#: the cases of issue 29: members at (d, at, t) ((4, 3, 2) for the cubics per multidegree); the implicit ideal
#: at IDEAL_CASES
MEMBER_CASES = ((2, 1, 2), (2, 2, 2), (3, 1, 2), (3, 2, 2), (3, 3, 2), (4, 2, 2), (4, 3, 2), (4, 4, 2))
IDEAL_CASES = ((2, 1, 1), (2, 1, 2), (2, 2, 2), (3, 1, 1), (3, 1, 2), (3, 1, 3), (3, 2, 2), (3, 3, 2))
M2 = ("M2", "-q", "--silent", "--stop", "--no-debug", "--no-readline", "--no-randomize")

# ours: print a polynomial as  c|i^e,i^e;c|...  (0-based variable indices, exact rational coefficients)
PRINT = r"""
termsOf = f -> concatenate between(";", apply(listForm f, ec -> toString(ec#1) | "|" |
    concatenate between(",", apply(select(#(ec#0), i -> (ec#0)#i > 0), i -> toString i | "^" | toString((ec#0)#i)))));
out = openOut(outFile);
say = s -> (out << s << endl);
emitPoly = (tag, f) -> say(tag | " " | toString(first degree f) | " " | termsOf f);
family = (name, source, call, rels) -> (say("FAMILY " | name | " " | source | " " | call);
    scan(rels, f -> if f != 0 then emitPoly("MEMBER", f)));
"""

CROSS_TAIL = r"""
say("RING_R " | toString(gens R));
scan(idxList, idx -> say("LABEL " | toString apply(toList idx, p -> toList p)));
scan(scaled, c -> emitPoly("COORD", c));
load "linearRelations.m2";
family("linear", "linearRelations.m2", "makeLinearRelations(L, idxList, d, t, targetCol)",
    makeLinearRelations(L, idxList, d, t, targetCol));
load "lowRankA.m2";
family("lowRank", "lowRankA.m2", "makeLowRankA(L, d, t, at, targetCol)", makeLowRankA(L, d, t, at, targetCol));
load "crossColumnCubics.m2";
family("crossColumnCubics", "crossColumnCubics.m2", "makeCrossColumnCubics(L, d, t, targetCol)",
    makeCrossColumnCubics(L, d, t, targetCol));
load "contextSyzygies.m2";
family("contextSyzygies", "contextSyzygies.m2", "makeContextSyzygies(L, idxList, d, t, targetCol)",
    makeContextSyzygies(L, idxList, d, t, targetCol));
load "veroneseInvariants.m2";
if at >= 2 then (
    H = makeVeroneseInvariants(L, idxList, d, t, at, targetCol, 2);
    scan({"internal", "crossTarget", "blockConcatenated", "all"}, k ->
        family("veronese2_" | k, "veroneseInvariants.m2",
            "gens (makeVeroneseInvariants(L, idxList, d, t, at, targetCol, 2))#\"" | k | "\"",
            flatten entries gens H#k))
) else say("SKIP veronese2_all makeVeroneseInvariants(...,2) raises 'r must be at most at' when at < 2");
if withResultants then (
    load "quarticResultants.m2";
    family("quarticResultants", "quarticResultants.m2",
        "gens sliceResultantQuarticsFromList(L, idxList, d, t, at, targetCol, linez)",
        flatten entries gens sliceResultantQuarticsFromList(L, idxList, d, t, at, targetCol, linez))
) else say("SKIP quarticResultants not run (--no-resultants): their helper did not finish in 13 minutes at d = 4");
"""

SINGLE_TAIL = r"""
say("RING_R " | toString(gens R));
scan(idxList, idx -> say("LABEL " | toString toList idx));
scan(scaled, c -> emitPoly("COORD", c));
family("lowRank", "singleContextInvariants.m2", "gens makeSingleContextLowRankIdeal(L, idxList, d, at)",
    flatten entries gens lowRank);
family("chow21", "singleContextInvariants.m2", "gens makeSingleContextLieIdeal(L, idxList, d)",
    flatten entries gens chow21);
"""

IDEAL_TAIL = r"""
idealOut = (tag, I) -> (
    JL := sub(I, L);
    scan(flatten entries mingens JL, f -> emitPoly(tag | "GEN", f));
    say(tag | "STATS " | toString(codim JL) | " " | toString(degree JL) | " " | toString(dim JL));
    h := numerator reduceHilbert hilbertSeries JL;
    say(tag | "HILBERT " | concatenate between(";", apply(listForm h, ec ->
        toString(ec#1) | "|" | toString(first ec#0)))));
idealOut("IDEAL", J);
"""

# not their code: the t = 1 elimination with the rank constraint their t > 1 driver adds (its line 74)
SINGLE_RANK_IDEAL = r"""
gIdealRank = gIdeal + minors(at+1, sub(A, elimL));
JRank = eliminate(take(gens elimL, #gens R), gIdealRank);
idealOut("RANKIDEAL", JRank);
"""


class GoldenError(RuntimeError):
    pass


def git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def read_their_files(repo: Path) -> dict[str, bytes]:
    """Every file of :data:`BLOBS` at :data:`COMMIT`, checked against its blob id."""
    git_dir = repo / ".git" if (repo / ".git").exists() else repo
    files = {}
    for name, blob in BLOBS.items():
        proc = subprocess.run(
            ["git", "--git-dir", str(git_dir), "show", f"{COMMIT}:{name}"], capture_output=True, timeout=60
        )
        if proc.returncode != 0:
            raise GoldenError(f"{repo}: cannot read {name} at {COMMIT[:12]}: {proc.stderr.decode().strip()}")
        if git_blob(proc.stdout) != blob:
            raise GoldenError(f"{name}: blob {git_blob(proc.stdout)} at {COMMIT[:12]}, expected {blob}")
        files[name] = proc.stdout
    return files


def driver_lines(text: bytes, spans: tuple[tuple[int, int], ...]) -> str:
    lines = text.decode().splitlines()
    return "\n".join("\n".join(lines[a - 1 : b]) for a, b in spans) + "\n"


def lines_m2(d: int) -> tuple[str, str]:
    from ag_attention._reproduce.related.invariants import DEFAULT_LINES, lines_for

    lines = lines_for(d)
    pairs = ("{{" + ",".join(map(str, p)) + "},{" + ",".join(map(str, q)) + "}}" for p, q in lines)
    text = "{" + ", ".join(pairs) + "}"
    source = (
        "their driver's list (generateInvariants(t>1).m2, lines 140-153)"
        if lines == DEFAULT_LINES
        else "ag_attention._reproduce.related.invariants.lines_for(d): their driver's list is for d = 3 only"
    )
    return text, source


def harness(
    files: dict[str, bytes], d: int, at: int, t: int, ideal: bool, out_file: Path, resultants: bool = True
) -> tuple[str, list[str]]:
    """The Macaulay2 program of one case and its deviations from their driver."""
    head = (
        f'd = {d}; at = {at}; t = {t}; d\' = 1; targetRow = 1; targetCol = 1; outFile = "{out_file}"; '
        f"withResultants = {'true' if resultants else 'false'};\n"
    )
    deviations = [
        "the driver is not run as a file: its parameter block and 'restart' are replaced by the "
        "assignments of d, at, t (d' = 1, targetRow = targetCol = 1); its set-up lines run verbatim"
    ]
    if t >= 2:
        linez, source = lines_m2(d)
        head += f"linez = {linez};\n"
        body = driver_lines(files["generateInvariants(t>1).m2"], CROSS_LINES[:2])
        if ideal:
            body += driver_lines(files["generateInvariants(t>1).m2"], CROSS_IDEAL_LINES)
        body += driver_lines(files["generateInvariants(t>1).m2"], CROSS_LINES[2:])
        prog = head + body + PRINT + CROSS_TAIL + (IDEAL_TAIL if ideal else "")
        deviations += [
            "driver line 129 'ideal (makeVeroneseInvariants(...))#\"all\"' fails in Macaulay2 1.21 (no "
            "method ideal(Ideal)): gens of the same ideal are kept",
            "veronese2 is not built when at < 2 (the helper raises 'r must be at most at')",
            f"linez: {source}",
        ]
        if not resultants:
            deviations.append(
                "quarticResultants not run (--no-resultants): their helper ran 13 minutes at "
                "(d, at, t) = (4, 2, 2) without finishing, on this machine"
            )
    else:
        body = driver_lines(files["generateInvariants(t=1).m2"], SINGLE_LINES[:1])
        if ideal:
            body += driver_lines(files["generateInvariants(t=1).m2"], SINGLE_IDEAL_LINES)
        body += driver_lines(files["generateInvariants(t=1).m2"], SINGLE_LINES[1:])
        prog = head + body + PRINT + SINGLE_TAIL + (IDEAL_TAIL + SINGLE_RANK_IDEAL if ideal else "")
        if ideal:
            deviations.append(
                "rank_ideal: their elimination plus minors(at+1, A) (as line 74 of their t > 1 driver "
                "does); not their code, stored beside their ideal"
            )
    return prog + "close out;\n", deviations


def run_m2(workdir: Path, program: str, timeout: float) -> float:
    (workdir / "case.m2").write_text(program)
    env = dict(os.environ, HOME=str(workdir))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*M2, "case.m2", "-e", "exit 0"],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise GoldenError(f"Macaulay2 did not finish in {timeout:.0f} s") from None
    except BaseException:  # interrupted or terminated (SIGTERM becomes SystemExit in main): no orphan Macaulay2
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    if proc.returncode != 0:
        raise GoldenError(f"Macaulay2 exit {proc.returncode}: {err.decode()[-2000:]}")
    return time.perf_counter() - t0


def parse_terms(text: str) -> list[list]:
    out = []
    for term in text.split(";") if text else []:
        coef, _, mono = term.partition("|")
        exps = [[int(i), int(e)] for i, e in (x.split("^") for x in mono.split(",") if x)]
        out.append([coef.replace(" ", ""), exps])
    return out


def ring_names(text: str) -> list[str]:
    """The variables of Macaulay2's ``toString(gens R)`` (``{a_(1,1), a_(1,2), v_1}``), one name per variable: split
    at the commas outside parentheses (``a_(1,1)`` is one name)."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise GoldenError(f"not a Macaulay2 list of variables: {text!r}")
    names, depth, current = [], 0, ""
    for ch in inner[1:-1]:
        if ch == "," and depth == 0:
            names.append(current.strip())
            current = ""
            continue
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            raise GoldenError(f"unbalanced parentheses in {text!r}")
        current += ch
    if depth:
        raise GoldenError(f"unbalanced parentheses in {text!r}")
    if current.strip():
        names.append(current.strip())
    return names


def fix_ring(pieces: list[str]) -> list[str]:
    """The migration of ``--fix-ring``: the files written before ``ring_names`` kept ``parameter_ring`` split at every
    comma (``["a_(1", "1)", "v_1"]``); joined again, one name per variable (``["a_(1,1)", "v_1"]``).  A list that is
    already one name per variable comes back unchanged."""
    names: list[str] = []
    depth = 0
    for piece in pieces:
        if depth:
            names[-1] += "," + piece  # Macaulay2 writes a_(1,1), no space inside the parentheses
        else:
            names.append(piece)
        depth += piece.count("(") - piece.count(")")
        if depth < 0:
            raise GoldenError(f"unbalanced parentheses in the ring {pieces!r}")
    if depth:
        raise GoldenError(f"unbalanced parentheses in the ring {pieces!r}")
    return names


def parse_output(text: str, t: int) -> dict:
    labels, coords, families, skipped = [], [], {}, []
    ideals: dict[str, dict] = {}
    ring = None
    current = None
    for line in text.splitlines():
        tag, _, rest = line.partition(" ")
        if tag == "RING_R":
            ring = ring_names(rest)
        elif tag == "LABEL":
            labels.append(json.loads(rest.replace("{", "[").replace("}", "]")))
        elif tag == "COORD":
            coords.append(parse_terms(rest.split(" ", 1)[1] if " " in rest else ""))
        elif tag == "FAMILY":
            name, source, call = rest.split(" ", 2)
            current = families.setdefault(name, {"source": source, "call": call, "members": []})
        elif tag == "MEMBER":
            deg, _, terms = rest.partition(" ")
            current["members"].append(parse_terms(terms))
        elif tag == "SKIP":
            name, _, why = rest.partition(" ")
            skipped.append({"family": name, "reason": why})
        elif tag.endswith("GEN") or tag.endswith("STATS") or tag.endswith("HILBERT"):
            key = "ideal" if tag.startswith("IDEAL") else "rank_ideal"
            entry = ideals.setdefault(key, {"generators": []})
            if tag.endswith("GEN"):
                entry["generators"].append(parse_terms(rest.partition(" ")[2]))
            elif tag.endswith("STATS"):
                entry["codim"], entry["degree"], entry["dim"] = map(int, rest.split())
            else:
                num = {}
                for term in rest.split(";"):
                    c, _, e = term.partition("|")
                    num[int(e or 0)] = int(c)
                entry["hilbert_numerator"] = [num.get(k, 0) for k in range(max(num) + 1)]
    if len(labels) != len(coords):
        raise GoldenError(f"{len(labels)} labels but {len(coords)} coordinates in Macaulay2's output")
    return {
        "parameter_ring": ring,
        "labels": labels,
        "parametrization": coords,
        "families": families,
        "skipped": skipped,
        **ideals,
    }


def golden(
    files: dict[str, bytes], d: int, at: int, t: int, ideal: bool, timeout: float, resultants: bool = True
) -> dict:
    with tempfile.TemporaryDirectory(prefix="aldm-golden-") as tmp:
        work = Path(tmp)
        for name, data in files.items():
            (work / name).write_bytes(data)
        program, deviations = harness(files, d, at, t, ideal, work / "out.txt", resultants)
        seconds = run_m2(work, program, timeout)
        parsed = parse_output((work / "out.txt").read_text(), t)
    version = subprocess.run([M2[0], "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    driver = "generateInvariants(t>1).m2" if t >= 2 else "generateInvariants(t=1).m2"
    spans = (
        (CROSS_LINES + (CROSS_IDEAL_LINES if ideal else ()))
        if t >= 2
        else (SINGLE_LINES + (SINGLE_IDEAL_LINES if ideal else ()))
    )
    provenance = {
        "repository": REPOSITORY,
        "commit": COMMIT,
        "commit_date": COMMIT_DATE,
        "blobs": BLOBS,
        "driver": driver,
        "driver_lines_run_verbatim": [list(s) for s in sorted(spans)],
        "macaulay2": version,
        "deviations": deviations,
        "command": "python scripts/aldm_golden.py --repo REPO --cases "
        + f"{d},{at},{t}"
        + (" --ideal" if ideal else "")
        + ("" if resultants else " --no-resultants"),
    }
    conventions = {
        "model": "their output entry (V X X^T A X)_(1, targetCol), X d x t with tokens as columns, d' = 1",
        "labels": "per coordinate the sorted list of (coordinate, token) pairs of its x-monomial (t >= 2) or the "
        "sorted coordinates (t = 1), 1-based, in their idxList order (the variables of their ring L)",
        "parametrization": "their scaled coefficient (coefficient / number of its terms) in parameter_ring",
        "polynomials": "lists of [coefficient 'p/q', [[variable index (0-based), exponent], ...]]",
    }
    return {
        "_seconds": seconds,
        "schema": GOLDEN_SCHEMA,
        "provenance": provenance,
        "case": {"d": d, "at": at, "t": t, "d_prime": 1, "targetRow": 1, "targetCol": 1},
        "conventions": conventions,
        **parsed,
    }


def write(path: Path, data: dict) -> None:
    """gzip'd JSON, byte-reproducible (no timestamp in the gzip header), written atomically."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n"
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as fh:
        fh.write(text.encode())
    os.replace(tmp, path)


def write_manifest(directory: Path) -> Path:
    """``MANIFEST.json`` of the golden files in ``directory`` (sha256 of each, their provenance), written atomically."""
    path = directory / MANIFEST
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(golden_manifest(directory), indent=1) + "\n")
    os.replace(tmp, path)
    return path


def migrate_ring(directory: Path) -> list[Path]:
    """``--fix-ring``: every golden file of ``directory`` with its ``parameter_ring`` one name per variable
    (:func:`fix_ring`), rewritten when it changes (byte-reproducibly, as :func:`write`); then the manifest.  The
    files changed."""
    changed = []
    for path in sorted(directory.glob("d*_at*_t*.json.gz")):
        with gzip.open(path, "rt") as fh:
            data = json.load(fh)
        ring = fix_ring(data["parameter_ring"])
        if ring != data["parameter_ring"]:
            data["parameter_ring"] = ring
            write(path, data)
            changed.append(path)
    write_manifest(directory)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, help="their repository (a clone or a bare git directory)")
    ap.add_argument(
        "--fix-ring",
        action="store_true",
        help="only migrate the files in --out: parameter_ring one name per variable, then the manifest",
    )
    ap.add_argument("--cases", nargs="*", help="d,at,t triples (default: every member case and every ideal case)")
    ap.add_argument("--ideal", action="store_true", help="also their implicit ideal (only with --cases)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per case (default 1800)")
    ap.add_argument("--out", type=Path, default=Path(str(GOLDEN_DIRECTORY)))
    ap.add_argument("--no-resultants", action="store_true", help="skip their quarticResultants helper (slow at d = 4)")
    args = ap.parse_args(argv)
    if args.fix_ring:
        changed = migrate_ring(args.out)
        print(f"{len(changed)} files migrated in {args.out}; {args.out / MANIFEST} written")
        return 0
    if args.repo is None:
        ap.error("--repo is needed (or --fix-ring)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that run_m2 kills Macaulay2's process group
    if args.cases:
        cases = [(tuple(int(x) for x in c.split(",")), args.ideal) for c in args.cases]
    else:
        cases = [(c, c in IDEAL_CASES) for c in MEMBER_CASES] + [
            (c, True) for c in IDEAL_CASES if c not in MEMBER_CASES
        ]
    files = read_their_files(args.repo)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for (d, at, t), ideal in cases:
        t0 = time.perf_counter()
        try:
            # without --cases, d = 4 runs without their resultants (20 minutes here without finishing)
            resultants = not args.no_resultants and not (not args.cases and d >= 4)
            data = golden(files, d, at, t, ideal, args.timeout, resultants=resultants)
        except GoldenError as exc:  # the other cases still run; the exit status says one failed
            print(f"({d},{at},{t}): FAILED: {exc}", flush=True)
            failed.append((d, at, t))
            continue
        path = args.out / f"d{d}_at{at}_t{t}.json.gz"
        seconds = data.pop("_seconds")  # kept out of the file: the golden files are byte-reproducible
        write(path, data)
        n = sum(len(f["members"]) for f in data["families"].values())
        print(
            f"({d},{at},{t}): {len(data['labels'])} coordinates, {n} members, Macaulay2 {seconds:.1f} s"
            + (f", ideal {len(data['ideal']['generators'])} generators" if ideal else "")
            + f" -> {path} ({path.stat().st_size:,} bytes, {time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
    print(f"{write_manifest(args.out)}: the sha256 of every golden file in {args.out}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
