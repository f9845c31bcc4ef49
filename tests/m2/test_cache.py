"""The result cache (ag_attention._m2.cache): round trips, corrupt entries, a cache that cannot be written."""

import json
import os

import pytest

from ag_attention import Architecture
from ag_attention._algebra.implicitize import implicitize
from ag_attention._m2.cache import ResultCache
from ag_attention._m2.jobs import run_json
from tests.helpers import ok_m2


def test_cache_roundtrip_and_corruption(tmp_path):
    cache = ResultCache(tmp_path)
    key = ResultCache.key("script", "1.21", "pkg")
    assert cache.get(key) is None
    path = cache.put(key, {"result": {"x": 1}, "seconds": 2.0})
    assert cache.get(key) == {"result": {"x": 1}, "seconds": 2.0}
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp")]  # atomic: no leftovers
    # tampered payload: checksum mismatch
    entry = json.loads(path.read_text())
    entry["payload"]["result"]["x"] = 2
    path.write_text(json.dumps(entry))
    assert cache.get(key) is None and not path.exists() and cache.corrupt_entries == 1
    # truncated file
    cache.put(key, {"result": {"x": 1}})
    path.write_text(path.read_text()[:20])
    assert cache.get(key) is None and cache.corrupt_entries == 2
    # bytes that are not UTF-8
    cache.put(key, {"result": {"x": 1}})
    path.write_bytes(b"\xff\xfe{")
    assert cache.get(key) is None and not path.exists() and cache.corrupt_entries == 3
    # an entry stored under another key
    cache.put(key, {"result": {}})
    other = ResultCache.key("other")
    os.makedirs(cache.path(other).parent, exist_ok=True)
    os.replace(cache.path(key), cache.path(other))
    assert cache.get(other) is None


def test_a_directory_in_place_of_an_entry_is_a_corrupt_entry(tmp_path, cache_dir):
    b = ok_m2(tmp_path)
    assert not run_json("result = 1;", schema={"x": int}, backend=b, timeout=10).cached
    (entry,) = cache_dir.rglob("*.json")
    entry.unlink()
    entry.mkdir()
    (entry / "something").write_text("in the way")
    for _ in range(2):  # every rerun works: the directory is removed, the entry rewritten
        job = run_json("result = 1;", schema={"x": int}, backend=b, timeout=10)
        assert job.payload == {"x": 1}
    assert job.cached and entry.is_file()


