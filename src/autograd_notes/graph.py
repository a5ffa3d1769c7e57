"""The backward graph behind a tensor: walk it, print it, export it, draw it.

Calling an operation on a tensor that requires grad records a *node*
(``y.grad_fn``) that knows how to send a gradient back to the operation's
inputs. Each node lists the nodes it feeds in ``node.next_functions``, a tuple
of ``(node_or_None, input_nr)`` pairs, one per input (``None`` where that input
needs no gradient). Following those links from ``y.grad_fn`` reaches every
node that ``y.backward()`` will run, and ends at ``AccumulateGrad`` nodes, one
per leaf tensor, whose ``node.variable`` is the leaf that receives ``.grad``.

This module follows the links and shows what it found:

* :func:`.walk_graph` lists the nodes, each once, in a fixed order;
* :func:`.format_graph` prints them as an indented tree;
* :func:`.to_dot` writes Graphviz DOT source text (no Graphviz needed);
* :func:`.render_dot` renders that text to a file (needs Graphviz);
* :func:`.draw_graph` draws the graph with matplotlib.

Every traversal uses an explicit stack, never recursion, so a graph a million
nodes deep is fine. Nodes are told apart by identity while walking, but no
output ever contains a memory address: nodes are numbered ``[0]``, ``[1]``,
... in the order the walk first reaches them.

A caveat about very deep graphs, measured with PyTorch 2.13: once Python has
seen every node of a chain tens of thousands of nodes deep (any walk does,
this module's or a plain loop over ``next_functions``), freeing that graph
the ordinary way overflows the C stack and crashes the interpreter. To free
one safely, keep the list :func:`.walk_graph` returns, drop every tensor of the
graph, then drop the nodes root first: ``nodes.reverse(); del nodes``.

matplotlib and networkx (``pip install autograd-notes[plot]``) and the
``graphviz`` package (``pip install autograd-notes[dot]``) are optional and
imported only by the function that needs them.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import torch
from torch.autograd.function import BackwardCFunction
from torch.autograd.graph import Node

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch

__all__ = ["draw_graph", "format_graph", "render_dot", "to_dot", "walk_graph"]

_LEAF = "AccumulateGrad"
_COMPILED = "CompiledFunctionBackward"
_COMPILED_NOTE = "torch.compile region: internals hidden"
_FREED = "<freed by backward>"
# format_graph indents one step per branch; past this many steps it stops
# indenting, so a deep, branching graph still prints in linear size.
_MAX_INDENT = 64
# draw_graph refuses graphs larger than this: the labels would be unreadable.
_MAX_DRAW_NODES = 200
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PLOT_HINT = "pip install autograd-notes[plot]"
_DOT_HINT = "pip install autograd-notes[dot]"


class _Graph(NamedTuple):
    """The nodes in visit order and their inputs, as flat index arrays.

    The inputs of ``nodes[i]`` are ``nodes[k]`` for ``k`` in
    ``inputs[starts[i]:starts[i + 1]]``, in ``next_functions`` order.
    """

    nodes: list[Node]
    starts: list[int]
    inputs: list[int]

    def inputs_of(self, i: int) -> list[int]:
        return self.inputs[self.starts[i] : self.starts[i + 1]]


class _Names(NamedTuple):
    """Names from a ``names`` mapping, looked up by object identity."""

    leaves: dict[int, str]  # id(leaf tensor) -> name; `names` keeps them alive
    outputs: dict[Node, list[tuple[str, bool]]]  # grad_fn -> [(name, retains)]


# -- input checks -------------------------------------------------------------


def _as_node(root: object, func: str) -> Node | None:
    """The grad_fn to start from, or None for a tensor that has no graph."""
    if isinstance(root, torch.Tensor):
        return root.grad_fn
    if isinstance(root, Node):
        return root
    raise TypeError(
        f"{func}() argument 'root' must be a torch.Tensor or a "
        f"torch.autograd.graph.Node, not {type(root).__name__}"
    )


def _check_bool(value: object, arg: str, func: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(
            f"{func}() argument '{arg}' must be a bool, not {type(value).__name__}"
        )


def _index_names(names: Mapping[str, object] | None, func: str) -> _Names:
    """Index the tensors in ``names``; everything that is not a tensor is skipped.

    A tensor listed under several names keeps the first one, so ``locals()``
    with an alias still gives one label per tensor.
    """
    found = _Names({}, {})
    if names is None:
        return found
    if not isinstance(names, Mapping):
        raise TypeError(
            f"{func}() argument 'names' must be a mapping of name to tensor "
            f"(for example dict(model.named_parameters()) or locals()), "
            f"not {type(names).__name__}"
        )
    seen: set[int] = set()
    for name, value in names.items():
        if not isinstance(value, torch.Tensor) or id(value) in seen:
            continue
        if not isinstance(name, str):
            raise TypeError(
                f"{func}() argument 'names' must have str keys, "
                f"not {type(name).__name__}"
            )
        seen.add(id(value))
        grad_fn = value.grad_fn
        if grad_fn is None:
            found.leaves[id(value)] = name
        else:
            entry = (name, bool(value.retains_grad))
            found.outputs.setdefault(grad_fn, []).append(entry)
    return found


# -- walking ------------------------------------------------------------------


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector, restoring it afterwards.

    Walking allocates a few objects per node. On a graph of a million nodes
    the collector would otherwise run several full passes over everything
    alive in the process, which makes a walk about five times slower.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _walk(root: Node) -> _Graph:
    """Depth-first preorder over ``next_functions``, each node once.

    Inputs are taken in ``next_functions`` order and ``None`` edges are
    dropped. Nodes are told apart by identity: autograd hands out the same
    Python object for a node for as long as the node lives, and every node
    seen is kept in ``index`` until the walk ends.
    """
    nodes: list[Node] = []
    starts: list[int] = []
    found: list[Node] = []  # inputs, flat, as objects; made indices at the end
    index: dict[Node, int] = {}
    stack: list[Node] = [root]
    pop, push = stack.pop, stack.append
    with _gc_paused():
        while stack:
            node = pop()
            if node in index:
                continue
            index[node] = len(nodes)
            nodes.append(node)
            starts.append(len(found))
            edges = node.next_functions
            if len(edges) == 1:  # the common case, kept quick
                fn = edges[0][0]
                if fn is not None:
                    found.append(fn)
                    push(fn)
                continue
            inputs = [fn for fn, _ in edges if fn is not None]
            found.extend(inputs)
            inputs.reverse()  # pushed last-first, so popped in order
            stack.extend(inputs)
        starts.append(len(found))
        return _Graph(nodes, starts, [index[fn] for fn in found])


def walk_graph(root: torch.Tensor | Node) -> list[Node]:
    """List every node of the backward graph behind ``root``, each once.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        A tensor (its ``grad_fn`` is the start) or a node.

    Returns
    -------
    list of torch.autograd.graph.Node
        Depth-first preorder: a node comes before its inputs, and inputs are
        taken in ``next_functions`` order, skipping ``None``. A node reached
        by several paths appears once, where it is first reached. A tensor
        without a ``grad_fn`` (a leaf, or one that does not require grad)
        gives an empty list: a leaf's ``AccumulateGrad`` node only exists
        once some operation has used the leaf.

    Raises
    ------
    TypeError
        If ``root`` is neither a tensor nor a node.

    Notes
    -----
    The walk uses an explicit stack, so its depth is not limited by Python's
    recursion limit, and it runs in time linear in nodes plus edges. For a
    graph tens of thousands of nodes deep, see the module notes on freeing it.

    Examples
    --------
    >>> import torch
    >>> x = torch.ones(3, requires_grad=True)
    >>> y = (x * 2).sum()
    >>> [type(node).__name__ for node in walk_graph(y)]
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> walk_graph(x)
    []
    """
    node = _as_node(root, "walk_graph")
    return [] if node is None else _walk(node).nodes


# -- labels -------------------------------------------------------------------


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _leaf_text(t: torch.Tensor, name: str | None) -> str:
    """``a: leaf tensor, shape (2,), float32, requires_grad=True``."""
    kind = "leaf parameter" if isinstance(t, torch.nn.Parameter) else "leaf tensor"
    label = f"{name}: {kind}" if name is not None else kind
    return (
        f"{label}, shape {tuple(t.shape)}, {_dtype(t)}, requires_grad={t.requires_grad}"
    )


def _no_graph_text(t: torch.Tensor, names: _Names) -> str:
    text = _leaf_text(t, names.leaves.get(id(t)))
    return text if t.requires_grad else f"{text} (no graph)"


def _leaf_of(node: Node) -> torch.Tensor | None:
    variable = getattr(node, "variable", None)
    return variable if isinstance(variable, torch.Tensor) else None


def _outputs_text(node: Node, names: _Names, show_retained: bool) -> str:
    """``grad_fn of y`` for named tensors whose grad_fn is ``node``."""
    entries = names.outputs.get(node)
    if not entries:
        return ""
    shown = [
        f"{name} [retains grad]" if show_retained and retains else name
        for name, retains in entries
    ]
    return "grad_fn of " + ", ".join(shown)


def _value_text(value: object) -> str:
    """A short, address-free description of one saved value."""
    if isinstance(value, torch.Tensor):
        text = f"tensor of shape {tuple(value.shape)}, {_dtype(value)}"
        if value.dim() == 0 and value.device.type != "meta":
            text += f", value {value.item()!r}"
        return text
    if isinstance(value, tuple | list) and any(
        isinstance(item, torch.Tensor) for item in value
    ):
        items = [
            f"tensor of shape {tuple(item.shape)}"
            if isinstance(item, torch.Tensor)
            else _plain_repr(item)
            for item in value
        ]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return _plain_repr(value)


def _plain_repr(value: object) -> str:
    text = repr(value)
    if _ADDRESS.search(text):
        return f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def _saved_values(node: Node) -> list[tuple[str, str]]:
    """``(attribute, description)`` for what ``node`` saved for backward.

    Built-in nodes expose ``_saved_*`` attributes; custom ``Function`` nodes
    and ``torch.compile`` regions expose ``saved_tensors``. Reading any of
    them after ``backward()`` freed the graph raises ``RuntimeError``, shown
    here as ``<freed by backward>``.
    """
    if isinstance(node, BackwardCFunction):
        attrs = ["saved_tensors"]
    else:
        attrs = [attr for attr in dir(node) if attr.startswith("_saved_")]
    saved = []
    for attr in attrs:
        try:
            value = getattr(node, attr)
        except RuntimeError:
            saved.append((attr, _FREED))
            continue
        if attr == "saved_tensors" and not value:
            continue
        saved.append((attr, _value_text(value)))
    return saved


# -- text ---------------------------------------------------------------------


def format_graph(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    show_saved: bool = False,
    show_retained: bool = False,
) -> str:
    """Print the backward graph behind ``root`` as an indented tree.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        The tensor (its ``grad_fn`` is the top of the tree) or a node.
    names : mapping of str to object, optional
        Labels for tensors, matched by identity, e.g.
        ``dict(model.named_parameters())`` or ``locals()``. Values that are
        not tensors are ignored; a tensor listed twice keeps its first name.
        A named leaf labels its ``AccumulateGrad`` node; a named non-leaf
        tensor labels its ``grad_fn`` (``grad_fn of y``).
    show_saved : bool, default False
        Under each node, list what it saved for backward: ``_saved_*``
        attributes (``saved_tensors`` for custom ``Function`` and
        ``torch.compile`` nodes), tensors by shape and dtype, other values by
        ``repr``. Values already freed by ``backward()`` show as
        ``<freed by backward>``.
    show_retained : bool, default False
        Mark named non-leaf tensors that called ``retain_grad()`` with
        ``[retains grad]``. Only tensors in ``names`` can be found: the graph
        itself does not record which outputs retain their grad.

    Returns
    -------
    str
        One line per node, numbered ``[0]``, ``[1]``, ... in the order of
        :func:`.walk_graph`, without a trailing newline. A node's inputs
        follow it: a single input on the next line at the same indent (so a
        long chain stays flush left), several inputs as ``├─``/``└─``
        branches. A node reached again is a one-line back-reference,
        ``-> [3] AccumulateGrad (see above)``. Branches nested deeper than
        64 levels are not indented further. A tensor with no ``grad_fn`` gives
        one line describing it.

    Raises
    ------
    TypeError
        If ``root`` is neither a tensor nor a node, or ``names`` is not a
        mapping with str keys, or a flag is not a bool.

    Examples
    --------
    >>> import torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> b = torch.full((2,), 3.0, requires_grad=True)
    >>> y = (a * b + a).sum()
    >>> print(format_graph(y, names={"a": a, "b": b, "y": y}))
    [0] SumBackward0  (grad_fn of y)
    [1] AddBackward0
    ├─ [2] MulBackward0
    │  ├─ [3] AccumulateGrad  a: leaf tensor, shape (2,), float32, requires_grad=True
    │  └─ [4] AccumulateGrad  b: leaf tensor, shape (2,), float32, requires_grad=True
    └─ -> [3] AccumulateGrad (see above)
    >>> print(format_graph(a, names={"a": a}))
    a: leaf tensor, shape (2,), float32, requires_grad=True
    """
    node = _as_node(root, "format_graph")
    index = _index_names(names, "format_graph")
    _check_bool(show_saved, "show_saved", "format_graph")
    _check_bool(show_retained, "show_retained", "format_graph")
    if node is None:
        assert isinstance(root, torch.Tensor)
        return _no_graph_text(root, index)

    graph = _walk(node)
    nodes = graph.nodes
    lines: list[str] = []
    emit = lines.append
    printed = [False] * len(nodes)
    max_width = 3 * _MAX_INDENT
    # (node index, text before the node, prefix for the lines under it)
    stack: list[tuple[int, str, str]] = [(0, "", "")]
    while stack:
        i, lead, under = stack.pop()
        fn = nodes[i]
        kind = type(fn).__name__
        if printed[i]:
            emit(f"{lead}-> [{i}] {kind} (see above)")
            continue
        printed[i] = True
        parts = [f"[{i}] {kind}"]
        if kind == _COMPILED:
            parts[0] += f" ({_COMPILED_NOTE})"
        elif kind == _LEAF:
            leaf = _leaf_of(fn)
            if leaf is not None:
                parts.append(_leaf_text(leaf, index.leaves.get(id(leaf))))
        outputs = _outputs_text(fn, index, show_retained)
        if outputs:
            parts.append(f"({outputs})")
        emit(lead + "  ".join(parts))
        if show_saved:
            for attr, text in _saved_values(fn):
                emit(f"{under}    {attr}: {text}")
        kids = graph.inputs_of(i)
        if len(kids) == 1:
            stack.append((kids[0], under, under))
            continue
        deeper = len(under) < max_width
        last = len(kids) - 1
        for pos in range(last, -1, -1):  # pushed in reverse: popped in order
            branch = "└─ " if pos == last else "├─ "
            bar = "   " if pos == last else "│  "
            stack.append((kids[pos], under + branch, under + bar if deeper else under))
    return "\n".join(lines)


# -- DOT ----------------------------------------------------------------------

_DOT_HEADER = [
    "digraph autograd {",
    "  // Backward graph: edges point the way gradients flow,",
    "  // from the root (top) to the leaves (bottom).",
    '  graph [rankdir=TB, fontname="Helvetica"];',
    '  node [shape=box, style="rounded,filled", fontname="Helvetica", '
    'fontsize=10, fillcolor="#dbe7f5", color="#4a6fa5"];',
    '  edge [color="#555555", arrowsize=0.7];',
]
_DOT_ROOT = 'shape=box, style="filled,bold", fillcolor="#fbd38d", color="#b7791f"'
_DOT_LEAF = 'shape=ellipse, style=filled, fillcolor="#c6f0cf", color="#2f855a"'


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _short_leaf(t: torch.Tensor, name: str | None, sep: str = "\n") -> str:
    """``a``, ``sep``, ``(2,) float32``: the compact leaf label of pictures."""
    return f"{name if name is not None else 'leaf'}{sep}{tuple(t.shape)} {_dtype(t)}"


def to_dot(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    show_saved: bool = False,
) -> str:
    """Write the backward graph behind ``root`` as Graphviz DOT source text.

    Needs nothing but torch: the text can be pasted into any Graphviz viewer,
    or rendered with :func:`.render_dot`.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        The tensor (its ``grad_fn`` is the root of the graph) or a node.
    names : mapping of str to object, optional
        Tensor labels, matched by identity, as in :func:`.format_graph`.
    show_saved : bool, default False
        Add each node's saved values to its label, as in
        :func:`.format_graph`.

    Returns
    -------
    str
        A ``digraph``. Node ids are ``n0``, ``n1``, ... in
        :func:`.walk_graph` order, so the text is the same on every run.
        Edges point from a node to its inputs, the way gradients flow. The
        root is an amber box, other backward nodes are blue rounded boxes
        and ``AccumulateGrad`` leaves are green ellipses labelled with the
        leaf's name, shape and dtype. A tensor with no ``grad_fn`` gives a
        graph of one node.

    Raises
    ------
    TypeError
        If ``root`` is neither a tensor nor a node, ``names`` is not a
        mapping with str keys, or ``show_saved`` is not a bool.

    Examples
    --------
    >>> import torch
    >>> x = torch.ones(3, requires_grad=True)
    >>> print(to_dot((x * 2).sum(), names={"x": x}))  # doctest: +ELLIPSIS
    digraph autograd {
      ...
      n0 [label="SumBackward0", shape=box, ...];
      n1 [label="MulBackward0"];
      n2 [label="AccumulateGrad\\nx: (3,) float32", shape=ellipse, ...];
      n0 -> n1;
      n1 -> n2;
    }
    """
    node = _as_node(root, "to_dot")
    index = _index_names(names, "to_dot")
    _check_bool(show_saved, "show_saved", "to_dot")
    lines = list(_DOT_HEADER)
    emit = lines.append
    if node is None:
        assert isinstance(root, torch.Tensor)
        label = _dot_escape(_no_graph_text(root, index))
        emit(f'  n0 [label="{label}", {_DOT_LEAF}];')
        emit("}")
        return "\n".join(lines)

    nodes, starts, inputs = _walk(node)
    outputs = index.outputs
    for i, fn in enumerate(nodes):
        kind = type(fn).__name__
        label = kind
        style = ""
        if kind == _LEAF:
            leaf = _leaf_of(fn)
            if leaf is not None:
                text = _short_leaf(leaf, index.leaves.get(id(leaf)), ": ")
                label = f"{kind}\\n{_dot_escape(text)}"
            style = _DOT_LEAF
        elif kind == _COMPILED:
            label = f"{kind}\\n({_COMPILED_NOTE})"
        if outputs and fn in outputs:
            label += "\\n(" + _dot_escape(_outputs_text(fn, index, False)) + ")"
        if show_saved:
            for attr, text in _saved_values(fn):
                label += "\\n" + _dot_escape(f"{attr}: {text}")
        if i == 0:
            style = _DOT_ROOT
        if style:
            emit(f'  n{i} [label="{label}", {style}];')
        else:
            emit(f'  n{i} [label="{label}"];')
    for i in range(len(nodes)):
        for k in inputs[starts[i] : starts[i + 1]]:
            emit(f"  n{i} -> n{k};")
    emit("}")
    return "\n".join(lines)


def render_dot(
    root: torch.Tensor | Node,
    filename: str | os.PathLike[str],
    *,
    format: str = "svg",
    **kwargs: object,
) -> Path:
    """Render the backward graph behind ``root`` to an image file.

    Needs the ``graphviz`` Python package (``pip install autograd-notes[dot]``)
    and Graphviz's ``dot`` program on ``PATH``.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        What to draw, as for :func:`.to_dot`.
    filename : str or os.PathLike
        The file to write, exactly as given: no suffix is added or checked.
    format : str, default "svg"
        A Graphviz output format, such as ``"svg"``, ``"png"`` or ``"pdf"``.
    **kwargs
        Passed to :func:`.to_dot` (``names``, ``show_saved``).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    TypeError
        For a bad ``root``, ``filename``, ``format`` or keyword argument.
    ImportError
        If the ``graphviz`` package is missing.
    RuntimeError
        If Graphviz's ``dot`` program is not installed.

    Examples
    --------
    The example copes with a machine without Graphviz, where the call raises
    an error that says what to install:

    >>> import pathlib, tempfile, torch
    >>> x = torch.ones(3, requires_grad=True)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = pathlib.Path(tmp) / "graph.svg"
    ...     try:
    ...         written = render_dot((x * 2).sum(), out, names={"x": x})
    ...     except (ImportError, RuntimeError):
    ...         written = out  # no Graphviz here: the error says what to install
    >>> written.name
    'graph.svg'
    """
    _as_node(root, "render_dot")
    if not isinstance(filename, str | os.PathLike):
        raise TypeError(
            "render_dot() argument 'filename' must be a str or os.PathLike, "
            f"not {type(filename).__name__}"
        )
    if not isinstance(format, str):
        raise TypeError(
            f"render_dot() argument 'format' must be a str, not {type(format).__name__}"
        )
    unknown = sorted(set(kwargs) - {"names", "show_saved"})
    if unknown:
        raise TypeError(
            f"render_dot() got unexpected keyword argument(s) {', '.join(unknown)}; "
            "it passes only 'names' and 'show_saved' to to_dot()"
        )
    source = to_dot(root, **kwargs)  # type: ignore[arg-type]
    try:
        import graphviz
    except ImportError as exc:
        raise ImportError(
            "render_dot() needs the graphviz Python package: "
            f"{_DOT_HINT} (or use to_dot() for the DOT text alone)"
        ) from exc
    try:
        data = graphviz.Source(source).pipe(format=format)
    except graphviz.ExecutableNotFound as exc:
        raise RuntimeError(
            "render_dot() needs Graphviz's 'dot' program on PATH, which was not "
            "found: install Graphviz (https://graphviz.org/download/, e.g. "
            "'apt install graphviz'), or use to_dot() for the DOT text alone"
        ) from exc
    path = Path(filename)
    path.write_bytes(data)
    return path


# -- picture ------------------------------------------------------------------

# kind -> (legend label, box style, fill colour, edge colour, edge width)
_DRAW_STYLES = {
    "root": ("root", "round4,pad=0.5", "#fbd38d", "#b7791f", 1.6),
    "node": ("backward node", "square,pad=0.4", "#dbe7f5", "#4a6fa5", 1.0),
    "leaf": ("leaf (AccumulateGrad)", "round,pad=0.4,rounding_size=0.8", "#c6f0cf",
             "#2f855a", 1.0),
}  # fmt: skip
_INK = "#1b1f24"
_ARROW = "#555555"


def _draw_items(
    root: object, node: Node | None, names: _Names, show_saved: bool
) -> tuple[list[str], list[str], list[list[int]]]:
    """Label, kind (root, node or leaf) and inputs of each node, in walk order."""
    if node is None:
        assert isinstance(root, torch.Tensor)
        label = _short_leaf(root, names.leaves.get(id(root)))
        if not root.requires_grad:
            label += "\n(no graph)"
        return [label], ["leaf"], [[]]
    graph = _walk(node)
    nodes = graph.nodes
    if len(nodes) > _MAX_DRAW_NODES:
        raise ValueError(
            f"draw_graph() draws at most {_MAX_DRAW_NODES} nodes and this graph "
            f"has {len(nodes)}; use format_graph() or to_dot() for large graphs"
        )
    labels, kinds = [], []
    children = [graph.inputs_of(i) for i in range(len(nodes))]
    for i, fn in enumerate(nodes):
        kind = type(fn).__name__
        leaf = _leaf_of(fn) if kind == _LEAF else None
        lines = [
            kind if leaf is None else _short_leaf(leaf, names.leaves.get(id(leaf)))
        ]
        if kind == _COMPILED:
            lines.append(f"({_COMPILED_NOTE})")
        outputs = _outputs_text(fn, names, False)
        if outputs:
            lines.append(f"({outputs})")
        if show_saved:
            lines += [f"{attr}: {text}" for attr, text in _saved_values(fn)]
        labels.append("\n".join(lines))
        kinds.append("root" if i == 0 else "node" if children[i] else "leaf")
    return labels, kinds, children


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


def draw_graph(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    ax: Axes | None = None,
    show_saved: bool = False,
) -> Figure:
    """Draw the backward graph behind ``root`` with matplotlib.

    Needs matplotlib and networkx (``pip install autograd-notes[plot]``).
    networkx places the nodes (``multipartite_layout``) in layers: layer
    ``k`` holds the nodes whose longest path from the root has ``k`` steps,
    except that every node without inputs (a leaf) sits in the bottom layer.
    Within a layer, nodes keep :func:`.walk_graph` order, so the picture is
    the same on every run.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        What to draw, as for :func:`.format_graph`.
    names : mapping of str to object, optional
        Tensor labels, matched by identity, as in :func:`.format_graph`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into. By default a new figure is made with ``pyplot``
        (so sphinx-gallery and notebooks pick it up), sized to the graph, on
        a white background that looks the same in light and dark themes. The
        legend sits just above the axes: in a figure of your own, leave room
        for it (``layout="constrained"`` does).
    show_saved : bool, default False
        Add saved values to each node's label, as in :func:`.format_graph`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on; ``plt.show`` is not called. Arrows point the way
        gradients flow, from the root (top, amber) through backward nodes
        (blue boxes) to the leaves (bottom, green pills); a legend above the
        graph says so. Two edges between the same pair of nodes (``x * x``)
        are drawn as one arrow.

    Raises
    ------
    TypeError
        For a bad ``root``, ``names``, ``ax`` or ``show_saved``.
    ValueError
        For a graph of more than 200 nodes: use :func:`.format_graph` or
        :func:`.to_dot` instead.
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
            f"not {type(ax).__name__}"
        )
    labels, kinds, children = _draw_items(root, node, names_index, show_saved)

    # Layers: longest distance from the root; nodes without inputs at the bottom.
    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(labels)))
    dag.add_edges_from((i, k) for i, kids in enumerate(children) for k in kids)
    layer_of = {
        i: depth
        for depth, generation in enumerate(nx.topological_generations(dag))
        for i in generation
    }
    bottom = max(layer_of.values())
    layers: dict[int, list[int]] = {}
    for i, kids in enumerate(children):  # walk order within each layer
        layers.setdefault(layer_of[i] if kids else bottom, []).append(i)
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
    for x, y, label, kind in zip(xs, ys, labels, kinds, strict=True):
        _, boxstyle, fill, edge, width = _DRAW_STYLES[kind]
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

    handles = [
        FancyBboxPatch(
            (0, 0), 1, 1, boxstyle=boxstyle, facecolor=fill, edgecolor=edge, label=name
        )
        for name, boxstyle, fill, edge, _ in _DRAW_STYLES.values()
    ]
    legend = ax.legend(
        handles=handles,
        handler_map={FancyBboxPatch: HandlerPatch(_legend_box)},
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncols=3,
        frameon=False,
        fontsize=8,
        labelcolor=_INK,
        title="arrows show gradient flow, from the root to the leaves",
        title_fontsize=8,
    )
    legend.get_title().set_color(_INK)
    return figure
