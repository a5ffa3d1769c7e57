"""Tests for the package as a whole: its layout, its imports, its public names."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import autograd_notes

SOURCE = Path(autograd_notes.__file__).parent
MODULES = sorted(m.name for m in pkgutil.iter_modules(autograd_notes.__path__))
RENDERERS = {"text", "dot", "drawing"}
# The modules of the backward-graph tools (the rest: masks and expect).


def imports(module: str) -> list[tuple[str, str]]:
    """``(sibling module, name)`` for every name ``module`` imports from the package.

    A whole sibling module (``from autograd_notes import _release``) gives
    ``(name, "")``. Imports inside functions count too.
    """
    tree = ast.parse((SOURCE / f"{module}.py").read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            package, _, sibling = node.module.partition(".")
            if package != "autograd_notes":
                continue
            for alias in node.names:
                if sibling:
                    found.append((sibling, alias.name))
                elif alias.name in MODULES:
                    found.append((alias.name, ""))
                else:
                    found.append(("__init__", alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("autograd_notes."):
                    found.append((alias.name.split(".")[1], ""))
    return found


def test_importing_the_package_starts_nothing() -> None:
    code = (
        "import sys, threading, autograd_notes\n"
        "assert threading.active_count() == 1\n"
        "assert not any(m.split('.')[0] in {'matplotlib', 'networkx', 'graphviz'} "
        "for m in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_each_public_name_lives_in_one_public_module() -> None:
    for name in autograd_notes.__all__:
        if name == "__version__":
            continue
        obj = getattr(autograd_notes, name)
        home = obj.__module__.removeprefix("autograd_notes.")
        assert home in MODULES, name
        assert not home.startswith("_"), name
        assert getattr(importlib.import_module(obj.__module__), name) is obj


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_alone_in_a_fresh_interpreter(module: str) -> None:
    """Only the module and what it imports: the package's __init__ does not run."""
    code = (
        "import importlib, sys, types\n"
        "package = types.ModuleType('autograd_notes')\n"
        f"package.__path__ = [{str(SOURCE)!r}]\n"
        "sys.modules['autograd_notes'] = package\n"
        f"m = importlib.import_module('autograd_notes.{module}')\n"
        "assert '__getattr__' not in vars(m), 'a module __getattr__ hands names on'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_modules_import_each_other_without_a_cycle() -> None:
    needs = {m: {s for s, _ in imports(m) if s != m} for m in MODULES}
    assert all("__init__" not in deps for deps in needs.values()), needs
    done: set[str] = set()
    while len(done) < len(needs):  # take away modules whose imports are all done
        ready = {m for m, deps in needs.items() if m not in done and deps <= done}
        assert ready, f"an import cycle among {sorted(set(needs) - done)}"
        done |= ready


def test_no_module_imports_a_private_name_of_a_sibling() -> None:
    for module in MODULES:
        for sibling, name in imports(module):
            assert not name.startswith("_"), f"{module} imports {sibling}.{name}"


@pytest.mark.parametrize("renderer", sorted(RENDERERS))
def test_no_renderer_imports_another(renderer: str) -> None:
    others = RENDERERS - {renderer}
    assert not [s for s, _ in imports(renderer) if s in others]


def docstring_and_code_lines(source: str) -> tuple[int, int]:
    """Lines of module, class and function docstrings, and the other lines
    that are neither blank nor only a comment."""
    documented: set[int] = set()
    scopes = ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, scopes) and ast.get_docstring(node) is not None:
            first = node.body[0]
            documented.update(range(first.lineno, (first.end_lineno or 0) + 1))
    code = [
        line.strip()
        for number, line in enumerate(source.splitlines(), 1)
        if number not in documented
    ]
    return len(documented), sum(1 for line in code if line and line[0] != "#")


@pytest.mark.parametrize("path", sorted(SOURCE.glob("*.py")), ids=lambda p: p.name)
def test_no_module_has_more_docstring_than_code(path: Path) -> None:
    """The style rule: docstrings no longer than the code they describe."""
    doc, code = docstring_and_code_lines(path.read_text())
    assert doc <= code, f"{path.name}: {doc} docstring lines, {code} lines of code"
