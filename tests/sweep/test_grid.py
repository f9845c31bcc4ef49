"""Grid files (ag_attention._sweep.grid): errors name the key and the value."""

import pytest

from ag_attention._errors import InvalidArgumentError
from ag_attention._sweep import load_grid


def _error(tmp_path, text):
    path = tmp_path / "g.toml"
    path.write_text(text)
    with pytest.raises(InvalidArgumentError) as info:
        load_grid(path)
    return str(info.value)


@pytest.mark.parametrize(
    "text, named",
    [
        ("colour = 1\n", "colour=1"),
        ("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 2\ndepth = 3\n", "architecture[0].depth=3"),
        ("[product]\ndepth = 1\nwidth = 2\ntokens = 2\nwidht = 3\n", "product.widht=3"),
        ("[product]\ndepth = 2\nwidth = \"0..4\"\ntokens = 2\n", "product.width='0..4'"),
        ("[product]\ndepth = 2\nwidth = [1, 0]\ntokens = 2\n", "product.width[1]=0"),
        ("[product]\ndepth = 2\nwidth = \"4..1\"\ntokens = 2\n", "product.width='4..1'"),
        ("[product]\ndepth = 2\nwidth = \"1-4\"\ntokens = 2\n", "product.width='1-4'"),
        ("[product]\ndepth = 2\nwidth = 3\ntokens = true\n", "product.tokens=True"),
        ("[product]\ndepth = 2\nwidth = 3\n", "missing key 'tokens'"),
        ("[[architecture]]\nwidths = [4, 0]\nranks = [2]\ntokens = 2\n", "architecture[0].widths[1]=0"),
        ("[[architecture]]\nwidths = [4, 2, 4]\nranks = [2, 3]\ntokens = 2\n", "architecture[0].ranks[1]=3"),
        ("[[architecture]]\nwidths = [2, 4]\nranks = [2, 2]\ntokens = 2\n", "architecture[0].ranks=[2, 2]"),
        ("[[architecture]]\nwidths = [2, 3]\nranks = [2]\ntokens = 2\nskip = true\n", "architecture[0].skip=True"),
        ("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 0\n", "architecture[0].tokens=0"),
        ("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 2\ncausal = 1\n", "architecture[0].causal=1"),
        ("[product]\ndepth = 1\nwidth = 2\ntokens = 2\nrank = 3\n", "the grid is empty"),
        ("description = \"nothing\"\n", "the grid is empty"),
        ("", "the grid is empty"),
        ("[product]\ndepth = 3\nwidth = \"1..40\"\ntokens = 2\n", "narrow its ranges"),
        ("[product\n", "not valid TOML"),
    ],
)
def test_grid_errors_name_the_key_and_value(tmp_path, text, named):
    message = _error(tmp_path, text)
    assert named in message
    assert str(tmp_path / "g.toml") in message


def test_unreadable_grid_file_is_named(tmp_path):
    for path in (tmp_path / "missing.toml", tmp_path):
        with pytest.raises(InvalidArgumentError, match="cannot be read") as info:
            load_grid(path)
        assert str(path) in str(info.value)
