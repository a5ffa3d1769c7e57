"""Write the backward graph behind a tensor as Graphviz DOT, or render it.

:func:`.to_dot` writes DOT source text and needs nothing but torch; its node
ids ``n0``, ``n1``, ... follow the entries of
:func:`autograd_notes.format_graph`. :func:`.render_dot` renders that text
to an image file with the optional ``graphviz`` package (``pip install
graphviz``), imported only when it is called.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes.labels import (
    Names,
    dtype,
    no_graph_text,
    shape,
    short_leaf,
    visible,
)
from autograd_notes.trace import ModuleTrace
from autograd_notes.view import (
    build_view,
    check_args,
    entry_parts,
    label_lines,
    saved_lines,
    shows_only_kind,
)
from autograd_notes.walk import LEAF, leaf_of, runs_no_user_code

__all__ = ["render_dot", "to_dot"]

# render_dot refuses more nodes than this, after collapsing: Graphviz's layout
# time grows faster than linearly (a 200,000-leaf graph ran for minutes).
_MAX_RENDER_NODES = 2_000
_DOT_HINT = "pip install graphviz"
_NO_DOT = (
    "render_dot() needs Graphviz's 'dot' program on PATH, which was not "
    "found: install Graphviz (https://graphviz.org/download/, e.g. "
    "'apt install graphviz'), or use to_dot() for the DOT text alone"
)
_FORMATS = frozenset(
    ("bmp", "canon", "cmap", "cmapx", "dot", "dot_json", "eps", "fig", "gif",
     "gv", "imap", "ismap", "jpe", "jpeg", "jpg", "json", "json0", "pdf", "pic",
     "plain", "plain-ext", "png", "ps", "ps2", "svg", "svgz", "tif", "tiff", "tk",
     "vml", "vrml", "wbmp", "webp", "xdot", "xdot_json")
)  # fmt: skip
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
_DOT_GROUP = 'shape=box3d, style=filled, fillcolor="#e9d8fd", color="#6b46c1"'


def _dot_escape(text: str) -> str:
    """One line of label text, quoted for DOT: nothing can end the string."""
    text = visible(text)
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _leaf_label(
    fn: Node, names: Names, tails: dict[tuple[torch.Size, torch.dtype], str]
) -> str:
    """The label of a lone leaf, as :func:`.label_lines` makes it, escaped.

    ``tails`` keeps the ``: (2,) float32`` part of each shape and dtype.
    """
    leaf = leaf_of(fn)
    if leaf is None:
        return LEAF
    if leaf.is_nested:  # no single shape
        return f"{LEAF}\\n{_dot_escape(short_leaf(leaf, names, ': '))}"
    key = (leaf.shape, leaf.dtype)
    tail = tails.get(key)
    if tail is None:
        tail = tails[key] = _dot_escape(f": {shape(leaf)} {dtype(leaf)}")
    name = names.leaves.get(id(leaf), "leaf")
    if not name.isprintable() or '"' in name or "\\" in name:
        name = _dot_escape(name)
    return f"{LEAF}\\n{name}{tail}"


def _dot_lines(
    root: object,
    node: Node | None,
    index: Names,
    show_saved: bool,
    collapse: bool,
    modules: ModuleTrace | None,
    depth: int | None,
    fold: bool,
) -> list[str]:
    lines = list(_DOT_HEADER)
    emit = lines.append
    if node is None:
        assert isinstance(root, torch.Tensor)
        emit(f'  n0 [label="{_dot_escape(no_graph_text(root, index))}", {_DOT_LEAF}];')
        emit("}")
        return lines

    view = build_view(node, index, collapse, modules, depth, fold)
    nodes, kinds, sizes = view.graph.nodes, view.kinds, view.sizes
    outputs = index.outputs
    simple = not view.members and modules is None
    quick: dict[str, str] = {}  # kind -> label, for kinds that show only that
    tails: dict[tuple[torch.Size, torch.dtype], str] = {}
    for e, i in enumerate(view.first):
        fn = nodes[i]
        kind = kinds[i]
        # The common entries, kept quick: a lone node that has no name.
        lone = simple and sizes[e] == 1 and not (outputs and fn in outputs)
        label = quick.get(kind) if lone else None
        style = ""
        if label is None and lone and kind == LEAF:
            label, style = _leaf_label(fn, index, tails), _DOT_LEAF
        elif label is None and lone and shows_only_kind(view, fn, kind):
            label = quick[kind] = _dot_escape(kind)
        elif label is None:
            parts = entry_parts(view, e, index, False)
            label = "\\n".join(_dot_escape(line) for line in label_lines(parts, index))
            if view.group[e] is not None:
                style = _DOT_GROUP
            elif kind == LEAF:
                style = _DOT_LEAF
        if show_saved:
            for line in saved_lines(view, e, show_saved):
                label += "\\n" + _dot_escape(line)
        if e == 0:
            style = _DOT_ROOT
        if style:
            emit(f'  n{e} [label="{label}", {style}];')
        else:
            emit(f'  n{e} [label="{label}"];')
    starts, inputs = view.starts, view.inputs
    for e in range(len(view.first)):
        for k in inputs[starts[e] : starts[e + 1]]:
            emit(f"  n{e} -> n{k};")
    emit("}")
    return lines


@runs_no_user_code
def to_dot(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    show_saved: bool = False,
    collapse: bool = True,
    modules: ModuleTrace | None = None,
    depth: int | None = None,
    fold: bool = True,
) -> str:
    """Write the backward graph behind ``root`` as Graphviz DOT source text.

    Needs nothing but torch: paste the text into any Graphviz viewer, or
    render it with :func:`.render_dot`.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        The tensor (its ``grad_fn`` is the root of the graph) or a node.
    names, show_saved, collapse, modules, depth, fold
        As for :func:`.format_graph`.

    Returns
    -------
    str
        A ``digraph`` whose node ids ``n0``, ``n1``, ... follow the entries
        of :func:`.format_graph`, so the text is the same on every run.
        Edges point from a node to its inputs, the way gradients flow. The
        root is an amber box, backward nodes blue rounded boxes, leaves green
        ellipses with the leaf's name, shape and dtype, module groups and
        folds purple boxes. Every label is escaped: no name can break the DOT syntax.

    Raises
    ------
    TypeError, ValueError
        As for :func:`.format_graph`.

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
    node, index = check_args(
        "to_dot", root, names, show_saved, collapse, modules, depth, fold
    )
    return "\n".join(
        _dot_lines(root, node, index, show_saved, collapse, modules, depth, fold)
    )


