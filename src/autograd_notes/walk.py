"""Walk the backward graph behind a tensor, and free it without crashing.

Calling an operation on a tensor that requires grad records a *node*
(``y.grad_fn``) that knows how to send a gradient back to the operation's
inputs. Each node lists the nodes it feeds in ``node.next_functions``, a tuple
of ``(node_or_None, input_nr)`` pairs, one per input (``None`` where that input
needs no gradient). Following those links from ``y.grad_fn`` reaches every
node that ``y.backward()`` will run, and ends at ``AccumulateGrad`` nodes, one
per leaf tensor, whose ``node.variable`` is the leaf that receives ``.grad``.

:func:`.walk_graph` lists the nodes, each once, in a fixed order, with an
explicit stack, never recursion; every function that prints, exports or draws
the graph starts from the same walk and numbers nodes ``[0]``, ``[1]``, ... in
the order it first reaches them. None of them runs user code: no
``__torch_function__`` of a tensor subclass is called.

Deep graphs and PyTorch 2.13+: once Python has seen a node, freeing the graph
recurses once per node in C and crashes the interpreter for graphs tens of
thousands of nodes deep (see the docs page "Known PyTorch issue: freeing a
deep graph crashes"). So a walked graph of 1,000 nodes or more is held, and
freed one node at a time without deep recursion once nothing else uses it
(see ``_release``). Dropping the tensor afterwards is safe, and
:func:`.free_graph` frees a graph right away.
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

    Reading a tensor's ``grad_fn``, shape or dtype would otherwise call a
    subclass's ``__torch_function__``: user code, run by a read-only call.
    """

    @functools.wraps(func)
    def reading(*args: Any, **kwargs: Any) -> Any:
        with torch._C.DisableTorchFunction():
            return func(*args, **kwargs)

    return cast(_F, reading)


class Graph(NamedTuple):
    """The nodes in visit order and their inputs, as flat index arrays.

    The inputs of ``nodes[i]`` are ``nodes[k]`` for ``k`` in
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

    Walking allocates a few objects per node. On a graph of a million nodes
    the collector would otherwise run several full passes over everything
    alive in the process, which makes a walk about five times slower.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def walk(root: Node) -> Graph:
    """Depth-first preorder over ``next_functions``, each node once.

    Inputs are taken in ``next_functions`` order and ``None`` edges are
    dropped. Nodes are told apart by identity: autograd hands out the same
    Python object for a node for as long as the node lives. A graph of
    ``_HOLD_MIN`` nodes or more is handed to ``_release`` to be freed safely.
    """
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
        Depth-first preorder: a node comes before its inputs, and inputs are
        taken in ``next_functions`` order, skipping ``None``. A node reached
        by several paths appears once, where it is first reached. A tensor
        without a ``grad_fn`` gives an empty list.

    Raises
    ------
    TypeError
        If ``root`` is neither a tensor nor a node.

    Notes
    -----
    The walk uses an explicit stack and runs in time linear in nodes plus
    edges. A graph of 1,000 nodes or more is then freed safely whenever it is
    dropped (see the module notes).

    Examples
    --------
    >>> import torch
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

    Use it to drop a graph that Python code has walked (this package's
    functions, torchviz, a loop over ``next_functions``): with PyTorch 2.13+
    dropping such a graph the ordinary way crashes the interpreter once it is
    tens of thousands of nodes deep. Works on any graph, chains and branching
    graphs alike.

    Parameters
    ----------
    tensor : torch.Tensor
        The output whose graph to free. It keeps its values, but afterwards
        has no ``grad_fn`` and does not require grad (``tensor.detach_()``).

    Returns
    -------
    int
        How many nodes were freed now. Nodes that other tensors still use
        are freed, one at a time, once those are dropped. A view cannot be
        detached in place: its graph is freed once the view is dropped.

    Raises
    ------
    TypeError
        If ``tensor`` is not a tensor.

    Examples
    --------
    >>> import torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> y = x
    >>> for _ in range(5):
    ...     y = y * 2
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
