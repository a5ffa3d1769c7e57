"""Draw the backward graph behind a tensor with matplotlib.

:func:`.draw_graph` shows what :func:`autograd_notes.format_graph` prints, as a
picture: the same entries (collapsed runs, module groups) and the same
numbering, laid out in layers from the root down to the leaves. It needs
matplotlib and networkx (``pip install matplotlib networkx``), both imported
only when it is called.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes.labels import Names, short_leaf
from autograd_notes.trace import ModuleTrace
from autograd_notes.view import (
    build_view,
    check_args,
    entry_parts,
    label_lines,
    saved_lines,
)
from autograd_notes.walk import runs_no_user_code

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch
    from matplotlib.text import Text

__all__ = ["draw_graph"]

# draw_graph refuses more entries than this: the labels would be unreadable.
_MAX_DRAW_NODES = 200
_PLOT_HINT = "pip install matplotlib networkx"

# kind -> (legend label, box style, fill colour, edge colour, edge width)
_DRAW_STYLES = {
    "root": ("root", "round4,pad=0.5", "#fbd38d", "#b7791f", 1.6),
    "node": ("backward node", "square,pad=0.4", "#dbe7f5", "#4a6fa5", 1.0),
    "leaf": ("leaf (AccumulateGrad)", "round,pad=0.4,rounding_size=0.8", "#c6f0cf",
             "#2f855a", 1.0),
    "group": ("module (group of nodes)", "sawtooth,pad=0.4", "#e9d8fd", "#6b46c1",
              1.0),
}  # fmt: skip
_INK = "#1b1f24"
_ARROW = "#555555"


def _draw_items(
    root: object,
    node: Node | None,
    names: Names,
    show_saved: bool,
    collapse: bool,
    modules: ModuleTrace | None,
    depth: int | None,
    fold: bool,
) -> tuple[list[str], list[str], list[list[int]]]:
    """Label, style (root, node, leaf, group) and inputs of each entry."""
    if node is None:
        assert isinstance(root, torch.Tensor)
        label = short_leaf(root, names)
        if not root.requires_grad:
            label += "\n(no graph)"
        return [label], ["leaf"], [[]]
    view = build_view(node, names, collapse, modules, depth, fold)
    count = len(view.first)
    if count > _MAX_DRAW_NODES:
        what = "entries after collapsing" if collapse else "nodes"
        raise ValueError(
            f"draw_graph() draws at most {_MAX_DRAW_NODES} nodes and this graph "
            f"has {count:,} {what}; use format_graph() or to_dot() for large "
            "graphs, or group a model's graph by module (track_modules(), depth=)"
        )
    labels, styles = [], []
    children = [view.inputs_of(e) for e in range(count)]
    for e in range(count):
        parts = entry_parts(view, e, names, False)
        lines = label_lines(parts, names)
        if parts.leaf is not None:  # a leaf box shows the leaf, not the node kind
            lines[:2] = [short_leaf(parts.leaf, names)]
        if parts.note and view.group[e] is not None:
            lines[1] = lines[1].strip("()").replace(", ", "\n", 1)
        lines += saved_lines(view, e, show_saved)
        labels.append("\n".join(lines))
        if e == 0:
            styles.append("root")
        elif view.group[e] is not None:
            styles.append("group")
        else:
            styles.append("node" if children[e] else "leaf")
    return labels, styles, children


def _legend_box(
    legend: object,
    orig_handle: FancyBboxPatch,
    xdescent: float,
    ydescent: float,
    width: float,
    height: float,
    fontsize: float,
) -> FancyBboxPatch:
    """Legend handler: a small copy of the node's box, same style and colours."""
    from matplotlib.patches import FancyBboxPatch

    return FancyBboxPatch(
        (-xdescent + 3, -ydescent + 1),
        width - 6,
        height - 2,
        boxstyle=orig_handle.get_boxstyle(),
        mutation_scale=0.4 * height,
        facecolor=orig_handle.get_facecolor(),
        edgecolor=orig_handle.get_edgecolor(),
    )


