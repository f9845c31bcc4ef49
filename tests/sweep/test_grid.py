"""Grid files (ag_attention._sweep.grid): their products, and errors that name the key and the value."""

import os
import sys

import pytest

from ag_attention import _progress as progress
from ag_attention._errors import InvalidArgumentError
from ag_attention._sweep import Spec, load_grid, parse_grid
from ag_attention._sweep.grid import MAX_ARCHITECTURES, MAX_GRID_BYTES, MAX_LAYERS, MAX_RANGE
from tests.helpers import ROOT, Terminal
from tests.sweep.guards import bounded


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
        ('[product]\ndepth = 2\nwidth = "0..4"\ntokens = 2\n', "product.width='0..4'"),
        ("[product]\ndepth = 2\nwidth = [1, 0]\ntokens = 2\n", "product.width[1]=0"),
        ('[product]\ndepth = 2\nwidth = "4..1"\ntokens = 2\n', "product.width='4..1'"),
        ('[product]\ndepth = 2\nwidth = "1-4"\ntokens = 2\n', "product.width='1-4'"),
        ("[product]\ndepth = 2\nwidth = 3\ntokens = true\n", "product.tokens=True"),
        ("[product]\ndepth = 2\nwidth = 3\n", "missing key 'tokens'"),
        ("[[architecture]]\nwidths = [4, 0]\nranks = [2]\ntokens = 2\n", "architecture[0].widths[1]=0"),
        ("[[architecture]]\nwidths = [4, 2, 4]\nranks = [2, 3]\ntokens = 2\n", "architecture[0].ranks[1]=3"),
        ("[[architecture]]\nwidths = [2, 4]\nranks = [2, 2]\ntokens = 2\n", "architecture[0].ranks=[2, 2]"),
        ("[[architecture]]\nwidths = [2, 3]\nranks = [2]\ntokens = 2\nskip = true\n", "architecture[0].skip=True"),
        ("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 0\n", "architecture[0].tokens=0"),
        ("[[architecture]]\nwidths = [2, 2]\nranks = [2]\ntokens = 2\ncausal = 1\n", "architecture[0].causal=1"),
        ("[product]\ndepth = 1\nwidth = 2\ntokens = 2\nrank = 3\n", "the grid is empty"),
        ('description = "nothing"\n', "the grid is empty"),
        ("", "the grid is empty"),
        ('[product]\ndepth = 3\nwidth = "1..40"\ntokens = 2\n', "narrow its ranges"),
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


# ------------------------------------------------------------------ hostile grid files (issue 20: H6, T3, H3)
def _refusal(call):
    """The InvalidArgumentError of ``call()``, which must come promptly (a hang fails the test)."""

    def run():
        with pytest.raises(InvalidArgumentError) as info:
            call()
        return str(info.value)

    return bounded(run)


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "grid.toml"
    os.mkfifo(fifo)

    def release():  # without the check, load_grid blocks in open() until a writer comes
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    message = bounded(lambda: _refusal(lambda: load_grid(fifo)), release=release)
    assert str(fifo) in message and "not a regular file (a FIFO)" in message


def test_a_device_is_refused_not_read():
    # /dev/zero would be read until the kernel kills the process; /dev/null is the same kind of file
    message = _refusal(lambda: load_grid("/dev/null"))
    assert "/dev/null" in message and "not a regular file (a character device)" in message


def test_a_grid_file_larger_than_the_limit_is_refused_unread(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_GRID_BYTES + 1)  # sparse: nothing to write, nothing that should be read
    message = _refusal(lambda: load_grid(big))
    assert str(big) in message and f"{MAX_GRID_BYTES + 1:,} bytes" in message and "16 MiB" in message


