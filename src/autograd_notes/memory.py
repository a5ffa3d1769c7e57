"""The bytes a backward graph keeps alive in what its nodes saved.

:func:`.saved_memory` reads every value saved for backward the way
``autograd_notes.saved`` does: through the raw ``SavedTensor``, never
unpacked, so no unpack hook, checkpointed forward or ``__torch_function__``
runs. Each storage counts once, at its ``untyped_storage()`` address and
size (a view keeps its whole storage alive; storages that overlap count
their union once). Nothing is counted for a value a
``saved_tensors_hooks`` pack hook holds, one a checkpoint recomputes, or
one on the meta device: they are listed as not counted. The inputs and the
RNG state a non-reentrant checkpoint keeps to recompute from are counted,
at a node of the checkpointed region (found in its unpack hook; a torch
that keeps them elsewhere lists them as not counted). Custom ``Function``
nodes also count tensors kept as ``ctx`` attributes. A parameter is one
of the trace's, or a leaf that gets a gradient; a buffer is one of the
trace's.

Attribution, so that the sums hold: a storage saved by several nodes is
counted at the one made first in the forward (lowest sequence number, then
walk order); the others show it as ``shared``. Node rows add up to the
total, a module's row is the sum of the nodes its forward made (its
submodules' included), and the model's row plus the row outside the model
is the total again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import compress

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, check_depth, type_name
from autograd_notes._counting import KINDS as _KINDS
from autograd_notes._counting import Columns, count
from autograd_notes._storages import Skipped, has_storage
from autograd_notes.labels import format_bytes, visible
from autograd_notes.trace import ModuleTrace
from autograd_notes.walk import (
    LEAF,
    as_node,
    gc_paused,
    leaf_of,
    runs_no_user_code,
    walk,
)

__all__ = ["saved_memory"]


@dataclass(frozen=True)
class NodeRow:
    """Bytes counted at one node (``index`` as in :func:`.walk_graph`)."""

    index: int
    kind: str
    module: str | None  # innermost module path; None: outside the model
    call: int | None  # which call of that module made the node
    activations: int
    parameters: int
    buffers: int
    shared: int  # bytes it saved that another node counts
    not_counted: int  # values held by hooks, recomputed or on the meta device

    @property
    def total(self) -> int:
        """Activations, parameters and buffers, in bytes."""
        return self.activations + self.parameters + self.buffers


@dataclass(frozen=True)
class ModuleRow:
    """Bytes counted at the nodes a module's forward made, submodules included."""

    path: str | None  # "" for the model itself, None for nodes outside it
    calls: int
    nodes: int
    activations: int
    parameters: int
    buffers: int

    @property
    def total(self) -> int:
        """Activations, parameters and buffers, in bytes."""
        return self.activations + self.parameters + self.buffers


@dataclass(frozen=True)
class CallRow:
    """Bytes counted at the nodes made inside call ``call`` of a repeated module."""

    path: str
    call: int
    nodes: int
    total: int


@dataclass(frozen=True)
class StorageRow:
    """One storage counted: where it is counted, and what saved it."""

    kind: str  # "activation", "parameter" or "buffer"
    name: str  # the parameter's or buffer's name, else ""
    nbytes: int
    node: int  # the node it is counted at
    saves: int  # how many saved values use it
    shape: tuple[int, ...]  # of the value saved at ``node``
    dtype: str
    device: str


@dataclass(frozen=True)
class NotCounted:
    """A saved value not counted, and why."""

    node: int
    attribute: str
    reason: str


