"""Graphs, models and checkers that the tests of the graph modules share."""

from __future__ import annotations

import inspect
import re
import types
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import torch

CHAIN = 1_000_000  # steps of the million-node chain
# format_graph of the `abab` fixture, with its names.
ABAB_TREE = """\
[0] SumBackward0  (grad_fn of y)
[1] AddBackward0
├─ [2] MulBackward0
│  ├─ [3] AccumulateGrad  a: leaf tensor, shape (2,), float32, requires_grad=True
│  └─ [4] AccumulateGrad  b: leaf tensor, shape (2,), float32, requires_grad=True
└─ -> [3] AccumulateGrad (see above)"""
# The functions that read a graph (free_graph changes it).
READERS = ["walk_graph", "format_graph", "to_dot", "draw_graph", "render_dot"]
# The lines of DOT text that declare a node and an edge.
NODE_LINE = re.compile(r'^  (n\d+) \[label="((?:[^"\\]|\\.)*)"(.*)\];$')
EDGE_LINE = re.compile(r"^  (n\d+) -> (n\d+);$")


def kinds(nodes: list[torch.autograd.graph.Node]) -> list[str]:
    return [type(node).__name__ for node in nodes]


def chain(steps: int, start: torch.Tensor | None = None) -> torch.Tensor:
    y = torch.ones(1, requires_grad=True) if start is None else start
    for _ in range(steps):
        y = y * 1.0001
    return y


def dot_structure(
    source: str,
) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str]]]:
    """Check DOT text is well formed; return its nodes and edges.

    Braces balance outside quoted strings, every string closes, every line
    in the body is a node or an edge statement (or a comment or default), and
    every edge joins declared nodes.
    """
    depth, in_string, escaped = 0, False, False
    for char in source:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            assert depth >= 0
    assert depth == 0
    assert not in_string
    lines = source.split("\n")
    assert lines[0] == "digraph autograd {"
    assert lines[-1] == "}"
    nodes: dict[str, tuple[str, str]] = {}
    edges: list[tuple[str, str]] = []
    for line in lines[1:-1]:
        if line.startswith(("  //", "  graph [", "  node [", "  edge [")):
            continue
        node = NODE_LINE.match(line)
        if node:
            nodes[node[1]] = (node[2], node[3])
            continue
        edge = EDGE_LINE.match(line)
        assert edge, f"not a DOT statement: {line!r}"
        edges.append((edge[1], edge[2]))
    assert list(nodes) == [f"n{i}" for i in range(len(nodes))]
    for tail, head in edges:
        assert tail in nodes
        assert head in nodes
    return nodes, edges


class FakeGraphviz(types.ModuleType):
    """Stands in for the graphviz package: records what it was asked to do."""

    class ExecutableNotFound(RuntimeError):
        pass

    def __init__(self, *, has_dot: bool) -> None:
        super().__init__("graphviz")
        self.has_dot = has_dot
        self.calls: list[tuple[str, str]] = []
        fake = self

        class Source:
            def __init__(self, source: str) -> None:
                self.source = source

            def pipe(self, *, format: str) -> bytes:
                if not fake.has_dot:
                    raise fake.ExecutableNotFound("failed to execute PosixPath('dot')")
                fake.calls.append((self.source, format))
                return b"<rendered/>"

        self.Source = Source


class Double(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor
    ) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(
        ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor
    ) -> torch.Tensor:
        return grad * 2


def function_named(name: str) -> type[torch.autograd.Function]:
    def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    def backward(ctx: object, g: torch.Tensor) -> torch.Tensor:
        return g * 2

    return type(
        name,
        (torch.autograd.Function,),
        {"forward": staticmethod(forward), "backward": staticmethod(backward)},
    )


class _Watched(torch.Tensor):
    """A tensor subclass that logs every __torch_function__ call: user code."""

    calls: ClassVar[list[str]] = []

    @classmethod
    def __torch_function__(
        cls, func: Any, types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        cls.calls.append(getattr(func, "__name__", repr(func)))
        return super().__torch_function__(func, types, args, kwargs or {})


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.act = torch.nn.Tanh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.act(self.fc(x))


class Stack(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.head = torch.nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x * 2)


def drawn_labels(fig: plt.Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts if t.get_text()]


def docstrings(module: Any) -> dict[str, str]:
    """Every public docstring of ``module``, methods included, by name."""
    found = {module.__name__: inspect.getdoc(module) or ""}
    for name in module.__all__:
        obj = getattr(module, name)
        found[name] = inspect.getdoc(obj) or ""
        for attr, member in vars(obj).items() if isinstance(obj, type) else []:
            doc = getattr(member, "__doc__", None)
            if isinstance(doc, str) and not attr.startswith("__"):
                found[f"{name}.{attr}"] = doc
    return found
