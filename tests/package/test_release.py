"""Tests for autograd_notes._release: walked graphs are freed safely, at once.

PyTorch 2.13+ frees a node that Python has seen by recursing into its inputs
(see docs/explanations/known-pytorch-issue-deep-graphs.md): dropping a walked
chain of ~40,000 nodes overflows an 8 MiB C stack. Tests that could crash run
a fresh interpreter, since the failure is a segfault.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import weakref
from pathlib import Path

import pytest
import torch

from autograd_notes import _release, format_graph, free_graph, walk_graph
from autograd_notes import walk as walk_module

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

def diamonds(levels):  # three nodes a level, two paths from each Add down
    y = torch.ones(1, requires_grad=True)
    for _ in range(levels):
        y = y.sin() + y.cos()
    return y

class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2

def functions(levels):  # custom autograd.Function nodes between built-in ones
    y = torch.ones(1, requires_grad=True)
    for step in range(levels):
        y = Twice.apply(y) if step % 2 else y * 0.5
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
        # The package the tests import, even from a relative PYTHONPATH.
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
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


DEEP = {  # 200,000 levels each, as the issue asks
    "chain": "chain(200_000)",
    "diamonds": "diamonds(200_000)",
    "functions": "functions(200_000)",
}
HUGE = {  # a million nodes each
    "chain": "chain(1_000_000)",
    "diamonds": "diamonds(333_333)",
    "functions": "functions(1_000_000)",
}
FREED_AT_ONCE = """
import weakref
from autograd_notes import _release
low, high = torch.full((1,), 1.0), torch.full((1,), 1.0)  # saved by two nodes
kept = {graph} * low  # a user's intermediate tensor, its graph walked
format_graph(kept)
y = kept
for _ in range(1_000):
    y = y * 1.0001
y = y * high
format_graph(y)
low, high = weakref.ref(low), weakref.ref(high)
del y  # frees the 1,001 steps above the kept tensor, and nothing more
after_y = _release.held_count()
print(high() is None, low() is not None, after_y > 0)
del kept
print(low() is None, _release.held_count())
"""


def assert_freed_at_once(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr[-2000:]
    # The nodes above the kept tensor are gone, what it still uses is held;
    # the last `del` returned everything, no waiting.
    assert result.stdout.split() == ["True", "True", "True", "True", "0"]


@pytest.mark.parametrize("graph", DEEP.values(), ids=list(DEEP))
def test_a_deep_graph_is_freed_at_once_without_crash(
    tmp_path: Path, graph: str
) -> None:
    """Chains, diamonds and custom Functions 200,000 levels deep, walked,
    with an intermediate tensor kept: each `del` frees what nothing else uses
    before it returns, and the interpreter survives."""
    assert_freed_at_once(run(tmp_path, FREED_AT_ONCE.format(graph=graph)))


@pytest.mark.slow
@pytest.mark.parametrize("graph", HUGE.values(), ids=list(HUGE))
def test_a_million_node_graph_is_freed_at_once_without_crash(
    tmp_path: Path, graph: str
) -> None:
    assert_freed_at_once(run(tmp_path, FREED_AT_ONCE.format(graph=graph)))


def test_holding_is_needed_exactly_where_torch_crashes(tmp_path: Path) -> None:
    """`holding_needed()` for this torch agrees with what this torch does to
    a walked 200,000-node chain dropped without the package's help."""
    body = """
    y = chain(200_000)
    node = y.grad_fn
    while node is not None:  # Python sees every node; nothing is held
        node = node.next_functions[0][0] if node.next_functions else None
    del y
    print('survived')
    """
    result = run(tmp_path, body)
    crashed = result.returncode == -signal.SIGSEGV
    assert crashed or result.returncode == 0, result.stderr[-2000:]
    assert crashed == _release.holding_needed(torch.__version__)


@pytest.mark.parametrize(
    ("version", "needed"),
    [("2.12.1", False), ("2.13.0", True), ("2.15.0", True), ("2.16.0a0", True)],
)
def test_holding_needed_from_2_13(version: str, needed: bool) -> None:
    assert _release.holding_needed(version) is needed


