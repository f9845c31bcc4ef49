"""The package's clock (ag_attention._clock): deadlines, and Ctrl-C as a deadline that arrives now."""

import os
import signal
import threading
import time

import pytest

from ag_attention import _clock
from ag_attention._errors import ComputationInterruptedError, ComputationTimeoutError
from ag_attention._resources import Deadline


def test_the_clock_is_monotonic_time_until_an_interruption():
    assert abs(_clock.now() - time.monotonic()) < 1.0
    end = _clock.now() + 3600
    wall = _clock.wall(end)
    assert wall is not None and 3590 < wall - time.time() <= 3600
    assert _clock.wall(None) is None and not _clock.interrupted()
    assert 59 < _clock.after(60) - _clock.now() <= 60


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler, as in a program or a notebook (pytest-xdist's workers ignore SIGINT)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_the_first_ctrl_c_is_a_deadline_the_second_raises(python_sigint):
    ran = threading.Event()
    _clock.on_interrupt(ran.set)
    with _clock.interruptible():
        end = _clock.now() + 3600
        deadline = Deadline(None)  # no limit: Ctrl-C still stops it
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs between bytecodes
        assert _clock.interrupted() and _clock.now() > end
        # a deadline taken after the Ctrl-C (a command still setting up) has passed too: no fresh run of its time
        assert _clock.after(3600) <= _clock.now()
        assert _clock.wall(end) is not None and _clock.wall(end) < time.time()
        with pytest.raises(ComputationInterruptedError, match="interrupted .Ctrl-C. during a step") as info:
            deadline.check("a step")
        assert isinstance(info.value, ComputationTimeoutError)  # the CLI's exit 3, as at a limit
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
    assert ran.wait(5)
    # its end restores the clock, the mark and Python's handler
    assert not _clock.interrupted() and _clock.now() < end
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_outside_the_main_thread_ctrl_c_is_left_to_python(python_sigint):
    seen = []

    def body():
        with _clock.interruptible():
            seen.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [signal.default_int_handler]


def test_nested_computations_share_the_outermost():
    with _clock.interruptible():
        with _clock.interruptible():
            _clock.interrupt()
        assert _clock.interrupted()  # the inner end does not reset what the outer one still runs under
    assert not _clock.interrupted()


def test_a_caller_that_handles_sigint_keeps_it():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with _clock.interruptible():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
