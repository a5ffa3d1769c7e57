"""Collapsed runs, module groups and awkward input in text, DOT and pictures."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.func import grad, vmap
from torch.utils.checkpoint import checkpoint

import autograd_notes
from autograd_notes.drawing import draw_graph
from autograd_notes.graph import (
    ModuleTrace,
    format_graph,
    render_dot,
    to_dot,
    track_modules,
    walk_graph,
)

from .test_graph import FakeGraphviz, dot_structure


@pytest.fixture
def close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def chain(steps: int, start: torch.Tensor | None = None) -> torch.Tensor:
    y = torch.ones(1, requires_grad=True) if start is None else start
    for _ in range(steps):
        y = y * 1.0001
    return y


def drawn_labels(fig: plt.Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts if t.get_text()]


# -- collapsing runs ------------------------------------------------------------


def test_a_long_chain_prints_in_two_lines() -> None:
    assert format_graph(chain(1_000)) == (
        "[0-999] MulBackward0 ×1,000\n"
        "[1000] AccumulateGrad  leaf tensor, shape (1,), float32, requires_grad=True"
    )


def test_collapse_false_prints_every_node() -> None:
    lines = format_graph(chain(5), collapse=False).split("\n")
    assert lines[:2] == ["[0] MulBackward0", "[1] MulBackward0"]
    assert len(lines) == 6


def test_runs_shorter_than_three_stay_separate() -> None:
    x = torch.ones(1, requires_grad=True)
    text = format_graph((x * 2 * 3).exp())
    assert text.split("\n")[:3] == [
        "[0] ExpBackward0",
        "[1] MulBackward0",
        "[2] MulBackward0",
    ]


def test_runs_break_at_other_kinds_names_and_shared_nodes() -> None:
    x = torch.ones(1, requires_grad=True)
    a = chain(4, x)
    named = a * 2  # named below: starts a run of its own
    b = chain(3, named).exp()
    c = chain(5, b)
    y = c + a  # `a` is reached twice: its node cannot hide inside a run
    text = format_graph(y, names={"named": named})
    assert text == (
        "[0] AddBackward0\n"
        "├─ [1-5] MulBackward0 ×5\n"
        "│  [6] ExpBackward0\n"
        "│  [7-9] MulBackward0 ×3\n"
        "│  [10] MulBackward0  (grad_fn of named)\n"
        "│  [11-14] MulBackward0 ×4\n"
        "│  [15] AccumulateGrad  leaf tensor, shape (1,), float32, requires_grad=True\n"
        "└─ -> [11] MulBackward0 (see above)"
    )


def test_walk_order_numbers_are_kept_when_collapsing() -> None:
    y = chain(10).exp()
    full = format_graph(y, collapse=False).split("\n")
    short = format_graph(y).split("\n")
    assert short[0] == full[0] == "[0] ExpBackward0"
    assert short[1] == "[1-10] MulBackward0 ×10"
    assert short[2] == full[-1]


def test_a_million_node_chain_collapses_in_every_output(close_figures: None) -> None:
    y = chain(1_000_000)
    assert format_graph(y).count("\n") == 1
    nodes, edges = dot_structure(to_dot(y))
    assert [label for label, _ in nodes.values()] == [
        "MulBackward0 ×1,000,000",
        "AccumulateGrad\\nleaf: (1,) float32",
    ]
    assert edges == [("n0", "n1")]
    assert drawn_labels(draw_graph(y)) == [
        "MulBackward0 ×1,000,000",
        "leaf\n(1,) float32",
    ]
    autograd_notes.free_graph(y)


def test_show_saved_on_a_run_lists_its_first_node() -> None:
    text = format_graph(chain(4), show_saved=True)
    assert text.split("\n")[:3] == [
        "[0-3] MulBackward0 ×4",
        "    _saved_other: tensor of shape (), float64, value 1.0001",
        "    _saved_self: None",
    ]


# -- grouping by module ---------------------------------------------------------


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


@pytest.fixture
def traced() -> tuple[Stack, ModuleTrace, torch.Tensor]:
    torch.manual_seed(0)
    model = Stack()
    with track_modules(model) as trace:
        loss = model(torch.ones(3, 4)).pow(2).mean()
    return model, trace, loss


def test_each_node_knows_its_module(
    traced: tuple[Stack, ModuleTrace, torch.Tensor],
) -> None:
    _, trace, loss = traced
    paths = {}
    for node in walk_graph(loss):
        paths.setdefault(trace.path_of(node), []).append(type(node).__name__)
    assert paths[None] == ["MeanBackward0", "PowBackward0"]  # outside the model
    assert paths[""] == ["MulBackward0"]  # the model's own forward
    assert paths["blocks.1"] == ["AddBackward0"]
    assert paths["blocks.1.act"] == ["TanhBackward0"]
    assert sorted(paths["blocks.0.fc"]) == [
        "AccumulateGrad", "AccumulateGrad", "AddmmBackward0", "TBackward0"
    ]  # fmt: skip
    assert sorted(paths["head"]) == sorted(paths["blocks.1.fc"])


def test_hooks_are_removed_after_tracking(
    traced: tuple[Stack, ModuleTrace, torch.Tensor],
) -> None:
    model = traced[0]
    for module in model.modules():
        assert not module._forward_hooks
        assert not module._forward_pre_hooks


def test_format_marks_modules_and_groups_them_by_depth(
    traced: tuple[Stack, ModuleTrace, torch.Tensor],
) -> None:
    _, trace, loss = traced
    marked = format_graph(loss, modules=trace)
    assert "[2] AddmmBackward0  [in head]" in marked
    assert "MulBackward0  [in the model]" in marked
    depth1 = format_graph(loss, modules=trace, depth=1).split("\n")
    assert depth1[:4] == [
        "[0] MeanBackward0",
        "[1] PowBackward0",
        "[2] head  (module: 4 nodes, AccumulateGrad ×2, AddmmBackward0, TBackward0)",
        "[3] MulBackward0",
    ]
    assert depth1[4] == (
        "[4] blocks  (module: 12 nodes, AccumulateGrad ×4, AddBackward0 ×2, "
        "TanhBackward0 ×2, 2 more kinds)"
    )
    assert len(depth1) == 5
    depth2 = format_graph(loss, modules=trace, depth=2).split("\n")
    assert [line.split("  ")[0] for line in depth2] == [
        "[0] MeanBackward0",
        "[1] PowBackward0",
        "[2] head",
        "[3] MulBackward0",
        "[4] blocks.1",
        "[5] blocks.0",  # both edges from blocks.1 to blocks.0 show as one
    ]


def test_dot_and_picture_group_by_module(
    traced: tuple[Stack, ModuleTrace, torch.Tensor], close_figures: None
) -> None:
    _, trace, loss = traced
    nodes, edges = dot_structure(to_dot(loss, modules=trace, depth=2))
    labels = [label.split("\\n")[0] for label, _ in nodes.values()]
    assert labels == ["MeanBackward0", "PowBackward0", "head", "MulBackward0",
                      "blocks.1", "blocks.0"]  # fmt: skip
    assert "box3d" in nodes["n2"][1]
    assert ("n4", "n5") in edges
    fig = draw_graph(loss, modules=trace, depth=1)
    assert [label.split("\n")[0] for label in drawn_labels(fig)] == [
        "MeanBackward0", "PowBackward0", "head", "MulBackward0", "blocks"
    ]  # fmt: skip
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[-1] == "module (group of nodes)"


def test_a_module_used_twice_makes_a_cycle_that_still_prints(
    close_figures: None,
) -> None:
    lin = torch.nn.Linear(2, 2)
    model = torch.nn.ModuleDict({"lin": lin, "act": torch.nn.Tanh()})
    with track_modules(model) as trace:
        out = lin(model["act"](lin(torch.ones(1, 2)))).sum()
    text = format_graph(out, modules=trace, depth=1)
    assert "(see above)" in text
    draw_graph(out, modules=trace, depth=1)  # layers without a topological order


def test_grouping_arguments_are_checked(
    traced: tuple[Stack, ModuleTrace, torch.Tensor],
) -> None:
    _, trace, loss = traced
    with pytest.raises(ValueError, match="argument 'depth' needs 'modules'"):
        format_graph(loss, depth=1)
    with pytest.raises(ValueError, match="argument 'depth' must be at least 1, not 0"):
        to_dot(loss, modules=trace, depth=0)
    with pytest.raises(
        TypeError, match="argument 'depth' must be an int or None, not str"
    ):
        format_graph(loss, modules=trace, depth="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="argument 'modules' must be a ModuleTrace"):
        format_graph(loss, modules={"": 1})  # type: ignore[arg-type]
    with (
        pytest.raises(TypeError, match=r"argument 'model' must be a torch\.nn\.Module"),
        track_modules("model"),  # type: ignore[arg-type]
    ):
        pass


# -- awkward names and bad input ------------------------------------------------


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


def test_to_dot_escapes_a_nul_in_a_name() -> None:
    x = torch.ones(2, requires_grad=True)
    source = to_dot(x.exp().sum(), names={"a\x00b": x})
    assert "\x00" not in source
    nodes, _ = dot_structure(source)
    assert nodes["n2"][0] == "AccumulateGrad\\na\\\\x00b: (2,) float32"


def test_to_dot_escapes_a_quote_in_a_function_class_name() -> None:
    x = torch.ones(2, requires_grad=True)
    y = function_named('Say"Hi').apply(x).sum()
    nodes, _ = dot_structure(to_dot(y))
    assert nodes["n1"][0] == 'Say\\"HiBackward'
    nodes, _ = dot_structure(to_dot(y, collapse=False, show_saved=True))
    assert nodes["n1"][0] == 'Say\\"HiBackward'


def test_a_newline_in_a_class_name_keeps_one_line_per_node() -> None:
    x = torch.ones(2, requires_grad=True)
    y = function_named("Two\nLines").apply(x).sum()
    text = format_graph(y, names={"x\ny": x})
    assert text.split("\n") == [
        "[0] SumBackward0",
        "[1] Two\\nLinesBackward",
        "[2] AccumulateGrad  x\\ny: leaf tensor, shape (2,), float32, "
        "requires_grad=True",
    ]
    nodes, _ = dot_structure(to_dot(y))
    assert nodes["n1"][0] == "Two\\\\nLinesBackward"


def test_show_saved_works_inside_vmap_of_grad() -> None:
    seen: list[str] = []

    def f(t: torch.Tensor) -> torch.Tensor:
        s = t.sum()
        out = s * s  # MulBackward0 saves two 0-dim batched tensors
        seen.append(format_graph(out, show_saved=True))
        return out

    grads = vmap(grad(f))(torch.ones(2, 3))
    assert torch.equal(grads, torch.full((2, 3), 6.0))
    assert "    _saved_other: tensor of shape (), float32" in seen[0]
    assert "value" not in seen[0]


def test_show_saved_never_runs_unpack_hooks() -> None:
    calls: list[str] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        calls.append("pack")
        return t

    def unpack(t: torch.Tensor) -> torch.Tensor:
        calls.append("unpack")
        return t

    x = torch.ones(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x.exp() * x).sum()
    packs = calls.count("pack")
    text = format_graph(y, show_saved=True)
    to_dot(y, show_saved=True)
    assert calls == ["pack"] * packs  # nothing unpacked
    assert "_saved_self: <not unpacked: saved_tensors_hooks>" in text
    y.backward()
    assert calls.count("unpack") == packs  # backward unpacks each, once
    assert torch.allclose(x.grad, (x.detach() + 1) * x.detach().exp())
    assert "_saved_self: <freed by backward>" in format_graph(y, show_saved=True)


def test_show_saved_does_not_rerun_a_checkpointed_forward() -> None:
    runs: list[int] = []

    def body(t: torch.Tensor) -> torch.Tensor:
        runs.append(1)
        return t.sin() * t

    x = torch.ones(3, requires_grad=True)
    y = checkpoint(body, x, use_reentrant=False).sum()
    assert len(runs) == 1
    text = format_graph(y, show_saved=True)
    draw_graph(y, show_saved=True)
    plt.close("all")
    assert len(runs) == 1
    assert "<not unpacked: recomputed by checkpoint in backward>" in text
    y.backward()
    assert len(runs) == 2  # backward recomputes once, as without show_saved
    assert torch.allclose(
        x.grad, torch.cos(x.detach()) * x.detach() + torch.sin(x.detach())
    )


def test_show_saved_of_a_custom_function_with_hooks() -> None:
    x = torch.ones(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        from .test_graph import Double

        y = Double.apply(x).sum()
    assert "saved_tensors: (<not unpacked: saved_tensors_hooks>,)" in format_graph(
        y, show_saved=True
    )


@pytest.mark.parametrize(
    "func",
    [format_graph, to_dot, draw_graph, lambda r, **k: render_dot(r, "x.svg", **k)],
)
def test_a_numpy_bool_flag_is_named_unambiguously(func: Callable[..., object]) -> None:
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(
        TypeError, match=r"argument 'show_saved' must be a bool, not numpy\.bool_?$"
    ):
        func(x * 2, show_saved=np.True_)


@pytest.mark.parametrize("fmt", ["SVG", "Png"])
def test_render_dot_says_formats_are_lower_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.setitem(sys.modules, "graphviz", FakeGraphviz(has_dot=True))
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(
        ValueError,
        match=rf"must be a Graphviz output format .* not '{fmt}' "
        rf"\(formats are lower case: '{fmt.lower()}'\)",
    ):
        render_dot(x * 2, tmp_path / "g.svg", format=fmt)
    with pytest.raises(ValueError, match=r"not 'jpeg2000'$"):
        render_dot(x * 2, tmp_path / "g.svg", format="jpeg2000")


def test_render_dot_collapses_a_huge_chain_and_refuses_a_huge_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeGraphviz(has_dot=True)
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    y = chain(100_000)
    render_dot(y, tmp_path / "chain.svg")
    assert fake.calls[0][0].count("[label=") == 2
    params = [torch.ones(1, requires_grad=True) for _ in range(1_500)]
    tree = torch.stack(params).sum()  # 1,502 nodes: nothing to collapse
    with pytest.raises(
        ValueError, match=r"at most max_nodes=1,000 nodes and this graph has 1,502"
    ):
        render_dot(tree, tmp_path / "tree.svg", max_nodes=1_000)
    assert not (tmp_path / "tree.svg").exists()
    assert len(fake.calls) == 1  # Graphviz was never asked
    autograd_notes.free_graph(y)


def test_draw_graph_is_still_importable_from_graph() -> None:
    from autograd_notes.graph import draw_graph as old_home

    assert old_home is draw_graph is autograd_notes.draw_graph


def test_importing_the_package_starts_nothing(tmp_path: Path) -> None:
    import subprocess

    code = (
        "import sys, threading, autograd_notes\n"
        "assert threading.active_count() == 1\n"
        "assert not any(m.split('.')[0] in {'matplotlib', 'networkx', 'graphviz'} "
        "for m in sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_address_in_grouped_or_collapsed_output(
    traced: tuple[Stack, ModuleTrace, torch.Tensor],
) -> None:
    _, trace, loss = traced
    for text in (
        format_graph(loss, modules=trace, show_saved=True),
        format_graph(loss, modules=trace, depth=2, show_saved=True),
        to_dot(loss, modules=trace, depth=1, show_saved=True),
    ):
        assert not re.search(r"0x[0-9a-f]{6,}", text)


# -- attribution against a reference the modules record themselves -------------

# A module: (own op before its children?, own op after?, children, and whether
# it calls each child twice). A module without children always has an op.
_Spec = tuple[bool, bool, list[Any], bool]
_specs = st.recursive(
    st.tuples(st.just(True), st.booleans(), st.just([]), st.booleans()),
    lambda inner: st.tuples(
        st.booleans(),
        st.booleans(),
        st.lists(inner, min_size=1, max_size=3),
        st.booleans(),
    ),
    max_leaves=8,
)


class _Recorded(torch.nn.Module):
    """Runs its own ops and its children; logs (grad_fn, self) per own op."""

    def __init__(self, spec: _Spec, log: list[tuple[Any, torch.nn.Module]]) -> None:
        super().__init__()
        self.pre, self.post, children, self.twice = spec
        self.kids = torch.nn.ModuleList(_Recorded(c, log) for c in children)
        self.log = log

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre:
            x = x * 1.5
            self.log.append((x.grad_fn, self))
        for kid in self.kids:
            for _ in range(2 if self.twice else 1):
                x = kid(x)
        if self.post:
            x = x + 1
            self.log.append((x.grad_fn, self))
        return x


@settings(max_examples=60, deadline=None)
@given(spec=_specs, wrappers=st.integers(0, 2))
def test_path_of_matches_the_module_that_ran_each_op(
    spec: _Spec, wrappers: int
) -> None:
    log: list[tuple[Any, torch.nn.Module]] = []
    model: torch.nn.Module = _Recorded(spec, log)
    for _ in range(wrappers):  # wrappers with no op of their own
        model = torch.nn.Sequential(model)
    path = {id(m): name for name, m in model.named_modules()}
    with track_modules(model) as trace:
        model(torch.ones(2, requires_grad=True))
    assert log
    for node, module in log:
        assert trace.path_of(node) == path[id(module)]


def test_a_wrapper_around_its_child_keeps_its_own_op() -> None:
    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lin(x) * 2

    model = torch.nn.Sequential(Block())
    with track_modules(model) as trace:
        y = model(torch.ones(1, 2))
    assert trace.path_of(y.grad_fn) == "0"
    text = format_graph(y, modules=trace, depth=1)
    assert text.startswith("[0] 0  (module: 5 nodes, AccumulateGrad ×2, MulBackward0")


@pytest.mark.parametrize("node", [None, "AddBackward0", torch.ones(1)])
def test_path_of_names_its_argument(node: object) -> None:
    with track_modules(torch.nn.Identity()) as trace:
        pass
    with pytest.raises(TypeError, match=r"path_of\(\) argument 'node' must be a"):
        trace.path_of(node)  # type: ignore[arg-type]


def test_grouping_summarises_each_module_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Linear in the graph's size: back-references do not re-count a group."""

    class Loop(torch.nn.Module):  # the model's own nodes are not grouped
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for _ in range(50):
                x = self.lin(x).tanh() + x
            return x

    model = Loop()
    with track_modules(model) as trace:
        y = model(torch.ones(1, 2)).sum()
    calls: list[int] = []
    real = autograd_notes.graph._group_summary

    def counted(*args: Any) -> str:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(autograd_notes.graph, "_group_summary", counted)
    text = format_graph(y, modules=trace, depth=1)
    assert text.count("-> [") >= 49  # one back-reference per loop step
    assert len(calls) == 1  # the one group, "lin", summarised once
