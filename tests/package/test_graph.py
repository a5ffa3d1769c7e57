"""Tests for autograd_notes.graph: walking, printing, DOT and drawing the graph."""

from __future__ import annotations

import io
import re
import signal
import subprocess
import sys
import time
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.figure import Figure

from autograd_notes.drawing import draw_graph
from autograd_notes.graph import (
    format_graph,
    free_graph,
    render_dot,
    to_dot,
    walk_graph,
)

PUBLIC: list[Callable[..., object]] = [
    walk_graph,
    format_graph,
    to_dot,
    draw_graph,
    lambda root: render_dot(root, "unused.svg"),
]
CHAIN = 1_000_000
NODE_LINE = re.compile(r'^  (n\d+) \[label="((?:[^"\\]|\\.)*)"(.*)\];$')
EDGE_LINE = re.compile(r"^  (n\d+) -> (n\d+);$")


def kinds(nodes: list[torch.autograd.graph.Node]) -> list[str]:
    return [type(node).__name__ for node in nodes]


def chain(steps: int) -> torch.Tensor:
    y = torch.ones(1, requires_grad=True)
    for _ in range(steps):
        y = y * 1.0001
    return y


@pytest.fixture(scope="module")
def million_chain() -> Iterator[list[torch.Tensor]]:
    """``y = y * 1.0001`` a million times, in a list so teardown can free it."""
    holder = [chain(CHAIN)]
    yield holder
    free_graph(holder.pop())


@pytest.fixture
def abab() -> dict[str, torch.Tensor]:
    """``y = (a * b + a).sum()``: ``a`` is reached by two paths."""
    a = torch.ones(2, requires_grad=True)
    b = torch.full((2,), 3.0, requires_grad=True)
    y = (a * b + a).sum()
    return {"a": a, "b": b, "y": y}


@pytest.fixture
def close_figures() -> Iterator[None]:
    yield
    plt.close("all")


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


# -- bad input ----------------------------------------------------------------


@pytest.mark.parametrize("func", PUBLIC)
@pytest.mark.parametrize("root", [3, "y", None, [torch.ones(1)]])
def test_every_function_rejects_a_root_that_is_not_a_tensor_or_node(
    func: Callable[..., object], root: object
) -> None:
    with pytest.raises(
        TypeError, match=rf"argument 'root' .* not {type(root).__name__}"
    ):
        func(root)


@pytest.mark.parametrize("func", [format_graph, to_dot, draw_graph])
def test_names_must_be_a_mapping_with_str_keys(
    func: Callable[..., object], abab: dict[str, torch.Tensor]
) -> None:
    with pytest.raises(
        TypeError, match=r"argument 'names' must be a mapping.* not list"
    ):
        func(abab["y"], names=[("a", abab["a"])])
    with pytest.raises(TypeError, match="argument 'names' must have str keys, not int"):
        func(abab["y"], names={1: abab["a"]})


@pytest.mark.parametrize(
    ("func", "flag"),
    [
        (format_graph, "show_saved"),
        (format_graph, "show_retained"),
        (to_dot, "show_saved"),
        (draw_graph, "show_saved"),
    ],
)
def test_flags_must_be_bools(
    func: Callable[..., object], flag: str, abab: dict[str, torch.Tensor]
) -> None:
    with pytest.raises(TypeError, match=f"argument '{flag}' must be a bool, not str"):
        func(abab["y"], **{flag: "yes"})


# -- walk_graph ---------------------------------------------------------------


def test_walk_is_a_preorder_in_next_functions_order() -> None:
    x = torch.ones(3, requires_grad=True)
    nodes = walk_graph((x * 2).sum())
    assert kinds(nodes) == ["SumBackward0", "MulBackward0", "AccumulateGrad"]
    assert nodes[2].variable is x  # type: ignore[attr-defined]


def test_walk_visits_a_shared_node_once(abab: dict[str, torch.Tensor]) -> None:
    nodes = walk_graph(abab["y"])
    assert kinds(nodes) == [
        "SumBackward0",
        "AddBackward0",
        "MulBackward0",
        "AccumulateGrad",
        "AccumulateGrad",
    ]
    assert [node.variable for node in nodes[3:]] == [abab["a"], abab["b"]]  # type: ignore[attr-defined]
    assert len({id(node) for node in nodes}) == len(nodes)


