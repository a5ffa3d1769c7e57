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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, TypeVar, cast

import torch
from torch.autograd.graph import Node

from autograd_notes import _release
from autograd_notes._checks import arg_error, check_torch, type_name

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
        with torch._C.DisableTorchFunction():
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


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector, restoring it afterwards.

    Its full passes would make a walk of a million nodes about five times slower.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def walk(root: Node) -> Graph:
    """Depth-first preorder, each node once (by identity: one object per live node)."""
    nodes: list[Node] = []
    starts: list[int] = []
    found: list[Node] = []  # inputs, flat, as objects; made indices at the end
    index: dict[Node, int] = {}
    stack: list[Node] = [root]
    pop, push = stack.pop, stack.append
    with _gc_paused():
        while stack:
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
        starts.append(len(found))
        graph = Graph(nodes, starts, [index[fn] for fn in found])
        if len(nodes) >= _HOLD_MIN:
            _release.hold(index, root)
    return graph


@runs_no_user_code
def walk_graph(root: torch.Tensor | Node) -> list[Node]:
    """List every node of the backward graph behind ``root``, each once.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        A tensor (its ``grad_fn`` is the start) or a node.

    Returns
    -------
    list of torch.autograd.graph.Node
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
