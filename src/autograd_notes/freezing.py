"""Training only part of a weight: mask it, keep the rest frozen, check.

Masking a weight in the forward pass (:func:`.apply_mask`,
:func:`.parametrize_mask`) or its gradient (:func:`.register_grad_mask`)
zeroes the gradient outside a mask (:mod:`autograd_notes.masks`);
:func:`.frozen_report` checks those entries, :func:`.keep_frozen` freezes them.

.. _zero-gradient-is-not-frozen:

**A zero gradient is not frozen.** An optimizer can still move entries that a
mask (here or in :class:`~autograd_notes.MaskedLinear`) gives exactly zero gradient:

* weight decay, coupled (``SGD``, ``Adam``) or decoupled (``AdamW``, default
  ``weight_decay=0.01``), shrinks every entry whatever its gradient;
* momentum or Adam state built before the mask keeps moving them for many steps.

Only writing the values back, as :func:`.keep_frozen` does, guarantees
bit-identical entries; it is the one function here that modifies a tensor
you pass in. Every bad argument raises an error of the form
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
    check_not_quantized,
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

    :func:`torch.where`, not a product (``inf * 0`` is ``nan``); differentiable,
    fine under torch.func. ``masked_linear`` uses it and a bitwise twin of it.
    """
    return torch.where(mask, tensor, tensor.new_zeros(()))