def test_walk_of_x_times_x_has_one_leaf() -> None:
    x = torch.ones(2, requires_grad=True)
    assert kinds(walk_graph(x * x)) == ["MulBackward0", "AccumulateGrad"]


def test_walk_from_a_node_matches_walk_from_its_tensor(
    abab: dict[str, torch.Tensor],
) -> None:
    y = abab["y"]
    from_tensor, from_node = walk_graph(y), walk_graph(y.grad_fn)
    assert all(a is b for a, b in zip(from_tensor, from_node, strict=True))
    # Starting lower down walks only what is below.
    mul = from_tensor[2]
    assert kinds(walk_graph(mul)) == [
        "MulBackward0",
        "AccumulateGrad",
        "AccumulateGrad",
    ]


def test_walk_skips_inputs_that_need_no_grad() -> None:
    x = torch.ones(2, requires_grad=True)
    y = x * torch.ones(2)  # MulBackward0 has a None edge for the second input
    assert [fn is None for fn, _ in y.grad_fn.next_functions] == [False, True]
    assert kinds(walk_graph(y)) == ["MulBackward0", "AccumulateGrad"]


@pytest.mark.parametrize("requires_grad", [True, False])
def test_walk_of_a_tensor_without_grad_fn_is_empty(requires_grad: bool) -> None:
    assert walk_graph(torch.ones(3, requires_grad=requires_grad)) == []


def test_walk_handles_a_million_node_chain(million_chain: list[torch.Tensor]) -> None:
    start = time.perf_counter()
    nodes = walk_graph(million_chain[0])
    seconds = time.perf_counter() - start
    assert len(nodes) == CHAIN + 1
    assert kinds(nodes[:2]) == ["MulBackward0", "MulBackward0"]
    assert kinds(nodes[-1:]) == ["AccumulateGrad"]
    assert seconds < 60, f"walk took {seconds:.1f} s: not linear?"


# -- format_graph -------------------------------------------------------------

ABAB_TREE = """\
[0] SumBackward0  (grad_fn of y)
[1] AddBackward0
├─ [2] MulBackward0
│  ├─ [3] AccumulateGrad  a: leaf tensor, shape (2,), float32, requires_grad=True
│  └─ [4] AccumulateGrad  b: leaf tensor, shape (2,), float32, requires_grad=True
└─ -> [3] AccumulateGrad (see above)"""


def test_format_small_graph_exactly(abab: dict[str, torch.Tensor]) -> None:
    text = format_graph(abab["y"], names=abab)
    assert text == ABAB_TREE
    assert text.count("a: leaf tensor") == 1  # a is printed once, referenced twice
    assert format_graph(abab["y"], names=abab) == text  # same on every call


def test_format_takes_names_from_locals_ignoring_other_values(
    abab: dict[str, torch.Tensor],
) -> None:
    a, b, y = abab["a"], abab["b"], abab["y"]
    alias, count, label = a, 3, "not a tensor"
    namespace = {"a": a, "alias": alias, "b": b, "count": count, "label": label, "y": y}
    assert format_graph(y, names=namespace) == ABAB_TREE  # the first name wins


def test_format_without_names_uses_neutral_labels(
    abab: dict[str, torch.Tensor],
) -> None:
    lines = format_graph(abab["y"]).split("\n")
    assert lines[0] == "[0] SumBackward0"
    assert lines[3].endswith(
        "[3] AccumulateGrad  leaf tensor, shape (2,), float32, requires_grad=True"
    )


def test_format_names_parameters_of_a_module() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    loss = model(torch.ones(3, 2)).sum()
    text = format_graph(loss, names=dict(model.named_parameters()))
    assert text == (
        "[0] SumBackward0\n"
        "[1] AddmmBackward0\n"
        "├─ [2] AccumulateGrad  bias: leaf parameter, shape (1,), float32, "
        "requires_grad=True\n"
        "└─ [3] TBackward0\n"
        "   [4] AccumulateGrad  weight: leaf parameter, shape (1, 2), float32, "
        "requires_grad=True"
    )


