"""What a non-reentrant checkpoint keeps, read from its frame, never run.

``torch.utils.checkpoint(..., use_reentrant=False)`` packs each tensor its
region saves as a holder, and its unpack hook closes over a frame that
keeps the inputs to recompute from (``saved_args``), each packed tensor's
shape, dtype and device (``x_metadatas``, one per ``weak_holders`` entry;
none with ``determinism_check="none"``) and the recompute function, whose
closure holds the RNG state it restores (``preserve_rng_state=True``).
That is torch 2.13's layout (to 2.15); where a torch keeps them elsewhere,
these functions give None: cannot tell. No hook or recompute runs here.
"""

from __future__ import annotations

import weakref

import torch

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


def checkpoint_inputs(frame: object) -> list[torch._C._autograd.SavedTensor]:
    """The raw saved inputs the checkpoint keeps to recompute from."""
    args = vars(frame)["saved_args"]
    return [arg for arg in args if isinstance(arg, torch._C._autograd.SavedTensor)]


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
