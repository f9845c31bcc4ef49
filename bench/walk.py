"""The path of one ``Architecture`` through :func:`ag_attention.dimension`, walked statically (issue 23, 1).

An AST call graph of the package (nothing is imported or run): the walk starts
at ``ag_attention._exact.dimension.dimension`` and reads it as a reader of the
code would, depth first: each call of a function's body in source order, each
function once (a function already read is not read again).  What counts as a
call:

* ``f(...)`` and ``module.f(...)`` where ``f`` is a function or a class of the
  package (names resolved through the imports, re-exports followed); a class
  is read through the ``__init__``/``__post_init__``/``__new__`` written for it
  (a dataclass's generated ``__init__`` is no code to read: constructing one
  reads nothing);
* ``x.m(...)`` where the type of ``x`` is known statically to be a class of the
  package: ``self``, a parameter's or a field's annotation, a variable assigned
  from a constructor or from a call whose return annotation names such a class;
* a package function passed as an argument (a callback: ``prove(arch,
  output_span)`` runs ``output_span``), read where it is passed.

Properties are attribute reads, not calls, and are not followed
(``--properties`` follows them too).  Calls into other libraries (numpy, FLINT,
tqdm) and the standard library are not followed, and neither are calls into
the package's *tools*: modules that import nothing of the package but
``_errors`` (``_errors``, ``_results``, ``_exact/field.py``,
``_exact/linalg.py``, ``_resources``, ``_progress``: found from the imports;
``_architecture``, the data model and the top layer, is not a tool).  A tool
can lead the walk nowhere, like numpy; ``--tools`` enters them too.

The figures, on the sequence of functions read:

* a **stay** is each time the walk enters a module: the first function read,
  and every function read in another module than the one read before it;
* a **climb** is such a step from a lower layer back to a higher one.  The
  layers, highest first: ``_architecture`` and ``_models`` (what a network is
  and what is provable of it), then ``_exact``, ``_network``, ``_resources``,
  ``_progress`` (measuring).  The other modules (``_errors``, ``_results``)
  take no part in climbs.

It prints the stays, the modules with the times each was entered, the climbs,
and with ``--trace`` the walk itself.

    python bench/walk.py [--trace] [--properties] [--tools] [--start ag_attention._exact.fibers.fibers]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "ag_attention"

#: the layers, highest first (a module's layer is its first component below the package)
HIGHER = {"_architecture", "_models"}
LOWER = {"_exact", "_network", "_resources", "_progress"}


def layer(module: str) -> int | None:
    """2: what a network is and what is provable of it; 1: measuring; None: below both (errors, results)."""
    top = module.split(".")[1] if "." in module else module
    if top in HIGHER:
        return 2
    if top in LOWER:
        return 1
    return None


def short(module: str) -> str:
    """``ag_attention._exact.dimension`` as ``_exact/dimension.py``."""
    return "/".join(module.split(".")[1:]) + ".py"


@dataclass
class ClassInfo:
    module: str
    name: str
    node: ast.ClassDef
    bases: list[ast.expr]
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    properties: set[str] = field(default_factory=set)
    fields: dict[str, ast.expr] = field(default_factory=dict)  # annotated class-level names


@dataclass
class ModuleInfo:
    name: str
    tree: ast.Module
    is_package: bool
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local -> (module, attr or None)
    aliases: dict[str, str] = field(default_factory=dict)  # module-level ``x = y`` of a name


def _module_name(path: Path) -> tuple[str, bool]:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _resolve_relative(module: ModuleInfo, level: int, target: str | None) -> str:
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def load() -> dict[str, ModuleInfo]:
    modules: dict[str, ModuleInfo] = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        name, is_package = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        info = ModuleInfo(name, tree, is_package)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                cls = ClassInfo(name, node.name, node, list(node.bases))
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        cls.methods[item.name] = item
                        if any(
                            isinstance(d, ast.Name)
                            and d.id in ("property", "cached_property")
                            or isinstance(d, ast.Attribute)
                            and d.attr == "cached_property"
                            for d in item.decorator_list
                        ):
                            cls.properties.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        cls.fields[item.target.id] = item.annotation
                info.classes[node.name] = cls
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Name)
            ):
                info.aliases[node.targets[0].id] = node.value.id
        modules[name] = info
    for info in modules.values():  # imports anywhere in the module (function-level ones too: they run)
        for imp in ast.walk(info.tree):
            if isinstance(imp, ast.ImportFrom):
                source = _resolve_relative(info, imp.level, imp.module) if imp.level else (imp.module or "")
                if not source.startswith(PACKAGE):
                    continue
                for alias in imp.names:
                    local = alias.asname or alias.name
                    if f"{source}.{alias.name}" in modules:
                        info.imports[local] = (f"{source}.{alias.name}", None)
                    else:
                        info.imports.setdefault(local, (source, alias.name))
            elif isinstance(imp, ast.Import):
                for alias in imp.names:
                    if alias.name.startswith(PACKAGE) and alias.asname:
                        info.imports[alias.asname] = (alias.name, None)
    return modules


Target = tuple[str, str]  # (module, qualified name in it: "f", "Class", "Class.method")


class Graph:
    def __init__(self, modules: dict[str, ModuleInfo], properties: bool = False) -> None:
        self.modules = modules
        self.properties = properties

    # -- names ------------------------------------------------------------------------------------------------
    def lookup(self, module: str, name: str, depth: int = 0) -> Target | str | None:
        """A module-level name of ``module``: a function or class (its target), a module (its name), or None."""
        info = self.modules.get(module)
        if info is None or depth > 20:
            return None
        if name in info.functions or name in info.classes:
            return (module, name)
        if name in info.aliases:
            return self.lookup(module, info.aliases[name], depth + 1)
        if name in info.imports:
            source, attr = info.imports[name]
            if attr is None:
                return source
            return self.lookup(source, attr, depth + 1)
        return None

    def cls(self, target: Target) -> ClassInfo | None:
        info = self.modules.get(target[0])
        return None if info is None else info.classes.get(target[1])

    def mro(self, c: ClassInfo) -> list[ClassInfo]:
        out, todo = [], [c]
        while todo:
            k = todo.pop(0)
            if k in out:
                continue
            out.append(k)
            for b in k.bases:
                t = self.resolve_expr_target(k.module, b)
                if isinstance(t, tuple) and (bc := self.cls(t)) is not None:
                    todo.append(bc)
        return out

    def resolve_expr_target(self, module: str, expr: ast.expr) -> Target | str | None:
        """``name`` or ``module.name`` (also dotted modules) resolved to a target or a module."""
        if isinstance(expr, ast.Name):
            return self.lookup(module, expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.resolve_expr_target(module, expr.value)
            if isinstance(base, str):
                if f"{base}.{expr.attr}" in self.modules:
                    return f"{base}.{expr.attr}"
                return self.lookup(base, expr.attr)
        return None

    def annotation_class(self, module: str, ann: ast.expr | None) -> Target | None:
        """The package class an annotation names (``X``, ``"X"``, ``X | None``, ``Optional[X]``)."""
        if ann is None:
            return None
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return self.annotation_class(module, ann.left) or self.annotation_class(module, ann.right)
        if isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) and ann.value.id == "Optional":
            return self.annotation_class(module, ann.slice)
        t = self.resolve_expr_target(module, ann)
        if isinstance(t, tuple) and self.cls(t) is not None:
            return t
        return None

    # -- functions --------------------------------------------------------------------------------------------
    def function(self, target: Target) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, ClassInfo | None] | None:
        module, qual = target
        info = self.modules[module]
        if "." in qual:
            cname, meth = qual.split(".", 1)
            c = info.classes[cname]
            return c.methods[meth], c
        if qual in info.functions:
            return info.functions[qual], None
        return None

    def method(self, c: ClassInfo, name: str) -> Target | None:
        for k in self.mro(c):
            if name in k.methods:
                return (k.module, f"{k.name}.{name}")
        return None

    def field_type(self, c: ClassInfo, name: str) -> Target | None:
        for k in self.mro(c):
            if name in k.fields:
                return self.annotation_class(k.module, k.fields[name])
            if name in k.methods and name in k.properties:
                return self.annotation_class(k.module, k.methods[name].returns)
        return None

    def calls(self, target: Target) -> list[tuple[Target, int]]:
        """The calls of one function or class, in source order, with their lines."""
        found = self.function(target)
        if found is None:
            return []
        fn, owner = found
        module = target[0]
        types: dict[str, Target] = {}
        args = fn.args
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            t = self.annotation_class(module, a.annotation)
            if t:
                types[a.arg] = t
        if owner is not None and (args.posonlyargs or args.args):
            first = (args.posonlyargs or args.args)[0].arg
            if first in ("self", "cls"):
                types[first] = (owner.module, owner.name)

        def type_of(expr: ast.expr) -> Target | None:
            if isinstance(expr, ast.Name):
                return types.get(expr.id)
            if isinstance(expr, ast.Attribute):
                base = type_of(expr.value)
                if base is not None and (bc := self.cls(base)) is not None:
                    return self.field_type(bc, expr.attr)
                return None
            if isinstance(expr, ast.Call):
                callee = self.callee(module, expr.func, type_of)
                if callee is None:
                    return None
                if self.cls(callee) is not None and "." not in callee[1]:
                    return callee
                f = self.function(callee)
                if f is not None:
                    return self.annotation_class(callee[0], f[0].returns)
            return None

        # variables assigned from a constructor or a typed call (flow-insensitive, first assignment wins)
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                t = type_of(node.value)
                for tgt in node.targets:
                    if t and isinstance(tgt, ast.Name):
                        types.setdefault(tgt.id, t)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                t = self.annotation_class(module, node.annotation)
                if t:
                    types.setdefault(node.target.id, t)
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                # ``for layer in arch.layers``: the element type of a tuple[X, ...] property
                it = node.iter
                if isinstance(it, ast.Attribute) and (bt := type_of(it.value)) and (bc := self.cls(bt)):
                    for k in self.mro(bc):
                        m = k.methods.get(it.attr)
                        ann = m.returns if m is not None else k.fields.get(it.attr)
                        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
                            ann = ast.parse(ann.value, mode="eval").body
                        if isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple) and ann.slice.elts:
                            t = self.annotation_class(k.module, ann.slice.elts[0])
                            if t:
                                types.setdefault(node.target.id, t)
                        if m is not None or it.attr in k.fields:
                            break

        out: list[tuple[Target, int, int]] = []
        body = fn.body
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call):
                    callee = self.callee(module, node.func, type_of)
                    if callee is not None:
                        out.append((callee, node.lineno, node.col_offset))
                    for arg in [*node.args, *(k.value for k in node.keywords)]:
                        ref = (
                            self.resolve_expr_target(module, arg)
                            if isinstance(arg, (ast.Name, ast.Attribute))
                            else None
                        )
                        if isinstance(ref, tuple) and self.function(ref) is not None:
                            out.append((ref, arg.lineno, arg.col_offset))
                elif self.properties and isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    base = type_of(node.value)
                    if base is not None and (bc := self.cls(base)) is not None:
                        for k in self.mro(bc):
                            if node.attr in k.properties:
                                out.append(((k.module, f"{k.name}.{node.attr}"), node.lineno, node.col_offset))
                                break
                            if node.attr in k.methods or node.attr in k.fields:
                                break
        hooked: list[tuple[Target, int, int]] = []
        for t, line, col in out:
            c = self.cls(t) if "." not in t[1] else None
            if c is None:
                hooked.append((t, line, col))
            else:  # a class called: the constructor code written for it (none for a plain dataclass)
                hooked += [
                    (h, line, col) for name in ("__new__", "__init__", "__post_init__") if (h := self.method(c, name))
                ]
        out = hooked
        out.sort(key=lambda x: (x[1], x[2]))
        seen: set[tuple[Target, int, int]] = set()
        result = []
        for t, line, col in out:
            if (t, line, col) not in seen:
                seen.add((t, line, col))
                result.append((t, line))
        return result

    def callee(self, module: str, func: ast.expr, type_of: Callable[[ast.expr], Target | None]) -> Target | None:
        t = self.resolve_expr_target(module, func)
        if isinstance(t, tuple):
            if self.cls(t) is not None or self.function(t) is not None:
                return t
            return None
        if isinstance(func, ast.Attribute):
            base = type_of(func.value)
            if base is None:
                owner = self.resolve_expr_target(module, func.value)  # Class.method(...)
                base = owner if isinstance(owner, tuple) and self.cls(owner) is not None else None
            if base is not None and (bc := self.cls(base)) is not None:
                m = self.method(bc, func.attr)
                if m is not None and m[1].split(".")[1] not in bc.properties:
                    return m
        return None


def tools(modules: dict[str, ModuleInfo]) -> set[str]:
    """Modules that import nothing of the package but ``_errors`` (the data model, in the top layer, aside)."""
    out = set()
    for name, info in modules.items():
        imported = {source for source, _ in info.imports.values()}
        if imported <= {f"{PACKAGE}._errors"} and layer(name) != 2 and name != PACKAGE:
            out.add(name)
    return out


@dataclass
class Walk:
    reads: list[tuple[Target, int]] = field(default_factory=list)  # (function, depth) in the order read
    skipped: set[str] = field(default_factory=set)  # the tools, not entered
    passed: set[str] = field(default_factory=set)  # the tools the walk called and did not enter

    @property
    def entries(self) -> list[str]:
        """The module of every stay, in order."""
        out: list[str] = []
        for (module, _), _ in self.reads:
            if not out or out[-1] != module:
                out.append(module)
        return out

    @property
    def stays(self) -> int:
        return len(self.entries)

    @property
    def climbs(self) -> list[tuple[str, str]]:
        e = self.entries
        return [(a, b) for a, b in zip(e, e[1:]) if layer(a) == 1 and layer(b) == 2]

    @property
    def entered(self) -> Counter[str]:
        return Counter(self.entries)


def walk(start: str, properties: bool = False, enter_tools: bool = False) -> Walk:
    modules = load()
    graph = Graph(modules, properties)
    module, name = start.rsplit(".", 1)
    w = Walk(skipped=set() if enter_tools else tools(modules))
    read: set[Target] = set()

    def visit(target: Target, depth: int) -> None:
        read.add(target)
        w.reads.append((target, depth))
        for callee, _line in graph.calls(target):
            if callee[0] in w.skipped:
                w.passed.add(callee[0])
            elif callee not in read:
                visit(callee, depth + 1)

    sys.setrecursionlimit(10_000)
    visit((module, name), 0)
    return w


def report(w: Walk, start: str, trace: bool) -> None:
    if trace:
        previous = None
        for (module, qual), depth in w.reads:
            if module != previous:
                print(f"{short(module)}")
                previous = module
            print(f"    {'  ' * depth}{qual}")
        print()
    print(f"walk from {start}: {w.stays} stays in {len(w.entered)} modules, {len(w.climbs)} climbs back up")
    print("\nmodules (times entered):")
    for module, n in sorted(w.entered.items(), key=lambda kv: (-kv[1], kv[0])):
        lay = {2: "higher", 1: "lower", None: "-"}[layer(module)]
        print(f"  {n:>3}  {short(module):<28} {lay}")
    print("\nclimbs (a lower layer back to a higher one):")
    for a, b in w.climbs:
        print(f"  {short(a)} -> {short(b)}")
    if w.passed:
        print("\ntools called, not entered: " + ", ".join(sorted(short(m) for m in w.passed)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--start", default="ag_attention._exact.dimension.dimension")
    parser.add_argument("--trace", action="store_true", help="print the walk: the functions in the order read")
    parser.add_argument("--properties", action="store_true", help="follow property reads too")
    parser.add_argument("--tools", action="store_true", help="enter the tool modules too")
    args = parser.parse_args(argv)
    report(walk(args.start, args.properties, args.tools), args.start, args.trace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
