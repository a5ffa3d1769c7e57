"""Tests for autograd_notes.walk: the walk, its order, deep graphs, no user code."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

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
from autograd_notes import walk as walk_module

from .helpers import CHAIN, READERS, FakeGraphviz, _Watched, chain, kinds

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


# -- the walk's gc pause: threads, forks, Ctrl-C ------------------------------


class PausedWalk:
    """``walk_graph(root)`` in a thread stopped halfway through its walk."""

    def __init__(self, root: torch.Tensor, at: int = 1_500) -> None:
        self.at = at
        self.stopped, self.go = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self.target, args=(root,))
        self.thread.start()
        self.stopped.wait()

    def target(self, root: torch.Tensor) -> None:
        sys.settrace(self.trace)
        walk_graph(root)

    def trace(self, frame: FrameType, event: str, arg: object) -> object:
        if frame.f_code.co_filename != walk_module.__file__:
            return None
        return self.step

    def step(self, frame: FrameType, event: str, arg: object) -> object:
        if len(frame.f_locals.get("nodes", ())) < self.at:
            return self.step
        sys.settrace(None)
        self.stopped.set()
        self.go.wait()
        return None

    def resume(self) -> None:
        self.go.set()
        self.thread.join()


@pytest.fixture
def gc_state() -> Iterator[tuple[bool, tuple[int, int, int]]]:
    """The collector's state before the test, put back after it."""
    state = gc.isenabled(), gc.get_threshold()
    yield state
    gc.set_threshold(*state[1])
    if state[0]:
        gc.enable()
    else:
        gc.disable()


def test_gc_disable_in_another_thread_during_a_walk_is_kept(
    gc_state: tuple[bool, tuple[int, int, int]],
) -> None:
    """The walk pauses collection, but must not turn it back on when another
    thread has turned it off meanwhile (old: the walk's end did)."""
    y = chain(3_000)
    walker = PausedWalk(y)
    gc.disable()  # another thread's call, while the walk runs
    walker.resume()
    assert not gc.isenabled()
    assert gc.get_threshold() == gc_state[1]
    free_graph(y)


def test_concurrent_walks_pause_collection_until_the_last_ends(
    gc_state: tuple[bool, tuple[int, int, int]],
) -> None:
    """Two threads walk at once: the first to end must not resume automatic
    collection under the second, and the last puts back what was found."""
    assert gc_state[0]
    assert gc_state[1][0] > 0
    graphs = [chain(3_000), chain(3_000)]
    first, second = PausedWalk(graphs[0]), PausedWalk(graphs[1])
    first.resume()
    automatic = gc.isenabled() and gc.get_threshold()[0] > 0
    second.resume()
    assert not automatic  # old: back on while the second walk ran
    assert (gc.isenabled(), gc.get_threshold()) == gc_state
    for y in graphs:
        free_graph(y)


def run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_fork_during_another_threads_walk_leaves_the_child_whole(
    tmp_path: Path,
) -> None:
    """The main thread forks while a thread is halfway through a walk. The
    child must find the collector as it was and, after `del`, hold no node
    (old: collection off for good, the graph held by the lost thread)."""
    body = """
    import gc, os, sys, threading, weakref
    import torch
    from autograd_notes import _release
    from autograd_notes import walk as walk_module
    from autograd_notes import walk_graph

    sys.setswitchinterval(10)  # a thread runs until it blocks: no race
    FOUND = gc.get_threshold()
    probe = torch.full((1,), 2.0)
    y = torch.ones(1, requires_grad=True) * probe
    for _ in range(3_000):
        y = y * 1.0001
    probe = weakref.ref(probe)
    stopped, go = threading.Event(), threading.Event()

    def step(frame, event, arg):
        if len(frame.f_locals.get("nodes", ())) < 1_500:
            return step
        sys.settrace(None)
        stopped.set()
        go.wait()

    def trace(frame, event, arg):
        return step if frame.f_code.co_filename == walk_module.__file__ else None

    def walker():
        sys.settrace(trace)
        walk_graph(y)

    thread = threading.Thread(target=walker)
    thread.start()
    stopped.wait()
    os.register_at_fork(before=go.set)  # runs first: the walk may go on
    pid = os.fork()
    if pid == 0:
        state = [gc.isenabled(), gc.get_threshold() == FOUND]
        del y
        print("child", *state, probe() is None, _release.held_count(), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
    thread.join()
    print("parent", gc.isenabled(), gc.get_threshold() == FOUND, flush=True)
    """
    result = run_script(tmp_path, body)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split("\n")[:2] == [
        "child True True True 0",
        "parent True True",
    ]


def test_ctrl_c_during_a_walk_comes_after_it_and_the_graph_frees_safely(
    tmp_path: Path,
) -> None:
    """SIGINT 90,000 nodes into walking a 100,000-node chain: the caller gets
    KeyboardInterrupt once the walk is over, the collector is as it was, and
    dropping the chain is safe (old: interrupted mid-walk, the chain's nodes
    seen but not held, and `del` crashed the interpreter)."""
    body = """
    import gc, os, signal, sys
    import torch
    from autograd_notes import walk as walk_module
    from autograd_notes import walk_graph

    # Python's own Ctrl-C handler, whatever this process inherited: a job that
    # a non-interactive shell starts in the background (`nox -s tests &`,
    # nohup, many CI runners) inherits SIGINT ignored, and Python then leaves
    # it ignored, so os.kill(SIGINT) below would raise no KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    FOUND = gc.isenabled(), gc.get_threshold()
    y = torch.ones(1, requires_grad=True)
    for _ in range(100_000):
        y = y * 1.0001
    lines = [0]

    def step(frame, event, arg):
        lines[0] += 1
        if lines[0] % 1_000 or len(frame.f_locals.get("nodes", ())) < 90_000:
            return step
        sys.settrace(None)
        os.kill(os.getpid(), signal.SIGINT)

    def trace(frame, event, arg):
        return step if frame.f_code.co_filename == walk_module.__file__ else None

    sys.settrace(trace)
    try:
        walk_graph(y)
        outcome = "walked"
    except KeyboardInterrupt:
        outcome = "interrupted"
    sys.settrace(None)
    print(outcome, (gc.isenabled(), gc.get_threshold()) == FOUND, flush=True)
    del y
    print("dropped", flush=True)
    """
    result = run_script(tmp_path, body)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split("\n")[:2] == ["interrupted True", "dropped"]


def test_gc_paused_stops_automatic_collection_and_puts_it_back() -> None:
    found = gc.get_threshold()
    with walk_module.gc_paused():
        assert gc.get_threshold() == (0, *found[1:])
        with walk_module.gc_paused():  # nests, as walks inside it do
            pass
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold() == found