def _layers(children: list[list[int]]) -> dict[int, list[int]]:
    """Layer of each entry: its longest distance from the root; leaves last.

    Grouping by module can make a cycle (a module used twice); then the
    shortest distance is used instead, which needs no topological order.
    """
    import networkx as nx

    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(children)))
    dag.add_edges_from((i, k) for i, kids in enumerate(children) for k in kids)
    if nx.is_directed_acyclic_graph(dag):
        layer_of = {
            i: depth
            for depth, generation in enumerate(nx.topological_generations(dag))
            for i in generation
        }
    else:
        layer_of = dict(nx.single_source_shortest_path_length(dag, 0))
    bottom = max(layer_of.values())
    layers: dict[int, list[int]] = {}
    for i, kids in enumerate(children):  # walk order within each layer
        layers.setdefault(layer_of.get(i, bottom) if kids else bottom, []).append(i)
    return layers


@runs_no_user_code
def draw_graph(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    ax: Axes | None = None,
    show_saved: bool = False,
    collapse: bool = True,
    modules: ModuleTrace | None = None,
    depth: int | None = None,
    fold: bool = True,
) -> Figure:
    """Draw the backward graph behind ``root`` with matplotlib.

    Needs matplotlib and networkx (``pip install matplotlib networkx``).
    Nodes sit in layers: layer ``k`` holds the entries whose longest path from
    the root has ``k`` steps, and every leaf sits in the bottom layer. Within
    a layer, entries keep :func:`autograd_notes.walk_graph` order, so the
    picture is the same on every run. Edges are routed around the boxes.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        What to draw, as for :func:`autograd_notes.format_graph`.
    names, show_saved, collapse, modules, depth, fold
        As for :func:`autograd_notes.format_graph`: a collapsed run is one
        box ``MulBackward0 ×1,000``, a module group or a fold one purple box.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into: 2-D, with linear scales and a nonzero size. By
        default a new figure is made with ``pyplot``, sized to the graph, on
        a white background. The legend sits just above the axes: in a figure
        of your own, leave room for it (``layout="constrained"`` does). Boxes
        keep their size in points, so axes too small for the graph make them
        overlap.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on; ``plt.show`` is not called. All text is literal
        (a ``$`` in a name is no math, and TeX is never used). Arrows point the way
        gradients flow, from the root (top, amber) through backward nodes
        (blue boxes) to the leaves (bottom, green pills). Two edges between
        the same pair of entries are drawn as one arrow. An arrow never
        crosses a box: one that skips rows passes between their boxes. The
        axes' label (``ax.get_label()``) says in words what the picture
        shows, for alt text.

    Raises
    ------
    TypeError
        For a bad ``root``, ``names``, ``ax`` (3-D, polar), ``modules``,
        ``depth`` or flag.
    ValueError
        For ``ax`` with a log scale or no size, or for more than 200 entries
        (after collapsing and grouping): use :func:`autograd_notes.format_graph`
        or :func:`autograd_notes.to_dot`.
    ImportError
        If matplotlib or networkx is missing.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> fig = draw_graph((w * w).sum(), names={"w": w})
    >>> [text.get_text() for text in fig.axes[0].texts if text.get_text()]
    ['SumBackward0', 'MulBackward0', 'w\\n(2,) float32']
    >>> plt.close(fig)
    """
    node, names_index = check_args(
        "draw_graph", root, names, show_saved, collapse, modules, depth, fold
    )
    try:
        import matplotlib.pyplot as plt
        import networkx  # noqa: F401  (_layers needs it)
        from matplotlib.axes import Axes
        from matplotlib.figure import Figure
        from matplotlib.legend_handler import HandlerPatch
        from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
        from matplotlib.path import Path
    except ImportError as exc:
        raise ImportError(
            f"draw_graph() needs matplotlib and networkx: {_PLOT_HINT}"
        ) from exc
    if ax is not None:
        _check_ax(ax, Axes)
    labels, styles, children = _draw_items(
        root, node, names_index, show_saved, collapse, modules, depth, fold
    )
    layers = _layers(children)
    rows = [layers[r] for r in sorted(layers)]
    if ax is None:
        figure = plt.figure(figsize=(5.5, 2.6))
        figure.set_facecolor("white")
        ax = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        own = True
    else:
        parent = ax.figure
        figure = parent if isinstance(parent, Figure) else parent.figure
        own = False
    assert isinstance(figure, Figure)
    ax.set_facecolor("white")
    ax.set_axis_off()
    texts = []
    for label, style_name in zip(labels, styles, strict=True):
        _, boxstyle, fill, edge, width = _DRAW_STYLES[style_name]
        style = {"boxstyle": boxstyle, "facecolor": fill, "edgecolor": edge}
        texts.append(
            ax.text(
                0.0,
                0.0,
                label,
                ha="center",
                va="center",
                fontsize=9.0,
                color=_INK,
                zorder=3,
                bbox={**style, "linewidth": width},
                parse_math=False,  # a name's "$" is a dollar sign, not math
                usetex=False,
            )
        )
    # Box sizes in inches, then a font small enough for the widest row.
    sizes = _measure(figure, texts)
    widest = max(_row_width(sizes, row) for row in rows)
    if widest > _MAX_WIDTH - 2 * _GAP_X:
        scale = max(5.0 / 9.0, (_MAX_WIDTH - 2 * _GAP_X) / widest)
        for text in texts:
            text.set_fontsize(9.0 * scale)
        sizes = _measure(figure, texts)
    width, height = _place(texts, sizes, rows)
    ax.set_xlim(0.0, width)
    ax.set_ylim(-height, 0.0)
    if own:
        figure.set_size_inches(width, height + _LEGEND_HEIGHT)
        ax.set_position((0.0, 0.0, 1.0, height / (height + _LEGEND_HEIGHT)))

    shown = [kind for kind in _DRAW_STYLES if kind != "group" or "group" in styles]
    handles = [
        FancyBboxPatch(
            (0, 0), 1, 1, boxstyle=boxstyle, facecolor=fill, edgecolor=edge, label=name
        )
        for kind, (name, boxstyle, fill, edge, _) in _DRAW_STYLES.items()
        if kind in shown
    ]
    legend = ax.legend(
        handles=handles,
        handler_map={FancyBboxPatch: HandlerPatch(_legend_box)},
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=len(handles),
        frameon=False,
        fontsize=8,
        labelcolor=_INK,
        title="arrows show gradient flow, from the root to the leaves",
        title_fontsize=8,
    )
    legend.get_title().set_color(_INK)
    for text in [*legend.get_texts(), legend.get_title()]:
        text.set_usetex(False)  # literal, like the boxes, whatever the rcParams

    # Edges are routed around the boxes as drawn, in data coordinates.
    figure.draw_without_rendering()
    to_data = ax.transData.inverted()
    boxes = []
    for text in texts:
        patch = text.get_bbox_patch()
        assert patch is not None
        (x0, y0), (x1, y1) = to_data.transform(patch.get_window_extent().get_points())
        boxes.append(_Box(float(x0), float(x1), float(y0), float(y1)))
    inches = ax.get_window_extent().width / figure.dpi  # 1.0 in a figure of ours
    unit = width / inches if inches > 0 else 1.0  # data units per inch
    edges = [(i, k) for i, kids in enumerate(children) for k in dict.fromkeys(kids)]
    for path in _route(boxes, rows, edges, unit):
        ax.add_patch(
            FancyArrowPatch(
                path=Path(path),
                arrowstyle="-|>",
                mutation_scale=10,
                color=_ARROW,
                linewidth=1.0,
                joinstyle="round",
                capstyle="round",
                zorder=4,
                gid="edge",
            )
        )
    ax.set_label(_describe(labels, styles, edges))
    return figure


