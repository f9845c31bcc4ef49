"""The text of a point's report (ag_attention._point.text): its sections in order, every line printable."""

from __future__ import annotations

from ag_attention import Network, point_geometry
from ag_attention._point.text import point_text, printable


def test_every_line_is_printable():
    assert printable("layers.0\n\x1bq") == "layers.0\\n\\x1bq" and printable("plain") == "plain"


def test_the_sections_come_in_order():
    net = Network.from_weights(
        {"layers.0.heads.0.A": [[1, 0], [0, 0]], "layers.0.heads.0.V": [[1, 0], [0, 1]]}, source="a\nb"
    )
    g = point_geometry(net, numerical=True)
    text = point_text(g)
    assert text == str(g) and "a\\nb" in text and text.count("\n") == len(text.splitlines()) - 1
    keys = [
        "Geometry at the point",
        "local rank",
        "symmetry bound",
        "generic dim",
        "critical",
        "layer 1",
        "stratum",
        "float64 rank",
        "seed 0",
    ]
    found = [next(i for i, line in enumerate(text.splitlines()) if line.lstrip().startswith(k)) for k in keys]
    assert found == sorted(found)
