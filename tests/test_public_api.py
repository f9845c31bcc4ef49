"""The public surface: what ``import ag_attention`` gives, and what the README teaches."""

import re
from pathlib import Path

import ag_attention

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_exists_and_is_documented():
    for name in ag_attention.__all__:
        obj = getattr(ag_attention, name)
        assert (obj.__doc__ or "").strip(), f"ag_attention.{name} has no docstring"
    assert len(set(ag_attention.__all__)) == len(ag_attention.__all__)


def test_the_verbs_and_types_a_user_needs_are_top_level():
    for name in ("Architecture", "Parametrization", "dimension", "numerical_dimension", "fibers", "implicitize",
                 "certify", "degree", "DimensionResult", "NumericalResult", "FiberResult", "Implicitization",
                 "DegreeResult", "PointVerdict", "AgAttentionError", "InvalidArgumentError", "provenance"):
        assert name in ag_attention.__all__, name


def test_the_readme_imports_only_from_the_top_level():
    deep = re.findall(r"^(?:>>> )?(?:from|import) ag_attention\.[\w.]+", (ROOT / "README.md").read_text(), flags=re.M)
    assert deep == [], f"the README teaches deep imports: {deep}"


def test_errors_share_one_base():
    for name in ag_attention.__all__:
        obj = getattr(ag_attention, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, ag_attention.AgAttentionError), name
