"""A monodromy's state saved to a file and resumed from it; a file of another problem or format is refused."""

import json

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._landscape.metrics import metric
from ag_attention._landscape.square import square_system
from ag_attention._numeric.executors import LocalExecutor
from ag_attention._numeric.homotopy import CAREFUL
from ag_attention._numeric.monodromy import LOOP_OPTIONS, TRACE_PENCILS, TRACE_TOLERANCE, Monodromy
from ag_attention._numeric.monodromy_state import FORMAT, read_state


def test_a_saved_state_resumes_where_it_stopped(tmp_path):
    arch = Architecture.single_layer(2, 2, 2, tokens=2)
    G, _ = metric("generic", 2, 2, 2, seed=0)
    S = square_system(arch, G)
    z0, p0, c0 = S.seed(np.random.default_rng(0))
    path = tmp_path / "state.npz"
    fp = S.fingerprint(0)
    first = Monodromy(S, z0, p0, seed=0, chart0=c0, fingerprint=fp)
    ex = LocalExecutor(S, LOOP_OPTIONS, CAREFUL)
    part = first.run(ex, max_solutions=100, save=path)
    assert part.stop == "max_solutions" and 100 <= part.count < 284 and path.exists() and part.checkpoint == str(path)
    again = Monodromy.resume(S, path, fingerprint=fp)
    assert len(again.found) == part.count and again.paths == part.paths and again.resumed
    assert np.allclose(again.found.array(), first.found.array()) and len(again.queue) == len(first.queue)
    done = again.run(LocalExecutor(S, LOOP_OPTIONS, CAREFUL), save=path)
    assert (done.count, done.stop) == (284, "trace test") and done.paths > part.paths and done.resumed
    # the file of the finished run holds all 284, and resuming it stops at once (its trace test passed); another
    # problem's file is refused, as is a file that is no state
    finished = Monodromy.resume(S, path, fingerprint=fp)
    assert len(finished.found) == 284
    again = finished.run(LocalExecutor(S, LOOP_OPTIONS, CAREFUL))
    assert (again.count, again.stop, again.paths) == (284, "trace test", done.paths)
    with pytest.raises(InvalidArgumentError, match="another problem"):
        Monodromy.resume(S, path, fingerprint=S.fingerprint(1))
    (tmp_path / "junk.npz").write_bytes(b"not a state")
    with pytest.raises(InvalidArgumentError, match="not a saved monodromy state"):
        Monodromy.resume(S, tmp_path / "junk.npz", fingerprint=fp)
    with pytest.raises(InvalidArgumentError, match="no such file"):
        Monodromy.resume(S, tmp_path / "none.npz", fingerprint=fp)
    # a link planted at the state's name is replaced, never written through
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    Monodromy(S, z0, p0, seed=0, chart0=c0, fingerprint=fp).run(
        LocalExecutor(S, LOOP_OPTIONS, CAREFUL), max_solutions=5, save=link
    )
    assert target.read_text() == "keep" and not link.is_symlink()


def test_a_file_of_another_format_is_refused(tmp_path):
    S = square_system(Architecture.single_layer(2, 1, None, tokens=2), metric("generic", 2, 1, 2, seed=0)[0])
    path = tmp_path / "old.npz"
    np.savez_compressed(path, meta=np.array(json.dumps({"format": "ag-attention monodromy state 0"})))
    with pytest.raises(InvalidArgumentError, match=f"not a saved monodromy state of this format \\({FORMAT!r}\\)"):
        read_state(Monodromy, S, path)


def _small_state(tmp_path):
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    S = square_system(arch, metric("generic", 2, 1, 2, seed=0)[0])
    z0, p0, c0 = S.seed(np.random.default_rng(0))
    fp = S.fingerprint(0)
    path = tmp_path / "state.npz"
    Monodromy(S, z0, p0, seed=0, chart0=c0, fingerprint=fp).run(
        LocalExecutor(S, LOOP_OPTIONS, CAREFUL), max_solutions=5, save=path
    )
    return S, fp, path


def _rewritten(path, target, **change):
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    for k, v in change.items():
        if v is None:
            del arrays[k]
        else:
            arrays[k] = v
    np.savez_compressed(target, **arrays)
    return target