@runs_no_user_code
def render_dot(
    root: torch.Tensor | Node,
    filename: str | os.PathLike[str],
    *,
    format: str = "svg",
    names: Mapping[str, object] | None = None,
    show_saved: bool = False,
    collapse: bool = True,
    modules: ModuleTrace | None = None,
    depth: int | None = None,
    max_nodes: int = _MAX_RENDER_NODES,
    fold: bool = True,
) -> Path:
    """Render the backward graph behind ``root`` to an image file.

    Needs the ``graphviz`` Python package (``pip install graphviz``)
    and Graphviz's ``dot`` program on ``PATH``.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        What to draw, as for :func:`.to_dot`.
    filename : str or os.PathLike
        The file to write, in a folder that exists, exactly as given: no
        suffix is added or checked.
    format : str, default "svg"
        A Graphviz output format, lower case, such as ``"svg"``, ``"png"``
        or ``"pdf"``.
    names, show_saved, collapse, modules, depth, fold
        As for :func:`.format_graph`.
    max_nodes : int, default 2000
        Refuse graphs with more entries than this (after collapsing and
        grouping): Graphviz's layout time grows faster than the graph, and
        huge inputs can run for minutes or crash it.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    TypeError
        For a bad argument.
    ValueError
        Before any rendering: for a ``filename`` that is empty, a folder or in
        no folder; a ``format`` unknown or one the installed ``dot`` cannot
        write; a ``max_nodes`` below 1, or a graph larger than ``max_nodes``.
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
    func = "render_dot"
    node, index = check_args(
        func, root, names, show_saved, collapse, modules, depth, fold
    )
    path = _check_filename(filename, func)
    if not isinstance(format, str):
        raise TypeError(arg_error(func, "format", "a str", type_name(format)))
    if format not in _FORMATS:
        expected = "a Graphviz output format such as 'svg', 'png' or 'pdf'"
        bare = format.removeprefix(".").lower()  # ".SVG": a suffix, not a format
        hint = f" (formats are lower case, without a dot: {bare!r})"
        raise ValueError(
            arg_error(func, "format", expected, repr(format))
            + (hint if bare in _FORMATS else "")
        )
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool):
        raise TypeError(arg_error(func, "max_nodes", "an int", type_name(max_nodes)))
    if max_nodes < 1:
        raise ValueError(arg_error(func, "max_nodes", "at least 1", max_nodes))
    try:
        import graphviz
    except ImportError as exc:
        raise ImportError(
            "render_dot() needs the graphviz Python package: "
            f"{_DOT_HINT} (or use to_dot() for the DOT text alone)"
        ) from exc
    writable = writable_formats()
    if writable and format not in writable:
        expected = f"a format this Graphviz writes ({', '.join(sorted(writable))})"
        raise ValueError(arg_error(func, "format", expected, repr(format)))
    lines = _dot_lines(root, node, index, show_saved, collapse, modules, depth, fold)
    entries = sum(1 for line in lines if " [label=" in line)
    if entries > max_nodes:
        advice = (
            "group it by module (track_modules() with depth=1)"
            if modules is None or depth is None
            else "use a smaller depth"
        )
        raise ValueError(
            f"render_dot() renders at most max_nodes={max_nodes:,} nodes and this "
            f"graph has {entries:,}"
            + ("" if collapse else " (collapse=False)")
            + f"; {advice}, raise max_nodes, or use to_dot() or format_graph()"
        )
    try:
        data = graphviz.Source("\n".join(lines)).pipe(format=format)
    except graphviz.ExecutableNotFound as exc:
        raise RuntimeError(_NO_DOT) from exc
    path.write_bytes(data)
    return path


def _check_filename(filename: object, func: str) -> Path:
    """``filename`` as a path a file can be written to, else raise."""
    if not isinstance(filename, str | os.PathLike):
        expected = "a str or os.PathLike"
        raise TypeError(arg_error(func, "filename", expected, type_name(filename)))
    text = os.fspath(filename)
    if not isinstance(text, str):
        raise TypeError(arg_error(func, "filename", "a str path", repr(text)))
    expected = "the path of a file to write"
    if not text:
        raise ValueError(arg_error(func, "filename", expected, "''"))
    path = Path(text)
    if path.is_dir():
        raise ValueError(arg_error(func, "filename", expected, f"{text!r}, a folder"))
    folder = path.parent
    if not folder.is_dir():
        what = "a file" if folder.exists() else "missing"
        actual = f"{text!r}, whose folder {str(folder)!r} is {what}"
        raise ValueError(arg_error(func, "filename", f"{expected} in a folder", actual))
    return path


_ASKED: dict[str, frozenset[str]] = {}  # dot program -> the formats it writes


def writable_formats() -> frozenset[str]:
    """The formats the ``dot`` program on ``PATH`` writes, asked once (``dot -T?``).

    Empty if unknown: no ``dot`` (rendering then raises the install hint) or
    no list in its answer.
    """
    program = shutil.which("dot")
    if program is None:
        return frozenset()
    found = _ASKED.get(program)
    if found is None:
        try:
            done = subprocess.run(
                [program, "-T?"],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return frozenset()
        found = _ASKED[program] = parse_formats(done.stderr + done.stdout)
    return found


def parse_formats(message: str) -> frozenset[str]:
    """The formats in ``dot -T?``'s answer, ``... Use one of: bmp canon ...``.

    >>> sorted(parse_formats('Format: "?" not recognized. Use one of: png svg:cairo'))
    ['png', 'svg']
    """
    _, marker, listed = message.partition("Use one of:")
    if not marker:
        return frozenset()
    return frozenset(name.split(":")[0] for name in listed.split())
