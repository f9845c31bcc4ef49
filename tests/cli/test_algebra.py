"""``dim``, ``fibers``, ``implicitize`` and ``degree`` (ag_attention._cli.algebra): property tests of their arguments,
each command end to end (its output, its exit status)."""

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ag_attention._cli import main
from tests.cli import exit_of, run_in_process
from tests.helpers import ROOT, run_cli


def test_fiber_dimension_is_worded_as_a_bound_when_it_is_one(capsys):
    # t = 3, rank 1, one sample: a lower bound on dim, so the fiber dimension is only an upper bound
    status, out, _ = exit_of(["dim", "--widths", "3,3", "--ranks", "1", "--tokens", "3", "--samples", "1"], capsys)
    assert status == 0 and "fiber dimension  at most" in out
    status, out, _ = exit_of(["dim", "--widths", "3,3", "--ranks", "1", "--tokens", "3"], capsys)
    assert status == 0 and "fiber dimension  2\n" in out and "at most" not in out  # certified: 15 - 13


_SIZES = st.one_of(
    st.text(max_size=12),
    st.lists(st.integers(-3, 6), min_size=0, max_size=4).map(lambda v: ",".join(map(str, v))),
    st.sampled_from(["4,4", "3,2", "2,2,2", "", " ", ",", "1_0", "٣", "1e3", "0x10", "4,4,", "-4", "99999999999"]),
)


_NUMBER = st.one_of(
    st.text(max_size=8), st.integers(-5, 10).map(str), st.sampled_from(["nan", "inf", "-inf", "1e400", "0", "1.5", "2"])
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    widths=_SIZES,
    ranks=st.one_of(st.none(), _SIZES),
    tokens=st.one_of(st.none(), _NUMBER),
    samples=st.one_of(st.none(), _NUMBER),
    heads=st.one_of(st.none(), _NUMBER),
    normalized=st.booleans(),
    temperature=st.one_of(st.none(), _NUMBER),
)
def test_cli_dim_either_answers_or_exits_2(
    widths, ranks, tokens, samples, heads, normalized, temperature, capsys, monkeypatch
):
    monkeypatch.setenv("AG_ATTENTION_MEMORY_LIMIT", "200M")  # anything larger is refused, quickly
    argv = ["dim", "--widths", widths]
    for flag, value in (
        ("--ranks", ranks),
        ("--tokens", tokens),
        ("--samples", samples),
        ("--heads", heads),
        ("--temperature", temperature),
    ):
        if value is not None:
            argv += [flag + "=" + value]
    if normalized:
        argv.append("--normalized")
    status, out, err = exit_of(argv, capsys)
    # 0: an answer; 1: a numerical engine without a clear gap; 2: refused, naming what
    assert status in (0, 1, 2), (argv, status, err)
    assert "Traceback" not in err
    if status == 2:
        assert err.strip(), argv
    if status == 1:
        assert "no clear gap" in err, (argv, err)


_IMPOSSIBLE = [
    ["dim", "--widths", "4,4", "--ranks", "2", "--samples", "10000000"],
    ["dim", "--widths", "1000,1000", "--ranks", "2"],
    ["dim", "--widths", "100000,100000"],
    ["dim", "--widths", "4,4", "--ranks", "2", "--tokens", "1000000000"],
    ["dim", "--widths", "4,4", "--ranks", "2", "--tokens", "100000"],
    ["dim", "--widths", "4,4", "--ranks", "2", "--samples", "99999999999"],
    ["dim", "--widths", "4,4", "--ranks", "2", "--samples", "99999999999", "--normalized"],
    ["dim", "--widths", "4,4", "--ranks", "2", "--tokens", "100000", "--normalized"],
    ["dim", "--widths", "100000,100000", "--normalized"],
    ["fibers", "--widths", "100000,100000"],
    ["dim", "--widths", "4,4", "--ranks", "2", "--heads", "100000000"],
    ["dim", "--widths", "4,4", "--ranks", "2", "--heads", "1000000", "--normalized"],
]


