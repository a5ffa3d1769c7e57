"""Tests for the package as a whole: its layout, its imports, its public names."""

from __future__ import annotations

import ast
import contextlib
import importlib
import pkgutil
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import autograd_notes

SOURCE = Path(autograd_notes.__file__).parent
MODULES = sorted(m.name for m in pkgutil.iter_modules(autograd_notes.__path__))
RENDERERS = {"text", "dot", "drawing", "view_html"}
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


def _valid_calls() -> dict[str, tuple[Callable[..., object], dict[str, object]]]:
    """A valid call of every public callable, by name: ``(callable, arguments)``.

    Made afresh for each use: some calls change what they are given.
    """
    an = autograd_notes
    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    mask = torch.rand(3, 4) > 0.5
    root = (w * 2).sum()
    lin = torch.nn.Linear(4, 3)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    trace = an.ModuleTrace()
    graph = {"root": root, "names": {"w": w}, "show_saved": False}
    graph |= {"collapse": True, "modules": None, "depth": None, "fold": True}
    return {
        "FrozenReport": (an.FrozenReport, {}),
        "SavedMemory": (an.SavedMemory, {}),
        "NodeRow": (an.NodeRow, dict.fromkeys(RECORDS["NodeRow"], 0)),
        "ModuleRow": (an.ModuleRow, dict.fromkeys(RECORDS["ModuleRow"], 0)),
        "CallRow": (an.CallRow, dict.fromkeys(RECORDS["CallRow"], 0)),
        "StorageRow": (an.StorageRow, dict.fromkeys(RECORDS["StorageRow"], 0)),
        "NotCounted": (an.NotCounted, dict.fromkeys(RECORDS["NotCounted"], 0)),
        "NodeChange": (an.NodeChange, dict.fromkeys(RECORDS["NodeChange"], 0)),
        "ModuleChange": (an.ModuleChange, dict.fromkeys(RECORDS["ModuleChange"], 0)),
        "GraphDiff": (
            an.GraphDiff,
            {"before": an.SavedMemory(), "after": an.SavedMemory()},
        ),
        "GraphHtml": (
            an.GraphHtml,
            {"page": "<p>", "svg": "<svg></svg>", "text": "[0] SumBackward0"},
        ),
        "Calls": (an.Calls, {key: [] for key in RECORDS["Calls"]}),
        "MaskedLinear": (
            an.MaskedLinear,
            {"in_features": 4, "out_features": 3, "mask": mask},
        ),
        "apply_mask": (an.apply_mask, {"weight": w, "mask": mask}),
        "check_mask": (an.check_mask, {"mask": mask, "weight": w, "name": "mask"}),
        "diff_graphs": (
            an.diff_graphs,
            {
                "before": root,
                "after": root,
                "modules_before": None,
                "modules_after": None,
            },
        ),
        "draw_graph": (
            an.draw_graph,
            {**graph},
        ),
        "expect_error": (an.expect_error, {"category": ValueError, "match": "x"}),
        "expect_warning": (an.expect_warning, {"category": UserWarning, "match": "x"}),
        "format_graph": (
            an.format_graph,
            {**graph, "show_retained": False},
        ),
        "free_graph": (an.free_graph, {"tensor": root}),
        "frozen_report": (
            an.frozen_report,
            {"before": w.detach(), "after": w.detach(), "mask": mask},
        ),
        "keep_frozen": (
            an.keep_frozen,
            {"optimizer": opt, "param": lin.weight, "mask": mask},
        ),
        "mask_from_condition": (an.mask_from_condition, {"condition": mask}),
        "mask_from_indices": (
            an.mask_from_indices,
            {"shape": (3, 4), "rows": [0], "cols": [1], "device": "cpu"},
        ),
        "masked_linear": (
            an.masked_linear,
            {
                "input": torch.randn(2, 4),
                "weight": w,
                "mask": mask,
                "bias": torch.zeros(3),
                "mode": "freeze",
            },
        ),
        "parametrize_mask": (
            an.parametrize_mask,
            {"module": lin, "name": "weight", "mask": mask},
        ),
        "random_mask": (
            an.random_mask,
            {
                "shape": (3, 4),
                "p": 0.5,
                "generator": torch.Generator(),
                "device": "cpu",
            },
        ),
        "register_grad_mask": (an.register_grad_mask, {"param": w, "mask": mask}),
        "render_dot": (
            an.render_dot,
            {**graph, "filename": "graph", "format": "svg", "max_nodes": 10},
        ),
        "saved_memory": (an.saved_memory, {"tensor": root, "modules": None}),
        "to_dot": (
            an.to_dot,
            {**graph},
        ),
        "to_html": (
            an.to_html,
            {
                "root": root,
                "names": {"w": w},
                "modules": None,
                "collapse": True,
                "title": "graph",
                "diff": None,
            },
        ),
        "track_modules": (an.track_modules, {"model": lin}),
        "walk_graph": (an.walk_graph, {"root": root}),
        "ModuleTrace.path_of": (trace.path_of, {"node": root.grad_fn}),
        "ModuleTrace.calls_of": (trace.calls_of, {"nodes": [root.grad_fn]}),
        "MaskedLinearFunction.apply": (
            an.MaskedLinearFunction.apply,
            {
                "input": torch.randn(2, 4),
                "weight": w,
                "mask": mask,
                "bias": torch.zeros(3),
                "mode": "prune",
            },
        ),
    }


