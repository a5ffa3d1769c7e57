"""Free deep backward graphs one node at a time, never by deep recursion.

Why (see the docs page "Known PyTorch issue"): once Python has seen a node,
freeing it frees its inputs from inside its own deallocation, they free
theirs, and so on, one nest of C frames per node; dropping a walked graph
tens of thousands of nodes deep crashes the interpreter (torch 2.13.0 and
2.15.0 alike, :func:`holding_needed`).

The cure, with no thread and no reference counting: :func:`hold` gives a
walked node a marker in its ``metadata`` dict, which the node owns and frees
when it dies, and this module holds the node's inputs for as long as it
lives. So a marked node's death cannot free its inputs. It only records
itself (a weak-reference callback in C, so a fork cannot split it) and then,
from the marker, runs a drain: a loop that drops the held inputs of each
recorded node, one reference per step. An input that dies records itself,
and the loop that is already running frees its inputs in turn. Not every
node needs a marker: every node with several inputs and the walk's root get
one, and no path holds more than ``RUN`` unmarked nodes in a row, which free
each other recursively, a few KiB of stack. Everything is freed inside the
user's ``del``, on the thread that made it.

Threads: the drain takes a lock without waiting; a thread that cannot get it
leaves its record to the drain that holds it, which looks again after
letting go. Nothing blocks, and no record is left behind.
Fork: every step leaves the records and the held inputs consistent, so a
forked child, which gets a new lock, drains what its parent left half done.
Ctrl-C and other signals: :func:`holding_back` keeps SIGINT, and any signal
with a Python handler (an alarm-based timeout's), from running its handler
while the package's state is half done; it is delivered again once the drain
is over, and one caught inside ``del`` reaches the caller at its next
bytecode (:class:`_Trigger`).
Exit: what live tensors still own is kept, not freed, through interpreter
teardown, which would otherwise free it recursively.
"""

from __future__ import annotations

import _thread
import atexit
import os
import signal
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import ClassVar, cast

import torch
from torch.autograd.graph import Node

# The key of this module's marker in a node's metadata.
_KEY = "autograd_notes"
# The first torch release whose seen nodes free their inputs recursively (no
# release fixes it yet: 2.15.0 crashes too). Before it, nothing is held.
HOLDING_NEEDED_FROM = "2.13"
# At most this many unmarked nodes in a row on any path (about 7 KiB of stack
# to free them recursively; a marker on every node made a first walk 3x slower).
RUN = 32


def holding_needed(version: str = torch.__version__) -> bool:
    """Whether dropping a walked deep graph crashes this ``version`` of torch.

    >>> holding_needed("2.12.1"), holding_needed("2.15.0")
    (False, True)
    """
    return torch.torch_version.TorchVersion(version) >= HOLDING_NEEDED_FROM


_caught: list[int] = []  # signals held back
_replaced: dict[int, object] = {}  # signal -> the handler replaced, while held back


def _catch(signum: int, frame: object) -> None:
    _caught.append(signum)


@contextmanager
def holding_back() -> Iterator[list[int]]:
    """Hold back every signal a Python handler takes (SIGINT from Ctrl-C, an
    alarm), in the main thread; the list gets what came.

    Once when nested (the outer one gets them). The caller delivers them
    again with :func:`deliver`.
    """
    caught: list[int] = []
    handlers: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread() and not _replaced:
        for signum in signal.valid_signals():
            handler = signal.getsignal(signum)
            if callable(handler) and handler is not _catch:
                handlers[signum] = handler
    if not handlers:
        yield caught
        return
    try:
        for number, old in handlers.items():
            _replaced[number] = old
            signal.signal(number, _catch)
        yield caught
    finally:
        for number, replaced in _replaced.items():
            signal.signal(number, cast("Callable[[int, object], object]", replaced))
        _replaced.clear()
        caught += _caught
        _caught.clear()


def deliver(caught: list[int]) -> None:
    """Deliver the held-back signals again, here and now (not inside ``__del__``)."""
    signums = list(dict.fromkeys(caught))
    caught.clear()
    for signum in signums:  # (a real-time signal is a number, not a Signals)
        _thread.interrupt_main(cast("signal.Signals", signum))


