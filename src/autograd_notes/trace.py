"""Which module of a model made each node of its backward graph.

:func:`.track_modules` records, during a forward pass, the range of node
sequence numbers each module's forward used, per thread; the
:class:`.ModuleTrace` it yields then names the module of any node, so that
the printing functions can mark each node with its module or group a
model's graph by module.

Threads: sequence numbers count per thread, so a range says nothing about a
node another thread made. When forwards ran in several threads, a node's
thread is found from the graph: a forward called from outside any tracked
forward keeps its input and output nodes, and a node belongs to it if the
walk from its outputs reaches the node within its range, through neither its
inputs nor another thread's forward.
"""

from __future__ import annotations

import itertools
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from itertools import compress, repeat
from operator import le, lt, sub
from typing import Any, NamedTuple

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes._torch import (
    next_sequence_nr,
    no_torch_function,
    sequence_nr,
    sequence_nrs,
)
from autograd_notes.walk import LEAF, leaf_of, walk

__all__ = ["Calls", "ModuleTrace", "track_modules"]

# Outermost forwards (per thread) whose input and output nodes a trace keeps:
# each is a node Python has seen (see walk: a deep graph of seen nodes must be
# held to be freed) and keeps its graph alive; kept past the ``with`` block
# only if forwards ran in several threads.
_MAX_ANCHORED = 100

# (starts, ends, paths, parent index) of one thread's forward calls
_Table = tuple[list[int], list[int], list[str], list[int]]


def _grad_fns(value: object) -> list[Node]:
    """The ``grad_fn`` of every tensor in nested tuples, lists and dicts."""
    found: list[Node] = []
    stack = [value]
    with no_torch_function():  # no subclass code runs
        while stack:
            item = stack.pop()
            if isinstance(item, torch.Tensor):
                if item.grad_fn is not None:
                    found.append(item.grad_fn)
            elif isinstance(item, tuple | list):
                stack.extend(item)
            elif isinstance(item, dict):
                stack.extend(item.values())
    return found


def _innermost(
    table: _Table | None, nodes: Sequence[Node], leaves: set[type]
) -> list[int]:
    """``calls_of`` where one thread made every record: each node's call, in bulk.

    The call that starts last at or before a node's sequence number (one
    bisection per node, in C); where that call ended before the node, its
    parents are tried, node by node (a node made between two calls).
    """
    if table is None:
        return [-1] * len(nodes)
    firsts, ends, _, parents = table
    seqs = sequence_nrs(nodes)
    found = list(map(sub, map(partial(bisect_right, firsts), seqs), repeat(1)))
    outside = map(le, map(ends.__getitem__, found), seqs)  # ends[-1]: found -1
    where = range(len(found))
    for k in {*compress(where, outside), *compress(where, map(lt, found, repeat(0)))}:
        i, seq = found[k], seqs[k]
        while i >= 0 and ends[i] <= seq:
            i = parents[i]
        found[k] = max(i, -1)
    if leaves:
        for k, kind in enumerate(map(type, nodes)):
            if kind in leaves:
                found[k] = -1
    return found


def _table(records: list[tuple[int, int, int, str]]) -> _Table:
    """Intervals sorted by start, outer before inner, with parent links.

    A wrapper whose first and last operations are its child's has the
    child's interval; the nesting depth puts the wrapper outside.
    """
    records = sorted(records, key=lambda r: (r[0], -r[1], r[2]))
    parents: list[int] = []
    open_: list[int] = []
    for i, (first, *_) in enumerate(records):
        while open_ and records[open_[-1]][1] <= first:
            open_.pop()
        parents.append(open_[-1] if open_ else -1)
        open_.append(i)
    return (
        [r[0] for r in records],
        [r[1] for r in records],
        [r[3] for r in records],
        parents,
    )


