"""Draw the backward graph behind a tensor with matplotlib.

:func:`.draw_graph` shows what :func:`autograd_notes.format_graph` prints, as a
picture: the same entries (collapsed runs, module groups) and the same
numbering, laid out in layers from the root down to the leaves. It needs
matplotlib and networkx (``pip install matplotlib networkx``), both imported
only when it is called.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import torch
from torch.autograd.graph import Node

from autograd_notes.graph import (
    ModuleTrace,
    _as_node,
    _check_bool,
    _check_grouping,
    _entry_parts,
    _index_names,
    _label_lines,
    _Names,
    _prepare,
    _saved_values,
    _short_leaf,
    _type_name,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch

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
    names: _Names,
    show_saved: bool,
    collapse: bool,
    modules: ModuleTrace | None,
    depth: int | None,
) -> tuple[list[str], list[str], list[list[int]]]:
    """Label, style (root, node, leaf, group) and inputs of each entry."""
    if node is None:
        assert isinstance(root, torch.Tensor)
        label = _short_leaf(root, names.leaves.get(id(root)))
        if not root.requires_grad:
            label += "\n(no graph)"
        return [label], ["leaf"], [[]]
    view, kinds = _prepare(root, node, names, collapse, modules, depth)
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
        parts = _entry_parts(view, kinds, e, names, False)
        lines = _label_lines(parts, names)
        if parts.leaf is not None:  # a leaf box shows the leaf, not the node kind
            lines[:2] = [_short_leaf(parts.leaf, names.leaves.get(id(parts.leaf)))]
        if parts.note and view.group[e] is not None:
            lines[1] = lines[1].strip("()").replace(", ", "\n", 1)
        if show_saved and view.group[e] is None:
            fn = view.graph.nodes[view.first[e]]
            lines += [f"{attr}: {text}" for attr, text in _saved_values(fn)]
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


def draw_graph(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    ax: Axes | None = None,
    show_saved: bool = False,
    collapse: bool = True,
    modules: ModuleTrace | None = None,
    depth: int | None = None,
) -> Figure:
    """Draw the backward graph behind ``root`` with matplotlib.

    Needs matplotlib and networkx (``pip install matplotlib networkx``).
    Nodes sit in layers: layer ``k`` holds the entries whose longest path from
    the root has ``k`` steps, and every leaf sits in the bottom layer. Within
    a layer, entries keep :func:`autograd_notes.walk_graph` order, so the
    picture is the same on every run.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        What to draw, as for :func:`autograd_notes.format_graph`.
    names, show_saved, collapse, modules, depth
        As for :func:`autograd_notes.format_graph`: a collapsed run is one
        box ``MulBackward0 ×1,000``, a module group one purple box.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into. By default a new figure is made with ``pyplot``,
        sized to the graph, on a white background. The legend sits just
        above the axes: in a figure of your own, leave room for it
        (``layout="constrained"`` does).

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on; ``plt.show`` is not called. Arrows point the way
        gradients flow, from the root (top, amber) through backward nodes
        (blue boxes) to the leaves (bottom, green pills). Two edges between
        the same pair of entries are drawn as one arrow.

    Raises
    ------
    TypeError
        For a bad ``root``, ``names``, ``ax``, ``modules``, ``depth`` or flag.
    ValueError
        For more than 200 entries (after collapsing and grouping): use
        :func:`autograd_notes.format_graph` or :func:`autograd_notes.to_dot`.
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
    node = _as_node(root, "draw_graph")
    names_index = _index_names(names, "draw_graph")
    _check_bool(show_saved, "show_saved", "draw_graph")
    _check_bool(collapse, "collapse", "draw_graph")
    _check_grouping(modules, depth, "draw_graph")
    try:
        import matplotlib.pyplot as plt
        import networkx as nx
        from matplotlib.axes import Axes
        from matplotlib.figure import Figure
        from matplotlib.legend_handler import HandlerPatch
        from matplotlib.patches import FancyBboxPatch
    except ImportError as exc:
        raise ImportError(
            f"draw_graph() needs matplotlib and networkx: {_PLOT_HINT}"
        ) from exc
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(
            "draw_graph() argument 'ax' must be a matplotlib Axes or None, "
            f"not {_type_name(ax)}"
        )
    labels, styles, children = _draw_items(
        root, node, names_index, show_saved, collapse, modules, depth
    )
    layers = _layers(children)
    bottom = max(layers)
    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(labels)))
    # A dict subset_key (networkx >= 3.3) keeps the order given within layers.
    pos = nx.multipartite_layout(dag, subset_key=layers, align="horizontal")
    xs = [float(pos[i][0]) for i in range(len(labels))]
    ys = [-float(pos[i][1]) for i in range(len(labels))]  # root at the top

    # Size: about 1.7 in per node across, and a row height per layer.
    widest = max(len(members) for members in layers.values())
    lines = max(label.count("\n") + 1 for label in labels)
    wanted_w = 1.7 * widest + 0.6
    fig_w = min(max(wanted_w, 5.5), 24.0)
    fig_h = min(max((0.55 + 0.22 * lines) * (bottom + 1) + 0.9, 2.6), 24.0)
    fontsize = max(5.0, min(9.0, 9.0 * fig_w / wanted_w))
    if ax is None:
        _, ax = plt.subplots(figsize=(fig_w, fig_h), layout="constrained")
        ax.figure.set_facecolor("white")
    parent = ax.figure
    figure = parent if isinstance(parent, Figure) else parent.figure
    assert isinstance(figure, Figure)
    ax.set_facecolor("white")
    ax.set_axis_off()
    # multipartite_layout spaces neighbours evenly; pad by about half a step.
    step_x = (max(xs) - min(xs)) / (widest - 1) if widest > 1 else 1.0
    step_y = (max(ys) - min(ys)) / bottom if bottom else 1.0
    ax.set_xlim(min(xs) - 0.6 * step_x, max(xs) + 0.6 * step_x)
    ax.set_ylim(min(ys) - 0.5 * step_y, max(ys) + 0.5 * step_y)

    boxes = []
    for x, y, label, style_name in zip(xs, ys, labels, styles, strict=True):
        _, boxstyle, fill, edge, width = _DRAW_STYLES[style_name]
        style = {"boxstyle": boxstyle, "facecolor": fill, "edgecolor": edge}
        text = ax.text(
            x,
            y,
            label,
            ha="center",
            va="center",
            fontsize=fontsize,
            color=_INK,
            zorder=3,
            bbox={**style, "linewidth": width},
        )
        boxes.append(text.get_bbox_patch())
    # Arrows are clipped to the boxes they join, so they are drawn after them.
    for i, kids in enumerate(children):
        for k in dict.fromkeys(kids):
            arrow = {"arrowstyle": "-|>", "color": _ARROW, "mutation_scale": 10}
            ax.annotate(
                "",
                xy=(xs[k], ys[k]),
                xytext=(xs[i], ys[i]),
                zorder=4,
                arrowprops={**arrow, "patchA": boxes[i], "patchB": boxes[k]},
            )

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
    return figure