class SavedMemory:
    """What :func:`.saved_memory` found; ``str()`` prints it as a table.

    Rows: ``nodes``, each node that saved anything; ``modules`` (with a
    trace), each module with nodes, its parents, and the nodes outside the
    model; ``calls``, each call of a module called more than once;
    ``storages``, each storage counted; ``not_counted``, the values left out.
    """

    def __init__(
        self,
        nodes: list[NodeRow] | None = None,
        modules: list[ModuleRow] | None = None,
        calls: list[CallRow] | None = None,
        storages: list[StorageRow] | None = None,
        not_counted: list[NotCounted] | None = None,
    ) -> None:
        self._nodes: list[NodeRow] | None = [] if nodes is None else nodes
        self.modules = [] if modules is None else modules
        self.calls = [] if calls is None else calls
        self._storages: list[StorageRow] | None = storages
        if storages is None:
            self._storages = []
        self._not_counted: list[NotCounted] | None = not_counted
        if not_counted is None:
            self._not_counted = []
        self._found: _Found | None = None  # what rows not made yet come from

    @classmethod
    def _of_found(
        cls, found: _Found, modules: list[ModuleRow], calls: list[CallRow]
    ) -> SavedMemory:
        report = cls(modules=modules, calls=calls)
        report._nodes = report._storages = report._not_counted = None
        report._found = found
        return report

    @property
    def nodes(self) -> list[NodeRow]:
        """Each node that saved anything, as a :class:`.NodeRow`."""
        if self._nodes is None:
            self._nodes = self._lazy().node_rows()
        return self._nodes

    @property
    def storages(self) -> list[StorageRow]:
        """Each storage counted, as a :class:`.StorageRow`."""
        if self._storages is None:
            found = self._lazy()
            self._storages = found.storage_rows(range(len(found.columns.nbytes)))
        return self._storages

    @property
    def not_counted(self) -> list[NotCounted]:
        """Each saved value left out, and why, as a :class:`.NotCounted`."""
        if self._not_counted is None:
            skipped = self._lazy().columns.skipped
            self._not_counted = [NotCounted(*item) for item in skipped]
        return self._not_counted

    def _lazy(self) -> _Found:
        if self._found is None:  # pragma: no cover - set with the rows it makes
            raise RuntimeError("SavedMemory: rows missing")
        return self._found

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SavedMemory):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in _FIELDS)
        return f"SavedMemory({fields})"

    def _of(self, kind: int | None) -> int:
        if self._found is not None and self._storages is None:
            return self._found.columns.total(kind)
        return sum(
            row.nbytes
            for row in self.storages
            if kind is None or row.kind == _KINDS[kind]
        )

    @property
    def total(self) -> int:
        """Bytes of every storage counted, each once."""
        return self._of(None)

    @property
    def activations(self) -> int:
        """Bytes of the activations counted."""
        return self._of(0)

    @property
    def parameters(self) -> int:
        """Bytes of the parameters counted."""
        return self._of(1)

    @property
    def buffers(self) -> int:
        """Bytes of the buffers counted."""
        return self._of(2)

    def module(self, path: str | None) -> ModuleRow | None:
        """The row of module ``path`` (``""``: the model), if it has one."""
        return next((row for row in self.modules if row.path == path), None)

    def table(self, depth: int | None = None) -> str:
        """The report as text; ``depth`` keeps modules at most that deep."""
        check_depth(depth, "SavedMemory.table")
        return "\n".join(_table_lines(self, depth))

    def __str__(self) -> str:
        return self.table()

    def _named(self) -> list[StorageRow]:
        """The storage rows of parameters and buffers."""
        if self._found is not None and self._storages is None:
            kinds = self._found.columns.kinds
            return self._found.storage_rows([j for j, k in enumerate(kinds) if k])
        return [row for row in self.storages if row.kind != "activation"]

    def _storage_count(self) -> int:
        if self._found is not None and self._storages is None:
            return len(self._found.columns.nbytes)
        return len(self.storages)

    def _skipped(self) -> list[Skipped] | list[NotCounted]:
        if self._found is not None and self._not_counted is None:
            return self._found.columns.skipped
        return self.not_counted


_FIELDS = ("nodes", "modules", "calls", "storages", "not_counted")


