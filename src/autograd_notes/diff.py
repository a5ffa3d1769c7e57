"""What changed between two backward graphs: nodes added and removed, saved bytes.

:func:`.diff_graphs` matches nodes by module path, call index (the k-th call
of that module, from :meth:`.ModuleTrace.calls`) and node kind: the
nodes of one key are interchangeable, so only their numbers are compared.
Without a trace a node's key is its kind alone. Saved bytes per module come
from :func:`.saved_memory` on each side, with its rules; nothing runs user
code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, check_depth, type_name
from autograd_notes.labels import format_bytes, visible
from autograd_notes.memory import SavedMemory, module_order, saved_report
from autograd_notes.trace import ModuleTrace
from autograd_notes.walk import LEAF, as_node, gc_paused, runs_no_user_code, walk

__all__ = ["diff_graphs"]

_SHOWN = 20  # node changes listed in the text, each way

_Key = tuple[str | None, int | None, str]  # module path, call index, kind


@dataclass(frozen=True)
class NodeChange:
    """How many nodes of one key each graph has, where the numbers differ."""

    module: str | None  # None: made outside the model (or no trace)
    call: int | None  # which call of the module made them
    kind: str
    before: int
    after: int

    @property
    def change(self) -> int:
        """Nodes after minus nodes before."""
        return self.after - self.before


@dataclass(frozen=True)
class ModuleChange:
    """A module's nodes and saved bytes (its submodules' included) on each side."""

    path: str | None  # "" for the model, None for nodes outside it
    nodes_before: int
    nodes_after: int
    bytes_before: int
    bytes_after: int

    @property
    def change(self) -> int:
        """Saved bytes after minus saved bytes before."""
        return self.bytes_after - self.bytes_before


@dataclass
class GraphDiff:
    """What :func:`.diff_graphs` found; ``str()`` prints it."""

    before: SavedMemory
    after: SavedMemory
    nodes_before: int = 0
    nodes_after: int = 0
    traced: bool = False  # whether nodes were matched by module and call
    nodes: list[NodeChange] = field(default_factory=list)
    modules: list[ModuleChange] = field(default_factory=list)

    @property
    def added(self) -> int:
        """How many nodes the after graph has that the before graph has not."""
        return sum(max(row.change, 0) for row in self.nodes)

    @property
    def removed(self) -> int:
        """How many nodes the before graph has that the after graph has not."""
        return sum(max(-row.change, 0) for row in self.nodes)

    def table(self, depth: int | None = None) -> str:
        """The diff as text; ``depth`` keeps modules at most that deep."""
        check_depth(depth, "GraphDiff.table")
        return "\n".join(_lines(self, depth))

    def __str__(self) -> str:
        return self.table()


def _signed(count: int) -> str:
    return ("+" if count > 0 else "-" if count < 0 else "") + format_bytes(abs(count))


def _name(path: str | None) -> str:
    return "(outside the model)" if path is None else visible(path) or "(model)"


def _depth(path: str | None) -> int:
    return 0 if not path else path.count(".") + 1


def _lines(diff: GraphDiff, depth: int | None) -> Iterator[str]:
    before, after = diff.before.total, diff.after.total
    yield (
        f"nodes: {diff.nodes_before:,} -> {diff.nodes_after:,} ({diff.added:,} added, "
        f"{diff.removed:,} removed)"
    )
    yield (
        f"saved for backward: {format_bytes(before)} -> {format_bytes(after)} "
        f"({_signed(after - before)})"
    )
    rows = [
        row
        for row in diff.modules
        if (depth is None or _depth(row.path) <= depth)
        and (row.change or row.nodes_before != row.nodes_after)
    ]
    if rows:
        width = max(6, *(len(_name(r.path)) + 2 * _depth(r.path) for r in rows))
        yield ""
        yield (
            f"{'module':<{width}}  {'nodes':>13}  {'saved before':>12}  "
            f"{'saved after':>12}  {'change':>12}"
        )
        for row in rows:
            name = "  " * _depth(row.path) + _name(row.path)
            nodes = f"{row.nodes_before:,}"
            if row.nodes_after != row.nodes_before:
                nodes += f" -> {row.nodes_after:,}"
            yield (
                f"{name:<{width}}  {nodes:>13}  {format_bytes(row.bytes_before):>12}  "
                f"{format_bytes(row.bytes_after):>12}  {_signed(row.change):>12}"
            )
    for sign, word in ((1, "added"), (-1, "removed")):
        changes = [row for row in diff.nodes if row.change * sign > 0]
        if not changes:
            continue
        yield ""
        yield f"nodes {word}:"
        for change in changes[:_SHOWN]:
            where = "" if change.module is None else f"in {visible(change.module)}"
            if change.module == "":
                where = "in the model"
            if diff.traced and change.module is None:
                where = "outside the model"
            if change.call is not None:
                where += f", call {change.call}"
            mark = "+" if sign > 0 else "-"
            line = f"  {mark} {change.kind} ×{abs(change.change):,}"
            yield f"{line}  ({where})" if where else line
        if len(changes) > _SHOWN:
            yield f"  ... and {len(changes) - _SHOWN:,} more"


def _keys(nodes: list[Node], modules: ModuleTrace | None) -> Counter[_Key]:
    """How many nodes of each (module path, call index, kind) the graph has."""
    found: Counter[_Key] = Counter()
    types = list(map(type, nodes))
    names = {kind: visible(kind.__name__) for kind in set(types)}
    if modules is None:
        found.update((None, None, names[kind]) for kind in types)
        return found
    calls = modules.calls()
    index, paths = calls.call_index, calls.paths
    made = modules.calls_of(nodes)  # -1: outside calls, or a leaf (by its module)
    where = [
        paths[c] if c >= 0 else modules.path_of(node) if kind.__name__ == LEAF else None
        for node, kind, c in zip(nodes, types, made, strict=True)
    ]
    call = [index[c] if c >= 0 else None for c in made]
    found.update(zip(where, call, map(names.__getitem__, types), strict=True))
    return found


def _side(
    root: Node | None, modules: ModuleTrace | None
) -> tuple[Counter[_Key], SavedMemory]:
    """One walk of a graph: its node counts per key, and its saved memory."""
    if root is None:
        return Counter(), SavedMemory()
    with gc_paused():  # many small objects: no scans of the graph meanwhile
        nodes = walk(root).nodes
        return _keys(nodes, modules), saved_report(nodes, modules)


def _check(func: str, name: str, value: object, trace: object) -> Node | None:
    if not isinstance(value, torch.Tensor | Node):
        expected = "a torch.Tensor or a torch.autograd.graph.Node"
        raise TypeError(arg_error(func, name, expected, type_name(value)))
    if trace is not None and not isinstance(trace, ModuleTrace):
        expected = "a ModuleTrace (from track_modules()) or None"
        raise TypeError(arg_error(func, f"modules_{name}", expected, type_name(trace)))
    return as_node(value, func)


def _order(key: _Key) -> tuple[int, list[tuple[int, int | str]], int, str]:
    """The rows' order: :func:`.memory.module_order`, then call and kind."""
    path, call, kind = key
    return (*module_order(path), -1 if call is None else call, kind)


