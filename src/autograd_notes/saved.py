"""What a node saved for backward, read without running any user code.

Every module that asks what a node saved asks here: :func:`saved_items`
reads a node's saved values (:func:`saved_columns`, the same for many nodes
of one class at once, is the form ``autograd_notes.memory`` counts with),
and :func:`saved_values` and :func:`saved_shapes` describe them. Saved
tensors are read through their raw ``SavedTensor`` twins, so no
``saved_tensors_hooks`` unpack function runs and no checkpointed forward is
re-run; a value packed by such hooks shows as ``<not unpacked: ...>``. No
``repr`` of an unknown type is called either.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from operator import attrgetter
from typing import NamedTuple

import torch
from torch.autograd.function import BackwardCFunction
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes._torch import (
    FUNCTION_SAVED,
    SavedTensor,
    checkpoint_frame,
    dispatch_modes_active,
    is_checkpoint_hook,
    is_functorch_wrapped,
    no_torch_function,
    packed_metadata,
    raw_saved_names,
)
from autograd_notes.labels import dtype, shape, visible

_FREED = "<freed by backward>"
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_FUNCTION = "saved_tensors"  # what a custom Function node's saved values are called


class Saved(NamedTuple):
    """One value a node saved, read without unpacking it (:func:`saved_items`)."""

    node: Node | None  # None: kept by a checkpoint, not by a node
    attribute: str  # ``_saved_self``; ``saved_tensors`` (a Function); ``ctx.w``
    position: int | None  # its place in a list or tuple attribute
    raw: object  # the SavedTensor, or a tensor kept on ``ctx``; None: freed
    data: object  # the tensor, or what a pack hook returned; None: none here

    @property
    def label(self) -> str:
        """The attribute, with the index of a list's entry: ``_saved_tensors[1]``."""
        if self.position is None:
            return self.attribute
        return f"{self.attribute}[{self.position}]"

    @property
    def hook(self) -> object | None:
        """The unpack hook of a value packed by ``saved_tensors_hooks``, or None."""
        if type(self.raw) is not SavedTensor:
            return None
        return getattr(self.raw, "unpack_hook", None)

    @property
    def held_by(self) -> str | None:
        """``"checkpoint"`` (recomputed in backward), ``"hooks"`` (packed), or None."""
        hook = self.hook
        if hook is None:
            return None
        return "checkpoint" if is_checkpoint_hook(hook) else "hooks"

    @property
    def freed(self) -> bool:
        """Whether backward freed it (with no data and not freed: never saved)."""
        if self.raw is None:
            return True
        if self.data is not None:
            return False
        if self.hook is not None:
            return True  # its hooks' packed value is gone
        if self.node is None or not self.attribute.startswith("_saved_"):
            return False  # a Function's freed values raise instead
        try:  # no hooks: reading it runs no user code
            getattr(self.node, self.attribute)
        except RuntimeError:
            return True
        return False


def read_saved(
    raw: object,
    attribute: str,
    *,
    node: Node | None = None,
    position: int | None = None,
) -> Saved:
    """A raw saved value (``SavedTensor``, tensor; None: freed) as :class:`Saved`."""
    if type(raw) is SavedTensor:
        data = getattr(raw, "data", None)
    else:
        data = raw if isinstance(raw, torch.Tensor) else None
    return Saved(node, attribute, position, raw, data)


def _read_attribute(node: Node, attribute: str, raw: object) -> list[Saved]:
    """What one ``_raw_saved_*`` attribute holds: one value, or a list's entries."""
    if type(raw) in (list, tuple):
        items: list[object] = raw  # type: ignore[assignment]
        return [
            read_saved(item, attribute, node=node, position=k)
            for k, item in enumerate(items)
        ]
    return [read_saved(raw, attribute, node=node)]


def _function_items(node: Node) -> list[Saved]:
    """A custom ``Function`` node's saved tensors, and tensors kept on ``ctx``."""
    try:
        raws = tuple(getattr(node, FUNCTION_SAVED))
    except RuntimeError:  # freed by backward
        found = [Saved(node, _FUNCTION, None, None, None)]
    else:
        found = [
            read_saved(raw, _FUNCTION, node=node, position=k)
            for k, raw in enumerate(raws)
        ]
    for name, value in vars(node).items():
        listed = isinstance(value, tuple | list)
        for k, item in enumerate(value if listed else (value,)):
            if isinstance(item, torch.Tensor):
                position = k if listed else None
                attribute = f"ctx.{name}"
                found.append(read_saved(item, attribute, node=node, position=position))
    return found