@dataclass
class _Found:
    """The columns of one report, and what its node rows are made of."""

    columns: Columns
    kind_names: list[str]  # shown kind of each node
    paths: list[str | None]
    calls: list[int | None]

    def node_rows(self) -> list[NodeRow]:
        counted = self.columns.per_node()
        skipped: dict[int, int] = {}
        for item in self.columns.skipped:
            skipped[item.node] = skipped.get(item.node, 0) + 1
        rows = []
        none = [0, 0, 0]
        names, paths, calls = self.kind_names, self.paths, self.calls
        shared = self.columns.shared
        for i in sorted(counted.keys() | shared.keys() | skipped.keys()):
            a, p, b = counted.get(i, none)
            row = NodeRow(
                i, names[i], paths[i], calls[i], a, p, b, shared.get(i, 0),
                skipped.get(i, 0),
            )  # fmt: skip
            rows.append(row)
        return rows

    def storage_rows(self, which: Iterable[int]) -> list[StorageRow]:
        c = self.columns
        return [
            StorageRow(
                _KINDS[c.kinds[j]],
                c.names[j],
                c.nbytes[j],
                c.nodes[j],
                c.saves[j],
                c.shapes[j],
                c.dtypes[j],
                c.devices[j],
            )
            for j in which
        ]


def _depth(path: str | None) -> int:
    return -1 if path is None else 0 if path == "" else path.count(".") + 1


def _table_lines(report: SavedMemory, depth: int | None) -> Iterator[str]:
    kinds = [report.activations, report.parameters, report.buffers]
    parts = ", ".join(
        f"{kind}s {format_bytes(b)}" for kind, b in zip(_KINDS, kinds, strict=True)
    )
    count = report._storage_count()
    noun = "storage" if count == 1 else "storages"
    yield f"saved: {format_bytes(report.total)} in {count} {noun}"
    yield f"  {parts}"
    skipped = report._skipped()
    if skipped:
        reasons: dict[str, int] = {}
        for item in skipped:
            reasons[item.reason] = reasons.get(item.reason, 0) + 1
        found = "; ".join(f"{reason}: {n}" for reason, n in reasons.items())
        yield f"not counted: {len(skipped)} saved values ({found})"
    per_call: dict[str, list[int]] = {}
    for call in report.calls:
        per_call.setdefault(call.path, []).append(call.total)
    rows = [r for r in report.modules if depth is None or _depth(r.path) <= depth]
    if rows:
        width = max(
            len(_module_name(r.path)) + 2 * max(_depth(r.path), 0) for r in rows
        )
        width = max(width, 6)
        yield ""
        yield (
            f"{'module':<{width}}  {'nodes':>7}  {'activations':>11}  "
            f"{'parameters':>11}  {'buffers':>9}  calls"
        )
        for row in rows:
            name = "  " * max(_depth(row.path), 0) + _module_name(row.path)
            totals = [] if row.path is None else per_call.get(row.path, [])
            calls = ""
            if totals:
                low, high = format_bytes(min(totals)), format_bytes(max(totals))
                each = low if low == high else f"{low} to {high}"
                calls = f"{row.calls:,}, {each} per call"
            sizes = [format_bytes(b) for b in (row.activations, row.parameters)]
            yield (
                f"{name:<{width}}  {row.nodes:>7,}  {sizes[0]:>11}  {sizes[1]:>11}  "
                f"{format_bytes(row.buffers):>9}  {calls}"
            ).rstrip()
    named = report._named()
    deeper = [r for r in named if depth is not None and _depth(r.name) > depth + 1]
    hidden = {id(r) for r in deeper}
    if named:
        yield ""
        yield "parameters and buffers saved:"
        for saved in named:
            if deeper and id(saved) in hidden:
                continue
            label = visible(saved.name) or f"leaf {saved.kind}"
            yield (
                f"  {label}  {saved.shape} {saved.dtype}  {format_bytes(saved.nbytes)}"
                f"  (counted at node [{saved.node}])"
            )
        if deeper:
            total = format_bytes(sum(r.nbytes for r in deeper))
            yield f"  and {len(deeper):,} in deeper modules ({total})"


def _module_name(path: str | None) -> str:
    return "(outside the model)" if path is None else visible(path) or "(model)"