def test_format_node_root_and_scalar_saved_value() -> None:
    x = torch.ones(3, requires_grad=True)
    mul = (x * 2).grad_fn
    # With a Python number, MulBackward0 saves it as a 0-dim tensor, and does
    # not save self at all (it is only needed for the other input's grad).
    assert format_graph(mul, names={"x": x}, show_saved=True) == (
        "[0] MulBackward0\n"
        "    _saved_other: tensor of shape (), int64, value 2\n"
        "    _saved_self: None\n"
        "[1] AccumulateGrad  x: leaf tensor, shape (3,), float32, requires_grad=True"
    )


def test_format_shows_saved_tensors_then_freed_ones(
    abab: dict[str, torch.Tensor],
) -> None:
    before = format_graph(abab["y"], names=abab, show_saved=True)
    assert "│      _saved_other: tensor of shape (2,), float32" in before
    assert "│      _saved_self: tensor of shape (2,), float32" in before
    assert "    _saved_alpha: 1" in before
    assert "freed" not in before
    abab["y"].backward()
    after = format_graph(abab["y"], names=abab, show_saved=True)
    assert "│      _saved_other: <freed by backward>" in after
    assert "│      _saved_self: <freed by backward>" in after
    # Everything else prints as before: only the freed values changed.
    changed = [
        (old, new)
        for old, new in zip(before.split("\n"), after.split("\n"), strict=True)
        if old != new
    ]
    assert [old.split(":")[0] for old, _ in changed] == [
        "│      _saved_other",
        "│      _saved_self",
    ]
    assert format_graph(abab["y"], names=abab) == ABAB_TREE


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


def test_format_custom_function_lists_saved_tensors() -> None:
    x = torch.ones(3, requires_grad=True)
    y = Double.apply(x).sum()
    expected = (
        "[0] SumBackward0\n"
        "    _saved_self_sym_sizes: (3,)\n"
        "[1] DoubleBackward\n"
        "    saved_tensors: {}\n"
        "[2] AccumulateGrad  x: leaf tensor, shape (3,), float32, requires_grad=True"
    )
    saved = "(tensor of shape (3,),)"
    assert format_graph(y, names={"x": x}, show_saved=True) == expected.format(saved)
    y.backward()
    freed = format_graph(y, names={"x": x}, show_saved=True)
    assert freed == expected.format("<freed by backward>")


def test_format_marks_retained_grads_only_when_asked() -> None:
    a = torch.ones(2, requires_grad=True)
    h = a * 3
    h.retain_grad()
    g = h * 2  # not retaining
    y = (g + h).sum()
    names = {"a": a, "h": h, "g": g, "y": y}
    plain = format_graph(y, names=names)
    marked = format_graph(y, names=names, show_retained=True)
    assert "[2] MulBackward0  (grad_fn of g)" in plain
    assert "(grad_fn of h)" in plain
    assert "retains" not in plain
    assert "(grad_fn of h [retains grad])" in marked
    assert "(grad_fn of g)" in marked
    assert marked.count("[retains grad]") == 1


def test_format_lists_every_output_of_a_multi_output_node() -> None:
    q, k = torch.ones(4, requires_grad=True).split(2)
    text = format_graph((q * k).sum(), names={"q": q, "k": k})
    assert "├─ [2] SplitBackward0  (grad_fn of q, k)" in text
    assert "└─ -> [2] SplitBackward0 (see above)" in text


def test_format_compiled_region_is_one_labelled_node() -> None:
    x = torch.ones(3, requires_grad=True)
    # aot_eager is a real torch.compile backend: Dynamo captures the function
    # and AOTAutograd makes the CompiledFunctionBackward node, as with the
    # default inductor backend, without compiling C++ kernels (seconds).
    compiled = torch.compile(lambda t: (t.sin() * 2).sum(), backend="aot_eager")
    out = compiled(x)
    assert format_graph(out, names={"x": x, "out": out}) == (
        "[0] CompiledFunctionBackward (torch.compile region: internals hidden)"
        "  (grad_fn of out)\n"
        "[1] AccumulateGrad  x: leaf tensor, shape (3,), float32, requires_grad=True"
    )
    nodes, _ = dot_structure(to_dot(out))
    assert nodes["n0"][0].startswith(
        "CompiledFunctionBackward\\n(torch.compile region: internals hidden)"
    )
    out.backward()
    assert torch.allclose(x.grad, 2 * torch.cos(x.detach()))


