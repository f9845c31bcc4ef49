"""The manual names the whole public surface, and only names that exist (issue 47, items 3 and 5).

docs/manual/api.md is the API by example: every name of ``ag_attention.__all__`` appears on it.  The pages of the
manual and of the mathematics (docs/manual/*.md, docs/math/*.md) name only functions, methods and modules of the
package that exist: a renamed or removed name fails here, not in a reader's session.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib
import re
from pathlib import Path

import ag_attention

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API_MANUAL = DOCS / "manual" / "api.md"


def test_every_public_name_is_in_the_api_manual() -> None:
    text = API_MANUAL.read_text()
    missing = [
        name for name in ag_attention.__all__ if not re.search(rf"(?:(?<![\w.])|(?<=ag_attention\.)){name}\b", text)
    ]
    assert not missing, f"docs/manual/api.md does not name {missing} of ag_attention.__all__"


PAGES = sorted((DOCS / "math").glob("*.md")) + sorted((DOCS / "manual").glob("*.md"))

#: names called in backticks on these pages that are not the package's: other software's (PyTorch, transformers,
#: Macaulay2, NumPy), Python's, and the mathematics' (a function of the text, like ``deg(X)`` or ``GF(p)``)
OTHERS = {
    # Python and NumPy
    "Fraction", "int", "min", "print", "einsum", "log", "sqrt", "cos", "view", "split", "cat", "softmax",
    # PyTorch, transformers
    "torch.arange", "torch.load", "BertConfig", "LayerNorm", "LlamaConfig.from_dict", "rotate_half",
    "save_pretrained", "bucket", "dense", "model",
    "ALL_ATTENTION_FUNCTIONS.get_interface", "AttentionInterface.register",
    # Macaulay2
    "edSystem", "groebnerBasis", "installPackage", "needsPackage", "toCC",
    # the mathematics: functions and spaces of the text
    "C", "GF", "HF", "I", "L", "O", "O_X", "P", "R_σ", "S", "V", "a_", "binom", "c_m", "d", "deg", "e", "f",
    "gcd_m", "k_", "phi", "q", "q_", "r", "rank", "rank_p", "s", "v_", "v_2",
}  # fmt: skip


def _package_sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "ag_attention").rglob("*.py"))}


def _defined(sources: dict[str, str]) -> tuple[set[str], dict[str, list[str]], dict[str, list[str]]]:
    """Every function and class name defined in the package; class name -> modules; the top-level modules by
    their name without the underscore (``progress`` -> ``ag_attention._progress``)."""
    names: set[str] = set()
    classes: dict[str, list[str]] = {}
    stems: dict[str, list[str]] = {}
    for path, text in sources.items():
        module = path[: -len(".py")].replace("/", ".").removesuffix(".__init__")
        if module.count(".") == 1:
            stems.setdefault(module.split(".")[1].lstrip("_"), []).append(module)
        names.update(re.findall(r"^\s*(?:async\s+)?def\s+(\w+)", text, re.M))
        for name in re.findall(r"^\s*class\s+(\w+)", text, re.M):
            names.add(name)
            classes.setdefault(name, []).append(module)
    return names, classes, stems


def _resolves(dotted: str) -> bool:
    """``ag_attention.a.b.c``: the longest prefix that imports as a module, then attributes (or dataclass fields)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            if not _member(obj, part):
                return False
            obj = getattr(obj, part, None)
        return True
    return False


def _member(cls: object, name: str) -> bool:
    """An attribute of the class, or a field of the dataclass (fields without a default are no class attribute)."""
    if hasattr(cls, name):
        return True
    if dataclasses.is_dataclass(cls) and name in {f.name for f in dataclasses.fields(cls)}:
        return True
    return name in getattr(cls, "__annotations__", {})


def _references() -> list[tuple[str, str]]:
    """(page, reference) for every qualified name and every backticked call or ``Class.member`` of the pages."""
    found: list[tuple[str, str]] = []
    for page in PAGES:
        text = page.read_text()
        where = str(page.relative_to(ROOT))
        found += [(where, m) for m in re.findall(r"ag_attention(?:\.[A-Za-z_]\w*)+", text)]
        for code in re.findall(r"`([^`\n]+)`", text):
            found += [(where, m + "(") for m in re.findall(r"(?<![\w.])([A-Za-z_][\w.]*)\(", code)]
            found += [(where, m) for m in re.findall(r"(?<![\w.])([A-Z]\w*\.[a-z_]\w*)\b(?!\()", code)]
    return found


def test_the_pages_name_only_what_exists() -> None:
    """docs/math/*.md and docs/manual/*.md: every ``ag_attention.x.y``, every backticked ``name(...)`` and
    ``Class.member`` of the package resolves (a module that imports, an attribute of it or of the class named); a
    call of another library or of the mathematics is in ``OTHERS``."""
    names, classes, stems = _defined(_package_sources())
    wrong: list[str] = []
    for page, ref in _references():
        call = ref.endswith("(")
        dotted = ref.rstrip("(")
        head, _, rest = dotted.partition(".")
        if head == "ag_attention":
            ok = _resolves(dotted)
        elif dotted in OTHERS:
            continue
        elif head in classes and rest:
            members = rest.split(".")
            ok = any(_member(getattr(importlib.import_module(m), head), members[0]) for m in classes[head])
        elif not rest:
            ok = not call or dotted in names or hasattr(builtins, dotted)
        elif head in stems:  # a module of the package by its name: progress.quiet()
            ok = any(_resolves(f"{m}.{rest}") for m in stems[head])
        else:
            continue  # a method of a value (``r.to_dict()``) or of another library's class
        if not ok:
            wrong.append(f"{page}: {ref}")
    assert not wrong, "the pages name what the package does not have:\n" + "\n".join(sorted(set(wrong)))
