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
# A linear layer ``y = x @ W.T + b`` with a bool mask ``M`` of ``W``'s shape,
# in two modes. ``"freeze"`` uses the whole ``W`` in the forward pass but
# zeroes the weight gradient outside ``M``: deliberately *not* the
# derivative. ``"prune"`` uses ``W * M``, whose true derivative is zero
# outside ``M``. :ref:`sphx_glr_tutorials_08_training_part_of_a_weight.py`
# gets both without a custom Function; here we write one.
import torch
import torch.nn.functional as F

from autograd_notes import MaskedLinearFunction, expect_error, format_graph

_ = torch.manual_seed(0)
mask = torch.tensor([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 1]], dtype=torch.bool)
x = torch.randn(5, 4, requires_grad=True)
w = torch.randn(3, 4, requires_grad=True)
b = torch.randn(3, requires_grad=True)

# %%
# ``forward``, ``setup_context``, ``backward``
# --------------------------------------------
# ``forward`` gets the arguments exactly as passed to ``apply`` (tensors and
# plain values alike) and returns the output; it runs without recording, so
# the Function becomes *one* node of the graph. ``setup_context`` stores
# what ``backward`` needs: tensors through ``ctx.save_for_backward`` (so
# autograd catches an in-place change to them), plain values on ``ctx``.
#
# ``backward`` returns one gradient per argument of ``forward``, in order:
# five here, ``None`` for the mask and the mode, which have no gradient.
# ``ctx.needs_input_grad`` holds one bool per argument, by the same
# positions, so ``backward`` computes only what is needed. (Older code
# writes ``forward(ctx, input, ...)`` and saves inside it, with no
# ``setup_context``: still valid, but ``torch.func`` transforms need the
# split form.) A Function holds no state; the ``nn.Module`` that calls it
# owns the parameters and passes them to ``apply``.


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
        if needs_bias:  # False for a layer without bias
            grad_bias = grad_2d.sum(0)
        return grad_input, grad_weight, None, grad_bias, None


# %%
# You call a Function with ``apply``, never ``forward``. The output's
# ``grad_fn`` is one node named after the class, with edges to the inputs
# that need a gradient: the mask and the mode are not in the graph. The
# weight gradient is plain autograd's times the mask (a ``-0.`` is a zero
# too: a negative number times ``False``).
y = MyMaskedLinear.apply(x, w, mask, b, "freeze")
print(format_graph(y, names={"x": x, "w": w, "b": b, "y": y}))
y.sum().backward()
print(w.grad)

# sphinx_gallery_start_ignore
assert y.grad_fn.name() == "MyMaskedLinearBackward"
_acc = "torch::autograd::AccumulateGrad"
_next = [f and f.name() for f, _ in y.grad_fn.next_functions]
assert _next == [_acc, _acc, None, _acc]  # one edge per tensor input
_y3 = MyMaskedLinear.apply(torch.randn(2, 5, 4), w, mask, b, "prune")
assert _y3.shape == (2, 5, 3)  # any batch dimensions
_w_ref = w.detach().clone().requires_grad_()
F.linear(x.detach(), _w_ref, b.detach()).sum().backward()
assert torch.equal(w.grad, _w_ref.grad * mask)
assert torch.signbit(w.grad[~mask]).any()  # the printed -0.


class _OldStyle(torch.autograd.Function):  # forward(ctx, ...) still works
    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t * t

    @staticmethod
    def backward(ctx, grad):
        (t,) = ctx.saved_tensors
        return 2 * t * grad


_t = torch.tensor([3.0], requires_grad=True)
_OldStyle.apply(_t).backward()
assert _t.grad.item() == 6.0
_message = ""
try:  # ... but not under torch.func
    torch.func.grad(lambda t: _OldStyle.apply(t).sum())(_t.detach())
except RuntimeError as _error:
    _message = str(_error)
assert "setup_context" in _message
# sphinx_gallery_end_ignore

# %%
# Common mistake: returning the gradients in the wrong order
# ----------------------------------------------------------
# Autograd matches the values ``backward`` returns to the inputs *by
# position*. Swap the first two: with a batch of 5 the input is ``(5, 4)``
# and the weight ``(3, 4)``, so autograd refuses; with a batch of 3 both are
# ``(3, 4)``, and the numbers are wrong without a warning. The fix is
# ``forward``'s order, as in ``MyMaskedLinear``: ``grad_input, grad_weight,
# None, grad_bias, None``.


class SwappedOrder(MyMaskedLinear):
    @staticmethod
    def backward(ctx, grad_output):
        grad_in, grad_w, _, grad_b, _ = MyMaskedLinear.backward(ctx, grad_output)
        return grad_w, grad_in, None, grad_b, None  # WRONG order


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
#   other than ``None`` for a non-tensor (the mode, a bias passed as
#   ``None``). A gradient for a tensor that needs none (the mask) is dropped.
# * **The shape**, loosely: another shape is an error *unless* the input
#   broadcasts to it; then autograd silently sums it down. A bias gradient of
#   shape ``(5, 3)`` is summed over the batch (below); ``(3, 1)`` is an error.
# * **The dtype**: not at all. A ``float64`` (even an integer) gradient for a
#   ``float32`` input is silently cast to ``float32``.
# * **The values**: never (see the next tutorial,
#   :ref:`sphx_glr_tutorials_10_testing_a_custom_function.py`).


class UnsummedBias(MyMaskedLinear):
    @staticmethod
    def backward(ctx, grad_output):
        grad_in, grad_w, _, _, _ = MyMaskedLinear.backward(ctx, grad_output)
        return grad_in, grad_w, None, grad_output, None  # (5, 3), not (3,)


b.grad = None
UnsummedBias.apply(x, w, mask, b, "freeze").sum().backward()
print("b.grad:", b.grad)


