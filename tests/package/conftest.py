"""Fixtures shared by the tests of the graph modules."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib.pyplot as plt
import pytest
import torch

from autograd_notes import ModuleTrace, free_graph, track_modules

from .helpers import CHAIN, Stack, chain


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


@pytest.fixture
def traced() -> tuple[Stack, ModuleTrace, torch.Tensor]:
    torch.manual_seed(0)
    model = Stack()
    with track_modules(model) as trace:
        loss = model(torch.ones(3, 4)).pow(2).mean()
    return model, trace, loss