def _members(
    anchored: list[tuple[int, int, int, list[Node], list[Node]]],
) -> dict[Node, int]:
    """The thread of each node an anchored forward made; -1 if several claim it.

    A walk stops at the forward's inputs and at the outputs that forwards in
    other threads made (a thread may hand its result to another one).
    """
    made: list[list[Node]] = []  # each forward's outputs that it made itself
    made_by: dict[Node, int] = {}
    walked: set[Node] = set()
    for thread, first, end, outputs, inputs in anchored:
        own = [o for o in outputs if o not in inputs and first <= sequence_nr(o) < end]
        made.append(own)
        for output in own:
            made_by[output] = thread if made_by.get(output, thread) == thread else -1
    for output in itertools.chain.from_iterable(reversed(made)):  # newest first
        if output not in walked:  # held for safe freeing, like any walk
            walked.update(walk(output).nodes)
    members: dict[Node, int] = {}
    for (thread, first, end, _, inputs), own in zip(anchored, made, strict=True):
        stop, seen, stack = set(inputs), set(own), list(own)
        while stack:
            node = stack.pop()
            if members.setdefault(node, thread) != thread:
                members[node] = -1
            for fn, _ in node.next_functions:
                if (
                    fn is None
                    or fn in seen
                    or fn in stop
                    or made_by.get(fn, thread) != thread
                    or not first <= sequence_nr(fn) < end
                ):
                    continue
                seen.add(fn)
                stack.append(fn)
    return members


class Calls(NamedTuple):
    """Every recorded forward call: one thread's in order of start, then the next's.

    Call ``c`` ran module ``paths[c]`` inside call ``parents[c]`` (-1: an
    outermost call); it was call number ``call_index[c]`` of that path (from
    0, threads in order): ``(path, call index)`` names one call on every run.
    """

    paths: list[str]
    call_index: list[int]
    parents: list[int]
    threads: list[int]


