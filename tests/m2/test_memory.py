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


def test_sizes_as_the_user_writes_them():
    from ag_attention._m2.memory import size

    assert [size(4 * 2**30), size(300 * 2**20), size(3 * 2**29), size(2048), size(100)] == [
        "4 GiB",
        "300 MiB",
        "1.5 GiB",
        "2 KiB",
        "100 bytes",
    ]


def test_the_setting_and_where_it_comes_from(monkeypatch):
    from ag_attention._m2.memory import DEFAULT_MEMORY, MEMORY_ENV, MIN_MEMORY, memory_setting, parse_memory

    monkeypatch.delenv(MEMORY_ENV, raising=False)
    assert memory_setting(None) == (parse_memory(DEFAULT_MEMORY), "the default")
    assert memory_setting("unlimited") == (None, "memory=") and memory_setting(2**30) == (2**30, "memory=")
    monkeypatch.setenv(MEMORY_ENV, " off ")
    assert memory_setting(None) == (None, MEMORY_ENV)
    assert parse_memory(MIN_MEMORY) == MIN_MEMORY
    with pytest.raises(InvalidArgumentError, match=r"^memory=268435455: below 256 MiB; Macaulay2 1.21 needs about"):
        parse_memory(MIN_MEMORY - 1)
    with pytest.raises(InvalidArgumentError, match=r"^limit=True: must be a size such as 4g or 512m, or unlimited"):
        parse_memory(True, "limit")


def test_how_to_raise_the_limit():
    from ag_attention._m2.memory import how_to_raise

    assert how_to_raise("local", 300 * 2**20) == (
        "raise it with AG_ATTENTION_M2_MEMORY=600m (or LocalBackend(memory=...); AG_ATTENTION_M2_MEMORY=unlimited "
        "removes it)"
    )
    assert how_to_raise("container", 4 * 2**30).startswith(
        "raise it with AG_ATTENTION_M2_MEMORY=8g (or ContainerBackend("
    )
    assert "AG_ATTENTION_M2_MEMORY=8g" in how_to_raise("local", None)


def test_a_limit_beyond_what_the_kernel_takes_is_refused_by_name(monkeypatch):
    """RLIMIT_AS takes at most 2^63 - 1 bytes: a larger setting is an error naming it, never a failed fork."""
    from ag_attention._m2.memory import MAX_MEMORY, parse_memory

    assert MAX_MEMORY == 2**63 - 1
    assert parse_memory(str(MAX_MEMORY)) == MAX_MEMORY  # exact: bytes without a unit are not rounded
    assert parse_memory(MAX_MEMORY) == MAX_MEMORY
    for big in ["99999999999999999999999999999g", "8388608t", str(2**63), 2**64]:
        with pytest.raises(InvalidArgumentError, match=r"above the largest address-space limit .*unlimited"):
            parse_memory(big)
    monkeypatch.setenv(runner.MEMORY_ENV, "99999999999999999999999999999g")
    with pytest.raises(
        InvalidArgumentError, match=r"^AG_ATTENTION_M2_MEMORY='99999999999999999999999999999g': above the largest"
    ):
        runner.LocalBackend("/bin/true").run("x", timeout=10)


def test_a_huge_memory_setting_is_exit_2_from_the_cli(monkeypatch):
    from tests.helpers import run_cli

    monkeypatch.setenv(runner.MEMORY_ENV, "99999999999999999999999999999g")
    monkeypatch.setenv("AG_ATTENTION_NO_CACHE", "1")
    r = run_cli("implicitize", "--widths", "2,1", "--ranks", "1", "--field", "ZZ/101")
    assert r.returncode == 2, r.stderr
    assert "AG_ATTENTION_M2_MEMORY='99999999999999999999999999999g'" in r.stderr and "Traceback" not in r.stderr


def test_a_container_limit_beyond_what_the_engines_take_is_refused_by_name(tmp_path):
    engine = tmp_path / "engine"
    engine.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    engine.chmod(0o755)
    ok = runner.ContainerBackend(engine=str(engine), memory=(2**42 - 1) * 2**20)
    cmd = ok.run("x", timeout=10).stdout.splitlines()
    assert cmd[cmd.index("--memory") + 1] == f"{2**42 - 1}m"
    too_big = runner.ContainerBackend(engine=str(engine), memory=2**62)
    with pytest.raises(InvalidArgumentError, match=r"^memory=4611686018427387904: above the largest --memory"):
        too_big.run("x", timeout=10)
