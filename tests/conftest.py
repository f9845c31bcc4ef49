import atexit
import os
import shutil
import subprocess
import tempfile

import pytest

# Under pytest-xdist (make test: one worker per core) BLAS and OpenMP run one thread a worker, in the worker and in
# every process it starts (unless the variable is set: scripts/numeric-variations.sh sets the threads it tests, 2 in
# make test's).  Two workers of two OpenBLAS threads each on 2 cores wait on each other: tests/exact/test_modular_lu.py,
# tests/point/test_estimate.py, test_factors.py and tests/test_resources.py took 42 s and 50 s, 28 s and 30 s on one
# thread a worker (-n 2, 2 busy cores); a 26,214 x 125 Gram matrix 1.2 s against 0.03 s.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")

from tests.helpers import ROOT, SLOW_TESTS_ASKED, generator  # noqa: E402

os.environ.setdefault("HOME", "/tmp")
# Macaulay2 results never come from a cache left by an earlier run
_CACHE = tempfile.mkdtemp(prefix="ag-attention-test-cache-")
os.environ["AG_ATTENTION_CACHE_DIR"] = _CACHE
# removed when this process ends: every pytest process (and xdist worker) made one, and 587 were left in /tmp here
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)


#: Cases of a parametrized test marked ``slow`` one by one (a whole test carries ``@pytest.mark.slow``): the larger
#: sizes of a grid whose smaller cases, which make test runs, prove the same behaviour.
SLOW_CASES = {
    # 45 s: the 68 critical points of two outputs; d_out = 1 (14 points, also under every BLAS variation) stays
    "tests/landscape/test_critical.py::test_gaussian_float_data_at_every_scale[2-6-68]",
    # 10 s: the largest of six layers whose generator degrees Macaulay2's kernel confirms
    "tests/algebra/test_interpolation.py::test_generator_degrees_agree_with_macaulay2s_kernel[3-1-3]",
    # FLINT's rank of a 1100 x 1040 matrix, the grid's slowest: the smaller sizes (up to 300 x 260, several levels
    # of blocks) agree with FLINT, and test_linalg_rank_takes_the_blas_route_for_small_primes takes the BLAS rank
    # past BLAS_MIN_SIDE to a rank known by construction
    "tests/exact/test_modular_lu.py::test_rank_equals_flint[1100-1040-1000]",
}


