"""Deep graphs never crash the interpreter after this package has walked them.

PyTorch 2.13+ frees a node that Python has seen by recursing into its inputs
(see docs/explanations/known-pytorch-issue-deep-graphs.md): dropping a walked
chain of ~40,000 nodes overflows an 8 MiB C stack. Each test here runs a
fresh interpreter, since the failure is a segfault.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import time
import weakref
from pathlib import Path

import pytest
import torch

from autograd_notes import _release, format_graph, free_graph, walk_graph

CALLS = {
    "walk_graph": "walk_graph(y)",
    "format_graph": "format_graph(y)",
    "format_graph_uncollapsed": "format_graph(y, collapse=False)",
    "to_dot": "to_dot(y)",
    "render_dot": (
        "try:\n    render_dot(y, 'never.svg', collapse=False)\n"
        "except (ImportError, ValueError) as err:\n    print(err)"
    ),
    "draw_graph": (
        "try:\n    draw_graph(y, collapse=False)\n"
        "except (ImportError, ValueError) as err:\n    print(err)"
    ),
}
PRELUDE = """
import torch
from autograd_notes import (
    draw_graph, format_graph, free_graph, render_dot, to_dot, walk_graph,
)

def chain(steps):
    y = torch.ones(1, requires_grad=True)
    for _ in range(steps):
        y = y * 1.0001
    return y

def branching(levels):  # two nodes a level, every Add reached by two paths
    y = torch.ones(1, requires_grad=True)
    for _ in range(levels):
        y = y + y * 1.0001
    return y
"""


def run(
    tmp_path: Path, body: str, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
    )


@pytest.mark.parametrize("graph", ["chain(60_000)", "branching(30_000)"])
def test_dropping_a_graph_after_each_function_exits_cleanly(
    tmp_path: Path, graph: str
) -> None:
    """Each function on a fresh graph deeper than the crash threshold, then
    ``del``: the process goes on, prints, and exits with status 0."""
    body = "".join(
        f"y = {graph}\n{call}\ndel y\nprint('dropped after {name}', flush=True)\n"
        for name, call in CALLS.items()
    )
    result = run(tmp_path, body)
    assert result.returncode == 0, result.stderr[-2000:]
    assert [
        line for line in result.stdout.splitlines() if line.startswith("dropped")
    ] == [f"dropped after {name}" for name in CALLS]


@pytest.mark.slow
@pytest.mark.parametrize("graph", ["chain(1_000_000)", "branching(200_000)"])
def test_dropping_a_huge_graph_after_every_function_exits_cleanly(
    tmp_path: Path, graph: str
) -> None:
    """The sizes of the issue: a million-node chain, 200,000 branching levels.
    Every function runs on the same graph, then the tensor is dropped."""
    body = f"y = {graph}\n" + "\n".join(CALLS.values()) + "\ndel y\nprint('dropped')\n"
    result = run(tmp_path, body)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines()[-1] == "dropped"


@pytest.mark.parametrize("graph", ["chain(60_000)", "branching(30_000)"])
def test_free_graph_frees_a_graph_walked_by_other_code(
    tmp_path: Path, graph: str
) -> None:
    """A graph torchviz or a user's loop has walked (every node seen, in plain
    Python) is freed safely by free_graph, and the interpreter exits."""
    body = f"""
    y = {graph}
    seen, stack = set(), [y.grad_fn]
    while stack:  # someone else's walk: Python sees every node
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack.extend(fn for fn, _ in node.next_functions)
    count = len(seen)
    del seen, stack, node
    freed = free_graph(y)
    assert y.grad_fn is None and freed == count, (freed, count)
    del y
    print('freed', freed)
    """
    result = run(tmp_path, body)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("freed ")


def test_exit_with_the_graph_still_alive_is_clean(tmp_path: Path) -> None:
    """A walked deep graph still referenced at exit: teardown must not free
    it recursively."""
    result = run(tmp_path, "y = branching(30_000)\nformat_graph(y)\nprint('end')\n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("end")


# -- in process: the graph is really freed, not leaked --------------------------


def wait_until(condition: object, seconds: float = 30.0) -> bool:
    assert callable(condition)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        gc.collect()
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def deep_graph_with_a_saved_probe(
    steps: int,
) -> tuple[torch.Tensor, weakref.ref[torch.Tensor]]:
    """A chain whose first node saves a tensor that only the graph keeps."""
    x = torch.ones(3, requires_grad=True)
    probe = torch.full((3,), 2.0)
    y = x * probe  # MulBackward0 saves `probe` to compute x's gradient
    for _ in range(steps):
        y = y * 1.0001
    return y, weakref.ref(probe)


def test_a_dropped_walked_graph_is_freed_by_the_release_thread() -> None:
    y, probe = deep_graph_with_a_saved_probe(5_000)
    assert len(walk_graph(y)) > 5_000
    assert probe() is not None
    del y
    assert wait_until(lambda: probe() is None), "graph not freed"
    assert wait_until(lambda: _release.held_count() == 0)


def test_nodes_still_in_use_stay_until_dropped() -> None:
    x = torch.ones(3, requires_grad=True)
    first = torch.full((3,), 2.0)
    middle = x * first
    for _ in range(2_000):
        middle = middle * 1.0001
    y = middle
    for _ in range(2_000):
        y = y * 1.0001
    probe = weakref.ref(first)
    del first
    nodes = walk_graph(y)
    del y
    time.sleep(0.3)
    assert probe() is not None  # `middle` and `nodes` still use the graph
    del nodes
    time.sleep(0.3)
    assert probe() is not None  # `middle` still does
    assert middle.grad_fn is not None
    middle.sum().backward()  # the graph below `middle` still works
    assert x.grad is not None
    del middle
    assert wait_until(lambda: probe() is None)


def test_free_graph_detaches_and_frees_now() -> None:
    y, probe = deep_graph_with_a_saved_probe(3_000)
    before = y.detach().clone()
    assert free_graph(y) == 3_000 + 2  # the muls and AccumulateGrad
    assert y.grad_fn is None
    assert not y.requires_grad
    assert torch.equal(y, before)
    assert probe() is None


def test_free_graph_of_a_shared_graph_keeps_what_others_use() -> None:
    x = torch.ones(2, requires_grad=True)
    h = x * 2
    y = (h * 3).sum()
    assert free_graph(y) == 2  # SumBackward0 and the second MulBackward0
    assert h.grad_fn is not None
    h.sum().backward()
    assert torch.equal(x.grad, torch.full((2,), 2.0))


def test_free_graph_of_a_view_frees_once_dropped() -> None:
    y, probe = deep_graph_with_a_saved_probe(2_000)
    view = y[1:]
    del y
    assert free_graph(view) == 0  # a view cannot be detached in place
    assert view.grad_fn is not None
    del view
    assert wait_until(lambda: probe() is None)


@pytest.mark.parametrize("tensor", [torch.ones(2), torch.ones(2, requires_grad=True)])
def test_free_graph_of_a_tensor_without_graph(tensor: torch.Tensor) -> None:
    assert free_graph(tensor) == 0


def test_free_graph_rejects_what_is_not_a_tensor() -> None:
    with pytest.raises(
        TypeError,
        match=r"free_graph\(\) argument 'tensor' must be a torch\.Tensor, not list",
    ):
        free_graph([1.0])  # type: ignore[arg-type]


def test_small_graphs_are_not_held() -> None:
    x = torch.ones(2, requires_grad=True)
    before = _release.held_count()
    format_graph((x * 2).sum())
    assert _release.held_count() == before
