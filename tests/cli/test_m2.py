"""``m2 doctor`` (ag_attention._cli.m2): its summary or JSON, and exit 3 when no Macaulay2 backend works."""

import json

import pytest

from ag_attention._m2 import doctor
from tests.cli import run_main


class _Report:
    """What ``doctor()`` returns, as the command reads it."""

    def __init__(self, ok):
        self.ok = ok

    def to_dict(self):
        return {"ok": self.ok, "backends": [], "help": None if self.ok else "install Macaulay2"}

    def __str__(self):
        return f"Macaulay2 backends: {'one works' if self.ok else 'none works'}"


@pytest.mark.parametrize("ok, status", [(True, 0), (False, 3)])
def test_m2_doctor_prints_the_report_and_exits_3_without_a_working_backend(ok, status, monkeypatch, capsys):
    monkeypatch.setattr(doctor, "doctor", lambda: _Report(ok))
    assert run_main(["m2", "doctor"], capsys) == (status, f"{_Report(ok)}\n", "")
    code, out, _ = run_main(["m2", "doctor", "--json"], capsys)
    d = json.loads(out)
    assert code == status and d["ok"] is ok and d["provenance"]["version"]
