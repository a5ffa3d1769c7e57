"""The data of :func:`.to_html`'s page: one schema, written and read here.

The page holds one JSON object (``<script id="an-data">``), a
:class:`PageData`. Its records (an item, a node type, a saved value, ...)
are written as JSON arrays, to keep a page of a million nodes small; the
field names of each record type are in the page too (``"fields"``, from
:data:`FIELDS`), and the script's one decoder (``decode`` in
``_html/view.js``) reads every record by name through them. Lists of small
integers are packed (``autograd_notes.runs``).

Node ids of the page: the nodes in no fold, in walk order, then each
fold's calls, ``size`` nodes each, in the order the fold made them. A fold
is stored once, as a template call (``autograd_notes.fold``: its calls have
the same kinds, links inside the call and saved shapes), with what differs
per call: the call's module path and index, its links from outside, and a
node path that breaks the pattern.

:func:`page_data` writes the data; :func:`read_page` reads a page back into
every node's kind, owner item, inputs, module path and saved values, as the
script decodes them (the tests hold the two readers to the same answers).
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import dataclass
from typing import Any, NamedTuple, TypedDict

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes._torch import sequence_nr
from autograd_notes.diff import GraphDiff
from autograd_notes.fold import Fold
from autograd_notes.labels import Names, dtype, format_bytes, shape, short_leaf, visible
from autograd_notes.page_items import Item, Tree
from autograd_notes.runs import ALPHABET, by_slot, pack, steps, unpack
from autograd_notes.saved import saved_shapes
from autograd_notes.trace import ModuleTrace
from autograd_notes.view import View
from autograd_notes.walk import LEAF, leaf_of
from autograd_notes.words import Text, english

__all__ = ["FIELDS", "PageData", "PageGraph", "page_data", "read_page"]

Packed = list[int] | dict[str, list[Any]]  # runs.pack's lists of small integers


class CallItem(NamedTuple):
    """An item inside a fold's template call; the call's own is ``parent`` -1.

    ``path``, and ``title`` where it is a module path, follow the call's
    module path (``.0``).
    """

    parent: int
    kind: str
    title: Text
    note: Text
    path: str


class NodeType(NamedTuple):
    """What nodes in no fold share: indices into ``kinds``, ``paths``, ``saved``."""

    kind: int
    degree: int  # how many inputs
    path: int
    saved: int


class SavedValue(NamedTuple):
    """A tensor a node saved for backward, in its details panel."""

    shape: list[int]
    dtype: str  # "float32"
    bytes: int


class PathFix(NamedTuple):
    """Node ``position`` of fold call ``call`` has module ``path`` (an index)."""

    call: int
    position: int
    path: int


class NodeName(NamedTuple):
    """The names of a node's tensors (a leaf's, or a named output's)."""

    node: int
    text: Text


class ShownPath(NamedTuple):
    """Module path ``path`` (an index) as shown: unprintables escaped."""

    path: int
    text: str


class BoxSize(NamedTuple):
    """The boxes of the layout, in pixels (the static SVG and the script)."""

    char: int
    height: int
    gap_x: int
    gap_y: int
    max_chars: int  # a longer text is cut, with "…"


class NodeCounts(NamedTuple):
    before: int
    after: int
    added: int
    removed: int


class SavedTotals(NamedTuple):
    before: str  # "1.5 MiB"
    after: str
    change: str  # "+512 B", "-1.5 MiB"


class ModuleDiff(NamedTuple):
    """A module whose saved bytes or node count changed."""

    before: str
    after: str
    change: str
    nodes_before: int
    nodes_after: int


class RemovedNodes(NamedTuple):
    module: str | None  # None: outside modules
    call: int | None
    kind: str
    nodes: int


RECORDS = (Item, CallItem, NodeType, SavedValue, PathFix, NodeName, ShownPath,
           BoxSize, NodeCounts, SavedTotals, ModuleDiff, RemovedNodes)  # fmt: skip
FIELDS = {record.__name__: list(record._fields) for record in RECORDS}


