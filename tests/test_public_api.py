"""The public surface: what ``import ag_attention`` gives, and what the README teaches."""

import re
from pathlib import Path

import numpy as np
import pytest

import ag_attention
from ag_attention import Architecture, dimension
from ag_attention._errors import AgAttentionError, InvalidArgumentError
from ag_attention._exact import linalg
from ag_attention._exact.field import GFp
from ag_attention._exact.onelayer import certify, quadrics
from ag_attention._network import forward, unflatten
from ag_attention._numeric import numerical_dimension

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_exists_and_is_documented():
    for name in ag_attention.__all__:
        obj = getattr(ag_attention, name)
        assert (obj.__doc__ or "").strip(), f"ag_attention.{name} has no docstring"
    assert len(set(ag_attention.__all__)) == len(ag_attention.__all__)


def test_the_verbs_and_types_a_user_needs_are_top_level():
    for name in (
        "Architecture",
        "Parametrization",
        "dimension",
        "numerical_dimension",
        "fibers",
        "implicitize",
        "certify",
        "degree",
        "DimensionResult",
        "NumericalResult",
        "FiberResult",
        "Implicitization",
        "DegreeResult",
        "PointVerdict",
        "AgAttentionError",
        "InvalidArgumentError",
        "provenance",
        "upper_bounds",
        "UpperBound",
    ):
        assert name in ag_attention.__all__, name


def test_the_readme_imports_only_from_the_top_level():
    deep = re.findall(r"^(?:>>> )?(?:from|import) ag_attention\.[\w.]+", (ROOT / "README.md").read_text(), flags=re.M)
    assert deep == [], f"the README teaches deep imports: {deep}"


def test_the_readme_is_a_door():
    """The README is short and gives the two commands; CI runs its test command (.ci/run)."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250, "the README is a door: the manual lives in docs/manual/"
    commands = re.search(r"## The two commands\n.*?```sh\n(.*?)```", readme, re.S)
    assert commands is not None
    assert [line.split("#")[0].strip() for line in commands.group(1).splitlines() if line.split("#")[0].strip()] == [
        "make reproduce",
        "make test",
    ]
    ci = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert ci[-1] == "make test"


def test_the_readme_links_and_paths_exist():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    paths = re.findall(r"`((?:docs|bench|examples|m2scripts|ag_attention|tests|sweeps|scripts)/[\w./-]*)`", readme)
    assert links and paths
    for target in links + paths:
        assert (ROOT / target).exists(), f"the README names {target}, which does not exist"
    for room in ("_exact", "_m2", "_models", "_algebra", "_landscape", "_numeric", "_point", "_reproduce", "_sweep"):
        assert f"`ag_attention/{room}/`" in readme, f"the README's map of the package omits {room}"
    assert "tests/data/aldm" not in readme  # the golden files are package data now


def test_errors_share_one_base():
    for name in ag_attention.__all__:
        obj = getattr(ag_attention, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, ag_attention.AgAttentionError), name


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda: dimension(Architecture((3, 3), (2,)), threads=-1), "threads"),
        (lambda: dimension(Architecture((3, 3), (2,)), threads="x"), "threads"),
        (lambda: dimension(Architecture((3, 3), (2,)), threads=True), "threads"),
        (lambda: numerical_dimension(Architecture((3, 3), (2,), normalized=True), min_gap="x"), "min_gap"),
        (lambda: numerical_dimension(Architecture((3, 3), (2,), normalized=True), min_gap=float("nan")), "min_gap"),
        (lambda: numerical_dimension(Architecture((3, 3), (2,), normalized=True), max_doublings=-1), "max_doublings"),
        (lambda: Architecture((3, 3), (2,)).block("Z", 1), "block"),
        (lambda: Architecture((3, 3), (2,)).block("Q", 7), "block"),
        (lambda: unflatten(Architecture((3, 3), (2,)), np.zeros(5)), "theta"),
        (lambda: forward(Architecture((3, 3), (2,)), GFp(101), np.zeros(21, dtype=np.int64), np.zeros((1, 2, 4))), "X"),
        (lambda: GFp(101).einsum("ij,jk,kl->il", np.zeros((2, 2)), np.zeros((2, 2))), "spec"),
        (lambda: linalg.rank(np.zeros(3, dtype=np.int64), 101), "M"),
        (lambda: quadrics([1, 2], 2, 1), "x"),
        (lambda: certify([[1, 2], [3, 4]], [[1, 1]], dimension="5"), "dimension"),
        (lambda: certify([[1, 2], [3, 4]], [[1, 1]], dimension=5, rank_bound=0), "rank_bound"),
        (lambda: certify([[1, 2]], [[1, 1]], dimension=5), "A"),
        (lambda: certify("AV", [[1, 1]], dimension=5), "A"),
        (lambda: Architecture({4, 3}, (2,)), "widths"),  # a set has no order
        (lambda: Architecture((4, 3), (2,), temperature="2"), "temperature"),
        (lambda: Architecture((4, 3), (2,), parametrization=["QKV"]), "parametrization"),
        (lambda: Architecture.from_dict([("widths", (4, 3))]), "data"),
        (lambda: Architecture.from_dict({1: 2, "widths": (3, 3)}), "1"),
    ],
)
def test_errors_are_of_the_family_and_name_the_argument(call, named):
    with pytest.raises(AgAttentionError) as err:
        call()
    assert isinstance(err.value, InvalidArgumentError)
    assert named in str(err.value)
