"""Masks that decide which entries of a weight may learn: building and checking.

A mask ``M`` has the weight's exact shape; ``True`` (or ``1.0``) marks an entry that
trains (:mod:`autograd_notes.freezing`), ``False`` (or ``0.0``) one that stays put.
:func:`.random_mask`, :func:`.mask_from_indices` and :func:`.mask_from_condition`
build one; :func:`.check_mask`, used by every function that takes a mask, validates
one. No function here modifies a tensor you pass in. Every bad argument raises
``"{function}() argument '{name}' must be {expected}, not {actual}"``.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Sequence

import torch

from autograd_notes._checks import (
    arg_error,
    as_bool_mask,
    as_device,
    check_has_data,
    check_tensor,
    type_name,
)

__all__ = ["check_mask", "mask_from_condition", "mask_from_indices", "random_mask"]

ShapeLike = int | Sequence[int]
IndicesLike = Sequence[int] | torch.Tensor

_INT64_MAX = 2**63 - 1


def _describe(value: object) -> str:
    """``value`` for an error message; a tensor or array with its shape."""
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and shape:
        kind = type(value)
        return f"a {kind.__module__}.{kind.__qualname__} of shape {shape}"
    return type_name(value)


def _as_size(value: object) -> int:
    """``value`` as an int, as :func:`torch.rand` reads a size; else TypeError."""
    if isinstance(value, bool) or (
        isinstance(value, torch.Tensor) and value.dtype == torch.bool
    ):
        raise TypeError
    try:  # an int, numpy.int64, or an integer tensor of one element
        return operator.index(value)  # type: ignore[arg-type]
    except RuntimeError:  # a meta tensor, whose value cannot be read
        raise TypeError from None


def _as_shape(shape: object, func: str, name: str = "shape") -> tuple[int, ...]:
    """Return ``shape`` as a tuple of non-negative ints that torch can allocate."""
    expected = "an int or a sequence of ints"
    if isinstance(shape, bool):
        raise TypeError(arg_error(func, name, expected, "bool"))
    if not isinstance(shape, Sequence) and hasattr(type(shape), "__index__"):
        try:
            shape = (_as_size(shape),)
        except TypeError:
            # A tensor or array of sizes, refused as a whole like torch.rand does.
            expected += f" (for an array of sizes, pass tuple({name}.tolist()))"
            raise TypeError(arg_error(func, name, expected, _describe(shape))) from None
    if not isinstance(shape, Sequence) or isinstance(shape, (str, bytes)):
        raise TypeError(arg_error(func, name, expected, type_name(shape)))
    dims: list[int] = []
    for position, size in enumerate(shape):
        try:
            dims.append(_as_size(size))
        except TypeError:
            raise TypeError(
                arg_error(
                    func,
                    name,
                    "a sequence of ints",
                    f"{_describe(size)} at {name}[{position}]",
                )
            ) from None
    if any(size < 0 for size in dims):
        raise ValueError(arg_error(func, name, "non-negative sizes", tuple(dims)))
    if math.prod(dims) > _INT64_MAX or any(size > _INT64_MAX for size in dims):
        raise ValueError(
            arg_error(func, name, "sizes whose product is below 2**63", tuple(dims))
        )
    return tuple(dims)


def random_mask(
    shape: ShapeLike,
    p: float = 0.5,
    *,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Draw a random bool mask: each entry is ``True`` with probability ``p``.

    Parameters
    ----------
    shape : int or sequence of int
        The mask's shape, usually ``weight.shape``; sizes must be non-negative.
        As for :func:`torch.rand`, an integer scalar (a 0-d tensor too) is one
        size, and a tensor or NumPy array of sizes is refused.
    p : real number, default 0.5
        The probability that an entry trains, in ``[0, 1]``: any :class:`numbers.Real`
        but a bool (``1``, ``0.25``, ``fractions.Fraction(1, 4)``, a NumPy float);
        ``p=0`` freezes everything, ``p=1`` trains everything.
    generator : torch.Generator, optional
        The generator to draw from; a seeded one gives a reproducible mask.
    device : torch.device or str, optional
        Where to create the mask: by default the generator's device, or the
        CPU without a generator; it must be the generator's device, as torch
        places tensors (``"cpu:0"`` is the CPU).

    Returns
    -------
    torch.Tensor
        A new tensor of dtype ``torch.bool`` and the given shape.

    Raises
    ------
    TypeError
        If ``shape`` is not an int or a sequence of ints, ``p`` not a real
        number (or a bool), or ``generator`` not a :class:`torch.Generator`.
    ValueError
        If ``shape`` holds a negative size or more than ``2**63 - 1`` entries,
        ``p`` lies outside ``[0, 1]``, or ``device`` is not a device, unusable
        here (``"cuda"`` without CUDA) or not the generator's.

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> random_mask((2, 4), p=0.5, generator=g)
    tensor([[ True, False,  True,  True],
            [ True, False,  True, False]])
    >>> random_mask(3, p=0.0)
    tensor([False, False, False])
    >>> random_mask(3, p="0.5")
    Traceback (most recent call last):
    ...
    TypeError: random_mask() argument 'p' must be a real number, not str
    """
    func = "random_mask"
    dims = _as_shape(shape, func)
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(arg_error(func, "p", "a real number", type_name(p)))
    probability = float(p)
    if not (math.isfinite(probability) and 0.0 <= probability <= 1.0):
        raise ValueError(arg_error(func, "p", "lie in [0, 1]", p))
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            arg_error(
                func, "generator", "a torch.Generator or None", type_name(generator)
            )
        )
    where = as_device(device, func)
    if generator is not None:
        if where is None:
            where = generator.device
        elif _resolved(where) != _resolved(generator.device):
            raise ValueError(
                arg_error(
                    func,
                    "device",
                    f"the generator's device ({generator.device})",
                    str(where),
                )
            )
    # torch.rand draws from [0, 1), so p=0 gives all False and p=1 all True.
    return torch.rand(dims, generator=generator, device=where) < probability


