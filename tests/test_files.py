"""Safe writes: atomic, never through a planted link, a full disk named (ag_attention/_files.py)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ag_attention import OutputError
from ag_attention._files import atomic_open, atomic_write, open_nofollow, reserve

FULL = Path("/dev/full")


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    atomic_write(target, "new\n")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_link_planted_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.parquet").symlink_to(elsewhere)
    atomic_write(out / "results.parquet", b"rows")
    assert elsewhere.read_text() == "precious"
    assert not (out / "results.parquet").is_symlink()
    assert (out / "results.parquet").read_bytes() == b"rows"


def test_links_planted_at_every_old_temporary_name_are_not_followed(tmp_path: Path) -> None:
    """The temporary names of before (``NAME.tmp``, ``.NAME.PID.tmp``) may hold links: never written through."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    for name in ("sweep.json.tmp", f".sweep.json.{os.getpid()}.tmp", "results.parquet.tmp"):
        (out / name).symlink_to(elsewhere)
    atomic_write(out / "sweep.json", "{}")
    assert elsewhere.read_text() == "precious"
    assert (out / "sweep.json").read_text() == "{}"


def test_an_error_inside_the_block_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_open(target, "w") as fh:
            fh.write("half")
            raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_a_directory_in_the_way_is_an_output_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "report.md").mkdir()
    with pytest.raises(OutputError, match="report.md"):
        atomic_write(tmp_path / "report.md", "text")
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_open_nofollow_refuses_a_link(tmp_path: Path) -> None:
    (tmp_path / "journal").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OutputError, match="symbolic link") as info:
        open_nofollow(tmp_path / "journal", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    assert info.value.errno == errno.ELOOP
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full here")
def test_a_full_device_is_an_output_error_naming_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC during the write: the temporary is removed, the message says 'No space left'."""
    import ag_attention._files as files

    real_fsync = os.fsync

    def full_fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full_fsync)
    with pytest.raises(OutputError, match="No space left on device") as info:
        atomic_write(tmp_path / "report.json", "x" * 100)
    monkeypatch.setattr(files.os, "fsync", real_fsync)
    assert info.value.errno == errno.ENOSPC
    assert str(tmp_path / "report.json") in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_reserve_passes_where_there_is_room_and_leaves_nothing(tmp_path: Path) -> None:
    reserve(tmp_path, 1 << 20)
    assert list(tmp_path.iterdir()) == []


def test_reserve_fails_on_a_file_system_without_room(tmp_path: Path) -> None:
    """A tmpfs of 64 KiB: an empty probe file fits, a reservation of 1 MiB does not."""
    import shutil
    import subprocess

    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (mnt / "empty").write_text("")  # the old up-front test: passes
        with pytest.raises(OutputError, match="No space left on device"):
            reserve(mnt, 1 << 20)
        assert sorted(p.name for p in mnt.iterdir()) == ["empty"]
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_a_missing_directory_is_an_output_error_naming_the_path(tmp_path: Path) -> None:
    """The temporary file could not be created (no such directory): a raw FileNotFoundError came out."""
    target = tmp_path / "nodir" / "x.png"
    with pytest.raises(OutputError, match=r"cannot write .*nodir/x\.png: No such file or directory") as err:
        atomic_write(target, b"x")
    assert err.value.errno == errno.ENOENT and err.value.path == str(target)
