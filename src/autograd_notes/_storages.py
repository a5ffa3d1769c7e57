"""The storages a graph's nodes saved, found as ``autograd_notes.memory`` counts.

One pass over the nodes reads each saved value once, as
``autograd_notes.saved`` reads it (:func:`.saved_columns`: never unpacked,
no hook runs). A plain strided tensor saved without hooks, the common case,
takes a short path; anything else (hooks, checkpoints, ``ctx`` attributes,
meta tensors, subclasses) the full one.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate, repeat
from operator import add, attrgetter, itemgetter, lt, methodcaller
from typing import NamedTuple, cast

import torch
from torch.autograd.function import BackwardCFunction
from torch.autograd.graph import Node

from autograd_notes._torch import (
    checkpoint_frame,
    checkpoint_inputs,
    has_python_dispatch,
    is_functorch_wrapped,
    rng_states,
)
from autograd_notes.labels import visible
from autograd_notes.saved import Saved, read_saved, saved_columns, saved_items

_PLAIN = (torch.Tensor, torch.nn.Parameter)

# (device, storage address, storage bytes): one storage
Key = tuple[str, int, int]


class Skipped(NamedTuple):
    """A saved value not counted (``memory.NotCounted`` is made from it)."""

    node: int
    attribute: str
    reason: str


def has_storage(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` has a storage of its own to count.

    Not a ``__torch_dispatch__`` subclass (its storage is not real), not a
    ``torch.func`` wrapper, not sparse or nested.
    """
    if tensor.is_nested or is_functorch_wrapped(tensor):
        return False
    # the Python dispatch key: only a subclass can have it
    if type(tensor) not in _PLAIN and has_python_dispatch(tensor):
        return False
    return tensor.layout == torch.strided