def _resolved(device: torch.device) -> torch.device:
    """Where torch allocates for ``device``: "cpu" for "cpu:0", "cuda:N" for "cuda"."""
    return torch.empty(0, device=device).device


def _as_indices(indices: object, size: int, name: str) -> list[int]:
    """Return ``indices`` as a list of ints in ``range(size)``, or raise."""
    func = "mask_from_indices"
    expected = "a sequence of ints or a 1-D integer tensor"
    values: list[object]
    if isinstance(indices, torch.Tensor):
        check_tensor(indices, func, name)
        integer = not (indices.is_floating_point() or indices.is_complex())
        if indices.dtype == torch.bool or indices.is_quantized or not integer:
            raise TypeError(
                arg_error(func, name, expected, f"a {indices.dtype} tensor")
            )
        if indices.dim() != 1:
            raise ValueError(
                arg_error(
                    func, name, expected, f"a tensor of shape {tuple(indices.shape)}"
                )
            )
        check_has_data(indices, func, name)
        values = list(indices.tolist())
    elif isinstance(indices, Sequence) and not isinstance(indices, (str, bytes)):
        values = list(indices)
    else:
        raise TypeError(arg_error(func, name, expected, _describe(indices)))
    checked: list[int] = []
    for position, value in enumerate(values):
        where = f"{name}[{position}]"
        try:
            if isinstance(value, bool) or (
                isinstance(value, torch.Tensor) and value.dtype == torch.bool
            ):
                raise TypeError
            index = operator.index(value)  # type: ignore[arg-type]
        except (TypeError, RuntimeError):
            actual = type_name(value)
            if isinstance(value, torch.Tensor):
                actual = f"a {value.dtype} tensor of shape {tuple(value.shape)}"
            raise TypeError(
                arg_error(func, name, "a sequence of ints", f"{actual} at {where}")
            ) from None
        if not 0 <= index < size:
            valid = f"indices in 0..{size - 1}" if size else "empty (the size is 0)"
            raise IndexError(arg_error(func, name, valid, f"{index} at {where}"))
        checked.append(index)
    return checked