def _check_ax(ax: object, axes_type: type[Axes]) -> None:
    """Refuse axes ``draw_graph`` cannot draw on: 3-D, polar, log-scaled, no size."""
    func = "draw_graph"
    if not isinstance(ax, axes_type):
        expected = "a matplotlib Axes or None"
        raise TypeError(arg_error(func, "ax", expected, type_name(ax)))
    if ax.name != "rectilinear":
        expected = "a 2-D matplotlib Axes (projection 'rectilinear') or None"
        actual = f"{type_name(ax)} (projection {ax.name!r})"
        raise TypeError(arg_error(func, "ax", expected, actual))
    if not ax.transData.is_affine:
        actual = f"x scale {ax.get_xscale()!r} and y scale {ax.get_yscale()!r}"
        raise ValueError(arg_error(func, "ax", "Axes with linear scales", actual))
    box = ax.get_window_extent()
    if not (box.width > 0 and box.height > 0):
        actual = f"{box.width:g} x {box.height:g} pixels"
        raise ValueError(arg_error(func, "ax", "Axes of nonzero size", actual))


class _Box(NamedTuple):
    """A node's box: its extent in data coordinates."""

    left: float
    right: float
    bottom: float
    top: float


# Layout, in inches: room between boxes for edges, and the widest figure.
_GAP_X = 0.5  # between two boxes of a row, and beside the outer ones
_GAP_Y = 0.6  # between two rows
_CLEARANCE = 0.1  # an edge never comes closer than this to a box it passes
_LEGEND_HEIGHT = 0.6
_MAX_WIDTH = 24.0


