"""An interactive view of the backward graph, in one self-contained HTML file.

:func:`to_html` writes the view's entries (``autograd_notes.view``: with a
trace, the modules at depth 1 and the folds) as the top level, and every
node below them as data: a click opens a module, a fold or one call of a
fold. The script (``_html/view.js``, package data) lays out only what is
shown, with the layered layout ``draw_graph`` uses, ported to JavaScript
(no library: it is small, and the package stays one thing to audit). The
page fetches nothing; the same bytes come out on every run; a static SVG
of the top level stands in without JavaScript (``<noscript>``, and
:attr:`GraphHtml.svg` for a PDF).
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes.fold import Fold, find_folds, fold_title
from autograd_notes.labels import Names, outputs_text, short_leaf, visible
from autograd_notes.saved import saved_shapes
from autograd_notes.trace import ModuleTrace
from autograd_notes.view import View, build_view, check_args, entry_parts, fold_summary
from autograd_notes.walk import LEAF, leaf_of, runs_no_user_code

__all__ = ["GraphHtml", "to_html"]

_SVG_NS = "http://www.w3.org/2000/svg"  # only in GraphHtml.svg, a file of its own
# Box sizes of the layout (pixels), shared with view.js through the data.
_CHAR, _HEIGHT, _GAP_X, _GAP_Y, _MAX_CHARS = 7, 28, 16, 44, 48


class GraphHtml:
    """The page :func:`to_html` made: ``.html`` (the file), ``.svg`` (static).

    Jupyter, JupyterLab, VS Code and Colab show it through
    :meth:`_repr_html_` (in an ``iframe``, so its script stays its own).
    """

    def __init__(self, page: str, svg: str) -> None:
        self.html = page
        self.svg = svg

    def _repr_html_(self) -> str:
        source = html.escape(self.html, quote=True)
        return (
            f'<iframe srcdoc="{source}" sandbox="allow-scripts" '
            'style="width:100%;height:600px;border:1px solid #ccc" '
            'title="backward graph"></iframe>'
        )

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


def _saved(node: Node) -> list[list[object]]:
    """``[shape, dtype, bytes]`` per tensor ``node`` saved (None: freed or none)."""
    rows: list[list[object]] = []
    for item in saved_shapes(node):
        if not isinstance(item, tuple) or len(item) != 2:
            continue
        shape, dtype = item
        if not isinstance(dtype, torch.dtype) or not isinstance(shape, torch.Size):
            continue
        size = shape.numel() * dtype.itemsize
        rows.append([list(shape), str(dtype).removeprefix("torch."), size])
    return rows


def _depth(path: str) -> int:
    return 0 if not path else path.count(".") + 1


class _Items:
    """The tree of groups: top-level entries first, then what they open to."""

    def __init__(self, view: View, modules: ModuleTrace | None) -> None:
        self.view = view
        self.rows: list[list[object]] = []  # parent, kind, label, title, note, path
        self.owner = [-1] * len(view.graph.nodes)
        self.module_of = view.module_of or [None] * len(self.owner)
        self.folds: list[Fold] = []  # every fold at any depth: none nest
        self.fold_of = [-1] * len(self.owner)
        if modules is not None:
            self.folds, self.fold_of = find_folds(view.graph, view.kinds, modules, None)
        self.work: list[tuple[int, str, list[int]]] = []

    def add(self, parent: int, kind: str, label: str, title: str, note: str,
            path: str | None) -> int:  # fmt: skip
        self.rows.append([parent, kind, label, title, note, path])
        return len(self.rows) - 1

    def open_fold(self, item: int, fold: Fold) -> None:
        """Give ``item`` one child per call of ``fold``, and its leaves."""
        for j, nodes in enumerate(fold.nodes):
            path, k = fold.paths[j], fold.call_index[j]
            title = f"{visible(path) or 'the model'} (call {k:,})"
            call = self.add(
                item, "call", "", title, f"call: {len(nodes):,} nodes", path
            )
            self.work.append((call, path, nodes))
        if len(fold.leaves) > 1:  # the parameters of every call, as one box
            note = f"{len(fold.leaves):,} AccumulateGrad nodes"
            item = self.add(item, "run", "", "parameters", note, None)
        for i in fold.leaves:
            self.owner[i] = item

    def _keys(
        self, path: str, nodes: list[int]
    ) -> tuple[list[int], dict[str | int, list[int]]]:
        """Nodes of ``path`` itself, and the others by submodule or fold below it."""
        subs: dict[str | int, list[int]] = {}
        direct: list[int] = []
        for i in nodes:
            f, here = self.fold_of[i], self.module_of[i]
            if f >= 0 and _depth(self.folds[f].paths[0]) > _depth(path):
                subs.setdefault(f, []).append(i)
            elif here is None or _depth(here) <= _depth(path):
                direct.append(i)
            else:
                key = ".".join(here.split(".")[: _depth(path) + 1])
                subs.setdefault(key, []).append(i)
        return direct, subs

    def split(self, item: int, path: str, nodes: list[int]) -> None:
        """Give ``nodes`` of module ``path`` to ``item``, a group per submodule."""
        self.work.append((item, path, nodes))
        while self.work:
            item, path, nodes = self.work.pop(0)
            direct, subs = self._keys(path, nodes)
            while not direct and len(subs) == 1:  # one submodule holds all: go down
                key = next(iter(subs))
                if not isinstance(key, str):
                    break
                path = key
                direct, subs = self._keys(path, nodes)
            for i in direct:
                self.owner[i] = item
            for key, members in subs.items():
                if isinstance(key, int):
                    fold = self.folds[key]
                    note = fold_summary(self.view, fold)
                    self.open_fold(
                        self.add(item, "fold", "", fold_title(fold), note, None), fold
                    )
                elif len(members) == 1:
                    self.owner[members[0]] = item
                else:
                    count = f"module: {len(members):,} nodes"
                    sub = self.add(item, "module", "", visible(key), count, key)
                    self.work.append((sub, key, members))


def _items(view: View, names: Names, modules: ModuleTrace | None) -> _Items:
    items = _Items(view, modules)
    tops = len(view.first)
    for e in range(tops):
        parts = entry_parts(view, e, names, False)
        label = f"[{view.node_id(e)}]"
        fold = view.folds.get(e)
        group = view.group[e]
        kind = "fold" if fold else "module" if group is not None else "run"
        if group is None and view.sizes[e] == 1:
            kind = "node"
        path = None if group is None or fold else group
        items.add(-1, kind, label, parts.title, parts.note, path)
    for e in range(tops):
        fold = view.folds.get(e)
        group = view.group[e]
        if fold is not None:
            items.open_fold(e, fold)
            items.split(e, fold.paths[0], [])  # opens the calls queued
        elif group is not None:
            items.split(e, group, view.members[e])
        else:
            first = view.first[e]
            for i in range(first, first + view.sizes[e]):
                items.owner[i] = e
    return items


def _table(values: Sequence[object]) -> tuple[list[object], list[int]]:
    """Each distinct value once (in order of first use), and each value's index."""
    codes: dict[str, int] = {}
    found = [codes.setdefault(json.dumps(v), len(codes)) for v in values]
    return [json.loads(v) for v in codes], found