def _state_of(
    modules: ModuleTrace | None, nodes: list[Node], kinds: list[str]
) -> dict[tuple[str, int], tuple[str, str]]:
    """``(device, storage address) -> (kind, name)`` of parameters and buffers.

    The trace's parameters and buffers, then every leaf that receives a
    gradient in the graph (a parameter, named or not).
    """
    tensors: list[tuple[str, str, torch.Tensor]] = []
    if modules is not None:
        tensors = modules.named_state()
    for node, kind in zip(nodes, kinds, strict=True):
        if kind == LEAF:
            leaf = leaf_of(node)
            if leaf is not None:
                tensors.append(("", "parameter", leaf))
    state: dict[tuple[str, int], tuple[str, str]] = {}
    for name, kind, tensor in tensors:
        if tensor.device.type != "meta" and has_storage(tensor):
            key = (str(tensor.device), tensor.untyped_storage().data_ptr())
            state.setdefault(key, (kind, name))
    return state


def module_order(path: str | None) -> tuple[int, list[tuple[int, int | str]]]:
    """Sort key: the model, its modules (``h.2`` before ``h.10``), then outside."""
    if path is None:
        return 2, []
    parts = path.split(".") if path else []
    return (0 if not parts else 1), [
        (0, int(p)) if p.isascii() and p.isdigit() else (1, p) for p in parts
    ]


def _ancestors(path: str) -> Iterator[str]:
    """``""``, ``"h"``, ``"h.0"`` for ``"h.0"``."""
    yield ""
    if path:
        parts = path.split(".")
        for end in range(1, len(parts) + 1):
            yield ".".join(parts[:end])


def _add_modules(
    modules: ModuleTrace,
    nodes: list[Node],
    kinds: list[str],
    columns: Columns,
) -> tuple[list[str | None], list[int | None], list[ModuleRow], list[CallRow]]:
    """Each node's module path and call index; a row per module (its subtree)
    and per call of a repeated module.

    Nodes are summed per call (or per module, for a leaf made outside every
    call) first, then each call to its module and the modules around it.
    """
    calls = modules.calls()
    chains: dict[int, list[tuple[str, int]]] = {-1: []}  # calls around a call
    for c in range(len(calls.paths)):  # a parent call starts before its children
        chains[c] = [(calls.paths[c], calls.call_index[c]), *chains[calls.parents[c]]]
    made = modules.calls_of(nodes)
    paths: list[str | None] = [None if c < 0 else calls.paths[c] for c in made]
    for i in compress(range(len(nodes)), (c < 0 for c in made)):
        if kinds[i] == LEAF:  # a leaf is in the module that owns it
            paths[i] = modules.path_of(nodes[i])
    index: list[int | None] = [None if c < 0 else calls.call_index[c] for c in made]
    units: dict[tuple[int, str | None], list[int]] = {}  # nodes, bytes per kind
    unit_of = list(zip(made, paths, strict=True))
    for unit, n in Counter(unit_of).items():
        units[unit] = [n, 0, 0, 0]
    for node, kind, size in zip(
        columns.nodes, columns.kinds, columns.nbytes, strict=True
    ):
        units[unit_of[node]][kind + 1] += size
    sums: dict[str | None, list[int]] = {}  # path -> nodes, bytes per kind
    called: dict[str, set[int]] = {}
    per_call: dict[tuple[str, int], list[int]] = {}  # nodes, bytes
    for (c, path), here in units.items():
        keys: Iterable[str | None] = (None,) if path is None else _ancestors(path)
        for key in keys:
            row = sums.setdefault(key, [0, 0, 0, 0])
            for k in range(4):
                row[k] += here[k]
        for call in set(chains[c]):
            called.setdefault(call[0], set()).add(call[1])
            entry = per_call.setdefault(call, [0, 0])
            entry[0] += here[0]
            entry[1] += sum(here[1:])
    module_rows = []
    for path in sorted(sums, key=module_order):
        n, a, p, b = sums[path]
        count = 0 if path is None else len(called.get(path, ()))
        module_rows.append(ModuleRow(path, count, n, a, p, b))
    call_rows = [
        CallRow(path, k, n, total)
        for (path, k), (n, total) in sorted(
            per_call.items(), key=lambda item: (module_order(item[0][0]), item[0][1])
        )
        if len(called[path]) > 1
    ]
    return paths, index, module_rows, call_rows


