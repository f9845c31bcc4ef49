"""``reproduce icl`` end to end through the CLI: every check passes, and the report's text agrees with its data.

The report's sentences and table are read together with ``icl.json``: every plateau stated (stratum, training and
test loss, prediction, standard error, z) and every run's final state (step, losses, rank M, the plateau it ended
on) must be the JSON's numbers; the review found a report saying "ended on L_3 ... before reaching L_4" beside a
final loss at L_4.  Two runs: the default quick setting (D = 4; 8 merged heads, 5, 2, 1 rank-one heads) and the
issue's ``--heads 3 --dims 3 --quick``.
"""

import json
import re
import subprocess
import sys
from fractions import Fraction

import pytest

from ag_attention._reproduce.icl import QUICK, Z_BOUND, eigenvalues, final_sentence, plateau_predictions

RUNS = {"quick": ["--quick"], "dims3-heads3": ["--heads", "3", "--dims", "3", "--quick"]}


@pytest.fixture(scope="module", params=sorted(RUNS))
def reproduction(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param) / "icl"
    proc = subprocess.run(
        [sys.executable, "-m", "ag_attention", "reproduce", "icl", *RUNS[request.param], "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return (
        request.param,
        json.loads((out / "report.json").read_text()),
        json.loads((out / "icl.json").read_text()),
        (out / "report.md").read_text(),
        out,
    )


def test_every_check_passes_and_the_files_are_written(reproduction):
    name, report, data, _, out = reproduction
    assert report["checks"] and all(c["passed"] for c in report["checks"]), [
        c for c in report["checks"] if not c["passed"]
    ]
    (entry,) = data["settings"]
    runs = entry["runs"]
    if name == "quick":
        assert {(r["regime"], r["heads"]) for r in runs} == {("merged", 8)} | {
            ("separate", h) for h in QUICK.heads_separate
        }
    else:
        assert entry["setting"]["D"] == 3 and {(r["regime"], r["heads"]) for r in runs} == {
            ("merged", 3),
            ("separate", 3),
        }
    D = entry["setting"]["D"]
    merged = next(r for r in runs if r["regime"] == "merged")
    assert [p["stratum"] for p in merged["plateaus"]] == [0, D]
    for r in runs:  # every plateau within the stated sampling error of its prediction
        assert all(abs(p["z_train"]) <= Z_BOUND for p in r["plateaus"])
        if r["regime"] == "separate":  # rank-one heads end on their last stratum: L_min(H, D), reached
            assert r["final"]["stratum"] == min(r["heads"], D) and abs(r["final"]["z_train"]) <= Z_BOUND
    if name == "dims3-heads3":  # the saddle-to-saddle run: every plateau L_0 .. L_3, heads added one at a time
        sep = next(r for r in runs if r["regime"] == "separate")
        assert [p["stratum"] for p in sep["plateaus"]] == [0, 1, 2, 3]
        assert [p["geometry"]["active_heads"] for p in sep["plateaus"]] == [0, 1, 2, 3]
    for file in ("icl.png", "icl.svg", "report.md"):
        assert (out / file).stat().st_size > 0


def test_the_text_agrees_with_the_data(reproduction):
    _, report, data, text, _ = reproduction
    (entry,) = data["settings"]
    D, N = entry["setting"]["D"], entry["setting"]["N"]
    pred = plateau_predictions(eigenvalues(D), N)
    assert entry["predicted_plateaus"] == [str(p) for p in pred]
    assert f"the predicted plateaus L_m = {', '.join(map(str, pred))}" in text
    findings = report["findings"]
    for r in entry["runs"]:
        f = r["final"]
        sentence = final_sentence(r["regime"], r["heads"], r["seed"], D, f)
        assert sentence in findings and sentence in text
        # ... and its numbers are the JSON's, read back from the words
        m = re.search(
            r"ended at step ([\d,]+) with training loss ([\d.]+) \(test ([\d.]+)\) and rank M = (\d+), "
            r"(?:at|below|above) L_(\d+) = ([\d.]+) \(z = ([-+\d.]+)",
            sentence,
        )
        assert m, sentence
        step, loss, test, rank, k, L, z = m.groups()
        assert int(step.replace(",", "")) == f["step"] == entry["setting"][f"steps_{r['regime']}"]
        assert float(loss) == round(f["loss"], 4) == round(r["final_loss"], 4)
        assert float(test) == round(f["test_loss"], 4) == round(r["final_test_loss"], 4)
        assert int(rank) == int(k) == f["stratum"]
        assert float(L) == round(float(Fraction(f["predicted"])), 4) == round(float(pred[f["stratum"]]), 4)
        assert float(z) == round(f["z_train"], 1)
        top = D if r["regime"] == "merged" else min(r["heads"], D)
        assert ("before reaching" in sentence) == (f["stratum"] < top)
        assert (f"at L_{k}" in sentence) == (abs(f["z_train"]) <= Z_BOUND)
    # the table: one row per plateau, in the JSON's order, with the JSON's numbers
    (table,) = report["tables"]
    rows = table["rows"]
    plateaus = [(r, p) for r in entry["runs"] for p in r["plateaus"]]
    assert len(rows) == len(plateaus)
    col = {c: i for i, c in enumerate(table["columns"])}
    for row, (r, p) in zip(rows, plateaus):
        assert (row[col["regime"]], row[col["heads"]], row[col["stratum"]]) == (
            r["regime"],
            r["heads"],
            f"L_{p['stratum']}",
        )
        assert float(row[col["training loss"]]) == round(p["loss"], 5)
        assert float(row[col["test loss"]]) == round(p["test_loss"], 5)
        assert float(row[col["predicted L_m"]]) == round(float(Fraction(p["predicted"])), 5)
        assert float(row[col["z (training)"]]) == round(p["z_train"], 2)
        assert float(row[col["se (training)"]]) == round(p["sampling"]["se_train"], 5)
        assert (row[col["from step"]], row[col["to step"]]) == (p["first_step"], p["last_step"])
    # each run's plateau check states the JSON's plateaus
    for r in entry["runs"]:
        if not r["plateaus"]:
            continue
        stated = ", ".join(f"L_{p['stratum']}: {p['loss']:.4f} (z = {p['z_train']:+.1f})" for p in r["plateaus"])
        assert any(c["observed"] == stated for c in report["checks"]), stated
