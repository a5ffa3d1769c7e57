"""An interactive view of the backward graph, in one self-contained HTML file.

:func:`.to_html` writes the view's entries (``autograd_notes.view``: with a
trace, the modules at depth 1 and the folds, and the nodes outside them)
as the top level, and every node below them as data: a click opens a
module, a fold or one call of a fold. The data's schema is
``autograd_notes.view_data``; its notes (a module's or a fold's
summary, a node's marks, a leaf's label) are words, which the page says in
the reader's language (``autograd_notes.words``). The script (package
data: ``_html/view.js``, after its words in ``_html/view_text.js`` and its
layout in ``_html/layout.js``) lays out only what is shown, by the layered
layout rule of ``autograd_notes.layout``, ported without a library (it is
small, and the package stays one thing to audit). The static SVG calls
``autograd_notes.layout.layers``; ``draw_graph`` applies the same rule
through networkx, and the tests hold the three to the same rows. The page
fetches nothing; the same bytes come out on every run; a static SVG of the
top level stands in without JavaScript (``<noscript>``, and
:attr:`.GraphHtml.svg` for a PDF).
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

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes._notebook import graph_text, notebook_html
from autograd_notes.diff import GraphDiff
from autograd_notes.fold import Fold, find_folds, folds_to_depth
from autograd_notes.labels import visible
from autograd_notes.layout import layers
from autograd_notes.page_items import Tree, page_tree
from autograd_notes.runs import unpack
from autograd_notes.trace import ModuleTrace
from autograd_notes.view import View, build_view, check_args
from autograd_notes.view_data import BOX, DiffData, diff_data, page_data
from autograd_notes.walk import Graph, gc_paused, runs_no_user_code
from autograd_notes.words import english

__all__ = ["GraphHtml", "to_html"]

_SVG_NS = "http://www.w3.org/2000/svg"  # only in GraphHtml.svg, a file of its own
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


def _width(text: str) -> int:
    return min(len(text), BOX.max_chars) * BOX.char + 16


def _diff_texts(
    texts: list[str], found: DiffData, tree: Tree, ids: list[int]
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
                    item = tree.rows[item].parent
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
    layer = layers([list(o) for o in out], top_of[0])
    placed: dict[int, list[int]] = {}
    for e in order:  # walk order within a row
        placed.setdefault(layer[e], []).append(e)
    x = [0.0] * tops
    y = [0.0] * tops
    gap_x, height = BOX.gap_x, BOX.height
    width = max(
        (sum(_width(texts[e]) + gap_x for e in row) for row in placed.values()),
        default=0,
    )
    for r, row in placed.items():
        used = sum(_width(texts[e]) + gap_x for e in row)
        left = (width - used) / 2
        for e in row:
            x[e], y[e] = left, r * (height + BOX.gap_y)
            left += _width(texts[e]) + gap_x
    parts = []
    for a in range(tops):
        for b in out[a]:
            x1, x2 = x[a] + _width(texts[a]) / 2, x[b] + _width(texts[b]) / 2
            parts.append(
                f'<line x1="{x1:g}" y1="{y[a] + height:g}" x2="{x2:g}" '
                f'y2="{y[b]:g}" stroke="#888"/>'
            )
    for e in range(tops):
        text = texts[e]
        most = BOX.max_chars
        short = text if len(text) <= most else text[: most - 1] + "…"
        parts.append(
            f'<g><title>{html.escape(text)}</title><rect x="{x[e]:g}" y="{y[e]:g}" '
            f'width="{_width(text)}" height="{height}" rx="4" fill="#eef" '
            f'stroke="#446"/><text x="{x[e] + 8:g}" y="{y[e] + 18:g}" '
            f'font-family="monospace" font-size="12">{html.escape(short)}</text></g>'
        )
    full = (max(placed, default=0) + 1) * (height + BOX.gap_y)
    return (
        f'<svg role="img" '
        f'aria-label="backward graph, top level" viewBox="-8 -8 {width + 16:g} '
        f'{full + 16:g}" width="{width + 16:g}" height="{full + 16:g}">'
        + "".join(parts)
        + "</svg>"
    )


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
        tree, tops = page_tree(view, folds, fold_of)
        data, ids = page_data(view, index, tree, title=title, tops=len(tops))
        shown = [f"{row.label} {english(row.title)}" for row in tree.rows[: len(tops)]]
        if changes is not None:
            data["diff"] = found_diff = diff_data(view, tree, changes, modules, ids)
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
        f"<script>\n{_asset('view_text.js')}"
        f"var AN_NOTES = {_script(_asset('notes.json'))};\n"
        f"{_asset('layout.js')}{_asset('view.js')}</script>\n"
        "</body>\n</html>\n"
    )
    svg = svg.replace("<svg ", f'<svg xmlns="{_SVG_NS}" ', 1)
    return GraphHtml(page, svg, graph_text(view, index))