class _Drain:
    """What is held, what died, and the loop that frees it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.dead: list[weakref.ref[_Marker]] = []  # markers of dead nodes
        self.record = self.dead.append  # the weak references' C callback
        self.one: dict[weakref.ref[_Marker], Node] = {}  # a node's only input
        self.many: dict[weakref.ref[_Marker], list[Node]] = {}  # or inputs
        self.stopped = False

    def __call__(self) -> list[int]:
        """Drop the inputs of every dead node; return the signals held back.

        Each step is one statement that leaves ``dead`` and the held inputs
        consistent, so a fork between any two of them loses nothing. A
        record stays in ``dead`` until its node's inputs are all dropped.
        """
        if not self.dead or self.stopped or self.lock.locked():
            return []
        with holding_back() as caught:
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
        return caught


_Callback = Callable[["_Interrupt"], object]


class _Interrupt(weakref.ref):  # type: ignore[type-arg]
    """A weak reference that reads as a signal, for :func:`_thread.interrupt_main`."""

    __slots__ = ("signum",)

    def __new__(cls, ob: object, callback: _Callback, signum: int) -> _Interrupt:
        return super().__new__(cls, ob, callback)

    def __init__(self, ob: object, callback: _Callback, signum: int) -> None:
        super().__init__(ob, callback)  # type: ignore[call-arg]
        self.signum = signum

    def __index__(self) -> int:
        return self.signum


_interrupts: list[_Interrupt] = []


class _Trigger:
    """Dies right after its marker is recorded; runs the drain.

    Nothing raised in ``__del__`` reaches the caller, so a signal held back
    there (Ctrl-C, an alarm) is delivered again by this object's own death,
    from C, once ``__del__`` has returned: the caller gets what its handler
    raises at its next bytecode.
    """

    __slots__ = ("__weakref__",)
    drain: ClassVar[_Drain]  # a class attribute outlives the module's globals

    def __del__(self) -> None:
        drain = type(self).drain
        if drain.lock.locked():
            return  # its holder sees the record
        caught = drain()
        if caught:
            _interrupts.clear()
            # A C callback taking the reference as its signal number; the
            # callbacks run last-made first.
            callback = cast("_Callback", _thread.interrupt_main)
            for signum in reversed(dict.fromkeys(caught)):
                _interrupts.append(_Interrupt(self, callback, signum))


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
    """How many marked nodes still have their inputs held (0 once all died)."""
    return len(_drain.one) + len(_drain.many)


def mark(nodes: Sequence[Node]) -> None:
    """Give each unmarked node of ``nodes`` a marker, holding its inputs first.

    ``nodes`` come last-first: a walk's root, marked last, is marked only once
    everything below it is held.
    """
    if not _hooks:
        _hooks.append(True)
        atexit.register(_at_exit)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork)
    record, one, many = _drain.record, _drain.one, _drain.many
    for node in nodes:
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


def chosen(starts: list[int], inputs: list[int]) -> Iterator[int]:
    """The walk indices to mark, last-first, so no path has ``RUN`` unmarked
    nodes in a row: every node with several inputs, every node whose input
    was reached before it, every ``RUN``-th of the rest, and the root."""
    run = [0] * (len(starts) - 1)  # unmarked nodes in a row, from each down
    for i in range(len(run) - 1, 0, -1):
        start = starts[i]
        if starts[i + 1] - start == 1:
            below = inputs[start]
            if below > i and run[below] + 1 < RUN:
                run[i] = run[below] + 1
                continue
        elif starts[i + 1] == start:
            continue  # no inputs: frees nothing
        yield i
    yield 0


def hold(nodes: list[Node], starts: list[int], inputs: list[int]) -> list[int]:
    """Hold what keeps the walked graph (``walk.Graph``) safe to free.

    A marked root means the graph was held before. Returns the signals held
    back by the drain run first, for the caller to re-raise.
    """
    caught = _drain()  # whatever a fork or an exception left behind
    if holding_needed() and _KEY not in _metadata(nodes[0]):
        mark([nodes[i] for i in chosen(starts, inputs)])
    return caught


def free_now(detach: Callable[[], object], nodes: list[Node]) -> int:
    """Hold ``nodes`` (emptying the list), call ``detach``, free what is free.

    Returns how many of ``nodes`` died during the call: all that nothing
    else owns, unless another thread's drain is still freeing them.
    """
    caught = _drain()
    mark(nodes[::-1])
    markers = [weakref.ref(_metadata(node)[_KEY]) for node in nodes]
    nodes.clear()
    detach()
    caught += _drain()
    deliver(caught)
    return sum(marker() is None for marker in markers)


def _after_fork() -> None:
    """In a forked child: the handlers back if another thread held their
    signals back, a new lock, then finish what the parent left."""
    for signum, handler in list(_replaced.items()):
        if signal.getsignal(signum) is _catch:
            signal.signal(signum, cast("Callable[[int, object], object]", handler))
    _replaced.clear()
    _drain.lock = threading.Lock()
    deliver(_drain())


def _at_exit() -> None:
    """Free what can be freed; keep the rest alive through teardown.

    Teardown drops objects in an order of its own, the held inputs perhaps
    before the tensors that use them; that would free a graph recursively.
    """
    _drain()
    _drain.stopped = True
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_drain))
