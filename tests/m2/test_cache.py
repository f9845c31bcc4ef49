"""The result cache (ag_attention._m2.cache): round trips, corrupt entries, a cache that cannot be written."""

import json
import os

import pytest

from ag_attention import Architecture
from ag_attention._m2.cache import ResultCache
from ag_attention._m2.implicitize import implicitize
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

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(ro))

    monkeypatch.setattr(cache_module.tempfile, "mkstemp", denied)
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
