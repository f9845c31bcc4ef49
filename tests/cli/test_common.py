"""What the commands share (ag_attention._cli.common): the architecture options, time limits, JSON output with
its provenance."""

import pytest

from tests.cli import run_in_process, run_main


def test_the_cli_time_limit_is_the_jobs_time_limit():
    """`seconds()` accepts exactly what every job's check_timeout accepts (both below MAX_SECONDS)."""
    import argparse

    from ag_attention._argtypes import MAX_SECONDS, seconds
    from ag_attention._errors import InvalidArgumentError
    from ag_attention._m2.backend import check_timeout

    assert seconds("--t")(str(MAX_SECONDS * 0.999)) == check_timeout(MAX_SECONDS * 0.999)
    with pytest.raises(argparse.ArgumentTypeError):
        seconds("--t")(str(MAX_SECONDS))
    with pytest.raises(InvalidArgumentError):
        check_timeout(MAX_SECONDS)


@pytest.mark.parametrize(
    "argv, engine",
    [
        (["dim", "--widths", "3,2", "--ranks", "2", "--json"], None),
        (["fibers", "--widths", "2,2", "--ranks", "1", "--json"], None),
        (["dim", "--widths", "2,2", "--ranks", "2", "--normalized", "--json"], None),
        (["degree", "--widths", "2,1", "--ranks", "1", "--method", "count", "--json"], "msolve"),
        (["implicitize", "--widths", "2,1", "--ranks", "1", "--no-cache", "--json"], "macaulay2"),
    ],
)
def test_every_json_output_says_where_it_came_from(argv, engine, capsys, request):
    """`provenance`: version, commit (a checkout here), date, python, flint, and exactly the engines used."""
    import json

    import ag_attention

    if engine == "macaulay2":
        request.getfixturevalue("m2_local")
    if engine == "msolve":
        request.getfixturevalue("msolve")
    status, out, _ = run_main(argv, capsys)
    assert status == 0
    prov = json.loads(out)["provenance"]
    assert prov["version"] == ag_attention.__version__ and prov["python"].count(".") == 2 and prov["flint"]
    assert prov["commit"] is None or len(prov["commit"].removesuffix("+dirty")) == 40
    assert prov["date"].endswith("+00:00")
    assert {"macaulay2", "msolve"} & set(prov) == ({engine} if engine else set())


@pytest.mark.parametrize(
    "args, named",
    [
        (["--widths", "4,x", "--ranks", "2"], "widths[1]"),
        (["--widths", "4,4,4", "--ranks", "2"], "ranks"),
        (["--widths", "4,4", "--ranks", "2", "--tokens", "0"], "tokens"),
        (["--widths", "4,4", "--ranks", "2", "--prime", "4"], "prime"),
        (["--widths", "4,4", "--ranks", "2", "--seed", "-1"], "seed"),
        (["--widths", "4,4", "--ranks", "2", "--temperature", "2"], "temperature"),
        (["--widths", "4,4", "--ranks", "2", "--tokens", "two"], "--tokens"),
    ],
)
def test_cli_bad_arguments_exit_2_naming_the_value(args, named, capsys):
    p = run_in_process(capsys, "dim", *args)
    assert p.returncode == 2 and named in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_biases_and_rotary_positions_on_the_command_line(capsys):
    """--bias and --rope describe affine and rotary attention for every command that takes an architecture: dim
    certifies Prop. rotary; bad letters, a bad base, --rotary-dims alone, and the landscape's one plain layer are
    refused naming the value (exit 2)."""
    import json

    r = run_in_process(capsys, "dim", "--widths", "4,3", "--ranks", "4", "--rope", "10000", "--bias", "qkvo", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["dimension"] == 53 and d["certified"] and d["architecture"]["bias"] == "qkvo"
    assert d["architecture"]["positions"]["base"] == "10000" and d["formula"] == "Prop. rotary"
    for args, named in (
        (["--bias", "qx"], "bias='qx'"),
        (["--rope", "-3"], "--rope"),
        (["--rotary-dims", "2"], "--rotary-dims=2: only with --rope"),
        (["--rope", "10000", "--rotary-dims", "3"], "positions.dims"),
    ):
        bad = run_in_process(capsys, "dim", "--widths", "4,3", "--ranks", "4", *args)
        assert bad.returncode == 2 and named in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    ed = run_in_process(capsys, "ed-degree", "--widths", "2,1", "--ranks", "2", "--bias", "q")
    assert ed.returncode == 2 and "no biases, no rotary positions" in ed.stderr
