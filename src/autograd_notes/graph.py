"""The backward graph behind a tensor: walk it, print it, export it, free it.

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
* :func:`.track_modules` records which module's forward made each node, so
  the three above can group a model's graph by module;
* :func:`.free_graph` frees a deep graph without crashing.

:func:`autograd_notes.draw_graph` (in :mod:`autograd_notes.drawing`) draws
the graph with matplotlib.

Every traversal uses an explicit stack, never recursion. Nodes are numbered
``[0]``, ``[1]``, ... in the order the walk first reaches them; no output
contains a memory address. By default a run of three or more nodes of one
kind, each the only input of the one before, prints as one entry with a
count (``collapse=True``), so a chain of a million steps prints in two lines.

Deep graphs and PyTorch 2.13+: once Python has seen a node, freeing the graph
recurses once per node in C and crashes the interpreter for graphs tens of
thousands of nodes deep (see the docs page "Known PyTorch issue: freeing a
deep graph crashes"). So after walking a graph of 1,000 nodes or more, these
functions hold each node's inputs for as long as the node lives, so the
``del`` that drops the tensor frees the nodes one at a time (no thread). It
is safe, and :func:`.free_graph` frees a graph right away.

matplotlib and networkx (``pip install matplotlib networkx``) and the
``graphviz`` package (``pip install graphviz``) are optional and
imported only by the function that needs them.
"""

from __future__ import annotations

import builtins
import functools
import gc
import os
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, cast

import torch
from torch.autograd.function import BackwardCFunction
from torch.autograd.graph import Node

from autograd_notes import _release

__all__ = [
    "ModuleTrace",
    "format_graph",
    "free_graph",
    "render_dot",
    "to_dot",
    "track_modules",
    "walk_graph",
]

_LEAF = "AccumulateGrad"
_COMPILED = "CompiledFunctionBackward"
_COMPILED_NOTE = "torch.compile region: internals hidden"
_FREED = "<freed by backward>"
# format_graph indents one step per branch; past this many steps it stops
# indenting, so a deep, branching graph still prints in linear size.
_MAX_INDENT = 64
# A run of this many same-kind nodes, each the only input of the one before,
# collapses into one entry.
_MIN_RUN = 3
# Walks of at least this many nodes hold the graph for safe freeing (see
# _release): freeing 1,000 seen nodes recursively needs about 200 KiB of stack.
_HOLD_MIN = 1_000
# render_dot refuses more nodes than this, after collapsing: Graphviz's layout
# time grows faster than linearly (a 200,000-leaf graph ran for minutes).
_MAX_RENDER_NODES = 2_000
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_DOT_HINT = "pip install graphviz"
_FORMATS = frozenset(
    ("bmp", "canon", "cmap", "cmapx", "dot", "dot_json", "eps", "fig", "gif",
     "gv", "imap", "ismap", "jpe", "jpeg", "jpg", "json", "json0", "pdf", "pic",
     "plain", "plain-ext", "png", "ps", "ps2", "svg", "svgz", "tif", "tiff", "tk",
     "vml", "vrml", "wbmp", "webp", "xdot", "xdot_json")
)  # fmt: skip


class _Graph(NamedTuple):
    """The nodes in visit order and their inputs, as flat index arrays.

    The inputs of ``nodes[i]`` are ``nodes[k]`` for ``k`` in
    ``inputs[starts[i]:starts[i + 1]]``, in ``next_functions`` order.
    """

    nodes: list[Node]
    starts: list[int]
    inputs: list[int]


class _Names(NamedTuple):
    """Names from a ``names`` mapping, looked up by object identity."""

    leaves: dict[int, str]  # id(leaf tensor) -> name; `names` keeps them alive
    outputs: dict[Node, list[tuple[str, bool]]]  # grad_fn -> [(name, retains)]


# -- input checks -------------------------------------------------------------


_F = TypeVar("_F", bound=Callable[..., Any])


def _runs_no_user_code(func: _F) -> _F:
    """Run ``func`` with ``__torch_function__`` off (subclasses and modes).

    Reading a tensor's ``grad_fn``, shape or dtype would otherwise call a
    subclass's ``__torch_function__``: user code, run by a read-only call.
    """

    @functools.wraps(func)
    def reading(*args: Any, **kwargs: Any) -> Any:
        with torch._C.DisableTorchFunction():
            return func(*args, **kwargs)

    return cast(_F, reading)


def _type_name(value: object) -> str:
    """The type of ``value`` for an error message, qualified where ambiguous.

    ``numpy.bool`` (``numpy.bool_`` before NumPy 2) reads like ``bool``; its
    module tells it apart.
    """
    kind = type(value)
    name = kind.__qualname__
    module = kind.__module__
    if module != "builtins" and hasattr(builtins, name.rstrip("_")):
        return f"{module}.{name}"
    return name


# The oldest torch whose nodes expose what show_saved and free_graph rely on
# (pyproject.toml's floor; an older one is reached only by overriding pip).
_TORCH_FLOOR = "2.13"


