"""Training only part of a weight: mask it, keep the rest frozen, check.

The entries outside a mask (:mod:`autograd_notes.masks`) get no gradient when
:func:`.apply_mask` or :func:`.parametrize_mask` masks the weight in the
forward pass (the layer computes with ``W * M``), or when
:func:`.register_grad_mask` masks the gradient instead (``W.grad * M``) and
leaves the forward pass alone. :func:`.frozen_report` measures what an
optimizer did outside the mask, and :func:`.keep_frozen` guarantees that
those entries stay bit-identical through optimizer steps.

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
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn.utils import parametrize
from torch.utils.hooks import RemovableHandle

from autograd_notes._checks import (
    arg_error,
    as_bool_mask,
    check_has_data,
    check_tensor,
    layout,
    type_name,
)

__all__ = [
    "FrozenReport",
    "apply_mask",
    "frozen_report",
    "keep_frozen",
    "parametrize_mask",
    "register_grad_mask",
]


def zero_outside(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``tensor`` with exact zeros of its own dtype where ``mask`` is False.

    :func:`torch.where`, not a product, which would turn ``inf * 0`` into
    ``nan``; differentiable, and fine under torch.func transforms. The one
    masking op of the package: ``masked_linear`` uses it too, and a bitwise
    twin of it with the same values where autograd records nothing.
    """
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
    bool_mask = as_bool_mask(mask, weight, "apply_mask")
    return zero_outside(weight, bool_mask)


class _MaskParametrization(nn.Module):
    """The parametrization installed by :func:`.parametrize_mask`."""

    mask: torch.Tensor

    def __init__(self, mask: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("mask", mask.detach().clone())

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return zero_outside(weight, self.mask)


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
            arg_error(func, "module", "a torch.nn.Module", type_name(module))
        )
    if not isinstance(name, str):
        raise TypeError(arg_error(func, "name", "a str", type_name(name)))
    weight = getattr(module, name, None)
    if not isinstance(weight, torch.Tensor):
        raise AttributeError(
            arg_error(
                func,
                "name",
                f"the name of a tensor attribute of the {type_name(module)}",
                repr(name),
            )
        )
    bool_mask = as_bool_mask(mask, weight, func, weight_name=f"module.{name}")
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
            zero_outside(values, kept),
            grad.shape,
            is_coalesced=True,
            check_invariants=False,  # the indices of a coalesced tensor, unchanged
        )
    if grad.layout != torch.strided or grad.is_nested:
        raise TypeError(
            arg_error(
                "register_grad_mask",
                "param",
                "a tensor whose gradient is dense or sparse COO",
                f"one whose gradient is {layout(grad)}",
            )
        )
    return zero_outside(grad, keep)


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
    param = check_tensor(param, func, "param")
    if not param.requires_grad:
        raise ValueError(
            arg_error(
                func,
                "param",
                "a tensor that requires grad (call param.requires_grad_() first)",
                "one that does not",
            )
        )
    if not param.is_leaf:
        raise ValueError(
            arg_error(
                func,
                "param",
                "a leaf tensor such as an nn.Parameter (only leaves accumulate .grad)",
                f"the result of an operation ({type(param.grad_fn).__name__})",
            )
        )
    keep = as_bool_mask(mask, param, func, weight_name="param").detach().clone()

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
        check_tensor(value, func, label)
        if value.is_complex():
            raise TypeError(arg_error(func, label, "a real tensor", value.dtype))
    if after.shape != before.shape:
        raise ValueError(
            arg_error(
                func,
                "after",
                f"have the same shape as 'before' {tuple(before.shape)}",
                tuple(after.shape),
            )
        )
    if after.dtype != before.dtype:
        raise TypeError(
            arg_error(
                func,
                "after",
                f"of the same dtype as 'before' ({before.dtype})",
                after.dtype,
            )
        )
    if after.device != before.device:
        raise ValueError(
            arg_error(
                func,
                "after",
                f"on the same device as 'before' ({before.device})",
                str(after.device),
            )
        )
    check_has_data(before, func, "before")
    inside = as_bool_mask(mask, before, func, weight_name="before")
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
            arg_error(
                func, "optimizer", "a torch.optim.Optimizer", type_name(optimizer)
            )
        )
    param = check_tensor(param, func, "param")
    if not any(p is param for group in optimizer.param_groups for p in group["params"]):
        raise ValueError(
            arg_error(
                func,
                "param",
                "a tensor in the optimizer's param_groups (compared by identity)",
                "one that this optimizer does not update",
            )
        )
    check_has_data(param, func, "param")
    frozen = ~as_bool_mask(mask, param, func, weight_name="param").detach()
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