def apply_mask(weight: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Return the masked weight ``W * M``, differentiable with respect to ``W``.

    ``weight`` is not modified. Outside the mask, the result and the gradient
    reaching ``weight`` are exact zeros even where either holds ``inf`` or
    ``nan`` (:func:`torch.where`, not a product); inside, the gradient passes.

    Parameters
    ----------
    weight : torch.Tensor
        The weight to mask, of any dtype (bool and integer included).
    mask : torch.Tensor
        A mask accepted by :func:`.check_mask` for ``weight``.

    Returns
    -------
    torch.Tensor
        A new tensor with ``weight``'s shape, dtype and device.

    Raises
    ------
    TypeError
        If ``weight`` is not a dense tensor, or is quantized.
    TypeError, ValueError
        If ``mask`` does not pass :func:`.check_mask`.

    Examples
    --------
    >>> import torch
    >>> w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> masked = apply_mask(w, torch.tensor([True, False, True]))
    >>> masked.sum().backward()
    >>> masked, w.grad
    (tensor([1., 0., 3.], grad_fn=<WhereBackward0>), tensor([1., 0., 1.]))
    >>> apply_mask(torch.tensor([7, 8]), torch.tensor([False, True]))
    tensor([0, 8])
    """
    func = "apply_mask"
    check_not_quantized(check_tensor(weight, func, "weight"), func, "weight")
    return zero_outside(weight, as_bool_mask(mask, weight, func))


class _MaskParametrization(nn.Module):
    """The parametrization installed by :func:`.parametrize_mask`."""

    mask: torch.Tensor

    def __init__(self, mask: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("mask", mask.detach().clone())

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        return zero_outside(weight, self.mask)

    def saved(self, state_dict: dict[str, Any], key: str, relative: str) -> None:
        """Check the saved mask ``state_dict[key]``; a float 0/1 one becomes bool."""
        if key in state_dict:
            state_dict[key] = as_bool_mask(
                state_dict[key],
                self.mask,
                "load_state_dict",
                f'state_dict["{key}"]',
                f"self.{relative}",
                same_device=False,  # load_state_dict copies across devices
            )

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        # Checks it loaded alone too; in a parametrized module the hook did it first.
        try:
            self.saved(state_dict, prefix + "mask", "mask")
        except (TypeError, ValueError) as error:
            error_msgs.append(str(error))
            return
        super()._load_from_state_dict(
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )


def _check_saved_masks(
    module: nn.Module, state_dict: dict[str, Any], prefix: str, *args: Any
) -> None:
    """parametrize_mask's load_state_dict pre-hook: check saved masks before loading.

    A bad mask's error joins torch's list and nothing of ``module`` changes: each of
    its entries in the state dict becomes its current value.
    """
    error_msgs: list[str] = args[-1]
    problems: list[str] = []
    lists = getattr(module, "parametrizations", None)
    for name, steps in lists.items() if isinstance(lists, nn.ModuleDict) else ():
        for index, step in enumerate(steps.children()):
            if isinstance(step, _MaskParametrization):
                relative = f"parametrizations.{name}.{index}.mask"
                try:
                    step.saved(state_dict, prefix + relative, relative)
                except (TypeError, ValueError) as error:
                    problems.append(str(error))
    if problems:
        error_msgs.extend(problems)
        current = module.state_dict(prefix=prefix, keep_vars=True)
        for key in current.keys() & state_dict.keys():
            state_dict[key] = current[key]


# Set in the __dict__ of a module given _check_saved_masks (no private torch
# attribute read); deepcopy and pickle copy it with the hook: one check per load.
_HOOKED = "_autograd_notes_checks_saved_masks"


def parametrize_mask(module: nn.Module, name: str, mask: torch.Tensor) -> nn.Module:
    """Make ``module.<name>`` the masked view ``W * M`` of the stored weight.

    The module is modified in place and returned. With
    :func:`torch.nn.utils.parametrize.register_parametrization`, the tensor moves to
    ``module.parametrizations.<name>.original``, which keeps its values outside the mask
    (:ref:`a zero gradient is not frozen <zero-gradient-is-not-frozen>`). A bool copy of
    ``mask`` is a buffer: in the state dict, moved by ``module.to(device)``, bool under
    ``module.to(dtype)``. ``module.load_state_dict`` checks a saved mask like
    :func:`.check_mask` (a float 0/1 one loads as bool); a bad one fails the load,
    before any tensor of ``module`` changes.

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
        If ``module`` is not a :class:`torch.nn.Module`, ``name`` not a str,
        or the tensor is quantized.
    AttributeError
        If ``name`` is not a parameter or buffer of ``module``.
    TypeError, ValueError
        If ``mask`` fails :func:`.check_mask`.

    Examples
    --------
    >>> lin = torch.nn.Linear(3, 1, bias=False)
    >>> _ = torch.nn.init.constant_(lin.weight, 2.0)
    >>> lin = parametrize_mask(lin, "weight", torch.tensor([[1.0, 0.0, 1.0]]))
    >>> lin.weight.tolist(), lin.parametrizations.weight.original.tolist()
    ([[2.0, 0.0, 2.0]], [[2.0, 2.0, 2.0]])
    >>> sorted(lin.state_dict())
    ['parametrizations.weight.0.mask', 'parametrizations.weight.original']
    """
    func = "parametrize_mask"
    if not isinstance(module, nn.Module):
        got = type_name(module)
        raise TypeError(arg_error(func, "module", "a torch.nn.Module", got))
    if not isinstance(name, str):
        raise TypeError(arg_error(func, "name", "a str", type_name(name)))
    weight = getattr(module, name, None)
    own = [key for key, _ in module.named_parameters(recurse=False)]
    own += [key for key, _ in module.named_buffers(recurse=False)]
    known = name in own or parametrize.is_parametrized(module, name)
    if not (known and isinstance(weight, torch.Tensor)):
        what = type_name(weight) if hasattr(module, name) else "no such attribute"
        if isinstance(weight, torch.Tensor):
            what = "a tensor, but not a registered parameter or buffer"
        want = f"the name of a parameter or buffer of the {type_name(module)}"
        raise AttributeError(arg_error(func, "name", want, f"{name!r} ({what})"))
    if weight.is_quantized:
        want = "the name of a tensor that is not quantized"
        got = f"{name!r} (a quantized {weight.dtype} tensor)"
        raise TypeError(arg_error(func, "name", want, got))
    bool_mask = as_bool_mask(mask, weight, func, weight_name=f"module.{name}")
    parametrize.register_parametrization(module, name, _MaskParametrization(bool_mask))
    if _HOOKED not in vars(module):  # hook once; the mark travels with the hooks
        hook = _check_saved_masks
        module.register_load_state_dict_pre_hook(hook)  # type: ignore[no-untyped-call]
        vars(module)[_HOOKED] = True
    return module


def _mask_grad(grad: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """``grad`` with exact zeros outside ``keep``; dense or sparse COO ``grad``."""
    if keep.device != grad.device:
        keep = keep.to(grad.device)
    if grad.layout == torch.sparse_coo:
        # nn.Embedding(sparse=True) and friends: mask the stored values only.
        grad = grad.coalesce()
        indices = grad.indices()
        values = zero_outside(grad.values(), keep[tuple(indices)])  # one per value
        # No invariant check: the indices of a coalesced tensor, unchanged.
        return torch.sparse_coo_tensor(
            indices, values, grad.shape, is_coalesced=True, check_invariants=False
        )
    if grad.layout != torch.strided or grad.is_nested:
        want = "a tensor whose gradient is dense or sparse COO"
        got = f"one whose gradient is {layout(grad)}"
        raise TypeError(arg_error("register_grad_mask", "param", want, got))
    return zero_outside(grad, keep)


def register_grad_mask(param: torch.Tensor, mask: torch.Tensor) -> RemovableHandle:
    """Mask the gradient of a leaf tensor: its ``.grad`` becomes ``grad * M``.

    The hook (:meth:`torch.Tensor.register_hook`) returns a new tensor and
    never modifies the incoming gradient in place. Unlike :func:`.apply_mask`,
    the masked-out weights still take part in the forward pass (and :ref:`a
    zero gradient is not frozen <zero-gradient-is-not-frozen>`). Sparse COO
    gradients (``nn.Embedding(..., sparse=True)``) stay sparse.

    Parameters
    ----------
    param : torch.Tensor
        A dense leaf tensor that requires grad, e.g. a :class:`torch.nn.Parameter`.
    mask : torch.Tensor
        A mask accepted by :func:`.check_mask` for ``param``, copied now.

    Returns
    -------
    torch.utils.hooks.RemovableHandle
        Call ``.remove()`` on it to take the hook off again.

    Raises
    ------
    TypeError
        If ``param`` is not a dense tensor.
    ValueError
        If ``param`` is not a leaf or does not require grad.
    TypeError, ValueError
        If ``mask`` fails :func:`.check_mask`.

    Examples
    --------
    >>> w = torch.ones(3, requires_grad=True)
    >>> handle = register_grad_mask(w, torch.tensor([True, False, True]))
    >>> (3 * w).sum().backward()
    >>> w.grad
    tensor([3., 0., 3.])
    >>> handle.remove()
    """
    func = "register_grad_mask"
    param = check_tensor(param, func, "param")
    if not param.requires_grad:
        want = "a tensor that requires grad (call param.requires_grad_() first)"
        raise ValueError(arg_error(func, "param", want, "one that does not"))
    if not param.is_leaf:
        want = "a leaf tensor such as an nn.Parameter (only leaves accumulate .grad)"
        got = f"the result of an operation ({type(param.grad_fn).__name__})"
        raise ValueError(arg_error(func, "param", want, got))
    keep = as_bool_mask(mask, param, func, weight_name="param").detach().clone()

    def hook(grad: torch.Tensor) -> torch.Tensor:
        return _mask_grad(grad, keep)

    handle: RemovableHandle = param.register_hook(hook)  # type: ignore[no-untyped-call]
    return handle


# -- checking and guaranteeing ----------------------------------------------------


@dataclass(frozen=True)
class FrozenReport:
    """What changed between two snapshots of a weight, outside and inside a mask.

    Made by :func:`.frozen_report`. An entry moved when it differs by ``==`` in
    its own dtype (``0.0 == -0.0``, as in :func:`torch.equal`; 64-bit integers
    exactly, even above ``2**53``); ``nan`` in both snapshots is unchanged.

    Examples
    --------
    >>> r = FrozenReport(total_outside=4, moved_outside=1,
    ...     max_abs_change_outside=0.5, total_inside=2, moved_inside=2)
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

    64-bit integers are subtracted as such (float64 rounds above ``2**53``):
    ``max - min`` wraps around at most once and, read as unsigned, is exact.
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

    Take ``before`` with ``param.detach().clone()`` (the optimizer updates ``param``
    in place), train, then pass ``param`` as ``after``. Neither tensor is modified.

    Parameters
    ----------
    before, after : torch.Tensor
        The weight before and after: same shape, dtype and device; a real
        dtype (bool, integer, floating), on a device with values (not ``meta``).
    mask : torch.Tensor
        A mask accepted by :func:`.check_mask` for ``before`` (``True``: to train).

    Returns
    -------
    FrozenReport
        The counts; ``report.frozen`` when no entry outside the mask changed.

    Raises
    ------
    TypeError
        If ``before`` or ``after`` is not dense, real and unquantized, or dtypes differ.
    ValueError
        If their shapes or devices differ or they are on the meta device.
    TypeError, ValueError
        If ``mask`` fails :func:`.check_mask`.

    Examples
    --------
    >>> before = torch.tensor([1.0, 2.0, 3.0, 4.0])
    >>> after = torch.tensor([1.5, 2.0, 3.0, 4.25])
    >>> report = frozen_report(before, after, torch.tensor([True, True, False, False]))
    >>> report.frozen, report.moved_outside, report.max_abs_change_outside
    (False, 1, 0.25)
    """
    func = "frozen_report"
    for label, value in (("before", before), ("after", after)):
        check_not_quantized(check_tensor(value, func, label), func, label)
        if value.is_complex():
            raise TypeError(arg_error(func, label, "a real tensor", value.dtype))
    if after.shape != before.shape:
        want = f"have the same shape as 'before' {tuple(before.shape)}"
        raise ValueError(arg_error(func, "after", want, tuple(after.shape)))
    if after.dtype != before.dtype:
        want = f"of the same dtype as 'before' ({before.dtype})"
        raise TypeError(arg_error(func, "after", want, after.dtype))
    if after.device != before.device:
        want = f"on the same device as 'before' ({before.device})"
        raise ValueError(arg_error(func, "after", want, str(after.device)))
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

    **Modifies** ``param`` **in place, by design.** Its values outside the mask are
    copied now, and a step post-hook writes them back (under :func:`torch.no_grad`)
    after every ``optimizer.step()``, whatever the step did, even ``nan`` (:ref:`a zero
    gradient is not frozen <zero-gradient-is-not-frozen>`); within a step (an LBFGS
    closure) or after other in-place writes they may differ until it ends. The hooks
    follow casts and moves of ``param`` (``model.half()`` rounds the copy as it rounds
    ``param``; ``model.float()`` then restores the registered values bit for bit) and
    raise :class:`RuntimeError` for a changed shape, before the step. A cast that makes
    a new parameter object (with
    ``torch.__future__.set_overwrite_module_params_on_conversion(True)``) keeps the
    optimizer, and this guard, on the old one: build a new optimizer and call this
    again. Gradients are untouched: add :func:`.register_grad_mask` if they must not
    reach a gradient-norm clip or a non-elementwise update.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
        The optimizer that updates ``param``.
    param : torch.Tensor
        A tensor in ``optimizer.param_groups``, on a device with values (not meta).
    mask : torch.Tensor
        A mask accepted by :func:`.check_mask` for ``param``, copied (``True``: trains).

    Returns
    -------
    torch.utils.hooks.RemovableHandle
        Call ``.remove()`` on it to stop restoring (both hooks go).

    Raises
    ------
    TypeError
        If ``optimizer`` is not a :class:`torch.optim.Optimizer`, ``param``
        not dense or quantized.
    ValueError
        If ``param`` is not in ``optimizer.param_groups`` (by identity) or on meta.
    TypeError, ValueError
        If ``mask`` fails :func:`.check_mask`.

    Examples
    --------
    >>> w = torch.nn.Parameter(torch.ones(2))
    >>> opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> handle = keep_frozen(opt, w, torch.tensor([True, False]))
    >>> (w**2).sum().backward()
    >>> opt.step()
    >>> w.detach()
    tensor([0.8500, 1.0000])
    >>> handle.remove()
    """
    func = "keep_frozen"
    if not isinstance(optimizer, torch.optim.Optimizer):
        got = type_name(optimizer)
        raise TypeError(arg_error(func, "optimizer", "a torch.optim.Optimizer", got))
    param = check_tensor(param, func, "param")
    check_not_quantized(param, func, "param")
    if not any(p is param for group in optimizer.param_groups for p in group["params"]):
        want = "a tensor in the optimizer's param_groups (compared by identity)"
        got = "one that this optimizer does not update"
        raise ValueError(arg_error(func, "param", want, got))
    check_has_data(param, func, "param")
    frozen = ~as_bool_mask(mask, param, func, weight_name="param").detach()
    # The snapshot, followed through casts and moves of `param` (see pre_step).
    values = param.detach()[frozen].clone()
    kept = {"where": frozen, "values": values}

    def follow(outcome: str) -> None:
        # Bring the copy to param's device and dtype; refuse a new shape.
        if param.shape != frozen.shape:
            raise RuntimeError(
                f"keep_frozen() was registered for a parameter of shape "
                f"{tuple(frozen.shape)}, which now has shape {tuple(param.shape)}; "
                f"{outcome}. Call handle.remove() and "
                "keep_frozen() again with a mask of the new shape."
            )
        if kept["where"].device != param.device:
            kept["where"] = frozen.to(param.device)
        now = kept["values"]
        if now.device != param.device or now.dtype != param.dtype:
            # From the registered copy: half() then float() restores exact values.
            kept["values"] = values.to(param.device, param.dtype)

    def pre_step(_optimizer: torch.optim.Optimizer, _args: Any, _kwargs: Any) -> None:
        follow("the optimizer step did not run")

    def post_step(_optimizer: torch.optim.Optimizer, _args: Any, _kwargs: Any) -> None:
        follow("it changed during the step, and nothing was restored")
        with torch.no_grad():
            param[kept["where"]] = kept["values"]

    before = optimizer.register_step_pre_hook(pre_step)
    after = optimizer.register_step_post_hook(post_step)
    return _HandlePair(before, after)
