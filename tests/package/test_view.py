"""Tests for autograd_notes.view: shared arguments, collapsed runs, module groups."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import autograd_notes
from autograd_notes import (
    ModuleTrace,
    draw_graph,
    format_graph,
    free_graph,
    render_dot,
    to_dot,
    track_modules,
)
from autograd_notes.words import Words

from .helpers import (
    READERS,
    FakeGraphviz,
    Stack,
    chain,
    dot_structure,
    drawn_labels,
    has_cycle,
    text_edges,
)


@pytest.mark.parametrize(
    ("func", "flag"),
    [
        (format_graph, "show_saved"),
        (format_graph, "show_retained"),
        (to_dot, "show_saved"),
        (draw_graph, "show_saved"),
        (format_graph, "fold"),
        (to_dot, "fold"),
        (draw_graph, "fold"),
    ],
)
def test_flags_must_be_bools(
    func: Callable[..., object], flag: str, abab: dict[str, torch.Tensor]
) -> None:
    with pytest.raises(TypeError, match=f"argument '{flag}' must be a bool, not str"):
        func(abab["y"], **{flag: "yes"})


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


def test_grouping_arguments_are_checked(
    traced: tuple[Stack, ModuleTrace, torch.Tensor],
) -> None:
    _, trace, loss = traced
    with pytest.raises(
        ValueError, match="argument 'depth' must be None without 'modules'"
    ):
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


def test_a_parameter_another_module_uses_is_drawn_outside_its_module(
    close_figures: None,
) -> None:
    """``side`` uses ``lin.weight`` before ``lin`` runs: inside ``lin``, it loops."""

    class Side(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            self.side = torch.nn.Tanh()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lin(self.side(x @ self.lin.weight.T))

    model = Side()
    with track_modules(model) as trace:
        out = model(torch.ones(1, 2)).sum()
    text = format_graph(out, modules=trace, depth=1)
    assert not has_cycle(text_edges(text)), text
    _, edges = dot_structure(to_dot(out, modules=trace, depth=1))
    assert not has_cycle([(int(a[1:]), int(b[1:])) for a, b in edges])
    weight = "] AccumulateGrad  leaf parameter, shape (2, 2), float32, "
    weight += "requires_grad=True"
    assert sum(line.endswith(weight) for line in text.split("\n")) == 1, text
    assert "lin  (module: 3 nodes" in text  # addmm, its bias, T: not the weight
    draw_graph(out, modules=trace, depth=1)
    # A tied weight stays in a group that links to nothing else: no loop.
    model = torch.nn.ModuleDict({"emb": torch.nn.Embedding(5, 2)})
    with track_modules(model) as trace:
        out = (model["emb"](torch.tensor([1, 2])) @ model["emb"].weight.T).sum()
    text = format_graph(out, modules=trace, depth=1)
    assert not has_cycle(text_edges(text)), text
    assert "emb  (module: 2 nodes, EmbeddingBackward0, AccumulateGrad)" in text
    assert "] AccumulateGrad" not in text, text


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
    real = autograd_notes.view.group_summary_words

    def counted(*args: Any) -> Words:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(autograd_notes.view, "group_summary_words", counted)
    text = format_graph(y, modules=trace, depth=1)
    assert text.count("-> [") >= 49  # one back-reference per loop step
    assert len(calls) == 1  # the one group, "lin", summarised once


class _Tanhs(torch.nn.Module):
    """Five ``tanh`` calls in one forward: a run inside one module."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(5):
            x = x.tanh()
        return x


def test_runs_do_not_cross_module_boundaries(close_figures: None) -> None:
    tanhs = [torch.nn.Tanh() for _ in range(4)]
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), *tanhs)
    with track_modules(model) as trace:
        loss = model(torch.ones(1, 2)).sum()
    # Four Tanh modules, one node each: four entries, each naming its module
    # (unfolded: folded, they are one entry, test_fold.py).
    assert format_graph(loss, modules=trace, fold=False).split("\n")[1:5] == [
        "[1] TanhBackward0  [in 4]",
        "[2] TanhBackward0  [in 3]",
        "[3] TanhBackward0  [in 2]",
        "[4] TanhBackward0  [in 1]",
    ]
    expected = [f"TanhBackward0\\n[in {m}]" for m in (4, 3, 2, 1)]
    nodes, _ = dot_structure(to_dot(loss, modules=trace, fold=False))
    assert [nodes[f"n{e}"][0] for e in range(1, 5)] == expected
    drawn = drawn_labels(draw_graph(loss, modules=trace, fold=False))
    assert drawn[1:5] == [label.replace("\\n", "\n") for label in expected]
    # Untraced, the same graph still folds the run.
    assert format_graph(loss).split("\n")[1] == "[1-4] TanhBackward0 ×4"


def test_a_run_inside_one_module_folds_and_names_it(close_figures: None) -> None:
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), _Tanhs(), _Tanhs())
    with track_modules(model) as trace:
        loss = model(torch.ones(1, 2)).tanh().tanh().tanh().sum()
    # Modules 1 and 2 have one structure: unfolded here (folded: test_fold.py).
    assert format_graph(loss, modules=trace, fold=False).split("\n")[1:4] == [
        "[1-3] TanhBackward0 ×3",  # made outside the model
        "[4-8] TanhBackward0 ×5  [in 2]",
        "[9-13] TanhBackward0 ×5  [in 1]",
    ]
    nodes, edges = dot_structure(to_dot(loss, modules=trace, fold=False))
    assert [nodes[f"n{e}"][0] for e in range(1, 4)] == [
        "TanhBackward0 ×3",
        "TanhBackward0 ×5\\n[in 2]",
        "TanhBackward0 ×5\\n[in 1]",
    ]
    assert edges[:3] == [("n0", "n1"), ("n1", "n2"), ("n2", "n3")]
    assert drawn_labels(draw_graph(loss, modules=trace, fold=False))[1:4] == [
        "TanhBackward0 ×3",
        "TanhBackward0 ×5\n[in 2]",
        "TanhBackward0 ×5\n[in 1]",
    ]
    assert format_graph(loss).split("\n")[1] == "[1-13] TanhBackward0 ×13"
    # Grouped by module, each module is one entry, as before.
    depth1 = format_graph(loss, modules=trace, depth=1, fold=False)
    assert depth1.split("\n")[1:4] == [
        "[1] TanhBackward0 ×3",
        "[2] 2  (module: 5 nodes, TanhBackward0 ×5)",
        "[3] 1  (module: 5 nodes, TanhBackward0 ×5)",
    ]
