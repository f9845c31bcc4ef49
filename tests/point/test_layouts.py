"""A layer's projections as the package's heads (ag_attention._point.layouts)."""

from fractions import Fraction

import numpy as np

from ag_attention._point.layouts import layer_heads
from tests.helpers import generator

E, H = 4, 2
DH = E // H


def _exact(value, name):
    return np.vectorize(lambda x: Fraction(float(x)), otypes=[object])(np.asarray(value))


def test_a_layer_s_heads_are_the_rows_of_its_projections_however_stacked():
    """Head i: Q = W_q rows of head i, K likewise, V = W_O,i W_v,i; the same from W_q, W_k, W_v stacked, and
    from a Conv1D's transposed stack (x W + b)."""
    rng = generator(1)
    W = {r: rng.standard_normal((E, E)) for r in "qkvo"}
    stacked = np.vstack([W["q"], W["k"], W["v"]])
    found = []
    for roles in ({"q": W["q"], "k": W["k"], "v": W["v"], "o": W["o"]}, {"qkv": stacked, "o": W["o"]},
                  {"qkvT": stacked.T, "oT": W["o"].T}):
        out, notes = {}, []
        sources = {("a.", role): f"a.{role}" for role in roles}
        assert layer_heads(0, "a.", roles, sources, _exact, H, out, notes) == (DH, H)
        found.append(out)
    for i in range(H):
        s = slice(i * DH, (i + 1) * DH)
        assert found[0][f"layers.0.heads.{i}.Q"].tolist() == _exact(W["q"][s], "").tolist()
        assert found[0][f"layers.0.heads.{i}.V"].tolist() == (_exact(W["o"][:, s], "").dot(_exact(W["v"][s], ""))).tolist()
    assert all(f.keys() == found[0].keys() and all(f[k].tolist() == found[0][k].tolist() for k in f) for f in found)
