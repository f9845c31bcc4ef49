"""Architecture (ag_attention._architecture): sizes and blocks, invalid input named by field and value, property
tests."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ag_attention import Architecture, InvalidArchitectureError
from ag_attention._architecture import parse_sizes
from tests.helpers import ANY_VALUE


def test_basic_counts():
    a = Architecture((4, 4, 4), (2, 2), tokens=3)
    assert a.depth == 2
    assert a.parameter_count == 2 * (2 * 2 * 4 + 4 * 4)
    assert a.output_size == 12
    assert [b.label for b in a.blocks] == ["Q1", "K1", "V1", "Q2", "K2", "V2"]
    assert a.blocks[-1].offset + a.blocks[-1].size == a.parameter_count


def test_av_parametrization_defaults_ranks():
    a = Architecture.single_layer(3, 2)
    assert a.parametrization == "AV" and a.ranks == (3,)
    assert [b.name for b in a.blocks] == ["A", "V"]
    assert a.parameter_count == 9 + 6


def test_heads_and_skip_blocks():
    a = Architecture((3, 3, 3), (2, 1), tokens=2, heads=2, skip=True)
    assert a.parameter_count == 2 * (2 * 2 * 3 + 9) + 2 * (2 * 1 * 3 + 9)
    assert a.block("V", 2, 1).layer == 2


@pytest.mark.parametrize(
    "kwargs, field, value",
    [
        (dict(widths=(4, 0), ranks=(2,)), "widths[1]", 0),
        (dict(widths=(4, -1), ranks=(2,)), "widths[1]", -1),
        (dict(widths=(4, 2.5), ranks=(2,)), "widths[1]", 2.5),
        (dict(widths=(4, True), ranks=(2,)), "widths[1]", True),
        (dict(widths=(4,), ranks=()), "widths", (4,)),
        (dict(widths="44", ranks=(2,)), "widths", "44"),
        (dict(widths=(4, 4, 4), ranks=(2,)), "ranks", (2,)),
        (dict(widths=(4, 4), ranks=(2, 2)), "ranks", (2, 2)),
        (dict(widths=(4, 4), ranks=(0,)), "ranks[0]", 0),
        (dict(widths=(4, 4), ranks=None), "ranks", None),
        (dict(widths=(4, 4), ranks=(2,), tokens=0), "tokens", 0),
        (dict(widths=(4, 4), ranks=(2,), tokens="3"), "tokens", "3"),
        (dict(widths=(4, 4), ranks=(2,), heads=0), "heads", 0),
        (dict(widths=(4, 3), ranks=(2,), skip=True), "skip", True),
        (dict(widths=(4, 4), ranks=(2,), temperature=0.0), "temperature", 0.0),
        (dict(widths=(4, 4), ranks=(2,), parametrization="XY"), "parametrization", "XY"),
        (dict(widths=(4, 4), ranks=(2,), parametrization="AV"), "ranks[0]", 2),
    ],
)
def test_invalid_input_names_field_and_value(kwargs, field, value):
    with pytest.raises(InvalidArchitectureError) as err:
        Architecture(**kwargs)
    assert err.value.field == field
    assert err.value.value == value or (value is None and err.value.value is None)
    assert field in str(err.value)


def test_outside_hypotheses_is_still_valid():
    # t = 1, a > d, widths that grow then shrink: valid architectures
    Architecture((3, 3), (5,), tokens=1)
    Architecture((2, 5, 2), (2, 4), tokens=3)


def test_parse_sizes():
    assert parse_sizes("4, 4,4", "widths") == (4, 4, 4)
    for bad in ["", "4,,4", "4,x", "4,0"]:
        with pytest.raises(InvalidArchitectureError) as err:
            parse_sizes(bad, "widths")
        assert "widths" in str(err.value)


def test_roundtrip_dict():
    a = Architecture((4, 2, 4), (2, 2), tokens=3, heads=2)
    assert Architecture.from_dict(a.to_dict()) == a
    with pytest.raises(InvalidArchitectureError, match="bogus"):
        Architecture.from_dict({**a.to_dict(), "bogus": 1})


def test_an_absurd_head_count_is_a_cheap_description():
    arch = Architecture((4, 4), (2,), tokens=2, heads=10**8)
    assert arch.parameter_count == 10**8 * (2 * 2 * 4 + 16)  # arithmetic: no block objects are built
    assert "_blocks" not in arch.__dict__


@settings(max_examples=300, deadline=None)
@given(
    widths=ANY_VALUE,
    ranks=ANY_VALUE,
    tokens=ANY_VALUE,
    heads=ANY_VALUE,
    skip=ANY_VALUE,
    normalized=ANY_VALUE,
    temperature=ANY_VALUE,
    parametrization=st.one_of(ANY_VALUE, st.sampled_from(["QKV", "AV"])),
)
def test_architecture_is_valid_or_an_invalid_architecture_error(
    widths, ranks, tokens, heads, skip, normalized, temperature, parametrization
):
    kwargs = dict(
        widths=widths,
        ranks=ranks,
        tokens=tokens,
        heads=heads,
        skip=skip,
        normalized=normalized,
        temperature=temperature,
        parametrization=parametrization,
    )
    try:
        arch = Architecture(**kwargs)
    except InvalidArchitectureError as exc:
        assert exc.field in str(exc)
        return
    assert arch.parameter_count > 0 and len(arch.widths) >= 2