def test_arrays_nested_thousands_deep_are_refused(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text("[product]\ndepth = " + "[" * 5000 + "1" + "]" * 5000 + "\nwidth = 2\ntokens = 2\n")
    message = _refusal(lambda: load_grid(path))
    assert str(path) in message and "nested too deeply" in message
    assert len(message) < 400


def test_long_values_are_shortened_in_messages(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text("[product]\ndepth = " + "[" * 300 + "1" + "]" * 300 + "\nwidth = 2\ntokens = 2\n")
    message = _refusal(lambda: load_grid(path))
    assert "product.depth[0]=[[[" in message and "must be an integer" in message and len(message) < 400


@pytest.mark.parametrize(
    "table, named",
    [
        (
            {"depth": "1..100000", "width": 2, "tokens": 2},
            "product.depth='1..100000': 100,000 values, more than the 10,000",
        ),
        ({"depth": 1, "width": "1..100000", "tokens": 2}, "product.width='1..100000': 100,000 values"),
        ({"depth": "1..10000", "width": [1, 2], "tokens": 2}, "more than the 1,000,000 architectures a sweep takes"),
        ({"depth": "1..9000", "width": 1, "tokens": 2}, "more than the 4,000,000 layers"),
        (
            {"depth": 2, "width": "1..9000", "rank": "1..9000", "tokens": 2},
            "more than the 1,000,000 architectures a sweep takes",
        ),
    ],
)
def test_huge_products_are_refused_by_counting(table, named):
    message = _refusal(lambda: parse_grid({"product": table}))
    assert named in message, message


def test_the_count_limits_are_exact():
    # at the limit: counted, not refused (1,000 depths of one width: 1,000 networks, 500,500 layers)
    g = parse_grid({"product": {"depth": "1..1000", "width": 1, "tokens": 2}})
    assert len(g) == 1000 and max(s.depth for s in g) == 1000
    assert MAX_ARCHITECTURES == 1_000_000 and MAX_RANGE == 10_000 and MAX_LAYERS == 4_000_000


def test_a_deep_network_is_described_briefly():
    spec = parse_grid({"architecture": [{"widths": [4] * 1201, "ranks": [2] * 1200, "tokens": 2, "heads": 2}]}).specs[0]
    assert (
        spec.describe() == "widths 4,4,4,4,4,4,...,4 (1,201 widths) ranks 2,2,2,2,2,2,...,2 (1,200 ranks) t=2 heads=2"
    )
    assert Spec((4, 2, 4), (2, 2), 3).describe() == "widths 4,2,4 ranks 2,2 t=3"


def test_expanding_a_big_grid_shows_progress(monkeypatch):
    """Near the limit a grid takes seconds to expand (820,125 networks: about 5 s): a bar after 2 s on a terminal."""
    monkeypatch.setattr(progress, "DELAY", 0.0)  # here at once
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    g = parse_grid({"product": {"depth": 2, "width": "1..4", "tokens": 2}}, source="big.toml")
    assert len(g) == 400 and "big.toml: expanding" in err.getvalue()
    err.truncate(0)
    with progress.quiet():
        parse_grid({"product": {"depth": 2, "width": "1..4", "tokens": 2}})
    assert err.getvalue() == ""


def test_product_semantics():
    # a list is explicit values, a string an inclusive range; rank "all" = 1..d_{i-1}
    g = parse_grid({"product": {"depth": 1, "width": [1, 3], "tokens": "1..2"}})
    assert {s.widths for s in g} == {(1, 1), (1, 3), (3, 1), (3, 3)}
    assert len(g) == 2 * (1 + 1 + 3 + 3)
    # given ranks: those at most d_{i-1} per layer; skip only with equal widths
    g = parse_grid({"product": {"depth": 2, "width": "2..3", "rank": [2, 3], "tokens": 2, "skip": True}})
    assert [(s.widths, s.ranks) for s in g] == [
        ((2, 2, 2), (2, 2)),
        ((3, 3, 3), (2, 2)),
        ((3, 3, 3), (2, 3)),
        ((3, 3, 3), (3, 2)),
        ((3, 3, 3), (3, 3)),
    ]
    # the findings grids have the README's sizes; a repeat is computed once
    assert len(load_grid(ROOT / "sweeps" / "findings-t2.toml")) == 4400
    assert len(load_grid(ROOT / "sweeps" / "findings-t1.toml")) == 4440
    g = parse_grid(
        {
            "architecture": [{"widths": [2, 2], "ranks": [1], "tokens": 2}],
            "product": {"depth": 1, "width": 2, "tokens": 2},
        }
    )
    assert len(g) == 2 and g.duplicates == 1
