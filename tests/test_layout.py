"""The tests mirror the package: one test module per module, and no test reaches for a private name.

``ag_attention/_<subpackage>/<module>.py`` is tested by ``tests/<subpackage>/test_<module>.py`` (the leading
underscore of each private package or module dropped), ``ag_attention/_<module>.py`` by
``tests/test_<module>.py``.  A module without a test module of its own is listed in :data:`NO_TEST_MODULE`
with the reason; a test module that mirrors no module is listed in :data:`NOT_A_MIRROR`.
"""

import ast
import importlib
import types
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGE = ROOT / "ag_attention"
TESTS = ROOT / "tests"

#: package modules that need no test module of their own, and why
NO_TEST_MODULE = {
    "ag_attention/__init__.py": "the public surface (re-exports): tested as a whole by tests/test_public_api.py",
    "ag_attention/__main__.py": "python -m ag_attention: only calls _cli.main (tests/test_cli.py runs the command)",
    "ag_attention/_algebra/__init__.py": "re-exports of _algebra/degree.py",
    "ag_attention/_exact/__init__.py": "empty package file",
    "ag_attention/_exact/onelayer.py": "re-exports of differentials, factorization, rational and singular (each tested)",
    "ag_attention/_m2/__init__.py": "empty package file",
    "ag_attention/_models/__init__.py": "empty package file",
    "ag_attention/_numeric/__init__.py": "re-exports of the _numeric modules (each tested)",
    "ag_attention/_point/__init__.py": "re-exports of the _point modules (each tested)",
    "ag_attention/_reproduce/__init__.py": "a docstring only",
    "ag_attention/_reproduce/claims.py": "data only: the paper's results as an enum and their one-line statements",
    "ag_attention/_reproduce/theorem34/__init__.py": "re-exports of the theorem34 modules and of equations34's grids",
    "ag_attention/_sweep/__init__.py": "re-exports of the _sweep modules (each tested)",
    "ag_attention/_sweep/__main__.py": "python -m ag_attention._sweep: only calls cli.main (tests/sweep/test_store.py runs it)",
}

#: test modules that mirror no single module
NOT_A_MIRROR = {
    "tests/test_public_api.py": "the public surface as a whole: import ag_attention, its __all__, the README",
    "tests/test_packaging.py": "the wheel: built, installed and run outside the checkout",
    "tests/test_layout.py": "this file: the layout of the tests",
}

#: modules another engineer is writing together with their test modules: the test modules are allowed even before
#: the modules exist, and the modules do not require them
EXPECTED = {
    "tests/models/test_bounds.py": "ag_attention/_models/bounds.py",
    "tests/reproduce/test_certification.py": "ag_attention/_reproduce/certification.py",
}


def _public(name: str) -> str:
    return name[1:] if name.startswith("_") and not name.startswith("__") else name


def mirror(module: Path) -> Path:
    """The test module of a package module (both relative to the checkout)."""
    parts = module.relative_to("ag_attention").parts
    return Path("tests", *(_public(p) for p in parts[:-1]), "test_" + _public(Path(parts[-1]).stem) + ".py")


def package_modules() -> list[Path]:
    return sorted(p.relative_to(ROOT) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def all_test_modules() -> list[Path]:
    return sorted(p.relative_to(ROOT) for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)



def test_the_mirror():
    assert mirror(Path("ag_attention/_exact/linalg.py")) == Path("tests/exact/test_linalg.py")
    assert mirror(Path("ag_attention/_reproduce/theorem34/report.py")) == Path("tests/reproduce/theorem34/test_report.py")
    assert mirror(Path("ag_attention/_cli.py")) == Path("tests/test_cli.py")


def test_every_module_has_its_test_module_or_a_reason():
    expected_modules = set(EXPECTED.values())
    missing = [f"{m} -> {mirror(m)}" for m in package_modules()
               if not (ROOT / mirror(m)).is_file() and m.as_posix() not in NO_TEST_MODULE
               and m.as_posix() not in expected_modules]
    assert missing == [], "modules without a test module (write one, or say why in NO_TEST_MODULE): " + ", ".join(missing)


def test_the_exceptions_are_true_and_give_a_reason():
    modules = {m.as_posix() for m in package_modules()}
    for module, reason in NO_TEST_MODULE.items():
        assert module in modules, f"{module} is listed in NO_TEST_MODULE but does not exist"
        assert not (ROOT / mirror(Path(module))).is_file(), f"{module} has a test module now: drop it from the list"
        assert reason.strip(), module
    for test, reason in NOT_A_MIRROR.items():
        assert (ROOT / test).is_file() and reason.strip(), test


def test_every_test_module_mirrors_a_module():
    mirrored = {mirror(m).as_posix() for m in package_modules()}
    strays = [t.as_posix() for t in all_test_modules()
              if t.as_posix() not in mirrored and t.as_posix() not in NOT_A_MIRROR and t.as_posix() not in EXPECTED]
    assert strays == [], "test modules that mirror no module (move their tests, or say why in NOT_A_MIRROR): " + \
        ", ".join(strays)


def test_test_directories_are_packages():
    """Test modules of the same name in two directories (tests/test_cli.py, tests/sweep/test_cli.py) need them."""
    dirs = {t.parent for t in all_test_modules()}
    assert sorted(str(d) for d in dirs if not (ROOT / d / "__init__.py").is_file()) == []


def _private_uses(path: Path) -> list[str]:
    """``from x import _name`` of anything but a module, and ``x._name`` (IPython's ``_repr_*_`` hooks aside)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    obj = getattr(importlib.import_module(node.module), alias.name, None)
                    if not isinstance(obj, types.ModuleType):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (node.attr.startswith("_repr_") and node.attr.endswith("_")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", [ROOT / t for t in all_test_modules()] + [TESTS / "conftest.py", TESTS / "helpers.py"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_tests_use_no_private_names(path):
    assert _private_uses(path) == []
