"""The view: the entries that every renderer shows, and their inputs.

:func:`build_view` walks the graph and makes one entry per node
(:func:`plain_view`), per run of same-kind nodes (:func:`collapse_runs`,
``collapse=True``: a million-step chain is two entries) or per module
(:func:`group_by_module`, with a :class:`.ModuleTrace` and a ``depth``).
With a trace, repeated module calls fold into one entry each
(``autograd_notes.fold``, ``fold=True``). :func:`entry_parts` says what an
entry shows. The text, DOT and drawing renderers lay out the same entries
with the same numbering, and check their shared arguments with
:func:`check_args`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from operator import sub
from typing import NamedTuple

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import (
    arg_error,
    check_bool,
    check_depth,
    check_torch,
    type_name,
)
from autograd_notes.fold import Fold, find_folds, fold_title, fold_title_words
from autograd_notes.labels import Names, index_names, outputs_text, short_leaf, visible
from autograd_notes.marks import node_marks, plain_kind, recorded
from autograd_notes.saved import saved_values
from autograd_notes.trace import ModuleTrace
from autograd_notes.walk import LEAF, Graph, as_node, leaf_of, walk
from autograd_notes.words import Phrase, Text, Words, english, kinds_clause

_Folding = Callable[[Graph, list[str], list[int]], tuple[list[Fold], list[int]]]

# A run of this many same-kind nodes, each the only input of the one before
# (and, with a module trace, all made by one module), collapses into one entry.
_MIN_RUN = 3


class View(NamedTuple):
    """Entries to show and their inputs, as flat index arrays like ``Graph``.

    Entry ``e`` shows ``sizes[e]`` nodes starting at node ``first[e]``: one
    node, a collapsed run (consecutive in walk order) or, where ``group[e]``
    is a module path or a fold's title, every node of that module or fold
    (``members[e]``; the fold itself is ``folds[e]``).
    """

    graph: Graph
    kinds: list[str]  # the printable class name of each node
    first: list[int]
    sizes: list[int]
    starts: list[int]
    inputs: list[int]
    group: list[str | None]
    members: dict[int, list[int]]
    module_of: list[str | None] | None  # module path of each node, if traced
    folds: dict[int, Fold]  # entry -> the calls it folds
    marked: bool  # nodes say their module: traced, no depth
    anomaly: bool  # anomaly mode recorded the graph: backward-made nodes are known

    def inputs_of(self, e: int) -> list[int]:
        return self.inputs[self.starts[e] : self.starts[e + 1]]

    def node_id(self, e: int) -> str:
        """``3`` for a node, ``3-9`` for a run; ``e`` itself for a group view."""
        if self.members:
            return str(e)
        first, count = self.first[e], self.sizes[e]
        return str(first) if count == 1 else f"{first}-{first + count - 1}"


def check_args(
    func: str,
    root: object,
    names: object,
    show_saved: object,
    collapse: object,
    modules: object,
    depth: object,
    fold: object = True,
) -> tuple[Node | None, Names]:
    """Check the arguments every renderer takes; the start node and the names."""
    node = as_node(root, func)
    index = index_names(names, func)
    check_bool(show_saved, func, "show_saved")
    if show_saved:
        check_torch(func, " with show_saved=True")
    check_bool(collapse, func, "collapse")
    check_bool(fold, func, "fold")
    if modules is not None and not isinstance(modules, ModuleTrace):
        expected = "a ModuleTrace (from track_modules()) or None"
        raise TypeError(arg_error(func, "modules", expected, type_name(modules)))
    check_depth(depth, func)
    if depth is None:
        return node, index
    if modules is None:
        expected = (
            "None without 'modules' (record them with track_modules(model) "
            "during the forward pass)"
        )
        raise ValueError(arg_error(func, "depth", expected, depth))
    return node, index


def build_view(
    root: Node,
    names: Names,
    collapse: bool,
    modules: ModuleTrace | None,
    depth: int | None,
    fold: bool = True,
    folding: _Folding | None = None,
) -> View:
    """Walk the graph behind ``root`` and make the view the arguments ask for.

    ``folding(graph, kinds, made_by)``, if given, finds the folds instead of
    ``find_folds`` (``made_by``: ``ModuleTrace.calls_of`` of the nodes).
    """
    graph = walk(root)
    types = list(map(type, graph.nodes))
    names_of = {kind: visible(kind.__name__) for kind in set(types)}
    kinds = list(map(names_of.__getitem__, types))  # one str object per kind
    made_by: list[int] = []
    module_of = None
    if modules is not None:  # one lookup per node: the call that made it
        made_by = modules.calls_of(graph.nodes)
        paths = modules.calls().paths
        module_of = [
            paths[c] if c >= 0 else modules.path_of(fn) if kind == LEAF else None
            for fn, kind, c in zip(graph.nodes, kinds, made_by, strict=True)
        ]
    flags = (module_of is not None and depth is None, recorded(graph.nodes))
    keys: list[str | int | None] | None = None
    if module_of is not None and depth is not None:  # the module at that depth
        keys = [
            None if not path else ".".join(path.split(".")[:depth])
            for path in module_of
        ]
    folds: list[Fold] = []
    runs: list[str | int | None] | None = list(module_of or ()) or None
    if fold and modules is not None:
        if folding is not None:
            folds, fold_of = folding(graph, kinds, made_by)
        else:
            folds, fold_of = find_folds(graph, kinds, modules, depth, made_by)
    if folds:  # a fold's nodes are one entry (an int key), the rest as before
        base = keys or [None] * len(fold_of)
        keys = [base[i] if f < 0 else f for i, f in enumerate(fold_of)]
        runs = [p if f < 0 else f for p, f in zip(runs or (), fold_of, strict=True)]
    if keys is not None:
        _own_shared_leaves(graph, kinds, keys)
    n = len(graph.nodes)
    # A run never crosses modules or folds: with a trace, its nodes share a path.
    heads = run_heads(graph, kinds, names, runs) if collapse else range(n)
    if keys is not None:
        return group_by_module(graph, kinds, heads, keys, module_of, folds, flags)
    if len(heads) == n:
        return plain_view(graph, kinds, module_of, flags)
    return collapse_runs(graph, kinds, heads, module_of, flags)


def _own_shared_leaves(
    graph: Graph, kinds: list[str], keys: list[str | int | None]
) -> None:
    """Take a leaf that nodes of other groups use out of its group, if the
    group links out: the links back into it could close a loop.

    A group that links only to itself (an embedding and its tied weight)
    keeps its leaves: no loop can pass through it.
    """
    _, starts, inputs = graph
    grouped = {i for i, key in enumerate(keys) if key is not None and kinds[i] == LEAF}
    if not grouped:
        return
    shared: set[int] = set()
    leaky: set[str | int] = set()  # groups that link out of themselves
    for i, key in enumerate(keys):
        for k in inputs[starts[i] : starts[i + 1]]:
            if keys[k] != key:
                if k in grouped:
                    shared.add(k)
                if key is not None:
                    leaky.add(key)
    for k in shared:
        if keys[k] in leaky:
            keys[k] = None


def plain_view(
    graph: Graph,
    kinds: list[str],
    module_of: list[str | None] | None,
    flags: tuple[bool, bool],
) -> View:
    """One entry per node."""
    n = len(graph.nodes)
    return View(graph, kinds, list(range(n)), [1] * n, graph.starts, graph.inputs,
                [None] * n, {}, module_of, {}, *flags)  # fmt: skip


def run_heads(
    graph: Graph,
    kinds: list[str],
    names: Names,
    paths: Sequence[str | int | None] | None,
) -> list[int]:
    """The first node of each run of ``_MIN_RUN`` or more, and every other node.

    Node ``i`` continues the run of ``i - 1`` when it is ``i - 1``'s only
    input, nothing else points to it, it has the same kind (and module path,
    where ``paths`` gives them), and no name of its own.
    """
    nodes, starts, inputs = graph
    n = len(nodes)
    if 1 not in map(sub, starts[1:], starts):  # no node has one input: no run
        return list(range(n))
    indegree: list[int] = []  # counted once a node may continue a run
    outputs = names.outputs
    heads = [0]
    for i in range(1, n):
        s = starts[i - 1]
        if starts[i] - s == 1 and inputs[s] == i and kinds[i] is kinds[i - 1]:
            if not indegree:
                indegree = [0] * n
                for k in inputs:
                    indegree[k] += 1
            if (
                indegree[i] == 1
                and (paths is None or paths[i] == paths[i - 1])
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
    return sorted(heads + short) if short else heads


def _runs(heads: Sequence[int], n: int) -> tuple[list[int], list[int]]:
    """The length of each run, and the run of each run's first node."""
    counts = [b - a for a, b in zip(heads, [*heads[1:], n], strict=True)]
    entry = [0] * n
    for e, head in enumerate(heads):
        entry[head] = e
    return counts, entry


