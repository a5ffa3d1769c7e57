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
  entries outside the mask stay bit-identical through optimizer steps. A
  gradient mask alone does not guarantee that: weight decay moves entries
  whose gradient is zero, and momentum or Adam state built up before the mask
  was applied keeps moving them.

None of these functions modifies a tensor you pass in, except
:func:`.keep_frozen`, whose whole point is to write into the parameter after
each optimizer step.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, SupportsIndex

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


# -- building masks -------------------------------------------------------------


def _as_shape(shape: object, *, name: str = "shape") -> tuple[int, ...]:
    """Return ``shape`` as a tuple of non-negative ints, or raise."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, Sequence) or isinstance(shape, (str, bytes)):
        raise TypeError(
            f"{name} must be an int or a sequence of ints, got {type(shape).__name__}"
        )
    dims: list[int] = []
    for size in shape:
        if isinstance(size, bool):
            raise TypeError(f"{name} must hold only ints, got bool in {tuple(shape)}")
        try:
            dims.append(operator.index(size))
        except TypeError:
            raise TypeError(
                f"{name} must hold only ints, got {type(size).__name__} in "
                f"{tuple(shape)}"
            ) from None
    if any(size < 0 for size in dims):
        raise ValueError(f"{name} must not hold negative sizes, got {tuple(dims)}")
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
    shape:
        The mask's shape: an int or a sequence of non-negative ints, usually
        ``weight.shape``.
    p:
        The probability that an entry is trainable (``True``), in ``[0, 1]``.
        ``p=0`` freezes everything, ``p=1`` trains everything.
    generator:
        The random number generator to draw from. Pass a seeded
        :class:`torch.Generator` for a reproducible mask.
    device:
        Where to create the mask. Defaults to the generator's device, or the
        CPU without a generator.

    Returns
    -------
    torch.Tensor
        A new tensor of dtype ``torch.bool`` and the given shape.

    Raises
    ------
    TypeError
        If ``shape`` is not an int or a sequence of ints, ``p`` is not a real
        number, or ``generator`` is not a :class:`torch.Generator`.
    ValueError
        If ``shape`` holds a negative size or ``p`` lies outside ``[0, 1]``.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> random_mask((2, 4), p=0.5, generator=g)
    tensor([[ True, False,  True,  True],
            [ True, False,  True, False]])
    >>> random_mask(3, p=0.0)
    tensor([False, False, False])
    """
    dims = _as_shape(shape)
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"p must be a real number, got {type(p).__name__}")
    if not (math.isfinite(p) and 0.0 <= p <= 1.0):
        raise ValueError(f"p must lie in [0, 1], got {p}")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator or None, "
            f"got {type(generator).__name__}"
        )
    if device is None and generator is not None:
        device = generator.device
    # torch.rand draws from [0, 1), so p=0 gives all False and p=1 all True.
    return torch.rand(dims, generator=generator, device=device) < p


