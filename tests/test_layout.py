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
    "ag_attention/_exact/__init__.py": "the front door: re-exports (tests/test_layout.py checks its __all__)",
    "ag_attention/_reproduce/icl_dynamics.py": "the training and plateau detection of icl.py, split from it: tested "
    "with it (tests/reproduce/test_icl.py, test_icl_report.py)",
    "ag_attention/_exact/onelayer.py": "re-exports of differentials, factorization, rational and singular (each "
    "tested)",
    "ag_attention/_m2/__init__.py": "the front door: re-exports (tests/test_layout.py checks its __all__)",
    "ag_attention/_models/__init__.py": "the front door: re-exports (tests/test_layout.py checks its __all__)",
    "ag_attention/_numeric/__init__.py": "re-exports of the _numeric modules (each tested)",
    "ag_attention/_point/__init__.py": "re-exports of the _point modules (each tested)",
    "ag_attention/_landscape/__init__.py": "re-exports of the _landscape modules (each tested)",
    "ag_attention/_version.py": "the version string only (tests/test_provenance.py and tests/test_packaging.py read "
    "it)",
    "ag_attention/_reproduce/__init__.py": "the front door: re-exports (tests/test_layout.py checks its __all__)",
    "ag_attention/_reproduce/claims.py": "data only: the paper's results as an enum and their one-line statements",
    "ag_attention/_reproduce/theorem34/__init__.py": "re-exports of the theorem34 modules and of equations34's grids",
    "ag_attention/_reproduce/related/__init__.py": "re-exports of the related modules, one per published work "
    "(each tested)",
    "ag_attention/_sweep/__init__.py": "re-exports of the _sweep modules (each tested)",
    "ag_attention/_sweep/__main__.py": "python -m ag_attention._sweep: only calls cli.main (tests/sweep/test_store.py "
    "runs it)",
    "ag_attention/_cli/__init__.py": "the front door of the command line (build_parser, main: the exit statuses) and "
    "re-exports: tested by tests/cli/test_main.py (its mirror would be tests/cli/test___init__.py)",
    "ag_attention/_cli/__main__.py": "python -m ag_attention._cli: only calls main (tests.helpers.run_cli runs it)",
}

