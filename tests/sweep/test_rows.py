"""The stored rows read back (ag_attention._sweep.rows): the Parquet schema and metadata, valid rows, the journal."""

import json

import pytest

pytest.importorskip("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from ag_attention._sweep import COLUMNS, Spec, parse_grid, read_metadata, read_rows, sweep  # noqa: E402
from ag_attention._sweep.rows import merge, read_journal, row_problem  # noqa: E402
from ag_attention._sweep.store import JOURNAL, JournalWarning  # noqa: E402
from tests.sweep.small_grid import SMALL_SIZE  # noqa: E402


def _strip(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


def test_parquet_schema_and_metadata(local_run):
    path = local_run.results
    schema = pq.read_schema(path)
    types = {f.name: f.type for f in schema}
    assert [f.name for f in schema] == [name for name, _ in COLUMNS]
    for name in ("widths", "ranks", "effective_widths", "effective_ranks"):
        assert types[name] == pa.list_(pa.int64()), name
    for name in (
        "skip",
        "causal",
        "normalized",
        "formula_applies",
        "paper_hypotheses_hold",
        "certified",
        "numerical",
        "agrees",
    ):
        assert types[name] == pa.bool_(), name
    for name in ("tokens", "heads", "dimension", "parameters", "expected", "prime", "seed"):
        assert types[name] == pa.int64(), name
    assert types["seconds"] == pa.float64() and types["certificate_kind"] == pa.string()
    meta = read_metadata(path)
    assert {"version", "commit", "date", "python", "flint"} <= set(meta["provenance"])
    assert meta["sweep"]["seed"] == 0 and meta["sweep"]["grid"].endswith("small.toml")
    rows = read_rows(path)
    assert len(rows) == SMALL_SIZE == local_run.total == local_run.computed
    assert len({Spec.from_row(r) for r in rows}) == len(rows)
    one_token, softmax = rows[0], rows[1]
    assert (one_token["dimension"], one_token["expected"], one_token["certified"]) == (8, 11, True)
    assert one_token["certificate_kind"] == "analytic-bound"
    assert softmax["numerical"] and softmax["certified"] and softmax["prime"] is None  # float64, then balls
    assert softmax["certificate_kind"] == "ball-arithmetic" and softmax["upper_bound"] == softmax["dimension"]
    assert softmax["dimension"] == softmax["expected"] == 2 * (2 * 3 - 2) + 3 * 2  # Thm. 3.9
    assert not any(r["error"] for r in rows)
    # the summary counts are consistent, and the files are there
    total = local_run.summary["total"]
    assert total["rows"] == SMALL_SIZE
    assert total["applies_agrees"] + total["applies_differs"] + total["applies_undecided"] == total["formula_applies"]
    assert json.loads((local_run.out / "summary.json").read_text())["total"] == total
    assert "| lightning, t=2, L=2 |" in (local_run.out / "summary.md").read_text()
    assert not (local_run.out / JOURNAL).exists()
    pytest.importorskip("matplotlib")
    assert (local_run.out / "dimension-vs-formula.png").stat().st_size > 0
    assert (local_run.out / "dimension-vs-formula.svg").stat().st_size > 0
    assert (local_run.out / "dimension-vs-formula.pdf").read_bytes().startswith(b"%PDF-")


def test_integer_columns_have_integer_dtypes(local_run):
    """Every integer column reads as an integer dtype, also in pandas (nullable Int64 where nulls may be)."""
    pd = pytest.importorskip("pandas")
    frame = pd.read_parquet(local_run.results)
    assert frame["prime"].isna().sum() == 1  # the softmax row has no prime: a null in an integer column
    for name, kind in COLUMNS:
        if kind.startswith("int64"):
            assert pd.api.types.is_integer_dtype(frame[name]), (name, frame[name].dtype)
            assert str(frame[name].dtype) == ("Int64" if kind.endswith("?") else "int64"), name
        elif kind.startswith("bool"):
            assert pd.api.types.is_bool_dtype(frame[name]), (name, frame[name].dtype)
    assert frame["prime"].dropna().tolist() == [2**31 - 1] * (SMALL_SIZE - 1)


@pytest.mark.parametrize(
    "forge, reason",
    [
        (lambda r: {**r, "dimension": -5}, "dimension=-5: not between 0 and the"),
        (lambda r: {**r, "dimension": r["parameters"] + 1}, "not between 0 and the"),
        (lambda r: {**r, "parameters": r["parameters"] + 1}, "its architecture has"),
        (lambda r: {**r, "expected": (r["expected"] or 0) + 1}, "the formula gives"),
        (lambda r: {**r, "certified": True, "certificate_kind": "lower-bound"}, "certified with"),
        (
            lambda r: {**r, "upper_bound": r["dimension"] - 1} if r["dimension"] else {**r, "upper_bound": -1},
            "upper_bound",
        ),
    ],
)
def test_a_journal_row_that_contradicts_itself_is_recomputed_not_published(local_run, tmp_path, forge, reason):
    """F1: a row with dimension -5 (true value 61 of 145 parameters) was kept on --resume and published as
    certified: its types were checked, not its sense. Now every bound the row itself implies is checked."""
    valid = [r for r in read_rows(local_run.results) if r["dimension"] and r["error"] is None][:3]
    grid = parse_grid({"architecture": [Spec.from_row(r).to_dict() for r in valid]})
    out = tmp_path / "out"
    out.mkdir()
    lines = [forge(valid[0]), valid[1], valid[2]]
    (out / JOURNAL).write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in lines))
    with pytest.warns(JournalWarning):
        r = sweep(grid, out, resume=True, workers=1, plots=False)
    assert (r.skipped, r.computed, r.rejected) == (2, 1, 1)
    assert _strip(r.rows()) == _strip(valid)  # recomputed: the true row is published
    rejected = [json.loads(line) for line in (out / "journal.rejected").read_text().splitlines()]
    assert len(rejected) == 1 and reason in rejected[0]["reason"], rejected


def test_row_problem_names_the_column_and_the_journal_drops_a_torn_line(local_run, tmp_path):
    row = read_rows(local_run.results)[0]
    assert row_problem(row) is None
    assert row_problem([1, 2]) == "not a JSON object but list"
    assert row_problem({k: v for k, v in row.items() if k != "tokens"}) == "no column 'tokens'"
    assert "tokens='abc'" in row_problem({**row, "tokens": "abc"})
    path = tmp_path / JOURNAL
    path.write_bytes(json.dumps(row).encode() + b"\n" + b"[1]\n" + b'{"widths": [1, ')
    rows, lines, rejected = read_journal(path, repair=True)
    assert rows == [row] and len(lines) == 1 and [r.line for r in rejected] == [2]
    assert path.read_bytes().endswith(b"[1]\n")  # the torn last line is cut off
    assert merge([{**row, "error": None}, {**row, "error": "boom"}]) == {Spec.from_row(row): {**row, "error": None}}