def collapse_runs(
    graph: Graph,
    kinds: list[str],
    heads: Sequence[int],
    module_of: list[str | None] | None,
    flags: tuple[bool, bool],
) -> View:
    """One entry per run: its inputs are those of the run's last node."""
    _, starts, inputs = graph
    counts, entry = _runs(heads, len(graph.nodes))
    e_starts: list[int] = [0]
    e_inputs: list[int] = []
    for e, head in enumerate(heads):
        last = head + counts[e] - 1
        e_inputs.extend(entry[k] for k in inputs[starts[last] : starts[last + 1]])
        e_starts.append(len(e_inputs))
    return View(graph, kinds, list(heads), counts, e_starts, e_inputs,
                [None] * len(heads), {}, module_of, {}, *flags)  # fmt: skip


def group_by_module(
    graph: Graph,
    kinds: list[str],
    heads: Sequence[int],
    keys: list[str | int | None],
    module_of: list[str | None] | None,
    folds: list[Fold],
    flags: tuple[bool, bool],
) -> View:
    """One entry per key: a module path, or a fold's number; runs without a key stay.

    Links between entries are kept once each, and a module's links to itself
    are dropped.
    """
    _, starts, inputs = graph
    counts, entry = _runs(heads, len(graph.nodes))
    slot: dict[str | int, int] = {}
    shown: dict[int, Fold] = {}
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
            if isinstance(key, int):
                shown[g] = folds[key]
            group.append(key if isinstance(key, str) else fold_title(folds[key]))
            members[g] = []
        final[e] = g
        size = counts[e]
        count[g] += size
        if size == 1:
            members[g].append(head)
        else:
            members[g].extend(range(head, head + size))
    for g in range(len(first)):  # a view with groups marks every entry
        members.setdefault(g, list(range(first[g], first[g] + count[g])))
    links: list[dict[int, None]] = [{} for _ in first]
    for e, head in enumerate(heads):
        last = head + counts[e] - 1
        source = final[e]
        found, grouped = links[source], group[source] is not None
        for k in inputs[starts[last] : starts[last + 1]]:
            target = final[entry[k]]
            if target != source or not grouped:
                found[target] = None
    g_starts: list[int] = [0]
    g_inputs: list[int] = []
    for targets in links:
        g_inputs.extend(targets)
        g_starts.append(len(g_inputs))
    return View(graph, kinds, first, count, g_starts, g_inputs, group, members,
                module_of, shown, *flags)  # fmt: skip


