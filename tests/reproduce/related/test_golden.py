"""The golden files of their Macaulay2 code check themselves (ag_attention._reproduce.related.golden).

The files ship as package data with ``MANIFEST.json`` (the sha256 of each, their commit and blob ids); the loader
checks the digest before parsing, then the schema and the provenance.  Every fault (an altered byte, a truncated
gzip, a missing key, a wrong type, a parameter ring of the wrong length, an unknown file, another commit) is a
GoldenFileError naming the file and the fault, never a KeyError/IndexError/AttributeError.  ``parameter_ring``
holds one name per variable (``a_(1,1)``, not ``a_(1`` and ``1)``); ``scripts/aldm_golden.py --fix-ring`` migrated
the files written before that, and its result is what a fresh run gives.
"""

import copy
import gzip
import hashlib
import importlib.util
import json
import random
import re
import shutil
from pathlib import Path

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.related.coordinates import their_coordinates
from ag_attention._reproduce.related.golden import (
    GOLDEN_DIRECTORY,
    IDEAL_CASES,
    MANIFEST,
    MAX_GOLDEN_BYTES,
    MEMBER_CASES,
    MULTIDEGREE_CASES,
    THEIR_BLOBS,
    THEIR_COMMIT,
    GoldenFileError,
    golden_available,
    golden_manifest,
    golden_name,
    load_golden,
    parameter_ring,
    validate_golden,
    verify_golden,
)

ROOT = Path(__file__).resolve().parents[3]
CASES = sorted(set(MEMBER_CASES) | set(MULTIDEGREE_CASES) | set(IDEAL_CASES))
SMALL = (2, 1, 2)


