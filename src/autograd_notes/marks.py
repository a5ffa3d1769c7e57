"""Marks for nodes whose class name does not say what they are.

* ``CompiledFunctionBackward``: an opaque ``torch.compile`` region, whose
  own nodes are hidden;
* a custom ``torch.autograd.Function`` (its backward is the user's Python);
* a node made by a ``create_graph=True`` backward (double backward).

Torch 2.13 to 2.15 record which backward made a node only in anomaly mode
(``torch.autograd.set_detect_anomaly(True)`` around the backward): each node
made then keeps its maker in ``node.metadata``. Without that record
:func:`made_in_backward` answers ``None``: it cannot tell, and no node is
marked.
"""

from __future__ import annotations

from torch.autograd.function import BackwardCFunction
from torch.autograd.graph import Node

from autograd_notes.walk import LEAF
from autograd_notes.words import Phrase

COMPILED = "CompiledFunctionBackward"
# The marks, as keys of the table of words (autograd_notes.words): "torch.compile
# region: internals hidden", "custom autograd.Function", "made by a
# create_graph=True backward".
COMPILED_NOTE, CUSTOM_NOTE, BACKWARD_NOTE = ("compiled",), ("custom",), ("backward",)
# Keys anomaly mode stores in node.metadata (torch/csrc/autograd/python_anomaly_mode.h,
# unchanged since torch 1.x): every node made then has the first, a node made
# while a backward ran (create_graph=True) the second too.
_TRACE_KEY = "traceback_"
_PARENT_KEY = "parent_"
# How many nodes, from the root, are asked whether anomaly mode recorded them.
_PROBE = 64


def made_in_backward(node: Node) -> bool | None:
    """Whether a ``create_graph=True`` backward made ``node``; None: cannot tell.

    >>> import torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.autograd.set_detect_anomaly(True):
    ...     (g,) = torch.autograd.grad((x * x).sum(), x, create_graph=True)
    >>> made_in_backward(g.grad_fn), made_in_backward((x * 2).grad_fn)
    (True, None)
    """
    metadata: dict[str, object] = node.metadata  # type: ignore[assignment]
    if _PARENT_KEY in metadata:
        return True
    return False if _TRACE_KEY in metadata else None


def recorded(nodes: list[Node]) -> bool:
    """Whether anomaly mode recorded any of the first nodes (a graph's root side)."""
    return any(
        made_in_backward(node) is not None
        for node in nodes[:_PROBE]
        if type(node).__name__ != LEAF
    )


def node_marks(node: Node, kind: str, anomaly: bool) -> list[Phrase]:
    """The marks for ``node`` (class name ``kind``); ``anomaly``: ask its metadata."""
    marks: list[Phrase] = []
    if kind == COMPILED:
        marks.append(COMPILED_NOTE)
    elif isinstance(node, BackwardCFunction):
        marks.append(CUSTOM_NOTE)
    if anomaly and made_in_backward(node):
        marks.append(BACKWARD_NOTE)
    return marks


def plain_kind(node: Node, kind: str) -> bool:
    """Whether a node of class ``kind`` needs no mark but maybe the backward one."""
    return kind not in (LEAF, COMPILED) and not isinstance(node, BackwardCFunction)
