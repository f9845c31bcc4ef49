"""point_geometry and PointGeometry (ag_attention._point.report): what is reported, and the CLI `point`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ag_attention import Architecture, InvalidArgumentError, Network, point_geometry
from tests.cli import run_in_process
from tests.helpers import deep_weights, generator

KEYS = {"architecture", "local_rank", "generic_dimension", "critical", "fiber_dimension", "exact", "provenance"}
ONE_LAYER_KEYS = {"rank_A", "rank_V", "singular", "boundary", "preimages"}


def test_cli_point_rtol_sets_the_float64_verdicts_and_a_bad_one_exits_2(tmp_path, capsys):
    A = np.diag([0.41, 3.2e-5]) @ np.array([[0.6, 0.8], [-0.8, 0.6]])  # singular values 0.41, 3.2e-5
    V = np.array([[0.89, 0.0], [0.0, 1.1e-5]])
    path = tmp_path / "student.npz"
    np.savez(path, **{"layers.0.heads.0.A": A, "layers.0.heads.0.V": V})
    loose = json.loads(run_in_process(capsys, "point", str(path), "--tokens", "2", "--json").stdout)
    tight = json.loads(run_in_process(capsys, "point", str(path), "-t", "2", "--rtol", "1e-6", "--json").stdout)
    assert loose["near_singular"] is True and tight["near_singular"] is False
    assert loose["singular"] is tight["singular"] is False and loose["rtol"] == 1e-3 and tight["rtol"] == 1e-6
    assert loose["numerical_rank"] == tight["numerical_rank"] == 7 and len(loose["jacobian_singular_values"]) == 8
    bad = run_in_process(capsys, "point", str(path), "-t", "2", "--rtol", "3")
    assert bad.returncode == 2 and "rtol=3.0" in bad.stderr and "Traceback" not in bad.stderr
    zero = run_in_process(capsys, "point", str(path), "-t", "2", "--samples", "0")  # was a ZeroDivisionError traceback
    assert (
        zero.returncode == 2 and "--samples must be at least 1, got 0" in zero.stderr and "Traceback" not in zero.stderr
    )


def test_the_report_has_every_documented_key_and_says_which_point():
    g = point_geometry(
        Network.from_weights(
            {
                "layers.0.heads.0.Q": [[0.1, 0.2], [0.3, 0.4]],
                "layers.0.heads.0.K": [[1, 0], [0, 1]],
                "layers.0.heads.0.V": [[0.5, 0.7]],
            }
        )
    )
    d = g.to_dict()
    assert KEYS | ONE_LAYER_KEYS <= set(d)
    assert d["point"]["conversion"] == "exact binary value of each float" and d["exact"] is True
    assert d["numerical"]["rank"] == d["local_rank"] == 5  # floats given: the float64 rank is reported too
    json.dumps(d)
    assert repr(g) == "PointGeometry(widths 2,1 ranks 2 t=2: local rank 5 of generic 5, not critical)"
    assert "exact binary value of each float" in str(g) and "a measurement, not a proof" in str(g)


def test_softmax_attention_is_measured_in_float64_only():
    rng = generator(4)
    w = {
        "layers.0.heads.0.Q": rng.standard_normal((2, 3)) / 3,
        "layers.0.heads.0.K": rng.standard_normal((2, 3)) / 3,
        "layers.0.heads.0.V": rng.standard_normal((2, 3)),
    }
    g = point_geometry(Network.from_weights(w, normalized=True))
    assert g.local is None and g.local_rank is None and g.critical is None and not g.exact
    assert (
        g.numerical is not None and g.numerical.rank == g.generic_dimension == 14
    )  # Thm. 3.9: 18 - GL_2, no rescaling
    assert "float64" in " ".join(g.notes)


def _save(tmp_path, arrays, name="w.npz"):
    path = tmp_path / name
    if name.endswith(".npz"):
        np.savez(path, **arrays)
    else:
        from safetensors.numpy import save_file

        save_file({k: np.asarray(v, dtype=np.float32) for k, v in arrays.items()}, str(path))
    return path


def test_cli_point_prints_the_documented_json(tmp_path, capsys):
    path = _save(tmp_path, {k: np.asarray(v, dtype=np.float64) for k, v in deep_weights(True).items()}, "w.safetensors")
    r = run_in_process(capsys, "point", str(path), "-t", "2", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert KEYS <= set(d) and d["local_rank"] == 22 and d["critical"] is True and d["critical_layers"] == [2]
    one = _save(
        tmp_path,
        {
            "layers.0.heads.0.A": np.outer([1, 2, 3], [1, -1, 2]).astype(float),
            "layers.0.heads.0.V": np.outer([2, 5], [1, -1, 2]).astype(float),
        },
    )
    r = run_in_process(capsys, "point", str(one), "-t", "2", "--json")
    d = json.loads(r.stdout)
    assert KEYS | ONE_LAYER_KEYS <= set(d) and (d["singular"], d["boundary"], d["local_rank"]) == (True, True, 12)


@pytest.mark.parametrize(
    "change, named",
    [
        (lambda w: {k: v for k, v in w.items() if k != "layers.1.heads.0.V"}, "layers.1.heads.0.V is missing"),
        (lambda w: {**w, "layers.1.heads.0.B": np.eye(3)}, "layers.1.heads.0.B"),
        (lambda w: {**w, "layers.0.heads.0.K": np.ones((3, 3))}, "layers.0.heads.0.K has shape (3, 3)"),
        (lambda w: {**w, "layers.0.heads.0.V": np.full((3, 3), np.nan)}, "layers.0.heads.0.V[0, 0] = nan"),
    ],
)
def test_cli_point_refuses_a_bad_file_by_name(tmp_path, change, named, capsys):
    path = _save(tmp_path, change({k: np.asarray(v, dtype=np.float64) for k, v in deep_weights(False).items()}))
    r = run_in_process(capsys, "point", str(path), "-t", "2")
    assert r.returncode == 2 and named in r.stderr and "Traceback" not in r.stderr


def test_cli_point_asks_for_the_token_count_the_file_does_not_store(tmp_path, capsys):
    # the geometry depends on t (a two-layer net: 37 at t = 1, 49 at t = 2): never a silent default
    path = _save(tmp_path, {"layers.0.heads.0.A": np.diag([1.0, 2.0]), "layers.0.heads.0.V": np.ones((1, 2))})
    r = run_in_process(capsys, "point", str(path))
    assert r.returncode == 2 and "token count t is not stored" in r.stderr and "--tokens" in r.stderr
    from ag_attention import Network

    with pytest.raises(InvalidArgumentError, match="token count t is not stored"):  # the API as the CLI
        Network.load(path)
    assert Network.load(path, tokens=2).architecture.tokens == 2


def test_cli_point_refuses_a_rank_above_the_bound_and_odd_options(tmp_path, capsys):
    path = _save(tmp_path, {"layers.0.heads.0.A": np.diag([1.0, 2.0, 3.0]), "layers.0.heads.0.V": np.ones((1, 3))})
    r = run_in_process(capsys, "point", str(path), "-t", "2", "--rank", "2")
    assert r.returncode == 2 and "layers.0.heads.0.A has rank 3, above the bound rank=2" in r.stderr
    r = run_in_process(capsys, "point", str(path), "--temperature", "2")
    assert r.returncode == 2 and "--temperature" in r.stderr
    r = run_in_process(capsys, "point", str(tmp_path / "nothing.npz"))
    assert r.returncode == 2 and "nothing.npz" in r.stderr


def test_the_same_point_from_floats_and_from_integers_gives_the_same_report():
    ints = deep_weights(True)
    floats = {k: v.astype(np.float64) for k, v in ints.items()}
    a, b = point_geometry(Network.from_weights(ints)), point_geometry(Network.from_weights(floats))
    keep = ("local_rank", "local_rank_upper", "generic_dimension", "critical", "fiber_dimension", "critical_layers")
    assert {k: a.to_dict()[k] for k in keep} == {k: b.to_dict()[k] for k in keep}
    assert a.numerical is None and b.numerical is not None  # floats: the float64 rank is measured too
    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    assert a.network.architecture == b.network.architecture == arch


def test_the_float64_rank_of_a_large_network_is_skipped_when_the_exact_rank_is_proven(monkeypatch):
    """Above NUMERICAL_DEFAULT_MAX_PARAMETERS the float SVD (189 s at 5,120 parameters) is skipped by default when
    the exact local rank is proven, and said so; numerical=True still computes it."""
    import numpy as np

    from ag_attention import Network, point_geometry
    from ag_attention._point import report as module

    rng = np.random.default_rng(1)
    w = {
        "layers.0.heads.0.Q": rng.standard_normal((2, 3)),
        "layers.0.heads.0.K": rng.standard_normal((2, 3)),
        "layers.0.heads.0.V": rng.standard_normal((3, 3)),
    }
    net = Network.from_weights(w, tokens=2)
    monkeypatch.setattr(module, "NUMERICAL_DEFAULT_MAX_PARAMETERS", 10)  # 21 parameters: "large"
    g = point_geometry(net)
    assert g.numerical is None and any("float64 rank is skipped" in n for n in g.notes)
    assert point_geometry(net, numerical=True).numerical is not None


def test_the_readme_student_checkpoint_is_smooth_exactly_and_near_singular_in_float64():
    """examples/student-bf16.safetensors (bench/readme_point.py: a student trained on a critical teacher, saved in
    bfloat16): exact verdicts smooth, float64 verdict near-singular at the default rtol, as the README shows."""
    from tests.helpers import ROOT

    g = point_geometry(Network.load(ROOT / "examples" / "student-bf16.safetensors"))
    assert g.network.architecture.tokens == 2  # from the file's __metadata__
    assert g.exact and g.critical is False and g.one_layer.singular is False
    assert g.strata.near_singular is True and g.rtol == 1e-3
    assert g.strata.relative_to_singular < 1e-3 < g.strata.relative_to_critical