def _script():
    spec = importlib.util.spec_from_file_location("aldm_golden", ROOT / "scripts" / "aldm_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _raw(case=SMALL):
    return json.loads(gzip.decompress((GOLDEN_DIRECTORY / golden_name(*case)).read_bytes()))


def _gzip(raw) -> bytes:
    return gzip.compress(json.dumps(raw).encode(), mtime=0)


def _directory(tmp_path, files, manifest=True):
    """A directory holding ``files`` (name -> bytes) and, if asked, their manifest."""
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    if manifest:
        (tmp_path / MANIFEST).write_text(json.dumps(golden_manifest(tmp_path)))
    return tmp_path


# --------------------------------------------------------------------------------------------- the real files
def test_the_shipped_files_all_validate_against_their_manifest():
    names = verify_golden()
    assert names == sorted(golden_name(*c) for c in CASES) and len(names) == 11
    manifest = json.loads((GOLDEN_DIRECTORY / MANIFEST).read_text())
    assert manifest["commit"] == THEIR_COMMIT and manifest["blobs"] == THEIR_BLOBS
    for name in names:
        assert manifest["sha256"][name] == hashlib.sha256((GOLDEN_DIRECTORY / name).read_bytes()).hexdigest()
    assert manifest == golden_manifest()  # the manifest is what the script would write now
    assert golden_available()


def test_the_files_are_package_data_not_the_checkouts_tests():
    assert Path(str(GOLDEN_DIRECTORY)).is_relative_to(ROOT / "ag_attention")
    assert not (ROOT / "tests" / "data" / "aldm").exists()


@pytest.mark.parametrize("case", CASES)
def test_parameter_ring_has_one_name_per_variable(case):
    d, at, t = case
    raw = _raw(case)  # the file as stored (verify_golden, above, runs the loader on every file)
    ring = raw["parameter_ring"]
    assert ring == parameter_ring(d, t)
    assert len(ring) == d * d + d == len(set(ring))  # A is d x d, V is 1 x d (d' = 1)
    used = {v for poly in raw["parametrization"] for _, mono in poly for v, _ in mono}
    assert used == set(range(len(ring)))  # exactly as many names as the parametrization's variables


def test_parameter_ring_names_are_theirs():
    assert load_golden(2, 2, 2).parameter_ring == parameter_ring(2, 2)
    assert _raw((2, 1, 2))["parameter_ring"] == ["a_(1,1)", "a_(1,2)", "a_(2,1)", "a_(2,2)", "v_(1,1)", "v_(1,2)"]
    assert _raw((2, 1, 1))["parameter_ring"] == ["a_(1,1)", "a_(1,2)", "a_(2,1)", "a_(2,2)", "v_1", "v_2"]


def _text(poly, ring):
    """A polynomial of the file written out as Macaulay2 would: ``1*a_(1,1)*v_(1,1)+...``."""
    return "+".join(c + "".join(f"*{ring[v]}" + (f"^{e}" if e > 1 else "") for v, e in mono) for c, mono in poly)


@pytest.mark.parametrize("case", [(2, 1, 1), (2, 2, 2), (3, 1, 3), (4, 4, 2)])
def test_the_ring_names_are_the_variables_of_the_parametrization_text(case):
    """Metamorphic: write their parametrization out with the ring's names and read the variables back: they are the
    ring's names; renamed to the package's (a_(r,c) -> a_r_c, v_(1,c) and v_c -> v_c) they are the variables, in
    order, of the package's rebuilt coordinates (check_parametrization pairs them by position)."""
    d, _, t = case
    raw = _raw(case)
    ring = raw["parameter_ring"]
    text = " ".join(_text(p, ring) for p in raw["parametrization"])
    found = set(re.findall(r"[av]_(?:\(\d+,\d+\)|\d+)", text))
    assert found == set(ring)
    renamed = [re.sub(r"^v_\(1,(\d+)\)$", r"v_\1", re.sub(r"^a_\((\d+),(\d+)\)$", r"a_\1_\2", n)) for n in ring]
    assert renamed == list(their_coordinates(d, t, 1, None).ring.names())


# ------------------------------------------------------------------------------------------- the failure modes
def _refused(directory, match, case=SMALL):
    with pytest.raises(GoldenFileError, match=match) as info:
        load_golden(*case, directory=directory)
    assert isinstance(info.value, InvalidArgumentError)
    assert golden_name(*case) in str(info.value) or MANIFEST in str(info.value)
    return info.value


def test_an_altered_byte_is_a_digest_mismatch_naming_the_file(tmp_path):
    data = bytearray((GOLDEN_DIRECTORY / golden_name(*SMALL)).read_bytes())
    _directory(tmp_path, {golden_name(*SMALL): bytes(data)})
    assert load_golden(*SMALL, directory=tmp_path).labels  # the copy with its manifest loads
    data[len(data) // 2] ^= 0x01
    (tmp_path / golden_name(*SMALL)).write_bytes(bytes(data))
    err = _refused(tmp_path, r"d2_at1_t2\.json\.gz: sha256 [0-9a-f]{16}\.\.\. differs from MANIFEST\.json's")
    assert err.path.endswith("d2_at1_t2.json.gz")


def test_a_truncated_gzip_is_refused(tmp_path):
    data = (GOLDEN_DIRECTORY / golden_name(*SMALL)).read_bytes()
    _directory(tmp_path, {golden_name(*SMALL): data[:-40]}, manifest=False)
    shutil.copy(GOLDEN_DIRECTORY / MANIFEST, tmp_path / MANIFEST)
    _refused(tmp_path, "differs from MANIFEST.json")  # against the shipped manifest: the digest
    _directory(tmp_path, {}, manifest=True)  # a manifest that records the truncated file: gzip itself refuses it
    _refused(tmp_path, r"d2_at1_t2\.json\.gz: not a gzip'd file")


def test_gzip_that_is_not_json_is_refused(tmp_path):
    _directory(tmp_path, {golden_name(*SMALL): gzip.compress(b'{"schema": ')})
    _refused(tmp_path, "not JSON")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda r: r.pop("labels"), r"missing key 'labels'"),
        (lambda r: r["provenance"].pop("commit"), r"provenance: missing key 'commit'"),
        (lambda r: r["families"]["lowRank"].pop("members"), r"families\.lowRank: missing key 'members'"),
        (lambda r: r["ideal"].pop("degree"), r"ideal: missing key 'degree'"),
        (lambda r: r.update(extra=1), r"unknown key 'extra'"),
        (lambda r: r.update(parametrization="x"), r"parametrization: is a string, expected a list"),
        (
            lambda r: r["parametrization"].__setitem__(0, {"1": 2}),
            r"parametrization\[0\]: is an object, expected a list",
        ),
        (lambda r: r["case"].update(d="2"), r"case\.d: is a string, expected an integer"),
        (lambda r: r["case"].update(d=True), r"case\.d: is a boolean, expected an integer"),
        (lambda r: r["ideal"].update(codim=2.0), r"ideal\.codim: is a number, expected an integer"),
        (lambda r: r["parametrization"][0][0].__setitem__(0, 1), r"parametrization\[0\]\[0\]: a term must be"),
        (lambda r: r["parametrization"][0][0].__setitem__(0, "1.5"), r"coefficient '1\.5' is not an integer or p/q"),
        (lambda r: r["parametrization"][0][0].__setitem__(0, "1/0"), r"denominator 0"),
        (lambda r: r["parametrization"][0][0][1].__setitem__(0, [6, 1]), r"variable 6 \(of 6\)"),
        (lambda r: r["families"]["linear"]["members"][0][0][1].__setitem__(0, [10, 1]), r"variable 10 \(of 10\)"),
        (lambda r: r["labels"].pop(), r"parametrization: has 10 entries for 9 labels"),
        (lambda r: r["labels"].__setitem__(1, r["labels"][0]), r"labels: a coordinate is listed twice"),
        (
            lambda r: r["labels"][0].__setitem__(0, [3, 1]),
            r"labels\[0\]\[0\]: \(coordinate, token\) = \(3, 1\) outside",
        ),
        (
            lambda r: r["families"].update(mine={"source": "", "call": "", "members": []}),
            r"families\.mine: not one of their families",
        ),
        (lambda r: r["case"].update(at=2), r"case: .* expected \(d, at, t\) = \(2, 1, 2\)"),
        (lambda r: r.update(schema="ag-attention/aldm-golden/v0"), r"schema: 'ag-attention/aldm-golden/v0'"),
        (lambda r: r["provenance"].update(commit="0" * 40), r"provenance\.commit: '0000.*expected 'd57db82"),
        (lambda r: r["provenance"]["blobs"].update({"lowRankA.m2": "0" * 40}), r"provenance\.blobs"),
        (lambda r: r["provenance"].update(driver="generateInvariants(t=1).m2"), r"provenance\.driver"),
    ],
)
def test_a_malformed_file_is_refused_with_its_fault(tmp_path, edit, match):
    raw = _raw()
    edit(raw)
    _directory(tmp_path, {golden_name(*SMALL): _gzip(raw)})  # the manifest records it: the schema refuses it
    _refused(tmp_path, match)


