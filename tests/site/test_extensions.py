"""docs/_ext/autograd_site: one feature per module, and each module's docstring
names its jobs.

* ``docs/conf.py`` names the package in ``extensions`` and imports nothing of
  ours; the package's ``setup`` sets up each of its ``FEATURES``.
* Every module of the package is a feature (in ``FEATURES``, or set up by one
  that is), or a library that one of those imports; a module has a ``setup``
  exactly when it is loaded as an extension.
* Every module has a docstring, and it names every job the module does:
  everything its ``setup`` registers (an event handler and its event, a
  transform, a node, a directive, a role, a config value, a static file,
  another extension), every name ``conf.py`` uses from it (a sphinx-gallery
  hook, the kernels' arguments) and, for a library, each public function.
  A job added without saying so in the docstring fails this test.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import types
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "docs" / "_ext" / "autograd_site"
CONF = ROOT / "docs" / "conf.py"
PACKAGE = "autograd_site"

MODULES = sorted(path.stem for path in EXT.glob("*.py") if path.stem != "__init__")


def feature(name: str) -> types.ModuleType:
    return importlib.import_module(f"{PACKAGE}.{name}")


class Recorder:
    """A stand-in for the Sphinx application that records what ``setup``
    registers: every ``connect``, ``add_*`` and ``setup_extension`` call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, method: str) -> Any:
        if method not in ("connect", "setup_extension") and not method.startswith(
            "add_"
        ):
            raise AttributeError(method)

        def record(*args: Any, **kwargs: Any) -> None:
            self.calls.append((method, args))

        return record


def _calls(module: types.ModuleType) -> list[tuple[str, tuple[Any, ...]]]:
    app = Recorder()
    module.setup(app)
    return app.calls


def registrations(module: types.ModuleType) -> list[tuple[str, list[str]]]:
    """What ``module.setup`` registers: (description, the names that the
    docstring must hold for it)."""
    found = []
    for method, args in _calls(module):
        if method == "connect":
            event, handler = args[0], args[1]
            found.append(
                (f"handler {handler.__name__} of {event}", [handler.__name__, event])
            )
        elif method == "setup_extension":
            name = args[0].rpartition(".")[2]
            found.append((f"extension {args[0]}", [name]))
        elif method in ("add_directive", "add_role", "add_config_value"):
            found.append((f"{method} {args[0]}", [args[0]]))
        else:  # add_transform, add_node, add_css_file, add_search_language, ...
            first = args[0]
            name = first if isinstance(first, str) else first.__name__
            found.append((f"{method} {name}", [name]))
    return found


def public_functions(module: types.ModuleType) -> list[str]:
    """The public functions and classes a module defines (not imports)."""
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and isinstance(value, type | types.FunctionType)
        and value.__module__ == module.__name__
    ]


def undocumented(module: types.ModuleType, used: Collection[str] = ()) -> list[str]:
    """The jobs of ``module`` its docstring does not name: its registrations
    (an extension), its public functions (a library), and ``used``, the
    names ``conf.py`` takes from it."""
    doc = module.__doc__ or ""
    missing = [name for name in sorted(used) if name not in doc]
    if hasattr(module, "setup"):
        for what, names in registrations(module):
            if not all(name in doc for name in names):
                missing.append(what)
    else:
        missing += [name for name in public_functions(module) if name not in doc]
    return missing


def _conf_tree() -> ast.Module:
    return ast.parse(CONF.read_text(encoding="utf-8"))


def listed_extensions() -> list[str]:
    """The names in ``conf.py``'s ``extensions`` list (libraries', and ours)."""
    for node in ast.walk(_conf_tree()):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "extensions" for t in node.targets
        ):
            assert isinstance(node.value, ast.List)
            return [ast.literal_eval(item) for item in node.value.elts]
    raise AssertionError("conf.py has no extensions list")


def used_by_conf() -> dict[str, set[str]]:
    """Module -> the names ``conf.py`` uses from it: ``"autograd_site.m.x"``
    strings (sphinx-gallery's scrapers and reset hooks)."""
    used: dict[str, set[str]] = {}
    for node in ast.walk(_conf_tree()):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = re.fullmatch(rf"{PACKAGE}\.(\w+)\.(\w+)", node.value)
            if match and match.group(1) in MODULES:
                used.setdefault(match.group(1), set()).add(match.group(2))
    return used