def saved_report(nodes: list[Node], modules: ModuleTrace | None) -> SavedMemory:
    """:func:`saved_memory` of a graph walked already (``nodes``, in walk order)."""
    types = list(map(type, nodes))
    names_of = {kind: kind.__name__ for kind in set(types)}
    kinds = list(map(names_of.__getitem__, types))
    columns = count(nodes, _state_of(modules, nodes, kinds))
    shown = {kind: visible(name) for kind, name in names_of.items()}
    paths: list[str | None] = [None] * len(nodes)
    calls: list[int | None] = [None] * len(nodes)
    module_rows: list[ModuleRow] = []
    call_rows: list[CallRow] = []
    if modules is not None:
        paths, calls, module_rows, call_rows = _add_modules(
            modules, nodes, kinds, columns
        )
    found = _Found(columns, list(map(shown.__getitem__, types)), paths, calls)
    return SavedMemory._of_found(found, module_rows, call_rows)


@runs_no_user_code
def saved_memory(
    tensor: torch.Tensor | Node, modules: ModuleTrace | None = None
) -> SavedMemory:
    """The bytes the graph behind ``tensor`` saved for backward, by node and module.

    Parameters
    ----------
    tensor : torch.Tensor or torch.autograd.graph.Node
        The output (its ``grad_fn`` is the start) or a node.
    modules : ModuleTrace, optional
        From :func:`.track_modules`: adds rows per module (and per call of a
        module called more than once), and names parameters and buffers.

    Returns
    -------
    SavedMemory
        ``.total`` (bytes, each storage once), ``.activations``,
        ``.parameters`` and ``.buffers``; rows ``.nodes``, ``.modules``,
        ``.calls``, ``.storages`` and ``.not_counted``; ``str()`` is a table.
        A parameter is one of the trace's or any leaf that gets a gradient.

    Raises
    ------
    TypeError
        If ``tensor`` is neither a tensor nor a node, or ``modules`` is not
        a ``ModuleTrace`` or None.

    Examples
    --------
    >>> from autograd_notes import track_modules
    >>> model = torch.nn.Sequential(
    ...     torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)
    ... )
    >>> with track_modules(model) as trace:
    ...     loss = model(torch.ones(2, 4)).sum()
    >>> report = saved_memory(loss, modules=trace)
    >>> report.total, report.activations, report.parameters
    (160, 96, 64)
    >>> print(report)
    saved: 160 B in 3 storages
      activations 96 B, parameters 64 B, buffers 0 B
    <BLANKLINE>
    module                 nodes  activations   parameters    buffers  calls
    (model)                    9         96 B         64 B        0 B
      0                        4         32 B          0 B        0 B
      1                        1         64 B          0 B        0 B
      2                        4          0 B         64 B        0 B
    (outside the model)        1          0 B          0 B        0 B
    <BLANKLINE>
    parameters and buffers saved:
      2.weight  (8, 2) float32  64 B  (counted at node [1])
    """
    func = "saved_memory"
    if isinstance(tensor, torch.Tensor | Node):
        root = as_node(tensor, func)
    else:
        expected = "a torch.Tensor or a torch.autograd.graph.Node"
        raise TypeError(arg_error(func, "tensor", expected, type_name(tensor)))
    if modules is not None and not isinstance(modules, ModuleTrace):
        expected = "a ModuleTrace (from track_modules()) or None"
        raise TypeError(arg_error(func, "modules", expected, type_name(modules)))
    if root is None:
        return SavedMemory()
    with gc_paused():  # many small objects: no scans of the graph meanwhile
        return saved_report(walk(root).nodes, modules)