@pytest.mark.parametrize(
    "ring, match",
    [
        (
            ["a_(1", "1)", "a_(1", "2)", "a_(2", "1)", "a_(2", "2)", "v_(1", "1)", "v_(1", "2)"],
            r"parameter_ring: 12 names",
        ),
        (
            ["a_(1,1)", "a_(1,2)", "a_(2,1)", "a_(2,2)", "v_(1,1)"],
            r"parameter_ring: 5 names .* expected the 6 variables",
        ),
        (["a_(1,1)", "a_(1,2)", "a_(2,1)", "a_(2,2)", "v_1", "v_2"], r"parameter_ring: 6 names"),  # the t = 1 names
        (["a_(1,1)", "a_(1,2)", "a_(2,1)", "a_(2,2)", "v_(1,1)", 2], r"parameter_ring\[5\]: is an integer"),
    ],
)
def test_a_parameter_ring_of_the_wrong_length_or_names_is_refused(tmp_path, ring, match):
    raw = _raw()
    raw["parameter_ring"] = ring
    _directory(tmp_path, {golden_name(*SMALL): _gzip(raw)})
    _refused(tmp_path, match)


def test_an_unknown_file_is_refused(tmp_path):
    _directory(tmp_path, {golden_name(*SMALL): (GOLDEN_DIRECTORY / golden_name(*SMALL)).read_bytes()})
    shutil.copy(tmp_path / golden_name(*SMALL), tmp_path / "d5_at1_t2.json.gz")  # not in the manifest
    _refused(tmp_path, r"d5_at1_t2\.json\.gz: an unknown file: not in MANIFEST\.json", case=(5, 1, 2))
    with pytest.raises(GoldenFileError, match=r"d5_at1_t2\.json\.gz: an unknown file"):
        verify_golden(tmp_path)
    with pytest.raises(GoldenFileError, match=r"d6_at1_t2\.json\.gz: no golden file of that name"):
        load_golden(6, 1, 2)
    (tmp_path / "d5_at1_t2.json.gz").unlink()
    assert verify_golden(tmp_path) == [golden_name(*SMALL)]
    (tmp_path / golden_name(*SMALL)).unlink()  # listed, not there
    _refused(tmp_path, r"missing: MANIFEST\.json lists it")


def test_a_missing_or_foreign_manifest_is_refused(tmp_path):
    _directory(tmp_path, {golden_name(*SMALL): (GOLDEN_DIRECTORY / golden_name(*SMALL)).read_bytes()}, manifest=False)
    _refused(tmp_path, r"MANIFEST\.json: no manifest of the golden files")
    assert not golden_available(tmp_path)
    manifest = golden_manifest(tmp_path)
    for key, value, match in [
        ("commit", "0" * 40, r"MANIFEST\.json: commit is '0000"),
        ("blobs", {}, r"MANIFEST\.json: blobs is \{\}"),
        ("schema", "v0", "not a manifest of schema"),
        ("sha256", {golden_name(*SMALL): "abc"}, "sha256 hex digests"),
    ]:
        (tmp_path / MANIFEST).write_text(json.dumps({**manifest, key: value}))
        _refused(tmp_path, match)
    (tmp_path / MANIFEST).write_text("{")
    _refused(tmp_path, r"MANIFEST\.json: not JSON")