def _check_torch(func: str, feature: str) -> None:
    """Refuse ``feature`` on a torch below the floor instead of misbehaving."""
    if torch.torch_version.TorchVersion(torch.__version__) < _TORCH_FLOOR:
        raise RuntimeError(
            f"{func}(){feature} needs torch >= {_TORCH_FLOOR}; this is torch "
            f"{torch.__version__} (pip install 'torch>={_TORCH_FLOOR}')"
        )


def _as_node(root: object, func: str) -> Node | None:
    """The grad_fn to start from, or None for a tensor that has no graph."""
    if isinstance(root, torch.Tensor):
        return root.grad_fn
    if isinstance(root, Node):
        return root
    raise TypeError(
        f"{func}() argument 'root' must be a torch.Tensor or a "
        f"torch.autograd.graph.Node, not {_type_name(root)}"
    )


def _check_bool(value: object, arg: str, func: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(
            f"{func}() argument '{arg}' must be a bool, not {_type_name(value)}"
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
            f"not {_type_name(names)}"
        )
    seen: set[int] = set()
    for name, value in names.items():
        if not isinstance(value, torch.Tensor) or id(value) in seen:
            continue
        if not isinstance(name, str):
            raise TypeError(
                f"{func}() argument 'names' must have str keys, not {_type_name(name)}"
            )
        seen.add(id(value))
        grad_fn = value.grad_fn
        if grad_fn is None:
            found.leaves[id(value)] = name
        else:
            entry = (name, bool(value.retains_grad))
            found.outputs.setdefault(grad_fn, []).append(entry)
    return found


def _check_grouping(modules: object, depth: object, func: str) -> None:
    if modules is not None and not isinstance(modules, ModuleTrace):
        raise TypeError(
            f"{func}() argument 'modules' must be a ModuleTrace (from "
            f"track_modules()) or None, not {_type_name(modules)}"
        )
    if depth is None:
        return
    if not isinstance(depth, int) or isinstance(depth, bool):
        raise TypeError(
            f"{func}() argument 'depth' must be an int or None, not {_type_name(depth)}"
        )
    if depth < 1:
        raise ValueError(f"{func}() argument 'depth' must be at least 1, not {depth}")
    if modules is None:
        raise ValueError(
            f"{func}() argument 'depth' needs 'modules': record them with "
            "track_modules(model) during the forward pass"
        )


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
    Python object for a node for as long as the node lives. A graph of
    ``_HOLD_MIN`` nodes or more is handed to ``_release`` to be freed safely.
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
        graph = _Graph(nodes, starts, [index[fn] for fn in found])
        if len(nodes) >= _HOLD_MIN:
            _release.hold(index, root)
    return graph


@_runs_no_user_code
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
        without a ``grad_fn`` gives an empty list.

    Raises
    ------
    TypeError
        If ``root`` is neither a tensor nor a node.

    Notes
    -----
    The walk uses an explicit stack and runs in time linear in nodes plus
    edges. A graph of 1,000 nodes or more is then freed safely whenever it is
    dropped (see the module notes).

    Examples
    --------
    >>> import torch
    >>> x = torch.ones(3, requires_grad=True)
    >>> [type(node).__name__ for node in walk_graph((x * 2).sum())]
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> walk_graph(x)
    []
    """
    node = _as_node(root, "walk_graph")
    return [] if node is None else _walk(node).nodes


@_runs_no_user_code
def free_graph(tensor: torch.Tensor) -> int:
    """Detach ``tensor`` from its backward graph and free the graph safely.

    Use it to drop a graph that Python code has walked (this package's
    functions, torchviz, a loop over ``next_functions``): with PyTorch 2.13+
    dropping such a graph the ordinary way crashes the interpreter once it is
    tens of thousands of nodes deep. Works on any graph, chains and branching
    graphs alike.

    Parameters
    ----------
    tensor : torch.Tensor
        The output whose graph to free. It keeps its values, but afterwards
        has no ``grad_fn`` and does not require grad (``tensor.detach_()``).

    Returns
    -------
    int
        How many nodes were freed now. Nodes that other tensors still use
        are freed, one at a time, once those are dropped. A view cannot be
        detached in place: its graph is freed once the view is dropped.

    Raises
    ------
    TypeError
        If ``tensor`` is not a tensor.

    Examples
    --------
    >>> import torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> y = x
    >>> for _ in range(5):
    ...     y = y * 2
    >>> free_graph(y), y.grad_fn
    (6, None)
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(
            "free_graph() argument 'tensor' must be a torch.Tensor, "
            f"not {_type_name(tensor)}"
        )
    _check_torch("free_graph", "")
    root = tensor.grad_fn
    if root is None:
        return 0
    nodes = _walk(root).nodes
    del root
    if tensor._is_view():  # cannot be detached in place: freed once dropped
        return _release.free_now(lambda: None, nodes)
    return _release.free_now(tensor.detach_, nodes)


# -- modules ------------------------------------------------------------------

_NO_SEQUENCE = 2**64 - 1  # the sequence number of AccumulateGrad nodes


def _next_sequence_nr() -> int:
    """The sequence number the next node made in this thread will get."""
    peek = getattr(torch._C._autograd, "_get_sequence_nr", None)
    if peek is not None:
        return int(peek())
    with torch.enable_grad():  # older torch: make a throw-away node
        probe = torch.zeros((), requires_grad=True) * 1
    assert probe.grad_fn is not None
    return int(probe.grad_fn._sequence_nr()) + 1


class ModuleTrace:
    """Which module's forward made each node, as recorded by :func:`.track_modules`.

    Pass it as ``modules=`` to :func:`.format_graph`, :func:`.to_dot`,
    :func:`.render_dot` or :func:`autograd_notes.draw_graph`. Nodes are
    matched by their sequence number (``node._sequence_nr()``, given in
    order of creation), so recording touches no node. ``AccumulateGrad``
    nodes belong to the module that owns the parameter.

    Examples
    --------
    >>> import torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    >>> with track_modules(model) as trace:
    ...     out = model(torch.ones(1, 2)).sum()
    >>> trace.path_of(out.grad_fn.next_functions[0][0])
    '1'
    """

    def __init__(self) -> None:
        # (first, end, nesting depth, path) of every forward call
        self._records: list[tuple[int, int, int, str]] = []
        self._params: dict[int, tuple[torch.Tensor, str]] = {}
        self._table: tuple[list[int], list[int], list[str], list[int]] | None = None

    def _table_now(self) -> tuple[list[int], list[int], list[str], list[int]]:
        """Intervals sorted by start, outer before inner, with parent links.

        A wrapper whose first and last operations are its child's has the
        child's interval; the nesting depth puts the wrapper outside.
        """
        if self._table is None:
            records = sorted(self._records, key=lambda r: (r[0], -r[1], r[2]))
            parents: list[int] = []
            open_: list[int] = []
            for i, (first, *_) in enumerate(records):
                while open_ and records[open_[-1]][1] <= first:
                    open_.pop()
                parents.append(open_[-1] if open_ else -1)
                open_.append(i)
            firsts = [r[0] for r in records]
            ends = [r[1] for r in records]
            self._table = (firsts, ends, [r[3] for r in records], parents)
        return self._table

    def path_of(self, node: Node) -> str | None:
        """The dotted path of the innermost module whose forward made ``node``.

        Parameters
        ----------
        node : torch.autograd.graph.Node
            A node of a graph built while recording.

        Returns
        -------
        str or None
            ``""`` for a node made by the top model itself, ``None`` for a
            node made outside its forward (a loss, say).

        Raises
        ------
        TypeError
            If ``node`` is not a :class:`torch.autograd.graph.Node`.
        """
        if not isinstance(node, Node):
            raise TypeError(
                "ModuleTrace.path_of() argument 'node' must be a "
                f"torch.autograd.graph.Node (a grad_fn), not {_type_name(node)}"
            )
        if type(node).__name__ == _LEAF:
            leaf = _leaf_of(node)
            found = None if leaf is None else self._params.get(id(leaf))
            return None if found is None else found[1]
        firsts, ends, paths, parents = self._table_now()
        seq = int(node._sequence_nr())
        i = bisect_right(firsts, seq) - 1
        while i >= 0 and ends[i] <= seq:
            i = parents[i]
        return None if i < 0 else paths[i]


@contextmanager
def track_modules(model: torch.nn.Module) -> Iterator[ModuleTrace]:
    """Record which submodule of ``model`` makes each backward node.

    Inside the ``with`` block, every forward call of ``model`` and its
    submodules records the range of node sequence numbers it used. The
    :class:`.ModuleTrace` it yields then tells, for each node, the dotted path
    (as in ``model.named_modules()``) of the innermost module that made it.
    Forward hooks are removed on exit.

    Parameters
    ----------
    model : torch.nn.Module
        The model; all its submodules are tracked.

    Yields
    ------
    ModuleTrace
        Pass it as ``modules=`` to the printing functions.

    Raises
    ------
    TypeError
        If ``model`` is not a ``torch.nn.Module``.

    Examples
    --------
    >>> import torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
    >>> with track_modules(model) as trace:
    ...     loss = model(torch.ones(1, 2)).sum()
    >>> print(format_graph(loss, modules=trace, depth=1))
    [0] SumBackward0
    [1] 1  (module: 1 node, TanhBackward0)
    [2] 0  (module: 4 nodes, AccumulateGrad ×2, AddmmBackward0, TBackward0)
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(
            "track_modules() argument 'model' must be a torch.nn.Module, "
            f"not {_type_name(model)}"
        )
    trace = ModuleTrace()
    open_calls: list[tuple[str, int, int]] = []  # (path, first, depth)

    def before(path: str) -> object:
        def hook(module: torch.nn.Module, args: object) -> None:
            open_calls.append((path, _next_sequence_nr(), len(open_calls)))

        return hook

    def after(path: str) -> object:
        def hook(module: torch.nn.Module, args: object, output: object) -> None:
            while open_calls:
                opened, first, depth = open_calls.pop()
                if opened == path:
                    trace._records.append((first, _next_sequence_nr(), depth, path))
                    trace._table = None
                    return

        return hook

    handles = []
    for path, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(before(path)))
        handles.append(module.register_forward_hook(after(path), always_call=True))
        for _, param in module.named_parameters(recurse=False):
            trace._params.setdefault(id(param), (param, path))
    try:
        yield trace
    finally:
        for handle in handles:
            handle.remove()


# -- labels -------------------------------------------------------------------


def _visible(text: str) -> str:
    """``text`` with every unprintable character as an escape (``\\n``, ``\\x00``).

    Keeps each node on one line of text and makes any name safe in DOT.
    """
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _shape(t: torch.Tensor) -> str:
    """``(2, 3)``, or ``nested (2 tensors)`` for a strided nested tensor."""
    if t.is_nested and t.layout == torch.strided:  # it has no single shape
        count = t.size(0)
        return f"nested ({count} tensor{'' if count == 1 else 's'})"
    return str(tuple(t.shape))


def _leaf_text(t: torch.Tensor, name: str | None) -> str:
    """``a: leaf tensor, shape (2,), float32, requires_grad=True``."""
    kind = "leaf parameter" if isinstance(t, torch.nn.Parameter) else "leaf tensor"
    label = f"{_visible(name)}: {kind}" if name is not None else kind
    return f"{label}, shape {_shape(t)}, {_dtype(t)}, requires_grad={t.requires_grad}"


def _no_graph_text(t: torch.Tensor, names: _Names) -> str:
    text = _leaf_text(t, names.leaves.get(id(t)))
    return text if t.requires_grad else f"{text} (no graph)"


def _leaf_of(node: Node) -> torch.Tensor | None:
    variable = getattr(node, "variable", None)
    return variable if isinstance(variable, torch.Tensor) else None


def _short_leaf(t: torch.Tensor, name: str | None, sep: str = "\n") -> str:
    """``a``, ``sep``, ``(2,) float32``: the compact leaf label of pictures."""
    label = _visible(name) if name is not None else "leaf"
    return f"{label}{sep}{_shape(t)} {_dtype(t)}"


def _outputs_text(node: Node, names: _Names, show_retained: bool) -> str:
    """``grad_fn of y`` for named tensors whose grad_fn is ``node``."""
    entries = names.outputs.get(node)
    if not entries:
        return ""
    shown = [
        f"{_visible(name)} [retains grad]"
        if show_retained and retains
        else _visible(name)
        for name, retains in entries
    ]
    return "grad_fn of " + ", ".join(shown)


def _tensor_text(t: torch.Tensor) -> str:
    """Shape and dtype, and the value of a plain 0-dim CPU tensor.

    Nothing here dispatches to user code: the value is read only from a
    plain ``torch.Tensor`` (not a subclass, not a ``torch.func`` wrapper, no
    dispatch mode active), the rest comes from metadata.
    """
    if type(t) is not torch.Tensor:
        return f"<{_visible(type(t).__name__)}>"
    text = f"tensor of shape {_shape(t)}, {_dtype(t)}"
    if (
        t.dim() == 0
        and t.device.type == "cpu"
        and not torch._C._functorch.is_functorch_wrapped_tensor(t)
        and torch._C._len_torch_dispatch_stack() == 0
    ):
        with torch._C.DisableTorchFunction():
            text += f", value {t.item()!r}"
    return text


def _value_text(value: object) -> str:
    """A short, address-free description of one saved value."""
    if isinstance(value, torch.Tensor):
        return _tensor_text(value)
    if isinstance(value, tuple | list) and any(
        isinstance(item, torch.Tensor) for item in value
    ):
        items = [
            f"tensor of shape {_shape(item)}"
            if type(item) is torch.Tensor
            else _plain_repr(item)
            for item in value
        ]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return _plain_repr(value)


def _plain_repr(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"<{_visible(type(value).__name__)}>"
    simple = value is None or type(value) in (bool, int, float, str, torch.Size)
    if not simple and isinstance(value, tuple | list) and type(value) in (tuple, list):
        simple = all(type(item) in (bool, int, float) for item in value)
    if not simple:  # anything else might run user code in its repr
        return f"<{_visible(type(value).__name__)}>"
    text = repr(value)
    if _ADDRESS.search(text):
        return f"<{type(value).__name__}>"
    text = _visible(text)
    return text if len(text) <= 80 else text[:77] + "..."


def _packed_text(saved: object) -> str | None:
    """For a ``SavedTensor`` packed by hooks, a placeholder; else None.

    Unpacking would call the hook, which is user code (and, for a
    non-reentrant checkpoint, re-runs the forward), so it is never done.
    """
    hook = getattr(saved, "unpack_hook", None)
    if hook is None:
        return None
    if getattr(hook, "__module__", "") == "torch.utils.checkpoint":
        return "<not unpacked: recomputed by checkpoint in backward>"
    return "<not unpacked: saved_tensors_hooks>"


def _saved_tensor_text(node: Node, attr: str, raw: object) -> str:
    """Describe one ``SavedTensor`` (``node._raw_saved_*``) without unpacking."""
    packed = _packed_text(raw)
    if packed is not None:
        return _FREED if getattr(raw, "data", None) is None else packed
    data = getattr(raw, "data", None)
    if isinstance(data, torch.Tensor):
        return _tensor_text(data)
    try:  # no hooks: reading it runs no user code; tells unsaved from freed
        return _plain_repr(getattr(node, attr))
    except RuntimeError:
        return _FREED


def _saved_values(node: Node) -> list[tuple[str, str]]:
    """``(attribute, description)`` for what ``node`` saved for backward.

    Built-in nodes expose ``_saved_*`` attributes, custom ``Function`` nodes
    ``saved_tensors``. Saved tensors are read through their ``_raw_saved_*``
    twins, which never call ``saved_tensors_hooks`` unpack functions (nor
    re-run a checkpointed forward). Values freed by ``backward()`` show as
    ``<freed by backward>``.
    """
    saved: list[tuple[str, str]] = []
    if isinstance(node, BackwardCFunction):
        try:
            raws = node._raw_saved_tensors
        except RuntimeError:
            return [("saved_tensors", _FREED)]
        if not raws:
            return []
        items = []
        for raw in raws:
            packed = _packed_text(raw)
            data = getattr(raw, "data", None)
            if packed is not None:
                items.append(packed)
            elif isinstance(data, torch.Tensor):
                items.append(f"tensor of shape {_shape(data)}")
            else:
                items.append("None")
        text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return [("saved_tensors", text)]
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        raw_attr = "_raw" + attr
        try:
            if hasattr(node, raw_attr):
                raw = getattr(node, raw_attr)
                if isinstance(raw, list | tuple):
                    parts = [_saved_tensor_text(node, attr, item) for item in raw]
                    if any(part == _FREED for part in parts):
                        text = _FREED
                    else:
                        text = "[" + ", ".join(parts) + "]"
                else:
                    text = _saved_tensor_text(node, attr, raw)
            else:
                text = _value_text(getattr(node, attr))
        except RuntimeError:
            text = _FREED
        saved.append((attr, text))
    return saved


# -- the view: the graph as shown, after collapsing and grouping --------------


class _View(NamedTuple):
    """Entries to show and their inputs, as flat index arrays like ``_Graph``.

    Entry ``e`` shows ``sizes[e]`` nodes starting at node ``first[e]``: one
    node, a collapsed run (consecutive in walk order) or, where ``group[e]``
    is a module path, every node of that module (``members[e]``).
    """

    graph: _Graph
    first: list[int]
    sizes: list[int]
    starts: list[int]
    inputs: list[int]
    group: list[str | None]
    members: dict[int, list[int]]
    module_of: list[str | None] | None  # module path of each node, if traced

    def inputs_of(self, e: int) -> list[int]:
        return self.inputs[self.starts[e] : self.starts[e + 1]]

    def node_id(self, e: int) -> str:
        """``3`` for a node, ``3-9`` for a run; ``e`` itself for a group view."""
        if self.members:
            return str(e)
        first, count = self.first[e], self.sizes[e]
        return str(first) if count == 1 else f"{first}-{first + count - 1}"


def _type_names(nodes: list[Node]) -> list[str]:
    cache: dict[type, str] = {}
    names = []
    for fn in nodes:
        kind = type(fn)
        name = cache.get(kind)
        if name is None:
            name = cache[kind] = _visible(kind.__name__)
        names.append(name)
    return names


def _build_view(
    graph: _Graph,
    kinds: list[str],
    names: _Names,
    collapse: bool,
    modules: ModuleTrace | None,
    depth: int | None,
) -> _View:
    nodes, starts, inputs = graph
    n = len(nodes)
    module_of = None if modules is None else [modules.path_of(fn) for fn in nodes]
    keys: list[str | None] | None = None
    if module_of is not None and depth is not None:
        keys = [
            None if path is None or path == "" else ".".join(path.split(".")[:depth])
            for path in module_of
        ]
    if not collapse and keys is None:  # one entry per node
        ones = [1] * n
        return _View(graph, list(range(n)), ones, starts, inputs, [None] * n, {},
                     module_of)  # fmt: skip

    # Runs: node i continues the run of i - 1 when it is i - 1's only input,
    # nothing else points to it, it has the same kind and no name of its own.
    heads = [0]
    if collapse:
        indegree = [0] * n
        for k in inputs:
            indegree[k] += 1
        outputs = names.outputs
        for i in range(1, n):
            s = starts[i - 1]
            if (
                starts[i] - s == 1
                and inputs[s] == i
                and indegree[i] == 1
                and kinds[i] is kinds[i - 1]
                and (keys is None or keys[i] == keys[i - 1])
                and not (outputs and nodes[i] in outputs)
            ):
                continue
            heads.append(i)
        # A run shorter than _MIN_RUN stays as separate nodes.
        short: list[int] = []
        for pos, head in enumerate(heads):
            end = heads[pos + 1] if pos + 1 < len(heads) else n
            if 1 < end - head < _MIN_RUN:
                short.extend(range(head + 1, end))
        if short:
            heads = sorted(heads + short)
    else:
        heads = list(range(n))
    if len(heads) == n and keys is None:  # nothing collapsed: one entry per node
        ones = [1] * n
        return _View(graph, heads, ones, starts, inputs, [None] * n, {}, module_of)
    counts = [b - a for a, b in zip(heads, [*heads[1:], n], strict=True)]
    entry = [0] * n
    for e, head in enumerate(heads):
        entry[head] = e

    if keys is None:
        e_starts: list[int] = [0]
        e_inputs: list[int] = []
        for e, head in enumerate(heads):
            last = head + counts[e] - 1
            e_inputs.extend(entry[k] for k in inputs[starts[last] : starts[last + 1]])
            e_starts.append(len(e_inputs))
        return _View(graph, heads, counts, e_starts, e_inputs, [None] * len(heads),
                     {}, module_of)  # fmt: skip

    # Group: every run whose key is a module path joins that module's entry.
    slot: dict[str, int] = {}
    first: list[int] = []
    count: list[int] = []
    group: list[str | None] = []
    members: dict[int, list[int]] = {}
    final = [0] * len(heads)
    for e, head in enumerate(heads):
        key = keys[head]
        if key is None:
            final[e] = len(first)
            first.append(head)
            count.append(counts[e])
            group.append(None)
            continue
        g = slot.get(key)
        if g is None:
            g = slot[key] = len(first)
            first.append(head)
            count.append(0)
            group.append(key)
            members[g] = []
        final[e] = g
        count[g] += counts[e]
        members[g].extend(range(head, head + counts[e]))
    for g in range(len(first)):  # a view with groups marks every entry
        members.setdefault(g, list(range(first[g], first[g] + count[g])))
    links: list[dict[int, None]] = [{} for _ in first]
    for e, head in enumerate(heads):
        last = head + counts[e] - 1
        source = final[e]
        for k in inputs[starts[last] : starts[last + 1]]:
            target = final[entry[k]]
            if target != source or group[source] is None:
                links[source][target] = None
    g_starts: list[int] = [0]
    g_inputs: list[int] = []
    for targets in links:
        g_inputs.extend(targets)
        g_starts.append(len(g_inputs))
    return _View(graph, first, count, g_starts, g_inputs, group, members, module_of)


def _prepare(
    root: object,
    node: Node,
    names: _Names,
    collapse: bool,
    modules: ModuleTrace | None,
    depth: int | None,
) -> tuple[_View, list[str]]:
    graph = _walk(node)
    kinds = _type_names(graph.nodes)
    return _build_view(graph, kinds, names, collapse, modules, depth), kinds


def _group_summary(view: _View, kinds: list[str], e: int) -> str:
    """``module: 4 nodes, AddmmBackward0, TBackward0, AccumulateGrad ×2``."""
    found = Counter(kinds[i] for i in view.members[e])
    total = view.sizes[e]
    shown = [
        kind if times == 1 else f"{kind} ×{times:,}"
        for kind, times in found.most_common(3)
    ]
    if len(found) > 3:
        more = len(found) - 3
        shown.append(f"{more} more kind" + ("" if more == 1 else "s"))
    noun = "node" if total == 1 else "nodes"
    return f"module: {total:,} {noun}, " + ", ".join(shown)


class _Parts(NamedTuple):
    """What an entry says: ``title`` always, the rest where it applies."""

    title: str  # "MulBackward0", "MulBackward0 ×3" or a module path
    note: str  # the torch.compile note, or a module group's summary
    leaf: torch.Tensor | None  # the leaf of an AccumulateGrad node
    outputs: str  # "grad_fn of y"
    module: str  # "in block.0.mlp", with modules= and no depth


def _entry_parts(
    view: _View, kinds: list[str], e: int, names: _Names, show_retained: bool
) -> _Parts:
    group = view.group[e]
    if group is not None:
        summary = _group_summary(view, kinds, e)
        return _Parts(_visible(group), summary, None, "", "")
    i = view.first[e]
    kind = kinds[i]
    count = view.sizes[e]
    title = kind if count == 1 else f"{kind} ×{count:,}"
    fn = view.graph.nodes[i]
    note = _COMPILED_NOTE if kind == _COMPILED else ""
    leaf = _leaf_of(fn) if kind == _LEAF else None
    outputs = _outputs_text(fn, names, show_retained)
    module = ""
    if view.module_of is not None and not view.members:
        path = view.module_of[i]
        if path is not None:
            module = f"in {_visible(path) or 'the model'}"
    return _Parts(title, note, leaf, outputs, module)


def _text_line(parts: _Parts, names: _Names, grouped: bool) -> str:
    """``MulBackward0 ×3  (grad_fn of y)  [in fc1]``, without the number."""
    head = parts.title
    if parts.note:
        head += f"  ({parts.note})" if grouped else f" ({parts.note})"
    pieces = [head]
    if parts.leaf is not None:
        pieces.append(_leaf_text(parts.leaf, names.leaves.get(id(parts.leaf))))
    if parts.outputs:
        pieces.append(f"({parts.outputs})")
    if parts.module:
        pieces.append(f"[{parts.module}]")
    return "  ".join(pieces)


def _label_lines(parts: _Parts, names: _Names) -> list[str]:
    """The lines of a picture's or a DOT node's label."""
    lines = [parts.title]
    if parts.leaf is not None:
        lines.append(_short_leaf(parts.leaf, names.leaves.get(id(parts.leaf)), ": "))
    if parts.note:
        lines.append(f"({parts.note})")
    if parts.outputs:
        lines.append(f"({parts.outputs})")
    if parts.module:
        lines.append(f"[{parts.module}]")
    return lines


# -- text ---------------------------------------------------------------------


@_runs_no_user_code
def format_graph(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    show_saved: bool = False,
    show_retained: bool = False,
    collapse: bool = True,
    modules: ModuleTrace | None = None,
    depth: int | None = None,
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
        Under each node, list what it saved for backward, without running any
        user code: a value packed by ``saved_tensors_hooks`` or a checkpoint
        shows as ``<not unpacked: ...>``, a freed one as
        ``<freed by backward>``. A collapsed run lists its first node's.
    show_retained : bool, default False
        Mark named non-leaf tensors that called ``retain_grad()``.
    collapse : bool, default True
        Print a run of three or more nodes of one kind, each the only input
        of the one before and reached from nowhere else, as one entry
        ``[a-b] Kind ×count``. ``False`` prints every node.
    modules : ModuleTrace, optional
        From :func:`.track_modules`: each node is marked
        ``[in block.0.mlp]``, the module whose forward made it.
    depth : int, optional
        With ``modules``: show each module at this depth of its dotted path
        (1 for ``block``, 2 for ``block.0``) as one entry that lists how many
        nodes of which kinds it holds. Nodes made outside the model stay.

    Returns
    -------
    str
        One line per entry, without a trailing newline. Entries are numbered
        by walk order (:func:`.walk_graph`), or in order of appearance when
        grouped by module. A single input follows on the next line at the
        same indent, several inputs branch with ``├─``/``└─``, an entry
        reached again is a back-reference ``-> [3] AccumulateGrad (see
        above)``; branches deeper than 64 levels are not indented further.
        Unprintable characters in names appear as escapes (``\\n``). A
        tensor with no ``grad_fn`` gives one line describing it.

    Raises
    ------
    TypeError
        For a bad ``root``, ``names``, ``modules`` or ``depth``, or a flag
        that is not a bool.
    ValueError
        For ``depth`` below 1 or without ``modules``.

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
    >>> z = a
    >>> for _ in range(1000):
    ...     z = z * 1.5
    >>> print(format_graph(z))
    [0-999] MulBackward0 ×1,000
    [1000] AccumulateGrad  leaf tensor, shape (2,), float32, requires_grad=True
    """
    node = _as_node(root, "format_graph")
    index = _index_names(names, "format_graph")
    _check_bool(show_saved, "show_saved", "format_graph")
    if show_saved:
        _check_torch("format_graph", " with show_saved=True")
    _check_bool(show_retained, "show_retained", "format_graph")
    _check_bool(collapse, "collapse", "format_graph")
    _check_grouping(modules, depth, "format_graph")
    if node is None:
        assert isinstance(root, torch.Tensor)
        return _no_graph_text(root, index)

    view, kinds = _prepare(root, node, index, collapse, modules, depth)
    nodes = view.graph.nodes
    lines: list[str] = []
    emit = lines.append
    printed = [False] * len(view.first)
    grouped = bool(view.members)
    max_width = 3 * _MAX_INDENT
    # (entry, text before the entry, prefix for the lines under it)
    stack: list[tuple[int, str, str]] = [(0, "", "")]
    while stack:
        e, lead, under = stack.pop()
        if printed[e]:  # a back-reference names the entry, nothing more
            group = view.group[e]
            ref = view.node_id(e) if view.members else str(view.first[e])
            base = kinds[view.first[e]] if group is None else _visible(group)
            emit(f"{lead}-> [{ref}] {base} (see above)")
            continue
        printed[e] = True
        parts = _entry_parts(view, kinds, e, index, show_retained)
        emit(f"{lead}[{view.node_id(e)}] " + _text_line(parts, index, grouped))
        if show_saved and view.group[e] is None:
            for attr, text in _saved_values(nodes[view.first[e]]):
                emit(f"{under}    {attr}: {text}")
        kids = view.inputs_of(e)
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
_DOT_GROUP = 'shape=box3d, style=filled, fillcolor="#e9d8fd", color="#6b46c1"'


def _dot_escape(text: str) -> str:
    """One line of label text, quoted for DOT: nothing can end the string."""
    text = _visible(text)
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _dot_lines(
    root: object,
    node: Node | None,
    index: _Names,
    show_saved: bool,
    collapse: bool,
    modules: ModuleTrace | None,
    depth: int | None,
) -> list[str]:
    lines = list(_DOT_HEADER)
    emit = lines.append
    if node is None:
        assert isinstance(root, torch.Tensor)
        label = _dot_escape(_no_graph_text(root, index))
        emit(f'  n0 [label="{label}", {_DOT_LEAF}];')
        emit("}")
        return lines

    view, kinds = _prepare(root, node, index, collapse, modules, depth)
    nodes = view.graph.nodes
    outputs = index.outputs
    simple = not view.members and modules is None
    escaped: dict[str, str] = {}
    for e in range(len(view.first)):
        i = view.first[e]
        fn = nodes[i]
        kind = kinds[i]
        style = _DOT_GROUP if view.group[e] is not None else ""
        alone = simple and view.sizes[e] == 1 and not (outputs and fn in outputs)
        if alone and kind != _LEAF and kind != _COMPILED:
            label = escaped.get(kind) or escaped.setdefault(kind, _dot_escape(kind))
        elif alone and kind == _LEAF:  # a leaf: the other common case
            label = kind
            leaf = _leaf_of(fn)
            if leaf is not None:
                text = _short_leaf(leaf, index.leaves.get(id(leaf)), ": ")
                label += "\\n" + _dot_escape(text)
            style = _DOT_LEAF
        else:
            parts = _entry_parts(view, kinds, e, index, False)
            lines_ = _label_lines(parts, index)
            label = "\\n".join(_dot_escape(line) for line in lines_)
            if kind == _LEAF and not style:
                style = _DOT_LEAF
        if show_saved and view.group[e] is None:
            for attr, text in _saved_values(fn):
                label += "\\n" + _dot_escape(f"{attr}: {text}")
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


@_runs_no_user_code
def to_dot(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    show_saved: bool = False,
    collapse: bool = True,
    modules: ModuleTrace | None = None,
    depth: int | None = None,
) -> str:
    """Write the backward graph behind ``root`` as Graphviz DOT source text.

    Needs nothing but torch: paste the text into any Graphviz viewer, or
    render it with :func:`.render_dot`.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        The tensor (its ``grad_fn`` is the root of the graph) or a node.
    names, show_saved, collapse, modules, depth
        As for :func:`.format_graph`.

    Returns
    -------
    str
        A ``digraph`` whose node ids ``n0``, ``n1``, ... follow the entries
        of :func:`.format_graph`, so the text is the same on every run.
        Edges point from a node to its inputs, the way gradients flow. The
        root is an amber box, backward nodes blue rounded boxes, leaves green
        ellipses with the leaf's name, shape and dtype, module groups purple
        boxes. Every label is escaped: no name can break the DOT syntax.

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
    node = _as_node(root, "to_dot")
    index = _index_names(names, "to_dot")
    _check_bool(show_saved, "show_saved", "to_dot")
    if show_saved:
        _check_torch("to_dot", " with show_saved=True")
    _check_bool(collapse, "collapse", "to_dot")
    _check_grouping(modules, depth, "to_dot")
    return "\n".join(
        _dot_lines(root, node, index, show_saved, collapse, modules, depth)
    )


@_runs_no_user_code
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
) -> Path:
    """Render the backward graph behind ``root`` to an image file.

    Needs the ``graphviz`` Python package (``pip install graphviz``)
    and Graphviz's ``dot`` program on ``PATH``.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        What to draw, as for :func:`.to_dot`.
    filename : str or os.PathLike
        The file to write, exactly as given: no suffix is added or checked.
    format : str, default "svg"
        A Graphviz output format, lower case, such as ``"svg"``, ``"png"``
        or ``"pdf"``.
    names, show_saved, collapse, modules, depth
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
        For an unknown ``format``, a ``max_nodes`` below 1, or a graph larger
        than ``max_nodes``.
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
    node = _as_node(root, "render_dot")
    if not isinstance(filename, str | os.PathLike):
        raise TypeError(
            "render_dot() argument 'filename' must be a str or os.PathLike, "
            f"not {_type_name(filename)}"
        )
    if not isinstance(format, str):
        raise TypeError(
            f"render_dot() argument 'format' must be a str, not {_type_name(format)}"
        )
    if format not in _FORMATS:
        hint = f" (formats are lower case: {format.lower()!r})"
        raise ValueError(
            "render_dot() argument 'format' must be a Graphviz output format "
            f"such as 'svg', 'png' or 'pdf', not {format!r}"
            + (hint if format.lower() in _FORMATS else "")
        )
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool):
        raise TypeError(
            "render_dot() argument 'max_nodes' must be an int, "
            f"not {_type_name(max_nodes)}"
        )
    if max_nodes < 1:
        raise ValueError(
            f"render_dot() argument 'max_nodes' must be at least 1, not {max_nodes}"
        )
    index = _index_names(names, "render_dot")
    _check_bool(show_saved, "show_saved", "render_dot")
    if show_saved:
        _check_torch("render_dot", " with show_saved=True")
    _check_bool(collapse, "collapse", "render_dot")
    _check_grouping(modules, depth, "render_dot")
    try:
        import graphviz
    except ImportError as exc:
        raise ImportError(
            "render_dot() needs the graphviz Python package: "
            f"{_DOT_HINT} (or use to_dot() for the DOT text alone)"
        ) from exc
    lines = _dot_lines(root, node, index, show_saved, collapse, modules, depth)
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
        raise RuntimeError(
            "render_dot() needs Graphviz's 'dot' program on PATH, which was not "
            "found: install Graphviz (https://graphviz.org/download/, e.g. "
            "'apt install graphviz'), or use to_dot() for the DOT text alone"
        ) from exc
    path = Path(filename)
    path.write_bytes(data)
    return path


def __getattr__(name: str) -> object:
    """``draw_graph`` moved to :mod:`autograd_notes.drawing`; still found here."""
    if name == "draw_graph":
        from autograd_notes.drawing import draw_graph

        return draw_graph
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