def test_damaged_and_foreign_state_files_are_refused_before_anything_is_loaded(tmp_path):
    import os
    import struct

    S, fp, path = _small_state(tmp_path)
    raw = path.read_bytes()
    meta = json.loads(str(np.load(path)["meta"]))
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(raw[: len(raw) // 2])
    flipped = tmp_path / "flipped.npz"
    flipped.write_bytes(raw[:40] + bytes(b ^ 0xFF for b in raw[40:200]) + raw[200:])
    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)
    foreign = tmp_path / "data.npz"
    np.savez(foreign, inputs=np.zeros((2, 2, 2)), targets=np.zeros((2, 2, 1)))
    # declared sizes of 4 GiB per array in the central directory: refused from the directory, nothing inflated
    huge = bytearray(raw)
    at = huge.find(b"PK\x01\x02")
    while at >= 0:
        huge[at + 24 : at + 28] = struct.pack("<I", 0xFFFFFFF0)
        at = huge.find(b"PK\x01\x02", at + 4)
    huge_path = tmp_path / "huge.npz"
    huge_path.write_bytes(bytes(huge))
    cases = {
        truncated: "damaged or not a .npz",
        flipped: "not a saved monodromy state",
        fifo: "not a regular file",
        foreign: "its arrays are",
        huge_path: "declare|not a saved monodromy state",
        _rewritten(path, tmp_path / "nopoints.npz", points=None): "no points",
        _rewritten(path, tmp_path / "strings.npz", points=np.array(["a", "b"])): "wrong or missing: points",
        _rewritten(
            path, tmp_path / "types.npz", meta=np.array(json.dumps({**meta, "paths": "many", "rng": [1]}))
        ): "wrong or missing: paths, rng",
        _rewritten(path, tmp_path / "nometa.npz", meta=np.array(json.dumps({k: meta[k] for k in ("format",)}))): (
            "wrong or missing: fingerprint"
        ),
    }
    for bad, message in cases.items():
        with pytest.raises(InvalidArgumentError, match=message):
            Monodromy.resume(S, bad, fingerprint=fp)
    assert len(Monodromy.resume(S, path, fingerprint=fp).found) >= 5  # the undamaged file still reads


def test_save_and_resume_are_checked_before_the_work():
    from ag_attention import Architecture as A
    from ag_attention import critical_points
    from ag_attention._errors import OutputError

    arch = A.single_layer(2, 1, 2, tokens=2)
    X, Y = [[[1, 0], [0, 1]]], [[[1], [0]]]
    with pytest.raises(OutputError, match="a directory"):
        critical_points(arch, X, Y, method="homotopy", save="/tmp")
    with pytest.raises(OutputError, match="cannot write"):
        critical_points(arch, X, Y, method="homotopy", save="/nonexistent-dir/s.npz")
    with pytest.raises(InvalidArgumentError, match="no such file"):
        critical_points(arch, X, Y, method="homotopy", resume="/nonexistent-dir/s.npz")


def test_a_failed_save_loses_no_result(tmp_path, monkeypatch):
    """The disk fills up under a run: the saves fail, the work goes on and its result is returned, the failure said in
    it (and the next good save clears it)."""
    import ag_attention._numeric.monodromy as state_module
    from ag_attention._errors import OutputError

    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    G, _ = metric("generic", 2, 1, 2, seed=0)
    S = square_system(arch, G)
    z0, p0, c0 = S.seed(np.random.default_rng(0))
    original = state_module.write_state

    def full_disk(state, path, queued):
        raise OutputError(f"cannot write {path}: No space left on device")

    monkeypatch.setattr(state_module, "write_state", full_disk)
    run = Monodromy(S, z0, p0, seed=0, chart0=c0, fingerprint=S.fingerprint(0))
    got = run.run(LocalExecutor(S, LOOP_OPTIONS, CAREFUL), save=tmp_path / "s.npz", save_every=0.0)
    assert (got.count, got.stop) == (14, "trace test") and "No space left" in got.to_dict()["save_error"]
    monkeypatch.setattr(state_module, "write_state", original)
    again = run.run(LocalExecutor(S, LOOP_OPTIONS, CAREFUL), save=tmp_path / "s.npz")
    assert again.save_error is None and (tmp_path / "s.npz").is_file()


def test_a_state_that_passed_the_trace_test_on_one_pencil_is_tested_again(tmp_path):
    """A file of the rule of one pencil (no trace_pencils in it; measured at (4,1,4): one pencil passed at 6.2e-9,
    two more gave 5.8e-8 and 6.8e-8) is not taken as decided: its resumed run tests the trace on TRACE_PENCILS
    pencils before it stops."""
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    G, _ = metric("generic", 2, 1, 2, seed=0)
    S = square_system(arch, G)
    z0, p0, c0 = S.seed(np.random.default_rng(0))
    fp, path = S.fingerprint(0), tmp_path / "s.npz"
    run = Monodromy(S, z0, p0, seed=0, chart0=c0, fingerprint=fp)
    done = run.run(LocalExecutor(S, LOOP_OPTIONS, CAREFUL), save=path)
    assert (done.count, done.stop, run.trace_pencils) == (14, "trace test", TRACE_PENCILS) and TRACE_PENCILS >= 2
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays["meta"]))
    del meta["trace_pencils"]
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(path, **arrays)
    old = Monodromy.resume(S, path, fingerprint=fp)
    assert old.trace_pencils == 1 and old.trace < TRACE_TOLERANCE
    again = old.run(LocalExecutor(S, LOOP_OPTIONS, CAREFUL))
    assert (again.count, again.stop, old.trace_pencils) == (14, "trace test", TRACE_PENCILS)
    assert again.paths > done.paths  # the two pencils' paths: tracked again, not read from the file
