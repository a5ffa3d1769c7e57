"""The bytes a backward graph keeps alive in what its nodes saved.

:func:`.saved_memory` reads every value saved for backward the way
``autograd_notes.saved`` does: through the raw ``SavedTensor``, never
unpacked, so no unpack hook, checkpointed forward or ``__torch_function__``
runs. Each storage counts once, at its ``untyped_storage()`` address and
size (a view keeps its whole storage alive; storages that overlap count
their union once). Nothing is counted for a value a
``saved_tensors_hooks`` pack hook holds, one a checkpoint recomputes, or
one on the meta device: they are listed as not counted. The inputs a
non-reentrant checkpoint keeps to recompute from are counted, at a node of
the checkpointed region (found in its unpack hook; a torch that keeps them
elsewhere leaves them out). Custom ``Function`` nodes also count tensors kept
as ``ctx`` attributes. A parameter is one of the trace's, or a leaf that
gets a gradient; a buffer is one of the trace's.

Attribution, so that the sums hold: a storage saved by several nodes is
counted at the one made first in the forward (lowest sequence number, then
walk order); the others show it as ``shared``. Node rows add up to the
total, a module's row is the sum of the nodes its forward made (its
submodules' included), and the model's row plus the row outside the model
is the total again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes._storages import Saves, has_storage
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

_KINDS = ("activation", "parameter", "buffer")


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


@dataclass
class SavedMemory:
    """What :func:`.saved_memory` found; ``str()`` prints it as a table.

    Rows: ``nodes``, each node that saved anything; ``modules`` (with a
    trace), each module with nodes, its parents, and the nodes outside the
    model; ``calls``, each call of a module called more than once;
    ``storages``, each storage counted; ``not_counted``, the values left out.
    """

    nodes: list[NodeRow] = field(default_factory=list)
    modules: list[ModuleRow] = field(default_factory=list)
    calls: list[CallRow] = field(default_factory=list)
    storages: list[StorageRow] = field(default_factory=list)
    not_counted: list[NotCounted] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Bytes of every storage counted, each once."""
        return sum(row.nbytes for row in self.storages)

    def _of(self, kind: str) -> int:
        return sum(row.nbytes for row in self.storages if row.kind == kind)

    @property
    def activations(self) -> int:
        """Bytes of the activations counted."""
        return self._of("activation")

    @property
    def parameters(self) -> int:
        """Bytes of the parameters counted."""
        return self._of("parameter")

    @property
    def buffers(self) -> int:
        """Bytes of the buffers counted."""
        return self._of("buffer")

    def module(self, path: str | None) -> ModuleRow | None:
        """The row of module ``path`` (``""``: the model), if it has one."""
        return next((row for row in self.modules if row.path == path), None)

    def table(self, depth: int | None = None) -> str:
        """The report as text; ``depth`` keeps modules at most that deep."""
        return "\n".join(_table_lines(self, depth))

    def __str__(self) -> str:
        return self.table()


def _depth(path: str | None) -> int:
    return -1 if path is None else 0 if path == "" else path.count(".") + 1


def _table_lines(report: SavedMemory, depth: int | None) -> Iterator[str]:
    kinds = [report.activations, report.parameters, report.buffers]
    parts = ", ".join(
        f"{kind}s {format_bytes(b)}" for kind, b in zip(_KINDS, kinds, strict=True)
    )
    count = len(report.storages)
    noun = "storage" if count == 1 else "storages"
    yield f"saved: {format_bytes(report.total)} in {count} {noun}"
    yield f"  {parts}"
    if report.not_counted:
        reasons: dict[str, int] = {}
        for item in report.not_counted:
            reasons[item.reason] = reasons.get(item.reason, 0) + 1
        found = "; ".join(f"{reason}: {n}" for reason, n in reasons.items())
        yield f"not counted: {len(report.not_counted)} saved values ({found})"
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
    named = [row for row in report.storages if row.kind != "activation"]
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


def _natural(path: str | None) -> tuple[int, list[tuple[int, int | str]]]:
    """Sort key: the model, its modules (``h.2`` before ``h.10``), then outside."""
    if path is None:
        return 2, []
    parts = path.split(".") if path else []
    return (0 if not parts else 1), [
        (0, int(p)) if p.isdigit() else (1, p) for p in parts
    ]


def _ancestors(path: str) -> Iterator[str]:
    """``""``, ``"h"``, ``"h.0"`` for ``"h.0"``."""
    yield ""
    if path:
        parts = path.split(".")
        for end in range(1, len(parts) + 1):
            yield ".".join(parts[:end])