class FoldData(TypedDict):
    """One fold: its template call, and what differs per call."""

    item: int  # the fold's item
    calls: int
    size: int  # nodes per call
    paths: Packed  # per call: module path (index)
    call_index: Packed  # per call: which call of the module it is
    kind: list[int]  # per node of a call
    saved: list[int]
    rel: list[str]  # module path after the call's
    owner: list[int]  # a CallItem, or -1: the call's own item
    items: list[CallItem]
    degree: list[int]
    inputs: list[int]  # per link: a position in the call, or -1 - outside link
    outside: list[Packed]  # per outside link: its node, per call
    fixes: list[PathFix]


class DiffData(TypedDict):
    """What changed since ``diff_graphs``'s ``before``."""

    nodes: NodeCounts
    saved: SavedTotals
    modules: dict[str, ModuleDiff]
    items: dict[str, str]  # a top-level item's change in saved bytes
    added: Packed  # page ids of the nodes added
    removed: list[RemovedNodes]


class PageData(TypedDict, total=False):
    """The page's data (``diff`` only with one)."""

    fields: dict[str, list[str]]  # FIELDS
    title: str
    box: BoxSize
    spread: int  # a box opens to at most this many boxes
    alphabet: str  # runs.pack writes small values as these
    tops: int  # the first items are the top level
    root: int  # the root's page id
    anomaly: bool  # else: which nodes a backward made is unknown
    items: list[Item]
    walk: Packed  # per node in no fold: its walk index
    node_type: Packed  # per node in no fold: a NodeType
    node_types: list[NodeType]
    owner: Packed  # per node in no fold: its item (-1: none)
    inputs: list[Packed]  # offsets to the first inputs, the second inputs, ...
    folds: list[FoldData]
    names: list[NodeName]
    kinds: list[str]
    paths: list[str | None]
    shown: list[ShownPath]
    saved: list[list[SavedValue]]
    diff: DiffData


SPREAD = 50  # a fold opens to at most this many boxes (calls, or boxes of calls)
BOX = BoxSize(char=7, height=28, gap_x=16, gap_y=44, max_chars=48)


def _saved(shapes: tuple[object, ...]) -> list[SavedValue]:
    """The tensors among ``saved_shapes``, each a SavedValue."""
    rows: list[SavedValue] = []
    for item in shapes:
        if not isinstance(item, tuple) or len(item) != 2:
            continue
        shape, dtype = item
        if not isinstance(dtype, torch.dtype) or not isinstance(shape, torch.Size):
            continue
        size = shape.numel() * dtype.itemsize
        rows.append(SavedValue(list(shape), str(dtype).removeprefix("torch."), size))
    return rows


class _Tables:
    """Tables the page shares: node kinds, module paths, saved signatures."""

    def __init__(self) -> None:
        self.kinds: dict[str, int] = {}
        self.paths: dict[str | None, int] = {}
        self.saved: dict[str, int] = {}
        self.rows: list[list[SavedValue]] = []
        self.shapes: dict[tuple[object, ...], int] = {}  # saved_shapes -> saved

    def kind(self, kind: str) -> int:
        return self.kinds.setdefault(kind, len(self.kinds))

    def path(self, path: str | None) -> int:
        return self.paths.setdefault(path, len(self.paths))

    def save(self, node: Node) -> int:
        shapes = saved_shapes(node)
        found = self.shapes.get(shapes)
        if found is None:
            rows = _saved(shapes)
            found = self.saved.setdefault(json.dumps(rows), len(self.saved))
            if found == len(self.rows):
                self.rows.append(rows)
            self.shapes[shapes] = found
        return found


