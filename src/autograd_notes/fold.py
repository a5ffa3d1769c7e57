"""Fold repeated module calls: consecutive calls of one structure are one entry.

With a :class:`.ModuleTrace`, the forward calls form a tree: the model's
call holds its blocks' calls, each block's call its layers'. Among the calls
made one after another inside one call (or outermost, in one thread),
:func:`find_folds` folds every run of two or more with the same structure:
the same node kinds, in the order they were made, the same links (inside
the call by position; a link out of the call counts, not where it goes), the
same shape, dtype and device of each gradient a node receives
(``Node._input_metadata``, kept after backward) and the same shapes and
dtypes of saved tensors, read as ``autograd_notes.saved`` does (behind
``save_on_cpu`` or a checkpoint too, never unpacked). A call with a saved
value that cannot be read and no input metadata (a torch without it) folds
with none: what cannot be told alike is not folded. Twelve transformer
blocks fold into ``h.0–h.11 × 12``, an ``LSTMCell`` stepped 70,000 times
into ``cell × 70,000``; one call that differs (the first step, whose state needs no
gradient) stays on its own. A call that folds with none is opened, and its
own calls are folded in turn, down to the view's depth.

The work is linear in the nodes: each node is read once per level opened
above it, and a call is compared with its neighbours only if it has as many
nodes as one of them.
"""

from __future__ import annotations

from typing import NamedTuple

from torch.autograd.graph import Node

from autograd_notes._torch import input_metadata, sequence_nr
from autograd_notes.labels import visible
from autograd_notes.saved import saved_shapes
from autograd_notes.trace import ModuleTrace
from autograd_notes.walk import LEAF, Graph, gc_paused
from autograd_notes.words import Words, english

# A signature: the kinds of a call's nodes, in the order made; each one's
# inputs (their positions, None outside the call); each one's saved shapes
# and the shape, dtype and device of each gradient it receives.
_Signature = tuple[
    list[str],
    list[tuple[int | None, ...]],
    list[tuple[object, ...]],
    list[list[tuple[object, ...]] | None],
]


class Fold(NamedTuple):
    """Consecutive calls of one structure: plain data, shown as one entry.

    Call ``j`` of the fold is call ``calls[j]`` of ``ModuleTrace.calls()``,
    call number ``call_index[j]`` of module ``paths[j]``; it made the graph nodes
    ``nodes[j]`` (walk indices, in the order made). ``leaves`` are the
    ``AccumulateGrad`` nodes of the folded modules' parameters.
    """

    calls: list[int]
    paths: list[str]
    call_index: list[int]
    nodes: list[list[int]]
    leaves: list[int]


def find_folds(
    graph: Graph,
    kinds: list[str],
    trace: ModuleTrace,
    depth: int | None,
    made_by: list[int] | None = None,
) -> tuple[list[Fold], list[int]]:
    """The folds of the graph, and each node's fold (-1: none).

    A call that folds with none is opened if ``depth`` is None or its path
    is shallower than ``depth``; deeper ones are left to the view's groups.
    ``made_by`` is ``trace.calls_of(graph.nodes)``, if already known.
    """
    nodes, starts, inputs = graph
    calls = trace.calls()
    if made_by is None:
        made_by = trace.calls_of(nodes)
    direct: dict[int, list[int]] = {}
    for i, c in enumerate(made_by):
        if c >= 0:
            direct.setdefault(c, []).append(i)
    children: dict[int, list[int]] = {}
    for c, parent in enumerate(calls.parents):  # calls in order of start
        key = parent if parent >= 0 else -2 - calls.threads[c]  # outermost: by thread
        children.setdefault(key, []).append(c)
    tops = sorted((k for k in children if k < -1), reverse=True)  # thread order

    def made_in(c: int) -> list[int]:
        found: list[int] = []
        stack = [c]
        while stack:
            d = stack.pop()
            found.extend(direct.get(d, ()))
            stack.extend(children.get(d, ()))
        return found

    def signature(members: list[int]) -> _Signature | None:
        """What is known of a call; None if too little to tell it from another."""
        members.sort(key=lambda i: sequence_nr(nodes[i]))
        position = dict(zip(members, range(len(members)), strict=True))
        made = [nodes[i] for i in members]
        saved = list(map(saved_shapes, made))
        received = list(map(_received, made))
        for shapes, metadata in zip(saved, received, strict=True):
            if metadata is None and any(isinstance(s, str) for s in shapes):
                return None  # a shape unread (freed, packed) and no metadata
        return (
            [kinds[i] for i in members],
            [
                tuple(map(position.get, inputs[starts[i] : starts[i + 1]]))
                for i in members
            ],
            saved,
            received,
        )

    folds: list[Fold] = []
    fold_of = [-1] * len(nodes)
    queue = [children[k] for k in tops]
    with gc_paused():  # reading saved tensors makes a million short-lived objects
        while queue:
            siblings = queue.pop(0)
            found = [(c, made_in(c)) for c in siblings]
            found = [(c, members) for c, members in found if members]
            sizes = [len(members) for _, members in found]
            runs: list[list[tuple[int, list[int]]]] = []
            last: _Signature | None = None
            for pos, (c, members) in enumerate(found):
                size = sizes[pos]
                alike = (pos > 0 and sizes[pos - 1] == size) or (
                    pos + 1 < len(sizes) and sizes[pos + 1] == size
                )
                mark = signature(members) if alike else None
                if mark is not None and mark == last:
                    runs[-1].append((c, members))
                else:
                    runs.append([(c, members)])
                last = mark
            for run in runs:
                if len(run) > 1:
                    for _, members in run:
                        for i in members:
                            fold_of[i] = len(folds)
                    folds.append(
                        Fold(
                            [c for c, _ in run],
                            [calls.paths[c] for c, _ in run],
                            [calls.call_index[c] for c, _ in run],
                            [members for _, members in run],
                            [],
                        )
                    )
                    continue
                c = run[0][0]
                path = calls.paths[c]
                if depth is None or (path.count(".") + 1 if path else 0) < depth:
                    queue.append(children.get(c, []))
    if folds:
        _add_leaves(graph, kinds, trace, folds, fold_of)
    return folds, fold_of


