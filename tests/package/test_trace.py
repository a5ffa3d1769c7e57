"""Tests for autograd_notes.trace: which module made each node."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograd_notes import ModuleTrace, format_graph, track_modules, walk_graph

from .helpers import Stack


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