@pytest.mark.parametrize("requires_grad", [True, False])
def test_format_tensor_without_graph_is_one_line(requires_grad: bool) -> None:
    x = torch.ones(3, requires_grad=requires_grad)
    text = format_graph(x, names={"x": x})
    expected = f"x: leaf tensor, shape (3,), float32, requires_grad={requires_grad}"
    assert text == expected + ("" if requires_grad else " (no graph)")
    assert format_graph(torch.zeros(2, 2, dtype=torch.float64)) == (
        "leaf tensor, shape (2, 2), float64, requires_grad=False (no graph)"
    )


def test_format_caps_indentation_of_deep_branching_graphs() -> None:
    w = torch.ones(1, requires_grad=True)
    y = torch.ones(1, requires_grad=True)
    for _ in range(100):  # each step nests two branches: Add(Mul(y, w), y)
        y = y * w + y
    lines = format_graph(y).split("\n")
    defined = [
        int(match[1])
        for line in lines
        if "see above" not in line and (match := re.search(r"\[(\d+)\] ", line))
    ]
    assert sorted(defined) == list(range(len(walk_graph(y))))  # each node once
    prefixes = [len(re.split(r"\[|-> ", line, maxsplit=1)[0]) for line in lines]
    assert max(prefixes) == 3 * 64 + 3  # 64 levels of "│  ", then a connector


def test_format_handles_a_million_node_chain(million_chain: list[torch.Tensor]) -> None:
    start = time.perf_counter()
    text = format_graph(million_chain[0], collapse=False)
    seconds = time.perf_counter() - start
    lines = text.split("\n")
    assert len(lines) == CHAIN + 1
    assert lines[0] == "[0] MulBackward0"
    assert (
        lines[CHAIN // 2] == f"[{CHAIN // 2}] MulBackward0"
    )  # a chain stays flush left
    assert lines[-1] == (
        f"[{CHAIN}] AccumulateGrad  "
        "leaf tensor, shape (1,), float32, requires_grad=True"
    )
    assert seconds < 60, f"format_graph took {seconds:.1f} s: not linear?"


# -- to_dot -------------------------------------------------------------------


def test_to_dot_small_graph(abab: dict[str, torch.Tensor]) -> None:
    source = to_dot(abab["y"], names=abab)
    nodes, edges = dot_structure(source)
    labels = {node: label for node, (label, _) in nodes.items()}
    assert labels == {
        "n0": "SumBackward0\\n(grad_fn of y)",
        "n1": "AddBackward0",
        "n2": "MulBackward0",
        "n3": "AccumulateGrad\\na: (2,) float32",
        "n4": "AccumulateGrad\\nb: (2,) float32",
    }
    assert edges == [
        ("n0", "n1"),
        ("n1", "n2"),
        ("n1", "n3"),
        ("n2", "n3"),
        ("n2", "n4"),
    ]
    # Root, inner nodes and leaves are styled differently.
    assert "#fbd38d" in nodes["n0"][1]
    assert nodes["n1"][1] == nodes["n2"][1] == ""
    assert "ellipse" in nodes["n3"][1]
    assert nodes["n3"][1] == nodes["n4"][1]
    assert to_dot(abab["y"], names=abab) == source


def test_to_dot_escapes_awkward_names() -> None:
    x = torch.ones(2, requires_grad=True)
    name = 'say "hi"\\n'
    nodes, _ = dot_structure(to_dot(x.exp().sum(), names={name: x}))
    assert nodes["n2"][0] == 'AccumulateGrad\\nsay \\"hi\\"\\\\n: (2,) float32'


def test_to_dot_saved_values_and_freed_ones(abab: dict[str, torch.Tensor]) -> None:
    nodes, _ = dot_structure(to_dot(abab["y"], show_saved=True))
    assert nodes["n2"][0] == (
        "MulBackward0\\n_saved_other: tensor of shape (2,), float32"
        "\\n_saved_self: tensor of shape (2,), float32"
    )
    abab["y"].backward()
    nodes, _ = dot_structure(to_dot(abab["y"], show_saved=True))
    assert nodes["n2"][0] == (
        "MulBackward0\\n_saved_other: <freed by backward>"
        "\\n_saved_self: <freed by backward>"
    )


def test_to_dot_tensor_without_graph_is_one_node() -> None:
    x = torch.ones(3)
    nodes, edges = dot_structure(to_dot(x, names={"x": x}))
    assert list(nodes) == ["n0"]
    assert nodes["n0"][0] == (
        "x: leaf tensor, shape (3,), float32, requires_grad=False (no graph)"
    )
    assert edges == []


def test_to_dot_handles_a_million_node_chain(million_chain: list[torch.Tensor]) -> None:
    start = time.perf_counter()
    source = to_dot(million_chain[0], collapse=False)
    seconds = time.perf_counter() - start
    # dot_structure checks the small graphs line by line; here, count.
    assert source.count(" [label=") == CHAIN + 1
    assert source.count(" -> ") == CHAIN
    assert '\n  n0 [label="MulBackward0", shape=box' in source
    assert source.endswith(f"\n  n{CHAIN - 1} -> n{CHAIN};\n}}")
    assert seconds < 60, f"to_dot took {seconds:.1f} s: not linear?"


def test_no_output_contains_a_memory_address() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)
    )
    x = torch.randn(5, 3)
    loss = (Double.apply(model(x)) ** 2).mean()
    names = {**dict(model.named_parameters()), "loss": loss, "model": model}
    texts = [
        format_graph(loss, names=names, show_saved=True, show_retained=True),
        to_dot(loss, names=names, show_saved=True),
    ]
    loss.backward()
    texts.append(format_graph(loss, names=names, show_saved=True))
    for text in texts:
        assert "0x" not in text
        assert " at 0x" not in text
        assert "object at" not in text


