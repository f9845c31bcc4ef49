"""What every backend shares (ag_attention._m2.backend): the timeout argument, the version query."""

import pytest

from ag_attention._errors import InvalidArgumentError, M2NotFoundError

from tests.helpers import fake_m2


def test_bad_timeout(tmp_path):
    b = fake_m2(tmp_path, "true")
    for bad in [0, -1, "x", None]:
        with pytest.raises(InvalidArgumentError, match="timeout"):
            b.run("x", timeout=bad)


def test_a_version_query_without_output_says_why(tmp_path):
    b = fake_m2(tmp_path, "exit 0", version=False)
    with pytest.raises(M2NotFoundError, match=r"did not report its version .*exit status 0, no output"):
        b.version()
    b = fake_m2(tmp_path, "echo 'M2: cannot open the documentation database' >&2; exit 2", version=False)
    with pytest.raises(M2NotFoundError, match="exit status 2, stderr: M2: cannot open the documentation database"):
        b.version()
