"""Argument checks shared by every module, and the one error format they use.

Every message reads ``"{func}() argument '{name}' must be {expected}, not
{actual}"`` (:func:`arg_error`), so a caller always learns which argument was
wrong, what was expected, and what was given instead.
"""

from __future__ import annotations

import builtins

import torch

# The oldest torch whose nodes expose what show_saved and free_graph rely on
# (pyproject.toml's floor; an older one is reached only by overriding pip).
TORCH_FLOOR = "2.13"


def arg_error(func: str, name: str, expected: str, actual: object) -> str:
    """The message for argument ``name`` of ``func`` that is ``actual``.

    An ``expected`` that starts with "have", "hold" or "lie" takes
    the place of "be".

    >>> arg_error("f", "x", "an int", "str")
    "f() argument 'x' must be an int, not str"
    """
    verb = "" if expected.split(" ", 1)[0] in ("have", "hold", "lie") else "be "
    return f"{func}() argument '{name}' must {verb}{expected}, not {actual}"


def type_name(value: object) -> str:
    """The type of ``value`` for an error message, qualified where ambiguous.

    ``numpy.bool`` (``numpy.bool_`` before NumPy 2) reads like ``bool``; its
    module tells it apart.

    >>> type_name(1.5), type_name(None)
    ('float', 'NoneType')
    """
    kind = type(value)
    name = kind.__qualname__
    module = kind.__module__
    if module != "builtins" and hasattr(builtins, name.rstrip("_")):
        return f"{module}.{name}"
    return name


def check_bool(value: object, func: str, name: str) -> None:
    """Raise unless ``value`` is a bool (not merely truthy)."""
    if not isinstance(value, bool):
        raise TypeError(arg_error(func, name, "a bool", type_name(value)))


def check_depth(value: object, func: str) -> None:
    """Raise unless ``value`` (argument ``depth``) is None or an int of 1 or more."""
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(arg_error(func, "depth", "an int or None", type_name(value)))
    if value < 1:
        raise ValueError(arg_error(func, "depth", "at least 1", value))


def layout(tensor: torch.Tensor) -> str:
    """``"a nested tensor"`` or the layout, for a tensor that is not strided."""
    if tensor.is_nested:
        return f"a nested tensor (layout {tensor.layout})"
    return f"a tensor of layout {tensor.layout}"


def check_tensor(value: object, func: str, name: str) -> torch.Tensor:
    """``value`` if it is an ordinary (strided, not nested) tensor, else raise."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(arg_error(func, name, "a torch.Tensor", type_name(value)))
    if value.is_nested or value.layout != torch.strided:
        raise TypeError(
            arg_error(func, name, "a dense (strided) tensor", layout(value))
        )
    return value


def check_has_data(tensor: torch.Tensor, func: str, name: str) -> None:
    """Raise for a meta tensor, whose values cannot be read."""
    if tensor.device.type == "meta":
        raise ValueError(
            arg_error(
                func,
                name,
                "on a device that holds values (this function reads them)",
                "on the meta device",
            )
        )


def as_device(device: object, func: str) -> torch.device | None:
    """``device`` as a :class:`torch.device` this torch can use (or ``None``)."""
    if device is None:
        return None
    if isinstance(device, str):
        try:
            device = torch.device(device)
        except RuntimeError:
            raise ValueError(
                arg_error(
                    func, "device", "a device such as 'cpu' or 'cuda:0'", repr(device)
                )
            ) from None
    if not isinstance(device, torch.device):
        raise TypeError(
            arg_error(func, "device", "a torch.device, str or None", type_name(device))
        )
    try:  # torch raises a bare AssertionError for a backend it was built without
        torch.empty(0, device=device)
    except (AssertionError, RuntimeError) as error:
        reason = str(error).split(". ")[0] or type(error).__name__
        raise ValueError(
            arg_error(
                func, "device", "a device this torch can use", f"'{device}' ({reason})"
            )
        ) from None
    return device


def as_bool_mask(
    mask: object,
    weight: object,
    func: str,
    name: str = "mask",
    weight_name: str = "weight",
    *,
    same_device: bool = True,
) -> torch.Tensor:
    """``mask`` as a bool tensor that fits ``weight``, else raise.

    The rules of :func:`autograd_notes.check_mask`, with ``func``, ``name``
    and ``weight_name`` in the messages. ``same_device=False`` skips the
    device check (a saved mask may load across devices).
    """
    weight = check_tensor(weight, func, weight_name)
    mask = check_tensor(mask, func, name)
    if mask.shape != weight.shape:
        raise ValueError(
            arg_error(
                func,
                name,
                f"have shape {tuple(weight.shape)} like '{weight_name}'",
                tuple(mask.shape),
            )
        )
    if same_device and mask.device != weight.device:
        raise ValueError(
            arg_error(
                func,
                name,
                f"on the device of '{weight_name}' ({weight.device})",
                str(mask.device),
            )
        )
    if mask.dtype == torch.bool:
        return mask
    if not mask.is_floating_point():
        raise TypeError(
            arg_error(func, name, "a bool or floating 0/1 tensor", mask.dtype)
        )
    if mask.device.type == "meta":
        raise TypeError(
            arg_error(
                func,
                name,
                "a bool tensor on the meta device (a float mask's 0/1 values "
                "cannot be checked there)",
                mask.dtype,
            )
        )
    other = (mask != 0) & (mask != 1)
    try:
        found = bool(other.any())
    except RuntimeError as error:  # a transform such as vmap hides the values
        raise TypeError(
            arg_error(
                func,
                name,
                "a bool tensor here (a float mask's 0/1 values cannot be read "
                "inside this transform, e.g. torch.func.vmap)",
                mask.dtype,
            )
        ) from error
    if found:
        bad = mask[other][0].item()
        raise ValueError(
            arg_error(
                func,
                name,
                "hold only 0 and 1 (as a float mask)",
                f"{bad} ({mask.dtype})",
            )
        )
    return mask != 0


def check_torch(func: str, feature: str) -> None:
    """Refuse ``feature`` of ``func`` on a torch below the floor.

    >>> check_torch("free_graph", "")  # this torch is new enough
    """
    if torch.torch_version.TorchVersion(torch.__version__) < TORCH_FLOOR:
        raise RuntimeError(
            f"{func}(){feature} needs torch >= {TORCH_FLOOR}; this is torch "
            f"{torch.__version__} (pip install 'torch>={TORCH_FLOOR}')"
        )


def check_not_quantized(tensor: torch.Tensor, func: str, name: str) -> None:
    """Raise for a quantized tensor, which the masking operations cannot take."""
    if tensor.is_quantized:
        raise TypeError(
            arg_error(
                func,
                name,
                "a tensor that is not quantized (call .dequantize() first)",
                f"a quantized tensor ({tensor.dtype})",
            )
        )