def _count(
    nodes: list[Node], kinds: list[str], modules: ModuleTrace | None
) -> _Counted:
    """Each storage's bytes, kind and node; what each node counts and shares."""
    state = _state_of(modules, nodes, kinds)
    found = Saves()
    found.read(nodes)
    counted: dict[int, list[int]] = {}  # node -> bytes per kind
    shared: dict[int, int] = {}
    storages = []
    dtypes: dict[torch.dtype, str] = {}
    for members, size in found.groups():
        if len(members) == 1:
            saves = found.saves[members[0]]
        else:
            saves = [save for key in members for save in found.saves[key]]
        at, tensor = saves[0]
        if len(saves) > 1:  # the node made first in the forward counts it
            at, tensor = min(saves, key=lambda s: (nodes[s[0]]._sequence_nr(), s[0]))
            for j in {save[0] for save in saves} - {at}:
                shared[j] = shared.get(j, 0) + size
        kind, name = "activation", ""
        if len(members) == 1:
            kind, name = state.get(members[0][:2], (kind, name))
        elif state:
            named = [state[k[:2]] for k in members if k[:2] in state]
            kind, name = min(named, key=_kind_order, default=(kind, name))
        counted.setdefault(at, [0, 0, 0])[_KINDS.index(kind)] += size
        dtype = tensor.dtype
        text = dtypes.get(dtype)
        if text is None:
            text = dtypes[dtype] = str(dtype).removeprefix("torch.")
        shape = tuple(tensor.shape)
        device = members[0][0]
        storages.append(
            StorageRow(kind, name, size, at, len(saves), shape, text, device)
        )
    storages.sort(key=attrgetter("node"))  # ties (rare) by the rest, below
    _sort_ties(storages)
    not_counted = [NotCounted(*item) for item in found.skipped]
    return counted, shared, storages, not_counted


def _kind_order(state: tuple[str, str]) -> int:
    return _KINDS.index(state[0])


def _sort_ties(storages: list[StorageRow]) -> None:
    """Order the rows of one node by bytes (most first), shape, kind, name, saves."""
    start = 0
    for end in range(1, len(storages) + 1):
        if end < len(storages) and storages[end].node == storages[start].node:
            continue
        if end - start > 1:
            storages[start:end] = sorted(
                storages[start:end],
                key=lambda r: (-r.nbytes, r.shape, r.kind, r.name, r.saves),
            )
        start = end


# bytes per kind at each node, bytes shared by each node, storages, not counted
_Counted = tuple[
    dict[int, list[int]], dict[int, int], list[StorageRow], list[NotCounted]
]
_Calls = list[list[tuple[str, int]]]


def _chains(modules: ModuleTrace, nodes: list[Node]) -> _Calls:
    """The calls around each node, innermost first, as ``(path, call index)``."""
    calls = modules.calls()
    made: dict[int, list[tuple[str, int]]] = {-1: []}
    for c in range(len(calls.paths)):  # a parent call starts before its children
        made[c] = [(calls.paths[c], calls.call_index[c]), *made[calls.parents[c]]]
    return [made[c] for c in modules.calls_of(nodes)]


def _add_modules(
    report: SavedMemory,
    paths: list[str | None],
    chains: _Calls,
    counted: dict[int, list[int]],
) -> None:
    """Add a row per module (its subtree) and per call of a repeated module."""
    sums: dict[str | None, list[int]] = {}  # path -> nodes, bytes per kind
    calls: dict[str, set[int]] = {}
    per_call: dict[tuple[str, int], list[int]] = {}  # nodes, bytes
    for i, path in enumerate(paths):
        here = counted.get(i, [0, 0, 0])
        keys: Iterable[str | None] = (None,) if path is None else _ancestors(path)
        for key in keys:
            row = sums.setdefault(key, [0, 0, 0, 0])
            row[0] += 1
            for k in range(3):
                row[k + 1] += here[k]
        for call in set(chains[i]):
            calls.setdefault(call[0], set()).add(call[1])
            entry = per_call.setdefault(call, [0, 0])
            entry[0] += 1
            entry[1] += sum(here)
    for path in sorted(sums, key=_natural):
        nodes, a, p, b = sums[path]
        made = 0 if path is None else len(calls.get(path, ()))
        report.modules.append(ModuleRow(path, made, nodes, a, p, b))
    for (path, k), (count, total) in sorted(
        per_call.items(), key=lambda item: (_natural(item[0][0]), item[0][1])
    ):
        if len(calls[path]) > 1:
            report.calls.append(CallRow(path, k, count, total))


def saved_report(nodes: list[Node], modules: ModuleTrace | None) -> SavedMemory:
    """:func:`saved_memory` of a graph walked already (``nodes``, in walk order)."""
    types = list(map(type, nodes))
    names_of = {kind: kind.__name__ for kind in set(types)}
    kinds = list(map(names_of.__getitem__, types))
    counted, shared, storages, not_counted = _count(nodes, kinds, modules)
    skipped: dict[int, int] = {}
    for item in not_counted:
        skipped[item.node] = skipped.get(item.node, 0) + 1
    paths: list[str | None] = [None] * len(nodes)
    chains: _Calls = [[]] * len(nodes)
    if modules is not None:
        chains = _chains(modules, nodes)
        paths = [  # a node a call made is in that call's module
            chain[0][0] if chain else modules.path_of(fn) if kind == LEAF else None
            for chain, fn, kind in zip(chains, nodes, kinds, strict=True)
        ]
    report = SavedMemory(storages=storages, not_counted=not_counted)
    shown = {kind: visible(kind) for kind in names_of.values()}
    rows = report.nodes
    none = [0, 0, 0]
    for i in range(len(nodes)):
        if i not in counted and i not in shared and i not in skipped:
            continue
        a, p, b = counted.get(i, none)
        call = chains[i][0][1] if chains[i] else None
        row = NodeRow(
            i, shown[kinds[i]], paths[i], call, a, p, b, shared.get(i, 0),
            skipped.get(i, 0),
        )  # fmt: skip
        rows.append(row)
    if modules is not None:
        _add_modules(report, paths, chains, counted)
    return report


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
