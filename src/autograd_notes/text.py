"""Print the backward graph behind a tensor as an indented tree.

:func:`.format_graph` prints the view's entries (``autograd_notes.view``) with
an explicit stack, never recursion, so a million-step chain prints (collapsed).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch.autograd.graph import Node

from autograd_notes._checks import check_bool
from autograd_notes.labels import Names, leaf_text, no_graph_text, visible
from autograd_notes.trace import ModuleTrace
from autograd_notes.view import (
    Parts,
    View,
    build_view,
    check_args,
    entry_parts,
    saved_lines,
)
from autograd_notes.walk import runs_no_user_code

__all__ = ["format_graph"]

# format_graph indents one step per branch; past this many steps it stops
# indenting, so a deep, branching graph still prints in linear size.
_MAX_INDENT = 64


def _text_line(parts: Parts, names: Names, grouped: bool) -> str:
    """``MulBackward0 ×3  (grad_fn of y)  [in fc1]``, without the number."""
    head = parts.title
    if parts.note:
        head += f"  ({parts.note})" if grouped else f" ({parts.note})"
    pieces = [head]
    if parts.leaf is not None:
        pieces.append(leaf_text(parts.leaf, names))
    if parts.outputs:
        pieces.append(f"({parts.outputs})")
    if parts.module:
        pieces.append(f"[{parts.module}]")
    return "  ".join(pieces)


@runs_no_user_code
def format_graph(
    root: torch.Tensor | Node,
    *,
    names: Mapping[str, object] | None = None,
    show_saved: bool = False,
    show_retained: bool = False,
    collapse: bool = True,
    modules: ModuleTrace | None = None,
    depth: int | None = None,
    fold: bool = True,
) -> str:
    """Print the backward graph behind ``root`` as an indented tree.

    Parameters
    ----------
    root : torch.Tensor or torch.autograd.graph.Node
        The tensor (its ``grad_fn`` is the top of the tree) or a node.
    names : mapping of str to object, optional
        Labels for tensors, matched by identity (``locals()``,
        ``dict(model.named_parameters())``); non-tensors are ignored, a tensor
        listed twice keeps its first name. A named leaf labels its
        ``AccumulateGrad`` node, a named non-leaf its ``grad_fn`` (``grad_fn of y``).
    show_saved : bool, default False
        List under each node (a collapsed run: its first) what it saved for
        backward, running no user code: ``<not unpacked: ...>`` for a value packed
        by ``saved_tensors_hooks`` or a checkpoint, ``<freed by backward>`` if freed.
    show_retained : bool, default False
        Mark named non-leaf tensors that called ``retain_grad()``.
    collapse : bool, default True
        Print a run of three or more nodes of one kind (and module), each the
        only input of the one before and reached from nowhere else, as one
        entry ``[a-b] Kind ×count``; ``False``: every node.
    modules : ModuleTrace, optional
        From :func:`.track_modules`: mark each node with its module, ``[in fc]``.
    depth : int, optional
        With ``modules``: each module at this depth of its path (1: ``block``, 2:
        ``block.0``) is one entry, with its nodes' kinds; nodes made outside stay.
    fold : bool, default True
        With ``modules``: consecutive calls of one structure are one entry at
        any depth, ``h.0–h.11 × 12`` (``autograd_notes.fold``); ``False``: not.

    Returns
    -------
    str
        One line per entry, no trailing newline, numbered in walk order
        (:func:`.walk_graph`; groups and folds ``[0]``, ``[1]``, ... as they
        appear). One input follows at the same indent, several branch (``├─``,
        ``└─``, 64 levels deep at most); an entry reached again is ``-> [3]
        AccumulateGrad (see above)``. Marks: ``autograd_notes.marks``. Names are
        escaped (``\\n``); a tensor with no ``grad_fn`` gives one line.

    Raises
    ------
    TypeError
        For a bad ``root``, ``names``, ``modules`` or ``depth``, or a non-bool flag.
    ValueError
        For ``depth`` below 1 or without ``modules``.

    Examples
    --------
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
    node, index = check_args(
        "format_graph", root, names, show_saved, collapse, modules, depth, fold
    )
    check_bool(show_retained, "format_graph", "show_retained")
    if node is None:
        assert isinstance(root, torch.Tensor)
        return no_graph_text(root, index)

    view = build_view(node, index, collapse, modules, depth, fold)
    return "\n".join(
        tree_lines(view, index, show_saved=show_saved, show_retained=show_retained)
    )


def tree_lines(
    view: View,
    names: Names,
    *,
    show_saved: bool = False,
    show_retained: bool = False,
    most: int | None = None,
) -> list[str]:
    """The lines of :func:`format_graph` for ``view``; the first ``most`` only."""
    lines: list[str] = []
    emit = lines.append
    printed = [False] * len(view.first)
    grouped = bool(view.members)
    max_width = 3 * _MAX_INDENT
    # (entry, text before the entry, prefix for the lines under it)
    stack: list[tuple[int, str, str]] = [(0, "", "")]
    while stack and (most is None or len(lines) < most):
        e, lead, under = stack.pop()
        if printed[e]:  # a back-reference names the entry, nothing more
            group = view.group[e]
            ref = view.node_id(e) if view.members else str(view.first[e])
            base = view.kinds[view.first[e]] if group is None else visible(group)
            emit(f"{lead}-> [{ref}] {base} (see above)")
            continue
        printed[e] = True
        parts = entry_parts(view, e, names, show_retained)
        emit(f"{lead}[{view.node_id(e)}] " + _text_line(parts, names, grouped))
        lines.extend(f"{under}    {line}" for line in saved_lines(view, e, show_saved))
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
    return lines if most is None else lines[:most]