def _node_data(view: View, names: Names, owner: list[int]) -> dict[str, object]:
    """Per node, compact (view.js decodes): tables of kinds, paths, saves."""
    graph = view.graph
    n = len(graph.nodes)
    kinds, kind = _table(view.kinds)
    paths, path = _table(view.module_of or [None] * n)
    saves, save = _table([_saved(fn) for fn in graph.nodes])
    starts, inputs = graph.starts, graph.inputs
    texts = ((i, _node_text(view, i, names)) for i in range(n))
    return {
        "kinds": kinds,
        "kind": kind,
        "owner": owner,
        "degree": [starts[i + 1] - starts[i] for i in range(n)],
        "input": [
            inputs[k] - i for i in range(n) for k in range(starts[i], starts[i + 1])
        ],
        "paths": paths,
        "path": path,
        "saves": saves,
        "save": save,
        "names": [[i, text] for i, text in texts if text],
    }


def _node_text(view: View, i: int, names: Names) -> str:
    fn = view.graph.nodes[i]
    if view.kinds[i] == LEAF:
        leaf = leaf_of(fn)
        return "" if leaf is None else short_leaf(leaf, names, ": ")
    return outputs_text(fn, names, False)


def _width(text: str) -> int:
    return min(len(text), _MAX_CHARS) * _CHAR + 16