# -- stopping the drain at each step: threads and forks -------------------------

PAUSER = """
import os
import sys
import threading
import weakref

import torch
from autograd_notes import _release


class Pause:
    '''Run `drop` in a thread that stops before its k-th opcode in _release.'''

    def __init__(self, k, drop):
        self.k, self.count, self.done = k, 0, False
        self.stopped, self.go = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self.target, args=(drop,))
        self.thread.start()
        self.stopped.wait()

    def target(self, drop):
        sys.settrace(self.trace)
        try:
            drop()
        finally:
            sys.settrace(None)
            self.done = True
            self.stopped.set()

    def trace(self, frame, event, arg):
        if frame.f_code.co_filename != _release.__file__:
            return None
        frame.f_trace_opcodes, frame.f_trace_lines = True, False
        return self.step

    def step(self, frame, event, arg):
        if event == "opcode":
            self.count += 1
            if self.count == self.k:
                self.stopped.set()
                self.go.wait()
        return self.step

    def resume(self):
        self.go.set()
        self.thread.join()


def held_graph(kind):
    '''A small graph, held as a walk holds a big one, and a weak reference to
    a tensor that only its last node saves.'''
    x = torch.ones(1, requires_grad=True)
    probe = torch.full((1,), 2.0)
    y = x * probe
    y = y * 1.5 if kind == "chain" else y.sin() + y.cos()
    nodes, stack = [], [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in nodes:
            nodes.append(node)
            stack.extend(fn for fn, _ in node.next_functions)
    _release.mark(nodes[::-1])
    del nodes, stack, node
    return [y], weakref.ref(probe)
"""


@pytest.mark.parametrize("kind", ["chain", "diamonds"])
def test_a_fork_at_any_step_of_a_free_leaves_the_child_nothing_held(
    tmp_path: Path, kind: str
) -> None:
    """A thread frees a graph; it is stopped before each opcode of the
    package's freeing code in turn, and the main thread forks there. The
    child, whose copy of that thread never runs again, must hold nothing and
    have freed the graph as soon as it starts, before any package call."""
    body = (
        PAUSER
        + f"""
k, children = 1, []
while True:
    holder, probe = held_graph({kind!r})
    pause = Pause(k, holder.clear)
    if pause.done:
        break
    pid = os.fork()
    if pid == 0:
        os._exit(0 if _release.held_count() == 0 and probe() is None else 1)
    children.append(os.waitpid(pid, 0)[1])
    pause.resume()
    assert _release.held_count() == 0 and probe() is None
    k += 1
print(len(children), sum(status != 0 for status in children))
"""
    )
    result = run(tmp_path, body)
    assert result.returncode == 0, result.stderr[-2000:]
    forks, failed = map(int, result.stdout.split())
    assert forks > 100  # every step of freeing three or five nodes
    assert failed == 0


@pytest.mark.parametrize("kind", ["chain", "diamonds"])
def test_a_graph_dropped_while_another_thread_frees_is_not_stranded(
    tmp_path: Path, kind: str
) -> None:
    """A thread freeing one graph is stopped before each opcode in turn;
    meanwhile the main thread drops another graph. The drop returns at once
    (nobody waits for the lock) and, once the first thread goes on, both
    graphs are freed with no further package call."""
    body = (
        PAUSER
        + f"""
k = 1
while True:
    first, first_probe = held_graph({kind!r})
    second, second_probe = held_graph({kind!r})
    pause = Pause(k, first.clear)
    if pause.done:
        break
    second.clear()  # returns even while the other thread holds the lock
    pause.resume()
    assert _release.held_count() == 0, (k, _release.held_count())
    assert first_probe() is None and second_probe() is None, k
    k += 1
print(k - 1)
"""
    )
    result = run(tmp_path, body)
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout) > 100


# -- Ctrl-C while a `del` frees a walked graph ---------------------------------

