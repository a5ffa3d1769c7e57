"""What a node saved for backward, read without running any user code.

:func:`saved_values` describes each saved value in a short, address-free
text. Saved tensors are read through their raw ``SavedTensor`` twins, so
no ``saved_tensors_hooks`` unpack function runs and no checkpointed forward
is re-run; a value packed by such hooks shows as ``<not unpacked: ...>``.
No ``repr`` of an unknown type is called either.
"""

from __future__ import annotations

import re

import torch
from torch.autograd.function import BackwardCFunction
from torch.autograd.graph import Node

from autograd_notes._checks import arg_error, type_name
from autograd_notes._torch import (
    FUNCTION_SAVED,
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


def _packed_text(saved: object) -> str | None:
    """For a ``SavedTensor`` packed by hooks, a placeholder; else None.

    Unpacking would call the hook, which is user code (and, for a
    non-reentrant checkpoint, re-runs the forward), so it is never done.
    """
    hook = getattr(saved, "unpack_hook", None)
    if hook is None:
        return None
    if is_checkpoint_hook(hook):
        return "<not unpacked: recomputed by checkpoint in backward>"
    return "<not unpacked: saved_tensors_hooks>"


def _saved_tensor_text(node: Node, attr: str, raw: object) -> str:
    """Describe one ``SavedTensor`` (``node._raw_saved_*``) without unpacking."""
    packed = _packed_text(raw)
    if packed is not None:
        return _FREED if getattr(raw, "data", None) is None else packed
    data = getattr(raw, "data", None)
    if isinstance(data, torch.Tensor):
        return _tensor_text(data)
    try:  # no hooks: reading it runs no user code; tells unsaved from freed
        return _plain_repr(getattr(node, attr))
    except RuntimeError:
        return _FREED


def saved_values(node: Node) -> list[tuple[str, str]]:
    """``(attribute, description)`` for what ``node`` saved for backward.

    Built-in nodes expose ``_saved_*`` attributes, custom ``Function`` nodes
    ``saved_tensors``. Saved tensors are read through their ``_raw_saved_*``
    twins, which never call ``saved_tensors_hooks`` unpack functions (nor
    re-run a checkpointed forward). Values freed by ``backward()`` show as
    ``<freed by backward>``. Anything but a node raises ``TypeError``.
    """
    if not isinstance(node, Node):
        expected = "a torch.autograd.graph.Node (a grad_fn)"
        raise TypeError(arg_error("saved_values", "node", expected, type_name(node)))
    saved: list[tuple[str, str]] = []
    if isinstance(node, BackwardCFunction):
        try:
            raws = getattr(node, FUNCTION_SAVED)
        except RuntimeError:
            return [("saved_tensors", _FREED)]
        if not raws:
            return []
        items = []
        for raw in raws:
            packed = _packed_text(raw)
            data = getattr(raw, "data", None)
            if packed is not None:
                items.append(packed)
            elif isinstance(data, torch.Tensor):
                items.append(f"tensor of shape {shape(data)}")
            else:
                items.append("None")
        text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return [("saved_tensors", text)]
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        raw_attr = "_raw" + attr
        try:
            if hasattr(node, raw_attr):
                raw = getattr(node, raw_attr)
                if isinstance(raw, list | tuple):
                    parts = [_saved_tensor_text(node, attr, item) for item in raw]
                    if any(part == _FREED for part in parts):
                        text = _FREED
                    else:
                        text = "[" + ", ".join(parts) + "]"
                else:
                    text = _saved_tensor_text(node, attr, raw)
            else:
                text = _value_text(getattr(node, attr))
        except RuntimeError:
            text = _FREED
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
    if isinstance(node, BackwardCFunction):
        attrs: tuple[str, ...] = (FUNCTION_SAVED,)
    else:
        attrs = raw_saved_names(type(node))
    found: list[object] = []
    for attr in attrs:
        try:
            raw = getattr(node, attr)
        except RuntimeError:
            found.append(_FREED)
            continue
        for item in raw if type(raw) in (list, tuple) else (raw,):
            data = getattr(item, "data", None)
            if type(data) is not torch.Tensor and not isinstance(data, torch.Tensor):
                if data is not None:
                    found.append(_packed_shapes(item, data))
                elif _freed(node, attr, item):
                    found.append(_FREED)
                else:
                    found.append(None)
                continue
            try:
                found.append((data.shape, data.dtype))
            except RuntimeError:  # a nested tensor has no single shape
                found.append(("nested", data.dtype))
    return tuple(found)


def _freed(node: Node, attr: str, raw: object) -> bool:
    """Whether a value that reads as None was freed by backward (not unsaved)."""
    if getattr(raw, "unpack_hook", None) is not None:
        return True  # its hooks' packed value is gone
    if attr == FUNCTION_SAVED:
        return False  # freed, it raises RuntimeError instead
    try:  # no hooks: reading it runs no user code
        getattr(node, attr.removeprefix("_raw"))
    except RuntimeError:
        return True
    return False


def _packed_shapes(raw: object, packed: object) -> object:
    """What :func:`saved_shapes` shows of a value a pack hook turned into ``packed``."""
    hook = getattr(raw, "unpack_hook", None)
    if is_checkpoint_hook(hook):
        frame = checkpoint_frame(hook)
        known = None if frame is None else packed_metadata(frame, packed)
        return ("recomputed", *known) if known else _packed_text(raw)
    if type(packed) in (tuple, list) and isinstance(packed, tuple | list):
        items: list[object] = []
        for item in packed:
            if isinstance(item, torch.Tensor) and not item.is_nested:
                items.append((item.shape, item.dtype, item.device))
            elif isinstance(item, torch.device):
                items.append(item)
            else:
                return _packed_text(raw)
        return tuple(items)
    return _packed_text(raw)
