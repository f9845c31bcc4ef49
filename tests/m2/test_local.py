"""The local backend (ag_attention._m2.local): its address-space limit reaches Macaulay2, out of memory is named."""

import pytest

from ag_attention._m2 import runner
from ag_attention._m2.jobs import run_json
from ag_attention._m2.runner import MEMORY_ENV, LocalBackend, M2MemoryError
from tests.helpers import fake_m2


def test_limit_reaches_the_child_and_out_of_memory_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv(runner.MEMORY_ENV, raising=False)
    b = fake_m2(tmp_path, 'grep "Max address space" /proc/self/limits')
    b.memory = "300m"
    out = b.run("x", timeout=30)
    assert out.stdout.split()[3:5] == [str(300 * 2**20)] * 2  # soft and hard
    # what Macaulay2's GC prints when the limit is hit (measured): M2MemoryError, not a parse error
    b = fake_m2(
        tmp_path, 'echo "" >&2; echo " *** out of memory trying to allocate 800000008 bytes, exiting ***" >&2; exit 1'
    )
    b.memory = "300m"
    with pytest.raises(runner.M2MemoryError) as err:
        run_json("result = 1;", schema={}, backend=b, timeout=30, cache=False, label="big job")
    text = str(err.value)
    assert "big job ran out of memory" in text and "300 MiB" in text and "AG_ATTENTION_M2_MEMORY=600m" in text
    assert "out of memory trying to allocate 800000008 bytes" in text and err.value.limit == 300 * 2**20
    b = fake_m2(tmp_path, 'echo "GNU MP: Cannot allocate memory (size=1992187536)" >&2; kill -ABRT $$')
    with pytest.raises(runner.M2MemoryError, match="SIGABRT"):
        b.run("x", timeout=30)


LIST = 'L = toList(1..100000000);\nresult = hashTable {"n" => #L};'  # 800 MB in one allocation


@pytest.mark.m2
def test_memory_limit_reaches_macaulay2(m2_local, monkeypatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    body = 'result = hashTable {"limits" => get "/proc/self/limits"};'
    for backend, want in [
        (LocalBackend(m2_local.executable), 4 * 2**30),
        (LocalBackend(m2_local.executable, memory="1g"), 2**30),
    ]:
        job = run_json(body, schema={"limits": str}, backend=backend, timeout=120, cache=False)
        (line,) = [ln for ln in job.payload["limits"].splitlines() if ln.startswith("Max address space")]
        assert line.split()[3:5] == [str(want)] * 2


@pytest.mark.m2
def test_a_real_job_beyond_the_memory_limit_is_a_clear_error(m2_local, monkeypatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    b = LocalBackend(m2_local.executable, memory="400m")
    with pytest.raises(M2MemoryError) as err:
        run_json(LIST, schema={"n": int}, backend=b, timeout=300, cache=False, label="a long list")
    text = str(err.value)
    assert "a long list ran out of memory" in text and "400 MiB of address space" in text
    assert "AG_ATTENTION_M2_MEMORY=800m" in text and "out of memory trying to allocate" in text
    monkeypatch.setenv(MEMORY_ENV, "400m")  # the same through the environment
    with pytest.raises(M2MemoryError, match="from AG_ATTENTION_M2_MEMORY"):
        run_json(LIST, schema={"n": int}, backend=LocalBackend(m2_local.executable), timeout=300, cache=False)