#: test modules that mirror no single module
NOT_A_MIRROR = {
    "tests/test_public_api.py": "the public surface as a whole: import ag_attention, its __all__, the README",
    "tests/test_packaging.py": "the wheel: built, installed and run outside the checkout",
    "tests/test_layout.py": "this file: the layout of the tests",
    "tests/test_docs_findings.py": "the manual's findings page (docs/manual/findings.md) against what the package "
    "computes now",
    "tests/numeric/test_limits.py": "every numerical route (landscape, models, the point engine) stopped at its "
    "limit or by Ctrl-C at any moment, through the package's clock (ag_attention/_clock.py)",
    "tests/cli/test_main.py": "the command line's front door, ag_attention/_cli/__init__.py (build_parser, main): "
    "odd input to any command, closed pipes",
    "tests/test_docs_exec.py": "the docs build's extensions (docs/_ext/, not a package module) and the tutorials",
    "tests/test_docs_api.py": "the pages of the manual and the mathematics against the package's names (docs/)",
    "tests/test_docs_examples.py": "the documentation's ```python blocks, run as printed (docs/)",
    "tests/test_docs_browser.py": "the built site in headless Chromium: offline MathJax, no other host (docs/)",
    "tests/point/test_torch.py": "every checkpoint reader against the torch module it reads (with PyTorch installed)",
    "tests/point/test_transformers.py": "every checkpoint reader against the model transformers saves with "
    "save_pretrained and runs (configs, directories, shards, positions, masks; with transformers installed)",
    "tests/reproduce/test_icl_report.py": "reproduce icl's report read together with its JSON (icl.py and "
    "icl_dynamics.py at once)",
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
    assert mirror(Path("ag_attention/_reproduce/theorem34/report.py")) == Path(
        "tests/reproduce/theorem34/test_report.py"
    )
    assert mirror(Path("ag_attention/_cli.py")) == Path("tests/test_cli.py")


def test_every_module_has_its_test_module_or_a_reason():
    expected_modules = set(EXPECTED.values())
    missing = [
        f"{m} -> {mirror(m)}"
        for m in package_modules()
        if not (ROOT / mirror(m)).is_file()
        and m.as_posix() not in NO_TEST_MODULE
        and m.as_posix() not in expected_modules
    ]
    assert missing == [], "modules without a test module (write one, or say why in NO_TEST_MODULE): " + ", ".join(
        missing
    )


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
    strays = [
        t.as_posix()
        for t in all_test_modules()
        if t.as_posix() not in mirrored and t.as_posix() not in NOT_A_MIRROR and t.as_posix() not in EXPECTED
    ]
    assert strays == [], (
        "test modules that mirror no module (move their tests, or say why in NOT_A_MIRROR): " + ", ".join(strays)
    )


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


@pytest.mark.parametrize(
    "path",
    [ROOT / t for t in all_test_modules()] + [TESTS / "conftest.py", TESTS / "helpers.py"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_tests_use_no_private_names(path):
    assert _private_uses(path) == []


# ----------------------------------------------------------------- no import cycles
#: import cycles known and left to the owners of their modules, each with what closes it and how to break it; the
#: test fails on any other cycle, and on a listed one that no longer exists (drop it from the list)
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): its imports never run."""
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        isinstance(test, ast.Name)
        and test.id == "TYPE_CHECKING"
        or isinstance(test, ast.Attribute)
        and test.attr == "TYPE_CHECKING"
    )


def import_graph() -> dict[str, dict[str, str]]:
    """``{module: {imported module: "file:line"}}`` over the package, from the AST of every module.

    Every import statement counts, at the top of a module or deferred inside a function (it runs when the function
    does), except under ``if TYPE_CHECKING:``.  ``from P import x`` is an edge to ``P.x`` when that is a module
    (``from .. import _progress``), else to ``P``; the packages above an imported module are not edges (each
    ``__init__`` is a module of its own in the graph).
    """
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    graph: dict[str, dict[str, str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges: dict[str, str] = {}
        todo: list[ast.AST] = [ast.parse(path.read_text(), str(path))]
        while todo:
            node = todo.pop()
            for child in ast.iter_child_nodes(node):
                if _type_checking_only(child):
                    continue
                todo.append(child)
                targets: list[str] = []
                if isinstance(child, ast.ImportFrom):
                    if child.level:
                        base = name.split(".") if is_package else name.split(".")[:-1]
                        base = base[: len(base) - (child.level - 1)]
                        source = ".".join(base + ([child.module] if child.module else []))
                    else:
                        source = child.module or ""
                    targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in child.names]
                elif isinstance(child, ast.Import):
                    targets = [a.name for a in child.names]
                for target in targets:
                    if target in modules and target != name:
                        edges.setdefault(target, f"{path.relative_to(ROOT)}:{child.lineno}")
        graph[name] = edges
    return graph


def import_cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def describe_cycle(graph: dict[str, dict[str, str]], component: list[str]) -> str:
    """One shortest cycle through the first module of ``component``, each import with its file and line."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                path = paths[v] + [start]
                return " -> ".join(f"{a} ({graph[a][b]})" for a, b in zip(path, path[1:])) + f" -> {start}"
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover - a component of size > 1 has one


def test_the_import_graph_helpers_find_and_name_a_cycle():
    graph = {"a": {"b": "a.py:1"}, "b": {"c": "b.py:2"}, "c": {"a": "c.py:3", "d": "c.py:4"}, "d": {}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert describe_cycle(graph, ["a", "b", "c"]) == "a (a.py:1) -> b (b.py:2) -> c (c.py:3) -> a"
    assert import_cycles({"a": {"b": "a.py:1"}, "b": {}}) == []
    assert "ag_attention._sweep" in import_graph()["ag_attention._cli"]  # a deferred import is an edge


def test_no_import_cycles():
    graph = import_graph()
    cycles = import_cycles(graph)
    new = [describe_cycle(graph, c) for c in cycles if frozenset(c) not in KNOWN_CYCLES]
    assert new == [], (
        "import cycles (break them: a module of the lower layer must not import one above it):\n" + "\n".join(new)
    )
    gone = [sorted(c) for c in KNOWN_CYCLES if list(sorted(c)) not in cycles]
    assert gone == [], f"KNOWN_CYCLES lists cycles that no longer exist (drop them): {gone}"


# ----------------------------------------------------------------- layers and front doors
#: the rooms of the package, lowest first: a module may import its own room and the rooms of lower layers, never a
#: room of its own layer or above (the public surface, ag_attention/__init__.py, and the command line are on top).
#: A room is a subpackage (``_exact``) or a module of the top level (``_errors``).
LAYERS: list[list[str]] = [
    ["_version", "_errors"],
    ["_clock"],  # every deadline's clock; Ctrl-C as a deadline that arrives now
    ["_checks", "_files", "_bounded", "_resources", "_progress", "_provenance", "_results", "_positions"],
    ["_architecture", "_figures"],  # _figures: sizes, ticks and atomic writes of every figure
    ["_network", "_argtypes", "_flint"],
    ["_m2"],  # external processes: Macaulay2, msolve, the container, their deadlines, job directories
    ["_models"],
    ["_exact"],
    ["_algebra"],
    ["_numeric"],
    ["_sweep"],
    ["_point"],
    ["_landscape"],
    ["_reproduce"],
    ["_cli"],
    ["ag_attention", "__main__"],
]

#: imports that go up a layer, each with why (none today: add one only with the reason and a plan to remove it)
UPWARD: dict[tuple[str, str], str] = {}

#: imports of another room that bypass its front door (its __init__), each with why
BACK_DOORS: dict[tuple[str, str], str] = {}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "ag_attention"


def _layer_of() -> dict[str, int]:
    return {room: i for i, rooms in enumerate(LAYERS) for room in rooms}


def _imports() -> list[tuple[str, str, list[str], str]]:
    """Every ``from ag_attention... import`` of the package: (module, source module, names, "file:line")."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        name, is_package = _module_name(path), path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source == "ag_attention" or source.startswith("ag_attention."):
                    where = f"{path.relative_to(ROOT)}:{node.lineno}"
                    found.append((name, source, [a.name for a in node.names], where))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("ag_attention."):
                        found.append((name, a.name, [], f"{path.relative_to(ROOT)}:{node.lineno}"))
    return found


def test_every_room_is_in_exactly_one_layer():
    rooms = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    rooms |= {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"} | {"ag_attention"}
    listed = [room for layer in LAYERS for room in layer]
    assert len(listed) == len(set(listed)), "a room in two layers"
    assert sorted(rooms - set(listed)) == [], "rooms missing from LAYERS"
    assert sorted(set(listed) - rooms) == [], "LAYERS names rooms that do not exist"


def test_rooms_import_only_lower_layers():
    layer = _layer_of()
    wrong = []
    for module, source, _, where in _imports():
        a, b = _room(module), _room(source)
        if a == b or source == "ag_attention":
            continue
        if layer[b] >= layer[a] and (module, b) not in UPWARD:
            wrong.append(f"{where}: {a} (layer {layer[a]}) imports {source} (layer {layer[b]})")
    assert wrong == [], "imports that go up or sideways (LAYERS):\n" + "\n".join(sorted(wrong))
    for module, target in UPWARD:
        assert any(m == module and _room(s) == target for m, s, _, _ in _imports()), (module, target)


def test_other_rooms_come_in_by_the_front_door():
    """``from .._exact import rank``, not ``from .._exact.linalg import rank``; and only names its __all__ lists."""
    wrong = []
    for module, source, names, where in _imports():
        a, b = _room(module), _room(source)
        if a == b or b == "ag_attention" or not (PACKAGE / b / "__init__.py").is_file():
            continue
        if (module, source) in BACK_DOORS:
            continue
        if source != f"ag_attention.{b}":
            wrong.append(f"{where}: {module} imports {source} (a back door: import from ag_attention.{b})")
            continue
        listed = importlib.import_module(source).__all__
        wrong += [f"{where}: {module} imports {n} from {source}, not in its __all__" for n in names if n not in listed]
    assert wrong == [], "\n".join(sorted(wrong))
    for module, source in BACK_DOORS:
        assert any(m == module and s == source for m, s, _, _ in _imports()), (module, source)


@pytest.mark.parametrize("room", sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py")))
def test_each_front_door_lists_what_it_has(room):
    package = importlib.import_module(f"ag_attention.{room}")
    assert isinstance(package.__all__, list) and package.__all__, f"ag_attention.{room} has no __all__"
    assert sorted(n for n in package.__all__ if not hasattr(package, n)) == []
    assert len(package.__all__) == len(set(package.__all__))


# ----------------------------------------------------------------- sizes
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80  # the body without its docstring


def _function_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= first.end_lineno - first.lineno + 1
    return lines


def test_no_module_is_over_600_lines():
    long = {str(p): n for p in package_modules() if (n := len((ROOT / p).read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines (split them by what they do): {long}"


def test_no_function_is_over_80_lines_without_a_reason():
    """A longer function says why on the line above its ``def`` (``# long: ...``)."""
    long = []
    for p in package_modules():
        lines = (ROOT / p).read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _function_lines(node) > MAX_FUNCTION_LINES:
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if not lines[first - 2].strip().startswith("# long:"):
                    long.append(f"{p}:{node.lineno} {node.name} ({_function_lines(node)} lines)")
    assert long == [], f"functions over {MAX_FUNCTION_LINES} lines (split them, or say why):\n" + "\n".join(long)


# ----------------------------------------------------------------- one room owns the external processes
#: modules outside the process room (_m2) that start a program, and why
PROCESSES_ELSEWHERE = {
    "ag_attention/_provenance.py": "git rev-parse and git status for the provenance's commit, each with a 10 s timeout",
    "ag_attention/_sweep/local.py": "a local sweep's worker processes: the standard library's ProcessPoolExecutor "
    "(spawn), each worker ended with the pool",
    "ag_attention/_sweep/run.py": "starts none: reads multiprocessing's current process to refuse a sweep started "
    "while a spawned worker imports its script",
}


def _starts_programs(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import) and any(a.name in ("subprocess", "multiprocessing") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "") in ("subprocess", "multiprocessing"):
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("killpg", "fork", "execv", "execvp", "posix_spawn"):
            return True
    return False


def test_external_processes_are_started_in_the_process_room():
    found = {
        str(p) for p in package_modules() if not str(p).startswith("ag_attention/_m2/") and _starts_programs(ROOT / p)
    }
    assert sorted(found - set(PROCESSES_ELSEWHERE)) == [], "start programs in ag_attention/_m2 (the process room)"
    assert sorted(set(PROCESSES_ELSEWHERE) - found) == [], "PROCESSES_ELSEWHERE lists modules that start none"


# ----------------------------------------------------------------- imports at the top
def test_imports_of_the_package_sit_at_the_top_unless_a_comment_says_why():
    """An import of the package inside a function says why on its line or the line above (``# deferred: ...``):
    optional libraries (matplotlib, pandas, pyarrow, dask, torch, sympy) are not the package and are not checked."""
    silent = []
    for p in package_modules():
        lines = (ROOT / p).read_text().splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("ag_attention")):
                    said = lines[node.lineno - 1] + lines[node.lineno - 2]
                    if "deferred" not in said:
                        silent.append(f"{p}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert silent == [], "imports inside functions (move them to the top, or say why):\n" + "\n".join(silent)
