"""Which module of a model made each node of its backward graph.

:func:`.track_modules` records, during a forward pass, the range of node
sequence numbers each module's forward used; the :class:`.ModuleTrace` it
yields then names the module of any node, so that the printing functions
can mark each node with its module or group a model's graph by module.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes.walk import LEAF, leaf_of

__all__ = ["ModuleTrace", "track_modules"]


def _next_sequence_nr() -> int:
    """The sequence number the next node made in this thread will get."""
    peek = getattr(torch._C._autograd, "_get_sequence_nr", None)
    if peek is not None:
        return int(peek())
    with torch.enable_grad():  # older torch: make a throw-away node
        probe = torch.zeros((), requires_grad=True) * 1
    assert probe.grad_fn is not None
    return int(probe.grad_fn._sequence_nr()) + 1


class ModuleTrace:
    """Which module's forward made each node, as recorded by :func:`.track_modules`.

    Pass it as ``modules=`` to :func:`.format_graph`, :func:`.to_dot`,
    :func:`.render_dot` or :func:`autograd_notes.draw_graph`. Nodes are
    matched by their sequence number (``node._sequence_nr()``, given in
    order of creation), so recording touches no node. ``AccumulateGrad``
    nodes belong to the module that owns the parameter.

    Examples
    --------
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    >>> with track_modules(model) as trace:
    ...     out = model(torch.ones(1, 2)).sum()
    >>> trace.path_of(out.grad_fn.next_functions[0][0])
    '1'
    """

    def __init__(self) -> None:
        # (first, end, nesting depth, path) of every forward call
        self._records: list[tuple[int, int, int, str]] = []
        self._params: dict[int, tuple[torch.Tensor, str]] = {}
        self._table: tuple[list[int], list[int], list[str], list[int]] | None = None

    def _table_now(self) -> tuple[list[int], list[int], list[str], list[int]]:
        """Intervals sorted by start, outer before inner, with parent links.

        A wrapper whose first and last operations are its child's has the
        child's interval; the nesting depth puts the wrapper outside.
        """
        if self._table is None:
            records = sorted(self._records, key=lambda r: (r[0], -r[1], r[2]))
            parents: list[int] = []
            open_: list[int] = []
            for i, (first, *_) in enumerate(records):
                while open_ and records[open_[-1]][1] <= first:
                    open_.pop()
                parents.append(open_[-1] if open_ else -1)
                open_.append(i)
            firsts = [r[0] for r in records]
            ends = [r[1] for r in records]
            self._table = (firsts, ends, [r[3] for r in records], parents)
        return self._table

    def path_of(self, node: Node) -> str | None:
        """The dotted path of the innermost module whose forward made ``node``.

        Parameters
        ----------
        node : torch.autograd.graph.Node
            A node of a graph built while recording.

        Returns
        -------
        str or None
            ``""`` for a node made by the top model itself, ``None`` for a
            node made outside its forward (a loss, say).

        Raises
        ------
        TypeError
            If ``node`` is not a :class:`torch.autograd.graph.Node`.
        """
        if not isinstance(node, Node):
            expected = "a torch.autograd.graph.Node (a grad_fn)"
            func = "ModuleTrace.path_of"
            raise TypeError(arg_error(func, "node", expected, type_name(node)))
        if type(node).__name__ == LEAF:
            leaf = leaf_of(node)
            found = None if leaf is None else self._params.get(id(leaf))
            return None if found is None else found[1]
        firsts, ends, paths, parents = self._table_now()
        seq = int(node._sequence_nr())
        i = bisect_right(firsts, seq) - 1
        while i >= 0 and ends[i] <= seq:
            i = parents[i]
        return None if i < 0 else paths[i]


@contextmanager
def track_modules(model: torch.nn.Module) -> Iterator[ModuleTrace]:
    """Record which submodule of ``model`` makes each backward node.

    Inside the ``with`` block, every forward call of ``model`` and its
    submodules records the range of node sequence numbers it used; the
    :class:`.ModuleTrace` then gives each node's innermost module, as a dotted
    path like those of ``model.named_modules()``. Hooks are removed on exit.

    Parameters
    ----------
    model : torch.nn.Module
        The model; all its submodules are tracked.

    Yields
    ------
    ModuleTrace
        Pass it as ``modules=`` to the printing functions.

    Raises
    ------
    TypeError
        If ``model`` is not a ``torch.nn.Module``.

    Examples
    --------
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
    >>> with track_modules(model) as trace:
    ...     loss = model(torch.ones(1, 2)).sum()
    >>> from autograd_notes import format_graph
    >>> print(format_graph(loss, modules=trace, depth=1))
    [0] SumBackward0
    [1] 1  (module: 1 node, TanhBackward0)
    [2] 0  (module: 4 nodes, AccumulateGrad ×2, AddmmBackward0, TBackward0)
    """
    if not isinstance(model, torch.nn.Module):
        expected = "a torch.nn.Module"
        raise TypeError(arg_error("track_modules", "model", expected, type_name(model)))
    trace = ModuleTrace()
    open_calls: list[tuple[str, int, int]] = []  # (path, first, depth)

    def before(path: str) -> object:
        def hook(module: torch.nn.Module, args: object) -> None:
            open_calls.append((path, _next_sequence_nr(), len(open_calls)))

        return hook

    def after(path: str) -> object:
        def hook(module: torch.nn.Module, args: object, output: object) -> None:
            while open_calls:
                opened, first, depth = open_calls.pop()
                if opened == path:
                    trace._records.append((first, _next_sequence_nr(), depth, path))
                    trace._table = None
                    return

        return hook

    handles = []
    for path, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(before(path)))
        handles.append(module.register_forward_hook(after(path), always_call=True))
        for _, param in module.named_parameters(recurse=False):
            trace._params.setdefault(id(param), (param, path))
    try:
        yield trace
    finally:
        for handle in handles:
            handle.remove()