def _fold_data(
    view: View, tree: Tree, item: int, fold: Fold, ids: list[int], tables: _Tables
) -> FoldData:
    """One fold: a template call (its nodes, links, items), what differs per call."""
    graph, module_of = view.graph, tree.module_of
    starts, inputs = graph.starts, graph.inputs
    first, base = fold.nodes[0], fold.paths[0]
    template = tree.template(base, list(first))
    position = {i: p for p, i in enumerate(first)}
    rels = [(module_of[i] or "")[len(base) :] for i in first]
    codes: list[int] = []
    outside: list[tuple[int, int]] = []  # (position, slot) of links out of the call
    for p, i in enumerate(first):
        for s, k in enumerate(inputs[starts[i] : starts[i + 1]]):
            q = position.get(k)
            if q is None:
                outside.append((p, s))
                q = -len(outside)
            codes.append(q)
    targets: list[list[int]] = [[] for _ in outside]
    fixes: list[PathFix] = []
    expected: dict[str, list[str | None]] = {}
    for call, members in enumerate(fold.nodes):
        for r, (p, s) in enumerate(outside):
            targets[r].append(ids[inputs[starts[members[p]] + s]])
        path = fold.paths[call]
        want = expected.get(path)
        if want is None:
            want = expected[path] = [path + rel for rel in rels]
        have = list(map(module_of.__getitem__, members))
        if have != want:
            fixes.extend(
                PathFix(call, p, tables.path(h))
                for p, h in enumerate(have)
                if h != want[p]
            )
    shown_base = len(visible(base))
    items = [
        CallItem(row.parent, row.kind,
                 row.title[shown_base:] if isinstance(row.title, str) else row.title,
                 row.note, str(row.path)[len(base) :])
        for row in template.rows
    ]  # fmt: skip
    return FoldData(
        item=item,
        calls=len(fold.nodes),
        size=len(first),
        paths=steps([tables.path(p) for p in fold.paths]),
        call_index=steps(fold.call_index),
        kind=[tables.kind(view.kinds[i]) for i in first],
        saved=[tables.save(graph.nodes[i]) for i in first],
        rel=rels,
        owner=[template.owner.get(i, -1) for i in first],
        items=items,
        degree=[starts[i + 1] - starts[i] for i in first],
        inputs=codes,
        outside=[steps(column) for column in targets],
        fixes=fixes,
    )


def _page_ids(tree: Tree, nodes: int) -> tuple[list[int], list[int]]:
    """Page id per walk index, and the walk indices of the nodes in no fold."""
    ids = [-1] * nodes
    folded = sum(len(f.nodes) * len(f.nodes[0]) for _, f in tree.opened)
    base = nodes - folded
    for _, fold in tree.opened:
        for members in fold.nodes:
            for offset, i in enumerate(members):
                ids[i] = base + offset
            base += len(members)
    real = [i for i in range(nodes) if ids[i] < 0]
    for v, i in enumerate(real):
        ids[i] = v
    return ids, real


def _node_text(view: View, i: int, names: Names) -> Text:
    """``a: (2,) float32``, ``leaf: (2,) float32`` or ``grad_fn of y``, or ""."""
    fn = view.graph.nodes[i]
    if view.kinds[i] == LEAF:
        leaf = leaf_of(fn)
        if leaf is None:
            return ""
        if id(leaf) in names.leaves:
            return short_leaf(leaf, names, ": ")
        return [[("leaf", f"{shape(leaf)} {dtype(leaf)}")]]
    named = names.outputs.get(fn)
    if not named:
        return ""
    return [[("gradFnOf", ", ".join(visible(name) for name, _ in named))]]


def _names(view: View, names: Names, ids: list[int], real: int) -> list[NodeName]:
    """Leaves' and named outputs' texts, by page id."""
    found: list[NodeName] = []
    for i, fn in enumerate(view.graph.nodes):
        folded = ids[i] >= real
        if (view.kinds[i] == LEAF and not folded) or fn in names.outputs:
            text = _node_text(view, i, names)
            if text:
                found.append(NodeName(ids[i], text))
    return sorted(found, key=lambda name: name.node)


