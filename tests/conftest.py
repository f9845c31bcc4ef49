import os
import subprocess
import tempfile

import pytest

from tests.helpers import ROOT, generator

os.environ.setdefault("HOME", "/tmp")
# Macaulay2 results never come from a cache left by an earlier run
_CACHE = tempfile.mkdtemp(prefix="ag-attention-test-cache-")
os.environ["AG_ATTENTION_CACHE_DIR"] = _CACHE


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


@pytest.fixture(scope="module")
def msolve():
    from ag_attention._algebra.msolve import msolve_available

    ok, why = msolve_available()
    if not ok:
        if os.environ.get("AG_ATTENTION_REQUIRE_MSOLVE", "") not in ("", "0"):
            pytest.fail(f"msolve required but unavailable: {why}")
        pytest.skip(f"no msolve: {why}")
    return why
