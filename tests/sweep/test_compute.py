"""One row of a sweep (ag_attention._sweep.compute): the columns, the certificate kinds, failures as rows."""

import json
from types import SimpleNamespace

import pytest

from ag_attention._models.formulas import cor38
from ag_attention._sweep.compute import (
    CERTIFICATE_KINDS,
    COLUMNS,
    KEY_COLUMNS,
    certificate_kind,
    compute_chunk,
    compute_row,
)
from ag_attention._sweep.grid import Spec

P = 2**31 - 1


@pytest.mark.parametrize(
    "closed_by, kind",
    [
        (None, "lower-bound"),
        ("symmetries", "symmetry-bound"),
        ("effective-architecture", "effective-architecture"),
        ("one-token", "analytic-bound"),
        ("parallel-tokens", "analytic-bound"),
    ],
)
def test_certificate_kind_names_the_proof(closed_by, kind):
    assert certificate_kind(SimpleNamespace(closed_by=closed_by)) == kind
    assert kind in CERTIFICATE_KINDS


def test_a_lightning_row():
    row = compute_row(Spec((4, 4, 4), (2, 2), 3), P, 0)
    assert set(row) == {name for name, _ in COLUMNS} and set(KEY_COLUMNS) <= set(row)
    assert json.loads(json.dumps(row)) == row  # plain data: it goes through the journal unchanged
    assert (row["dimension"], row["upper_bound"], row["expected"], row["agrees"]) == (38, 38, 38, True)
    assert (row["certified"], row["certificate_kind"], row["bound"]) == (True, "symmetry-bound", "symmetries")
    assert (row["depth"], row["parameters"], row["formula"], row["formula_applies"]) == (2, 64, "Cor. 3.8", True)
    assert (row["prime"], row["seed"], row["numerical"], row["error"]) == (P, 0, False, None)
    assert row["effective_widths"] == [4, 4, 4] and row["failed_hypotheses"] == [] and row["seconds"] >= 0


def test_rows_name_the_bound_that_closes_them():
    one_token = compute_row(Spec((3, 1), (3,), 1), P, 0)
    assert (one_token["dimension"], one_token["expected"], one_token["agrees"]) == (8, 11, False)
    assert one_token["certificate_kind"] == "analytic-bound" and one_token["bound"] not in (None, "symmetries")
    assert one_token["failed_hypotheses"] == ["t >= 2"] and not one_token["formula_applies"]
    growing = compute_row(Spec((2, 3, 3), (2, 2), 2), P, 0)
    assert (growing["dimension"], growing["certificate_kind"]) == (12, "effective-architecture")
    assert growing["effective_widths"] == [2, 2, 3] and growing["paper_hypotheses_hold"]


def test_a_softmax_row_is_float64_then_balls():
    row = compute_row(Spec((3, 2), (2,), 3, normalized=True), P, 5)
    assert (row["numerical"], row["prime"], row["seed"]) == (True, None, 5)
    assert (row["dimension"], row["expected"], row["formula"]) == (14, 14, "Thm. 3.9")
    assert row["certified"] and row["certificate_kind"] == "ball-arithmetic" and row["singular_value_gap"] > 8


def test_a_failure_is_a_row_naming_it(monkeypatch):
    monkeypatch.setenv("AG_ATTENTION_MEMORY_LIMIT", "1M")
    row = compute_row(Spec((16, 16, 16), (8, 8), 3), P, 0)
    assert row["dimension"] is None and row["certified"] is False and row["certificate_kind"] == "error"
    assert row["error"].startswith("InsufficientMemoryError: ") and row["certificate"] == "no result: " + row["error"]
    assert row["expected"] == cor38((16, 16, 16), (8, 8)) == 638  # the formula is known without computing
    assert set(row) == {name for name, _ in COLUMNS}


def test_a_chunk_keeps_its_order():
    specs = [Spec((2, 2), (2,), 2), Spec((2, 1), (1,), 2), Spec((3, 2), (1,), 3)]
    rows = compute_chunk(specs, P, 0)
    assert [Spec.from_row(r) for r in rows] == specs
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in rows]
    assert strip == [{k: v for k, v in compute_row(s, P, 0).items() if k != "seconds"} for s in specs]