@pytest.mark.parametrize("argv", _IMPOSSIBLE, ids=lambda a: " ".join(a))
def test_impossible_sizes_are_refused_with_exit_2(argv, monkeypatch):
    # 20 GiB: what the hardening issue's machine had; the answer must not depend on this machine's RAM
    monkeypatch.setenv("AG_ATTENTION_MEMORY_LIMIT", "20G")
    # a subprocess, so a hang or an allocation cannot take the test runner with it (60 s: a hang guard only)
    r = subprocess.run(
        [sys.executable, "-m", "ag_attention._cli", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.startswith("ag-attention: error:")
    assert "GiB" in r.stderr or "65,534" in r.stderr


def test_cli_degree_json(capsys):
    assert main(["degree", "--widths", "2,1", "--ranks", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["degree"] == 3 and out["fiber_size"] == 2 and out["method"] == "formula"
    assert out["confirmed_by"] == ["count"] and out["prime"] == 2147483647 and out["seed"] == 0
    for key in ("dimension", "certificate", "seconds", "msolve"):
        assert key in out


def test_cli_degree_without_msolve_exits_3(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", str(tmp_path / "no-msolve"))
    assert main(["degree", "--widths", "2,1", "--ranks", "2", "--method", "count", "--no-cache"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("ag-attention: msolve:") and "AG_ATTENTION_MSOLVE" in err


def test_cli_implicitize_by_interpolation(capsys, msolve):
    assert main(["implicitize", "--widths", "2,1", "--ranks", "1", "--method", "interpolate", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["generator_count"] == {"1": 0, "2": 3, "3": 0} and out["verified"] is True
    assert out["complete"].startswith("certified") and out["certified_complete"] is True
    # the length test runs first and certifies (2,1,1); the leading-ideal test is then not needed
    assert out["length_test"]["length"] == out["length_test"]["degree"] == 3 and out["leading_ideal_test"] is None
    assert len(out["coordinate_labels"]) == len(out["variables"]) == 6
    assert out["coordinate_labels"][1].startswith("q11z12: coefficient of z1*z2 in q[1,1]")
    assert main(["implicitize", "--widths", "2,1", "--ranks", "1", "--max-degree", "2"]) == 2  # kernel: no max degree
    assert "--max-degree" in capsys.readouterr().err


def test_cli_dim_normalized_json_is_certified():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ag_attention._cli",
            "dim",
            "--widths",
            "4,3",
            "--ranks",
            "2",
            "--tokens",
            "3",
            "--normalized",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    d = json.loads(out.stdout)
    assert d["certified"] is True and d["dimension"] == d["lower_bound"] == d["upper_bound"] == 24


def test_cli_normalized_and_fibers(capsys):
    # dim in this process (test_cli_dim_normalized_json_is_certified runs the same command in a new one), fibers in a
    # new one
    p = run_in_process(capsys, "dim", "--widths", "4,3", "--ranks", "2", "--tokens", "3", "--normalized", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["dimension"] == 24 and d["numerical"] is False and d["certified"] is True and d["singular_value_gap"] > 8
    assert d["lower_bound"] == d["upper_bound"] == 24 and d["determinant_excludes_zero"] is True
    p = run_cli("fibers", "--widths", "4,2,4", "--ranks", "2,2", "--tokens", "3", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert (d["fiber_dimension"], d["symmetry_dimension"], d["explained"]) == (14, 14, True)
    p = run_in_process(capsys, "dim", "--widths", "4,3", "--ranks", "2", "--normalized", "--prime", "101")
    assert p.returncode == 2 and "float64" in p.stderr


def test_cli_dim_json_and_summary(capsys):
    p = run_in_process(capsys, "dim", "--widths", "4,4,4", "--ranks", "2,2", "--tokens", "3", "--seed", "5", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for key in (
        "dimension",
        "parameters",
        "fiber_dimension",
        "expected",
        "formula_applies",
        "prime",
        "seed",
        "samples",
        "seconds",
    ):
        assert key in d, key
    assert (d["dimension"], d["parameters"], d["fiber_dimension"], d["expected"]) == (38, 64, 26, 38)
    assert d["formula_applies"] is True and d["seed"] == 5 and d["prime"] == 2**31 - 1 and d["certified"] is True
    p = run_in_process(capsys, "dim", "--widths", "3,1", "--ranks", "3", "--tokens", "1")
    assert p.returncode == 0 and "dimension        8" in p.stdout and "does not apply" in p.stdout


@pytest.mark.serial
def test_dim_of_long_sequences_says_its_estimate_first_and_stops_at_its_timeout():
    """The issue: `dim --tokens 5000` ran 564 s with no estimate and no --timeout.  On 3,000 tokens (about 20 s of
    Jacobian) the estimate comes first on standard error, and --timeout 2 stops the work with exit 3 within the
    limit's 10 % and 5 s (the process's start and the estimate's timing included)."""
    import time

    start = time.monotonic()
    r = run_cli("dim", "--widths", "3,3", "--ranks", "2", "--tokens", "3000", "--timeout", "2")
    elapsed = time.monotonic() - start
    assert r.returncode == 3, r.stderr
    first, *rest = r.stderr.splitlines()
    assert first.startswith("ag-attention: dim: 1 layer, 21 parameters: estimated ") and "at t = 3,000" in first
    assert first.endswith("; --timeout 2 s") and rest[-1].startswith("ag-attention: time limit of 2 s reached during ")
    assert r.stdout == "" and "Traceback" not in r.stderr
    assert elapsed <= 2 * 1.1 + 5


def test_dim_short_of_its_timeout_answers_without_an_estimate(capsys):
    status, out, err = exit_of(["dim", "--widths", "3,3", "--ranks", "2", "--tokens", "50", "--timeout", "60"], capsys)
    assert status == 0 and "dimension        16  (certified exact)" in out and "5 samples x 7" in out and err == ""
    status, out, err = exit_of(["dim", "--widths", "3,3", "--ranks", "2", "--normalized", "--timeout", "60"], capsys)
    assert status == 2 and "--timeout=60" in err and "float64" in err
    status, out, err = exit_of(["dim", "--widths", "3,3", "--ranks", "2", "--timeout", "0"], capsys)
    assert status == 2 and "--timeout" in err