def local_imports(name: str) -> set[str]:
    """The modules of the package that module ``name`` imports, anywhere in it."""
    tree = ast.parse((EXT / f"{name}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.removeprefix(f"{PACKAGE}."))
    return found & set(MODULES)


def loaded_as_extensions() -> set[str]:
    """The package's features, and what their setup sets up of the package."""
    loaded: set[str] = set()
    todo = [f"{PACKAGE}.{name}" for name in importlib.import_module(PACKAGE).FEATURES]
    while todo:
        name = todo.pop().removeprefix(f"{PACKAGE}.")
        loaded.add(name)
        todo += [
            args[0]
            for method, args in _calls(feature(name))
            if method == "setup_extension"
            and args[0].startswith(f"{PACKAGE}.")
            and args[0].removeprefix(f"{PACKAGE}.") not in loaded
        ]
    return loaded


def test_conf_loads_the_package_and_imports_nothing_of_ours() -> None:
    """conf.py is settings: its only imports are the standard library's, and
    our one name in ``extensions`` is the package's."""
    imported = set()
    for node in ast.walk(_conf_tree()):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert imported <= {"__future__", "sys", "pathlib"}
    ours = [name for name in listed_extensions() if name.split(".")[0] == PACKAGE]
    assert ours == [PACKAGE]
    package = importlib.import_module(PACKAGE)
    assert _calls(package) == [
        ("setup_extension", (f"{PACKAGE}.{name}",)) for name in package.FEATURES
    ]


def test_every_module_is_loaded_by_the_build() -> None:
    extensions = loaded_as_extensions()
    reached, todo = set(extensions), list(extensions)
    while todo:
        for name in local_imports(todo.pop()) - reached:
            reached.add(name)
            todo.append(name)
    assert sorted(set(MODULES) - reached) == []


def test_the_libraries_import_no_sphinx() -> None:
    """The modules without a setup (configuration, text transformations,
    site.po's words) import neither Sphinx nor docutils: the build script, the
    PDF printer and the tests use them without a build."""
    libraries = [name for name in MODULES if name not in loaded_as_extensions()]
    assert {"cjk", "comments", "markdown", "siteconfig", "sitewords"} <= set(libraries)
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(EXT.parent)!r})\n"
        f"for name in {libraries!r}: __import__('{PACKAGE}.' + name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('sphinx', 'docutils')))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "[]"


@pytest.mark.parametrize("name", MODULES)
def test_a_module_has_setup_when_it_is_an_extension(name: str) -> None:
    module = feature(name)
    assert hasattr(module, "setup") == (name in loaded_as_extensions())


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_names_every_job(name: str) -> None:
    module = feature(name)
    assert (module.__doc__ or "").strip(), f"{name}.py has no docstring"
    assert undocumented(module, used_by_conf().get(name, set())) == []


def test_an_undocumented_job_fails_the_check() -> None:
    """The check itself: a handler, a transform or a name conf.py uses that
    the docstring does not name is reported."""

    def first(app: Any) -> None: ...

    def second(app: Any, exception: Any) -> None: ...

    class Quiet: ...

    def setup(app: Any) -> None:
        app.connect("builder-inited", first)
        app.connect("build-finished", second)
        app.add_transform(Quiet)
        app.add_role("said", first)

    fake = types.ModuleType("fake", ":func:`first` (``builder-inited``), ``said``.")
    fake.setup = setup  # type: ignore[attr-defined]
    assert undocumented(fake, {"hook"}) == [
        "hook",
        "handler second of build-finished",
        "add_transform Quiet",
    ]
    # A handler named without its event is not enough either.
    fake.__doc__ = ":func:`first` ``said`` :func:`second` ``Quiet`` ``hook``"
    assert undocumented(fake, {"hook"}) == [
        "handler first of builder-inited",
        "handler second of build-finished",
    ]
    # A library (no setup): each public function must be named.
    library = types.ModuleType("library", "Reads: :func:`first`.")
    first.__module__ = second.__module__ = "library"
    library.first, library.second = first, second  # type: ignore[attr-defined]
    assert undocumented(library) == ["second"]
