"""Masks that decide which entries of a weight may learn.

A mask ``M`` has the weight's exact shape; ``True`` (or ``1.0``) marks an
entry that trains, ``False`` (or ``0.0``) one that stays put.

The module has three kinds of helpers:

* **Building masks**: :func:`.random_mask`, :func:`.mask_from_indices`,
  :func:`.mask_from_condition`, and the validator :func:`.check_mask`.
* **Masking**: :func:`.apply_mask` and :func:`.parametrize_mask` mask the weight
  in the forward pass (the layer computes with ``W * M``);
  :func:`.register_grad_mask` leaves the forward pass alone and masks the
  gradient instead (``W.grad * M``).
* **Checking and guaranteeing**: :func:`.frozen_report` measures what an
  optimizer did outside the mask, and :func:`.keep_frozen` guarantees that the
  entries outside the mask stay bit-identical through optimizer steps.

.. _zero-gradient-is-not-frozen:

**A zero gradient is not frozen.** Masking the weight in the forward pass
(:func:`.apply_mask`, :func:`.parametrize_mask`,
:class:`~autograd_notes.MaskedLinear`) or its gradient
(:func:`.register_grad_mask`) gives the entries outside the mask exactly zero
gradient, but an optimizer can still move them:

* weight decay, coupled (``SGD`` or ``Adam`` with ``weight_decay=...``) or decoupled
  (``AdamW``, whose default is ``weight_decay=0.01``), shrinks every entry
  whatever its gradient;
* momentum or Adam state built up before the mask was applied keeps moving
  them for many steps.

Only writing the values back, as :func:`.keep_frozen` does, guarantees
bit-identical entries.

None of these functions modifies a tensor you pass in, except
:func:`.keep_frozen`, whose whole point is to write into the parameter after
each optimizer step. Every bad argument raises an error of the form
``"{function}() argument '{name}' must be {expected}, not {actual}"``.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn.utils import parametrize
from torch.utils.hooks import RemovableHandle

__all__ = [
    "FrozenReport",
    "apply_mask",
    "check_mask",
    "frozen_report",
    "keep_frozen",
    "mask_from_condition",
    "mask_from_indices",
    "parametrize_mask",
    "random_mask",
    "register_grad_mask",
]

ShapeLike = int | Sequence[int]
IndicesLike = Sequence[int] | torch.Tensor

_INT64_MAX = 2**63 - 1


# -- argument checks shared with masked_linear ----------------------------------


def _arg_error(func: str, name: str, expected: str, actual: object) -> str:
    """The one error-message format of this package.

    ``"{func}() argument '{name}' must be {expected}, not {actual}"``, where
    an ``expected`` that starts with "have", "hold" or "lie" replaces "be".
    """
    verb = "" if expected.split(" ", 1)[0] in ("have", "hold", "lie") else "be "
    return f"{func}() argument '{name}' must {verb}{expected}, not {actual}"


def _layout(tensor: torch.Tensor) -> str:
    """``"a nested tensor"`` or the layout, for a tensor that is not strided."""
    if tensor.is_nested:
        return f"a nested tensor (layout {tensor.layout})"
    return f"a tensor of layout {tensor.layout}"


def _check_tensor(value: object, func: str, name: str) -> torch.Tensor:
    """``value`` if it is an ordinary (strided, not nested) tensor, else raise."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(_arg_error(func, name, "a torch.Tensor", type(value).__name__))
    if value.is_nested or value.layout != torch.strided:
        raise TypeError(
            _arg_error(func, name, "a dense (strided) tensor", _layout(value))
        )
    return value


def _check_has_data(tensor: torch.Tensor, func: str, name: str) -> None:
    """Raise for a meta tensor, whose values cannot be read."""
    if tensor.device.type == "meta":
        raise ValueError(
            _arg_error(
                func,
                name,
                "on a device that holds values (this function reads them)",
                "on the meta device",
            )
        )


