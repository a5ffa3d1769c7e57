"""
How do I write my own autograd Function?
========================================

When the gradient autograd computes is not the one you want, you can write the
backward pass yourself as a :class:`torch.autograd.Function`. After this
tutorial you can write one with ``forward``, ``setup_context`` and
``backward``, save what ``backward`` needs, and return exactly one gradient per
input, in the right order.
"""

# %%
# The example: a weight that learns only inside a mask
# -----------------------------------------------------
# A linear layer ``y = x @ W.T + b`` with a bool mask ``M`` of ``W``'s
# shape, in two modes. ``"freeze"``: the forward pass uses the whole ``W``,
# and the weight gradient is zero outside ``M``, deliberately *not* the
# derivative of the forward pass. ``"prune"``: the forward pass uses
# ``W * M``, and a zero gradient outside ``M`` is the true derivative.
# :ref:`sphx_glr_tutorials_07_training_part_of_a_weight.py` gets both without
# a custom Function; here we write one, ending with the package's version,
# :func:`~autograd_notes.masked_linear`.
import torch
import torch.nn.functional as F

from autograd_notes import (
    MaskedLinearFunction,
    expect_error,
    format_graph,
    masked_linear,
)

_ = torch.manual_seed(0)

mask = torch.tensor(
    [[True, False, True, True], [False, True, True, False], [True, True, False, True]]
)
x = torch.randn(5, 4, requires_grad=True)
w = torch.randn(3, 4, requires_grad=True)
b = torch.randn(3, requires_grad=True)

# %%
# ``forward`` computes, ``setup_context`` saves
# ---------------------------------------------
# ``forward`` receives the arguments exactly as they are passed to ``apply``,
# tensors and plain values alike (the mode is a string), and returns the
# output. It runs with gradient recording switched off: the Function as a
# whole becomes *one* node of the graph, whatever it does inside.
#
# ``setup_context`` then stores what ``backward`` will need. Tensors go
# through ``ctx.save_for_backward``, which lets autograd check that nobody
# modified them in place before ``backward`` reads them; plain values can be
# ordinary attributes of ``ctx``.
#
# ``backward`` returns one gradient per input, in order
# -----------------------------------------------------
# ``forward`` takes five arguments ``(input, weight, mask, bias, mode)``, so
# ``backward`` returns five values in that order: ``None`` for the mask and
# the mode, which have no gradient. ``ctx.needs_input_grad`` holds one
# boolean per argument, by the same positions, so ``backward`` computes only
# what is needed; a layer without bias gets ``None`` for it.


def effective_weight(weight, mask, mode):
    return weight if mode == "freeze" else weight * mask


class MyMaskedLinear(torch.autograd.Function):
    @staticmethod
    def forward(input, weight, mask, bias, mode):
        return F.linear(input, effective_weight(weight, mask, mode), bias)

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, mask, _, mode = inputs
        ctx.save_for_backward(input, weight, mask)
        ctx.mode = mode

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, mask = ctx.saved_tensors
        needs_input, needs_weight, _, needs_bias, _ = ctx.needs_input_grad
        grad_input = grad_weight = grad_bias = None
        # Fold any batch dimensions into one: (*, out) -> (N, out).
        grad_2d = grad_output.reshape(-1, grad_output.shape[-1])
        if needs_input:
            grad_input = grad_output @ effective_weight(weight, mask, ctx.mode)
        if needs_weight:
            grad_weight = (grad_2d.T @ input.reshape(-1, input.shape[-1])) * mask
        if needs_bias:
            grad_bias = grad_2d.sum(0)
        return grad_input, grad_weight, None, grad_bias, None


# %%
# You call a Function with ``apply``, never ``forward`` directly. The result
# is an ordinary tensor whose ``grad_fn`` is *one* node named after the
# class: autograd recorded nothing inside ``forward``. Its edges lead to the
# inputs that need a gradient; the mask and the mode are not in the graph.
y = MyMaskedLinear.apply(x, w, mask, b, "freeze")
print(format_graph(y, names={"x": x, "w": w, "b": b, "y": y}))

# sphinx_gallery_start_ignore
assert type(y) is torch.Tensor
assert y.grad_fn.name() == "MyMaskedLinearBackward"
_next = [None if f is None else f.name() for f, _ in y.grad_fn.next_functions]
_acc = "torch::autograd::AccumulateGrad"
assert _next == [_acc, _acc, None, _acc]  # one edge per tensor input
_y3 = MyMaskedLinear.apply(torch.randn(2, 5, 4), w, mask, b, "prune")
assert _y3.shape == (2, 5, 3)  # any batch dimensions
# sphinx_gallery_end_ignore

# %%
# The weight gradient is zero outside the mask (the ``-0.`` are zeros too: a
# negative number times ``False``) and equals plain autograd's gradient
# times the mask:
y.sum().backward()
print(w.grad)

w_ref = w.detach().clone().requires_grad_()
F.linear(x.detach(), w_ref, b.detach()).sum().backward()
print("same as full gradient * mask:", torch.equal(w.grad, w_ref.grad * mask))

