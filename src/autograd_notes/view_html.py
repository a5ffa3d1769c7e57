"""An interactive view of the backward graph, in one self-contained HTML file.

:func:`.to_html` writes the view's entries (``autograd_notes.view``: with a
trace, the modules at depth 1 and the folds) as the top level, and every
node below them as data: a click opens a module, a fold or one call of a
fold. The script (package data: ``_html/view.js``, after its words in
``_html/view_text.js``) lays out only what is shown, with the layered
layout ``draw_graph`` uses, ported to JavaScript (no library: it is small,
and the package stays one thing to audit). The page fetches nothing; the
same bytes come out on every run; a static SVG of the top level stands in
without JavaScript (``<noscript>``, and :attr:`.GraphHtml.svg` for a PDF).
"""

from __future__ import annotations

import base64
import html
import json
import os
import zlib
from collections import Counter
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes._notebook import graph_text, notebook_html
from autograd_notes._torch import sequence_nr
from autograd_notes.diff import GraphDiff
from autograd_notes.fold import Fold, find_folds, folds_to_depth
from autograd_notes.labels import Names, format_bytes, outputs_text, short_leaf, visible
from autograd_notes.page_items import Tree, page_tree
from autograd_notes.runs import (
    ALPHABET,
    by_slot,
    pack,
    steps,
    unpack,
)
from autograd_notes.saved import saved_shapes
from autograd_notes.trace import ModuleTrace
from autograd_notes.view import View, build_view, check_args
from autograd_notes.walk import LEAF, Graph, gc_paused, leaf_of, runs_no_user_code

__all__ = ["GraphHtml", "to_html"]

_SVG_NS = "http://www.w3.org/2000/svg"  # only in GraphHtml.svg, a file of its own
# Box sizes of the layout (pixels), shared with view.js through the data.
_CHAR, _HEIGHT, _GAP_X, _GAP_Y, _MAX_CHARS = 7, 28, 16, 44, 48
_SPREAD = 50  # a fold opens to at most this many boxes (calls, or boxes of calls)
# Page data longer than this many characters is deflated (zlib, level 9) and
# base64'd; view.js inflates it with the browser's DecompressionStream.
DEFLATE_ABOVE = 1_000_000


