"""Tests for autograd_notes.walk: the walk, its order, deep graphs, no user code."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import torch

from autograd_notes import (
    draw_graph,
    format_graph,
    free_graph,
    render_dot,
    to_dot,
    walk_graph,
)

from .helpers import CHAIN, READERS, FakeGraphviz, _Watched, kinds

PUBLIC: list[Callable[..., object]] = [
    walk_graph,
    format_graph,
    to_dot,
    draw_graph,
    lambda root: render_dot(root, "unused.svg"),
]


@pytest.mark.parametrize("func", PUBLIC)
@pytest.mark.parametrize("root", [3, "y", None, [torch.ones(1)]])
def test_every_function_rejects_a_root_that_is_not_a_tensor_or_node(
    func: Callable[..., object], root: object
) -> None:
    with pytest.raises(
        TypeError, match=rf"argument 'root' .* not {type(root).__name__}"
    ):
        func(root)


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
    nodes = walk_graph(million_chain[0])
    assert len(nodes) == CHAIN + 1
    assert kinds(nodes[:2]) == ["MulBackward0", "MulBackward0"]
    assert kinds(nodes[-1:]) == ["AccumulateGrad"]


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