# The plain records the package returns (rows, diffs, pages), with their fields:
# made by the package, never checked, like FrozenReport.
RECORDS = {
    "NodeRow": ["index", "kind", "module", "call", "activations", "parameters",
                "buffers", "shared", "not_counted"],
    "ModuleRow": ["path", "calls", "nodes", "activations", "parameters", "buffers"],
    "CallRow": ["path", "call", "nodes", "total"],
    "StorageRow": ["kind", "name", "nbytes", "node", "saves", "shape", "dtype",
                   "device"],
    "NotCounted": ["node", "attribute", "reason"],
    "NodeChange": ["module", "call", "kind", "before", "after"],
    "ModuleChange": ["path", "nodes_before", "nodes_after", "bytes_before",
                     "bytes_after"],
    "Calls": ["paths", "call_index", "parents", "threads"],
}  # fmt: skip
RECORD_MAKERS = [
    *[(n, "saved_memory") for n in ("SavedMemory", "NodeRow", "ModuleRow")],
    *[(n, "saved_memory") for n in ("CallRow", "StorageRow", "NotCounted")],
    *[(n, "diff_graphs") for n in ("GraphDiff", "NodeChange", "ModuleChange")],
    ("GraphHtml", "to_html"),
    ("Calls", "ModuleTrace.calls"),
]


class _Wrong:
    """A value no argument of the package accepts."""

    def __repr__(self) -> str:
        return "<wrong>"


# Arguments that take any value by design, with the reason.
ANY_VALUE = {
    ("FrozenReport", "*"): "a plain record of numbers, built by frozen_report",
    **{(name, "*"): f"a plain record, built by {by}" for name, by in RECORD_MAKERS},
}


def _misuses() -> list[tuple[str, str]]:
    cases = []
    for name, (_, kwargs) in _valid_calls().items():
        for param in kwargs:
            if (name, param) not in ANY_VALUE and (name, "*") not in ANY_VALUE:
                cases.append((name, param))
    return cases


@pytest.mark.parametrize(("name", "param"), _misuses())
def test_every_misuse_names_the_argument(name: str, param: str) -> None:
    func, kwargs = _valid_calls()[name]
    kwargs[param] = _Wrong()
    with pytest.raises((TypeError, ValueError)) as raised:
        _call(func, kwargs)
    message = str(raised.value)
    assert f"argument '{param}'" in message, message
    assert "<wrong>" in message or "_Wrong" in message, message


def _call(func: Callable[..., object], kwargs: dict[str, object]) -> None:
    """Call ``func``, and enter what it returns if that is a context manager."""
    result = func(**kwargs)
    if isinstance(result, contextlib.AbstractContextManager):
        with result:
            pass


def _odd_tensors() -> dict[str, torch.Tensor]:
    """Tensors that are easy to pass by mistake and hard for code to expect."""
    x = torch.randn(3, 4)
    with warnings.catch_warnings():  # quantized dtypes are deprecated in torch
        warnings.filterwarnings("ignore", "torch.quantize_per_tensor", UserWarning)
        quantized = torch.quantize_per_tensor(x, 0.1, 0, torch.qint8)
    return {
        "quantized": quantized,
        "meta": torch.empty(3, 4, device="meta"),
        "sparse": x.to_sparse(),
        "0-dim": torch.tensor(1.0),
        "complex": torch.randn(3, 4, dtype=torch.complex64),
        "int": torch.ones(3, 4, dtype=torch.int64),
        "wrong shape": torch.randn(5, 7),
        "negative bit": torch.randn(3, 4, dtype=torch.complex64).conj().imag,
    }


ODD = list(_odd_tensors())


def _tensor_misuses() -> list[tuple[str, str, str]]:
    cases = []
    for name, (_, kwargs) in _valid_calls().items():
        if name == "render_dot":  # to_dot's checks, then Graphviz, which may be absent
            continue
        for param, value in kwargs.items():
            if isinstance(value, torch.Tensor) and not isinstance(
                value, torch.nn.Parameter
            ):
                cases += [(name, param, odd) for odd in ODD]
    return cases


@pytest.mark.parametrize(("name", "param", "odd"), _tensor_misuses())
def test_an_odd_tensor_is_used_or_refused_by_name(
    name: str, param: str, odd: str
) -> None:
    """An odd tensor is either handled or refused with the argument's name:
    never a raw error from deep inside torch."""
    func, kwargs = _valid_calls()[name]
    kwargs[param] = _odd_tensors()[odd]
    try:
        _call(func, kwargs)
    except Exception as error:
        named = isinstance(error, TypeError | ValueError) and re.search(
            r"argument '\w+'", str(error)
        )
        if not named:
            pytest.fail(f"raw {type(error).__name__}: {error}")


def test_every_public_callable_has_a_misuse_case() -> None:
    public = {n for n in autograd_notes.__all__ if callable(getattr(autograd_notes, n))}
    calls = {name.split(".")[0] for name in _valid_calls()}
    assert public == calls
