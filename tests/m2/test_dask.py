"""Dask clients (ag_attention._m2.dask): addresses checked, a dead or silent address refused within its deadline,
workers counted, the client closed, an optional dependency missing said with its install command."""

import socket
import threading
import time

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._m2.cluster import LocalDaskCluster
from ag_attention._m2.dask import (
    close_client,
    connect_client,
    require,
    scheduler_address,
    wait_for_workers,
    worker_threads,
)


@pytest.mark.parametrize(
    ("given", "address"),
    [
        ("127.0.0.1:8786", "tcp://127.0.0.1:8786"),
        (" tcp://127.0.0.1:1 ", "tcp://127.0.0.1:1"),
        ("tls://[::1]:8786", "tls://[::1]:8786"),
        ("tcp://localhost:08786", "tcp://localhost:8786"),
    ],
)
def test_scheduler_addresses_are_written_one_way(given, address):
    assert scheduler_address(given) == address


@pytest.mark.parametrize("given", ["", "127.0.0.1", "tcp://h:0", "tcp://h:65536", "ftp://h:1", None, 8786, "a b:1"])
def test_a_bad_address_names_the_value(given):
    with pytest.raises(InvalidArgumentError, match=r"--scheduler="):
        scheduler_address(given)


def test_a_missing_optional_dependency_says_how_to_install_it():
    with pytest.raises(
        InvalidArgumentError,
        match=r"no_such_module_xyz: pip install no_such_module_xyz \(the package's extra 'sweep'\)",
    ):
        require("no_such_module_xyz.sub")
    assert require("json").dumps([1]) == "[1]"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.serial  # bounds wall-clock time
def test_a_closed_port_is_refused_at_once():
    t0 = time.monotonic()
    with pytest.raises(InvalidArgumentError, match="refused|no Dask scheduler"):
        connect_client(f"tcp://127.0.0.1:{_free_port()}", timeout=5)
    assert time.monotonic() - t0 < 5 + 3


@pytest.mark.serial  # bounds wall-clock time
def test_a_silent_listener_is_refused_within_the_timeout():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])  # and never answer
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        t0 = time.monotonic()
        with pytest.raises(InvalidArgumentError):
            connect_client(f"tcp://127.0.0.1:{server.getsockname()[1]}", timeout=2)
        assert time.monotonic() - t0 < 2 + 5
    finally:
        stop.set()
        thread.join(5)
        for c in accepted:
            c.close()
        server.close()


def test_a_real_cluster_is_connected_counted_and_closed():
    require("distributed")
    with LocalDaskCluster(workers=2, threads=1, timeout=60) as address:
        client = connect_client(scheduler_address(address), timeout=30)
        try:
            assert wait_for_workers(client, address, 2, timeout=30) == 2
            assert worker_threads(client) == 2
            assert client.submit(sum, [1, 2, 3]).result(timeout=30) == 6
        finally:
            close_client(client)
        assert client.status in ("closed", "closing")
    close_client(None)  # nothing to close