# sphinx_gallery_start_ignore
def _error(fn, *args):  # the message of the error that fn(*args) raises
    try:
        fn(*args)
    except (RuntimeError, ValueError) as error:
        return str(error)


def _run(backward, bias=b):
    """Grads of x, w, bias for a variant of MyMaskedLinear with this backward."""
    _cls = type("_Variant", (MyMaskedLinear,), {"backward": staticmethod(backward)})
    _x, _w = (t.detach().clone().requires_grad_() for t in (x, w))
    _b = None if bias is None else bias.detach().clone().requires_grad_()
    _cls.apply(_x, _w, mask, _b, "freeze").sum().backward()
    return _x.grad, _w.grad, None if _b is None else _b.grad


_w = w.detach().clone().requires_grad_()
_y = MyMaskedLinear.apply(x.detach(), _w, mask, None, "freeze")
_w.detach().add_(1.0)  # a saved tensor, changed in place: caught at backward
assert "modified by an inplace operation" in _error(_y.sum().backward)
_ok, _flags = MyMaskedLinear.backward, []
_run(lambda ctx, g: _flags.append(ctx.needs_input_grad) or _ok(ctx, g), bias=None)
assert _flags == [(True, True, False, False, False)]  # one flag per argument
assert torch.equal(b.grad, _run(_ok)[2])  # (5, 3) summed over the batch
for _backward, _bias, _match in [
    (lambda ctx, g: _ok(ctx, g)[:4], b, "number of gradients (expected 5, got 4"),
    (lambda ctx, g: (*_ok(ctx, g)[:3], g.sum(0)[:, None], None), b, "compatible"),
    (lambda ctx, g: (*_ok(ctx, g)[:3], g.sum(0), None), None, "position 4, but"),
    (lambda ctx, g: (*_ok(ctx, g)[:4], g), b, "position 5, but the corresponding"),
]:
    assert _match in _error(_run, _backward, _bias)
_got = _run(lambda ctx, g: ((o := _ok(ctx, g))[0].double(), o[1].long(), *o[2:]))
assert _got[0].dtype == _got[1].dtype == torch.float32  # cast to the input's dtype
_masked = _run(lambda ctx, g: (*_ok(ctx, g)[:2], torch.ones(3, 4), *_ok(ctx, g)[3:]))
assert all(torch.equal(p, q) for p, q in zip(_masked, _run(_ok), strict=True))
# sphinx_gallery_end_ignore

# %%
# The package's version
# ---------------------
# :class:`~autograd_notes.MaskedLinearFunction` is this Function: the same
# order, ``apply(input, weight, mask, bias, mode)``, the same gradients. It
# saves the input only when the weight needs a gradient (and the weight only
# for the input's), ``None`` otherwise, and its ``apply`` checks every
# argument (shapes, dtypes, devices, the mask, the mode), naming the wrong
# one. :func:`~autograd_notes.masked_linear` and the module
# :class:`~autograd_notes.MaskedLinear` (which holds the parameters) call it.
y = MaskedLinearFunction.apply(x.detach(), w, mask, b, "freeze")
print("saved None:", [t is None for t in y.grad_fn.saved_tensors])

with expect_error(ValueError, "must be 'freeze' or 'prune'"):
    MaskedLinearFunction.apply(x, w, mask, b, "frozen")

# sphinx_gallery_start_ignore
from autograd_notes import masked_linear

assert [t is None for t in y.grad_fn.saved_tensors] == [False, True, False]
for _mode in ("freeze", "prune"):
    _got = []
    for _function in (MyMaskedLinear, MaskedLinearFunction):
        _leaves = [t.detach().clone().requires_grad_() for t in (x, w, b)]
        _function.apply(*_leaves[:2], mask, _leaves[2], _mode).sum().backward()
        _got.append([t.grad for t in _leaves])
    assert all(torch.allclose(p, q) for p, q in zip(*_got, strict=True))
    _want = MyMaskedLinear.apply(x, w, mask, b, _mode)
    assert torch.allclose(masked_linear(x, w, mask, b, mode=_mode), _want)
_bad_bias = (x, w, mask, b[:2], "freeze")
assert "must have shape" in _error(MaskedLinearFunction.apply, *_bad_bias)
# sphinx_gallery_end_ignore

# %%
# ``ctx.mark_non_differentiable``, ``ctx.set_materialize_grads`` and
# ``once_differentiable`` are taught in
# :ref:`sphx_glr_tutorials_12_non_differentiable_points.py` and
# :ref:`sphx_glr_tutorials_13_higher_order_gradients.py`; PyTorch's guide is
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
b.grad = None


class LinearOrder(MyMaskedLinear):
    @staticmethod
    def backward(ctx, grad_output):
        grad_in, grad_w, _, grad_b, _ = MyMaskedLinear.backward(ctx, grad_output)
        return grad_in, grad_w, grad_b, None, None


LinearOrder.apply(x, w, mask, b, "freeze").sum().backward()
print(b.grad)  # None, no error: the bias gradient went to the mask's slot
# sphinx_gallery_start_ignore
assert b.grad is None
# sphinx_gallery_end_ignore

# %%
# **2. Write.** A Function ``ScaleGradient.apply(x, s)`` that returns ``x``'s
# values unchanged and multiplies the gradient by the float ``s`` (``s = -1``
# gives a "gradient reversal" layer). Check it on
# ``t = torch.ones(3, requires_grad=True)`` with ``s = -2.0``.
#
# **Solution**

# %%
t = torch.ones(3, requires_grad=True)


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


ScaleGradient.apply(t, -2.0).sum().backward()
print(t.grad)
# sphinx_gallery_start_ignore
assert torch.equal(t.grad, torch.full((3,), -2.0))
# sphinx_gallery_end_ignore
