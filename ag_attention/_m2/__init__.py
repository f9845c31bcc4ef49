"""The process room: every external program and its deadline.

The front door of :mod:`ag_attention._m2`: other rooms import these names from here (tests/test_layout.py).
Macaulay2 jobs on three backends (``runner``: local ``M2``, the passagemath-macaulay2 ``wheel``, the
``container`` image), persistent sessions, job directories, the memory limit, the result cache and the schema of a
job's JSON; msolve runs through the same backends (:mod:`ag_attention._algebra.msolve` writes its input and reads
its output); Dask clients and a local Dask cluster (``dask``, ``cluster``); the locked wheels of Macaulay2 and
msolve, installed into this Python (``install``: ``ag-attention m2 install``).  Process groups, timeouts and the
kill are in ``process``; nothing here is mathematics.
"""

from . import doctor  # a namespace other rooms use
from .backend import check_timeout
from .cache import ResultCache, cache_disabled_by_env
from .cluster import LocalDaskCluster
from .container import ContainerBackend, container_end
from .dask import close_client, connect_client, require, scheduler_address, wait_for_workers, worker_threads
from .install import (
    INSTALL_TIMEOUT,
    LOCK_NAMES,
    Interpreter,
    LockedWheel,
    install_wheels,
    lock_files,
    locked_wheels,
    pip_command,
)
from .jobs import DEFAULT_TIMEOUT, run_json
from .process import kill_all_jobs
from .runner import BACKENDS, VERSION_TIMEOUT, Backend, get_backend
from .schema import NUMBER_STRING, OneOf, Where
from .session import close_all, job_slots
from .wheel import WheelBackend, wheel_binary, wheel_candidates

__all__ = [
    "LocalDaskCluster",
    "close_client",
    "connect_client",
    "require",
    "scheduler_address",
    "wait_for_workers",
    "worker_threads",
    "doctor",
    "INSTALL_TIMEOUT",
    "LOCK_NAMES",
    "Interpreter",
    "LockedWheel",
    "install_wheels",
    "lock_files",
    "locked_wheels",
    "pip_command",
    "BACKENDS",
    "Backend",
    "ContainerBackend",
    "DEFAULT_TIMEOUT",
    "NUMBER_STRING",
    "OneOf",
    "ResultCache",
    "VERSION_TIMEOUT",
    "Where",
    "cache_disabled_by_env",
    "check_timeout",
    "close_all",
    "container_end",
    "get_backend",
    "job_slots",
    "kill_all_jobs",
    "run_json",
    "WheelBackend",
    "wheel_binary",
    "wheel_candidates",
]
