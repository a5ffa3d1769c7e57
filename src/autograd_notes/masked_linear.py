"""A linear layer whose weight trains only inside a mask.

The layer computes ``y = x @ W.T + b`` like :class:`torch.nn.Linear`, with a
bool mask ``M`` of ``W``'s shape that decides which weight entries learn.
"Masked" has two meanings, chosen with ``mode``:

``"freeze"`` (the default)
    The forward pass uses the *whole* weight; only the weight gradient is
    masked: ``grad_W = (g.T @ x) * M``. Entries outside the mask keep their
    values and still act on the output; they simply never get a gradient.
    This is deliberately **not** the derivative of the forward pass, so
    :func:`torch.autograd.gradcheck` rejects the weight by construction.

``"prune"``
    The forward pass uses ``W * M``: entries outside the mask act as zeros.
    Now a zero weight gradient outside the mask *is* the true derivative,
    and ``gradcheck`` passes for the input, the weight and the bias.

In both modes the input and bias gradients are exact. Masking gives exact
zeros, as :func:`~autograd_notes.apply_mask` does, never ``inf * 0 = nan``:
the weight gradient is exactly zero outside the mask even where ``g.T @ x``
is ``inf`` or ``nan``, and in prune mode an ``inf``/``nan`` weight entry
outside the mask acts as a zero. Remember that :ref:`a zero gradient is not
frozen <zero-gradient-is-not-frozen>`: weight decay and momentum still move
those entries (:func:`~autograd_notes.keep_frozen` stops them).

:class:`MaskedLinearFunction` is the custom :class:`torch.autograd.Function`
underneath: ``backward`` returns exactly one gradient per ``forward`` input,
in order, with ``None`` for the mask and the mode; the masking is one
vectorised op; any leading batch dimensions work; and it saves no more than
:class:`torch.nn.Linear` does (the input and the weight) plus the bool mask.

It also supports :func:`torch.func.vmap`, over the inputs, the weights or a
batch of masks (through ``generate_vmap_rule``; per-sample gradients with
``vmap(grad(...))`` work too), and ``torch.compile(fullgraph=True)``, both
with a bool mask (checking that a float mask holds only 0 and 1 reads its
values, which neither vmap nor Dynamo can), and double backward:
``backward`` is not marked ``once_differentiable`` and, when a graph of it
is built (``create_graph=True``), uses only differentiable, out-of-place
ops, so :func:`torch.autograd.gradgradcheck` passes in both modes. In freeze
mode that only says the backward is differentiated consistently, not that it
is the true derivative. Without ``create_graph`` (and outside functorch
transforms) ``backward`` computes the same values with fewer passes over
memory, writing into temporaries it allocated itself, never into a tensor
you passed.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any, Literal

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from autograd_notes._checks import (
    arg_error,
    as_bool_mask,
    as_device,
    check_bool,
    check_tensor,
    type_name,
)
from autograd_notes.freezing import zero_outside

__all__ = ["MaskedLinear", "MaskedLinearFunction", "masked_linear"]

Mode = Literal["freeze", "prune"]
_MODES: tuple[str, ...] = ("freeze", "prune")
_APPLY = "MaskedLinearFunction.apply"


def _check_mode(mode: object, func: str) -> None:
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(arg_error(func, "mode", "'freeze' or 'prune'", repr(mode)))


def _check_args(
    func: str,
    input: object,
    weight: object,
    mask: object,
    bias: object,
    mode: object,
) -> Tensor:
    """Validate the arguments of ``func``; return the mask as a bool tensor.

    Only metadata is read (types, layouts, shapes, dtypes, devices), except
    for a float mask, whose 0/1 values :func:`check_mask` reads; ``apply``
    takes only bool masks, so it stays traceable by ``torch.compile``.
    """
    _check_mode(mode, func)
    input = check_tensor(input, func, "input")
    weight = check_tensor(weight, func, "weight")
    if weight.dim() != 2:
        raise ValueError(
            arg_error(
                func,
                "weight",
                "2-D, of shape (out_features, in_features)",
                f"shape {tuple(weight.shape)}",
            )
        )
    if not weight.is_floating_point():
        raise TypeError(
            arg_error(func, "weight", "a floating-point tensor", weight.dtype)
        )
    if func == _APPLY:
        mask = check_tensor(mask, func, "mask")
        if mask.dtype != torch.bool:
            raise TypeError(
                arg_error(
                    func,
                    "mask",
                    "a bool tensor (masked_linear() also takes a float 0/1 mask)",
                    mask.dtype,
                )
            )
    bool_mask = as_bool_mask(mask, weight, func)
    out_features, in_features = weight.shape
    if input.dim() == 0 or input.shape[-1] != in_features:
        got = f"shape {tuple(input.shape)}"
        raise ValueError(
            arg_error(
                func,
                "input",
                f"have last dimension in_features={in_features} like 'weight'",
                got,
            )
        )
    tensors = [("input", input)]
    if bias is not None:
        bias = check_tensor(bias, func, "bias")
        if bias.shape != (out_features,):
            raise ValueError(
                arg_error(
                    func,
                    "bias",
                    f"have shape (out_features,) = ({out_features},) like 'weight'",
                    tuple(bias.shape),
                )
            )
        tensors.append(("bias", bias))
    for name, value in tensors:
        if value.dtype != weight.dtype:
            raise TypeError(
                arg_error(
                    func,
                    name,
                    f"of the dtype of 'weight' ({weight.dtype})",
                    value.dtype,
                )
            )
        if value.device != weight.device:
            raise ValueError(
                arg_error(
                    func,
                    name,
                    f"on the device of 'weight' ({weight.device})",
                    str(value.device),
                )
            )
    return bool_mask


# An integer dtype as wide as each floating dtype, for _keep_inside.
_WORDS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _keep_inside(tensor: Tensor, mask: Tensor, *, in_place: bool = False) -> Tensor:
    """:func:`zero_outside`'s values, bit for bit, for the paths autograd skips.

    ``mask`` becomes words as wide as ``tensor``'s entries, all ones where
    it is True and all zeros where False, and ``tensor``'s bits are ANDed
    with them: an entry is kept exactly (``inf`` and ``nan`` too) or becomes
    ``+0.0``. On the CPU that is several times faster than
    :func:`torch.where`, and as fast as a product with the mask, which would
    turn ``inf * 0`` into ``nan``. Not differentiable, and not for functorch
    transforms: ``forward``, and ``backward`` when it builds no graph, only.
    """
    words = mask.to(_WORDS[tensor.element_size()]).neg_()
    if in_place:
        tensor.view(words.dtype).bitwise_and_(words)
        return tensor
    return words.bitwise_and_(tensor.view(words.dtype)).view(tensor.dtype)


def _effective_weight(weight: Tensor, mask: Tensor, mode: str) -> Tensor:
    """The weight the forward pass multiplies by: ``W`` or ``W * M``."""
    return weight if mode == "freeze" else zero_outside(weight, mask)


def _may_write_in_place() -> bool:
    """Whether ``backward`` may overwrite the temporaries it allocated.

    Not while building a graph of the backward (``create_graph=True``, which
    ``torch.func.grad`` also uses), and not under a functorch transform such
    as :func:`torch.func.vmap`, where an in-place product of an unbatched
    tensor with a batched mask is an error and ``out=`` is not supported.
    """
    return not (torch.is_grad_enabled() or torch._C._are_functorch_transforms_active())


def _weight_grad(
    grad_output: Tensor, input: Tensor, *, out: Tensor | None = None
) -> Tensor:
    """``g.T @ x`` with the leading batch dims folded into one (a view)."""
    rows = math.prod(grad_output.shape[:-1])
    grad_2d = grad_output.reshape(rows, grad_output.shape[-1])
    input_2d = input.reshape(rows, input.shape[-1])
    if out is None or out.dtype != grad_2d.dtype:
        return grad_2d.T @ input_2d
    return torch.mm(grad_2d.T, input_2d, out=out)


class MaskedLinearFunction(torch.autograd.Function):
    """``y = x @ W_eff.T + b`` whose weight gradient is zero outside a mask.

    ``W_eff`` is ``weight`` in freeze mode and ``weight`` with zeros outside
    ``mask`` in prune mode; see the module docstring for the two meanings.
    Call it as ``MaskedLinearFunction.apply(input, weight, mask, bias, mode)``
    (the argument order of :func:`masked_linear`, with every argument
    positional):

    * ``input``: a tensor of shape ``(*, in_features)``;
    * ``weight``: a floating-point tensor ``(out_features, in_features)``;
    * ``mask``: a bool tensor of ``weight``'s exact shape (no broadcasting;
      convert a float 0/1 mask with :func:`~autograd_notes.check_mask`);
    * ``bias``: ``None`` or a tensor of shape ``(out_features,)``;
    * ``mode``: ``"freeze"`` or ``"prune"``.

    All tensors must be dense, on ``weight``'s device, and ``input`` and
    ``bias`` of ``weight``'s dtype. ``apply`` checks all of this (only
    metadata, so ``torch.compile`` traces it) and raises :class:`TypeError`
    or :class:`ValueError` naming the argument, like :func:`masked_linear`.

    ``backward`` returns one gradient per ``forward`` input, in order:
    ``(grad_input, grad_weight, None, grad_bias, None)``, each ``None`` when
    that input does not need a gradient. Only what is needed is computed and
    saved: the input (for the weight gradient), the weight (for the input
    gradient) and the bool mask.

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[1.0, 2.0]])
    >>> w = torch.tensor([[1.0, -1.0], [0.5, 2.0]], requires_grad=True)
    >>> m = torch.tensor([[True, False], [True, True]])
    >>> y = MaskedLinearFunction.apply(x, w, m, None, "prune")
    >>> y
    tensor([[1.0000, 4.5000]], grad_fn=<MaskedLinearFunctionBackward>)
    >>> y.sum().backward()
    >>> w.grad
    tensor([[1., 0.],
            [1., 2.]])
    >>> MaskedLinearFunction.apply(x, w, m[0], None, "prune")
    Traceback (most recent call last):
    ...
    ValueError: MaskedLinearFunction.apply() argument 'mask' must have shape (2, 2) like 'weight', not (2,)
    """  # noqa: E501

    generate_vmap_rule = True

    @staticmethod
    def forward(
        input: Tensor,
        weight: Tensor,
        mask: Tensor,
        bias: Tensor | None,
        mode: Mode,
    ) -> Tensor:
        """Check the arguments, then compute ``F.linear(input, W_eff, bias)``."""
        _check_args(_APPLY, input, weight, mask, bias, mode)
        if mode == "prune" and not torch._C._are_functorch_transforms_active():
            effective = _keep_inside(weight, mask)
        else:
            effective = _effective_weight(weight, mask, mode)
        return F.linear(input, effective, bias)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Tensor) -> None:
        """Save what ``backward`` needs: input, weight (each only if needed), mask."""
        input, weight, mask, _bias, mode = inputs
        needs_input, needs_weight = ctx.needs_input_grad[:2]
        # Like nn.Linear: the input only feeds the weight gradient and the
        # weight only feeds the input gradient, so save each only if needed.
        ctx.save_for_backward(
            input if needs_weight else None,
            weight if needs_input else None,
            mask,
        )
        ctx.mode = mode

    @staticmethod
    def backward(
        ctx: Any, grad_output: Tensor
    ) -> tuple[Tensor | None, Tensor | None, None, Tensor | None, None]:
        """Return ``(grad_input, grad_weight, None, grad_bias, None)``."""
        input, weight, mask = ctx.saved_tensors
        needs_input, needs_weight, _, needs_bias = ctx.needs_input_grad[:4]
        grad_input = grad_weight = grad_bias = None
        if not _may_write_in_place():
            # Out of place: differentiable, and fine under vmap over masks.
            if needs_input:
                grad_input = grad_output @ _effective_weight(weight, mask, ctx.mode)
            if needs_weight:
                grad_weight = zero_outside(_weight_grad(grad_output, input), mask)
        else:
            # The same values with fewer passes over memory: the weight
            # gradient reuses the buffer of W_eff and is masked in place.
            buffer = None
            if needs_input:
                if ctx.mode == "freeze":
                    grad_input = grad_output @ weight
                else:
                    buffer = _keep_inside(weight, mask)
                    grad_input = grad_output @ buffer
            if needs_weight:
                grad = _weight_grad(grad_output, input, out=buffer)
                grad_weight = _keep_inside(grad, mask, in_place=True)
        if needs_bias:
            rows = math.prod(grad_output.shape[:-1])
            grad_bias = grad_output.reshape(rows, grad_output.shape[-1]).sum(0)
        return grad_input, grad_weight, None, grad_bias, None


def masked_linear(
    input: Tensor,
    weight: Tensor,
    mask: Tensor,
    bias: Tensor | None = None,
    *,
    mode: Mode = "freeze",
) -> Tensor:
    """Apply ``y = x @ W.T + b`` with the weight trained only inside ``mask``.

    Parameters
    ----------
    input : torch.Tensor
        Shape ``(*, in_features)``: any number of leading dims. A dense
        tensor (not nested or sparse).
    weight : torch.Tensor
        Floating-point tensor of shape ``(out_features, in_features)``.
    mask : torch.Tensor
        Bool tensor (or floating 0/1) of ``weight``'s exact shape, on its
        device; ``True`` marks entries that train. Checked with
        :func:`~autograd_notes.check_mask`.
    bias : torch.Tensor, optional
        ``None`` or a tensor of shape ``(out_features,)``.
    mode : str, default "freeze"
        ``"freeze"``: the forward uses all of ``weight`` and only its
        gradient is masked (not the true derivative, on purpose).
        ``"prune"``: the forward uses ``weight`` with zeros outside the mask,
        and the masked gradient is the true derivative.

    Returns
    -------
    torch.Tensor
        Shape ``(*, out_features)``.

    Raises
    ------
    TypeError
        If an argument is not a dense tensor, ``weight`` is not floating
        point, ``input``/``bias`` have a dtype other than ``weight``'s, or
        the mask has a dtype other than bool/floating.
    ValueError
        For a bad ``mode``, wrong shapes (naming the argument and both
        shapes), a tensor on a device other than ``weight``'s, or a float mask
        holding values other than 0 and 1.

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[1.0, 2.0]])
    >>> w = torch.tensor([[1.0, -1.0], [0.5, 2.0]], requires_grad=True)
    >>> m = torch.tensor([[True, False], [True, True]])
    >>> y = masked_linear(x, w, m)  # freeze: the whole weight acts
    >>> y
    tensor([[-1.0000,  4.5000]], grad_fn=<MaskedLinearFunctionBackward>)
    >>> y.sum().backward()
    >>> w.grad  # zero where the mask is False
    tensor([[1., 0.],
            [1., 2.]])
    >>> masked_linear(x, w, m, mode="prune")  # w[0, 1] now acts as a zero
    tensor([[1.0000, 4.5000]], grad_fn=<MaskedLinearFunctionBackward>)
    """
    bool_mask = _check_args("masked_linear", input, weight, mask, bias, mode)
    # ``apply`` is untyped in torch; name its result type for mypy.
    apply: Callable[..., Tensor] = MaskedLinearFunction.apply
    return apply(input, weight, bool_mask, bias, mode)


def _check_size(value: object, func: str, name: str) -> int:
    """``value`` as a non-negative int (not a bool), or raise."""
    try:
        if isinstance(value, bool):
            raise TypeError
        size = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(arg_error(func, name, "an int", type_name(value))) from None
    if size < 0:
        raise ValueError(arg_error(func, name, "non-negative", size))
    return size


class MaskedLinear(nn.Module):
    """:class:`torch.nn.Linear` whose weight trains only inside a mask.

    Parameters
    ----------
    in_features, out_features : int
        Sizes of each input and output sample (non-negative ints, not bools).
    mask : torch.Tensor
        Bool (or floating 0/1) tensor of shape ``(out_features, in_features)``
        on the layer's device. It is copied into a bool buffer ``mask``:
        it moves with :meth:`~torch.nn.Module.to`, stays bool under dtype
        casts and is saved in the ``state_dict``.
    bias : bool, default True
        Whether to learn an additive bias (never masked).
    mode : str, default "freeze"
        As in :func:`masked_linear`. Saved in the ``state_dict`` too (as its
        ``_extra_state``), so a state dict only loads into a layer of the
        same mode.
    device : torch.device or str, optional
        Where to create the parameters, as for ``nn.Linear``.
    dtype : torch.dtype, optional
        A floating-point dtype for the parameters, as for ``nn.Linear``.

    Raises
    ------
    TypeError
        If a size is not an int, ``bias`` is not a bool, ``dtype`` is not a
        floating-point dtype, or the mask is not a tensor or has a bad dtype.
    ValueError
        If a size is negative, the mask's shape is not
        ``(out_features, in_features)`` or it is on another device, or
        ``mode`` is invalid.

    Examples
    --------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> mask = torch.tensor([[True, False, True], [False, True, True]])
    >>> layer = MaskedLinear(3, 2, mask)
    >>> layer
    MaskedLinear(in_features=3, out_features=2, bias=True, mode='freeze', trainable=4/6)
    >>> layer(torch.randn(5, 3)).sum().backward()
    >>> bool((layer.weight.grad[~layer.mask] == 0).all())
    True
    >>> layer.to(torch.float64).mask.dtype
    torch.bool
    >>> layer.state_dict()["_extra_state"]
    {'mode': 'freeze'}
    """

    in_features: int
    out_features: int
    weight: nn.Parameter
    bias: nn.Parameter | None
    mask: Tensor
    _mode: Mode

    def __init__(
        self,
        in_features: int,
        out_features: int,
        mask: Tensor,
        bias: bool = True,
        *,
        mode: Mode = "freeze",
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        func = "MaskedLinear"
        self.in_features = _check_size(in_features, func, "in_features")
        self.out_features = _check_size(out_features, func, "out_features")
        check_bool(bias, func, "bias")
        _check_mode(mode, func)
        where = as_device(device, func)
        if dtype is not None and not (
            isinstance(dtype, torch.dtype) and dtype.is_floating_point
        ):
            actual = dtype if isinstance(dtype, torch.dtype) else type_name(dtype)
            raise TypeError(
                arg_error(func, "dtype", "a floating-point torch.dtype or None", actual)
            )
        # Check the mask's shape before allocating anything of that size.
        shape = (self.out_features, self.in_features)
        mask = check_tensor(mask, func, "mask")
        if mask.shape != shape:
            raise ValueError(
                arg_error(
                    func,
                    "mask",
                    f"have shape (out_features, in_features) = {shape}",
                    tuple(mask.shape),
                )
            )
        self._mode = mode
        factory: dict[str, Any] = {"device": where, "dtype": dtype}
        self.weight = nn.Parameter(torch.empty(shape, **factory))
        if bias:
            self.bias = nn.Parameter(torch.empty(self.out_features, **factory))
        else:
            self.register_parameter("bias", None)
        # A copy, so the layer never aliases (or later writes to) the caller's mask.
        self.register_buffer("mask", as_bool_mask(mask, self.weight, func).clone())
        self.reset_parameters()

    @property
    def mode(self) -> Mode:
        """``"freeze"`` or ``"prune"``; assigning another value raises."""
        return self._mode

    @mode.setter
    def mode(self, mode: Mode) -> None:
        _check_mode(mode, "MaskedLinear.mode")
        self._mode = mode

    def reset_parameters(self) -> None:
        """Initialise the weight and bias exactly like ``nn.Linear`` does."""
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            nn.init.uniform_(self.bias, -bound, bound)

    @classmethod
    def from_linear(
        cls, linear: nn.Linear, mask: Tensor, *, mode: Mode = "freeze"
    ) -> MaskedLinear:
        """Build a masked layer starting from ``linear``'s weight and bias.

        The values are copied into new parameters: the new layer shares no
        storage with ``linear``, which is left unchanged. (The new layer is
        first initialised as usual, so this draws from the global RNG.)

        Parameters
        ----------
        linear : torch.nn.Linear
            An initialised :class:`torch.nn.Linear` (or subclass) with a
            floating-point weight.
        mask : torch.Tensor
            As for :class:`MaskedLinear`, on ``linear``'s device.
        mode : str, default "freeze"
            As for :class:`MaskedLinear`.

        Returns
        -------
        MaskedLinear
            A new layer with ``linear``'s sizes, device, dtype and values.

        Raises
        ------
        TypeError
            If ``linear`` is not an initialised :class:`torch.nn.Linear`
            (a ``Conv1d``, ``None``, an uninitialised ``LazyLinear``), or
            the constructor rejects the mask.
        ValueError
            If the constructor rejects the mask or ``mode``.

        Examples
        --------
        >>> import torch
        >>> _ = torch.manual_seed(0)
        >>> linear = torch.nn.Linear(4, 2)
        >>> layer = MaskedLinear.from_linear(linear, torch.rand(2, 4) > 0.5)
        >>> torch.equal(layer.weight, linear.weight)
        True
        >>> layer.weight.data_ptr() == linear.weight.data_ptr()
        False
        """
        func = "MaskedLinear.from_linear"
        if not isinstance(linear, nn.Linear):
            raise TypeError(
                arg_error(func, "linear", "a torch.nn.Linear", type_name(linear))
            )
        weight = linear.weight
        if isinstance(weight, nn.parameter.UninitializedParameter):
            raise TypeError(
                arg_error(
                    func,
                    "linear",
                    "an initialised torch.nn.Linear (call it once first)",
                    f"an uninitialised {type_name(linear)}",
                )
            )
        layer = cls(
            linear.in_features,
            linear.out_features,
            mask,
            bias=linear.bias is not None,
            mode=mode,
            device=weight.device,
            dtype=weight.dtype,
        )
        with torch.no_grad():
            layer.weight.copy_(weight)
            if layer.bias is not None and linear.bias is not None:
                layer.bias.copy_(linear.bias)
        return layer

    def forward(self, input: Tensor) -> Tensor:
        """Apply :func:`masked_linear` with this layer's weight, mask and bias."""
        return masked_linear(input, self.weight, self.mask, self.bias, mode=self.mode)

    def get_extra_state(self) -> dict[str, str]:
        """``{"mode": self.mode}``, saved in the ``state_dict``."""
        return {"mode": self._mode}

    def set_extra_state(self, state: Any) -> None:
        """Check a saved ``{"mode": ...}`` against this layer's mode.

        Raises
        ------
        ValueError
            If ``state`` is not ``{"mode": "freeze"}`` or ``{"mode":
            "prune"}``, or names the other mode than this layer's.
        """
        self._check_extra_state(state, "MaskedLinear.set_extra_state", "state")

    def _check_extra_state(self, state: object, func: str, name: str) -> None:
        """Raise unless ``state`` is ``{"mode": self.mode}``."""
        expected = f"{{'mode': {self._mode!r}}} like this layer"
        if not isinstance(state, Mapping) or set(state) != {"mode"}:
            raise ValueError(arg_error(func, name, expected, repr(state)))
        if state["mode"] != self._mode:
            hint = f" (load it into a layer built with mode={state['mode']!r})"
            raise ValueError(arg_error(func, name, expected, f"{dict(state)!r}{hint}"))

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
        """Check the mask and mode first; load nothing of this layer if bad."""
        func = "MaskedLinear.load_state_dict"
        problems: list[str] = []
        mask_key, mode_key = prefix + "mask", prefix + "_extra_state"
        try:
            if mask_key in state_dict:
                saved = state_dict[mask_key]
                mask = as_bool_mask(
                    saved,
                    self.mask,
                    func,
                    f'state_dict["{mask_key}"]',
                    "self.mask",
                    same_device=False,  # load_state_dict copies across devices
                )
                if mask is not saved:
                    # A float 0/1 mask loads as bool, also with assign=True;
                    # the caller's dict is left as it was.
                    state_dict = {**state_dict, mask_key: mask}
        except (TypeError, ValueError) as error:
            problems.append(str(error))
        try:
            if mode_key in state_dict:
                name = f'state_dict["{mode_key}"]'
                self._check_extra_state(state_dict[mode_key], func, name)
        except ValueError as error:
            problems.append(str(error))
        if problems:
            error_msgs.extend(problems)
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

    def extra_repr(self) -> str:
        """Sizes, bias, mode and how many weight entries train."""
        trainable = int(self.mask.sum()) if self.mask.device.type != "meta" else "?"
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}, mode={self.mode!r}, "
            f"trainable={trainable}/{self.mask.numel()}"
        )