class Saves:
    """What the nodes saved: each storage's saves ``(node, tensor)``, by key."""

    def __init__(self) -> None:
        self.saves: dict[Key, list[tuple[int, torch.Tensor]]] = {}
        self.skipped: list[Skipped] = []
        self.frames: set[int] = set()
        self.devices: dict[torch.device, str] = {}

    def read(self, nodes: list[Node]) -> None:
        """Read every value ``nodes`` saved (node ``i`` is ``nodes[i]``).

        Node classes one at a time, each ``_raw_saved_*`` name over all its
        nodes at once; values off the short path are read afterwards, in
        walk order, so skipped values and checkpoints come out as one pass
        over the nodes would find them.
        """
        by_class: dict[type, list[int]] = {}
        for i, kind in enumerate(map(type, nodes)):
            found = by_class.get(kind)
            if found is None:
                by_class[kind] = [i]
            else:
                found.append(i)
        later: list[tuple[int, int, Saved]] = []  # node, order, value
        for kind, indices in by_class.items():
            members = [nodes[i] for i in indices]
            if issubclass(kind, BackwardCFunction):
                for i, node in zip(indices, members, strict=True):
                    items = saved_items(node)
                    later.extend((i, k, item) for k, item in enumerate(items))
                continue
            columns = saved_columns(kind, members)
            for order, (attribute, datas, by_node) in enumerate(columns):
                if datas is not None:
                    self._read_column(indices, attribute, datas, order, later)
                    continue
                for i, node_items in zip(indices, by_node or (), strict=True):
                    later.extend((i, order, item) for item in node_items)
        later.sort(key=lambda entry: entry[:2])
        for i, _, item in later:
            self.add(i, item)

    def _read_column(
        self,
        indices: list[int],
        attribute: str,
        datas: list[object],
        order: int,
        later: list[tuple[int, int, Saved]],
    ) -> None:
        """One attribute of the nodes of one class, saved with no hooks: in bulk."""
        types = set(map(type, datas))
        if type(None) in types:  # not saved (no ``in``: a tensor's == is slow)
            indices = [i for i, d in zip(indices, datas, strict=True) if d is not None]
            datas = [d for d in datas if d is not None]
            types.discard(type(None))
        if not datas:
            return
        tensors = cast("list[torch.Tensor]", datas)
        plain = types == {torch.Tensor}  # a subclass's attributes may run its code
        wheres = set(map(attrgetter("device"), tensors)) if plain else set()
        if (
            len(wheres) != 1  # a subclass, or several devices
            or next(iter(wheres)).type == "meta"
            or set(map(attrgetter("layout"), tensors)) != {torch.strided}
            or any(map(attrgetter("is_nested"), tensors))
            or any(map(is_functorch_wrapped, tensors))
        ):  # the full rules, one value at a time
            later.extend(
                (i, order, read_saved(d, attribute))
                for i, d in zip(indices, datas, strict=True)
            )
            return
        where = next(iter(wheres))
        device = self.devices.setdefault(where, str(where))
        storages = list(map(methodcaller("untyped_storage"), tensors))
        keys = zip(
            repeat(device),
            map(methodcaller("data_ptr"), storages),
            map(methodcaller("nbytes"), storages),
        )
        saves = self.saves
        for key, save in zip(keys, zip(indices, tensors, strict=True), strict=True):
            found = saves.get(key)
            if found is None:
                saves[key] = [save]
            else:
                found.append(save)

    def add(self, i: int, item: Saved) -> None:
        """One saved value of node ``i``, by the full rules."""
        held = item.held_by
        if held is not None:
            recomputed = held == "checkpoint"
            if recomputed:
                reason = "recomputed by checkpoint"
            else:
                reason = "held by saved_tensors_hooks"
            self.skipped.append(Skipped(i, item.label, reason))
            hook = item.hook
            if recomputed and id(hook) not in self.frames:
                self.frames.add(id(hook))
                self.add_frame(i, checkpoint_frame(hook))
            return
        tensor = item.data
        if not isinstance(tensor, torch.Tensor):
            return  # not saved, or freed by backward
        attr = item.label
        where = tensor.device
        if where.type == "meta":
            self.skipped.append(Skipped(i, attr, "on the meta device (no data)"))
            return
        if not has_storage(tensor):
            kind = visible(type(tensor).__name__)
            reason = f"no storage to count ({kind}, {tensor.layout})"
            self.skipped.append(Skipped(i, attr, reason))
            return
        storage = tensor.untyped_storage()
        device = self.devices.get(where)
        if device is None:
            device = self.devices[where] = str(where)
        key = (device, storage.data_ptr(), storage.nbytes())
        self.saves.setdefault(key, []).append((i, tensor))

    def add_frame(self, i: int, frame: object | None) -> None:
        """What a non-reentrant checkpoint keeps to recompute from: inputs, RNG."""
        kept = None if frame is None else checkpoint_inputs(frame)
        rng = None if frame is None else rng_states(frame)
        for what, found in (("checkpoint inputs", kept), ("checkpoint RNG state", rng)):
            if found is None:
                reason = "kept by checkpoint where this torch hides it (cannot tell)"
                self.skipped.append(Skipped(i, what, reason))
        for k, raw in enumerate(kept or ()):
            self.add(i, read_saved(raw, f"checkpoint input {k}"))
        for k, state in enumerate(rng or ()):
            self.add(i, read_saved(state, f"checkpoint RNG state {k}"))

    def groups(self) -> tuple[list[Key], list[tuple[list[Key], int]]]:
        """Storages by address: those alone, and groups whose bytes overlap.

        A device where no two storages overlap (the common case) is checked
        in one pass over the sorted addresses; any other, one storage at a
        time. Each group comes with its bytes.
        """
        alone: list[Key] = []
        overlapping: list[tuple[list[Key], int]] = []
        devices = sorted({key[0] for key in self.saves})
        for device in devices:
            keys = sorted(k for k in self.saves if k[0] == device and k[2])
            starts = list(map(itemgetter(1), keys))
            ends = list(accumulate(map(add, starts, map(itemgetter(2), keys)), max))
            if not any(map(lt, starts[1:], ends)):
                alone.extend(keys)
                continue
            for members, size in _overlaps(keys):
                if len(members) == 1:
                    alone.append(members[0])
                else:
                    overlapping.append((members, size))
        return alone, overlapping


def _overlaps(keys: list[Key]) -> Iterator[tuple[list[Key], int]]:
    """Keys of one device, sorted by address, in groups whose bytes overlap."""
    members: list[Key] = []
    size = end = 0
    for key in keys:
        start, nbytes = key[1], key[2]
        if members and start < end:
            members.append(key)
            grown = max(end, start + nbytes)
            size += grown - end
            end = grown
            continue
        if members:
            yield members, size
        members, size, end = [key], nbytes, start + nbytes
    if members:
        yield members, size
