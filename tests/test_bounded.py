"""Bounded readers: files, gzip and JSON read within limits fixed before reading (ag_attention/_bounded.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._bounded import MAX_JSON_DEPTH, gunzip_bounded, json_nesting, loads_json, read_bounded, shown_name


@pytest.mark.parametrize(
    "text, depth",
    [
        (b"1", 0),
        (b"[]", 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'["[[[[", "]]]"]', 1),  # brackets inside strings do not count
        (b'["\\"[[[", {}]', 2),  # nor after an escaped quote
        (b"[" * 70 + b"]" * 70, 70),
    ],
)
def test_nesting_counts_arrays_and_objects_outside_strings(text, depth):
    assert json_nesting(text, 100) == depth


def test_nesting_stops_counting_past_its_limit_on_huge_input():
    assert json_nesting(b"[" * (3 << 20), 10) > 10  # stops after the first megabyte chunk


@pytest.mark.parametrize(
    "raw, match",
    [
        (b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), "nested more than 64 levels deep"),
        (b'{"a": 1, "a": 2}', "the key a appears twice"),
        (b"[NaN]", "NaN is not a JSON number"),
        (b"\xff", "not UTF-8"),
        (b"{", "not JSON"),
    ],
)
def test_loads_json_refuses_with_the_source_named(raw, match):
    with pytest.raises(InvalidArgumentError, match=match) as info:
        loads_json(raw, "cfg.json")
    assert str(info.value).startswith("cfg.json: ")


def test_loads_json_reads_what_json_reads_at_the_depth_limit():
    deep = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    assert loads_json(deep, "x") == json.loads(deep)
    assert loads_json(b'{"b": [1.5, "s", null, true]}', "x") == {"b": [1.5, "s", None, True]}


def test_read_bounded_reads_up_to_its_limit_and_refuses_one_byte_more(tmp_path: Path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100) == b"x" * 100
    with pytest.raises(InvalidArgumentError, match=r"f: longer than 99 bytes, the limit \(refused unread\)"):
        read_bounded(path, 99)


def test_gunzip_bounded_stops_a_bomb_at_the_limit():
    data = b"0123456789" * 1000
    assert gunzip_bounded(gzip.compress(data), len(data), "g") == data
    bomb = gzip.compress(b"\0" * (64 << 20))
    assert len(bomb) < 100_000
    with pytest.raises(InvalidArgumentError, match=r"g: decompresses to more than 1,000,000 bytes"):
        gunzip_bounded(bomb, 1_000_000, "g")


@pytest.mark.parametrize(
    "data, match",
    [
        (b"plain text", "not a gzip'd file"),
        (gzip.compress(b"abc", mtime=0)[:-6], "truncated"),
        (gzip.compress(b"abc", mtime=0) + gzip.compress(b"d", mtime=0), "bytes after the gzip member"),
    ],
    ids=["plain", "truncated", "two-members"],  # (the same ids in every xdist worker: no timestamp in them)
)
def test_gunzip_bounded_refuses_what_is_not_one_whole_member(data, match):
    with pytest.raises(InvalidArgumentError, match=match):
        gunzip_bounded(data, 1000, "g")


def test_shown_name_escapes_what_could_pass_for_report_text():
    assert shown_name("layers.0.attn.q_proj.weight") == "layers.0.attn.q_proj.weight"
    assert shown_name("a\nb") == "'a\\nb'"
    assert shown_name("\x1b[2J") == "'\\x1b[2J'"
    long = shown_name("é" * 300)
    assert long.endswith("(300 characters)") and len(long) < 200
