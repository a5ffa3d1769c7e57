"""Every private part of torch the package reads, in one place, and why.

PyTorch keeps what the package explains (what a node saved, the order nodes
were made in, what a checkpoint keeps) behind underscored names. They are
read here only, so that a torch that moves one breaks one module, and
``nox -s compat`` (the oldest and the newest torch of pyproject.toml's
``verified-torch``) says which. Nothing here runs user code: no unpack
hook, no recompute, no ``__torch_function__``.

Nodes and saved values:

* ``SavedTensor`` and a node's ``_raw_saved_*`` attributes: a saved value
  read without unpacking it (``.data``, ``.unpack_hook``); a custom
  ``Function`` node's are ``_raw_saved_tensors``;
* ``Node._sequence_nr()``: the order nodes were made in, per thread;
* ``Node._input_metadata``: the shape, dtype and device of each gradient a
  node receives (kept after backward);
* the functorch, dispatch and ``__torch_function__`` switches, which tell
  a plain tensor from one whose attributes would run user code.

A non-reentrant checkpoint: ``torch.utils.checkpoint(...,
use_reentrant=False)`` packs each tensor its region saves as a holder, and
its unpack hook closes over a frame that keeps the inputs to recompute from
(``saved_args``), each packed tensor's shape, dtype and device
(``x_metadatas``, one per ``weak_holders`` entry; none with
``determinism_check="none"``) and the recompute function, whose closure
holds the RNG state it restores (``preserve_rng_state=True``). That is
torch 2.13's layout (to 2.15); where a torch keeps them elsewhere, these
functions give None: cannot tell.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from operator import methodcaller
from typing import Any

import torch
from torch.autograd.graph import Node

SavedTensor = torch._C._autograd.SavedTensor
FUNCTION_SAVED = "_raw_saved_tensors"  # a custom Function node's saved values
no_torch_function = torch._C.DisableTorchFunction  # a context: no subclass code runs
is_functorch_wrapped = torch._C._functorch.is_functorch_wrapped_tensor
functorch_transforms_active = torch._C._are_functorch_transforms_active
sequence_nr: Callable[[Node], int] = methodcaller("_sequence_nr")  # a C call per node

_RAW_NAMES: dict[type, tuple[str, ...]] = {}  # node class -> its _raw_saved_* names


def raw_saved_names(kind: type) -> tuple[str, ...]:
    """A built-in node class's ``_raw_saved_*`` attributes (one per saved value)."""
    names = _RAW_NAMES.get(kind)
    if names is None:
        names = _RAW_NAMES[kind] = tuple(
            a for a in dir(kind) if a.startswith("_raw_saved_")
        )
    return names


def sequence_nrs(nodes: Iterable[Node]) -> list[int]:
    """``Node._sequence_nr()`` of each node."""
    return list(map(sequence_nr, nodes))


def next_sequence_nr() -> int:
    """The sequence number the next node made in this thread will get."""
    peek = getattr(torch._C._autograd, "_get_sequence_nr", None)
    if peek is not None:
        return int(peek())
    with torch.enable_grad():  # older torch: make a throw-away node
        probe = torch.zeros((), requires_grad=True) * 1
    assert probe.grad_fn is not None
    return int(probe.grad_fn._sequence_nr()) + 1


def input_metadata(node: Node) -> Any:
    """``node._input_metadata``, or None (not in this torch, a legacy Function)."""
    try:
        return node._input_metadata
    except (AttributeError, RuntimeError):
        return None


def dispatch_modes_active() -> bool:
    """Whether a ``__torch_dispatch__`` mode is on (it would see every op)."""
    return bool(torch._C._len_torch_dispatch_stack())


def has_python_dispatch(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` is a ``__torch_dispatch__`` subclass (no real storage)."""
    return bool(torch._C._dispatch_keys(tensor).has(torch._C.DispatchKey.Python))


# frame -> (number of holders indexed, id(holder) -> its x_metadatas index)
_INDEX: weakref.WeakKeyDictionary[object, tuple[int, dict[int, int]]] = (
    weakref.WeakKeyDictionary()
)


def _cells(func: object) -> dict[str, object]:
    """The filled closure cells of a function, by name."""
    code = getattr(func, "__code__", None)
    cells = getattr(func, "__closure__", None) or ()
    found: dict[str, object] = {}
    for name, cell in zip(getattr(code, "co_freevars", ()), cells, strict=False):
        try:
            found[name] = cell.cell_contents
        except ValueError:  # an empty cell: the variable was never set
            continue
    return found


def is_checkpoint_hook(hook: object) -> bool:
    """Whether an unpack hook is a non-reentrant checkpoint's (it recomputes)."""
    return getattr(hook, "__module__", "") == "torch.utils.checkpoint"


def checkpoint_frame(hook: object) -> object | None:
    """The frame a checkpoint's unpack hook closes over, or None."""
    frame = _cells(hook).get("frame")
    if isinstance(getattr(frame, "__dict__", {}).get("saved_args"), list):
        return frame
    return None


def checkpoint_inputs(frame: object) -> list[SavedTensor]:
    """The raw saved inputs the checkpoint keeps to recompute from."""
    args = vars(frame)["saved_args"]
    return [arg for arg in args if isinstance(arg, SavedTensor)]


def packed_metadata(
    frame: object, holder: object
) -> tuple[torch.Size, torch.dtype, torch.device] | None:
    """Shape, dtype and device of the tensor packed as ``holder``, or None."""
    state = vars(frame)
    holders, metas = state.get("weak_holders"), state.get("x_metadatas")
    if not isinstance(holders, list) or not isinstance(metas, list):
        return None
    count, index = _INDEX.get(frame, (0, {}))
    if count != len(holders):  # a new frame, or one still saving
        index = {}
        for k, ref in enumerate(holders):
            held = ref() if isinstance(ref, weakref.ref) else None
            if held is not None:
                index[id(held)] = k
        _INDEX[frame] = (len(holders), index)
    at = index.get(id(holder))
    meta = metas[at] if at is not None and at < len(metas) else None
    if not isinstance(meta, dict):
        return None
    shape, dtype, device = meta.get("shape"), meta.get("dtype"), meta.get("device")
    if (
        isinstance(shape, torch.Size)
        and isinstance(dtype, torch.dtype)
        and isinstance(device, torch.device)
    ):
        return shape, dtype, device
    return None


def rng_states(frame: object) -> list[torch.Tensor] | None:
    """The RNG states the recompute restores ([] if none kept), or None."""
    cells = _cells(vars(frame).get("recompute_fn"))
    if not isinstance(cells.get("preserve_rng_state"), bool):
        return None
    if not cells["preserve_rng_state"]:
        return []
    states = [cells.get("fwd_cpu_state")]
    devices = cells.get("fwd_device_states")
    if isinstance(devices, list):
        states.extend(devices)
    return [state for state in states if isinstance(state, torch.Tensor)]
