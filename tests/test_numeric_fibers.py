"""Normalized attention (numerical), deep fibers (Thm. 3.7) and Figure 3."""

import json
import subprocess
import sys

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import ComputationError
from ag_attention._exact.fibers import fibers
from ag_attention._models.formulas import cor38
from ag_attention._network import forward, jacobian
from ag_attention._numeric import Float64, NoClearGapError, gap_rank, numerical_dimension
from ag_attention._reproduce.figure3 import reproduce_figure_3


# ------------------------------------------------------------------ softmax Jacobian
@pytest.mark.parametrize("arch", [
    Architecture((3, 2, 2), (2, 1), tokens=3, normalized=True, temperature=0.7),
    Architecture((2, 2), None, tokens=2, parametrization="AV", normalized=True),
    Architecture((2, 2, 2), (1, 2), tokens=2, heads=2, skip=True, normalized=True),
], ids=str)
def test_softmax_jacobian_matches_central_differences(arch):
    F, rng = Float64(), np.random.default_rng(3)
    theta = rng.standard_normal(arch.parameter_count) * 0.5
    X = rng.standard_normal((2, arch.tokens, arch.widths[0]))
    J = jacobian(arch, F, theta, X)
    h = 1e-6
    num = np.stack([(forward(arch, F, theta + h * e, X) - forward(arch, F, theta - h * e, X)).ravel() / (2 * h)
                    for e in np.eye(arch.parameter_count)], axis=1)
    assert np.abs(J - num).max() < 1e-7 * max(1.0, np.abs(J).max())


# ------------------------------------------------------------------ Thm. 3.9, Eq. 16
@pytest.mark.parametrize("d, e, a, t", [(3, 2, 2, 2), (4, 3, 2, 3), (4, 1, 4, 2), (3, 3, 1, 3)])
def test_one_normalized_layer_theorem_39(d, e, a, t):
    r = numerical_dimension(Architecture((d, e), (a,), tokens=t, normalized=True))
    assert r.dimension == a * (2 * d - a) + d * e == r.expected.value  # no rescaling: one more than Cor. 3.3
    assert r.expected.formula == "Thm. 3.9" and r.gap.clear and r.gap.gap > 8
    lightning = numerical_dimension(Architecture((d, e), (a,), tokens=t))
    assert lightning.dimension == r.dimension - 1


@pytest.mark.parametrize("widths, ranks", [((3, 3, 3), (2, 2)), ((4, 2, 4), (2, 2)), ((4, 3, 3, 2), (2, 2, 2))])
def test_deep_normalized_eq16(widths, ranks):
    r = numerical_dimension(Architecture(widths, ranks, tokens=3, normalized=True))
    assert r.dimension == cor38(widths, ranks) + len(ranks) == r.expected.value
    assert r.expected.conjectural and r.certified and r.to_dict()["numerical"] is False
    assert r.to_dict()["certified"] is True and r.lower_bound == r.upper_bound == r.dimension
    assert numerical_dimension(Architecture(widths, ranks, tokens=3, normalized=True), certify=False).certified is False


def test_gap_rank_verdicts_and_refusals():
    clear = np.array([3.0, 2.0, 1.0, 0.5, 1e-14, 1e-15])
    assert gap_rank(clear).rank == 4
    full = np.array([3.0, 2.0, 1.0, 0.2])
    assert gap_rank(full).rank == 4 and gap_rank(full).clear
    smooth = 10.0 ** (-np.arange(40) / 3.0)  # decays steadily: no gap anywhere
    g = gap_rank(smooth)
    assert g.rank is None and not g.clear and "no clear gap" in g.reason
    two = np.array([1.0, 1e-5, 1e-10, 1e-15])  # two gaps of equal size: ambiguous
    assert gap_rank(two).rank is None
    # no gap of 4 orders, but the spectrum spans 8: a rank drop may hide in it, so no verdict
    for decaying in ([1, 1, 1, 1e-3, 1e-6, 1e-8], 10.0 ** -np.arange(9)):
        assert gap_rank(np.array(decaying, dtype=float)).rank is None
    # full rank: the gap reported is the distance of s_min to the float64 noise level
    g = gap_rank(full, size=1000)
    assert g.rank == 4 and 10 < g.gap < 13 and "noise" in g.reason


@pytest.mark.parametrize("widths, ranks, t, value", [
    ((8, 8), (4,), 2, 112),  # Thm. 3.9: a(2d - a) + d d'
    ((12, 12), (6,), 3, 252),
    ((12, 12, 12), (6, 6), 3, 360),  # Eq. 16
])
def test_default_samples_reach_the_dimension(widths, ranks, t, value):
    # softmax rows sum to one: a sample adds only t (t - 1) directions beyond the values,
    # so the default number of samples must account for it
    r = numerical_dimension(Architecture(widths, ranks, tokens=t, normalized=True))
    assert r.dimension == value == r.expected.value and r.gap.gap > 8


