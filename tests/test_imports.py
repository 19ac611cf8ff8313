"""The package's modules import each other without a circle, and each imports.

The graph counts every import a module runs, at its top or inside a function (a function-level
import that dodges a circle is still one); only ``if TYPE_CHECKING:`` imports, which never run,
are left out.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Optional

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "torchdevice_lint"


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports when it runs (``from a import b`` counts as
    ``a.b`` when that is a module, else as ``a``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for statement in child.orelse:
                    visit(statement)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in child.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {module for module in found if module in modules and module != name}


def find_cycle(graph: dict[str, set[str]]) -> Optional[list[str]]:
    """One import circle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, str] = {}
    trail: list[str] = []

    def depth_first(node: str) -> Optional[list[str]]:
        state[node] = "open"
        trail.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                return trail[trail.index(target) :] + [target]
            if target not in state:
                cycle = depth_first(target)
                if cycle:
                    return cycle
        trail.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = depth_first(node)
            if cycle:
                return cycle
    return None


def test_the_cycle_finder_finds_a_circle_and_only_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_imports_are_read_from_every_place_they_run(tmp_path):
    module = tmp_path / "module.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "from torchdevice_lint import config\n"
        "if TYPE_CHECKING:\n"
        "    from torchdevice_lint.engine import Linter\n"
        "def later():\n"
        "    from torchdevice_lint.files import PatternSet\n"
    )
    modules = module_files()
    assert imported_modules("torchdevice_lint.module", module, modules) == {
        "torchdevice_lint.config",
        "torchdevice_lint.files",
    }


def test_no_import_circle():
    modules = module_files()
    graph = {name: imported_modules(name, path, modules) for name, path in modules.items()}
    assert "torchdevice_lint.parsing" in graph["torchdevice_lint.engine"]
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or ())


@pytest.mark.parametrize("name", sorted(module_files()))
def test_each_module_imports(name):
    """Every module the graph reads is one Python imports (an optional extra's library may be
    missing: that is not ours to fail)."""
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if (error.name or "").startswith("torchdevice_lint"):
            raise
        pytest.skip(f"{name} needs {error.name}, not installed")