def test_a_gzip_bomb_stops_at_the_limit_not_at_a_memory_error(tmp_path):
    """A copy whose manifest records it (so the digest passes) that expands 1,000-fold past the limit: refused after
    MAX_GOLDEN_BYTES + 1 bytes of output, whatever it would expand to."""
    bomb = gzip.compress(b"[" + b" " * (MAX_GOLDEN_BYTES + (1 << 20)) + b"]", compresslevel=9, mtime=0)
    assert len(bomb) < MAX_GOLDEN_BYTES // 100
    _directory(tmp_path, {golden_name(*SMALL): bomb})
    _refused(tmp_path, rf"d2_at1_t2\.json\.gz: decompresses to more than {MAX_GOLDEN_BYTES:,} bytes, the limit")
    two = _gzip(_raw()) + _gzip(_raw())  # two members: gzip.decompress would join them
    _directory(tmp_path, {golden_name(*SMALL): two})
    _refused(tmp_path, r"bytes after the gzip member \(one member expected\)")


def test_deep_json_is_refused_unparsed_not_a_recursion_error(tmp_path):
    _directory(tmp_path, {golden_name(*SMALL): gzip.compress(b"[" * 200_000 + b"]" * 200_000, mtime=0)})
    _refused(tmp_path, r"d2_at1_t2\.json\.gz: JSON nested more than 64 levels deep \(refused unparsed\)")
    (tmp_path / MANIFEST).write_bytes(b"[" * 100_000 + b"]" * 100_000)
    _refused(tmp_path, r"MANIFEST\.json: JSON nested more than 64 levels deep")


def test_an_oversized_file_is_refused_unread(tmp_path):
    _directory(tmp_path, {golden_name(*SMALL): _gzip(_raw())})
    (tmp_path / MANIFEST).write_bytes(b" " * ((1 << 20) + 1))
    _refused(tmp_path, r"MANIFEST\.json: longer than 1,048,576 bytes, the limit \(refused unread\)")


def test_random_damage_is_always_a_golden_file_error():
    """Any key deleted or any value replaced by one of another type, anywhere in a file: refused by the schema, or
    (a value the schema leaves free, e.g. a deviation's wording) accepted; never another exception."""
    base = _raw()
    paths = []

    def walk(node, path):
        paths.append(path)
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in children:
            walk(v, path + (k,))

    walk(base, ())
    rng = random.Random(0)
    refused = 0
    for path in rng.sample(paths[1:], 300):
        raw = copy.deepcopy(base)
        parent = raw
        for k in path[:-1]:
            parent = parent[k]
        if isinstance(parent, dict) and rng.random() < 0.5:
            del parent[path[-1]]
        else:
            old = parent[path[-1]]
            parent[path[-1]] = rng.choice([v for v in (None, 1.5, "x", [], {}, -1, True) if type(v) is not type(old)])
        try:
            validate_golden(raw, *SMALL, path="damaged")
        except GoldenFileError as exc:
            assert str(exc).startswith("damaged: ")
            refused += 1
    assert refused > 250


# --------------------------------------------------------------------------------------------- the migration
def test_fix_ring_joins_the_names_split_at_commas():
    script = _script()
    for d, t in [(2, 1), (2, 2), (3, 3), (4, 2)]:
        ring = parameter_ring(d, t)
        split = [piece.strip() for piece in ", ".join(ring).split(",")]  # what the old parser kept
        assert len(split) > len(ring)
        assert script.fix_ring(split) == ring
        assert script.fix_ring(ring) == ring  # already migrated: unchanged
        assert script.ring_names("{" + ", ".join(ring) + "}") == ring  # what the parser keeps now
    with pytest.raises(script.GoldenError, match="unbalanced"):
        script.fix_ring(["a_(1", "v_1"])
    with pytest.raises(script.GoldenError, match="unbalanced"):
        script.ring_names("{a_(1,1))}")


def test_the_migration_gives_the_shipped_bytes(tmp_path):
    """A file as the old parser wrote it (the ring split at every comma), migrated by --fix-ring: the shipped bytes
    (which a fresh run of their code gives at (2,1,1), (2,1,2), (2,2,2)), and a manifest that validates."""
    script = _script()
    for case in [(2, 1, 1), (2, 1, 2)]:
        raw = _raw(case)
        raw["parameter_ring"] = [piece.strip() for piece in ", ".join(raw["parameter_ring"]).split(",")]
        script.write(tmp_path / golden_name(*case), raw)
    assert script.main(["--fix-ring", "--out", str(tmp_path)]) == 0
    for case in [(2, 1, 1), (2, 1, 2)]:
        assert (tmp_path / golden_name(*case)).read_bytes() == (GOLDEN_DIRECTORY / golden_name(*case)).read_bytes()
    assert verify_golden(tmp_path) == [golden_name(2, 1, 1), golden_name(2, 1, 2)]
    assert script.migrate_ring(tmp_path) == []  # a second migration changes nothing