# sphinx_gallery_start_ignore
assert torch.equal(w.grad, w_ref.grad * mask)
assert torch.signbit(w.grad[~mask]).any()  # the printed -0.
# sphinx_gallery_end_ignore

# %%
# Common mistake: returning the gradients in the wrong order
# ----------------------------------------------------------
# Autograd matches the values ``backward`` returns to the inputs *by
# position*. Swap the first two, say because the weight gradient is the one
# you were thinking about:


class SwappedOrder(MyMaskedLinear):
    @staticmethod
    def backward(ctx, grad_output):
        grad_input, grad_weight, _, grad_bias, _ = MyMaskedLinear.backward(
            ctx, grad_output
        )
        return grad_weight, grad_input, None, grad_bias, None  # WRONG order


# %%
# With a batch of 5 samples, the input is ``(5, 4)`` and the weight
# ``(3, 4)``: the shapes differ, and autograd refuses. With a batch of 3,
# both are ``(3, 4)`` and nothing stops the swap: the numbers are wrong,
# without a warning. The fix is the order of ``forward``'s arguments, as in
# ``MyMaskedLinear``: ``return grad_input, grad_weight, None, grad_bias,
# None``.
with expect_error(RuntimeError, "invalid gradient at index 0"):
    SwappedOrder.apply(x, w, mask, b, "freeze").sum().backward()

x3 = torch.randn(3, 4, requires_grad=True)
SwappedOrder.apply(x3, w, mask, b, "prune").sum().backward()
swapped_grad, x3.grad = x3.grad, None
MyMaskedLinear.apply(x3, w, mask, b, "prune").sum().backward()
print("swapped: x.grad[0] =", swapped_grad[0])
print("correct: x.grad[0] =", x3.grad[0])

# sphinx_gallery_start_ignore
_x3 = x3.detach().clone().requires_grad_()
F.linear(_x3, w.detach() * mask, b.detach()).sum().backward()
assert torch.allclose(x3.grad, _x3.grad)
assert not torch.allclose(swapped_grad, _x3.grad)
# sphinx_gallery_end_ignore

# %%
# What autograd checks, and what it does not
# ------------------------------------------
# * **The number** of gradients: too few is an error, and so is a value
#   other than ``None`` for an argument that is not a tensor (the mode, or a
#   bias passed as ``None``).
# * **The shape**, loosely: a gradient of another shape is an error,
#   *unless* the input's shape broadcasts to it. Then autograd silently sums
#   it down to the input's shape: a bias gradient of shape ``(5, 3)`` for a
#   bias of shape ``(3,)`` is summed over the batch (below), while one of
#   shape ``(3, 1)`` is an error.
# * **The dtype**: not at all. A ``float64`` (or even an integer) gradient
#   for a ``float32`` input is silently cast to ``float32``.
# * A gradient for a tensor that needs none (here the mask) is dropped
#   unread.
# * **The values**: never. That is the subject of
#   :ref:`sphx_glr_tutorials_09_testing_a_custom_function.py`.


class UnsummedBias(MyMaskedLinear):
    @staticmethod
    def backward(ctx, grad_output):
        grad_input, grad_weight, _, _, _ = MyMaskedLinear.backward(ctx, grad_output)
        return grad_input, grad_weight, None, grad_output, None  # (5, 3), not (3,)


b.grad = None
UnsummedBias.apply(x, w, mask, b, "freeze").sum().backward()
print("b.grad:", b.grad)

# sphinx_gallery_start_ignore
import contextlib
import io


def _raises(category, match, fn):  # expect_error without printing: hidden checks
    with contextlib.redirect_stdout(io.StringIO()), expect_error(category, match):
        fn()


_w = w.detach().clone().requires_grad_()
_y = MyMaskedLinear.apply(x.detach(), _w, mask, None, "freeze")
with torch.no_grad():
    _w.add_(1.0)  # a saved tensor, changed in place: caught at backward
_raises(RuntimeError, "modified by an inplace operation", _y.sum().backward)


def _run(backward, bias=b):
    """Grads of x, w, bias for a variant of MyMaskedLinear with this backward."""
    _cls = type("_Variant", (MyMaskedLinear,), {"backward": staticmethod(backward)})
    _x, _w = (t.detach().clone().requires_grad_() for t in (x, w))
    _b = None if bias is None else bias.detach().clone().requires_grad_()
    _cls.apply(_x, _w, mask, _b, "freeze").sum().backward()
    return _x.grad, _w.grad, None if _b is None else _b.grad


_ok = MyMaskedLinear.backward
_right = _run(_ok)
_flags = []
_run(lambda ctx, g: _flags.append(ctx.needs_input_grad) or _ok(ctx, g), bias=None)
assert _flags == [(True, True, False, False, False)]  # one flag per argument
assert torch.equal(b.grad, _right[2])  # (5, 3) summed over the batch
for _backward, _bias, _match in [
    (lambda ctx, g: _ok(ctx, g)[:4], b, r"number of gradients \(expected 5, got 4"),
    (lambda ctx, g: (*_ok(ctx, g)[:3], g.sum(0)[:, None], None), b, "compatible"),
    (lambda ctx, g: (*_ok(ctx, g)[:3], g.sum(0), None), None, "position 4, but"),
    (lambda ctx, g: (*_ok(ctx, g)[:4], g), b, "position 5, but the corresponding"),
]:
    _raises(RuntimeError, _match, lambda f=_backward, c=_bias: _run(f, bias=c))