def _as_indices(indices: object, size: int, name: str) -> list[int]:
    """Return ``indices`` as a list of ints in ``range(size)``, or raise."""
    if isinstance(indices, torch.Tensor):
        if indices.dtype == torch.bool or indices.is_floating_point():
            raise TypeError(
                f"{name} must be a sequence of ints or an integer tensor, "
                f"got a tensor of dtype {indices.dtype}"
            )
        if indices.dim() > 1:
            raise ValueError(
                f"{name} must be 1-D, got a tensor of shape {tuple(indices.shape)}"
            )
        values: list[object] = list(indices.reshape(-1).tolist())
    elif isinstance(indices, Sequence) and not isinstance(indices, (str, bytes)):
        values = list(indices)
    else:
        raise TypeError(
            f"{name} must be a sequence of ints or an integer tensor, "
            f"got {type(indices).__name__}"
        )
    checked: list[int] = []
    for position, value in enumerate(values):
        if isinstance(value, bool):
            raise TypeError(f"{name}[{position}] must be an int, got bool")
        if not isinstance(value, SupportsIndex):
            raise TypeError(
                f"{name}[{position}] must be an int, got {type(value).__name__}"
            )
        index = operator.index(value)
        if not 0 <= index < size:
            valid = f"0..{size - 1}" if size else "none (the size is 0)"
            raise IndexError(
                f"{name}[{position}] = {index} is out of range: "
                f"valid {name} are {valid}"
            )
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
    shape:
        The weight's shape; it must have exactly two dimensions.
    rows:
        Row indices to train, as a sequence of ints or a 1-D integer tensor.
        ``None`` (the default) means every row. Indices must lie in
        ``0..shape[0] - 1`` (negative indices are rejected); duplicates are
        allowed, an empty sequence selects nothing.
    cols:
        Column indices to train, like ``rows``. ``None`` means every column.
    device:
        Where to create the mask (the CPU by default).

    Returns
    -------
    torch.Tensor
        A new tensor of dtype ``torch.bool`` and shape ``shape``.

    Raises
    ------
    TypeError
        If ``shape`` is not a sequence of ints, or ``rows``/``cols`` is not a
        sequence of ints or an integer tensor.
    ValueError
        If ``shape`` is not 2-D, or ``rows``/``cols`` is a tensor with more
        than one dimension.
    IndexError
        If an index lies outside its valid range; the message names the
        argument and the range.

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
    IndexError: cols[0] = 4 is out of range: valid cols are 0..3
    """
    dims = _as_shape(shape)
    if len(dims) != 2:
        raise ValueError(f"shape must have two dimensions, got {dims}")
    n_rows, n_cols = dims
    row_sel = torch.ones(n_rows, dtype=torch.bool, device=device)
    col_sel = torch.ones(n_cols, dtype=torch.bool, device=device)
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
    condition:
        A tensor of dtype ``torch.bool``; ``True`` marks entries that train.

    Returns
    -------
    torch.Tensor
        A new bool tensor with the same values, detached from any graph and
        sharing no memory with ``condition``.

    Raises
    ------
    TypeError
        If ``condition`` is not a tensor of dtype ``torch.bool``.

    Examples
    --------
    >>> import torch
    >>> w = torch.tensor([[0.5, -0.05], [0.0, -0.3]])
    >>> mask_from_condition(w.abs() > 0.1)
    tensor([[ True, False],
            [False,  True]])
    """
    if not isinstance(condition, torch.Tensor):
        raise TypeError(
            f"condition must be a torch.Tensor, got {type(condition).__name__}"
        )
    if condition.dtype != torch.bool:
        raise TypeError(
            f"condition must have dtype torch.bool, got {condition.dtype}; "
            "compare it first, e.g. w.abs() > 0.1"
        )
    return condition.detach().clone()


def check_mask(
    mask: object, weight: torch.Tensor, *, name: str = "mask"
) -> torch.Tensor:
    """Validate ``mask`` against ``weight`` and return it as a bool tensor.

    The mask must be a tensor of exactly ``weight.shape`` (no broadcasting),
    of dtype ``torch.bool`` or a floating dtype holding only 0 and 1, on the
    weight's device. The input is never modified; a float mask is converted
    to a new bool tensor.

    Parameters
    ----------
    mask:
        The candidate mask.
    weight:
        The tensor the mask will be applied to.
    name:
        The argument name used in error messages.

    Returns
    -------
    torch.Tensor
        ``mask`` as a bool tensor (the same object when it already is one).

    Raises
    ------
    TypeError
        If ``mask`` is not a tensor or has a dtype other than bool/floating.
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
    ValueError: mask must have the weight's shape (2, 3), got shape (3, 2)
    """
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"weight must be a torch.Tensor, got {type(weight).__name__}")
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(mask).__name__}")
    if mask.shape != weight.shape:
        raise ValueError(
            f"{name} must have the weight's shape {tuple(weight.shape)}, "
            f"got shape {tuple(mask.shape)}"
        )
    if mask.device != weight.device:
        raise ValueError(
            f"{name} must be on the weight's device {weight.device}, "
            f"got device {mask.device}"
        )
    if mask.dtype == torch.bool:
        return mask
    if not mask.is_floating_point():
        raise TypeError(
            f"{name} must have dtype torch.bool or a floating dtype of 0/1, "
            f"got {mask.dtype}"
        )
    if not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError(f"{name} of dtype {mask.dtype} must hold only 0 and 1")
    return mask != 0


