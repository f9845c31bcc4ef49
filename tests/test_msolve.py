"""msolve jobs without msolve: a fake binary for the progress bar; the split module's names.

The real msolve (counts, timeouts, memory) is tested in test_degree.py.
"""

import sys

from ag_attention import _progress as progress
from ag_attention._algebra import msolve, msolve_text

from tests.helpers import Terminal, fake_msolve


def test_the_wait_on_msolve_shows_its_label_and_backend(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, "sleep 0.3; echo '[0]:'"))
    monkeypatch.setattr(progress, "DELAY", 0.0)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)  # in the test body: pytest's capture resets it after set-up
    out = msolve.run_msolve(msolve.format_input(["x"], 101, ["x^2-1"]), label="slow count", backend="local")
    assert out.output.strip() == "[0]:" and "msolve slow count (local)" in err.getvalue()
    with progress.quiet():
        err.truncate(0)
        err.seek(0)
        msolve.run_msolve(msolve.format_input(["x"], 101, ["x^2-1"]), label="slow count", backend="local")
    assert err.getvalue() == ""
    assert capsys.readouterr().out == ""


def test_msolve_keeps_the_names_of_its_text_module():
    for name in msolve_text.__all__:
        assert getattr(msolve, name) is getattr(msolve_text, name)
    assert msolve.format_input(["x", "y"], 101, ["x*y*x"]) == "x,y\n101\n1*x^2*y\n"