def _measure(figure: Figure, texts: list[Text]) -> list[tuple[float, float]]:
    """Width and height, in inches, of each text's box as drawn."""
    figure.draw_without_rendering()
    sizes = []
    for text in texts:
        patch = text.get_bbox_patch()
        assert patch is not None
        extent = patch.get_window_extent()
        sizes.append((extent.width / figure.dpi, extent.height / figure.dpi))
    return sizes


def _row_width(sizes: list[tuple[float, float]], row: list[int]) -> float:
    return sum(sizes[i][0] for i in row) + _GAP_X * (len(row) - 1)


def _place(
    texts: list[Text], sizes: list[tuple[float, float]], rows: list[list[int]]
) -> tuple[float, float]:
    """Centre each row's boxes, side by side, rows top down; the drawing's size.

    One data unit is one inch of a figure ``draw_graph`` makes. A row's boxes
    keep ``_GAP_X`` between them, and rows keep ``_GAP_Y``: room for edges.
    """
    width = max(5.5, max(_row_width(sizes, row) for row in rows) + 2 * _GAP_X)
    top = _GAP_Y / 2  # room above the first row for an edge that goes up
    for row in rows:
        row_height = max(sizes[i][1] for i in row)
        x = (width - _row_width(sizes, row)) / 2
        for i in row:
            texts[i].set_position((x + sizes[i][0] / 2, -(top + row_height / 2)))
            x += sizes[i][0] + _GAP_X
        top += row_height + _GAP_Y
    return width, top - _GAP_Y / 2