def test_numerical_dimension_refuses_without_a_clear_gap():
    arch = Architecture((3, 2), (2,), tokens=2, normalized=True)
    with pytest.raises(NoClearGapError, match="no clear gap"):
        numerical_dimension(arch, min_gap=30, certify=False)
    r = numerical_dimension(arch, min_gap=30, raise_on_no_gap=False, certify=False)
    assert r.dimension is None and r.to_dict()["clear_gap"] is False
    # a certificate needs no gap: the minor of the size of the symmetry bound is proven nonzero
    r = numerical_dimension(arch, min_gap=30)
    assert r.certified and r.dimension == 14 and r.to_dict()["clear_gap"] is False
    assert isinstance(NoClearGapError("x"), ComputationError)


# ------------------------------------------------------------------ Thm. 3.7
@pytest.mark.parametrize("widths, ranks, t", [((4, 4, 4), (2, 2), 3), ((4, 2, 4), (2, 2), 3), ((5, 3, 2), (2, 2), 2),
                                              ((4, 4, 4, 4), (2, 2, 2), 3), ((6, 3, 3, 6), (3, 2, 2), 3)])
def test_fibers_explained_on_bottlenecks(widths, ranks, t):
    r = fibers(Architecture(widths, ranks, tokens=t))
    assert r.explained and r.excess == 0 and r.in_kernel and r.kernel_check == "exact"
    assert r.fiber_dimension == r.symmetry_dimension == r.dimension.parameters - cor38(widths, ranks)


@pytest.mark.parametrize("widths, ranks, t, excess, exact", [
    ((2, 3, 3), (2, 2), 2, 4, True),  # growing before the last layer
    ((3, 5, 3), (2, 2), 3, None, True),  # grow then shrink
    ((4, 4, 4, 4), (1, 2, 2), 3, 4, False),  # a_1 = 1: tokens become parallel
    ((3, 3), (3,), 1, 3, True),  # t = 1: phi only sees A + A^T
])
def test_fibers_report_the_excess_elsewhere(widths, ranks, t, excess, exact):
    r = fibers(Architecture(widths, ranks, tokens=t))
    assert not r.explained and r.excess > 0 and r.in_kernel
    if excess is not None:
        assert r.excess == excess
    assert r.excess_exact == exact
    d = r.to_dict()
    assert {"fiber_dimension", "symmetry_dimension", "explained", "excess"} <= set(d)


def test_fibers_freivalds_on_large_networks():
    r = fibers(Architecture((24, 24, 24), (8, 8), tokens=3))
    assert r.kernel_check.startswith("Freivalds") and r.explained


# ------------------------------------------------------------------ Figure 3 and the CLI
def test_figure3_quick(tmp_path):
    rep = reproduce_figure_3(tmp_path, deltas=range(3, 6))
    assert rep.passed, [c.observed for c in rep.failures]
    rows = json.loads((tmp_path / "figure3.json").read_text())
    assert len(rows) == 6 and {"delta", "normalized", "estimated", "expected", "gap"} <= set(rows[0])
    norm = [r for r in rows if r["normalized"]]
    assert [r["estimated"] for r in norm] == [25, 40, 57] and all(r["gap"] > 8 for r in norm)
    assert all(r["gap"] is None and r["certified"] for r in rows if not r["normalized"])
    assert all(r["certified"] and r["lower"] == r["upper"] == r["estimated"] for r in norm)
    assert (tmp_path / "figure3.png").stat().st_size > 20000


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "ag_attention._cli", *args], capture_output=True, text=True)