# -- masking --------------------------------------------------------------------


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
    weight:
        The weight to mask.
    mask:
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
    """
    bool_mask = check_mask(mask, weight)
    return torch.where(bool_mask, weight, 0.0)


class _MaskParametrization(nn.Module):
    """The parametrization installed by :func:`.parametrize_mask`."""

    mask: torch.Tensor

    def __init__(self, mask: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("mask", mask.detach().clone())

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return torch.where(self.mask, weight, 0.0)


def parametrize_mask(module: nn.Module, name: str, mask: torch.Tensor) -> nn.Module:
    """Make ``module.<name>`` the masked view ``W * M`` of the stored weight.

    Uses :func:`torch.nn.utils.parametrize.register_parametrization`: the
    trainable tensor moves to ``module.parametrizations.<name>.original`` and
    every access to ``module.<name>`` returns it masked. The mask is stored
    as a bool buffer of the parametrization module, so it appears in
    ``module.state_dict()`` (as ``parametrizations.<name>.0.mask``), moves
    with ``module.to(device)`` and stays bool under ``module.to(dtype)``.

    ``original`` keeps its values at the masked-out entries (they are not
    zeroed), but those entries receive exactly zero gradient. An optimizer
    with weight decay still moves them; see :func:`.keep_frozen`.

    The module is modified in place (a parametrization is registered) and
    returned; the ``mask`` argument is copied, not kept.

    Parameters
    ----------
    module:
        The module that owns the tensor.
    name:
        The attribute name of the tensor, e.g. ``"weight"``.
    mask:
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
    if not isinstance(module, nn.Module):
        raise TypeError(
            f"module must be a torch.nn.Module, got {type(module).__name__}"
        )
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    weight = getattr(module, name, None)
    if not isinstance(weight, torch.Tensor):
        raise AttributeError(
            f"{type(module).__name__} has no tensor attribute {name!r} to mask"
        )
    bool_mask = check_mask(mask, weight)
    parametrize.register_parametrization(module, name, _MaskParametrization(bool_mask))
    return module


def register_grad_mask(param: torch.Tensor, mask: torch.Tensor) -> RemovableHandle:
    """Mask the gradient of a leaf tensor: its ``.grad`` becomes ``grad * M``.

    Registers a hook with :meth:`torch.Tensor.register_hook`. The hook returns
    a new tensor (``torch.where(M, grad, 0)``) and never modifies the
    incoming gradient in place. The forward pass is unchanged, which is the
    difference from :func:`.apply_mask`: here the masked-out weights still
    take part in the computation, only their gradient is zeroed.

    Zero gradient is not the same as frozen: an optimizer with weight decay
    or with momentum/Adam state from earlier steps still moves the entries;
    use :func:`.keep_frozen` for a guarantee.

    The mask is copied at registration; changing it later has no effect.

    Parameters
    ----------
    param:
        A leaf tensor that requires grad, typically an
        :class:`torch.nn.Parameter`.
    mask:
        A mask accepted by :func:`.check_mask` for ``param``.

    Returns
    -------
    torch.utils.hooks.RemovableHandle
        Call ``.remove()`` on it to take the hook off again.

    Raises
    ------
    TypeError
        If ``param`` is not a tensor or ``mask`` fails :func:`.check_mask`.
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
    if not isinstance(param, torch.Tensor):
        raise TypeError(f"param must be a torch.Tensor, got {type(param).__name__}")
    if not param.requires_grad:
        raise ValueError(
            "param must require grad to have a gradient to mask; "
            "call param.requires_grad_() first"
        )
    if not param.is_leaf:
        raise ValueError(
            "param must be a leaf tensor (a tensor you created, such as an "
            "nn.Parameter), not the result of an operation: only leaves "
            "accumulate .grad"
        )
    bool_mask = check_mask(mask, param).detach().clone()

    def hook(grad: torch.Tensor) -> torch.Tensor:
        keep = (
            bool_mask if bool_mask.device == grad.device else bool_mask.to(grad.device)
        )
        return torch.where(keep, grad, 0.0)

    handle: RemovableHandle = param.register_hook(hook)  # type: ignore[no-untyped-call]
    return handle


# -- checking and guaranteeing ----------------------------------------------------


@dataclass(frozen=True)
class FrozenReport:
    """What changed between two snapshots of a weight, outside and inside a mask.

    Made by :func:`.frozen_report`. An entry counts as moved when its value
    differs (with ``==``, so ``0.0`` and ``-0.0`` are equal, as for
    :func:`torch.equal`); an entry that is ``nan`` in both snapshots counts
    as unchanged.

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
    """Largest ``|after - before|`` outside the mask; ``0.0`` when none moved,
    ``inf`` when an entry became or stopped being ``nan`` or infinite."""
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