def mask_from_indices(
    shape: ShapeLike,
    *,
    rows: IndicesLike | None = None,
    cols: IndicesLike | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Build a 2-D mask that trains the chosen rows and columns of a weight.

    An entry ``(i, j)`` is ``True`` when row ``i`` is in ``rows`` **and**
    column ``j`` is in ``cols``. For a :class:`torch.nn.Linear` weight
    ``(out_features, in_features)``, ``cols`` picks inputs and ``rows`` outputs.

    Parameters
    ----------
    shape : sequence of int
        The weight's shape; it must have exactly two dimensions.
    rows : sequence of int or torch.Tensor, optional
        Row indices to train (ints or a 1-D integer tensor) in ``0..shape[0] - 1``;
        duplicates allowed, empty selects nothing, ``None`` (default) every row.
    cols : sequence of int or torch.Tensor, optional
        Column indices to train, like ``rows``.
    device : torch.device or str, optional
        Where to create the mask (the CPU by default).

    Returns
    -------
    torch.Tensor
        A new tensor of dtype ``torch.bool`` and shape ``shape``.

    Raises
    ------
    TypeError
        If ``shape`` is not a sequence of ints, or ``rows``/``cols`` is not a
        sequence of ints or a 1-D integer tensor.
    ValueError
        If ``shape`` is not 2-D, ``rows``/``cols`` is a tensor that is not
        1-D or is on the meta device, or ``device`` is not a device.
    IndexError
        If an index (negative ones included) lies outside its range; the
        message names the argument, the position and the range.

    Examples
    --------
    >>> mask_from_indices((3, 4), rows=[1], cols=[0, 2])
    tensor([[False, False, False, False],
            [ True, False,  True, False],
            [False, False, False, False]])
    >>> mask_from_indices((3, 4), cols=[4])
    Traceback (most recent call last):
    ...
    IndexError: mask_from_indices() argument 'cols' must be indices in 0..3,
    not 4 at cols[0]
    """
    func = "mask_from_indices"
    dims = _as_shape(shape, func)
    if len(dims) != 2:
        raise ValueError(arg_error(func, "shape", "two-dimensional", dims))
    n_rows, n_cols = dims
    # Every argument is checked before anything of the mask's size exists.
    row_list = None if rows is None else _as_indices(rows, n_rows, "rows")
    col_list = None if cols is None else _as_indices(cols, n_cols, "cols")
    where = as_device(device, func)
    row_sel = torch.ones(n_rows, dtype=torch.bool, device=where)
    col_sel = torch.ones(n_cols, dtype=torch.bool, device=where)
    if row_list is not None:
        row_sel.zero_()
        row_sel[row_list] = True
    if col_list is not None:
        col_sel.zero_()
        col_sel[col_list] = True
    return row_sel[:, None] & col_sel[None, :]


def mask_from_condition(condition: torch.Tensor) -> torch.Tensor:
    """Turn a bool condition on a weight into a mask, e.g. ``w.abs() > 0.1``.

    Parameters
    ----------
    condition : torch.Tensor
        A dense tensor of dtype ``torch.bool``; ``True`` marks entries that train.

    Returns
    -------
    torch.Tensor
        A new bool tensor with the same values, detached from any graph and
        sharing no memory with ``condition``.

    Raises
    ------
    TypeError
        If ``condition`` is not a dense tensor of dtype ``torch.bool``.

    Examples
    --------
    >>> w = torch.tensor([[0.5, -0.05], [0.0, -0.3]])
    >>> mask_from_condition(w.abs() > 0.1)
    tensor([[ True, False],
            [False,  True]])
    """
    func = "mask_from_condition"
    condition = check_tensor(condition, func, "condition")
    if condition.dtype != torch.bool:
        raise TypeError(
            arg_error(
                func,
                "condition",
                "a bool tensor (compare first, e.g. w.abs() > 0.1)",
                condition.dtype,
            )
        )
    return condition.detach().clone()


def check_mask(
    mask: object, weight: torch.Tensor, *, name: str = "mask"
) -> torch.Tensor:
    """Validate ``mask`` against ``weight`` and return it as a bool tensor.

    The mask must be a dense tensor of exactly ``weight.shape`` (no
    broadcasting) on the weight's device, of dtype ``torch.bool`` or a floating
    dtype holding only 0 and 1 (not on the meta device, where values cannot be
    checked). The input is never modified; a float mask becomes a new bool tensor.

    Parameters
    ----------
    mask : object
        The candidate mask.
    weight : torch.Tensor
        The tensor the mask will be applied to.
    name : str, default "mask"
        The argument name used in error messages.

    Returns
    -------
    torch.Tensor
        ``mask`` as a bool tensor (the same object when it already is one).

    Raises
    ------
    TypeError
        If ``mask`` or ``weight`` is not a dense tensor (nested and sparse ones
        are not), or ``mask``'s dtype is not bool or floating.
    ValueError
        If the shapes or devices differ or a float mask holds a value not 0 or 1.

    Examples
    --------
    >>> import torch
    >>> w = torch.zeros(2, 3)
    >>> check_mask(torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]), w)
    tensor([[ True, False,  True],
            [False, False,  True]])
    >>> check_mask(torch.ones(3, 2, dtype=torch.bool), w)
    Traceback (most recent call last):
    ...
    ValueError: check_mask() argument 'mask' must have shape (2, 3) like 'weight',
    not (3, 2)
    """
    if not isinstance(name, str):
        raise TypeError(arg_error("check_mask", "name", "a str", type_name(name)))
    return as_bool_mask(mask, weight, "check_mask", name)
