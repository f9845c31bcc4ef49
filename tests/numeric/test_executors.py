"""Executors (ag_attention._numeric.executors): this process and a real Dask cluster on 127.0.0.1 find and certify
the same solutions."""

import socket
import time

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._landscape.metrics import metric
from ag_attention._landscape.square import square_system
from ag_attention._m2.cluster import LocalDaskCluster
from ag_attention._numeric import executors
from ag_attention._numeric.certify import certify_solutions
from ag_attention._numeric.executors import DaskExecutor, LocalExecutor, executor
from ag_attention._numeric.homotopy import CAREFUL
from ag_attention._numeric.monodromy import LOOP_OPTIONS, monodromy_solve
from tests.helpers import skip_unless_installed

skip_unless_installed("distributed")


def _system():
    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    G, _ = metric("generic", 2, 1, 2, seed=0)
    S = square_system(arch, G)
    z0, p0, c0 = S.seed(np.random.default_rng(0))
    return S, z0, p0, c0


def _points(S, r):
    """The solutions as points of the neuromanifold (chart-free), sorted."""
    x = S.coordinates(r.solutions, r.charts)
    return x[np.lexsort(np.round(x.real, 6).T[::-1])]


@pytest.fixture(scope="module")
def cluster():
    with LocalDaskCluster(workers=2, threads=1, timeout=120) as address:
        yield address


def test_a_dask_cluster_finds_and_certifies_the_same_set_as_one_process(cluster):
    S, z0, p0, c0 = _system()
    one = monodromy_solve(S, z0, p0, seed=0, chart0=c0, workers=1)
    many = monodromy_solve(S, z0, p0, seed=0, chart0=c0, scheduler=cluster)
    assert (one.count, one.stop) == (many.count, many.stop) == (14, "trace test")
    assert "Dask cluster at" in many.executor and many.to_dict()["executor"] == many.executor
    assert np.allclose(_points(S, one), _points(S, many), atol=1e-7)
    # the certification on the workers: the same boxes' count, realness and failures as in this process
    with executor(S, LOOP_OPTIONS, CAREFUL, scheduler=cluster) as ex:
        assert isinstance(ex, DaskExecutor) and ex.workers == 2
        there = certify_solutions(
            S,
            many.solutions,
            list(p0),
            float_parameter=p0,
            real_system=False,
            keep=S.off_critical_locus,
            charts=many.charts,
            executor=ex,
        )
    here = certify_solutions(
        S, one.solutions, list(p0), float_parameter=p0, real_system=False, keep=S.off_critical_locus, charts=one.charts
    )
    assert (there.count, there.failed, there.unchecked) == (here.count, here.failed, here.unchecked) == (14, 0, 0)


def test_certification_in_small_chunks_keeps_the_candidates_order_and_shows_its_progress(cluster, monkeypatch, capsys):
    # chunks of 3 candidates come back in any order (5 tasks on 2 workers); each result lands at its candidates
    S, z0, p0, c0 = _system()
    r = monodromy_solve(S, z0, p0, seed=0, chart0=c0, workers=1)
    monkeypatch.setattr(executors, "CERTIFY_CHUNK", 3)
    monkeypatch.setenv("AG_ATTENTION_QUIET", "0")
    monkeypatch.setenv("AG_ATTENTION_PROGRESS_INTERVAL", "0")  # a line at once, not every 10 s
    kw = dict(float_parameter=p0, real_system=False, keep=S.off_critical_locus, charts=r.charts)
    with executor(S, LOOP_OPTIONS, CAREFUL, scheduler=cluster) as ex:
        there = certify_solutions(S, r.solutions, list(p0), desc="certify in chunks", executor=ex, **kw)
    here = certify_solutions(S, r.solutions, list(p0), **kw)
    assert there.count == here.count == 14
    assert np.array_equal([c.center for c in there.solutions], [c.center for c in here.solutions])
    assert "certify in chunks: 14/14" in capsys.readouterr().err


def test_a_local_cluster_is_started_and_stopped_for_workers(cluster):
    S, z0, p0, c0 = _system()
    r = monodromy_solve(S, z0, p0, seed=0, chart0=c0, workers=2)
    assert (r.count, r.stop) == (14, "trace test") and "local Dask cluster" in r.executor


def test_a_scheduler_that_is_not_there_is_refused_within_the_limit():
    S, z0, p0, _ = _system()
    with socket.socket() as s:  # a free port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    with pytest.raises(InvalidArgumentError, match="connection refused"):
        with executor(S, LOOP_OPTIONS, CAREFUL, scheduler=f"tcp://127.0.0.1:{port}", timeout=5):
            pass
    assert time.monotonic() - t0 < 10
    with pytest.raises(InvalidArgumentError, match="workers=0"):
        with executor(S, LOOP_OPTIONS, CAREFUL, workers=0):
            pass


def test_the_local_executor_keeps_its_batch_full():
    S, z0, p0, c0 = _system()
    ex = LocalExecutor(S, LOOP_OPTIONS, CAREFUL)
    assert ex.wants() == LOOP_OPTIONS.batch and ex.pending() == 0 and ex.poll(0.01) == []
    q = p0 * 1.5
    ex.submit(7, np.array([z0] * 3), np.array([c0] * 3), np.stack([np.stack([p0, q, p0])]), np.zeros(3, dtype=int))
    assert ex.pending() == 3 and ex.wants() == LOOP_OPTIONS.batch - 3
    ends = []
    while ex.pending():
        ends.extend(ex.poll(1.0))
    rows = np.concatenate([e.index for e in ends])
    assert sorted(rows.tolist()) == [0, 1, 2] and all(e.job == 7 for e in ends)
    # a loop through q and back: each path ends at a solution over p0
    assert all(e.ok.all() and (e.last < 1e-8).all() for e in ends)
    ex.submit(8, np.array([z0]), np.array([c0]), np.stack([np.stack([p0, q])]), np.zeros(1, dtype=int))
    assert ex.cancel() == [8] and ex.pending() == 0


def test_local_workers_are_capped_at_the_cores_and_the_cap_is_said():
    from ag_attention._numeric.executors import default_workers, executor

    arch = Architecture.single_layer(2, 1, 2, tokens=2)
    S = square_system(arch, metric("generic", 2, 1, 2, seed=0)[0])
    cores = default_workers()
    with executor(S, LOOP_OPTIONS, CAREFUL, workers=cores + 30) as ex:
        assert ex.workers <= cores
        assert f"--workers {cores + 30} capped at the {cores} cores of this machine" in ex.describe()
