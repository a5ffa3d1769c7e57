"""Walk the backward graph behind a tensor, and free it without crashing.

An operation on a tensor that requires grad records a *node* (``y.grad_fn``)
that sends gradients to its inputs, one ``(node_or_None, input_nr)`` pair of
``node.next_functions`` each (``None``: no gradient). From ``y.grad_fn`` they
reach every node ``y.backward()`` runs, ending at one ``AccumulateGrad`` node
per leaf, whose ``node.variable`` is the leaf that receives ``.grad``.

:func:`.walk_graph` lists the nodes, each once, in a fixed order (an explicit
stack, never recursion; linear time); every function that prints, exports or
draws the graph numbers nodes ``[0]``, ``[1]``, ... in that order. None runs
user code: no ``__torch_function__`` of a tensor subclass is called.

Deep graphs and PyTorch 2.13+: freeing a graph Python has seen recurses once
per node in C and crashes for graphs tens of thousands of nodes deep (docs:
"Known PyTorch issue: freeing a deep graph crashes"). So a walked graph of
1,000+ nodes is held and freed a node at a time once unused (``_release``):
dropping the tensor is safe; :func:`.free_graph` frees a graph right away.
"""

from __future__ import annotations

import functools
import gc
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, TypeVar, cast

import torch
from torch.autograd.graph import Node

from autograd_notes import _release
from autograd_notes._checks import arg_error, check_torch, type_name
from autograd_notes._torch import no_torch_function

__all__ = ["free_graph", "walk_graph"]

LEAF = "AccumulateGrad"  # the kind of node that hands a leaf its gradient
# Walks of at least this many nodes hold the graph for safe freeing (see
# _release): freeing 1,000 seen nodes recursively needs about 200 KiB of stack.
_HOLD_MIN = 1_000

_F = TypeVar("_F", bound=Callable[..., Any])


def runs_no_user_code(func: _F) -> _F:
    """Run ``func`` with ``__torch_function__`` off (subclasses and modes).

    Reading a tensor's ``grad_fn``, shape or dtype would otherwise run user code.
    """

    @functools.wraps(func)
    def reading(*args: Any, **kwargs: Any) -> Any:
        with no_torch_function():
            return func(*args, **kwargs)

    return cast(_F, reading)


class Graph(NamedTuple):
    """The nodes in visit order and their inputs, as flat index arrays.

    ``nodes[i]``'s inputs are ``nodes[k]`` for ``k`` in
    ``inputs[starts[i]:starts[i + 1]]``, in ``next_functions`` order.
    """

    nodes: list[Node]
    starts: list[int]
    inputs: list[int]


def as_node(root: object, func: str) -> Node | None:
    """The grad_fn to start from, or None for a tensor that has no graph."""
    if isinstance(root, torch.Tensor):
        return root.grad_fn
    if isinstance(root, Node):
        return root
    expected = "a torch.Tensor or a torch.autograd.graph.Node"
    raise TypeError(arg_error(func, "root", expected, type_name(root)))


def leaf_of(node: Node) -> torch.Tensor | None:
    """The leaf tensor of an ``AccumulateGrad`` node, else None."""
    variable = getattr(node, "variable", None)
    return variable if isinstance(variable, torch.Tensor) else None


class _Walks:
    """The walks running now, in any thread: one ``gc`` pause for them all.

    The cyclic collector would make the first walk of a million nodes twice
    as slow. The pause never touches ``gc.isenabled()``: it sets the first
    threshold to 0 (no automatic collection) and puts back the thresholds
    it found when the last walk ends, unless someone changed them meanwhile.
    A fork waits for other threads' walks, so a child never inherits half a
    walk (whose locals it could never free), nor the pause.
    """

    def __init__(self) -> None:
        self.cond = threading.Condition(threading.Lock())
        self.running: dict[int, int] = {}  # thread ident: walks it runs
        self.found = gc.get_threshold()  # the thresholds the first walk found
        self.forking: int | None = None  # the thread that forks

    def enter(self) -> None:
        me = threading.get_ident()
        with self.cond:
            while self.forking not in (None, me):
                self.cond.wait()
            if not self.running:
                self.found = gc.get_threshold()
                gc.set_threshold(0, *self.found[1:])
            self.running[me] = self.running.get(me, 0) + 1

    def leave(self) -> None:
        me = threading.get_ident()
        with self.cond:
            if self.running.get(me, 0) > 1:
                self.running[me] -= 1
            else:
                self.running.pop(me, None)
                self.resume()
            self.cond.notify_all()

    def resume(self) -> None:
        """Put the thresholds found back, if no walk runs and they are the pause's."""
        if not self.running and gc.get_threshold() == (0, *self.found[1:]):
            gc.set_threshold(*self.found)

    def before_fork(self) -> None:
        me = threading.get_ident()
        self.cond.acquire()
        self.forking = me
        while set(self.running) - {me}:
            self.cond.wait()

    def after_fork_in_parent(self) -> None:
        self.forking = None
        self.cond.notify_all()
        self.cond.release()

    def after_fork_in_child(self) -> None:
        me = threading.get_ident()
        self.cond = threading.Condition(threading.Lock())
        self.forking = None
        self.running = {me: self.running[me]} if me in self.running else {}
        self.resume()