CTRL_C_IN_DEL = """
import os, signal, sys, weakref
from autograd_notes import _release

# Python's own Ctrl-C handler, whatever this process inherited: a job that a
# non-interactive shell starts in the background (`nox -s tests &`, nohup,
# many CI runners) inherits SIGINT ignored, and Python then leaves it
# ignored, so os.kill(SIGINT) below would raise no KeyboardInterrupt.
signal.signal(signal.SIGINT, signal.default_int_handler)

probe = torch.full((1,), 2.0)
y = torch.ones(1, requires_grad=True) * probe  # the last node to go keeps it
for _ in range(3_000):
    y = y * 1.0001
probe = weakref.ref(probe)
walk_graph(y)
start = _release.held_count()
{handler}

def step(frame, event, arg):  # SIGINT once half the graph is freed
    if _release.held_count() > start // 2:
        return step
    sys.settrace(None)
    os.kill(os.getpid(), signal.SIGINT)

def trace(frame, event, arg):
    return step if frame.f_code.co_filename == _release.__file__ else None

sys.settrace(trace)
try:
    del y
    for _ in range(3):  # where the interrupt is due
        pass
    outcome = "not interrupted"
except KeyboardInterrupt:
    outcome = "interrupted"
sys.settrace(None)
print(outcome, probe() is None, _release.held_count(), {check})
"""


@pytest.mark.parametrize(
    ("handler", "check", "expected"),
    [
        (
            "",
            "signal.getsignal(signal.SIGINT) is signal.default_int_handler",
            "interrupted True 0 True",
        ),
        (
            "calls = []\nsignal.signal(signal.SIGINT, lambda *args: calls.append(1))",
            "calls",
            "not interrupted True 0 [1]",
        ),
    ],
    ids=["default", "own handler"],
)
def test_ctrl_c_during_del_reaches_the_caller_and_the_graph_is_freed(
    tmp_path: Path, handler: str, check: str, expected: str
) -> None:
    """SIGINT lands in the loop that frees a walked graph inside `del`. The
    graph must still be freed before `del` returns, and the caller must get
    the interrupt, once, at its next bytecode; a handler of its own runs
    once (old: "Exception ignored in _Trigger.__del__", no KeyboardInterrupt,
    half the graph held)."""
    result = run(tmp_path, CTRL_C_IN_DEL.format(handler=handler, check=check))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == expected
    assert "Exception ignored" not in result.stderr


ALARM_IN_DEL = """
import os, signal, sys, weakref
from autograd_notes import _release

class Timeout(Exception):
    pass

def alarm(signum, frame):  # as pytest-timeout's signal method does
    calls.append(signum)
    raise Timeout

calls = []
signal.signal(signal.SIGALRM, alarm)
probe = torch.full((1,), 2.0)
y = torch.ones(1, requires_grad=True) * probe  # the last node to go keeps it
for _ in range(3_000):
    y = y * 1.0001
probe = weakref.ref(probe)
walk_graph(y)
start = _release.held_count()

def step(frame, event, arg):  # the alarm goes off once half the graph is freed
    if _release.held_count() > start // 2:
        return step
    sys.settrace(None)
    os.kill(os.getpid(), signal.SIGALRM)

def trace(frame, event, arg):
    return step if frame.f_code.co_filename == _release.__file__ else None

sys.settrace(trace)
try:
    del y
    for _ in range(3):  # where the alarm is due
        pass
    outcome = "no timeout"
except Timeout:
    outcome = "timeout"
sys.settrace(None)
print(outcome, probe() is None, _release.held_count(), calls,
      signal.getsignal(signal.SIGALRM) is alarm)
"""


def test_another_signals_exception_during_del_reaches_the_caller(
    tmp_path: Path,
) -> None:
    """An alarm handler that raises (a timeout) runs while a `del` frees a
    walked graph: the graph is still freed before `del` returns, and the
    caller gets the exception, once, at its next bytecode (old: "Exception
    ignored in _Trigger.__del__", no exception, half the graph held)."""
    result = run(tmp_path, ALARM_IN_DEL)
    assert result.returncode == 0, result.stderr[-2000:]
    expected = f"timeout True 0 [{int(signal.SIGALRM)}] True"
    assert result.stdout.strip() == expected
    assert "Exception ignored" not in result.stderr


