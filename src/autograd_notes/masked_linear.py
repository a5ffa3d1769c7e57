"""A linear layer whose weight trains only inside a mask.

The layer computes ``y = x @ W.T + b`` like :class:`torch.nn.Linear`, with a
bool mask ``M`` of ``W``'s shape that decides which weight entries learn.
"Masked" has two meanings, chosen with ``mode``:

``"freeze"`` (the default)
    The forward pass uses the *whole* weight, and the entries outside the
    mask are constants to autograd: they keep their values and act on the
    output, but get no gradient of any order. The weight gradient is
    ``(g.T @ x) * M``, and so is each second-order one (a gradient penalty
    differentiates ``backward``, whose ``g @ W`` uses ``W`` too). These are
    the true derivatives with respect to the entries inside the mask only:
    :func:`torch.autograd.gradcheck` and
    :func:`~torch.autograd.gradgradcheck` reject the weight as a whole, by
    construction, and pass when the entries outside the mask are constants.

``"prune"``
    The forward pass uses ``W * M``: entries outside the mask act as zeros,
    a zero gradient there is the true derivative, and ``gradcheck`` and
    ``gradgradcheck`` pass for the input, the weight and the bias.

In both modes the input and bias gradients are exact. Masking gives exact
zeros, as :func:`~autograd_notes.apply_mask` does, never ``inf * 0 = nan``:
the weight gradient, first or second order, is exactly zero outside the mask
even where the unmasked one is ``inf`` or ``nan``, and in prune mode an
``inf``/``nan`` weight entry outside the mask acts as a zero. Remember that
:ref:`a zero gradient is not frozen <zero-gradient-is-not-frozen>`: weight
decay and momentum still move those entries
(:func:`~autograd_notes.keep_frozen` stops them).

:class:`MaskedLinearFunction` is the custom :class:`torch.autograd.Function`
underneath. It saves what :class:`torch.nn.Linear` saves (the input and the
weight) plus the bool mask, and supports double backward,
:func:`torch.func.vmap` over the inputs, the weights or a batch of masks
(``generate_vmap_rule``; ``vmap(grad(...))`` too) and
``torch.compile(fullgraph=True)``, both with a bool mask (a float mask's 0/1
check reads its values, which neither can). Without ``create_graph`` (and
outside functorch transforms) ``backward`` computes the same values with
fewer passes over memory, writing only into temporaries it allocated.
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
from autograd_notes._torch import functorch_transforms_active
from autograd_notes.freezing import zero_outside

__all__ = ["MaskedLinear", "MaskedLinearFunction", "masked_linear"]

Mode = Literal["freeze", "prune"]
_MODES: tuple[str, ...] = ("freeze", "prune")
_APPLY = "MaskedLinearFunction.apply"
_BOOL_ONLY = "a bool tensor (masked_linear() also takes a float 0/1 mask)"


def _check_mode(mode: object, func: str) -> None:
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(arg_error(func, "mode", "'freeze' or 'prune'", repr(mode)))


def _check_args(
    func: str, input: object, weight: object, mask: object, bias: object, mode: object
) -> Tensor:
    """Validate the arguments of ``func``; return the mask as a bool tensor.

    Metadata first (types, layouts, shapes, dtypes, devices); a float mask's
    0/1 values (:func:`check_mask`) are read last. ``apply`` takes only bool
    masks, so it reads no values and ``torch.compile`` traces it.
    """
    _check_mode(mode, func)
    input = check_tensor(input, func, "input")
    weight = check_tensor(weight, func, "weight")
    if weight.dim() != 2:
        want, got = "2-D, of shape (out_features, in_features)", weight.shape
        raise ValueError(arg_error(func, "weight", want, f"shape {tuple(got)}"))
    if not weight.is_floating_point():
        want = "a floating-point tensor"
        raise TypeError(arg_error(func, "weight", want, weight.dtype))
    if func == _APPLY:
        mask = check_tensor(mask, func, "mask")
        if mask.dtype != torch.bool:
            raise TypeError(arg_error(func, "mask", _BOOL_ONLY, mask.dtype))
    out_features, in_features = weight.shape
    if input.dim() == 0 or input.shape[-1] != in_features:
        want = f"have last dimension in_features={in_features} like 'weight'"
        raise ValueError(arg_error(func, "input", want, f"shape {tuple(input.shape)}"))
    tensors = [("input", input)]
    if bias is not None:
        bias = check_tensor(bias, func, "bias")
        if bias.shape != (out_features,):
            want = f"have shape (out_features,) = ({out_features},) like 'weight'"
            raise ValueError(arg_error(func, "bias", want, tuple(bias.shape)))
        tensors.append(("bias", bias))
    for name, value in tensors:
        if value.dtype != weight.dtype:
            want = f"of the dtype of 'weight' ({weight.dtype})"
            raise TypeError(arg_error(func, name, want, value.dtype))
        if value.device != weight.device:
            want = f"on the device of 'weight' ({weight.device})"
            raise ValueError(arg_error(func, name, want, str(value.device)))
    return as_bool_mask(mask, weight, func)


# An integer dtype as wide as each floating dtype, for _keep_inside.
_WORDS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _keep_inside(tensor: Tensor, mask: Tensor, *, in_place: bool = False) -> Tensor:
    """:func:`zero_outside`'s values, bit for bit, for the paths autograd skips.

    ``mask`` becomes words as wide as ``tensor``'s entries, all ones where
    True, and ``tensor``'s bits are ANDed with them: an entry is kept exactly
    (``inf`` and ``nan`` too) or becomes ``+0.0``. On the CPU that is several
    times faster than :func:`torch.where`, and as fast as a product with the
    mask (which turns ``inf * 0`` into ``nan``). Not differentiable, nor for
    functorch transforms. A lazy negative bit (``z.conj().imag``) is applied
    first, into a copy, since bits cannot be viewed through it.
    """
    words = mask.to(_WORDS[tensor.element_size()]).neg_()
    if in_place:
        tensor.view(words.dtype).bitwise_and_(words)
        return tensor
    bits = tensor.resolve_neg().view(words.dtype)
    return words.bitwise_and_(bits).view(tensor.dtype)


def _may_write_in_place() -> bool:
    """Whether ``backward`` may overwrite the temporaries it allocated.

    Not while building a graph of the backward (``create_graph=True``, which
    ``torch.func.grad`` also uses), and not under a functorch transform such
    as :func:`torch.func.vmap` (no in-place op of an unbatched tensor with a
    batched mask, no ``out=``).
    """
    return not (torch.is_grad_enabled() or functorch_transforms_active())


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
    ``mask`` in prune mode (see the module docstring). Call it as
    ``MaskedLinearFunction.apply(input, weight, mask, bias, mode)``, the
    argument order of :func:`masked_linear`, with ``mask`` a bool tensor of
    ``weight``'s exact shape (no broadcasting; convert a float 0/1 mask with
    :func:`~autograd_notes.check_mask`), ``bias`` ``None`` or a tensor, and
    ``mode`` ``"freeze"`` or ``"prune"``. ``apply`` checks the arguments like
    :func:`masked_linear` (only metadata, so ``torch.compile`` traces it).

    ``backward`` returns ``(grad_input, grad_weight, None, grad_bias,
    None)``, one per ``forward`` input, each ``None`` when not needed; it
    computes and saves only what is needed.

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
    ValueError: MaskedLinearFunction.apply() argument 'mask' must have shape
    (2, 2) like 'weight', not (2,)
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(
        input: Tensor, weight: Tensor, mask: Tensor, bias: Tensor | None, mode: Mode
    ) -> Tensor:
        """Check the arguments, then compute ``F.linear(input, W_eff, bias)``."""
        _check_args(_APPLY, input, weight, mask, bias, mode)
        if mode == "freeze":
            return F.linear(input, weight, bias)
        if functorch_transforms_active():
            return F.linear(input, zero_outside(weight, mask), bias)
        return F.linear(input, _keep_inside(weight, mask), bias)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Tensor) -> None:
        """Save the input, the weight (each only if needed) and the mask."""
        input, weight, mask, _bias, mode = inputs
        needs_input, needs_weight = ctx.needs_input_grad[:2]
        # Like nn.Linear: the input only feeds the weight gradient and the
        # weight only feeds the input gradient.
        ctx.save_for_backward(
            input if needs_weight else None, weight if needs_input else None, mask
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
            # Out of place, differentiable, fine under vmap over masks. W acts
            # only through its entries inside the mask: those outside are
            # constants (freeze) or zeros (prune) to the second order too.
            if needs_input:
                frozen = ctx.mode == "freeze"
                outside = weight.detach() if frozen else weight.new_zeros(())
                grad_input = grad_output @ torch.where(mask, weight, outside)
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
        Shape ``(*, in_features)``, dense: any number of leading dims.
    weight : torch.Tensor
        Floating-point tensor of shape ``(out_features, in_features)``.
    mask : torch.Tensor
        Bool tensor (or floating 0/1) of ``weight``'s exact shape, on its
        device; ``True`` marks entries that train. Checked with
        :func:`~autograd_notes.check_mask`.
    bias : torch.Tensor, optional
        ``None`` or a tensor of shape ``(out_features,)``.
    mode : str, default "freeze"
        ``"freeze"``: the forward uses all of ``weight``, and the entries
        outside the mask are constants (no gradient of any order).
        ``"prune"``: the forward uses ``weight`` with zeros outside the mask.

    Returns
    -------
    torch.Tensor
        Shape ``(*, out_features)``.

    Raises
    ------
    TypeError, ValueError
        Naming the argument, before any computation: a bad ``mode``, a
        non-tensor or non-dense tensor, a shape, dtype or device that does not
        match ``weight``'s, a non-floating ``weight``, or a mask that
        :func:`~autograd_notes.check_mask` rejects.

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


def _check_dtype(dtype: object, device: torch.device | None, func: str) -> None:
    """Raise unless ``dtype`` is ``None`` or a dtype ``nn.init`` can fill."""
    if dtype is None:
        return
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        actual = dtype if isinstance(dtype, torch.dtype) else type_name(dtype)
        want = "a floating-point torch.dtype or None"
        raise TypeError(arg_error(func, "dtype", want, actual))
    try:  # float8 and float4 cannot be drawn at random, on the CPU at least
        torch.empty(0, dtype=dtype, device=device).uniform_()
    except (NotImplementedError, RuntimeError) as error:
        reason = str(error).split("\n")[0]
        want = "a torch.dtype that torch.nn.init can fill here, or None"
        raise TypeError(arg_error(func, "dtype", want, f"{dtype} ({reason})")) from None


class MaskedLinear(nn.Module):
    """:class:`torch.nn.Linear` whose weight trains only inside a mask.

    Parameters
    ----------
    in_features, out_features : int
        Sizes of each input and output sample (non-negative ints, not bools).
    mask : torch.Tensor
        Bool (or floating 0/1) tensor of shape ``(out_features, in_features)``
        on the layer's device, copied into a bool buffer ``mask``: it moves
        with :meth:`~torch.nn.Module.to`, stays bool under dtype casts and is
        saved in the ``state_dict``.
    bias : bool, default True
        Whether to learn an additive bias (never masked).
    mode : str, default "freeze"
        As in :func:`masked_linear`. Saved in the ``state_dict`` too (as its
        ``_extra_state``): a state dict loads only into a layer of its mode.
    device, dtype : optional
        As for ``nn.Linear`` (a floating-point dtype).

    Raises
    ------
    TypeError, ValueError
        Naming the argument, before allocating the parameters: a size not a
        non-negative int, a ``bias`` not a bool, a bad ``mode``, ``device`` or
        ``dtype``, or a mask that is not of shape
        ``(out_features, in_features)``, on the layer's device, bool or
        floating 0/1.

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
        _check_dtype(dtype, where, func)
        shape = (self.out_features, self.in_features)
        mask = check_tensor(mask, func, "mask")
        if mask.shape != shape:
            want = f"have shape (out_features, in_features) = {shape}"
            raise ValueError(arg_error(func, "mask", want, tuple(mask.shape)))
        # The whole mask check, against a stand-in for the weight that
        # allocates nothing of its size; then a copy, never the caller's mask.
        stand_in = torch.empty((), device=where, dtype=dtype).expand(shape)
        bool_mask = as_bool_mask(mask, stand_in, func)
        self._mode = mode
        factory: dict[str, Any] = {"device": where, "dtype": dtype}
        self.weight = nn.Parameter(torch.empty(shape, **factory))
        if bias:
            self.bias = nn.Parameter(torch.empty(self.out_features, **factory))
        else:
            self.register_parameter("bias", None)
        self.register_buffer("mask", bool_mask.clone())
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
        """A new layer with ``linear``'s sizes, device, dtype, weight and bias.

        The values are copied: the new layer shares no storage with
        ``linear``, which is left unchanged (it is first initialised as
        usual, so this draws from the global RNG). ``mask`` and ``mode`` are
        as for :class:`MaskedLinear`, the mask on ``linear``'s device.

        Raises
        ------
        TypeError, ValueError
            If ``linear`` is not an initialised :class:`torch.nn.Linear` (or
            subclass) with a floating-point weight, or the constructor rejects
            ``mask`` or ``mode``.

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
        weight, kind = linear.weight, type_name(linear)
        if isinstance(weight, nn.parameter.UninitializedParameter):
            want = "an initialised torch.nn.Linear (call it once first)"
            raise TypeError(arg_error(func, "linear", want, f"an uninitialised {kind}"))
        if not weight.is_floating_point():
            want, got = "a torch.nn.Linear with a floating-point weight", weight.dtype
            raise TypeError(
                arg_error(func, "linear", want, f"a {kind} with a {got} weight")
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
        """Raise :class:`ValueError` unless ``state`` is ``{"mode": self.mode}``."""
        self._check_extra_state(state, "MaskedLinear.set_extra_state", "state")

    def _check_extra_state(self, state: object, func: str, name: str) -> None:
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
                saved, name = state_dict[mask_key], f'state_dict["{mask_key}"]'
                # load_state_dict copies across devices: no device check.
                mask = as_bool_mask(
                    saved, self.mask, func, name, "self.mask", same_device=False
                )
                if mask is not saved:  # a float 0/1 mask loads as bool, also
                    # with assign=True; the caller's dict is left as it was
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