def group_summary_words(view: View, e: int) -> Words:
    """``module: 4 nodes, AddmmBackward0, TBackward0, AccumulateGrad ×2``."""
    found = Counter(view.kinds[i] for i in view.members[e])
    return [[("moduleNodes", view.sizes[e]), *kinds_clause(found)]]


def group_summary(view: View, e: int) -> str:
    """:func:`group_summary_words` in English."""
    return english(group_summary_words(view, e))


def fold_summary_words(view: View, fold: Fold) -> Words:
    """``fold: calls 1–499 of cell, 14 nodes each, MulBackward0 ×5, ...``."""
    path, first, last = fold.paths[0], fold.call_index[0], fold.call_index[-1]
    what: Phrase = ("foldCalls", len(fold.calls))
    if path == fold.paths[-1]:
        what = ("foldCallsOf", first, last, visible(path))
        if not path:
            what = ("foldCallsOfModel", first, last)
    found = Counter(view.kinds[i] for i in fold.nodes[0])
    words = [[what, ("nodesEach", len(fold.nodes[0])), *kinds_clause(found)]]
    if fold.leaves:
        words.append([("leaves", len(fold.leaves))])
    return words


def fold_summary(view: View, fold: Fold) -> str:
    """:func:`fold_summary_words` in English."""
    return english(fold_summary_words(view, fold))


