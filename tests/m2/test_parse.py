"""Reading Macaulay2's output (ag_attention._m2.parse): result markers, error messages and their locations."""

import json

import pytest

from ag_attention._errors import M2ExecutionError, M2OutputError
from ag_attention._m2.jobs import run_json
from ag_attention._m2.parse import BEGIN, END, extract_result, parse_error
from tests.helpers import DATA as TEST_DATA
from tests.helpers import fake_m2

DATA = TEST_DATA / "m2"


@pytest.mark.parametrize(
    "name, message, location",
    [
        ("syntax", "syntax error at ';'", "job.m2:3:15"),
        ("runtime", "division by zero", "job.m2:3:14"),
        (
            "package",
            "lightningParametrization: d must be positive, got 0",
            "job.m2:3:5 (raised at LightningAttention.m2:86:19)",
        ),
    ],
)
def test_error_messages_from_real_m2_output(name, message, location):
    stderr = (DATA / f"{name}.stderr").read_text()
    assert parse_error(stderr) == (message, location)
    with pytest.raises(M2ExecutionError) as err:
        extract_result("", stderr, 1)
    assert err.value.m2_message == message and err.value.location == location
    assert message in str(err.value) and location in str(err.value)


def test_result_markers():
    out = f"noise\n{BEGIN}\n{json.dumps({'a': [1, 'x']})}\n{END}\n"
    assert extract_result(out, "", 0) == {"a": [1, "x"]}
    with pytest.raises(M2OutputError, match="no result marker"):
        extract_result("just text\n", "", 0)
    with pytest.raises(M2OutputError, match="truncated"):
        extract_result(f'{BEGIN}\n{{"a": 1}}\n', "", 0)
    with pytest.raises(M2OutputError, match="not valid JSON"):
        extract_result(f"{BEGIN}\n{{'a': .5}}\n{END}\n", "", 0)
    with pytest.raises(M2ExecutionError, match="status 3 without an error message"):
        extract_result("", "segfault?", 3)


def test_output_that_is_not_utf8_is_an_output_error(tmp_path, cache_dir):
    b = fake_m2(tmp_path, f"echo '{BEGIN}'; printf '{{\"x\": \"\\377\"}}\\n'; echo '{END}'")
    with pytest.raises(M2OutputError, match="not valid UTF-8 .byte 0xff"):
        run_json("result = 1;", schema={"x": str}, backend=b, timeout=10)
    assert not list(cache_dir.rglob("*.json"))
    # undecodable bytes outside the result (or in an error message) are harmless
    b = fake_m2(tmp_path, f"printf 'noise \\377\\n'; echo '{BEGIN}'; echo '{{\"x\": \"y\"}}'; echo '{END}'")
    assert run_json("result = 1;", schema={"x": str}, backend=b, timeout=10, cache=False).payload == {"x": "y"}
    b = fake_m2(tmp_path, "printf 'job.m2:1:1:(3): error: bad \\377 byte\\n' >&2; exit 1")
    with pytest.raises(M2ExecutionError, match=r"bad \\xff byte"):
        run_json("result = 1;", schema={}, backend=b, timeout=10, cache=False)


@pytest.mark.m2
def test_m2_errors_surface_with_message_and_location(m2_local):
    with pytest.raises(M2ExecutionError) as err:
        run_json(
            "P = lightningParametrization(0, 1);\nresult = hashTable {};",
            schema={},
            backend=m2_local,
            timeout=60,
            cache=False,
        )
    assert err.value.m2_message == "lightningParametrization: d must be positive, got 0"
    assert err.value.location.startswith("job.m2:3:")
    with pytest.raises(M2ExecutionError, match="syntax error"):
        run_json("result = (1 + ;", schema={}, backend=m2_local, timeout=60, cache=False)
