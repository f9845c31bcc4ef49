"""The golden files of what the Macaulay2 code of Alexandr, Duan and Montúfar computes: where they are, how they
are named, and how they check themselves (:func:`load_golden`); one part of :mod:`.their_code`.

Their repository (``yuliaalexandr/algebraic-invariants-of-lightning-self-attention`` at d57db82) was run on its own
by ``scripts/aldm_golden.py``, which keeps, per case ``(d, at, t)``, their coordinates, the members of each family
as their helpers return them and the implicit ideal their driver eliminates, as gzip'd JSON golden files shipped
with the package (``ag_attention/_reproduce/related/data/aldm/``, read through :mod:`importlib.resources`;
provenance inside each: commit, blob ids, the driver lines run verbatim, the deviations, Macaulay2's version).

The golden files check themselves: ``MANIFEST.json`` beside them (written by the script) records the sha256 of
each file and the commit and blob ids of their code; :func:`load_golden` refuses, with a
:class:`GoldenFileError` naming the file and the fault, a file that is not in the manifest, whose bytes do not have
the recorded digest (checked before anything is parsed), that is not gzip'd JSON, that does not follow the schema
(:func:`validate_golden`: the keys, their types, and consistent lengths, e.g. one name in ``parameter_ring`` per
variable of the parametrization) or whose provenance is not :data:`THEIR_COMMIT` and :data:`THEIR_BLOBS`.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import re
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, NoReturn, cast

from ..._bounded import gunzip_bounded, loads_json, read_bounded
from ..._errors import InvalidArgumentError
from .coordinates import REPOSITORY, Label

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:  # Python 3.10
    from importlib.abc import Traversable

__all__ = [
    "GOLDEN_DIRECTORY",
    "MANIFEST",
    "MAX_GOLDEN_BYTES",
    "GOLDEN_SCHEMA",
    "MANIFEST_SCHEMA",
    "THEIR_COMMIT",
    "THEIR_COMMIT_DATE",
    "THEIR_BLOBS",
    "FAMILY_OF",
    "MEMBER_CASES",
    "MULTIDEGREE_CASES",
    "IDEAL_CASES",
    "Terms",
    "GoldenFileError",
    "Golden",
    "golden_name",
    "parameter_ring",
    "golden_manifest",
    "validate_golden",
    "load_golden",
    "verify_golden",
    "golden_available",
]

#: where the golden files are: package data (in the wheel as in a checkout)
GOLDEN_DIRECTORY: Traversable = importlib.resources.files("ag_attention._reproduce.related") / "data" / "aldm"
#: the file beside them with the sha256 of each and the provenance they share
MANIFEST = "MANIFEST.json"
#: a golden file (compressed, and decompressed) or the manifest longer than this is refused unread: the largest
#: golden file decompresses to 0.83 MB; a damaged copy (a gzip bomb) stops here, not at a MemoryError
MAX_GOLDEN_BYTES = 32 << 20
MAX_MANIFEST_BYTES = 1 << 20
GOLDEN_SCHEMA = "ag-attention/aldm-golden/v1"
MANIFEST_SCHEMA = "ag-attention/aldm-golden-manifest/v1"
#: their commit the golden files come from, its date, and the git blob id of each of their files there
#: (``scripts/aldm_golden.py`` checks the blobs before it runs anything; the loader checks each file's record)
THEIR_COMMIT = "d57db8210fbd5b6396709d2534f11bffab06dbdf"
THEIR_COMMIT_DATE = "2026-04-09T15:53:42-07:00"
THEIR_BLOBS = {
    "generateInvariants(t>1).m2": "2bcc30675e9b2ce2d780d2e50ac2659a3cd5c07b",
    "generateInvariants(t=1).m2": "3800b90961dcf77d14a7be1ad6409dd2aed81d44",
    "linearRelations.m2": "33e44cac7a13eff5d47ff1d1aa69e4163a164368",
    "lowRankA.m2": "00ee15da6b6403f1ac7c23d2f14f84cc6e037f28",
    "crossColumnCubics.m2": "9bfa4cb1027ad28b2c355bc54ba30bdf6c87fdf7",
    "contextSyzygies.m2": "405fa476c954501241a0a92dea70c3998231b274",
    "veroneseInvariants.m2": "acf05cc8e598d3b2b24319cac5ab44ee540b6302",
    "quarticResultants.m2": "50a6c9543ff7affe08399f2434348cea2a1bf035",
    "singleContextInvariants.m2": "3af844af1c7d977eb78c40f493f71f1042589ea4",
}
#: their family (their helper, as the golden files name it) -> the package's rebuilt family
FAMILY_OF = {
    "linear": "linear",
    "lowRank": "low-rank",
    "crossColumnCubics": "cubics",
    "contextSyzygies": "syzygies",
    "veronese2_internal": "veronese-2 (internal)",
    "veronese2_crossTarget": "veronese-2 (cross-target)",
    "veronese2_blockConcatenated": "veronese-2 (block)",
    "veronese2_all": "veronese-2",
    "quarticResultants": "resultants",
    "t1:lowRank": "t1-low-rank",
    "t1:chow21": "t1-lie",
}
#: the sizes (d, at, t) of issue 29: members, the cubics per torus multidegree, and their implicit ideal
MEMBER_CASES = ((2, 1, 2), (2, 2, 2), (3, 1, 2), (3, 2, 2), (3, 3, 2), (4, 2, 2), (4, 4, 2))
MULTIDEGREE_CASES = ((4, 3, 2), (4, 4, 2))
IDEAL_CASES = ((2, 1, 1), (2, 1, 2), (2, 2, 2), (3, 1, 1), (3, 1, 2), (3, 1, 3), (3, 2, 2), (3, 3, 2))

Terms = list[tuple[Fraction, tuple[tuple[int, int], ...]]]  # coefficient, ((variable, exponent), ...)


@dataclass
class Golden:
    """One golden file: their coordinates (labels in their order), parametrization, members, ideals, provenance."""

    d: int
    at: int
    t: int
    labels: list[Label]
    parametrization: list[Terms]
    families: dict[str, list[Terms]]
    skipped: list[dict[str, str]]
    ideal: dict[str, Any] | None
    rank_ideal: dict[str, Any] | None
    provenance: dict[str, Any]
    path: Traversable
    parameter_ring: list[str] = field(default_factory=list)


class GoldenFileError(InvalidArgumentError):
    """A golden file (or their manifest) is missing, unknown, altered or malformed: the message names the file and
    what is wrong with it; ``path`` is the file."""

    def __init__(self, path: Any, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def golden_name(d: int, at: int, t: int) -> str:
    """The name of the golden file of ``(d, at, t)``: ``d3_at1_t2.json.gz``."""
    return f"d{d}_at{at}_t{t}.json.gz"


def parameter_ring(d: int, t: int) -> list[str]:
    """The variables of their parameter ring ``R`` as Macaulay2 names them, in order (``d' = 1``): the entries
    ``a_(r,c)`` of ``A``, then those of ``V``, a 1 x d matrix ``v_(1,c)`` in their t > 1 driver and a vector ``v_c``
    in their t = 1 driver."""
    a = [f"a_({r},{c})" for r in range(1, d + 1) for c in range(1, d + 1)]
    return a + [f"v_(1,{c})" if t >= 2 else f"v_{c}" for c in range(1, d + 1)]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_GOLDEN_NAME = re.compile(r"d([1-9][0-9]*)_at([1-9][0-9]*)_t([1-9][0-9]*)\.json\.gz")


def golden_manifest(directory: Traversable | None = None) -> dict[str, Any]:
    """The manifest of the golden files in ``directory`` (default :data:`GOLDEN_DIRECTORY`): the sha256 of each
    ``d*_at*_t*.json.gz`` and the provenance they share (what ``scripts/aldm_golden.py`` writes to
    :data:`MANIFEST`)."""
    where = GOLDEN_DIRECTORY if directory is None else directory
    names = sorted(
        (e.name for e in where.iterdir() if _GOLDEN_NAME.fullmatch(e.name) and e.is_file()),
        # ignore: the names kept are those _GOLDEN_NAME fullmatches, so the match is not None
        key=lambda n: tuple(map(int, _GOLDEN_NAME.fullmatch(n).groups())),  # type: ignore[union-attr]
    )
    return {
        "schema": MANIFEST_SCHEMA,
        "repository": REPOSITORY,
        "commit": THEIR_COMMIT,
        "blobs": dict(THEIR_BLOBS),
        "sha256": {n: _sha256(where.joinpath(n).read_bytes()) for n in names},
    }


def _read_manifest(where: Traversable) -> dict[str, str]:
    """The digests of :data:`MANIFEST` in ``where``, after checking its form and its provenance."""
    path = where.joinpath(MANIFEST)
    if not path.is_file():
        raise GoldenFileError(path, "no manifest of the golden files (scripts/aldm_golden.py writes it)")
    try:
        raw = loads_json(read_bounded(path, MAX_MANIFEST_BYTES, "the manifest"), "the manifest")
    except InvalidArgumentError as exc:
        raise GoldenFileError(path, str(exc).removeprefix("the manifest: ")) from None
    if not isinstance(raw, dict) or raw.get("schema") != MANIFEST_SCHEMA:
        raise GoldenFileError(path, f"not a manifest of schema {MANIFEST_SCHEMA}")
    for key, expected in (("repository", REPOSITORY), ("commit", THEIR_COMMIT), ("blobs", THEIR_BLOBS)):
        if raw.get(key) != expected:
            raise GoldenFileError(path, f"{key} is {raw.get(key)!r}, the module expects {expected!r}")
    digests = raw.get("sha256")
    if not isinstance(digests, dict) or not all(
        isinstance(n, str) and _GOLDEN_NAME.fullmatch(n) and isinstance(h, str) and re.fullmatch("[0-9a-f]{64}", h)
        for n, h in digests.items()
    ):
        raise GoldenFileError(path, "'sha256' must map golden file names (d*_at*_t*.json.gz) to sha256 hex digests")
    return digests


# ------------------------------------------------------------------------------------- the schema, in code
def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _is(value: Any, typ: type) -> bool:
    return isinstance(value, typ) and not (typ is int and isinstance(value, bool))


class _Schema:
    """The checks of one file; every fault is a :class:`GoldenFileError` naming the file and the JSON path."""

    def __init__(self, path: Any):
        self.path = path
        self._coefficients: dict[str, Fraction] = {}

    def fail(self, where: str, problem: str) -> NoReturn:
        raise GoldenFileError(self.path, f"{where}: {problem}" if where else problem)

    def typed(self, value: Any, typ: type, where: str) -> Any:
        if not _is(value, typ):
            self.fail(where, f"is {_kind(value)}, expected {_kind(typ())}")
        return value

    def keys(self, obj: Any, where: str, required: dict[str, type], optional: dict[str, type] | None = None) -> None:
        self.typed(obj, dict, where or "the file")
        optional = optional or {}
        for key in required:
            if key not in obj:
                self.fail(where, f"missing key {key!r}")
        for key, value in obj.items():
            expected = required.get(key) or optional.get(key)
            if expected is None:
                self.fail(where, f"unknown key {key!r}")
            self.typed(value, expected, f"{where}.{key}" if where else key)

    def ints(
        self, value: Any, where: str, length: int | None = None, low: int | None = None, high: int | None = None
    ) -> list[int]:
        self.typed(value, list, where)
        if length is not None and len(value) != length:
            self.fail(where, f"has {len(value)} entries, expected {length}")
        for i, x in enumerate(value):
            self.typed(x, int, f"{where}[{i}]")
            if (low is not None and x < low) or (high is not None and x > high):
                self.fail(f"{where}[{i}]", f"{x} is outside {low}..{high}")
        return cast("list[int]", value)  # checked above: a list of ints

    def poly(self, value: Any, where: str, nvars: int) -> Terms:
        """``[[coefficient 'p/q', [[variable (0-based, < nvars), exponent >= 1], ...]], ...]``, as terms.  (Types
        compared with ``type(x) is``: JSON gives exactly list, str and int, and a boolean is not an int here.)"""
        self.typed(value, list, where)
        out: Terms = []
        for i, term in enumerate(value):
            if type(term) is not list or len(term) != 2 or type(term[0]) is not str or type(term[1]) is not list:
                self.fail(f"{where}[{i}]", "a term must be [coefficient (a string), monomial (a list)]")
            c = self._coefficients.get(term[0])
            if c is None:
                c = self._coefficients[term[0]] = self.coefficient(term[0], f"{where}[{i}]")
            mono = []
            for j, pair in enumerate(term[1]):
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not int or type(pair[1]) is not int:
                    self.fail(f"{where}[{i}][1][{j}]", "a factor must be [variable, exponent] (integers)")
                v, e = pair
                if not 0 <= v < nvars or e < 1:
                    self.fail(f"{where}[{i}][1][{j}]", f"variable {v} (of {nvars}) or exponent {e} out of range")
                mono.append((v, e))
            out.append((c, tuple(mono)))
        return out

    def coefficient(self, text: str, where: str) -> Fraction:
        if not re.fullmatch(r"-?[0-9]+(/[0-9]+)?", text):
            self.fail(where, f"coefficient {text!r} is not an integer or p/q")
        try:
            return Fraction(text)
        except ZeroDivisionError:
            self.fail(where, f"coefficient {text!r} has denominator 0")


_TOP: dict[str, type] = {
    "schema": str,
    "provenance": dict,
    "case": dict,
    "conventions": dict,
    "parameter_ring": list,
    "labels": list,
    "parametrization": list,
    "families": dict,
    "skipped": list,
}
_TOP_OPTIONAL: dict[str, type] = {"ideal": dict, "rank_ideal": dict}
_PROVENANCE: dict[str, type] = {
    "repository": str,
    "commit": str,
    "commit_date": str,
    "blobs": dict,
    "driver": str,
    "driver_lines_run_verbatim": list,
    "macaulay2": str,
    "deviations": list,
    "command": str,
}
_CASE: dict[str, type] = {"d": int, "at": int, "t": int, "d_prime": int, "targetRow": int, "targetCol": int}
_IDEAL: dict[str, type] = {"generators": list, "codim": int, "degree": int, "dim": int, "hilbert_numerator": list}
#: their families as the golden files name them, by driver
_THEIR_FAMILIES = {
    2: [k for k in FAMILY_OF if not k.startswith("t1:")],
    1: [k[3:] for k in FAMILY_OF if k.startswith("t1:")],
}


def validate_golden(raw: Any, d: int, at: int, t: int, path: Any = "golden file") -> Golden:
    """``raw`` (a parsed golden file) checked against the schema and the expected provenance, as a :class:`Golden`.

    The schema: the keys and their types (no unknown key), ``case`` is ``(d, at, t)`` with ``d' = 1`` and target
    entry (1, 1), ``parameter_ring`` is :func:`parameter_ring` (one name per variable, ``d^2 + d`` of them), every
    polynomial of ``parametrization`` uses those variables, ``labels`` and ``parametrization`` have one entry per
    coordinate, every member and generator uses the coordinates' variables, the families are theirs; the
    provenance is their repository at :data:`THEIR_COMMIT` with :data:`THEIR_BLOBS` and the driver of ``t``.  A
    fault is a :class:`GoldenFileError` naming ``path`` and the JSON path of the fault.
    """
    s = _Schema(path)
    s.keys(raw, "", _TOP, _TOP_OPTIONAL)
    if raw["schema"] != GOLDEN_SCHEMA:
        s.fail("schema", f"{raw['schema']!r}, expected {GOLDEN_SCHEMA!r}")
    prov = _checked_provenance(s, raw, d, at, t)
    ring = _checked_ring(s, raw, d, t)
    labels = _checked_labels(s, raw, d, t)
    if len(raw["parametrization"]) != len(labels):
        s.fail("parametrization", f"has {len(raw['parametrization'])} entries for {len(labels)} labels")
    parametrization = [s.poly(p, f"parametrization[{i}]", len(ring)) for i, p in enumerate(raw["parametrization"])]
    families = _checked_families(s, raw, t, len(labels))
    for i, entry in enumerate(raw["skipped"]):
        s.keys(entry, f"skipped[{i}]", {"family": str, "reason": str})
    ideals = {key: _checked_ideal(s, raw, key, len(labels)) for key in ("ideal", "rank_ideal")}
    return Golden(
        d,
        at,
        t,
        labels,
        parametrization,
        families,
        raw["skipped"],
        ideals["ideal"],
        ideals["rank_ideal"],
        prov,
        path,
        list(ring),
    )


def _checked_provenance(s: _Schema, raw: dict[str, Any], d: int, at: int, t: int) -> dict[str, Any]:
    """The case, the provenance (their repository, commit, blobs, the driver of ``t``) and the conventions."""
    s.keys(raw["case"], "case", _CASE)
    case = raw["case"]
    got = (case["d"], case["at"], case["t"], case["d_prime"], case["targetRow"], case["targetCol"])
    if got != (d, at, t, 1, 1, 1):
        s.fail("case", f"{case}, expected (d, at, t) = ({d}, {at}, {t}), d_prime = targetRow = targetCol = 1")
    prov: dict[str, Any] = raw["provenance"]  # s.keys checks that it is a dict (keyed by _PROVENANCE's names)
    s.keys(prov, "provenance", _PROVENANCE)
    driver = "generateInvariants(t>1).m2" if t >= 2 else "generateInvariants(t=1).m2"
    for key, expected in (
        ("repository", REPOSITORY),
        ("commit", THEIR_COMMIT),
        ("commit_date", THEIR_COMMIT_DATE),
        ("blobs", THEIR_BLOBS),
        ("driver", driver),
    ):
        if prov[key] != expected:
            s.fail(f"provenance.{key}", f"{prov[key]!r}, expected {expected!r}")
    for i, span in enumerate(prov["driver_lines_run_verbatim"]):
        s.ints(span, f"provenance.driver_lines_run_verbatim[{i}]", 2, 1)
    for i, x in enumerate(prov["deviations"]):
        s.typed(x, str, f"provenance.deviations[{i}]")
    for key, value in raw["conventions"].items():
        s.typed(value, str, f"conventions.{key}")
    return prov


def _checked_ring(s: _Schema, raw: dict[str, Any], d: int, t: int) -> list[str]:
    """``parameter_ring``: exactly :func:`parameter_ring` of ``(d, t)``."""
    ring: list[str] = raw["parameter_ring"]  # a list (the file's schema, checked by the caller); its names below
    for i, name in enumerate(ring):
        s.typed(name, str, f"parameter_ring[{i}]")
    expected_ring = parameter_ring(d, t)
    if ring != expected_ring:
        s.fail(
            "parameter_ring",
            f"{len(ring)} names {ring[:4]}{'...' if len(ring) > 4 else ''}, expected the "
            f"{len(expected_ring)} variables {expected_ring[:4]}... of A and V (one per variable)",
        )
    return ring


def _checked_labels(s: _Schema, raw: dict[str, Any], d: int, t: int) -> list[Label]:
    """``labels``: distinct cubic monomials, ``(coordinate, token)`` pairs for ``t >= 2``, coordinates for ``t = 1``."""
    labels: list[Label] = []
    for i, lab in enumerate(raw["labels"]):
        where = f"labels[{i}]"
        s.typed(lab, list, where)
        if len(lab) != 3:
            s.fail(where, f"has {len(lab)} entries, expected 3 (a cubic monomial)")
        if t >= 2:
            for j, pair in enumerate(lab):
                s.ints(pair, f"{where}[{j}]", 2, 1)
                if pair[0] > d or pair[1] > t:
                    s.fail(f"{where}[{j}]", f"(coordinate, token) = {tuple(pair)} outside d = {d}, t = {t}")
            labels.append(tuple(sorted(tuple(p) for p in lab)))
        else:
            labels.append(tuple(sorted(s.ints(lab, where, 3, 1, d))))
    if len(set(labels)) != len(labels):
        s.fail("labels", "a coordinate is listed twice")
    return labels


def _checked_families(s: _Schema, raw: dict[str, Any], t: int, nlabels: int) -> dict[str, list[Terms]]:
    """``families``: theirs (of the driver of ``t``; ``t1:`` prefixed for ``t = 1``), members in the coordinates."""
    prefix = "t1:" if t == 1 else ""
    families: dict[str, list[Terms]] = {}
    for name, fam in raw["families"].items():
        where = f"families.{name}"
        if name not in _THEIR_FAMILIES[min(t, 2)]:
            s.fail(where, f"not one of their families ({', '.join(_THEIR_FAMILIES[min(t, 2)])})")
        s.keys(fam, where, {"source": str, "call": str, "members": list})
        families[prefix + name] = [s.poly(m, f"{where}.members[{i}]", nlabels) for i, m in enumerate(fam["members"])]
    return families


def _checked_ideal(s: _Schema, raw: dict[str, Any], key: str, nlabels: int) -> dict[str, Any] | None:
    """The ideal under ``key`` (``ideal`` or ``rank_ideal``; ``None`` when absent), generators in the coordinates."""
    if key not in raw:
        return None
    entry = raw[key]
    s.keys(entry, key, _IDEAL)
    s.ints(entry["hilbert_numerator"], f"{key}.hilbert_numerator")
    if not entry["hilbert_numerator"]:
        s.fail(f"{key}.hilbert_numerator", "is empty")
    return {
        **entry,
        "generators": [s.poly(g, f"{key}.generators[{i}]", nlabels) for i, g in enumerate(entry["generators"])],
    }


def _read(where: Traversable, name: str, digests: dict[str, str]) -> Any:
    """The parsed content of golden file ``name``: listed in the manifest, its bytes of the recorded digest (checked
    before parsing), gzip'd JSON."""
    path = where.joinpath(name)
    if name not in digests:
        if path.is_file():
            raise GoldenFileError(
                path, f"an unknown file: not in {MANIFEST} (scripts/aldm_golden.py lists the files it writes)"
            )
        raise GoldenFileError(
            path, f"no golden file of that name (not in {MANIFEST}; scripts/aldm_golden.py writes them)"
        )
    if not path.is_file():
        raise GoldenFileError(path, f"missing: {MANIFEST} lists it")
    try:
        data = read_bounded(path, MAX_GOLDEN_BYTES, "the file")
    except InvalidArgumentError as exc:
        raise GoldenFileError(path, str(exc).removeprefix("the file: ")) from None
    digest = _sha256(data)
    if digest != digests[name]:
        raise GoldenFileError(
            path,
            f"sha256 {digest[:16]}... differs from {MANIFEST}'s {digests[name][:16]}... "
            "(the file was altered or truncated)",
        )
    try:
        return loads_json(gunzip_bounded(data, MAX_GOLDEN_BYTES, "the file"), "the file")
    except InvalidArgumentError as exc:
        raise GoldenFileError(path, str(exc).removeprefix("the file: ")) from None


def load_golden(d: int, at: int, t: int, directory: Traversable | None = None) -> Golden:
    """The golden file of ``(d, at, t)`` in ``directory`` (default :data:`GOLDEN_DIRECTORY`), checked against the
    manifest (its sha256, before parsing) and :func:`validate_golden`; a :class:`GoldenFileError` naming the file
    when it is unknown, missing, altered or malformed."""
    where = GOLDEN_DIRECTORY if directory is None else directory
    name = golden_name(d, at, t)
    return validate_golden(_read(where, name, _read_manifest(where)), d, at, t, where.joinpath(name))


def verify_golden(directory: Traversable | None = None) -> list[str]:
    """Every golden file of the manifest in ``directory`` loaded and validated (:func:`load_golden`), and no
    unknown ``d*_at*_t*.json.gz`` beside them; the names checked.  A :class:`GoldenFileError` otherwise."""
    where = GOLDEN_DIRECTORY if directory is None else directory
    digests = _read_manifest(where)
    for entry in where.iterdir():
        if entry.name not in digests and (_GOLDEN_NAME.fullmatch(entry.name) or entry.name.endswith(".json.gz")):
            raise GoldenFileError(entry, f"an unknown file: not in {MANIFEST}")
    for name in digests:
        m = _GOLDEN_NAME.fullmatch(name)
        assert m is not None  # _read_manifest checked the names
        d, at, t = map(int, m.groups())
        validate_golden(_read(where, name, digests), d, at, t, where.joinpath(name))
    return sorted(digests)


def golden_available(directory: Traversable | None = None) -> bool:
    """The manifest and a golden file of every case compared (:data:`MEMBER_CASES`, :data:`MULTIDEGREE_CASES`,
    :data:`IDEAL_CASES`) are there (their content is checked when loaded)."""
    where = GOLDEN_DIRECTORY if directory is None else directory
    try:
        digests = _read_manifest(where)
    except GoldenFileError:
        return False
    cases = set(MEMBER_CASES) | set(MULTIDEGREE_CASES) | set(IDEAL_CASES)
    return all(golden_name(*c) in digests and where.joinpath(golden_name(*c)).is_file() for c in cases)