def _check_mask(
    mask: object,
    weight: torch.Tensor,
    func: str,
    name: str = "mask",
    weight_name: str = "weight",
) -> torch.Tensor:
    """:func:`check_mask` with the calling function's name in its messages."""
    weight = _check_tensor(weight, func, weight_name)
    mask = _check_tensor(mask, func, name)
    if mask.shape != weight.shape:
        raise ValueError(
            _arg_error(
                func,
                name,
                f"have shape {tuple(weight.shape)} like '{weight_name}'",
                tuple(mask.shape),
            )
        )
    if mask.device != weight.device:
        raise ValueError(
            _arg_error(
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
            _arg_error(func, name, "a bool or floating 0/1 tensor", mask.dtype)
        )
    if mask.device.type == "meta":
        raise TypeError(
            _arg_error(
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
            _arg_error(
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
            _arg_error(
                func,
                name,
                "hold only 0 and 1 (as a float mask)",
                f"{bad} ({mask.dtype})",
            )
        )
    return mask != 0


# -- building masks -------------------------------------------------------------


def _as_shape(shape: object, func: str, name: str = "shape") -> tuple[int, ...]:
    """Return ``shape`` as a tuple of non-negative ints that torch can allocate."""
    expected = "an int or a sequence of ints"
    if isinstance(shape, bool):
        raise TypeError(_arg_error(func, name, expected, "bool"))
    if not isinstance(shape, Sequence) and hasattr(type(shape), "__index__"):
        shape = (shape,)  # an int, or an integer scalar such as numpy.int64
    if not isinstance(shape, Sequence) or isinstance(shape, (str, bytes)):
        raise TypeError(_arg_error(func, name, expected, type(shape).__name__))
    dims: list[int] = []
    for position, size in enumerate(shape):
        try:
            if isinstance(size, bool):
                raise TypeError
            dims.append(operator.index(size))
        except TypeError:
            raise TypeError(
                _arg_error(
                    func,
                    name,
                    "a sequence of ints",
                    f"{type(size).__name__} at {name}[{position}]",
                )
            ) from None
    if any(size < 0 for size in dims):
        raise ValueError(_arg_error(func, name, "non-negative sizes", tuple(dims)))
    if math.prod(dims) > _INT64_MAX or any(size > _INT64_MAX for size in dims):
        raise ValueError(
            _arg_error(func, name, "sizes whose product is below 2**63", tuple(dims))
        )
    return tuple(dims)


def _as_device(device: object, func: str) -> torch.device | None:
    """``device`` as a :class:`torch.device` this torch can use (or ``None``)."""
    if device is None:
        return None
    if isinstance(device, str):
        try:
            device = torch.device(device)
        except RuntimeError:
            raise ValueError(
                _arg_error(
                    func, "device", "a device such as 'cpu' or 'cuda:0'", repr(device)
                )
            ) from None
    if not isinstance(device, torch.device):
        raise TypeError(
            _arg_error(
                func, "device", "a torch.device, str or None", type(device).__name__
            )
        )
    try:  # torch raises a bare AssertionError for a backend it was built without
        torch.empty(0, device=device)
    except (AssertionError, RuntimeError) as error:
        reason = str(error).split(". ")[0] or type(error).__name__
        raise ValueError(
            _arg_error(
                func, "device", "a device this torch can use", f"'{device}' ({reason})"
            )
        ) from None
    return device


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
        The mask's shape, usually ``weight.shape``; sizes must be
        non-negative.
    p : real number, default 0.5
        The probability that an entry is trainable (``True``), in ``[0, 1]``.
        Any :class:`numbers.Real` but a bool is accepted (``1``, ``0.25``,
        ``fractions.Fraction(1, 4)``, a NumPy float); ``p=0`` freezes
        everything, ``p=1`` trains everything.
    generator : torch.Generator, optional
        The random number generator to draw from. Pass a seeded
        :class:`torch.Generator` for a reproducible mask.
    device : torch.device or str, optional
        Where to create the mask. Defaults to the generator's device, or the
        CPU without a generator; it must match the generator's device.

    Returns
    -------
    torch.Tensor
        A new tensor of dtype ``torch.bool`` and the given shape.

    Raises
    ------
    TypeError
        If ``shape`` is not an int or a sequence of ints, ``p`` is not a real
        number (or is a bool), or ``generator`` is not a
        :class:`torch.Generator`.
    ValueError
        If ``shape`` holds a negative size or more than ``2**63 - 1``
        entries, ``p`` lies outside ``[0, 1]``, or ``device`` is not a device,
        is one this torch cannot use (``"cuda"`` without CUDA) or differs from
        the generator's.

    Examples
    --------
    >>> import torch
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
        raise TypeError(_arg_error(func, "p", "a real number", type(p).__name__))
    probability = float(p)
    if not (math.isfinite(probability) and 0.0 <= probability <= 1.0):
        raise ValueError(_arg_error(func, "p", "lie in [0, 1]", p))
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            _arg_error(
                func, "generator", "a torch.Generator or None", type(generator).__name__
            )
        )
    where = _as_device(device, func)
    if generator is not None:
        if where is None:
            where = generator.device
        elif where != generator.device:
            raise ValueError(
                _arg_error(
                    func,
                    "device",
                    f"the generator's device ({generator.device})",
                    str(where),
                )
            )
    # torch.rand draws from [0, 1), so p=0 gives all False and p=1 all True.
    return torch.rand(dims, generator=generator, device=where) < probability


def _as_indices(indices: object, size: int, name: str) -> list[int]:
    """Return ``indices`` as a list of ints in ``range(size)``, or raise."""
    func = "mask_from_indices"
    expected = "a sequence of ints or a 1-D integer tensor"
    values: list[object]
    if isinstance(indices, torch.Tensor):
        _check_tensor(indices, func, name)
        integer = not (indices.is_floating_point() or indices.is_complex())
        if indices.dtype == torch.bool or not integer:
            raise TypeError(
                _arg_error(func, name, expected, f"a {indices.dtype} tensor")
            )
        if indices.dim() != 1:
            raise ValueError(
                _arg_error(
                    func, name, expected, f"a tensor of shape {tuple(indices.shape)}"
                )
            )
        _check_has_data(indices, func, name)
        values = list(indices.tolist())
    elif isinstance(indices, Sequence) and not isinstance(indices, (str, bytes)):
        values = list(indices)
    else:
        raise TypeError(_arg_error(func, name, expected, type(indices).__name__))
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
            actual = type(value).__name__
            if isinstance(value, torch.Tensor):
                actual = f"a {value.dtype} tensor of shape {tuple(value.shape)}"
            raise TypeError(
                _arg_error(func, name, "a sequence of ints", f"{actual} at {where}")
            ) from None
        if not 0 <= index < size:
            valid = f"indices in 0..{size - 1}" if size else "empty (the size is 0)"
            raise IndexError(_arg_error(func, name, valid, f"{index} at {where}"))
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
    column ``j`` is in ``cols``. For a :class:`torch.nn.Linear` weight of
    shape ``(out_features, in_features)``, ``cols`` picks the inputs whose
    weights may learn and ``rows`` the outputs.

    Parameters
    ----------
    shape : sequence of int
        The weight's shape; it must have exactly two dimensions.
    rows : sequence of int or torch.Tensor, optional
        Row indices to train, as a sequence of ints or a 1-D integer tensor.
        ``None`` (the default) means every row. Indices must lie in
        ``0..shape[0] - 1`` (negative indices are rejected); duplicates are
        allowed, an empty sequence selects nothing.
    cols : sequence of int or torch.Tensor, optional
        Column indices to train, like ``rows``. ``None`` means every column.
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
        If an index lies outside its valid range; the message names the
        argument, the position and the range.

    Examples
    --------
    >>> mask_from_indices((3, 4), cols=[0, 2])
    tensor([[ True, False,  True, False],
            [ True, False,  True, False],
            [ True, False,  True, False]])
    >>> mask_from_indices((3, 4), rows=[1], cols=[0, 2])
    tensor([[False, False, False, False],
            [ True, False,  True, False],
            [False, False, False, False]])
    >>> mask_from_indices((3, 4), cols=[4])
    Traceback (most recent call last):
    ...
    IndexError: mask_from_indices() argument 'cols' must be indices in 0..3, not 4 at cols[0]
    """  # noqa: E501
    func = "mask_from_indices"
    dims = _as_shape(shape, func)
    if len(dims) != 2:
        raise ValueError(_arg_error(func, "shape", "two-dimensional", dims))
    where = _as_device(device, func)
    n_rows, n_cols = dims
    row_sel = torch.ones(n_rows, dtype=torch.bool, device=where)
    col_sel = torch.ones(n_cols, dtype=torch.bool, device=where)
    if rows is not None:
        row_sel.zero_()
        row_sel[_as_indices(rows, n_rows, "rows")] = True
    if cols is not None:
        col_sel.zero_()
        col_sel[_as_indices(cols, n_cols, "cols")] = True
    return row_sel[:, None] & col_sel[None, :]


def mask_from_condition(condition: torch.Tensor) -> torch.Tensor:
    """Turn a bool condition on a weight into a mask, e.g. ``w.abs() > 0.1``.

    Parameters
    ----------
    condition : torch.Tensor
        A dense tensor of dtype ``torch.bool``; ``True`` marks entries that
        train.

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
    >>> import torch
    >>> w = torch.tensor([[0.5, -0.05], [0.0, -0.3]])
    >>> mask_from_condition(w.abs() > 0.1)
    tensor([[ True, False],
            [False,  True]])
    """
    func = "mask_from_condition"
    condition = _check_tensor(condition, func, "condition")
    if condition.dtype != torch.bool:
        raise TypeError(
            _arg_error(
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
    broadcasting), of dtype ``torch.bool`` or a floating dtype holding only 0
    and 1, on the weight's device. The input is never modified; a float mask
    is converted to a new bool tensor. A float mask on the meta device is
    rejected, because its values cannot be checked there.

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
        If ``mask`` or ``weight`` is not a dense tensor (a nested or sparse
        tensor is not), or ``mask`` has a dtype other than bool/floating.
    ValueError
        If the shape differs, a float mask holds values other than 0 and 1,
        or the devices differ.

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
    ValueError: check_mask() argument 'mask' must have shape (2, 3) like 'weight', not (3, 2)
    """  # noqa: E501
    if not isinstance(name, str):
        raise TypeError(_arg_error("check_mask", "name", "a str", type(name).__name__))
    return _check_mask(mask, weight, "check_mask", name)


# -- masking --------------------------------------------------------------------


def _zero_outside(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``tensor`` with exact zeros of its own dtype where ``mask`` is False."""
    return torch.where(mask, tensor, tensor.new_zeros(()))


def apply_mask(weight: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Return the masked weight ``W * M``, differentiable with respect to ``W``.

    The result is a new tensor; ``weight`` is not modified. The gradient that
    flows back to ``weight`` is the incoming gradient inside the mask and
    exactly zero outside it, even where the incoming gradient is ``inf`` or
    ``nan``.

    Masked-out entries of the result are exact zeros even where ``weight``
    holds ``inf`` or ``nan`` (computed with :func:`torch.where`, not a
    multiplication, which would turn ``inf * 0`` into ``nan``).

    Parameters
    ----------
    weight : torch.Tensor
        The weight to mask, of any dtype (bool and integer weights included).
    mask : torch.Tensor
        A mask accepted by :func:`.check_mask` for ``weight``.

    Returns
    -------
    torch.Tensor
        A tensor with ``weight``'s shape, dtype and device.

    Raises
    ------
    TypeError, ValueError
        If ``mask`` does not pass :func:`.check_mask`.

    Examples
    --------
    >>> import torch
    >>> w = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> m = torch.tensor([[True, False], [False, True]])
    >>> masked = apply_mask(w, m)
    >>> masked
    tensor([[1., 0.],
            [0., 4.]], grad_fn=<WhereBackward0>)
    >>> masked.sum().backward()
    >>> w.grad
    tensor([[1., 0.],
            [0., 1.]])
    >>> apply_mask(torch.tensor([7, 8]), torch.tensor([False, True]))
    tensor([0, 8])
    """
    bool_mask = _check_mask(mask, weight, "apply_mask")
    return _zero_outside(weight, bool_mask)


class _MaskParametrization(nn.Module):
    """The parametrization installed by :func:`.parametrize_mask`."""

    mask: torch.Tensor

    def __init__(self, mask: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("mask", mask.detach().clone())

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return _zero_outside(weight, self.mask)


def parametrize_mask(module: nn.Module, name: str, mask: torch.Tensor) -> nn.Module:
    """Make ``module.<name>`` the masked view ``W * M`` of the stored weight.

    Uses :func:`torch.nn.utils.parametrize.register_parametrization`: the
    trainable tensor moves to ``module.parametrizations.<name>.original`` and
    every access to ``module.<name>`` returns it masked. The mask is stored
    as a bool buffer of the parametrization module, so it appears in
    ``module.state_dict()`` (as ``parametrizations.<name>.0.mask``), moves
    with ``module.to(device)`` and stays bool under ``module.to(dtype)``.

    ``original`` keeps its values at the masked-out entries (they are not
    zeroed), and those entries receive exactly zero gradient, but
    :ref:`a zero gradient is not frozen <zero-gradient-is-not-frozen>`.

    The module is modified in place (a parametrization is registered) and
    returned; the ``mask`` argument is copied, not kept.

    Parameters
    ----------
    module : torch.nn.Module
        The module that owns the tensor.
    name : str
        The attribute name of the tensor, e.g. ``"weight"``.
    mask : torch.Tensor
        A mask accepted by :func:`.check_mask` for ``getattr(module, name)``.

    Returns
    -------
    torch.nn.Module
        ``module`` itself.

    Raises
    ------
    TypeError
        If ``module`` is not a :class:`torch.nn.Module`, ``name`` is not a
        string, or ``mask`` fails :func:`.check_mask`.
    AttributeError
        If ``module`` has no tensor attribute ``name``.
    ValueError
        If ``mask`` fails :func:`.check_mask`.

    Examples
    --------
    >>> import torch
    >>> lin = torch.nn.Linear(3, 2, bias=False)
    >>> with torch.no_grad():
    ...     _ = lin.weight.copy_(torch.arange(6.0).reshape(2, 3))
    >>> parametrize_mask(lin, "weight", torch.tensor([[1.0, 1.0, 0.0]] * 2))
    ParametrizedLinear(...)
    >>> lin.weight
    tensor([[0., 1., 0.],
            [3., 4., 0.]], grad_fn=<WhereBackward0>)
    >>> lin.parametrizations.weight.original
    Parameter containing:
    tensor([[0., 1., 2.],
            [3., 4., 5.]], requires_grad=True)
    >>> sorted(lin.state_dict())
    ['parametrizations.weight.0.mask', 'parametrizations.weight.original']
    """
    func = "parametrize_mask"
    if not isinstance(module, nn.Module):
        raise TypeError(
            _arg_error(func, "module", "a torch.nn.Module", type(module).__name__)
        )
    if not isinstance(name, str):
        raise TypeError(_arg_error(func, "name", "a str", type(name).__name__))
    weight = getattr(module, name, None)
    if not isinstance(weight, torch.Tensor):
        raise AttributeError(
            _arg_error(
                func,
                "name",
                f"the name of a tensor attribute of the {type(module).__name__}",
                repr(name),
            )
        )
    bool_mask = _check_mask(mask, weight, func, weight_name=f"module.{name}")
    parametrize.register_parametrization(module, name, _MaskParametrization(bool_mask))
    return module


def _mask_grad(grad: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """``grad`` with exact zeros outside ``keep``; dense or sparse COO ``grad``."""
    if keep.device != grad.device:
        keep = keep.to(grad.device)
    if grad.layout == torch.sparse_coo:
        # nn.Embedding(sparse=True) and friends: mask the stored values only.
        grad = grad.coalesce()
        indices, values = grad.indices(), grad.values()
        kept = keep[tuple(indices)]  # one row per stored value
        return torch.sparse_coo_tensor(
            indices,
            _zero_outside(values, kept),
            grad.shape,
            is_coalesced=True,
            check_invariants=False,  # the indices of a coalesced tensor, unchanged
        )
    if grad.layout != torch.strided or grad.is_nested:
        raise TypeError(
            _arg_error(
                "register_grad_mask",
                "param",
                "a tensor whose gradient is dense or sparse COO",
                f"one whose gradient is {_layout(grad)}",
            )
        )
    return _zero_outside(grad, keep)


def register_grad_mask(param: torch.Tensor, mask: torch.Tensor) -> RemovableHandle:
    """Mask the gradient of a leaf tensor: its ``.grad`` becomes ``grad * M``.

    Registers a hook with :meth:`torch.Tensor.register_hook`. The hook returns
    a new tensor (``torch.where(M, grad, 0)``) and never modifies the
    incoming gradient in place. The forward pass is unchanged, which is the
    difference from :func:`.apply_mask`: here the masked-out weights still
    take part in the computation, only their gradient is zeroed. Sparse COO
    gradients (``nn.Embedding(..., sparse=True)``) stay sparse: their stored
    values are masked.

    Remember that :ref:`a zero gradient is not frozen
    <zero-gradient-is-not-frozen>`. The mask is copied at registration;
    changing it later has no effect.

    Parameters
    ----------
    param : torch.Tensor
        A dense leaf tensor that requires grad, typically an
        :class:`torch.nn.Parameter`.
    mask : torch.Tensor
        A mask accepted by :func:`.check_mask` for ``param``.

    Returns
    -------
    torch.utils.hooks.RemovableHandle
        Call ``.remove()`` on it to take the hook off again.

    Raises
    ------
    TypeError
        If ``param`` is not a dense tensor or ``mask`` fails
        :func:`.check_mask`.
    ValueError
        If ``param`` is not a leaf, does not require grad, or ``mask`` fails
        :func:`.check_mask`.

    Examples
    --------
    >>> import torch
    >>> w = torch.ones(2, 2, requires_grad=True)
    >>> handle = register_grad_mask(w, torch.tensor([[True, False], [True, True]]))
    >>> (3 * w).sum().backward()
    >>> w.grad
    tensor([[3., 0.],
            [3., 3.]])
    >>> handle.remove()
    """
    func = "register_grad_mask"
    param = _check_tensor(param, func, "param")
    if not param.requires_grad:
        raise ValueError(
            _arg_error(
                func,
                "param",
                "a tensor that requires grad (call param.requires_grad_() first)",
                "one that does not",
            )
        )
    if not param.is_leaf:
        raise ValueError(
            _arg_error(
                func,
                "param",
                "a leaf tensor such as an nn.Parameter (only leaves accumulate .grad)",
                f"the result of an operation ({type(param.grad_fn).__name__})",
            )
        )
    keep = _check_mask(mask, param, func, weight_name="param").detach().clone()

    def hook(grad: torch.Tensor) -> torch.Tensor:
        return _mask_grad(grad, keep)

    handle: RemovableHandle = param.register_hook(hook)  # type: ignore[no-untyped-call]
    return handle


# -- checking and guaranteeing ----------------------------------------------------


@dataclass(frozen=True)
class FrozenReport:
    """What changed between two snapshots of a weight, outside and inside a mask.

    Made by :func:`.frozen_report`. An entry counts as moved when its value
    differs (with ``==`` in the tensors' own dtype, so ``0.0`` and ``-0.0``
    are equal, as for :func:`torch.equal`, and 64-bit integers are compared
    exactly); an entry that is ``nan`` in both snapshots counts as unchanged.

    Examples
    --------
    >>> r = FrozenReport(
    ...     total_outside=4, moved_outside=1, max_abs_change_outside=0.5,
    ...     total_inside=2, moved_inside=2,
    ... )
    >>> r.frozen
    False
    >>> print(r)
    NOT frozen: 1/4 outside the mask moved (max |change| 0.5), 2/2 inside moved
    """

    total_outside: int
    """Number of entries outside the mask (where it is ``False``)."""
    moved_outside: int
    """Number of entries outside the mask whose value changed."""
    max_abs_change_outside: float
    """Largest ``|after - before|`` outside the mask, as a float; ``0.0`` when
    none moved, ``inf`` when an entry became or stopped being ``nan`` or
    infinite."""
    total_inside: int
    """Number of entries inside the mask (where it is ``True``)."""
    moved_inside: int
    """Number of entries inside the mask whose value changed."""

    @property
    def frozen(self) -> bool:
        """``True`` when no entry outside the mask changed."""
        return self.moved_outside == 0

    def __str__(self) -> str:
        state = "frozen" if self.frozen else "NOT frozen"
        return (
            f"{state}: {self.moved_outside}/{self.total_outside} outside the mask "
            f"moved (max |change| {self.max_abs_change_outside:.3g}), "
            f"{self.moved_inside}/{self.total_inside} inside moved"
        )


def _abs_change(old: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
    """``|new - old|`` as float64; exact before rounding, for every real dtype.

    Converting 64-bit integers to float64 first would round them (above
    ``2**53``), so their difference is taken in 64-bit integer arithmetic:
    ``max - min`` wraps around at most once, and read as unsigned it is exact.
    """
    if old.dtype in (torch.int64, torch.uint64):
        if old.dtype == torch.uint64:
            # uint64 has almost no CPU kernels; flipping the top bit maps its
            # order onto int64's, and leaves differences unchanged.
            old = old.view(torch.int64) ^ (-(2**63))
            new = new.view(torch.int64) ^ (-(2**63))
        diff = torch.maximum(old, new) - torch.minimum(old, new)
        return diff.view(torch.uint64).to(torch.float64)
    if old.dtype == torch.bool:
        return (old != new).to(torch.float64)
    change = (new.to(torch.float64) - old.to(torch.float64)).abs()
    return change.nan_to_num(nan=math.inf, posinf=math.inf)


def frozen_report(
    before: torch.Tensor, after: torch.Tensor, mask: torch.Tensor
) -> FrozenReport:
    """Compare two snapshots of a weight outside and inside ``mask``.

    Take ``before`` with ``param.detach().clone()`` (a clone: the optimizer
    updates ``param`` in place), train, then pass ``param`` as ``after``.
    Neither tensor is modified. Values are compared in their own dtype, so
    every change is seen, even a change of 1 in an ``int64`` or ``uint64``
    value above ``2**53``.

    Parameters
    ----------
    before, after : torch.Tensor
        The weight before and after, of the same shape, dtype and device.
        Real dtypes only (bool, integer or floating), on a device that holds
        values (not ``meta``).
    mask : torch.Tensor
        A mask accepted by :func:`.check_mask` for ``before``; ``True`` marks
        the entries that were meant to train.

    Returns
    -------
    FrozenReport
        The counts; ``report.frozen`` is ``True`` when every entry outside
        the mask is unchanged (``nan`` staying ``nan`` counts as unchanged).

    Raises
    ------
    TypeError
        If ``before`` or ``after`` is not a dense real tensor, their dtypes
        differ, or ``mask`` fails :func:`.check_mask`.
    ValueError
        If their shapes or devices differ, they are on the meta device, or
        ``mask`` fails :func:`.check_mask`.

    Examples
    --------
    >>> import torch
    >>> before = torch.tensor([1.0, 2.0, 3.0, 4.0])
    >>> after = torch.tensor([1.5, 2.0, 3.0, 4.25])
    >>> mask = torch.tensor([True, True, False, False])
    >>> report = frozen_report(before, after, mask)
    >>> report.frozen, report.moved_outside, report.max_abs_change_outside
    (False, 1, 0.25)
    >>> print(report)
    NOT frozen: 1/2 outside the mask moved (max |change| 0.25), 1/2 inside moved
    """
    func = "frozen_report"
    for label, value in (("before", before), ("after", after)):
        _check_tensor(value, func, label)
        if value.is_complex():
            raise TypeError(_arg_error(func, label, "a real tensor", value.dtype))
    if after.shape != before.shape:
        raise ValueError(
            _arg_error(
                func,
                "after",
                f"have the same shape as 'before' {tuple(before.shape)}",
                tuple(after.shape),
            )
        )
    if after.dtype != before.dtype:
        raise TypeError(
            _arg_error(
                func,
                "after",
                f"of the same dtype as 'before' ({before.dtype})",
                after.dtype,
            )
        )
    if after.device != before.device:
        raise ValueError(
            _arg_error(
                func,
                "after",
                f"on the same device as 'before' ({before.device})",
                str(after.device),
            )
        )
    _check_has_data(before, func, "before")
    inside = _check_mask(mask, before, func, weight_name="before")
    with torch.no_grad():
        old, new = before.detach(), after.detach()
        moved = old != new
        if old.is_floating_point():
            moved &= ~(old.isnan() & new.isnan())
        outside = ~inside
        moved_outside = moved & outside
        change = _abs_change(old[moved_outside], new[moved_outside])
        max_change = float(change.max()) if change.numel() else 0.0
        return FrozenReport(
            total_outside=int(outside.sum()),
            moved_outside=int(moved_outside.sum()),
            max_abs_change_outside=max_change,
            total_inside=int(inside.sum()),
            moved_inside=int((moved & inside).sum()),
        )


class _HandlePair(RemovableHandle):
    """One handle that removes two hooks (a step pre-hook and post-hook)."""

    def __init__(self, first: RemovableHandle, second: RemovableHandle) -> None:
        super().__init__(OrderedDict())
        self._pair = (first, second)

    def remove(self) -> None:
        for handle in self._pair:
            handle.remove()


def keep_frozen(
    optimizer: torch.optim.Optimizer, param: torch.Tensor, mask: torch.Tensor
) -> RemovableHandle:
    """Keep the entries of ``param`` outside ``mask`` bit-identical through steps.

    **Modifies** ``param`` **in place, by design.** The current values of
    ``param`` outside the mask are copied now; after every
    ``optimizer.step()`` a step post-hook
    (:meth:`torch.optim.Optimizer.register_step_post_hook`) writes them back
    under :func:`torch.no_grad`. Whatever the optimizer did to those entries
    (weight decay, momentum or Adam state, ``nan``), they end each step with
    exactly the values they had at registration. Masking the gradient alone
    does not guarantee this: :ref:`a zero gradient is not frozen
    <zero-gradient-is-not-frozen>`.

    A step pre-hook first checks that ``param`` still fits the copy. A cast
    or move of the parameter in place, such as ``model.double()`` or
    ``model.to(device)``, is followed: before the next step the copy is cast
    to the parameter's dtype and moved to its device, so the frozen entries
    keep their values from registration (rounded, if the new dtype is
    narrower, exactly as the cast rounded them). A parameter whose shape
    changed raises a :class:`RuntimeError` before the optimizer has modified
    anything.

    ``keep_frozen`` does not touch gradients: combine it with
    :func:`.register_grad_mask` when the frozen entries' gradients must not
    influence anything else either, e.g. a gradient-norm clip or an
    optimizer whose update is not elementwise. The restore runs only after
    ``optimizer.step()``: inside a step (an LBFGS closure, say) and after any
    other in-place write the entries may differ until the step ends, and
    values you write into them on purpose are overwritten at the next step.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
        The optimizer that updates ``param``.
    param : torch.Tensor
        A tensor in one of ``optimizer.param_groups``, on a device that holds
        values (not ``meta``).
    mask : torch.Tensor
        A mask accepted by :func:`.check_mask` for ``param``; ``True`` marks
        the entries that may train. It is copied at registration.

    Returns
    -------
    torch.utils.hooks.RemovableHandle
        Call ``.remove()`` on it to stop restoring (both hooks go).

    Raises
    ------
    TypeError
        If ``optimizer`` is not a :class:`torch.optim.Optimizer`, ``param``
        is not a dense tensor, or ``mask`` fails :func:`.check_mask`.
    ValueError
        If ``param`` is not in the optimizer's ``param_groups`` (compared by
        identity), is on the meta device, or ``mask`` fails
        :func:`.check_mask`.

    Examples
    --------
    >>> import torch
    >>> w = torch.nn.Parameter(torch.ones(2, 2))
    >>> opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> mask = torch.tensor([[True, False], [False, True]])
    >>> handle = keep_frozen(opt, w, mask)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w**2).sum().backward()
    ...     opt.step()
    >>> w.detach()
    tensor([[0.5750, 1.0000],
            [1.0000, 0.5750]])
    >>> handle.remove()
    """
    func = "keep_frozen"
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            _arg_error(
                func, "optimizer", "a torch.optim.Optimizer", type(optimizer).__name__
            )
        )
    param = _check_tensor(param, func, "param")
    if not any(p is param for group in optimizer.param_groups for p in group["params"]):
        raise ValueError(
            _arg_error(
                func,
                "param",
                "a tensor in the optimizer's param_groups (compared by identity)",
                "one that this optimizer does not update",
            )
        )
    _check_has_data(param, func, "param")
    frozen = ~_check_mask(mask, param, func, weight_name="param").detach()
    # The snapshot, followed through casts and moves of `param` (see pre_step).
    values = param.detach()[frozen].clone()
    kept = {"where": frozen, "values": values}

    def pre_step(_optimizer: torch.optim.Optimizer, _args: Any, _kwargs: Any) -> None:
        if param.shape != frozen.shape:
            raise RuntimeError(
                f"keep_frozen() was registered for a parameter of shape "
                f"{tuple(frozen.shape)}, which now has shape {tuple(param.shape)}; "
                "the optimizer step did not run. Call handle.remove() and "
                "keep_frozen() again with a mask of the new shape."
            )
        if kept["where"].device != param.device:
            kept["where"] = kept["where"].to(param.device)
        if values.device != param.device or values.dtype != param.dtype:
            # Always from the registration copy: half() then float() restores
            # the original float values, not the rounded ones.
            kept["values"] = values.to(param.device, param.dtype)

    def post_step(_optimizer: torch.optim.Optimizer, _args: Any, _kwargs: Any) -> None:
        with torch.no_grad():
            param[kept["where"]] = kept["values"]

    before = optimizer.register_step_pre_hook(pre_step)
    after = optimizer.register_step_post_hook(post_step)
    return _HandlePair(before, after)