# -- render_dot ---------------------------------------------------------------


def test_render_dot_without_the_dot_program_says_what_to_install(
    abab: dict[str, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` program to be found
    # With the graphviz package installed, the missing program is reported;
    # without it, the missing package is. Either message names the fix.
    with pytest.raises(
        (ImportError, RuntimeError), match=r"'dot' program|pip install graphviz"
    ):
        render_dot(abab["y"], tmp_path / "graph.svg")
    assert not (tmp_path / "graph.svg").exists()


def test_render_dot_without_the_graphviz_package(
    abab: dict[str, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    with pytest.raises(ImportError, match=r"pip install graphviz"):
        render_dot(abab["y"], tmp_path / "graph.svg")


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


def test_render_dot_writes_the_rendered_bytes(
    abab: dict[str, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeGraphviz(has_dot=True)
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    out = render_dot(abab["y"], str(tmp_path / "g.png"), format="png", names=abab)
    assert out == tmp_path / "g.png"
    assert out.read_bytes() == b"<rendered/>"
    assert fake.calls == [(to_dot(abab["y"], names=abab), "png")]


def test_render_dot_turns_a_missing_program_into_a_clear_error(
    abab: dict[str, torch.Tensor], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", FakeGraphviz(has_dot=False))
    with pytest.raises(RuntimeError, match="needs Graphviz's 'dot' program on PATH"):
        render_dot(abab["y"], tmp_path / "graph.svg")
    assert not (tmp_path / "graph.svg").exists()


def test_render_dot_rejects_bad_arguments(
    abab: dict[str, torch.Tensor], tmp_path: Path
) -> None:
    y = abab["y"]
    with pytest.raises(
        TypeError, match=r"argument 'filename' must be a str .* not int"
    ):
        render_dot(y, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="argument 'format' must be a str, not int"):
        render_dot(y, tmp_path / "g.svg", format=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'colour'"):
        render_dot(y, tmp_path / "g.svg", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="argument 'show_saved' must be a bool"):
        render_dot(y, tmp_path / "g.svg", show_saved="yes")


# -- draw_graph ---------------------------------------------------------------


def boxes(fig: Figure) -> list[tuple[str, float, str]]:
    """(label, y, fill colour) of each node box drawn."""
    found = []
    for text in fig.axes[0].texts:
        patch = text.get_bbox_patch()
        if text.get_text() and patch is not None:
            colour = "#{:02x}{:02x}{:02x}".format(
                *(round(255 * c) for c in patch.get_facecolor()[:3])
            )
            found.append((text.get_text(), text.get_position()[1], colour))
    return found


@pytest.mark.usefixtures("close_figures")
def test_draw_graph_draws_each_node_once_in_layers(
    abab: dict[str, torch.Tensor],
) -> None:
    fig = draw_graph(abab["y"], names=abab)
    assert isinstance(fig, Figure)
    drawn = boxes(fig)
    assert [label for label, _, _ in drawn] == [
        "SumBackward0\n(grad_fn of y)",
        "AddBackward0",
        "MulBackward0",
        "a\n(2,) float32",
        "b\n(2,) float32",
    ]
    ys = [y for _, y, _ in drawn]
    assert ys[0] > ys[1] > ys[2] > ys[3] == ys[4]  # root on top, leaves at the bottom
    colours = [colour for _, _, colour in drawn]
    assert colours[1] == colours[2]
    assert len({colours[0], colours[1], colours[3]}) == 3  # root, node, leaf differ
    assert colours[3] == colours[4]
    arrows = [p for p in fig.axes[0].patches if p.get_gid() == "edge"]
    assert len(arrows) == 5  # Sum->Add, Add->Mul, Add->a, Mul->a, Mul->b
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        "root",
        "backward node",
        "leaf (AccumulateGrad)",
    ]
    fig.savefig(io.BytesIO(), format="png")


@pytest.mark.usefixtures("close_figures")
def test_draw_graph_is_deterministic(abab: dict[str, torch.Tensor]) -> None:
    first = boxes(draw_graph(abab["y"], names=abab))
    second = boxes(draw_graph(abab["y"], names=abab))
    assert first == second


@pytest.mark.usefixtures("close_figures")
def test_draw_graph_into_given_axes(abab: dict[str, torch.Tensor]) -> None:
    fig, (left, right) = plt.subplots(1, 2)
    assert draw_graph(abab["y"], ax=right) is fig
    assert len(left.texts) == 0
    assert sum(1 for t in right.texts if t.get_text()) == 5


@pytest.mark.usefixtures("close_figures")
def test_draw_graph_of_a_tensor_without_graph(abab: dict[str, torch.Tensor]) -> None:
    fig = draw_graph(abab["a"], names=abab)
    assert [label for label, _, _ in boxes(fig)] == ["a\n(2,) float32"]


@pytest.mark.usefixtures("close_figures")
def test_draw_graph_refuses_large_graphs() -> None:
    with pytest.raises(
        ValueError, match=r"at most 200 nodes .* has 252 nodes; use format_graph"
    ):
        draw_graph(chain(251), collapse=False)
    assert plt.get_fignums() == []


@pytest.mark.usefixtures("close_figures")
def test_draw_graph_rejects_a_bad_ax(abab: dict[str, torch.Tensor]) -> None:
    with pytest.raises(
        TypeError, match=r"argument 'ax' must be a matplotlib Axes .* not str"
    ):
        draw_graph(abab["y"], ax="left")  # type: ignore[arg-type]


def test_draw_graph_without_networkx_says_what_to_install(
    abab: dict[str, torch.Tensor], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "networkx", None)
    with pytest.raises(ImportError, match=r"pip install matplotlib networkx"):
        draw_graph(abab["y"])


# A plain loop over next_functions: Python sees every node, as any walk does,
# but nothing of this package is involved.
DEEP_CHAIN = """
import torch

x = torch.ones(2, requires_grad=True)
y = x
for _ in range(100_000):
    y = y * 1.0001
seen, node = [], y.grad_fn
while node is not None:
    seen.append(node)
    node = node.next_functions[0][0] if node.next_functions else None
"""
FREE_PLAIN = "del seen\ndel y\nprint('freed')\n"
FREE_ROOT_FIRST = "del y\nseen.reverse()\ndel seen\nprint('freed')\n"
CRASHES = torch.__version__ >= "2.13"  # older torch freed seen nodes iteratively


@pytest.mark.parametrize(
    ("free", "crashes"), [(FREE_PLAIN, CRASHES), (FREE_ROOT_FIRST, False)]
)
def test_freeing_a_walked_deep_graph(tmp_path: Path, free: str, crashes: bool) -> None:
    """PyTorch 2.13+: freeing a deep graph that Python has walked overflows the
    C stack unless the nodes are dropped root first (a chain's walk order is
    a topological order). The known-issue page documents this; if PyTorch
    fixes it, this test fails and the page and the package's workaround can
    go."""
    script = tmp_path / "deep.py"
    script.write_text(DEEP_CHAIN + free)
    result = subprocess.run([sys.executable, str(script)], capture_output=True)
    if crashes:
        assert result.returncode == -signal.SIGSEGV
    else:
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == b"freed"


class _Watched(torch.Tensor):
    """A tensor subclass that logs every __torch_function__ call: user code."""

    calls: ClassVar[list[str]] = []

    @classmethod
    def __torch_function__(
        cls, func: Any, types: Any, args: Any = (), kwargs: Any = None
    ) -> Any:
        cls.calls.append(getattr(func, "__name__", repr(func)))
        return super().__torch_function__(func, types, args, kwargs or {})


READERS = ["walk_graph", "format_graph", "to_dot", "draw_graph", "render_dot"]


@pytest.mark.parametrize("func", [*READERS, "free_graph"])
def test_reading_a_graph_runs_no_torch_function(
    func: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", FakeGraphviz(has_dot=True))
    x = torch.ones(2).as_subclass(_Watched).requires_grad_()
    y = (x * 2).sum()
    _Watched.calls.clear()
    calls = {
        "walk_graph": lambda: walk_graph(y),
        "format_graph": lambda: format_graph(y, names={"x": x}, show_saved=True),
        "to_dot": lambda: to_dot(y, names={"x": x}, show_saved=True),
        "draw_graph": lambda: draw_graph(y, names={"x": x}),
        "render_dot": lambda: render_dot(y, tmp_path / "g.svg"),
        "free_graph": lambda: free_graph(y),
    }
    calls[func]()
    plt.close("all")
    assert _Watched.calls == []


def test_a_nested_tensor_leaf_is_described() -> None:
    with warnings.catch_warnings():  # strided nested tensors are a prototype
        warnings.simplefilter("ignore", UserWarning)
        nt = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    nt.requires_grad_()
    text = format_graph(nt * 2, show_saved=True)
    assert "leaf tensor, shape nested (2 tensors), float32" in text
    assert format_graph(nt).startswith("leaf tensor, shape nested (2 tensors)")
    assert "nested (2 tensors) float32" in to_dot(nt * 2)


@pytest.mark.parametrize("max_nodes", [0, -1])
def test_render_dot_refuses_a_max_nodes_below_one(
    max_nodes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", FakeGraphviz(has_dot=True))
    y = (torch.ones(2, requires_grad=True) * 2).sum()
    with pytest.raises(ValueError, match=r"'max_nodes' must be at least 1, not -?\d"):
        render_dot(y, tmp_path / "g.svg", max_nodes=max_nodes)
    assert not (tmp_path / "g.svg").exists()


@pytest.mark.parametrize("func", [*READERS[1:], "free_graph"])
def test_a_torch_below_the_floor_is_refused_by_what_needs_it(
    func: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", FakeGraphviz(has_dot=True))
    y = (torch.ones(2, requires_grad=True) * 2).sum()
    calls = {
        "format_graph": lambda: format_graph(y, show_saved=True),
        "to_dot": lambda: to_dot(y, show_saved=True),
        "draw_graph": lambda: draw_graph(y, show_saved=True),
        "render_dot": lambda: render_dot(y, tmp_path / "g.svg", show_saved=True),
        "free_graph": lambda: free_graph(y),
    }
    monkeypatch.setattr(torch, "__version__", "2.9.1+cpu")
    with pytest.raises(
        RuntimeError, match=r"needs torch >= 2\.13; this is torch 2\.9\.1"
    ):
        calls[func]()
    assert y.grad_fn is not None  # nothing was freed or changed
    format_graph(y)  # what works on any torch still works


def test_the_floor_is_pyprojects() -> None:
    import tomllib

    from autograd_notes.graph import _TORCH_FLOOR

    root = Path(__file__).resolve().parents[2]
    deps = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert f"torch>={_TORCH_FLOOR}" in deps["dependencies"]
