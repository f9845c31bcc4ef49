"""Float parts of a point report at any scale: never a traceback, never NaN in JSON, never against an exact verdict."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import Network, point_geometry
from ag_attention._point.onelayer import critical_distance
from ag_attention._point.trust import jacobian_range
from tests.cli import run_in_process


def _strict(text: str) -> dict:
    """JSON as the standard has it: NaN and Infinity are refused."""

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _one_layer(x: float, qkv: bool = False) -> dict[str, np.ndarray]:
    if qkv:
        return {
            "layers.0.heads.0.Q": np.array([[x, 0], [0, x]]),
            "layers.0.heads.0.K": np.array([[x, x], [0, x]]),
            "layers.0.heads.0.V": np.array([[x, 0], [x, x]]),
        }
    return {"layers.0.heads.0.A": np.array([[x, 0], [0, x]]), "layers.0.heads.0.V": np.array([[x, x], [0, x]])}


@pytest.mark.parametrize("x, qkv", [(1e200, False), (1e308, False), (1e150, True), (1e-150, True), (1e-300, False)])
def test_extreme_weights_give_the_exact_verdicts_and_say_the_float_part_is_unavailable(x, qkv):
    """1e200 and 1e308 raised OverflowError; at 1e-150 (Q, K) the Jacobian underflowed to zero: "float64 rank 0"
    beside the exact local rank 7. The exact verdicts are those of the same point at scale 1 (a cone)."""
    g = point_geometry(Network.from_weights(_one_layer(x, qkv)))
    ref = point_geometry(Network.from_weights(_one_layer(1.0, qkv)))
    assert (g.local_rank, g.exact, g.critical, g.one_layer.singular) == (ref.local_rank, True, False, False)
    assert g.numerical is None and "this scale" in g.float_unavailable["numerical"]
    assert "flows float64" in g.float_unavailable["numerical"] and "the exact verdicts stand" in str(g)
    d = g.to_dict()
    _strict(json.dumps(d, allow_nan=False))
    assert d["numerical_rank"] is None and set(d["float_unavailable"]) >= {"numerical"}
    lo, hi = g.one_layer.distance
    assert 0 < lo <= hi < float("inf")


def test_the_distance_to_the_critical_set_is_enclosed_at_any_scale():
    """Weights of 1e200 overflowed float() in the enclosure, 1e-200 gave [0, 0] (a false certificate); the set
    is a cone, so the distance scales exactly: checked against the point at scale 1."""
    A = np.array([[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]], dtype=object)
    V = np.array([[Fraction(1), Fraction(1)], [Fraction(0), Fraction(1)]], dtype=object)
    lo1, hi1 = critical_distance(A, V)
    for e in (-300, -200, 200, 300):
        c = Fraction(10) ** e
        lo, hi = critical_distance(A * c, V * c)
        assert 0 < lo <= hi and lo <= float(c) * hi1 * (1 + 1e-9) and hi >= float(c) * lo1 * (1 - 1e-9)
    lo, hi = critical_distance(A * Fraction(10) ** 400, V * Fraction(10) ** 400)  # past float64: [max, inf]
    assert lo == np.finfo(float).max and hi == float("inf")
    lo, hi = critical_distance(A * Fraction(10) ** -400, V * Fraction(10) ** -400)  # below float64: [0, tiny]
    assert lo == 0.0 < hi <= 5e-324


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 62, reason="this platform's long double is a float64")
def test_a_distance_past_float64_is_null_in_json_with_its_reason(tmp_path, capsys):
    x = np.longdouble(10) ** 400
    w = {
        "layers.0.heads.0.A": np.array([[x, 0], [0, x]], dtype=np.longdouble),
        "layers.0.heads.0.V": np.array([[x, x], [0, x]], dtype=np.longdouble),
    }
    g = point_geometry(Network.from_weights(w))
    d = g.to_dict()
    text = json.dumps(d, allow_nan=False)
    assert d["one_layer"]["distance_to_critical"][1] is None
    assert "beyond its range" in d["float_unavailable"]["one_layer.distance_to_critical[1]"]
    assert "beyond float64's range" in str(g) and g.exact and g.critical is False
    np.savez(tmp_path / "w.npz", **w)
    r = run_in_process(capsys, "point", str(tmp_path / "w.npz"), "-t", "2", "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr and _strict(r.stdout)["critical"] is False
    assert text


def test_a_float_rank_the_exact_rank_contradicts_is_no_verdict():
    """A point within float64 resolution of the critical set: its float64 gap says rank 6 with 12.7 orders of
    gap, the exact local rank is 7, proven. The gap verdict is withdrawn (the singular values stay)."""
    A = np.array([[1.0, 1.0], [1.0, 1.0 + 2.0**-52]])
    g = point_geometry(Network.from_weights({"layers.0.heads.0.A": A, "layers.0.heads.0.V": A.copy()}))
    assert g.exact and g.local_rank == 7 and g.critical is False
    assert g.numerical is not None and g.numerical.rank is None and len(g.numerical.singular_values) == 8
    assert "says rank 6, the local rank is 7, proven" in g.numerical.gap and "float64 rank     no verdict" in str(g)
    assert g.to_dict()["numerical"]["rank"] is None


def test_deep_networks_are_measured_not_bounded():
    """Four Gaussian layers keep their float64 spectrum (outputs about 2^210); five do not (2^608: the float64
    gap said rank 0), and the reason says which magnitude leaves float64's range."""
    rng = np.random.default_rng(0)

    def net(depth):
        return Network.from_weights(
            {
                f"layers.{l}.heads.{h}.{n}": rng.standard_normal((2 if n in "QK" else 4, 4))
                for l in range(depth)
                for h in range(2)
                for n in "QKV"
            },
            tokens=3,
        )

    assert jacobian_range(net(4)) is None
    assert "overflows float64" in jacobian_range(net(5))
    small = Network.from_weights(
        {f"layers.{l}.heads.0.{n}": np.full((2, 2), 1e-50) + np.eye(2) * 1e-51 for l in range(2) for n in "QKV"}
    )
    assert "underflows float64" in jacobian_range(small)


def test_cli_point_at_extreme_scales_exits_0_with_valid_json(tmp_path, capsys):
    """``point`` run in this process (main: its exit status and output, no interpreter start-up per call)."""
    from ag_attention._cli import main

    def point(*args):
        status = main(["point", *args])
        out, err = capsys.readouterr()
        return status, out, err

    for x, qkv in ((1e200, False), (1e308, False), (1e-150, True)):
        path = tmp_path / "w.npz"
        np.savez(path, **_one_layer(x, qkv))
        status, out, err = point(str(path), "-t", "2", "--json")
        assert status == 0 and "Traceback" not in err, err
        d = _strict(out)
        assert d["exact"] and d["critical"] is False and "numerical" in d["float_unavailable"]
        status, out, err = point(str(path), "-t", "2")
        assert status == 0 and "float64          unavailable: the Jacobian's spectrum: this scale" in out, err
    deep = tmp_path / "deep.npz"
    np.savez(deep, **{f"layers.{l}.heads.0.{n}": np.array([[1e50, 0], [1e50, 1e50]]) for l in range(2) for n in "QKV"})
    status, out, err = point(str(deep), "-t", "2", "--json")  # LinAlgError ("SVD did not converge") before
    assert status == 0 and _strict(out)["local_rank"] == 10 and "Traceback" not in err