class ModuleTrace:
    """Which module's forward made each node, as recorded by :func:`.track_modules`.

    Pass it as ``modules=`` to :func:`.format_graph`, :func:`.to_dot`,
    :func:`.render_dot` or :func:`autograd_notes.draw_graph`. Nodes are
    matched by their sequence number (``node._sequence_nr()``, given in
    order of creation, per thread). ``AccumulateGrad`` nodes belong to the
    module that owns the parameter. :meth:`calls` lists the forward calls,
    and :meth:`calls_of` says which call made each node.

    Examples
    --------
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    >>> with track_modules(model) as trace:
    ...     out = model(torch.ones(1, 2)).sum()
    >>> trace.path_of(out.grad_fn.next_functions[0][0])
    '1'
    """

    def __init__(self) -> None:
        # (thread, first, end, nesting depth, path) of every forward call
        self._records: list[tuple[int, int, int, int, str]] = []
        # (thread, first, end, output nodes, input nodes) of outermost calls
        self._anchored: list[tuple[int, int, int, list[Node], list[Node]]] = []
        self._threads = 0  # how many threads called a tracked forward
        self._params: dict[int, tuple[torch.Tensor, str]] = {}
        self._state: list[tuple[str, str, torch.Tensor]] = []  # see named_state
        self._lock = threading.Lock()
        # caches, each with the number of records it was built from
        self._tables: tuple[int, dict[int, _Table], _Table | None] = (0, {}, None)
        self._members: tuple[int, dict[Node, int]] = (0, {})

    def _tables_now(self) -> tuple[int, dict[int, _Table], _Table | None]:
        """Each thread's table, and the only one if one thread made records."""
        with self._lock:
            records = self._records[:]  # more may come from running forwards
            by_thread: dict[int, list[tuple[int, int, int, str]]] = {}
            for thread, first, end, depth, path in records:
                by_thread.setdefault(thread, []).append((first, end, depth, path))
            tables = {t: _table(r) for t, r in by_thread.items()}
            only = next(iter(tables.values())) if len(tables) == 1 else None
            self._tables = (len(records), tables, only)
            return self._tables

    def _members_now(self) -> dict[Node, int]:
        count, members = self._members
        if count != len(self._anchored):
            anchored = self._anchored[:]
            members = _members(anchored)
            self._members = (len(anchored), members)
        return members

    def _current(self) -> tuple[int, dict[int, _Table], _Table | None]:
        count, tables, table = self._tables
        if count != len(self._records):
            count, tables, table = self._tables_now()
        return count, tables, table

    def calls(self) -> Calls:
        """Every forward call recorded so far (see :class:`.Calls`)."""
        _, tables, _ = self._current()
        paths: list[str] = []
        index: list[int] = []
        parents: list[int] = []
        threads: list[int] = []
        seen: dict[str, int] = {}
        for thread in sorted(tables):
            _, _, table_paths, table_parents = tables[thread]
            offset = len(paths)
            for path, parent in zip(table_paths, table_parents, strict=True):
                index.append(seen.get(path, 0))
                seen[path] = index[-1] + 1
                paths.append(path)
                parents.append(parent + offset if parent >= 0 else -1)
                threads.append(thread)
        return Calls(paths, index, parents, threads)

    def calls_of(self, nodes: Sequence[Node]) -> list[int]:
        """The innermost call that made each node, as an index into :meth:`calls`.

        -1 for a node made outside every tracked forward, for an
        ``AccumulateGrad`` node (it belongs to a module, not to a call) and
        for a node whose thread cannot be told (see :meth:`path_of`).

        >>> model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
        >>> with track_modules(model) as trace:
        ...     out = model(torch.ones(1, 2)).sum()
        >>> relu = out.grad_fn.next_functions[0][0]
        >>> [trace.calls().paths[c] for c in trace.calls_of([relu])]
        ['1']
        """
        func = "ModuleTrace.calls_of"
        expected = "a sequence of torch.autograd.graph.Node (grad_fn)"
        if isinstance(nodes, str) or not isinstance(nodes, Sequence):
            raise TypeError(arg_error(func, "nodes", expected, type_name(nodes)))
        leaves: set[type] = set()  # the node classes seen, and the leaf class
        classes: set[type] = set()
        for node in nodes:
            if type(node) not in classes:  # isinstance(node, Node) is slow (ABC)
                if not isinstance(node, Node):
                    actual = f"one item {type_name(node)}"
                    raise TypeError(arg_error(func, "nodes", expected, actual))
                classes.add(type(node))
                if type(node).__name__ == LEAF:
                    leaves.add(type(node))
        _, tables, only = self._current()
        offsets: dict[int, int] = {}
        total = 0
        for thread in sorted(tables):
            offsets[thread] = total
            total += len(tables[thread][0])
        members = self._members_now() if self._threads > 1 else None
        if members is None:
            return _innermost(only, nodes, leaves)
        found: list[int] = []
        append = found.append
        for node in nodes:
            table, offset = only, 0
            if members is not None:
                thread = members.get(node, -1)
                table, offset = tables.get(thread), offsets.get(thread, 0)
            if table is None or type(node) in leaves:
                append(-1)
                continue
            firsts, ends, _, parents = table
            seq = sequence_nr(node)
            i = bisect_right(firsts, seq) - 1
            while i >= 0 and ends[i] <= seq:
                i = parents[i]
            append(i + offset if i >= 0 else -1)
        return found

    def path_of(self, node: Node) -> str | None:
        """The dotted path of the innermost module whose forward made ``node``.

        Parameters
        ----------
        node : torch.autograd.graph.Node
            A node of a graph built while recording.

        Returns
        -------
        str | None
            ``""`` for a node made by the top model itself, ``None`` for a
            node made outside its forward (a loss, say). When forwards ran in
            several threads, also ``None`` for a node whose thread cannot be
            told (see the module): one its forward's outputs do not lead
            to, or one of the 101st and later outermost forwards.

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
        _, tables, table = self._current()
        if self._threads > 1:
            table = tables.get(self._members_now().get(node, -1))
        if table is None:
            return None
        firsts, ends, paths, parents = table
        seq = int(sequence_nr(node))
        i = bisect_right(firsts, seq) - 1
        while i >= 0 and ends[i] <= seq:
            i = parents[i]
        return None if i < 0 else paths[i]

    def named_state(self) -> list[tuple[str, str, torch.Tensor]]:
        """``(name, "parameter" or "buffer", tensor)`` of the traced model.

        Names as in ``model.named_parameters()`` and ``named_buffers()``, as
        they were when :func:`.track_modules` began; a tensor that several
        modules share (tied weights) is listed under each of its names.
        """
        return list(self._state)


def _check_model(model: object) -> list[tuple[str, torch.nn.Module]]:
    """The named modules of ``model``, if hooks can be put on all of them."""
    func = "track_modules"
    if not isinstance(model, torch.nn.Module):
        actual = type_name(model)
        if isinstance(model, type) and issubclass(model, torch.nn.Module):
            actual = f"the class {model.__name__} itself (make one first)"
        raise TypeError(arg_error(func, "model", "a torch.nn.Module", actual))
    modules = list(model.named_modules())
    for path, module in modules:
        if isinstance(module, torch.jit.ScriptModule):  # refuses forward hooks
            where = f"'{path}': " if path else "the model itself: "
            expected = "hold no scripted or traced (torch.jit) submodule"
            raise TypeError(
                arg_error(func, "model", expected, where + type_name(module))
            )
    return modules


@contextmanager
def track_modules(model: torch.nn.Module) -> Iterator[ModuleTrace]:
    """Record which submodule of ``model`` makes each backward node.

    Inside the ``with`` block, every forward call of ``model`` and its
    submodules, in any thread, records the range of node sequence numbers it
    used; the :class:`.ModuleTrace` then gives each node's innermost module,
    as a dotted path like those of ``model.named_modules()``. Hooks are
    removed on exit, and if anything fails.

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
        If ``model`` is not a ``torch.nn.Module``, or holds a scripted
        (``torch.jit``) module, which takes no hooks: before any hook is added.

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
    modules = _check_model(model)
    trace = ModuleTrace()
    local = threading.local()  # per thread: its number and its open calls
    numbers = itertools.count()

    def first_call() -> list[tuple[str, int, list[Node] | None]]:
        local.thread, local.calls = next(numbers), []
        with trace._lock:
            trace._threads += 1
        return local.calls  # type: ignore[no-any-return]

    def before(path: str) -> Callable[[torch.nn.Module, Any, Any], None]:
        def hook(module: torch.nn.Module, args: Any, kwargs: Any) -> None:
            try:
                calls = local.calls
            except AttributeError:
                calls = first_call()
            inputs = None
            if not calls and len(trace._anchored) < _MAX_ANCHORED:
                inputs = _grad_fns((args, kwargs))
            calls.append((path, next_sequence_nr(), inputs))

        return hook

    def after(path: str) -> Callable[[torch.nn.Module, Any, Any], None]:
        def hook(module: torch.nn.Module, args: Any, output: Any) -> None:
            calls = getattr(local, "calls", ())
            while calls:
                opened, first, inputs = calls.pop()
                if opened == path:
                    end, thread = next_sequence_nr(), local.thread
                    trace._records.append((thread, first, end, len(calls), path))
                    if inputs is not None and len(trace._anchored) < _MAX_ANCHORED:
                        outputs = _grad_fns(output)
                        record = (thread, first, end, outputs, inputs)
                        with trace._lock:  # the cap again: threads race
                            if len(trace._anchored) < _MAX_ANCHORED:
                                trace._anchored.append(record)
                    return

        return hook

    handles = []
    try:  # every hook in: any failure removes those already added
        for path, module in modules:
            handles.append(
                module.register_forward_pre_hook(before(path), with_kwargs=True)
            )
            handles.append(module.register_forward_hook(after(path), always_call=True))
            for name, param in module.named_parameters(recurse=False):
                trace._params.setdefault(id(param), (param, path))
                trace._state.append(
                    (f"{path}.{name}" if path else name, "parameter", param)
                )
            for name, buffer in module.named_buffers(recurse=False):
                trace._state.append(
                    (f"{path}.{name}" if path else name, "buffer", buffer)
                )
        yield trace
    finally:
        for handle in handles:
            handle.remove()
        if trace._threads <= 1:  # one thread: ranges suffice, nodes not kept
            trace._anchored.clear()