for _dtype in (torch.float64, torch.int64):  # cast to the input's dtype
    _got = _run(lambda ctx, g, d=_dtype: (_ok(ctx, g)[0].to(d), *_ok(ctx, g)[1:]))
    assert _got[0].dtype == torch.float32
# sphinx_gallery_end_ignore

# %%
# The package's version
# ---------------------
# :class:`~autograd_notes.MaskedLinearFunction` is this Function, with the
# same argument order, ``apply(input, weight, mask, bias, mode)``, and the
# same gradients. One refinement: the input is needed only for the weight
# gradient and the weight only for the input gradient, so it saves each
# only when the other needs a gradient, and ``None`` otherwise;
# ``ctx.saved_tensors`` then gives ``None`` back in its place. Its ``apply``
# also checks every argument (shapes, dtypes, devices, the mask, the mode)
# and names the one that is wrong. The function
# :func:`~autograd_notes.masked_linear` and the module
# :class:`~autograd_notes.MaskedLinear` call it; the module holds the
# weight and the bias as parameters, which a Function never does.
y = MaskedLinearFunction.apply(x.detach(), w, mask, b, "freeze")
print("saved None:", [t is None for t in y.grad_fn.saved_tensors])

with expect_error(ValueError, "must be 'freeze' or 'prune'"):
    MaskedLinearFunction.apply(x, w, mask, b, "frozen")

# sphinx_gallery_start_ignore
assert [t is None for t in y.grad_fn.saved_tensors] == [False, True, False]
for _mode in ("freeze", "prune"):
    _got = []
    for _function in (MyMaskedLinear, MaskedLinearFunction):
        _leaves = [t.detach().clone().requires_grad_() for t in (x, w, b)]
        _function.apply(
            _leaves[0], _leaves[1], mask, _leaves[2], _mode
        ).sum().backward()
        _got.append([t.grad for t in _leaves])
    assert all(torch.allclose(p, q) for p, q in zip(*_got, strict=True))
    assert torch.allclose(
        masked_linear(x, w, mask, b, mode=_mode),
        MyMaskedLinear.apply(x, w, mask, b, _mode),
    )
_raises(
    ValueError,
    "bias'? must have shape",
    lambda: MaskedLinearFunction.apply(x, w, mask, torch.zeros(4), "freeze"),
)
# sphinx_gallery_end_ignore

# %%
# ``ctx.mark_non_differentiable``, ``ctx.set_materialize_grads`` and
# ``once_differentiable`` are taught in
# :ref:`sphx_glr_tutorials_11_non_differentiable_points.py` and
# :ref:`sphx_glr_tutorials_12_higher_order_gradients.py`; PyTorch's guide is
# `Extending torch.autograd
# <https://docs.pytorch.org/docs/stable/notes/extending.html>`_.
#
# Exercises
# ---------
#
# **1. Predict.** ``backward`` ends with ``return grad_input, grad_weight,
# grad_bias, None, None``, the order of ``F.linear(input, weight, bias)``.
# Is there an error? What is ``b.grad`` after a backward pass?
#
# **Solution**


# %%
class LinearOrder(MyMaskedLinear):
    @staticmethod
    def backward(ctx, grad_output):
        grad_input, grad_weight, _, grad_bias, _ = MyMaskedLinear.backward(
            ctx, grad_output
        )
        return grad_input, grad_weight, grad_bias, None, None


b.grad = None
LinearOrder.apply(x, w, mask, b, "freeze").sum().backward()
print(b.grad)  # None, no error: the bias gradient went to the mask's slot
# sphinx_gallery_start_ignore
assert b.grad is None
# sphinx_gallery_end_ignore

# %%
# **2. Write.** A Function ``ScaleGradient.apply(x, s)`` whose forward pass
# returns ``x``'s values unchanged and whose backward pass multiplies the
# gradient by the float ``s`` (with ``s = -1`` this is a "gradient reversal"
# layer). Check it on ``t = torch.ones(3, requires_grad=True)`` with
# ``s = -2.0``.
#
# **Solution**


# %%
class ScaleGradient(torch.autograd.Function):
    @staticmethod
    def forward(x, s):
        return x.clone()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.s = inputs[1]  # a float: an attribute of ctx

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.s, None  # one value per input; None for s


t = torch.ones(3, requires_grad=True)
ScaleGradient.apply(t, -2.0).sum().backward()
print(t.grad)
# sphinx_gallery_start_ignore
assert torch.equal(t.grad, torch.full((3,), -2.0))
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# Autograd never checks the values ``backward`` returns.
# :ref:`sphx_glr_tutorials_09_testing_a_custom_function.py` shows how to
# check them yourself.
