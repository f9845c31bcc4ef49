"""The job runner's parts that need no Macaulay2: the wait's progress bar, job directories, the re-exported names.

Timeouts, process groups, signals and memory limits are tested in
test_m2_unit.py (fake M2) and test_m2.py (the real one).
"""

import stat
import sys

import pytest

from ag_attention import _progress as progress
from ag_attention._m2 import jobdir, runner

from tests.helpers import Terminal, fake_m2


@pytest.fixture
def terminal(monkeypatch):
    """Call it in the test body: pytest's capture resets ``sys.stderr`` between set-up and the call."""
    monkeypatch.setattr(progress, "DELAY", 0.0)

    def install():
        err = Terminal()
        monkeypatch.setattr(sys, "stderr", err)
        return err

    return install


def test_the_wait_on_a_job_shows_its_label_and_backend(tmp_path, terminal, capsys):
    b = fake_m2(tmp_path, "sleep 0.3; echo done")
    err = terminal()
    out = b.run("x", timeout=30, label="slow job")
    assert out.stdout.strip() == "done"
    assert "slow job (local)" in err.getvalue()
    assert capsys.readouterr().out == ""  # the bar never goes to standard output


def test_no_bar_under_quiet(tmp_path, terminal):
    b = fake_m2(tmp_path, "sleep 0.3")
    err = terminal()
    with progress.quiet():
        b.run("x", timeout=30, label="slow job")
    assert err.getvalue() == ""


def test_a_job_directory_holds_the_files_and_its_owner_and_is_removed(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with jobdir.job_directory({"job.m2": "1+1\n"}, with_package=True) as d:
        assert d.parent == tmp_path and d.name.startswith(jobdir.JOBDIR_PREFIX)
        assert sorted(p.name for p in d.iterdir()) == sorted(["job.m2", jobdir.OWNER_FILE, jobdir.PACKAGE_NAME])
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in d.iterdir())
        assert jobdir.clean_stale_job_dirs(tmp_path) == []  # its owner, this process, is alive
    assert not d.exists()


def test_runner_keeps_the_names_others_import():
    for name in ["M2Output", "M2MemoryError", "Backend", "LocalBackend", "ContainerBackend", "get_backend",
                 "available_backends", "package_file", "parse_memory", "clean_stale_job_dirs", "check_timeout",
                 "DEFAULT_IMAGE", "DEFAULT_MEMORY", "MEMORY_ENV", "VERSION_TIMEOUT", "HOW_TO_GET_M2", "BACKENDS",
                 "OWNER_FILE", "process_start", "boot_id", "default_backends"]:
        assert hasattr(runner, name), name
    assert set(runner.__all__) <= set(dir(runner))