def test_cli_normalized_and_fibers():
    p = run_cli("dim", "--widths", "4,3", "--ranks", "2", "--tokens", "3", "--normalized", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["dimension"] == 24 and d["numerical"] is False and d["certified"] is True and d["singular_value_gap"] > 8
    assert d["lower_bound"] == d["upper_bound"] == 24 and d["determinant_excludes_zero"] is True
    p = run_cli("fibers", "--widths", "4,2,4", "--ranks", "2,2", "--tokens", "3", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert (d["fiber_dimension"], d["symmetry_dimension"], d["explained"]) == (14, 14, True)
    p = run_cli("dim", "--widths", "4,3", "--ranks", "2", "--normalized", "--prime", "101")
    assert p.returncode == 2 and "float64" in p.stderr


def test_cli_dim_json_and_summary():
    p = run_cli("dim", "--widths", "4,4,4", "--ranks", "2,2", "--tokens", "3", "--seed", "5", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for key in ("dimension", "parameters", "fiber_dimension", "expected", "formula_applies", "prime", "seed", "samples", "seconds"):
        assert key in d, key
    assert (d["dimension"], d["parameters"], d["fiber_dimension"], d["expected"]) == (38, 64, 26, 38)
    assert d["formula_applies"] is True and d["seed"] == 5 and d["prime"] == 2**31 - 1 and d["certified"] is True
    p = run_cli("dim", "--widths", "3,1", "--ranks", "3", "--tokens", "1")
    assert p.returncode == 0 and "dimension        8" in p.stdout and "does not apply" in p.stdout


@pytest.mark.parametrize("args, named", [
    (["--widths", "4,x", "--ranks", "2"], "widths[1]"),
    (["--widths", "4,4,4", "--ranks", "2"], "ranks"),
    (["--widths", "4,4", "--ranks", "2", "--tokens", "0"], "tokens"),
    (["--widths", "4,4", "--ranks", "2", "--prime", "4"], "prime"),
    (["--widths", "4,4", "--ranks", "2", "--seed", "-1"], "seed"),
    (["--widths", "4,4", "--ranks", "2", "--temperature", "2"], "temperature"),
    (["--widths", "4,4", "--ranks", "2", "--tokens", "two"], "--tokens"),
])
def test_cli_bad_arguments_exit_2_naming_the_value(args, named):
    p = run_cli("dim", *args)
    assert p.returncode == 2 and named in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_cli_reproduce_corollary_38_and_bad_out(tmp_path):
    p = run_cli("reproduce", "corollary-3.8", "--quick", "--out", str(tmp_path / "c38"), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["passed"] is True and len(d["checks"]) >= 5
    assert all({"claim", "case", "method", "expected", "observed", "passed"} <= set(c) for c in d["checks"])
    assert (tmp_path / "c38" / "report.md").read_text().count("|") > 20
    (tmp_path / "file").write_text("")
    p = run_cli("reproduce", "corollary-3.8", "--quick", "--out", str(tmp_path / "file"))
    assert p.returncode == 2 and "--out" in p.stderr and "Traceback" not in p.stderr


# ------------------------------------------------------------ notebooks and tables
def _columns(result):
    from ag_attention._results import flatten

    return list(flatten(result.to_dict()))


def test_numerical_result_in_a_notebook_and_a_table():
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True))
    assert repr(r) == "NumericalResult(widths 4,3 ranks 2 t=3 softmax(tau=1): dim=24, P=28, gap 14.8 orders, certified, seed=0)"
    md = r._repr_markdown_()
    assert md.startswith(str(r) + "\n\n| field | value |\n|---|---|\n")
    assert "| dimension | 24 |" in md and "| certified | true |" in md
    pytest.importorskip("pandas")
    f = r.to_frame()
    assert len(f) == 1 and list(f.columns) == _columns(r)
    assert f.iloc[0]["dimension"] == 24 and str(f["dimension"].dtype) == "Int64"


def test_fiber_result_in_a_notebook_and_a_table():
    r = fibers(Architecture((4, 2, 4), (2, 2), tokens=3))
    assert repr(r) == "FiberResult(widths 4,2,4 ranks 2,2 t=3: fiber 14, symmetries 14, explained)"
    md = r._repr_markdown_()
    assert md.startswith(str(r) + "\n\n| field | value |\n|---|---|\n")
    assert "| explained | true |" in md and "| symmetry_dimension | 14 |" in md
    pytest.importorskip("pandas")
    f = r.to_frame()
    assert len(f) == 1 and list(f.columns) == _columns(r)
    assert bool(f.iloc[0]["explained"]) and str(f["explained"].dtype) == "boolean"


# ------------------------------------------------------------ progress
def test_numerical_dimension_shows_its_steps_on_a_terminal(monkeypatch, capsys):
    from ag_attention import _progress as progress
    from tests.helpers import Terminal

    monkeypatch.setattr(progress, "DELAY", 0.0)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)  # in the test body: pytest's capture resets it after set-up
    r = numerical_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True))
    text = err.getvalue()
    assert "numerical dimension of widths 4,3 ranks 2 t=3" in text
    assert all(f"Jacobian of {n} samples" in text for n, _ in r.history) and "SVD of" in text  # doublings too
    assert f"/{2 * len(r.history)} [" in text  # two steps a spectrum
    assert capsys.readouterr().out == ""  # standard output is never touched
    err.truncate(0)
    with progress.quiet():
        numerical_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True))
    assert err.getvalue() == ""


# ------------------------------------------------------------------ causal softmax
def test_causal_softmax_first_row_is_not_saturated():
    """With a causal mask the first attention row is [1, 0, ...] by construction: not a saturated softmax."""
    from ag_attention._numeric.spectrum import saturated_fraction

    arch = Architecture((4, 3), (2,), tokens=3, normalized=True, causal=True)
    r = numerical_dimension(arch)
    assert r.dimension is not None and r.undecided == ""
    W = np.array([[[1.0, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]]])
    assert saturated_fraction(arch, [W]) == 0.0
    assert saturated_fraction(arch.with_(causal=False), [W]) == pytest.approx(1 / 3)
    W[0, 1] = [1.0, 0.0, 0.0]  # a row with two allowed tokens that puts all weight on one: saturated
    assert saturated_fraction(arch, [W]) == pytest.approx(1 / 2)
    # one token: the softmax is the constant 1, not saturated; phi(x) = V x has dimension d d'
    one = Architecture((3, 2), (2,), tokens=1, normalized=True)
    assert saturated_fraction(one, [np.ones((4, 1, 1))]) == 0.0
    r = numerical_dimension(one)
    assert r.dimension == 6 and r.undecided == "" and not r.certified and (r.lower_bound, r.upper_bound) == (6, 14)
