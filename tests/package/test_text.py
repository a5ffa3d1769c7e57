"""Tests for autograd_notes.text: format_graph prints the view as a tree."""

from __future__ import annotations

import re

import pytest
import torch

from autograd_notes import format_graph, track_modules, walk_graph

from .helpers import ABAB_TREE, CHAIN, Loop


def test_format_small_graph_exactly(abab: dict[str, torch.Tensor]) -> None:
    text = format_graph(abab["y"], names=abab)
    assert text == ABAB_TREE
    assert text.count("a: leaf tensor") == 1  # a is printed once, referenced twice
    assert format_graph(abab["y"], names=abab) == text  # same on every call


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
    text = format_graph(million_chain[0], collapse=False)
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


def test_a_fold_reached_again_is_named_by_its_title() -> None:
    torch.manual_seed(0)
    model = Loop(30, learned_start=True)
    with track_modules(model) as trace:
        out = model(torch.randn(30, 1, 4))
    loss = (out * 2 + out).sum()  # the fold's output is used twice
    assert format_graph(loss, modules=trace, depth=1).split("\n") == [
        "[0] SumBackward0",
        "[1] AddBackward0",
        "├─ [2] MulBackward0",
        "│  [3] cell × 30  (fold: calls 0–29 of cell, 15 nodes each, "
        "SigmoidBackward0 ×3, MulBackward0 ×3, TBackward0 ×2, 4 more kinds; 4 leaves)",
        "│  ├─ [4] SelectBackward0",
        "│  │  [5] AccumulateGrad  leaf parameter, shape (2, 1, 4), float32, "
        "requires_grad=True",
        "│  └─ [6] SelectBackward0",
        "│     -> [5] AccumulateGrad (see above)",
        "└─ -> [3] cell × 30 (see above)",
    ]