def page_data(
    view: View, names: Names, tree: Tree, *, title: str, tops: int
) -> tuple[PageData, list[int]]:
    """The page's data, and the page id of every node (by walk index)."""
    graph = view.graph
    ids, real = _page_ids(tree, len(graph.nodes))
    tables = _Tables()
    starts, inputs, fns = graph.starts, graph.inputs, graph.nodes
    module_of = tree.module_of
    kinds, save = view.kinds, tables.save
    types: dict[NodeType, int] = {}
    of_type = [
        types.setdefault(
            NodeType(tables.kind(kinds[i]), starts[i + 1] - starts[i],
                     tables.path(module_of[i]), save(fns[i])),
            len(types),
        )
        for i in real
    ]  # fmt: skip
    offsets = [
        ids[inputs[k]] - ids[i] for i in real for k in range(starts[i], starts[i + 1])
    ]
    degrees = [starts[i + 1] - starts[i] for i in real]
    owner = tree.owner.get
    folds = [_fold_data(view, tree, item, f, ids, tables) for item, f in tree.opened]
    data = PageData(
        fields=FIELDS,
        title=title,
        box=BOX,
        spread=SPREAD,
        alphabet=ALPHABET,
        tops=tops,
        root=ids[0],
        anomaly=view.anomaly,
        items=tree.rows,
        walk=pack(real),
        node_type=pack(of_type),
        node_types=list(types),
        owner=pack([owner(i, -1) for i in real]),
        inputs=[pack(column) for column in by_slot(offsets, degrees)],
        folds=folds,
        names=_names(view, names, ids, len(real)),
        kinds=list(tables.kinds),
        paths=list(tables.paths),
        shown=[
            ShownPath(k, visible(p))
            for p, k in tables.paths.items()
            if p and visible(p) != p
        ],
        saved=tables.rows,
    )
    return data, ids


def signed(count: int) -> str:
    """``count`` bytes with its sign: ``+1.5 KiB``, ``-512 B``, ``0 B``."""
    return ("+" if count > 0 else "-" if count < 0 else "") + format_bytes(abs(count))


def diff_data(
    view: View, tree: Tree, diff: GraphDiff, modules: ModuleTrace | None,
    ids: list[int],
) -> DiffData:  # fmt: skip
    """What the page shows of ``diff``: added nodes (page ids), module changes.

    The nodes of one key (module path, call index, kind) are interchangeable:
    where the key has more nodes than before, the last ones made are marked.
    """
    nodes = view.graph.nodes
    if diff.nodes_after != len(nodes):
        expected = f"diff_graphs(..., after) of this graph ({len(nodes):,} nodes)"
        actual = f"a diff of a graph of {diff.nodes_after:,} nodes"
        raise ValueError(arg_error("to_html", "diff", expected, actual))
    more = {(c.module, c.call, c.kind): c.change for c in diff.nodes if c.change > 0}
    added: list[int] = []
    if more:
        index = modules.calls().call_index if modules else []
        made_by = modules.calls_of(nodes) if modules else [-1] * len(nodes)
        members: dict[tuple[str | None, int | None, str], list[int]] = {}
        for i, kind in enumerate(view.kinds):
            c = made_by[i]
            key = (tree.module_of[i], index[c] if c >= 0 else None, kind)
            if key in more:
                members.setdefault(key, []).append(i)
        for key, found in members.items():
            found.sort(key=lambda i: sequence_nr(nodes[i]))
            added.extend(ids[i] for i in found[-more[key] :])
    rows = {row.path: row for row in diff.modules if row.path is not None}
    changed = {
        path: ModuleDiff(format_bytes(row.bytes_before), format_bytes(row.bytes_after),
                         signed(row.change), row.nodes_before, row.nodes_after)
        for path, row in rows.items()
        if row.change or row.nodes_before != row.nodes_after
    }  # fmt: skip
    folds = dict(tree.opened)
    notes: dict[str, str] = {}
    for i, item in enumerate(tree.rows):
        fold = folds.get(i)
        paths = (
            set(fold.paths) if fold else {item.path} if item.path is not None else set()
        )
        change = sum(rows[p].change for p in paths if p in rows)
        if change:
            notes[str(i)] = signed(change)
    total = diff.after.total - diff.before.total
    return DiffData(
        nodes=NodeCounts(diff.nodes_before, diff.nodes_after, diff.added, diff.removed),
        saved=SavedTotals(format_bytes(diff.before.total),
                          format_bytes(diff.after.total), signed(total)),
        modules=changed,
        items=notes,
        added=steps(sorted(added)),
        removed=[RemovedNodes(c.module, c.call, c.kind, -c.change)
                 for c in diff.nodes if c.change < 0],
    )  # fmt: skip


