"""Job directories (ag_attention._m2.jobdir): their files and owner, stale ones removed, the package file."""

import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from ag_attention._m2 import jobdir, runner
from ag_attention._m2.runner import package_file
from tests.helpers import fake_m2


def test_a_job_directory_holds_the_files_and_its_owner_and_is_removed(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with jobdir.job_directory({"job.m2": "1+1\n"}, with_package=True) as d:
        assert d.parent == tmp_path and d.name.startswith(jobdir.JOBDIR_PREFIX)
        assert sorted(p.name for p in d.iterdir()) == sorted(["job.m2", jobdir.OWNER_FILE, jobdir.PACKAGE_NAME])
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in d.iterdir())
        assert jobdir.clean_stale_job_dirs(tmp_path) == []  # its owner, this process, is alive
    assert not d.exists()


_KILLED = """
import sys
import tempfile
from ag_attention._m2 import runner
runner.LocalBackend(sys.argv[1], sessions=False).run("x", timeout=600, label="long job")
"""


def test_job_directory_of_a_killed_python_is_removed_by_the_next_run(tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    b = fake_m2(tmp_path, "exec sleep 1000")
    child = subprocess.Popen([sys.executable, "-c", _KILLED, b.executable], env={**os.environ, "TMPDIR": str(tmp)})
    deadline = time.monotonic() + 60
    while not list(tmp.glob("ag-attention-m2-*/job.m2")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (left,) = [p.parent for p in tmp.glob("ag-attention-m2-*/job.m2")]
    child.kill()
    assert child.wait(timeout=30) == -signal.SIGKILL
    assert left.is_dir()  # nothing in the killed Python could remove it
    # a live owner's directory (this process) and one of a reused PID (same PID, other start time)
    live, reused = tmp / "ag-attention-m2-live", tmp / "ag-attention-m2-reused"
    for d, start in ((live, runner.process_start(os.getpid())), (reused, "1")):
        d.mkdir()
        (d / runner.OWNER_FILE).write_text(json.dumps({"pid": os.getpid(), "start": start, "boot": runner.boot_id()}))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    fake_m2(tmp_path, "true").run("x", timeout=30)
    assert not left.exists() and not reused.exists() and live.is_dir()
    assert sorted(p.name for p in tmp.iterdir()) == ["ag-attention-m2-live"]


@pytest.mark.m2
def test_package_header_and_install_instructions():
    text = package_file().read_text()
    assert "github.com/ag-attention" not in text
    assert 'installPackage("LightningAttention", FileName => "/path/to/LightningAttention.m2")' in text
    assert 'needsPackage("LightningAttention", FileName => "/path/to/LightningAttention.m2")' in text