class Parts(NamedTuple):
    """What an entry says: ``title`` always, the rest where it applies."""

    title: str  # "MulBackward0", "MulBackward0 ×3", a module path or a fold
    note: str  # marks (marks.py), or a module group's or a fold's summary
    leaf: torch.Tensor | None  # the leaf of an AccumulateGrad node
    outputs: str  # "grad_fn of y"
    module: str  # "in block.0.mlp", with modules= and no depth


def entry_words(view: View, e: int) -> tuple[Text, Text]:
    """Entry ``e``'s title and note, as words (``to_html`` says them)."""
    group = view.group[e]
    fold = view.folds.get(e)
    if fold is not None:
        return fold_title_words(fold), fold_summary_words(view, fold)
    if group is not None:
        return visible(group), group_summary_words(view, e)
    i = view.first[e]
    kind = view.kinds[i]
    count = view.sizes[e]
    title = kind if count == 1 else f"{kind} ×{count:,}"
    marks = node_marks(view.graph.nodes[i], kind, view.anomaly)
    return title, [[mark] for mark in marks]


def entry_parts(view: View, e: int, names: Names, show_retained: bool) -> Parts:
    """What entry ``e`` of ``view`` shows."""
    title, note = map(english, entry_words(view, e))
    if view.group[e] is not None:
        return Parts(title, note, None, "", "")
    i = view.first[e]
    kind = view.kinds[i]
    fn = view.graph.nodes[i]
    leaf = leaf_of(fn) if kind == LEAF else None
    outputs = outputs_text(fn, names, show_retained)
    module = ""
    if view.module_of is not None and view.marked:
        path = view.module_of[i]
        if path is not None:
            module = f"in {visible(path) or 'the model'}"
    return Parts(title, note, leaf, outputs, module)


def label_lines(parts: Parts, names: Names) -> list[str]:
    """The lines of a picture's or a DOT node's label."""
    lines = [parts.title]
    if parts.leaf is not None:
        lines.append(short_leaf(parts.leaf, names, ": "))
    if parts.note:
        lines.append(f"({parts.note})")
    if parts.outputs:
        lines.append(f"({parts.outputs})")
    if parts.module:
        lines.append(f"[{parts.module}]")
    return lines


def saved_lines(view: View, e: int, show_saved: bool) -> list[str]:
    """``attr: description`` for what entry ``e`` saved (its first node's)."""
    if not show_saved or view.group[e] is not None:
        return []
    return [f"{a}: {text}" for a, text in saved_values(view.graph.nodes[view.first[e]])]


def shows_only_kind(view: View, node: Node, kind: str) -> bool:
    """Whether a lone, unnamed ``node`` of ``kind`` shows its kind and nothing else.

    Not a leaf (it shows the leaf), nor a node with a mark (``marks``).
    """
    return plain_kind(node, kind) and not view.anomaly