# -- Reading a page back ------------------------------------------------------


@dataclass
class PageGraph:
    """A page's graph as the script decodes it, by page id.

    ``items``: the page's items, then those the script makes (the calls of
    folds and boxes of calls, boxes of nodes), with its English texts.
    """

    data: dict[str, Any]  # the page's JSON object as it is
    items: list[Item]
    walk: list[int]  # walk index of each node in no fold
    kind: list[str]
    owner: list[int]
    module: list[str | None]
    saved: list[list[SavedValue]]
    inputs: list[list[int]]
    diff: DiffData | None  # its records read, "added" unpacked


def _page_json(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="an-data"( data-deflate)?>'
                      r"(.*?)</script>", page, re.S)  # fmt: skip
    if found is None:
        expected = "a page made by to_html (its data is missing)"
        raise ValueError(arg_error("read_page", "page", expected, "a page without it"))
    text = found.group(2)
    if found.group(1):
        text = zlib.decompress(base64.b64decode(text)).decode("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _span(count: int, spread: int) -> int:
    """Calls or nodes per box at the first level, as the script splits them."""
    span = 1
    while -(-count // span) > spread:
        span *= spread
    return span


Box = tuple[int, int, int, int]  # parent item, first, end, calls or nodes per child


def _children(stack: list[Box], parent: int, lo: int, hi: int, span: int) -> None:
    for a in range(-(-(hi - lo) // span) - 1, -1, -1):
        stack.append((parent, lo + a * span, min(hi, lo + (a + 1) * span), span))


def _open_calls(
    data: dict[str, Any], fold: dict[str, Any], items: list[Item]
) -> list[int]:
    """Append a fold's call items (in boxes of calls); each call's item."""
    paths, index, spread = (
        unpack(fold["paths"]),
        unpack(fold["call_index"]),
        data["spread"],
    )
    found = [0] * fold["calls"]
    stack: list[Box] = []
    _children(stack, fold["item"], 0, fold["calls"], _span(fold["calls"], spread))
    while stack:
        parent, lo, hi, span = stack.pop()
        path = data["paths"][paths[lo]]
        shown = _shown(data, paths[lo])
        if span == 1:
            found[lo] = call = len(items)
            call_title = f"{shown or 'the model'} (call {index[lo]:,})"
            note = f"call: {fold['size']:,} nodes"
            items.append(Item(parent, "call", "", call_title, note, path))
            for row in map(CallItem._make, fold["items"]):
                up = call if row.parent < 0 else call + 1 + row.parent
                title = shown + row.title if isinstance(row.title, str) else row.title
                item = Item(up, row.kind, "", title, row.note, path + row.path)
                items.append(_english(item))
            continue
        _children(stack, len(items), lo, hi, span // spread)
        last = _shown(data, paths[hi - 1])
        if shown == last:
            what = f"calls {index[lo]:,}–{index[hi - 1]:,} of {shown or 'the model'}"
        else:
            what = f"{shown or 'the model'}–{last or 'the model'}"
        items.append(Item(parent, "calls", "", what, f"{hi - lo:,} calls", None))
    return found


def _open_stretches(
    data: dict[str, Any], items: list[Item], owner: list[int], walk: list[int]
) -> None:
    """Open each box of many nodes into boxes of nodes, level by level."""
    members: dict[int, list[int]] = {}
    for n, item in enumerate(owner):
        if item >= 0 and items[item].kind == "nodes":
            members.setdefault(item, []).append(n)
    spread = data["spread"]
    for item, nodes in members.items():
        span = _span(len(nodes), spread)
        if span == 1:
            continue
        stack: list[Box] = []
        _children(stack, item, 0, len(nodes), span)
        while stack:
            parent, lo, hi, span = stack.pop()
            box = len(items)
            if span > spread:
                _children(stack, box, lo, hi, span // spread)
            else:
                for m in range(lo, hi):
                    owner[nodes[m]] = box
            title = f"nodes {walk[nodes[lo]]:,}–{walk[nodes[hi - 1]]:,}"
            items.append(Item(parent, "nodes", "", title, f"{hi - lo:,} nodes", None))


def _english(item: Item) -> Item:
    """``item`` with its words said in English, as the script says them."""
    return item._replace(title=english(item.title), note=english(item.note))


def _shown(data: dict[str, Any], path: int) -> str:
    for index, text in data["shown"]:
        if index == path:
            return str(text)
    return str(data["paths"][path])


def read_page(page: object) -> PageGraph:
    """Every node and item of a page from :func:`.to_html`, as the script has them.

    >>> from autograd_notes import to_html
    >>> a = torch.ones(2, requires_grad=True)
    >>> graph = read_page(to_html((a * 2).sum()).html)
    >>> graph.kind, graph.inputs
    (['SumBackward0', 'MulBackward0', 'AccumulateGrad'], [[1], [2], []])
    """
    if not isinstance(page, str):
        raise TypeError(arg_error("read_page", "page", "a str", type_name(page)))
    data = _page_json(page)
    kinds, paths, saved = data["kinds"], data["paths"], data["saved"]
    types = [NodeType._make(data["node_types"][t]) for t in unpack(data["node_type"])]
    columns = [unpack(column) for column in data["inputs"]]
    taken = [0] * len(columns)
    inputs: list[list[int]] = []
    for n, t in enumerate(types):  # each node's first input, second input, ...
        inputs.append([n + columns[slot][taken[slot]] for slot in range(t.degree)])
        for slot in range(t.degree):
            taken[slot] += 1
    items = [_english(Item._make(row)) for row in data["items"]]
    owner = unpack(data["owner"])
    kind = [kinds[t.kind] for t in types]
    module: list[str | None] = [paths[t.path] for t in types]
    values = [[SavedValue._make(v) for v in rows] for rows in saved]
    saved_of = [values[t.saved] for t in types]
    base = len(types)
    for fold in data["folds"]:
        calls = _open_calls(data, fold, items)
        at, outside = unpack(fold["paths"]), [unpack(o) for o in fold["outside"]]
        fixed = {
            (f.call, f.position): paths[f.path]
            for f in map(PathFix._make, fold["fixes"])
        }
        for call in range(fold["calls"]):
            path, k = paths[at[call]], 0
            for p in range(fold["size"]):
                kind.append(kinds[fold["kind"][p]])
                up = fold["owner"][p]
                owner.append(calls[call] if up < 0 else calls[call] + 1 + up)
                module.append(fixed.get((call, p), path + fold["rel"][p]))
                saved_of.append(values[fold["saved"][p]])
                codes = fold["inputs"][k : k + fold["degree"][p]]
                k += fold["degree"][p]
                inputs.append(
                    [base + c if c >= 0 else outside[-1 - c][call] for c in codes]
                )
            base += fold["size"]
    walk = unpack(data["walk"])
    _open_stretches(data, items, owner, walk)
    return PageGraph(data, items, walk, kind, owner, module, saved_of, inputs,
                     _read_diff(data.get("diff")))  # fmt: skip


def _read_diff(diff: dict[str, Any] | None) -> DiffData | None:
    if diff is None:
        return None
    modules = {path: ModuleDiff._make(row) for path, row in diff["modules"].items()}
    return DiffData(
        nodes=NodeCounts._make(diff["nodes"]),
        saved=SavedTotals._make(diff["saved"]),
        modules=modules,
        items=diff["items"],
        added=unpack(diff["added"]),
        removed=[RemovedNodes._make(row) for row in diff["removed"]],
    )
