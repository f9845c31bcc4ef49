"""argparse converters (ag_attention._argtypes): a value or an ArgumentTypeError naming the option and the text."""

import argparse

import pytest

from ag_attention._argtypes import MAX_SECONDS, integer, nonempty, positive_float, seconds, shown


@pytest.mark.parametrize("text, value", [("12", 12), (" 7 ", 7), ("-3", -3), ("+4", 4), ("0", 0)])
def test_integer_reads_ascii_digits(text, value):
    assert integer("--tokens")(text) == value


@pytest.mark.parametrize("text", ["1_0", "٣", "1.0", "1e3", "0x10", "x", "", " "])
def test_integer_refuses_anything_else_naming_the_option_and_the_text(text):
    with pytest.raises(argparse.ArgumentTypeError) as err:
        integer("--tokens")(text)
    assert (
        str(err.value) == f"--tokens must be an integer written with the digits 0-9 (at most 100 of them), got {text!r}"
    )


@pytest.mark.parametrize("text, value", [("1.5", 1.5), ("2", 2.0), ("1e-3", 0.001), (" 3 ", 3.0)])
def test_positive_float_reads_finite_positive_numbers(text, value):
    got = positive_float("--timeout")(text)
    assert got == value and isinstance(got, float)


@pytest.mark.parametrize("text", ["0", "-1", "-0.0", "nan", "inf", "-inf", "1e400"])
def test_positive_float_refuses_zero_negative_and_non_finite(text):
    with pytest.raises(argparse.ArgumentTypeError) as err:
        positive_float("--timeout")(text)
    assert str(err.value) == f"--timeout must be a positive finite number, got {text!r}"


@pytest.mark.parametrize("text", ["x", "", "1,5", "one"])
def test_positive_float_refuses_what_is_not_a_number(text):
    with pytest.raises(argparse.ArgumentTypeError) as err:
        positive_float("--m2-timeout")(text)
    assert str(err.value) == f"--m2-timeout must be a number, got {text!r}"


def test_nonempty_keeps_the_text_and_refuses_blank_text():
    assert nonempty("--out")(" results ") == " results "  # kept as written
    for blank in ("", " ", "\t\n"):
        with pytest.raises(argparse.ArgumentTypeError, match="^--out must not be empty$"):
            nonempty("--out")(blank)


def test_an_argparse_option_exits_2_naming_itself(capsys):
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("--tokens", type=integer("--tokens"))
    assert parser.parse_args(["--tokens", "3"]).tokens == 3
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["--tokens", "1_0"])
    assert exit_.value.code == 2
    assert (
        "--tokens must be an integer written with the digits 0-9 (at most 100 of them), got '1_0'"
        in capsys.readouterr().err
    )


def test_integer_refuses_more_digits_than_python_converts_quoting_only_the_start():
    with pytest.raises(argparse.ArgumentTypeError) as err:
        integer("--seed")("7" * 5000)
    assert str(err.value).endswith("got '77777777777777777777'... (5,000 characters)")


@pytest.mark.parametrize("text", ["1e7", "1e9", "10000000"])
def test_seconds_refuses_limits_no_job_accepts(text):
    with pytest.raises(argparse.ArgumentTypeError, match="--m2-timeout must be below 1e\\+07 seconds"):
        seconds("--m2-timeout")(text)
    assert seconds("--m2-timeout")("900") == 900.0 and MAX_SECONDS == 1e7


def test_shown_quotes_short_texts_whole_and_long_ones_by_their_start():
    assert shown("abc") == "'abc'"
    assert shown("x" * 100) == "'xxxxxxxxxxxxxxxxxxxx'... (100 characters)"