def test_unwritable_cache_warns_once_and_returns_the_result(tmp_path, monkeypatch):
    import warnings

    from ag_attention._m2 import cache as cache_module

    b = ok_m2(tmp_path)
    monkeypatch.setattr(cache_module, "_warned", False)
    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", "/proc/x")  # cannot be created
    with pytest.warns(cache_module.CacheWriteWarning, match="/proc/x"):
        assert run_json("result = 1;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process: no second warning
        assert run_json("result = 2;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}
    # a read-only directory (root ignores permission bits: the write itself is made to fail too)
    ro = tmp_path / "ro"
    ro.mkdir()
    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(ro))
    monkeypatch.setattr(cache_module, "_warned", False)

    def denied(path, *args, **kwargs):
        raise cache_module.OutputError(f"cannot write {path}: Permission denied", path=str(path), errno=13)

    monkeypatch.setattr(cache_module, "atomic_write", denied)
    with pytest.warns(cache_module.CacheWriteWarning, match="Permission denied"):
        assert run_json("result = 3;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}
    monkeypatch.undo()
    if os.geteuid() != 0:
        ro.chmod(0o555)
        monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(ro))
        assert run_json("result = 4;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}
    # a file where the cache directory should be
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(tmp_path / "file"))
    monkeypatch.setattr(cache_module, "_warned", False)
    with pytest.warns(cache_module.CacheWriteWarning, match="Not a directory"):
        assert run_json("result = 5;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}


@pytest.mark.m2
def test_cache_hit_and_corrupt_entry_recovery(m2_local, cache_dir):
    arch = Architecture((2, 1), (1,), tokens=2)
    first = implicitize(arch, backend=m2_local)
    second = implicitize(arch, backend=m2_local)
    assert not first.cached and second.cached and second.generator_strings == first.generator_strings
    entries = list(cache_dir.rglob("*.json"))
    assert len(entries) == 1
    entries[0].write_text('{"format": 1, "key": "x", "payload": {"result": {"generators": []}}}')
    third = implicitize(arch, backend=m2_local)
    assert not third.cached and third.generator_strings == first.generator_strings
    assert implicitize(arch, backend=m2_local).cached  # rewritten, valid again
    assert not implicitize(arch, backend=m2_local, cache=False).cached


def _entry(cache_dir):
    (entry,) = cache_dir.rglob("*.json")
    return entry


def _forge(entry, **result):
    """Edit an entry's result and recompute its checksum: the form stays right, the numbers do not."""
    import hashlib

    data = json.loads(entry.read_text())
    data["payload"]["result"].update(result)
    canonical = json.dumps(data["payload"], sort_keys=True, separators=(",", ":"))
    data["sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    entry.write_text(json.dumps(data))


@pytest.mark.m2
def test_a_forged_entry_with_a_right_checksum_is_recomputed(m2_local, cache_dir):
    """S2: an edited entry with its sha256 recomputed printed 'dimension 100, codimension -94, degree -5 (cached)'."""
    arch = Architecture((2, 1), (1,), tokens=2)
    first = implicitize(arch, field="ZZ/101", backend=m2_local)
    _forge(_entry(cache_dir), dimension=100, codimension=-94, degree=-5)
    again = implicitize(arch, field="ZZ/101", backend=m2_local)
    assert not again.cached and (again.dimension, again.codimension, again.degree) == (4, 2, 3) == (
        first.dimension,
        first.codimension,
        first.degree,
    )
    assert implicitize(arch, field="ZZ/101", backend=m2_local).cached  # rewritten, valid again
    # a plausible forgery: only the degree, 5, where three quadrics of codimension 2 allow at most 2 x 2 = 4
    _forge(_entry(cache_dir), degree=5)
    third = implicitize(arch, field="ZZ/101", backend=m2_local)
    assert not third.cached and third.degree == 3


def test_a_forged_entry_is_recomputed_whatever_the_job(tmp_path, cache_dir):
    payload = '{"dimension": 4, "codimension": 2, "degree": 3, "variables": ["a", "b", "c", "d", "e", "f"]}'
    b = ok_m2(tmp_path, payload)
    schema = {"dimension": int, "codimension": int, "degree": int, "variables": [str]}
    assert not run_json("result = 1;", schema=schema, backend=b, timeout=10).cached
    _forge(_entry(cache_dir), degree=0)
    job = run_json("result = 1;", schema=schema, backend=b, timeout=10)
    assert not job.cached and job.payload["degree"] == 3
    # a checked read for callers that use the cache directly (the msolve counts)
    cache = ResultCache(cache_dir)
    key = ResultCache.key("count")
    cache.put(key, {"count": -4, "seconds": 0.5})
    assert cache.get(key, schema={"count": int, "seconds": float}) is None and not cache.path(key).exists()
    cache.put(key, {"count": 4, "seconds": 0.5})
    assert cache.get(key, schema={"count": int, "seconds": float}) == {"count": 4, "seconds": 0.5}


@pytest.fixture
def fresh_warnings(monkeypatch):
    from ag_attention._m2 import cache as cache_module

    monkeypatch.setattr(cache_module, "_unsafe_warned", set())
    return cache_module.UnsafeCacheWarning


def _stored(tmp_path):
    cache = ResultCache(tmp_path / "cache")
    key = ResultCache.key("job")
    path = cache.put(key, {"result": {"x": 1}, "seconds": 1.0})
    assert path is not None and cache.get(key) == {"result": {"x": 1}, "seconds": 1.0}
    return cache, key, path


def test_entries_are_private_files_in_private_directories(tmp_path):
    import stat

    old = os.umask(0o002)  # a umask that leaves files group-writable must not make the cache refuse itself
    try:
        cache, key, path = _stored(tmp_path)
    finally:
        os.umask(old)
    for p in (path, path.parent, cache.directory):
        assert stat.S_IMODE(p.stat().st_mode) & 0o022 == 0, p
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's needs root")
def test_an_entry_or_a_directory_of_another_user_is_not_used(tmp_path, fresh_warnings):
    cache, key, path = _stored(tmp_path)
    os.chown(path, 4242, 4242)
    with pytest.warns(fresh_warnings, match=r"owned by uid 4242, not by this user .*ignored"):
        assert cache.get(key) is None
    assert cache.put(key, {"result": {"x": 2}, "seconds": 1.0}) == path  # replaced by this user's
    assert path.stat().st_uid == os.geteuid() and cache.get(key) == {"result": {"x": 2}, "seconds": 1.0}
    os.chown(path.parent, 4242, 4242)
    with pytest.warns(fresh_warnings, match=r"not used, since .* is owned by uid 4242"):
        assert cache.get(key) is None
    assert cache.put(key, {"result": {"x": 3}, "seconds": 1.0}) is None


def test_an_entry_others_can_write_is_not_served(tmp_path, fresh_warnings):
    cache, key, path = _stored(tmp_path)
    path.chmod(0o666)
    with pytest.warns(fresh_warnings, match=r"writable by others \(mode 0666\).*ignored"):
        assert cache.get(key) is None
    assert path.exists()  # ignored, not removed: replaced when the result is computed again
    cache.put(key, {"result": {"x": 2}, "seconds": 1.0})
    assert cache.get(key) == {"result": {"x": 2}, "seconds": 1.0}


@pytest.mark.parametrize(
    "which, mode, used",
    [
        ("cache", 0o777, False),
        ("cache", 0o775, False),
        ("cache", 0o1777, True),  # sticky: like /tmp
        ("subdirectory", 0o777, False),
        ("ancestor", 0o777, False),
        ("ancestor", 0o1777, True),
    ],
)
def test_a_directory_others_can_write_is_refused_unless_sticky(tmp_path, fresh_warnings, which, mode, used):
    import warnings

    cache, key, path = _stored(tmp_path / "ancestor")
    directory = {"cache": cache.directory, "subdirectory": path.parent, "ancestor": tmp_path / "ancestor"}[which]
    directory.chmod(mode)
    if used:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert cache.get(key) == {"result": {"x": 1}, "seconds": 1.0}
            assert cache.put(key, {"result": {"x": 2}, "seconds": 1.0}) == path
        return
    with pytest.warns(
        fresh_warnings,
        match=rf"{directory} is writable by others \(mode {mode:04o}, no sticky bit; "
        rf"chmod go-w {directory}",
    ):
        assert cache.get(key) is None
    assert cache.put(key, {"result": {"x": 2}, "seconds": 1.0}) is None
    assert json.loads(path.read_text())["payload"]["result"] == {"x": 1}  # not written either


def test_a_world_writable_cache_directory_does_not_cost_the_result(tmp_path, monkeypatch, fresh_warnings):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(shared))
    b = ok_m2(tmp_path)
    with pytest.warns(fresh_warnings, match="not used"):
        assert run_json("result = 1;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}
    assert not run_json("result = 1;", schema={"x": int}, backend=b, timeout=10).cached
    assert list(shared.iterdir()) == []


def test_planted_links_are_never_followed(tmp_path, fresh_warnings):
    cache, key, path = _stored(tmp_path)
    # a link at the entry's place, to a valid entry of this user's elsewhere: not served, replaced on write
    elsewhere = tmp_path / "elsewhere.json"
    os.replace(path, elsewhere)
    path.symlink_to(elsewhere)
    with pytest.warns(fresh_warnings, match="symbolic link"):
        assert cache.get(key) is None
    before = elsewhere.read_text()
    assert cache.put(key, {"result": {"x": 2}, "seconds": 1.0}) == path
    assert not path.is_symlink() and elsewhere.read_text() == before
    # a link in place of the entry's directory: the cache does not write through it
    target = tmp_path / "target"
    target.mkdir()
    other = ResultCache.key("another job")
    cache.path(other).parent.symlink_to(target, target_is_directory=True)
    with pytest.warns(fresh_warnings, match="symbolic link"):
        assert cache.put(other, {"result": {"x": 3}, "seconds": 1.0}) is None
    assert list(target.iterdir()) == []