def _received(node: Node) -> list[tuple[object, ...]] | None:
    """Shape, dtype and device of each gradient ``node`` receives, or None.

    From ``Node._input_metadata`` (torch 2.13 to 2.15), which backward keeps.
    """
    metadata = input_metadata(node)
    if metadata is None:  # not in this torch, or a legacy Function
        return None
    found: list[tuple[object, ...]] = []
    for meta in metadata:
        try:
            found.append((meta.shape, meta.dtype, meta.device))
        except RuntimeError:  # a nested tensor has no single shape
            found.append(("nested", meta.dtype, meta.device))
    return found


def folds_to_depth(
    graph: Graph,
    kinds: list[str],
    trace: ModuleTrace,
    folds: list[Fold],
    depth: int,
) -> tuple[list[Fold], list[int]]:
    """What ``find_folds(..., depth)`` gives, from the folds of ``depth=None``.

    A fold is found at ``depth`` when every call above it is shallower than
    ``depth`` (those are the calls opened); leaves are given again.
    """
    calls = trace.calls()
    kept: list[Fold] = []
    fold_of = [-1] * len(graph.nodes)
    for fold in folds:
        c = calls.parents[fold.calls[0]]
        while c >= 0 and _path_depth(calls.paths[c]) < depth:
            c = calls.parents[c]
        if c >= 0:
            continue
        for members in fold.nodes:
            for i in members:
                fold_of[i] = len(kept)
        kept.append(fold._replace(leaves=[]))
    if len(kept) == len(folds):  # none dropped: the same folds and leaves
        for f, fold in enumerate(folds):
            for i in fold.leaves:
                fold_of[i] = f
        return folds, fold_of
    if kept:
        _add_leaves(graph, kinds, trace, kept, fold_of)
    return kept, fold_of


def _path_depth(path: str) -> int:
    return path.count(".") + 1 if path else 0


def _add_leaves(
    graph: Graph,
    kinds: list[str],
    trace: ModuleTrace,
    folds: list[Fold],
    fold_of: list[int],
) -> None:
    """Give each fold the parameter leaves that only its nodes take as inputs.

    A leaf joins a fold if every node that takes it as an input is in that
    fold (a leaf shared with nodes outside would draw a loop), and if its
    module is one of the fold's modules or inside one.
    """
    nodes, starts, inputs = graph
    paths = [set(fold.paths) for fold in folds]
    user_fold: dict[int, int] = {}  # leaf -> the fold of all its users, or -1
    for i in range(len(nodes)):
        f = fold_of[i]
        for k in inputs[starts[i] : starts[i + 1]]:
            if kinds[k] == LEAF and fold_of[k] < 0 and user_fold.setdefault(k, f) != f:
                user_fold[k] = -1
    for k, f in user_fold.items():
        if f < 0:
            continue
        path = trace.path_of(nodes[k])
        if path is None:
            continue
        parts = path.split(".") if path else []
        prefixes = {".".join(parts[:n]) for n in range(len(parts) + 1)}
        if prefixes & paths[f]:
            fold_of[k] = f
            folds[f].leaves.append(k)


def fold_title_words(fold: Fold) -> Words:
    """``h.0–h.11 × 12``, or ``cell × 70,000`` for calls of one module."""
    first, last, count = (
        visible(fold.paths[0]),
        visible(fold.paths[-1]),
        len(fold.calls),
    )
    if first == last:
        return [[("foldOne", first, count)]]
    return [[("foldRange", first, last, count)]]


def fold_title(fold: Fold) -> str:
    """The fold's title in English (:func:`fold_title_words`)."""
    return english(fold_title_words(fold))