# -- in process: the graph is really freed, not leaked --------------------------


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


def test_a_dropped_walked_graph_is_freed_by_the_del_itself() -> None:
    y, probe = deep_graph_with_a_saved_probe(5_000)
    before = _release.held_count()
    assert len(walk_graph(y)) > 5_000
    assert _release.held_count() > before  # some nodes hold their inputs
    assert probe() is not None
    del y
    assert probe() is None  # no thread, no polling: freed by the `del`
    assert _release.held_count() == before


def test_nodes_still_in_use_stay_until_dropped() -> None:
    """What decides is who owns a node, not a reference count: nodes that a
    tensor or a Python variable still uses stay, and go with their owner."""
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
    assert probe() is not None  # `middle` and `nodes` still use the graph
    del nodes
    assert probe() is not None  # `middle` still does
    assert middle.grad_fn is not None
    middle.sum().backward(retain_graph=True)  # the graph below `middle` works
    assert x.grad is not None
    node = middle.grad_fn.next_functions[0][0]  # a node held by a variable
    del middle
    assert probe() is not None  # `node` still uses the rest
    del node
    assert probe() is None


def test_walking_a_graph_twice_marks_it_once() -> None:
    y, probe = deep_graph_with_a_saved_probe(2_000)
    before = _release.held_count()
    walk_graph(y)
    held = _release.held_count()
    walk_graph(y)
    z = y * 2  # a new node on top, walked: held once more
    walk_graph(z)
    assert _release.held_count() == held + 1 > before
    del y, z
    assert probe() is None
    assert _release.held_count() == before


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
    assert probe() is None


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


def test_the_release_module_starts_no_thread() -> None:
    threads = threading.active_count()
    y, probe = deep_graph_with_a_saved_probe(2_000)
    format_graph(y)
    del y
    assert probe() is None
    assert threading.active_count() == threads


def longest_unmarked_run(root: torch.Tensor) -> int:
    """The most unmarked nodes in a row on any path down from ``root``: the
    depth to which freeing one node can recurse."""
    graph = walk_module.walk(root.grad_fn)
    longest: dict[int, int] = {}
    stack = [0]
    while stack:  # postorder: a node once all its inputs are done
        i = stack[-1]
        below = graph.inputs[graph.starts[i] : graph.starts[i + 1]]
        todo = [j for j in below if j not in longest]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        marked = _release._KEY in graph.nodes[i].metadata
        longest[i] = 0 if marked else 1 + max((longest[j] for j in below), default=0)
    return max(longest.values())


@pytest.mark.parametrize("seed", range(4))
def test_no_path_of_a_walked_graph_has_a_long_unmarked_run(seed: int) -> None:
    """Not every node is marked (that made the first walk 3x slower), but no
    path may hold more than RUN unmarked nodes in a row, whatever the shape:
    chains, nodes reached by several paths, several inputs."""
    rng = random.Random(seed)
    made = [torch.ones(1, requires_grad=True) for _ in range(3)]
    for _ in range(3_000):
        pick = rng.random()
        if pick < 0.5:
            made.append(made[-1] * 1.0001)
        elif pick < 0.95:
            made.append(rng.choice(made[-3:]).sin())  # often a second user
        else:
            made.append(rng.choice(made) + rng.choice(made))
    root = torch.stack(made).sum()  # reaches every node
    assert len(walk_graph(root)) > 3_000
    assert 0 < longest_unmarked_run(root) <= _release.RUN
    middle = made[len(made) // 2] * 2  # a later walk from inside the graph
    walk_graph(middle)
    assert longest_unmarked_run(middle) <= _release.RUN
    assert longest_unmarked_run(root) <= _release.RUN
