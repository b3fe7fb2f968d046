"""The helper's layout: subpackages by concern that import each other without a cycle,
each with an ``__init__`` that explains it and imports nothing, and no import outside
the standard library at module top.

The graph's nodes are the subpackages (``comm``, ``sampling``, ...) and the modules
of the package root (``runtime``, ``protocol``, ...). Imports under
``typing.TYPE_CHECKING`` are left out: they never run, and protocol_types.py, which
names the message shapes of every part, is imported only that way.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "jupyterlab_vram_helper"
HELPER = Path(__file__).resolve().parents[2] / "python_helper" / PACKAGE
# Imported inside functions only, where a kernel has them: IPython and comm come with
# ipykernel, psutil and pynvml are optional.
LAZY_THIRD_PARTY = {"IPython", "comm", "psutil", "pynvml"}
# The helper reads these from sys.modules once the user imported them; importing one
# itself would change what it measures.
NEVER_IMPORTED = {"torch", "tensorflow", "jax", "ray", "dask", "distributed", "numpy"}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    """(dotted name below the package, parsed source) of every module of the helper."""
    for path in sorted(HELPER.rglob("*.py")):
        parts = list(path.relative_to(HELPER).with_suffix("").parts)
        yield ".".join(parts), ast.parse(path.read_text(encoding="utf-8"))


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """The ids of every node under an ``if TYPE_CHECKING:`` block."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            ids.update(id(inner) for inner in ast.walk(node))
    return ids


def _imports(name: str, tree: ast.Module) -> Iterator[tuple[str, ast.stmt]]:
    """(absolute module name, statement) of each import that runs, top level or in a function."""
    skipped = _type_checking_nodes(tree)
    package = name.split(".")[:-1]  # a module's package; an __init__'s is its own
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                yield node.module or "", node
                continue
            base = [PACKAGE] + package[: len(package) - (node.level - 1)]
            if node.module:
                yield ".".join(base + [node.module]), node
            else:  # ``from . import a, b``: modules, or names the package defines
                for alias in node.names:
                    yield ".".join(base + [alias.name]), node


def _node(dotted: str) -> str:
    """The graph node of a module of the helper: its subpackage, or itself in the root."""
    return dotted.split(".")[1]


def _graph() -> dict[str, set[str]]:
    names = {".".join([PACKAGE] + name.split(".")) for name, _ in _modules()}
    names = {n[: -len(".__init__")] if n.endswith(".__init__") else n for n in names}
    edges: dict[str, set[str]] = {}
    for name, tree in _modules():
        if name == "__init__":
            continue  # the entry point: its functions import runtime when the bootstrap calls them
        source = _node(f"{PACKAGE}.{name}")
        for target, _ in _imports(name, tree):
            # ``from . import PROTOCOL_VERSION`` reads the package itself, which Python
            # imports before any of its modules: no order to get wrong.
            if target not in names or target == PACKAGE:
                continue
            if _node(target) != source:
                edges.setdefault(source, set()).add(_node(target))
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph, as the path that closes it, or [] when it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for after in sorted(edges.get(node, ())):
            if state.get(after) == 1:
                return path[path.index(after) :] + [after]
            if after not in state:
                found = visit(after)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_the_subpackages_import_each_other_without_a_cycle() -> None:
    edges = _graph()
    assert _cycle(edges) == []
    # What the layout means, kept true: the runtime wires every part, and the
    # sampling knows nothing of the parts built on it.
    assert {"comm", "sampling", "cells", "cleanup", "allocations", "oom", "estimate", "cluster"} <= edges["runtime"]
    # The cells know the clusters' readings only through the object the runtime hands them.
    assert "cluster" not in edges["cells"]
    assert edges["sampling"] <= {"config", "forking", "protocol"}


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}}) == []


def test_each_subpackage_says_why_it_exists_and_imports_nothing() -> None:
    subpackages = sorted(p.parent for p in HELPER.glob("*/__init__.py"))
    assert [p.name for p in subpackages] == [
        "allocations",
        "cells",
        "cleanup",
        "cluster",
        "comm",
        "estimate",
        "oom",
        "sampling",
    ]
    for folder in subpackages + [HELPER / "sampling" / "readers"]:
        tree = ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))
        docstring = ast.get_docstring(tree)
        assert docstring and len(docstring) > 80, folder
        # Anything imported here would load with the first module of the subpackage,
        # at the bootstrap of every kernel.
        assert [n for n in tree.body if not isinstance(n, ast.Expr)] == [], folder


def test_module_tops_import_the_standard_library_only() -> None:
    for name, tree in _modules():
        top: list[ast.stmt] = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        for target, statement in _imports(name, ast.Module(body=top, type_ignores=[])):
            root = target.split(".")[0]
            assert root in sys.stdlib_module_names or root == PACKAGE, f"{name}: {ast.unparse(statement)}"


def test_the_helper_never_imports_a_framework() -> None:
    for name, tree in _modules():
        for target, statement in _imports(name, tree):
            root = target.split(".")[0]
            assert root not in NEVER_IMPORTED, f"{name}: {ast.unparse(statement)}"
            assert root in sys.stdlib_module_names or root in LAZY_THIRD_PARTY or root == PACKAGE, (
                f"{name}: {ast.unparse(statement)}"
            )
