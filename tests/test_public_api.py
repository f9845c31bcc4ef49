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
    for name in ("Architecture", "Parametrization", "dimension", "numerical_dimension", "fibers", "implicitize",
                 "certify", "degree", "DimensionResult", "NumericalResult", "FiberResult", "Implicitization",
                 "DegreeResult", "PointVerdict", "AgAttentionError", "InvalidArgumentError", "provenance",
                 "upper_bounds", "UpperBound"):
        assert name in ag_attention.__all__, name


def test_the_readme_imports_only_from_the_top_level():
    deep = re.findall(r"^(?:>>> )?(?:from|import) ag_attention\.[\w.]+", (ROOT / "README.md").read_text(), flags=re.M)
    assert deep == [], f"the README teaches deep imports: {deep}"


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