class GraphHtml:
    """The page :func:`.to_html` made: ``.html`` (the file), ``.svg`` (static).

    Jupyter, JupyterLab, VS Code and Colab show it through
    :meth:`._repr_html_` (in an ``iframe``, so its script stays its own);
    ``repr`` and an untrusted notebook show ``.text``, the tree as
    :func:`.format_graph` prints it.
    """

    html: str
    svg: str
    text: str

    def __init__(self, page: str, svg: str, text: str) -> None:
        self.html, self.svg, self.text = page, svg, text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        """The page in an ``iframe``; when the page is printed, the SVG.

        Class names start with ``autograd-notes-`` (no clash with a
        notebook's own); on paper or PDF, ``@media print`` shows the SVG.
        Where scripts and styles are dropped (an untrusted notebook), the
        text tree and a line saying how to see the view (``_notebook``).
        """
        return notebook_html(self.html, self.svg, self.text)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the page to ``path`` (UTF-8) and return it as a ``Path``."""
        if not isinstance(path, str | os.PathLike):
            expected = "a str or os.PathLike"
            raise TypeError(
                arg_error("GraphHtml.save", "path", expected, type_name(path))
            )
        target = Path(path)
        target.write_text(self.html, encoding="utf-8", newline="\n")
        return target


def _saved(shapes: tuple[object, ...]) -> list[list[object]]:
    """``[shape, dtype, bytes]`` per tensor saved (of ``saved_shapes``)."""
    rows: list[list[object]] = []
    for item in shapes:
        if not isinstance(item, tuple) or len(item) != 2:
            continue
        shape, dtype = item
        if not isinstance(dtype, torch.dtype) or not isinstance(shape, torch.Size):
            continue
        size = shape.numel() * dtype.itemsize
        rows.append([list(shape), str(dtype).removeprefix("torch."), size])
    return rows


class _Tables:
    """Tables the page shares: node kinds, module paths, saved signatures."""

    def __init__(self) -> None:
        self.kinds: dict[str, int] = {}
        self.paths: dict[str | None, int] = {}
        self.saves: dict[str, int] = {}
        self.shapes: dict[tuple[object, ...], int] = {}  # saved_shapes -> save

    def kind(self, kind: str) -> int:
        return self.kinds.setdefault(kind, len(self.kinds))

    def path(self, path: str | None) -> int:
        return self.paths.setdefault(path, len(self.paths))

    def save(self, node: Node) -> int:
        shapes = saved_shapes(node)
        found = self.shapes.get(shapes)
        if found is None:
            text = json.dumps(_saved(shapes))
            found = self.shapes[shapes] = self.saves.setdefault(text, len(self.saves))
        return found


def _fold_data(
    view: View, tree: Tree, item: int, fold: Fold, ids: list[int], tables: _Tables
) -> dict[str, object]:
    """One fold: a template call (its nodes, links and groups), what differs per call.

    The calls of a fold have the same kinds, links inside the call and saved
    shapes (``autograd_notes.fold``), so only the links out of each call, the
    calls' paths and indices (and a node path that breaks the pattern) are
    per call.
    """
    graph, module_of = view.graph, tree.module_of
    starts, inputs = graph.starts, graph.inputs
    first, base = fold.nodes[0], fold.paths[0]
    template = Tree(view, tree.folds, tree.fold_of, stretch=False)
    template.split(-1, base, list(first))
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
    ext: list[list[int]] = [[] for _ in outside]
    fixes: list[list[int]] = []
    expected: dict[str, list[str | None]] = {}
    for j, members in enumerate(fold.nodes):
        for r, (p, s) in enumerate(outside):
            ext[r].append(ids[inputs[starts[members[p]] + s]])
        path = fold.paths[j]
        want = expected.get(path)
        if want is None:
            want = expected[path] = [path + rel for rel in rels]
        have = list(map(module_of.__getitem__, members))
        if have != want:
            fixes.extend(
                [j, p, tables.path(h)] for p, h in enumerate(have) if h != want[p]
            )
    subs = [
        [row[0], row[1], str(row[3])[len(visible(base)) :], row[4],
         str(row[5])[len(base) :]]
        for row in template.rows
    ]  # fmt: skip
    return {
        "item": item,
        "n": len(fold.nodes),
        "m": len(first),
        "at": steps([tables.path(p) for p in fold.paths]),
        "call": steps(fold.call_index),
        "kind": [tables.kind(view.kinds[i]) for i in first],
        "save": [tables.save(graph.nodes[i]) for i in first],
        "rel": rels,
        "owner": [template.owner.get(i, -1) for i in first],
        "subs": subs,
        "degree": [starts[i + 1] - starts[i] for i in first],
        "input": codes,
        "ext": [steps(targets) for targets in ext],
        "fix": fixes,
    }


def _node_data(
    view: View, names: Names, tree: Tree
) -> tuple[dict[str, object], list[int]]:
    """Per node, compact (view.js decodes): real nodes in full, folds by template.

    Node ids of the page: the nodes in no fold, in walk order, then each
    fold's calls, ``m`` nodes each, in the order the fold made them.
    """
    graph = view.graph
    n = len(graph.nodes)
    ids = [-1] * n
    folded = sum(len(f.nodes) * len(f.nodes[0]) for _, f in tree.opened)
    base = n - folded
    for _, fold in tree.opened:
        for members in fold.nodes:
            ids_of = range(base, base + len(members))
            for i, v in zip(members, ids_of, strict=True):
                ids[i] = v
            base += len(members)
    real = [i for i in range(n) if ids[i] < 0]
    for v, i in enumerate(real):
        ids[i] = v
    tables = _Tables()
    starts, inputs, fns = graph.starts, graph.inputs, graph.nodes
    module_of = view.module_of or [None] * n
    kinds, save = view.kinds, tables.save
    types: dict[tuple[str, int, str | None, int], int] = {}  # kind, degree, path, save
    of_type = [
        types.setdefault(
            (kinds[i], starts[i + 1] - starts[i], module_of[i], save(fns[i])),
            len(types),
        )
        for i in real
    ]
    owner = tree.owner.get
    data: dict[str, object] = {
        "walk": pack(real),
        "type": pack(of_type),
        "types": [[tables.kind(k), d, tables.path(p), v] for k, d, p, v in types],
        "owner": pack([owner(i, -1) for i in real]),
        "input": [  # offsets to the first inputs, the second inputs, ...
            pack(column)
            for column in by_slot(
                [
                    ids[inputs[k]] - ids[i]
                    for i in real
                    for k in range(starts[i], starts[i + 1])
                ],
                [starts[i + 1] - starts[i] for i in real],
            )
        ],
    }
    data["folds"] = [
        _fold_data(view, tree, item, fold, ids, tables) for item, fold in tree.opened
    ]
    texts: list[list[object]] = []
    for i in real:
        if kinds[i] == LEAF or fns[i] in names.outputs:
            text = _node_text(view, i, names)
            if text:
                texts.append([ids[i], text])
    if names.outputs:  # a named tensor made inside a folded call
        for i in range(n):
            if ids[i] >= len(real) and graph.nodes[i] in names.outputs:
                texts.append([ids[i], _node_text(view, i, names)])
    data["names"] = sorted(texts, key=lambda t: int(t[0]))  # type: ignore[call-overload]
    data["kinds"] = list(tables.kinds)
    data["paths"] = list(tables.paths)
    data["shown"] = [
        [k, visible(p)] for p, k in tables.paths.items() if p and visible(p) != p
    ]
    data["saves"] = [json.loads(s) for s in tables.saves]
    return data, ids


def _signed(count: int) -> str:
    return ("+" if count > 0 else "-" if count < 0 else "") + format_bytes(abs(count))


def _check_diff(diff: object, modules: ModuleTrace | None) -> GraphDiff | None:
    if diff is None:
        return None
    if not isinstance(diff, GraphDiff):
        expected = "a GraphDiff (from diff_graphs) or None"
        raise TypeError(arg_error("to_html", "diff", expected, type_name(diff)))
    if diff.traced != (modules is not None):
        expected = "a diff made with traces exactly when 'modules' is given"
        actual = "one with traces" if diff.traced else "one without"
        raise ValueError(arg_error("to_html", "diff", expected, actual))
    return diff


def _diff_data(
    view: View, tree: Tree, diff: GraphDiff, modules: ModuleTrace | None,
    ids: list[int],
) -> dict[str, object]:  # fmt: skip
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
        path: [format_bytes(row.bytes_before), format_bytes(row.bytes_after),
               _signed(row.change), row.nodes_before, row.nodes_after]
        for path, row in rows.items()
        if row.change or row.nodes_before != row.nodes_after
    }  # fmt: skip
    folds = dict(tree.opened)
    notes: dict[str, str] = {}
    for i, item in enumerate(tree.rows):
        fold, path = folds.get(i), item[5]
        paths = set(fold.paths) if fold else {path} if isinstance(path, str) else set()
        change = sum(rows[p].change for p in paths if p in rows)
        if change:
            notes[str(i)] = _signed(change)
    removed = [
        [c.module, c.call, c.kind, -c.change] for c in diff.nodes if c.change < 0
    ]
    total = diff.after.total - diff.before.total
    return {
        "nodes": [diff.nodes_before, diff.nodes_after, diff.added, diff.removed],
        "saved": [
            format_bytes(diff.before.total),
            format_bytes(diff.after.total),
            _signed(total),
        ],
        "modules": changed,
        "items": notes,
        "added": steps(sorted(added)),
        "removed": removed,
    }


def _node_text(view: View, i: int, names: Names) -> str:
    fn = view.graph.nodes[i]
    if view.kinds[i] == LEAF:
        leaf = leaf_of(fn)
        return "" if leaf is None else short_leaf(leaf, names, ": ")
    return outputs_text(fn, names, False)


def _width(text: str) -> int:
    return min(len(text), _MAX_CHARS) * _CHAR + 16


def _diff_texts(
    texts: list[str], found: dict[str, Any], tree: Tree, ids: list[int]
) -> list[str]:
    """The top-level texts with what changed, as view.js writes them."""
    added = Counter[int]()
    page_ids = set(unpack(found["added"]))
    if page_ids:
        fold_item = {}
        for item, fold in tree.opened:
            for members in fold.nodes:
                for i in members:
                    fold_item[i] = item
        for i, v in enumerate(ids):
            if v in page_ids:
                item = fold_item.get(i, tree.owner.get(i, -1))
                while item >= 0:
                    added[item] += 1
                    item = int(tree.rows[item][0])  # type: ignore[call-overload]
    shown = []
    for e, text in enumerate(texts):
        change = found["items"].get(str(e))
        text += f"  saved {change}" if change else ""
        shown.append(text + (f"  +{added[e]:,} new" if added[e] else ""))
    return shown


def _static_svg(view: View, shown: list[range], texts: list[str]) -> str:
    """The top level drawn as the script first draws it (see view.js layout).

    Box ``t`` shows the view's entries ``shown[t]``.
    """
    tops = len(shown)
    top_of = [0] * len(view.first)
    for t, entries in enumerate(shown):
        for e in entries:
            top_of[e] = t
    out: list[dict[int, None]] = [{} for _ in range(tops)]
    starts, inputs = view.starts, view.inputs
    for e, t in enumerate(top_of):
        for k in inputs[starts[e] : starts[e + 1]]:
            if top_of[k] != t:
                out[t][top_of[k]] = None
    order = sorted(range(tops), key=lambda t: view.first[shown[t][0]])
    layer = _layers(order, [list(o) for o in out])
    placed: dict[int, list[int]] = {}
    for e in order:
        placed.setdefault(layer[e], []).append(e)
    x = [0.0] * tops
    y = [0.0] * tops
    width = max(
        (sum(_width(texts[e]) + _GAP_X for e in row) for row in placed.values()),
        default=0,
    )
    for r, row in placed.items():
        used = sum(_width(texts[e]) + _GAP_X for e in row)
        left = (width - used) / 2
        for e in row:
            x[e], y[e] = left, r * (_HEIGHT + _GAP_Y)
            left += _width(texts[e]) + _GAP_X
    parts = []
    for a in range(tops):
        for b in out[a]:
            x1, x2 = x[a] + _width(texts[a]) / 2, x[b] + _width(texts[b]) / 2
            parts.append(
                f'<line x1="{x1:g}" y1="{y[a] + _HEIGHT:g}" x2="{x2:g}" '
                f'y2="{y[b]:g}" stroke="#888"/>'
            )
    for e in range(tops):
        text = texts[e]
        short = text if len(text) <= _MAX_CHARS else text[: _MAX_CHARS - 1] + "…"
        parts.append(
            f'<g><title>{html.escape(text)}</title><rect x="{x[e]:g}" y="{y[e]:g}" '
            f'width="{_width(text)}" height="{_HEIGHT}" rx="4" fill="#eef" '
            f'stroke="#446"/><text x="{x[e] + 8:g}" y="{y[e] + 18:g}" '
            f'font-family="monospace" font-size="12">{html.escape(short)}</text></g>'
        )
    height = (max(placed, default=0) + 1) * (_HEIGHT + _GAP_Y)
    return (
        f'<svg role="img" '
        f'aria-label="backward graph, top level" viewBox="-8 -8 {width + 16:g} '
        f'{height + 16:g}" width="{width + 16:g}" height="{height + 16:g}">'
        + "".join(parts)
        + "</svg>"
    )


def _layers(order: list[int], out: list[list[int]]) -> dict[int, int]:
    """Layer of each box: longest path from the first box, sinks at the bottom.

    Back edges of an iterative depth-first search (in ``order``) are ignored,
    so a cycle (a module called twice) still lays out. Same as view.js.
    """
    state: dict[int, int] = {}
    post: list[int] = []
    for start in order:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, 0)]
        while stack:
            v, k = stack[-1]
            if k < len(out[v]):
                stack[-1] = (v, k + 1)
                w = out[v][k]
                if w not in state:
                    state[w] = 1
                    stack.append((w, 0))
                continue
            state[v] = 2
            post.append(v)
            stack.pop()
    topo = post[::-1]
    pos = {v: p for p, v in enumerate(topo)}
    layer = dict.fromkeys(topo, 0)
    for v in topo:
        for w in out[v]:
            if pos[w] > pos[v]:
                layer[w] = max(layer[w], layer[v] + 1)
    bottom = max(layer.values(), default=0)
    for v in topo:
        if not out[v]:
            layer[v] = bottom
    return layer


def _script(text: str) -> str:
    """``text`` safe in ``<script>``: no ``</script>``, ``<!--`` or lone surrogate."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # JSON's \\ud800
    return text.replace("<", "\\u003c").replace(">", "\\u003e")