def saved_items(node: Node) -> list[Saved]:
    """Each value ``node`` saved for backward, as :class:`Saved`, without unpacking.

    A built-in node's ``_raw_saved_*`` attributes (a list's entries one by
    one), or a custom ``Function`` node's saved tensors and the tensors kept
    on its ``ctx``. An attribute freed by backward is one entry with no raw.

    >>> x = torch.ones(2, requires_grad=True)
    >>> [item.label for item in saved_items((x * x).grad_fn)]
    ['_saved_other', '_saved_self']
    """
    if isinstance(node, BackwardCFunction):
        return _function_items(node)
    found: list[Saved] = []
    for attr in raw_saved_names(type(node)):
        try:
            raw = getattr(node, attr)
        except RuntimeError:  # freed by backward
            raw = None
        attribute = attr.removeprefix("_raw")
        if type(raw) is SavedTensor:  # the common case, without the calls
            found.append(Saved(node, attribute, None, raw, getattr(raw, "data", None)))
        else:
            found.extend(_read_attribute(node, attribute, raw))
    return found


def saved_columns(
    kind: type, nodes: list[Node]
) -> Iterator[tuple[str, list[object] | None, list[list[Saved]] | None]]:
    """:func:`saved_items` of many built-in nodes of class ``kind``, a column at a time.

    For each ``_raw_saved_*`` attribute: its name, then either the data of
    each node's value (None where not saved), when each is one
    ``SavedTensor`` with no hooks (the common case, for the caller to read
    in bulk), or else each node's :class:`Saved` entries for it.
    """
    for attr in raw_saved_names(kind):
        try:
            raws = list(map(attrgetter(attr), nodes))
        except RuntimeError:  # freed by backward: node by node
            raws = [_raw_or_none(node, attr) for node in nodes]
        attribute = attr.removeprefix("_raw")
        if set(map(type, raws)) == {SavedTensor}:
            hooks = list(map(attrgetter("unpack_hook"), raws))
            if hooks.count(None) == len(hooks):
                yield attribute, list(map(attrgetter("data"), raws)), None
                continue
        items = [
            _read_attribute(node, attribute, raw)
            for node, raw in zip(nodes, raws, strict=True)
        ]
        yield attribute, None, items


def _raw_or_none(node: Node, attr: str) -> object:
    try:
        return getattr(node, attr)
    except RuntimeError:  # freed by backward
        return None


def _tensor_text(t: torch.Tensor) -> str:
    """Shape and dtype, and the value of a plain 0-dim CPU tensor.

    Nothing here dispatches to user code: the value is read only from a
    plain ``torch.Tensor`` (not a subclass, not a ``torch.func`` wrapper, no
    dispatch mode active), the rest comes from metadata.
    """
    if type(t) is not torch.Tensor:
        return f"<{visible(type(t).__name__)}>"
    text = f"tensor of shape {shape(t)}, {dtype(t)}"
    if (
        t.dim() == 0
        and t.device.type == "cpu"
        and not is_functorch_wrapped(t)
        and not dispatch_modes_active()
    ):
        with no_torch_function():
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
            f"tensor of shape {shape(item)}"
            if type(item) is torch.Tensor
            else _plain_repr(item)
            for item in value
        ]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return _plain_repr(value)


