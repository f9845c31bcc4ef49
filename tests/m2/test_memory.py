"""The memory limit of a Macaulay2 job (ag_attention._m2.memory): sizes, where the setting comes from."""

import pytest

from ag_attention._errors import InvalidArgumentError
from ag_attention._m2 import runner


def test_memory_settings(monkeypatch, tmp_path):
    assert runner.parse_memory("4g") == 4 * 2**30 and runner.parse_memory("512MiB") == 512 * 2**20
    assert runner.parse_memory("1.5G") == 3 * 2**29 and runner.parse_memory(2**30) == 2**30
    assert runner.parse_memory("unlimited") is None and runner.parse_memory("none") is None
    for bad in ["4x", "", "-1g", "4", "100m", True, "lots"]:
        with pytest.raises(InvalidArgumentError, match="memory"):
            runner.parse_memory(bad)
    monkeypatch.delenv(runner.MEMORY_ENV, raising=False)
    assert runner.LocalBackend("/bin/true").memory_limit() == (4 * 2**30, "the default")
    monkeypatch.setenv(runner.MEMORY_ENV, "8g")
    assert runner.LocalBackend("/bin/true").memory_limit() == (8 * 2**30, runner.MEMORY_ENV)
    assert runner.LocalBackend("/bin/true", memory="1g").memory_limit() == (2**30, "memory=")
    monkeypatch.setenv(runner.MEMORY_ENV, "8 gigs")
    with pytest.raises(InvalidArgumentError, match=runner.MEMORY_ENV):
        runner.LocalBackend("/bin/true").memory_limit()
    with pytest.raises(InvalidArgumentError, match="memory"):
        runner.LocalBackend("/bin/true", memory="4")  # 4 bytes: refused, not a job that cannot start
    monkeypatch.setenv(runner.MEMORY_ENV, "2g")
    # an engine that prints the command it is given: the container's command line, through a job
    engine = tmp_path / "engine"
    engine.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    engine.chmod(0o755)
    cmd = runner.ContainerBackend(engine=str(engine)).run("x", timeout=10).stdout.splitlines()
    assert cmd[cmd.index("--memory") + 1] == "2048m"