def _asset(name: str) -> str:
    return (resources.files("autograd_notes") / "_html" / name).read_text("utf-8")


@runs_no_user_code
def to_html(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    modules: ModuleTrace | None = None,
    collapse: bool = True,
    title: str = "Backward graph",
    diff: GraphDiff | None = None,
) -> GraphHtml:
    """An interactive view of the backward graph behind ``root``, in one HTML file.

    The top level is :func:`.format_graph`'s entries, with its numbering:
    with ``modules``, those of ``depth=1`` (folds on). A click opens a module,
    a fold or one call of a fold; a details panel shows a node's saved
    tensors (shape, dtype, bytes), names and module path; search finds
    nodes by kind or module path; drag, wheel, arrows and ``+``/``-`` pan and
    zoom. Nothing is fetched; two runs give the same bytes.

    More than 50 entries in a row outside modules are one box of nodes, as
    are a module's own nodes where it has more than 50: it opens to at most
    50 boxes at a time, level by level, down to the nodes. Nodes repeating
    a pattern are stored once: a chain of a million makes a small page.

    ``diff``, from :func:`.diff_graphs` with ``root``'s graph as ``after``,
    shows what changed: added nodes are marked ``+ new``, each module's box
    says its change in saved bytes (``saved -1.5 MiB``), and the details
    panel lists the removed nodes per module.

    Raises ``TypeError`` for a bad ``root``, ``names``, ``modules``,
    ``collapse``, ``title`` or ``diff``, like :func:`.format_graph`;
    ``ValueError`` for a ``diff`` of another graph.

    >>> a = torch.ones(2, requires_grad=True)
    >>> page = to_html((a * 2).sum(), names={"a": a})
    >>> page.html.startswith("<!DOCTYPE html>"), "http" in page.html.lower()
    (True, False)
    >>> from autograd_notes import diff_graphs
    >>> before, after = (a * 2).sum(), (a * 2).exp().sum()
    >>> page = to_html(after, diff=diff_graphs(before, after))
    >>> '"removed":[]' in page.html, '"nodes":[3,4,1,0]' in page.html
    (True, True)
    """
    node, index = check_args("to_html", root, names, False, collapse, modules, None)
    if not isinstance(title, str):
        raise TypeError(arg_error("to_html", "title", "a str", type_name(title)))
    title = visible(title)  # shown as every name is: unprintables escaped
    if node is None:
        raise ValueError(
            arg_error("to_html", "root", "a tensor with a grad_fn, or a Node",
                      "a tensor with no grad_fn (no graph to show)")
        )  # fmt: skip
    changes = _check_diff(diff, modules)
    found: list[tuple[list[Fold], list[int]]] = []  # every fold, at any depth

    def folding(
        graph: Graph, kinds: list[str], made_by: list[int]
    ) -> tuple[list[Fold], list[int]]:
        assert modules is not None
        found.append(find_folds(graph, kinds, modules, None, made_by))
        return folds_to_depth(graph, kinds, modules, found[0][0], 1)

    with gc_paused():
        view = build_view(node, index, collapse, modules, 1 if modules else None,
                          folding=folding)  # fmt: skip
        folds, fold_of = found[0] if found else ([], [-1] * len(view.graph.nodes))
        tree, tops = page_tree(view, index, folds, fold_of)
        nodes, ids = _node_data(view, index, tree)
        data = {
            "title": title,
            "box": [_CHAR, _HEIGHT, _GAP_X, _GAP_Y, _MAX_CHARS],
            "spread": _SPREAD,
            "alphabet": ALPHABET,  # runs.pack writes small values as these
            "tops": len(tops),
            "anomaly": view.anomaly,  # else: which nodes a backward made is unknown
            "items": tree.rows,
            **nodes,
        }
        shown = [f"{row[2]} {row[3]}" for row in tree.rows[: len(tops)]]
        if changes is not None:
            data["diff"] = found_diff = _diff_data(view, tree, changes, modules, ids)
            shown = _diff_texts(shown, found_diff, tree, ids)
    payload = _script(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    packed = ""
    if len(payload) > DEFLATE_ABOVE:
        deflated = zlib.compress(payload.encode("utf-8"), level=9)
        payload, packed = base64.b64encode(deflated).decode("ascii"), " data-deflate"
    svg = _static_svg(view, tops, shown)  # inline: no namespace needed
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{_asset('view.css')}</style>\n"
        f"</head>\n<body>\n<noscript>{svg}</noscript>\n"
        f'<script type="application/json" id="an-data"{packed}>{payload}</script>\n'
        f"<script>\n{_asset('view_text.js')}{_asset('view.js')}</script>\n"
        "</body>\n</html>\n"
    )
    svg = svg.replace("<svg ", f'<svg xmlns="{_SVG_NS}" ', 1)
    return GraphHtml(page, svg, graph_text(view, index))