def _route(
    boxes: list[_Box],
    rows: list[list[int]],
    edges: list[tuple[int, int]],
    unit: float = 1.0,
) -> list[list[tuple[float, float]]]:
    """A path for each edge that enters no box but its two ends'.

    An edge leaves its box's bottom and enters the top of the box it points
    to. Between them it crosses the rows in between (all rows from its own
    up to the target's, for an edge that goes up) through gaps between their
    boxes: vertically, in a lane of the gap. Everything else it does between
    rows, where no box is: a straight line from one row's band to the next.
    Edges that share a gap, or leave or enter one box, are spread across it.
    ``unit`` is the length of an inch in data coordinates.
    """
    clearance, outer = _CLEARANCE * unit, _GAP_X * unit
    row_of = {i: r for r, row in enumerate(rows) for i in row}
    top = [max(boxes[i].top for i in row) + clearance for row in rows]
    bottom = [min(boxes[i].bottom for i in row) - clearance for row in rows]
    gaps = []  # per row: the open intervals of x that no box of the row covers
    for row in rows:
        ordered = sorted(row, key=lambda i: boxes[i].left)
        edges_x = [boxes[ordered[0]].left - outer]
        for i in ordered:
            edges_x += [boxes[i].left, boxes[i].right]
        edges_x.append(boxes[ordered[-1]].right + outer)
        gaps.append(list(zip(edges_x[::2], edges_x[1::2], strict=True)))

    def centre(i: int) -> float:
        return (boxes[i].left + boxes[i].right) / 2

    # Rows each edge crosses, and the gap it takes in each: nearest its line.
    crossings: list[list[tuple[int, int]]] = []
    users: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for e, (i, k) in enumerate(edges):
        a, b = row_of[i], row_of[k]
        crossed = list(range(a + 1, b)) if b > a else list(range(a, b - 1, -1))
        chosen = []
        for step, r in enumerate(crossed, start=1):
            x = centre(i) + (centre(k) - centre(i)) * step / (len(crossed) + 1)
            g = min(
                range(len(gaps[r])),
                key=lambda g: (_distance(x, gaps[r][g]), g),
            )
            chosen.append((r, g))
            users.setdefault((r, g), []).append((x, e))
        crossings.append(chosen)
    lane: dict[tuple[int, int], float] = {}
    for (r, g), wanted in users.items():
        lo, hi = gaps[r][g]
        for j, (_, e) in enumerate(sorted(wanted)):
            lane[e, r] = lo + (hi - lo) * (j + 1) / (len(wanted) + 1)

    # Where each edge leaves and enters its boxes: spread along the side.
    def towards(e: int, end: int) -> float:
        path = crossings[e]
        if not path:
            return centre(edges[e][1 - end])
        r = path[0][0] if end == 0 else path[-1][0]
        return lane[e, r]

    start: dict[int, float] = {}
    finish: dict[int, float] = {}
    for end, ports in ((0, start), (1, finish)):
        by_box: dict[int, list[tuple[float, int]]] = {}
        for e, pair in enumerate(edges):
            by_box.setdefault(pair[end], []).append((towards(e, end), e))
        for i, wanted in by_box.items():
            box = boxes[i]
            for j, (_, e) in enumerate(sorted(wanted)):
                ports[e] = box.left + (box.right - box.left) * (j + 1) / (
                    len(wanted) + 1
                )
    paths = []
    for e, (i, k) in enumerate(edges):
        a = row_of[i]
        points = [(start[e], boxes[i].bottom), (start[e], bottom[a])]
        for r, _ in crossings[e]:
            x = lane[e, r]
            going_down = row_of[k] > a
            ends = (top[r], bottom[r]) if going_down else (bottom[r], top[r])
            points += [(x, ends[0]), (x, ends[1])]
        points += [(finish[e], top[row_of[k]]), (finish[e], boxes[k].top)]
        paths.append(points)
    return paths


def _distance(x: float, gap: tuple[float, float]) -> float:
    """How far ``x`` is from the interval ``gap``."""
    return max(gap[0] - x, 0.0, x - gap[1])


def _describe(
    labels: list[str], styles: list[str], arrows: list[tuple[int, int]]
) -> str:
    """One paragraph that says what the drawing shows: alt text for the picture.

    Its sentences have a fixed shape (the site translates them):
    ``Backward graph: 6 arrows from the root down to the leaves. Root: X.
    Backward nodes: A, B. Modules: M. Leaves: w, b. Arrows into w: 2.``
    """
    names = [label.split("\n", 1)[0] for label in labels]
    if not arrows:
        return f"No backward graph: only {names[0]}."
    count = f"{len(arrows)} arrow" + ("" if len(arrows) == 1 else "s")
    parts = [
        f"Backward graph: {count} from the root down to the leaves.",
        f"Root: {names[0]}.",
    ]
    for kind, title in (("node", "Backward nodes"), ("group", "Modules")):
        found = [n for n, s in zip(names[1:], styles[1:], strict=True) if s == kind]
        if found:
            parts.append(f"{title}: {', '.join(found)}.")
    leaves = [n for n, s in zip(names, styles, strict=True) if s == "leaf"]
    if leaves:
        parts.append(f"Leaves: {', '.join(leaves)}.")
    into = Counter(k for _, k in arrows)
    parts += [f"Arrows into {names[k]}: {n}." for k, n in sorted(into.items()) if n > 1]
    return " ".join(parts)