def _static_svg(items: _Items, tops: int) -> str:
    """The top level drawn as the script first draws it (see view.js layout)."""
    view = items.view
    graph = view.graph
    entry = [0] * tops
    order: list[int] = []
    out: list[dict[int, None]] = [{} for _ in range(tops)]
    for e in range(tops):
        entry[e] = e
    top_of = [0] * len(graph.nodes)
    for i, owner in enumerate(items.owner):
        while owner >= tops:
            owner = int(items.rows[owner][0])  # type: ignore[call-overload]
        top_of[i] = owner
    for i in range(len(graph.nodes)):
        for k in graph.inputs[graph.starts[i] : graph.starts[i + 1]]:
            a, b = top_of[i], top_of[k]
            if a != b:
                out[a][b] = None
    order = sorted(range(tops), key=lambda e: view.first[e])
    layer = _layers(order, [list(o) for o in out])
    rows: dict[int, list[int]] = {}
    for e in order:
        rows.setdefault(layer[e], []).append(e)
    texts = [f"{items.rows[e][2]} {items.rows[e][3]}" for e in range(tops)]
    x = [0.0] * tops
    y = [0.0] * tops
    width = max(
        (sum(_width(texts[e]) + _GAP_X for e in row) for row in rows.values()),
        default=0,
    )
    for r, row in rows.items():
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
    height = (max(rows, default=0) + 1) * (_HEIGHT + _GAP_Y)
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
    """``text`` safe inside ``<script>``: no ``</script>`` or ``<!--`` in it."""
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
) -> GraphHtml:
    """An interactive view of the backward graph behind ``root``, in one HTML file.

    The top level is :func:`.format_graph`'s entries, with its numbering:
    with ``modules``, those of ``depth=1`` (folds on). A click opens a module,
    a fold or one call of a fold; a details panel shows a node's saved
    tensors (shape, dtype, bytes), names and module path; search finds
    nodes by kind or module path; drag, wheel, arrows and ``+``/``-`` pan and
    zoom. Nothing is fetched; two runs give the same bytes.

    Raises ``TypeError`` for a bad ``root``, ``names``, ``modules``, ``collapse``
    or ``title``, like :func:`.format_graph`.

    >>> a = torch.ones(2, requires_grad=True)
    >>> page = to_html((a * 2).sum(), names={"a": a})
    >>> page.html.startswith("<!DOCTYPE html>"), "http" in page.html.lower()
    (True, False)
    """
    node, index = check_args("to_html", root, names, False, collapse, modules, None)
    if not isinstance(title, str):
        raise TypeError(arg_error("to_html", "title", "a str", type_name(title)))
    if node is None:
        raise ValueError(
            arg_error("to_html", "root", "a tensor with a grad_fn, or a Node",
                      "a tensor with no grad_fn (no graph to show)")
        )  # fmt: skip
    view = build_view(node, index, collapse, modules, 1 if modules else None)
    items = _items(view, index, modules)
    data = {
        "title": title,
        "box": [_CHAR, _HEIGHT, _GAP_X, _GAP_Y, _MAX_CHARS],
        "tops": len(view.first),
        "items": items.rows,
        **_node_data(view, index, items.owner),
    }
    payload = _script(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    svg = _static_svg(items, len(view.first))  # inline: no namespace needed
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{_asset('view.css')}</style>\n"
        f"</head>\n<body>\n<noscript>{svg}</noscript>\n"
        f'<script type="application/json" id="an-data">{payload}</script>\n'
        f"<script>\n{_asset('view.js')}</script>\n</body>\n</html>\n"
    )
    return GraphHtml(page, svg.replace("<svg ", f'<svg xmlns="{_SVG_NS}" ', 1))
