"""Free deep backward graphs one node at a time, never by deep recursion.

Why (see the docs page "Known PyTorch issue"): once Python has seen a node,
freeing it frees its inputs from inside its own deallocation, they free
theirs, and so on, one nest of C frames per node; dropping a walked graph
tens of thousands of nodes deep crashes the interpreter (torch 2.13.0 and
2.15.0 alike, :func:`holding_needed`).

The cure, with no thread and no reference counting: :func:`hold` gives each
walked node a marker in its ``metadata`` dict, which the node owns and frees
when it dies, and this module holds the node's inputs for as long as it
lives. So a node's death cannot free its inputs. It only records itself (a
weak-reference callback in C, so a fork cannot split it) and then, from the
marker, runs a drain: a loop that drops the held inputs of each recorded
node, one reference per step. An input that dies records itself, and the
loop that is already running frees its inputs in turn. Everything is freed
inside the user's ``del``, on the thread that made it, at most two frees
deep.

Threads: the drain takes a lock without waiting; a thread that cannot get it
leaves its record to the drain that holds it, which looks again after
letting go. Nothing blocks, and no record is left behind.
Fork: every step leaves the records and the held inputs consistent, so a
forked child, which gets a new lock, drains what its parent left half done.
Exit: what live tensors still own is kept, not freed, through interpreter
teardown, which would otherwise free it recursively.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import ClassVar, cast

import torch
from torch.autograd.graph import Node

# The key of this module's marker in a node's metadata.
_KEY = "autograd_notes"
# The first torch release whose seen nodes free their inputs recursively (no
# release fixes it yet: 2.15.0 crashes too). Before it, nothing is held.
HOLDING_NEEDED_FROM = "2.13"


def holding_needed(version: str = torch.__version__) -> bool:
    """Whether dropping a walked deep graph crashes this ``version`` of torch.

    >>> holding_needed("2.12.1"), holding_needed("2.15.0")
    (False, True)
    """
    return torch.torch_version.TorchVersion(version) >= HOLDING_NEEDED_FROM


class _Drain:
    """What is held, what died, and the loop that frees it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.dead: list[weakref.ref[_Marker]] = []  # markers of dead nodes
        self.record = self.dead.append  # the weak references' C callback
        self.one: dict[weakref.ref[_Marker], Node] = {}  # a node's only input
        self.many: dict[weakref.ref[_Marker], list[Node]] = {}  # or inputs
        self.stopped = False

    def __call__(self) -> None:
        """Drop the inputs of every dead node, one reference per step.

        Each step is one statement that leaves ``dead`` and the held inputs
        consistent, so a fork between any two of them loses nothing. A
        record stays in ``dead`` until its node's inputs are all dropped.
        """
        dead, one, many = self.dead, self.one, self.many
        while dead and not self.stopped and self.lock.acquire(blocking=False):
            try:
                while dead and not self.stopped:
                    last = len(dead) - 1
                    ref = dead[last]
                    if ref in one:
                        del one[ref]  # may free the input: it records itself
                    elif many.get(ref):
                        del many[ref][-1]
                    else:
                        many.pop(ref, None)
                        del dead[last]
            finally:
                self.lock.release()


class _Trigger:
    """Dies right after its marker is recorded; runs the drain."""

    __slots__ = ()
    drain: ClassVar[_Drain]  # a class attribute outlives the module's globals

    def __del__(self) -> None:
        drain = type(self).drain
        if not drain.lock.locked():  # else its holder will see the record
            drain()


class _Marker:
    """Lives in one node's metadata, so it dies with the node."""

    __slots__ = ("__weakref__", "trigger")
    trigger: _Trigger


_Trigger.drain = _drain = _Drain()
_hooks: list[bool] = []  # [True] once the fork and exit hooks are installed


def _metadata(node: Node) -> dict[str, object]:
    """The node's metadata dict (typed as a method in torch's stubs)."""
    return cast("dict[str, object]", node.metadata)


def held_count() -> int:
    """How many walked nodes still have their inputs held (0 once all died)."""
    return len(_drain.one) + len(_drain.many)


def _mark(nodes: Mapping[Node, object] | list[Node]) -> None:
    """Give each unmarked node a marker, holding its inputs first."""
    if not _hooks:
        _hooks.append(True)
        atexit.register(_at_exit)
        os.register_at_fork(after_in_child=_after_fork)
    record, one, many = _drain.record, _drain.one, _drain.many
    for node in reversed(list(nodes)):  # the first node (a root) last
        metadata = _metadata(node)
        if _KEY in metadata:
            continue
        marker = _Marker()
        edges = node.next_functions
        if len(edges) == 1 and edges[0][0] is not None:  # the common case
            marker.trigger = _Trigger()
            one[weakref.ref(marker, record)] = edges[0][0]
        elif inputs := [fn for fn, _ in edges if fn is not None]:
            marker.trigger = _Trigger()  # (a leaf's death frees nothing)
            many[weakref.ref(marker, record)] = inputs
        metadata[_KEY] = marker


def hold(nodes: Mapping[Node, object] | list[Node], root: Node) -> None:
    """Hold the inputs of every node in ``nodes`` for as long as it lives.

    ``nodes`` is everything reachable from ``root``. A marked root means the
    whole graph was marked before, so nothing is left to do.
    """
    _drain()  # whatever a fork or an exception left behind
    if holding_needed() and _KEY not in _metadata(root):
        _mark(nodes)


def free_now(detach: Callable[[], object], nodes: list[Node]) -> int:
    """Hold ``nodes`` (emptying the list), call ``detach``, free what is free.

    Returns how many of ``nodes`` died during the call: all that nothing
    else owns, unless another thread's drain is still freeing them.
    """
    _drain()
    _mark(nodes)
    markers = [weakref.ref(_metadata(node)[_KEY]) for node in nodes]
    nodes.clear()
    detach()
    _drain()
    return sum(marker() is None for marker in markers)


def _after_fork() -> None:
    """In a forked child: a new lock, then finish what the parent left."""
    _drain.lock = threading.Lock()
    _drain()


def _at_exit() -> None:
    """Free what can be freed; keep the rest alive through teardown.

    Teardown drops objects in an order of its own, the held inputs perhaps
    before the tensors that use them; that would free a graph recursively.
    """
    _drain()
    _drain.stopped = True
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_drain))