@runs_no_user_code
def diff_graphs(
    before: torch.Tensor | Node,
    after: torch.Tensor | Node,
    modules_before: ModuleTrace | None = None,
    modules_after: ModuleTrace | None = None,
) -> GraphDiff:
    """Compare the backward graphs behind ``before`` and ``after``.

    Parameters
    ----------
    before, after : torch.Tensor or torch.autograd.graph.Node
        The outputs (their ``grad_fn`` are the starts) or nodes.
    modules_before, modules_after : ModuleTrace, optional
        From :func:`.track_modules` around each forward pass: nodes are then
        matched by module path, call index and kind, and saved bytes are
        compared per module. Give both or neither.

    Returns
    -------
    GraphDiff
        ``.nodes`` (counts per key that differ: :class:`.NodeChange`),
        ``.modules`` (:class:`.ModuleChange` for every module on either side),
        ``.added``, ``.removed``, ``.before`` and ``.after`` (each side's
        :func:`.saved_memory` report); ``str()`` shows what changed.

    Raises
    ------
    TypeError
        If an output is neither a tensor nor a node, or a trace is not a
        ``ModuleTrace`` or None.
    ValueError
        If only one trace is given.

    Examples
    --------
    >>> x = torch.ones(4, requires_grad=True)
    >>> print(diff_graphs(x.exp().exp().sum(), x.exp().sum()))
    nodes: 4 -> 3 (0 added, 1 removed)
    saved for backward: 32 B -> 16 B (-16 B)
    <BLANKLINE>
    nodes removed:
      - ExpBackward0 ×1
    """
    func = "diff_graphs"
    first = _check(func, "before", before, modules_before)
    second = _check(func, "after", after, modules_after)
    if (modules_before is None) != (modules_after is None):
        given = "before" if modules_after is None else "after"
        expected = f"a ModuleTrace too, as 'modules_{given}' is one"
        other = "after" if given == "before" else "before"
        raise ValueError(arg_error(func, f"modules_{other}", expected, "None"))
    (old, saved_before), (new, saved_after) = (
        _side(first, modules_before),
        _side(second, modules_after),
    )
    diff = GraphDiff(
        saved_before,
        saved_after,
        sum(old.values()),
        sum(new.values()),
        modules_before is not None,
    )
    for key in sorted(old.keys() | new.keys(), key=_order):
        if old[key] != new[key]:
            diff.nodes.append(NodeChange(*key, old[key], new[key]))
    rows = {row.path: row for row in diff.before.modules}
    rows_after = {row.path: row for row in diff.after.modules}
    for path in sorted(
        rows.keys() | rows_after.keys(), key=lambda p: _order((p, 0, ""))
    ):
        a, b = rows.get(path), rows_after.get(path)
        diff.modules.append(
            ModuleChange(
                path,
                0 if a is None else a.nodes,
                0 if b is None else b.nodes,
                0 if a is None else a.total,
                0 if b is None else b.total,
            )
        )
    return diff