def pytest_collection_modifyitems(config, items):
    """The one slow convention: a test marked ``slow`` (a large case or a measurement that a faster test already
    proves, or a reproduction's full sizes) is skipped unless ``AG_ATTENTION_SLOW_TESTS=1``; ``make test-all``
    runs it, ``make test`` does not."""
    skip = pytest.mark.skip(reason="slow: make test-all (AG_ATTENTION_SLOW_TESTS=1) runs it")
    for item in items:
        if item.nodeid in SLOW_CASES:
            item.add_marker(pytest.mark.slow)
        if not SLOW_TESTS_ASKED and item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
        # under pytest-xdist (make test: --dist loadgroup) the tests sharing an expensive fixture run on one worker,
        # so that it runs once, not once per worker: the container image (m2_container builds a missing one), and the
        # module- or session-scoped fixtures of a test module or of a directory's conftest.py (a reproduction run, a
        # sweep, a Dask cluster); this file's own (Macaulay2, msolve, PyTorch found) cost nothing twice
        group = "container" if "m2_container" in getattr(item, "fixturenames", ()) else _shared_fixture_home(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker sends the test ids to the controller
def pytest_collection_finish(session):
    """Under ``--dist loadgroup`` a test of an xdist_group must be named ``nodeid@group``: that name is all the
    controller sees.  pytest-xdist 3.8 names it by setting ``item._nodeid``, which pytest 9 no longer reads (a
    node's id is its ``_id``), so every group was ignored and a module's shared fixture was built once per worker
    (twice the work): the name is given here where pytest-xdist's did not take."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        names = {
            str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")
        }
        suffix = "@" + "_".join(sorted(names))
        node_id = getattr(item, "_id", None)
        if names and node_id is not None and not item.nodeid.endswith(suffix):
            setattr(item, "_id", type(node_id).parse(item.nodeid + suffix))  # noqa: B010 (pytest's, not ours)


def _shared_fixture_home(item) -> str | None:
    """Where the broadest fixture ``item`` shares with other tests is defined (a test module or a directory), if it
    is not a function's fixture, pytest's own or this file's."""
    info = getattr(item, "_fixtureinfo", None)
    homes = []
    for name in getattr(info, "names_closure", ()):
        defs = info.name2fixturedefs.get(name)
        if defs and defs[-1].scope != "function" and defs[-1].baseid not in ("", "tests"):
            homes.append(defs[-1].baseid)
    return min(homes, key=len) if homes else None


@pytest.fixture
def rng():
    """Random points for a test (another stream under AG_ATTENTION_TEST_SEED, see tests/helpers.py)."""
    return generator(20241122)


def _require(var: str) -> bool:
    return os.environ.get(var, "") not in ("", "0")


@pytest.fixture(scope="session")
def m2_local():
    """The local Macaulay2 (skipped if absent, unless AG_ATTENTION_REQUIRE_M2=1: then a failure)."""
    from ag_attention._m2.runner import LocalBackend

    b = LocalBackend()
    ok, why = b.available()
    if not ok:
        if _require("AG_ATTENTION_REQUIRE_M2"):
            pytest.fail(f"Macaulay2 required but unavailable: {why}")
        pytest.skip(f"no local Macaulay2: {why}")
    return b


@pytest.fixture(scope="session")
def m2_wheel():
    """Macaulay2 from the passagemath-macaulay2 wheel of this Python (skipped if absent, unless
    AG_ATTENTION_REQUIRE_M2_WHEEL=1: then a failure; scripts/setup.sh installs it). Installed but built for
    instructions this CPU lacks (killed by SIGILL at start-up: ag_attention._m2.wheel.cpu_refusal) is a skip with
    the reason: no installation mends it."""
    from ag_attention._m2.runner import WheelBackend

    b = WheelBackend()
    ok, why = b.available()
    if not ok:
        if _require("AG_ATTENTION_REQUIRE_M2_WHEEL") and b.runs_here():  # installed but not for this CPU: a skip
            pytest.fail(f"Macaulay2's wheel required but unavailable: {why}")
        pytest.skip(f"no Macaulay2 wheel: {why}")
    return b


@pytest.fixture(scope="session")
def m2_container():
    """The project's image, built from docker/Dockerfile if missing (skipped only if no engine runs)."""
    from ag_attention._m2.runner import ContainerBackend

    b = ContainerBackend()
    if b.engine is None:
        reason = "neither a Docker engine nor podman can run here"
        print(f"SKIP container tests: {reason}")
        pytest.skip(reason)
    ok, why = b.available()
    if not ok:
        r = subprocess.run(["bash", str(ROOT / "docker" / "build.sh")], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.fail(f"building the image failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        ok, why = b.available()
        assert ok, why
    return b


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(d))
    return d


@pytest.fixture(scope="session")
def torch():
    """PyTorch (skipped if absent, unless AG_ATTENTION_REQUIRE_TORCH=1: then a failure; scripts/setup-torch.sh)."""
    try:
        import torch as module
    except ImportError as exc:
        if _require("AG_ATTENTION_REQUIRE_TORCH"):
            pytest.fail(f"PyTorch required but it does not import: {exc}")
        pytest.skip(f"no PyTorch here ({exc}; scripts/setup-torch.sh installs a CPU build where it can)")
    return module


@pytest.fixture(scope="session")
def transformers(torch):
    """Hugging Face transformers beside PyTorch (skipped if absent, unless AG_ATTENTION_REQUIRE_TORCH=1: then a
    failure; scripts/setup-torch.sh installs it from requirements/transformers.txt), importing with no hub."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import transformers as module
    except ImportError as exc:
        if _require("AG_ATTENTION_REQUIRE_TORCH"):
            pytest.fail(f"transformers required beside PyTorch but it does not import: {exc}")
        pytest.skip(f"no transformers here ({exc}; scripts/setup-torch.sh installs it)")
    return module


@pytest.fixture(scope="module")
def msolve():
    from ag_attention._algebra.msolve import msolve_available

    ok, why = msolve_available()
    if not ok:
        if os.environ.get("AG_ATTENTION_REQUIRE_MSOLVE", "") not in ("", "0"):
            pytest.fail(f"msolve required but unavailable: {why}")
        pytest.skip(f"no msolve: {why}")
    return why
