"""The storages a graph's nodes saved, found as ``autograd_notes.memory`` counts.

One pass over the nodes reads each saved value once, through its raw
``SavedTensor`` (never unpacked: no hook runs). A plain strided tensor saved
without hooks, the common case, takes a short path; anything else (hooks,
checkpoints, ``ctx`` attributes, meta tensors, subclasses) the full one.
What is read per node class (the ``_raw_saved_*`` names) is read once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import torch
from torch.autograd.function import BackwardCFunction
from torch.autograd.graph import Node

from autograd_notes.labels import visible

CHECKPOINT = "torch.utils.checkpoint"
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_SavedTensor = torch._C._autograd.SavedTensor
_wrapped = torch._C._functorch.is_functorch_wrapped_tensor

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
    if tensor.is_nested or _wrapped(tensor):
        return False
    if type(tensor) not in _PLAIN:  # the Python key only a subclass can have
        keys = torch._C._dispatch_keys(tensor)
        if keys.has(torch._C.DispatchKey.Python):
            return False
    return tensor.layout == torch.strided


def checkpoint_inputs(hook: object) -> list[object] | None:
    """The raw saved inputs a non-reentrant checkpoint keeps to recompute from.

    Found in the unpack hook's closure (``frame.saved_args``, torch 2.13 to
    2.15); None where this torch keeps them elsewhere (cannot tell).
    """
    for cell in getattr(hook, "__closure__", None) or ():
        try:
            frame = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        args = getattr(frame, "__dict__", {}).get("saved_args")
        if isinstance(args, list):
            return [arg for arg in args if isinstance(arg, _SavedTensor)]
    return None


def _function_items(node: BackwardCFunction) -> Iterator[tuple[str, object]]:
    """A custom ``Function`` node's saved tensors, and tensors kept on ``ctx``."""
    raws: tuple[object, ...]
    try:
        raws = tuple(node._raw_saved_tensors)
    except RuntimeError:  # freed by backward
        raws = ()
    for i, raw in enumerate(raws):
        yield f"saved_tensors[{i}]", raw
    for name, value in vars(node).items():
        items = value if isinstance(value, tuple | list) else (value,)
        for i, item in enumerate(items):
            if isinstance(item, torch.Tensor):
                suffix = f"[{i}]" if items is value else ""
                yield f"ctx.{name}{suffix}", item


class Saves:
    """What the nodes saved: each storage's saves ``(node, tensor)``, by key."""

    def __init__(self) -> None:
        self.saves: dict[Key, list[tuple[int, torch.Tensor]]] = {}
        self.skipped: list[Skipped] = []
        self.frames: set[int] = set()
        self.devices: dict[torch.device, str] = {}
        # node class -> its ``_raw_saved_*`` names; None: a custom Function
        self.attrs: dict[type, tuple[str, ...] | None] = {}

    def read(self, nodes: list[Node]) -> None:
        """Read every value ``nodes`` saved (node ``i`` is ``nodes[i]``)."""
        attrs_of, saves, devices = self.attrs, self.saves, self.devices
        plain, strided = torch.Tensor, torch.strided
        for i, node in enumerate(nodes):
            kind = type(node)
            if kind not in attrs_of:
                attrs_of[kind] = (
                    None
                    if issubclass(kind, BackwardCFunction)
                    else tuple(a for a in dir(kind) if a.startswith("_raw_saved_"))
                )
            attrs = attrs_of[kind]
            if attrs is None:
                for attr, value in _function_items(node):  # type: ignore[arg-type]
                    self.add(i, attr, value)
                continue
            for attr in attrs:
                try:
                    raw = getattr(node, attr)
                except RuntimeError:  # freed by backward
                    continue
                if type(raw) is _SavedTensor and getattr(raw, "unpack_hook", 0) is None:
                    data = getattr(raw, "data", None)
                    if data is None:
                        continue  # not saved
                    if (
                        type(data) is plain
                        and data.layout is strided
                        and not data.is_nested
                        and not _wrapped(data)
                    ):
                        where = data.device
                        device = devices.get(where)
                        if device is None:
                            device = devices[where] = str(where)
                        if where.type != "meta":
                            storage = data.untyped_storage()
                            key = (device, storage.data_ptr(), storage.nbytes())
                            found = saves.get(key)
                            if found is None:
                                saves[key] = [(i, data)]
                            else:
                                found.append((i, data))
                            continue
                name = attr.removeprefix("_raw")
                if isinstance(raw, tuple | list):
                    for k, item in enumerate(raw):
                        self.add(i, f"{name}[{k}]", item)
                else:
                    self.add(i, name, raw)

    def add(self, i: int, attr: str, value: object) -> None:
        """One saved value of node ``i``, by the full rules."""
        tensor = value
        if isinstance(value, _SavedTensor):
            hook = getattr(value, "unpack_hook", None)
            if hook is not None:
                recomputed = getattr(hook, "__module__", "") == CHECKPOINT
                reason = (
                    "recomputed by checkpoint"
                    if recomputed
                    else "held by saved_tensors_hooks"
                )
                self.skipped.append(Skipped(i, attr, reason))
                if recomputed and id(hook) not in self.frames:
                    self.frames.add(id(hook))
                    kept = checkpoint_inputs(hook)
                    if kept is None:
                        reason = "kept by checkpoint where this torch hides it"
                        self.skipped.append(
                            Skipped(i, "checkpoint inputs", f"{reason} (cannot tell)")
                        )
                    for k, raw in enumerate(kept or ()):
                        self.add(i, f"checkpoint input {k}", raw)
                return
            tensor = getattr(value, "data", None)
        if not isinstance(tensor, torch.Tensor):
            return  # not saved, or freed by backward
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

    def groups(self) -> Iterator[tuple[list[Key], int]]:
        """Storages whose bytes overlap, each group with its bytes (by address)."""
        starts: dict[str, dict[int, list[int]]] = {}  # device -> start -> sizes
        for device, start, nbytes in self.saves:
            if nbytes:
                starts.setdefault(device, {}).setdefault(start, []).append(nbytes)
        for device in sorted(starts):
            sizes = starts[device]
            members: list[Key] = []
            size = end = 0
            for start in sorted(sizes):
                for nbytes in sorted(sizes[start]):
                    if members and start < end:
                        members.append((device, start, nbytes))
                        grown = max(end, start + nbytes)
                        size += grown - end
                        end = grown
                        continue
                    if members:
                        yield members, size
                    members, size, end = (
                        [(device, start, nbytes)],
                        nbytes,
                        start + nbytes,
                    )
            if members:
                yield members, size