def frozen_report(
    before: torch.Tensor, after: torch.Tensor, mask: torch.Tensor
) -> FrozenReport:
    """Compare two snapshots of a weight outside and inside ``mask``.

    Take ``before`` with ``param.detach().clone()`` (a clone: the optimizer
    updates ``param`` in place), train, then pass ``param`` as ``after``.
    Neither tensor is modified.

    Parameters
    ----------
    before, after:
        The weight before and after, of the same shape, dtype and device.
        Real dtypes only.
    mask:
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
        If ``before`` or ``after`` is not a real tensor, their dtypes differ,
        or ``mask`` fails :func:`.check_mask`.
    ValueError
        If their shapes or devices differ, or ``mask`` fails
        :func:`.check_mask`.

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
    for label, value in (("before", before), ("after", after)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"{label} must be a torch.Tensor, got {type(value).__name__}"
            )
        if value.is_complex():
            raise TypeError(f"{label} must have a real dtype, got {value.dtype}")
    if before.shape != after.shape:
        raise ValueError(
            f"before and after must have the same shape, got "
            f"{tuple(before.shape)} and {tuple(after.shape)}"
        )
    if before.dtype != after.dtype:
        raise TypeError(
            f"before and after must have the same dtype, got "
            f"{before.dtype} and {after.dtype}"
        )
    if before.device != after.device:
        raise ValueError(
            f"before and after must be on the same device, got "
            f"{before.device} and {after.device}"
        )
    inside = check_mask(mask, before)
    with torch.no_grad():
        old = before.detach().to(torch.float64)
        new = after.detach().to(torch.float64)
        moved = (old != new) & ~(old.isnan() & new.isnan())
        outside = ~inside
        moved_outside = moved & outside
        change = (new - old).abs().nan_to_num(nan=math.inf, posinf=math.inf)
        change = change[moved_outside]
        max_change = float(change.max()) if change.numel() else 0.0
        return FrozenReport(
            total_outside=int(outside.sum()),
            moved_outside=int(moved_outside.sum()),
            max_abs_change_outside=max_change,
            total_inside=int(inside.sum()),
            moved_inside=int((moved & inside).sum()),
        )


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
    exactly the values they had at registration.

    A gradient mask alone (:func:`.register_grad_mask`, :func:`.apply_mask`)
    does not guarantee this: decoupled or coupled weight decay
    (``AdamW``, ``SGD(weight_decay=...)``) moves entries whose gradient is
    zero, and momentum/Adam state built before the mask was applied keeps
    moving them for many steps.

    ``keep_frozen`` does not touch gradients. Combine it with
    :func:`.register_grad_mask` when the frozen entries' gradients must not
    influence anything else either, e.g. a gradient-norm clip or an
    optimizer whose update is not elementwise. The restore runs only after
    ``optimizer.step()``: inside a step (an LBFGS closure, say) and after any
    other in-place write the entries may differ until the step ends, and
    values you write into them on purpose are overwritten at the next step.

    Parameters
    ----------
    optimizer:
        The optimizer that updates ``param``.
    param:
        A tensor in one of ``optimizer.param_groups``.
    mask:
        A mask accepted by :func:`.check_mask` for ``param``; ``True`` marks
        the entries that may train. It is copied at registration.

    Returns
    -------
    torch.utils.hooks.RemovableHandle
        Call ``.remove()`` on it to stop restoring.

    Raises
    ------
    TypeError
        If ``optimizer`` is not a :class:`torch.optim.Optimizer`, ``param``
        is not a tensor, or ``mask`` fails :func:`.check_mask`.
    ValueError
        If ``param`` is not in the optimizer's ``param_groups`` (compared by
        identity), or ``mask`` fails :func:`.check_mask`.

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
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}"
        )
    if not isinstance(param, torch.Tensor):
        raise TypeError(f"param must be a torch.Tensor, got {type(param).__name__}")
    if not any(p is param for group in optimizer.param_groups for p in group["params"]):
        raise ValueError(
            "param is not in the optimizer's param_groups: keep_frozen can only "
            "restore a tensor that this optimizer updates"
        )
    frozen = ~check_mask(mask, param).detach()
    values = param.detach()[frozen].clone()

    def restore(_optimizer: torch.optim.Optimizer, _args: Any, _kwargs: Any) -> None:
        with torch.no_grad():
            param[frozen] = values

    return optimizer.register_step_post_hook(restore)