def _plain_repr(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"<{visible(type(value).__name__)}>"
    simple = value is None or type(value) in (bool, int, float, str, torch.Size)
    if not simple and isinstance(value, tuple | list) and type(value) in (tuple, list):
        simple = all(type(item) in (bool, int, float) for item in value)
    if not simple:  # anything else might run user code in its repr
        return f"<{visible(type(value).__name__)}>"
    text = repr(value)
    if _ADDRESS.search(text):
        return f"<{type(value).__name__}>"
    text = visible(text)
    return text if len(text) <= 80 else text[:77] + "..."


def _packed_text(item: Saved) -> str | None:
    """For a value packed by hooks, a placeholder; else None.

    Unpacking would call the hook, which is user code (and, for a
    non-reentrant checkpoint, re-runs the forward), so it is never done.
    """
    held = item.held_by
    if held is None:
        return None
    if held == "checkpoint":
        return "<not unpacked: recomputed by checkpoint in backward>"
    return "<not unpacked: saved_tensors_hooks>"


def _item_text(item: Saved) -> str:
    """Describe one saved tensor without unpacking it."""
    packed = _packed_text(item)
    if packed is not None:
        return _FREED if item.data is None else packed
    if isinstance(item.data, torch.Tensor):
        return _tensor_text(item.data)
    return _FREED if item.freed else "None"


def _function_item_text(item: Saved) -> str:
    """One of a custom ``Function`` node's saved tensors, shortly."""
    packed = _packed_text(item)
    if packed is not None:
        return packed
    if isinstance(item.data, torch.Tensor):
        return f"tensor of shape {shape(item.data)}"
    return "None"


def saved_values(node: Node) -> list[tuple[str, str]]:
    """``(attribute, description)`` for what ``node`` saved for backward.

    Built-in nodes expose ``_saved_*`` attributes, custom ``Function`` nodes
    ``saved_tensors``. Saved tensors are read by :func:`saved_items`, which
    never calls ``saved_tensors_hooks`` unpack functions (nor re-runs a
    checkpointed forward). Values freed by ``backward()`` show as
    ``<freed by backward>``. Anything but a node raises ``TypeError``.

    >>> x = torch.ones(2, requires_grad=True)
    >>> saved_values((x * 3).grad_fn)
    [('_saved_other', 'tensor of shape (), int64, value 3'), ('_saved_self', 'None')]
    """
    if not isinstance(node, Node):
        expected = "a torch.autograd.graph.Node (a grad_fn)"
        raise TypeError(arg_error("saved_values", "node", expected, type_name(node)))
    if isinstance(node, BackwardCFunction):
        items = [item for item in saved_items(node) if item.attribute == _FUNCTION]
        if any(item.raw is None for item in items):
            return [(_FUNCTION, _FREED)]
        if not items:
            return []
        parts = list(map(_function_item_text, items))
        text = "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        return [(_FUNCTION, text)]
    tensors: dict[str, list[Saved]] = {
        attr.removeprefix("_raw"): [] for attr in raw_saved_names(type(node))
    }
    for item in saved_items(node):
        tensors[item.attribute].append(item)
    saved: list[tuple[str, str]] = []
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        items = tensors.get(attr)
        if items is None:
            try:
                text = _value_text(getattr(node, attr))
            except RuntimeError:
                text = _FREED
        elif len(items) == 1 and items[0].position is None:
            text = _item_text(items[0])
        else:
            parts = list(map(_item_text, items))
            freed = any(part == _FREED for part in parts)
            text = _FREED if freed else "[" + ", ".join(parts) + "]"
        saved.append((attr, text))
    return saved


def saved_shapes(node: Node) -> tuple[object, ...]:
    """Shape and dtype of each tensor ``node`` saved, read as :func:`saved_values` does.

    Quick and comparable: two calls of one module on inputs of one shape
    give equal tuples. A value packed by hooks counts as what the pack hook
    returned (no unpack hook runs): a tensor, or a tuple of tensors and
    devices (``save_on_cpu``), or what a non-reentrant checkpoint recorded
    of it; none as None. A value whose shape cannot be read (freed by
    backward, packed as anything else) is a ``str`` placeholder.
    """
    items = saved_items(node)
    if isinstance(node, BackwardCFunction):  # what it keeps on ctx is not saved
        items = [item for item in items if item.attribute == _FUNCTION]
    found: list[object] = []
    for item in items:
        data = item.data
        if isinstance(data, torch.Tensor):
            try:
                found.append((data.shape, data.dtype))
            except RuntimeError:  # a nested tensor has no single shape
                found.append(("nested", data.dtype))
        elif data is not None:
            found.append(_packed_shapes(item, data))
        else:
            found.append(_FREED if item.freed else None)
    return tuple(found)


def _packed_shapes(item: Saved, packed: object) -> object:
    """What :func:`saved_shapes` shows of a value a pack hook turned into ``packed``."""
    if item.held_by == "checkpoint":
        frame = checkpoint_frame(item.hook)
        known = None if frame is None else packed_metadata(frame, packed)
        return ("recomputed", *known) if known else _packed_text(item)
    if type(packed) in (tuple, list) and isinstance(packed, tuple | list):
        items: list[object] = []
        for part in packed:
            if isinstance(part, torch.Tensor) and not part.is_nested:
                items.append((part.shape, part.dtype, part.device))
            elif isinstance(part, torch.device):
                items.append(part)
            else:
                return _packed_text(item)
        return tuple(items)
    return _packed_text(item)
