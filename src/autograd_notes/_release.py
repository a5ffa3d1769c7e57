"""Free deep backward graphs one node at a time, never by deep recursion.

Why this exists (measured with PyTorch 2.13, see the "Known PyTorch issue"
page of the docs): once Python has seen a node, the node keeps its Python
wrapper for the rest of its life. Freeing such a node then releases its
inputs from inside the wrapper's deallocation, which frees their wrappers,
and so on: one C stack frame chain per node, so dropping a graph tens of
thousands of nodes deep crashes the interpreter.

The cure used here: after a walk, this module holds a strong reference to the
wrapper of every node it saw (:func:`hold`). Dropping the user's tensor then
only drops a reference; nothing is freed. :func:`drain` frees the nodes that
nobody but this module still owns, one at a time: a node's inputs are held
here too, so freeing it cannot cascade. A daemon thread calls :func:`drain`
while anything is held, polling with a back-off (the graph holds no hook that
could tell it when the user's last reference went away). At exit, what is
still owned elsewhere is kept alive on purpose: the interpreter's teardown
would otherwise free it recursively.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable, Mapping

from torch.autograd.graph import Node

# Polling delays of the release thread, in seconds: short after progress,
# doubling while nothing can be freed.
_MIN_DELAY = 0.01
_MAX_DELAY = 0.5

_lock = threading.RLock()
_wake = threading.Event()
_held: dict[Node, object] = {}  # every node held, by its Python wrapper
_watch: dict[Node, None] = {}  # held nodes to look at on the next drain
_thread: threading.Thread | None = None
_hooks_installed = False
_stopping = False


def held_count() -> int:
    """How many nodes are held now (for tests and the docs)."""
    return len(_held)


def hold(nodes: Mapping[Node, object] | list[Node], root: Node) -> None:
    """Hold every node in ``nodes`` until nothing else owns it; watch ``root``.

    ``root`` is where freeing starts: every other node is only ever freed
    after a node that pointed to it was.
    """
    with _lock:
        if isinstance(nodes, dict):
            _held.update(nodes)
        else:
            _held.update(dict.fromkeys(nodes))
        _watch[root] = None
        _start()
    _wake.set()


def drain(among: set[int] | None = None) -> int:
    """Free every held node that nothing else owns; return how many.

    With ``among``, count only the nodes whose ``id`` is in it.

    A node is free to go when the only references to its wrapper are this
    module's. Its inputs stay held, so freeing it frees exactly one node;
    they are looked at next, in the same loop, never by recursion.
    """
    freed = 0
    with _lock:
        queued = dict(_watch)  # an ordered set: one reference per node
        held, watch = _held, _watch
        while queued:
            node, _ = queued.popitem()
            if node not in held:
                continue
            # References: `held`, `watch` if there, `node`, getrefcount's argument.
            if sys.getrefcount(node) > 3 + (node in watch):
                watch[node] = None  # still in use: look again later
                continue
            watch.pop(node, None)
            if among is None or id(node) in among:
                freed += 1
            for fn, _ in node.next_functions:
                if fn is not None and fn in held:
                    queued[fn] = None
            fn = None
            del held[node]
            del node  # frees it; its inputs survive, held, until their turn
    return freed


def free_now(detach: Callable[[], object], nodes: list[Node]) -> int:
    """Hold ``nodes`` (emptying the list), call ``detach``, free what is free.

    One lock is held throughout, so the release thread cannot free the graph
    first, and the count returned is complete.
    """
    with _lock:
        _held.update(dict.fromkeys(nodes))
        mine = {id(node) for node in nodes}
        nodes.clear()
        detach()
        watch_all()
        freed = drain(mine)
        if _held:
            _start()
    _wake.set()
    return freed


def watch_all() -> None:
    """Look at every held node on the next drain (after a tensor was detached)."""
    with _lock:
        _watch.update(dict.fromkeys(_held))


def _start() -> None:
    """Start the release thread and the exit hook, once each (lock held)."""
    global _thread, _hooks_installed
    if not _hooks_installed:
        atexit.register(_at_exit)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork)
        _hooks_installed = True
    if _thread is None and not _stopping:
        _thread = threading.Thread(
            target=_run, name="autograd-notes-graph-release", daemon=True
        )
        _thread.start()


def _run() -> None:
    """The release thread: drain while anything is held, then end."""
    global _thread
    delay = _MIN_DELAY
    while True:
        _wake.wait(delay)
        _wake.clear()
        with _lock:
            if _stopping:
                _thread = None
                return
            freed = drain()
            if not _held:
                _thread = None
                return
        delay = _MIN_DELAY if freed else min(2 * delay, _MAX_DELAY)


def _at_exit() -> None:
    """Free what can be freed; keep the rest alive through interpreter teardown.

    Teardown drops module globals in an order of its own: a tensor that still
    owns a held graph could be dropped after this module's dict, and then free
    the graph recursively. So what is still in use now is never released.
    """
    global _stopping
    with _lock:
        _stopping = True
        watch_all()
        drain()
        if _held:
            import ctypes

            keep = {"held": dict(_held), "watch": dict(_watch)}
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(keep))
    _wake.set()


def _after_fork() -> None:
    """In a forked child the release thread is gone: start a new one on demand."""
    global _thread, _lock
    _thread = None
    _lock = threading.RLock()
    if _held:
        with _lock:
            _start()
