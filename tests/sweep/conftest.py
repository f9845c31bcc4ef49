"""The sweep tests' grid, its local run and a Dask cluster: computed once for every sweep test module."""

import pytest

from tests.sweep.small_grid import SMALL


@pytest.fixture(scope="session")
def small_grid(tmp_path_factory):
    path = tmp_path_factory.mktemp("grid") / "small.toml"
    path.write_text(SMALL)
    return path


@pytest.fixture(scope="session")
def local_run(small_grid, tmp_path_factory):
    pytest.importorskip("pyarrow", reason="sweeps need pyarrow: pip install 'ag-attention[sweep]'")
    from ag_attention._sweep import sweep

    out = tmp_path_factory.mktemp("local")
    return sweep(small_grid, out, workers=2)


@pytest.fixture(scope="session")
def cluster():
    pytest.importorskip("distributed", reason="sweeps need distributed: pip install 'ag-attention[sweep]'")
    from ag_attention._m2.cluster import LocalDaskCluster

    with LocalDaskCluster(workers=2, threads=1, timeout=60) as address:
        yield address
