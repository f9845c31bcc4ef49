"""Choosing a backend (ag_attention._m2.runner), and the names the runner gathers for others."""

import pytest

from ag_attention._errors import InvalidArgumentError, M2NotFoundError
from ag_attention._m2 import runner
from tests.helpers import no_backends


def test_runner_keeps_the_names_others_import():
    for name in [
        "M2Output",
        "M2MemoryError",
        "Backend",
        "LocalBackend",
        "ContainerBackend",
        "get_backend",
        "available_backends",
        "package_file",
        "parse_memory",
        "clean_stale_job_dirs",
        "check_timeout",
        "DEFAULT_IMAGE",
        "DEFAULT_MEMORY",
        "MEMORY_ENV",
        "VERSION_TIMEOUT",
        "HOW_TO_GET_M2",
        "BACKENDS",
        "OWNER_FILE",
        "process_start",
        "boot_id",
        "default_backends",
    ]:
        assert hasattr(runner, name), name
    assert set(runner.__all__) <= set(dir(runner))


def test_missing_backend_explains_every_way(monkeypatch):
    no_backends(monkeypatch)
    for name in ("auto", "local", "wheel", "container"):
        with pytest.raises(M2NotFoundError) as err:
            runner.get_backend(name)
        text = str(err.value)
        assert "apt-get install macaulay2" in text and "docker/build.sh" in text
        assert "`ag-attention m2 install`" in text
    with pytest.raises(InvalidArgumentError, match="backend='mars'"):
        runner.get_backend("mars")