_walks = _Walks()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_walks.before_fork,
        after_in_parent=_walks.after_fork_in_parent,
        after_in_child=_walks.after_fork_in_child,
    )


@contextmanager
def gc_paused() -> Iterator[None]:
    """No automatic ``gc`` collection inside the block, as during a walk.

    For work over a big walked graph that makes many small objects: the
    collector would scan the graph's nodes again and again (see ``_Walks``).
    """
    _walks.enter()
    try:
        yield
    finally:
        _walks.leave()


def walk(root: Node) -> Graph:
    """Depth-first preorder, each node once (by identity: one object per live node).

    The first ``_HOLD_MIN`` nodes are walked as they are; a graph with more
    is walked with ``gc`` paused and Ctrl-C held back until it is held
    (``_release``), then re-raised: a deep graph half held is not safe to free.
    """
    walking = _Walking(root)
    walking.visit(_HOLD_MIN)
    if not walking.stack and len(walking.nodes) < _HOLD_MIN:
        return walking.graph()
    with _release.holding_back() as caught:
        _walks.enter()
        try:
            walking.visit(None)
            graph = walking.graph()
            caught += _release.hold(*graph)
        finally:
            _walks.leave()
    _release.deliver(caught)
    return graph


class _Walking:
    """A walk under way: what it has found, and what is left (``stack``)."""

    def __init__(self, root: Node) -> None:
        self.nodes: list[Node] = []
        self.starts: list[int] = []
        self.found: list[Node] = []  # inputs, flat, as objects (indices later)
        self.index: dict[Node, int] = {}
        self.stack: list[Node] = [root]

    def visit(self, limit: int | None) -> None:
        """Go on until all is visited, or ``limit`` nodes are."""
        nodes, starts, found = self.nodes, self.starts, self.found
        index, stack = self.index, self.stack
        pop, push = stack.pop, stack.append
        while stack and (limit is None or len(nodes) < limit):
            node = pop()
            if node in index:
                continue
            index[node] = len(nodes)
            nodes.append(node)
            starts.append(len(found))
            edges = node.next_functions
            if len(edges) == 1:  # the common case, kept quick
                fn = edges[0][0]
                if fn is not None:
                    found.append(fn)
                    push(fn)
                continue
            inputs = [fn for fn, _ in edges if fn is not None]
            found.extend(inputs)
            inputs.reverse()  # pushed last-first, so popped in order
            stack.extend(inputs)

    def graph(self) -> Graph:
        index = self.index
        starts = [*self.starts, len(self.found)]
        return Graph(self.nodes, starts, [index[fn] for fn in self.found])


@runs_no_user_code
def walk_graph(root: torch.Tensor | Node) -> list[Node]:
    """List every node of the backward graph behind ``root``, each once.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        A tensor (its ``grad_fn`` is the start) or a node.

    Returns
    -------
    list[torch.autograd.graph.Node]
        Depth-first preorder: a node before its inputs, taken in
        ``next_functions`` order, skipping ``None``; a node reached by several
        paths appears once, where first reached. No ``grad_fn``: ``[]``.

    Raises
    ------
    TypeError
        If ``root`` is neither a tensor nor a node.

    Examples
    --------
    >>> x = torch.ones(3, requires_grad=True)
    >>> [type(node).__name__ for node in walk_graph((x * 2).sum())]
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> walk_graph(x)
    []
    """
    node = as_node(root, "walk_graph")
    return [] if node is None else walk(node).nodes


@runs_no_user_code
def free_graph(tensor: torch.Tensor) -> int:
    """Detach ``tensor`` from its backward graph and free the graph safely.

    For any graph that Python code has walked (this package, torchviz, a loop over
    ``next_functions``), chain or branching: see the module on deep graphs.

    Parameters
    ----------
    tensor : torch.Tensor
        The output whose graph to free. It keeps its values, but then has no
        ``grad_fn`` and does not require grad (``tensor.detach_()``).

    Returns
    -------
    int
        How many nodes were freed now. Nodes other tensors still use are freed,
        one at a time, once those are dropped. A view cannot be detached in
        place: its graph is freed once the view is dropped.

    Raises
    ------
    TypeError
        If ``tensor`` is not a tensor.

    Examples
    --------
    >>> y = torch.ones(2, requires_grad=True) * 2 * 2 * 2 * 2 * 2
    >>> free_graph(y), y.grad_fn
    (6, None)
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(
            arg_error("free_graph", "tensor", "a torch.Tensor", type_name(tensor))
        )
    check_torch("free_graph", "")
    root = tensor.grad_fn
    if root is None:
        return 0
    nodes = walk(root).nodes
    del root
    if tensor._is_view():  # cannot be detached in place: freed once dropped
        return _release.free_now(lambda: None, nodes)
    return _release.free_now(tensor.detach_, nodes)
