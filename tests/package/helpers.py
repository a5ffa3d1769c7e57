"""Graphs, models and checkers that the tests of the graph modules share."""

from __future__ import annotations

import inspect
import re
import types
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import torch

from autograd_notes import ModuleTrace, track_modules

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
# Depths every table and view refuses, with the error and the message's end.
BAD_DEPTHS = [
    (-5, ValueError, "at least 1, not -5"),
    (0, ValueError, "at least 1, not 0"),
    (1.5, TypeError, "an int or None, not float"),
    ("a", TypeError, "an int or None, not str"),
    (True, TypeError, "an int or None, not bool"),
]
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


class GPTBlock(torch.nn.Module):
    """One GPT-2 block: attention and an MLP, each after a LayerNorm, residual."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln_1 = torch.nn.LayerNorm(width)
        self.c_attn = torch.nn.Linear(width, 3 * width)
        self.attn_proj = torch.nn.Linear(width, width)
        self.ln_2 = torch.nn.LayerNorm(width)
        self.c_fc = torch.nn.Linear(width, 4 * width)
        self.act = torch.nn.GELU(approximate="tanh")
        self.mlp_proj = torch.nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, width = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(width, dim=2)
        q, k, v = (
            t.view(batch, seq, self.heads, width // self.heads).transpose(1, 2)
            for t in (q, k, v)
        )
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).reshape(batch, seq, width))
        return x + self.mlp_proj(self.act(self.c_fc(self.ln_2(x))))


class GPT(torch.nn.Module):
    """A GPT-2-small-shaped model (12 blocks; width 768 in GPT-2, random weights)."""

    def __init__(
        self, vocab: int = 64, width: int = 32, heads: int = 4, layers: int = 12
    ) -> None:
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, width)
        self.wpe = torch.nn.Embedding(64, width)
        self.h = torch.nn.ModuleList(GPTBlock(width, heads) for _ in range(layers))
        self.ln_f = torch.nn.LayerNorm(width)
        self.lm_head = torch.nn.Linear(width, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1])
        x = self.wte(tokens) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def gpt_loss(batch: int = 2, seq: int = 8) -> tuple[ModuleTrace, torch.Tensor]:
    """A traced GPT-2-shaped model's cross-entropy on random tokens."""
    torch.manual_seed(0)
    model = GPT()
    tokens = torch.randint(0, 64, (batch, seq))
    with track_modules(model) as trace:
        logits = model(tokens)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten())
    return trace, loss


class Loop(torch.nn.Module):
    """An ``LSTMCell`` stepped ``steps`` times; a learned start state, or zeros."""

    def __init__(self, steps: int, learned_start: bool) -> None:
        super().__init__()
        self.cell = torch.nn.LSTMCell(4, 4)
        self.steps = steps
        self.start = torch.nn.Parameter(torch.zeros(2, 1, 4), learned_start)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, c = self.start[0], self.start[1]
        for t in range(self.steps):
            h, c = self.cell(x[t], (h, c))
        return h


def lstm_loss(steps: int, learned_start: bool) -> tuple[ModuleTrace, torch.Tensor]:
    torch.manual_seed(0)
    model = Loop(steps, learned_start)
    with track_modules(model) as trace:
        loss = model(torch.randn(steps, 1, 4)).sum()
    return trace, loss


_TREE_LINE = re.compile(r"^([│├└─ ]*?)(├─ |└─ )?(-> )?\[(\d+)\]")


def text_edges(text: str) -> list[tuple[int, int]]:
    """The links ``(entry, input)`` that format_graph's tree prints.

    A line after a branch mark (``├─``, ``└─``) is an input of the nearest
    line above it that starts further left; a plain line, of the nearest
    line above that starts no further right (an only input).
    """
    edges: list[tuple[int, int]] = []
    above: list[tuple[int, int]] = []  # (column, entry) of the lines so far
    for line in text.split("\n"):
        found = _TREE_LINE.match(line)
        assert found, line
        column = len(found[1]) + len(found[2] or "")
        entry = int(found[4])
        limit = column - 1 if found[2] else column
        parent = next((e for c, e in reversed(above) if c <= limit), None)
        if parent is not None:
            edges.append((parent, entry))
        if not found[3]:  # a back-reference defines nothing
            above.append((column, entry))
    return edges


def has_cycle(edges: list[tuple[int, int]]) -> bool:
    """Whether the directed graph of ``edges`` has a cycle (Kahn's algorithm)."""
    targets: dict[int, list[int]] = {}
    indegree: dict[int, int] = {}
    for a, b in edges:
        targets.setdefault(a, []).append(b)
        indegree[b] = indegree.get(b, 0) + 1
        indegree.setdefault(a, 0)
    ready = [n for n, d in indegree.items() if d == 0]
    done = 0
    while ready:
        n = ready.pop()
        done += 1
        for m in targets.get(n, ()):
            indegree[m] -= 1
            if indegree[m] == 0:
                ready.append(m)
    return done < len(indegree)


def superscript_model(last: torch.nn.Module) -> tuple[ModuleTrace, torch.Tensor]:
    """Submodules named ``2``, ``10`` and ``²`` (a digit to ``str.isdigit``)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential()
    model.add_module("²", torch.nn.Linear(2, 2))
    model.add_module("10", torch.nn.Tanh())
    model.add_module("2", last)
    with track_modules(model) as trace:
        loss = model(torch.ones(1, 2)).sum()
    return trace, loss
