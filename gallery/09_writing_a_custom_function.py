"""
How do I write my own autograd Function?
========================================

When autograd's gradient is not the one you want, write the backward pass
yourself as a :class:`torch.autograd.Function`. After this tutorial you can
write one, return exactly one gradient per input in the right order, and
wrap it in an ``nn.Module`` that owns its parameters.
"""

# %%
# A first Function: one input
# ---------------------------
# :math:`e^x` is its own derivative, so its ``backward`` can reuse the
# *output*. A Function is a class with three static methods:
#
# * ``forward`` gets the arguments as they are passed and returns the
#   output. It runs without recording: the Function is *one* graph node.
# * ``setup_context(ctx, inputs, output)`` stores what ``backward`` needs:
#   tensors with ``ctx.save_for_backward``, other values on ``ctx``.
# * ``backward(ctx, grad_output)`` gets the gradient with respect to the
#   output and returns the one with respect to the input.
import math

import torch
import torch.nn.functional as F
from torch import nn

from autograd_notes import MaskedLinear, MaskedLinearFunction, expect_error


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.exp(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


# %%
# You call a Function with ``apply``, never ``forward``. The output's
# ``grad_fn`` is named after the class, ``ExpBackward``, and the gradient is
# the formula :math:`e^x`, which autograd also computes for ``torch.exp``:
x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
y = Exp.apply(x)
print(y)
y.sum().backward()
print("ours:", x.grad, "| e^x:", torch.exp(x.detach()))

# sphinx_gallery_start_ignore
from contextlib import redirect_stdout

assert (y.grad_fn.name(), torch.equal(x.grad, x.detach().exp())) == ("ExpBackward", 1)
assert torch.equal(x.grad, torch.autograd.grad(torch.exp(x).sum(), x)[0])
_fwd = staticmethod(lambda ctx, t: (ctx.save_for_backward(t), t * t)[1])
_bwd = staticmethod(lambda ctx, g: 2 * ctx.saved_tensors[0] * g)
_Old = type("_Old", (torch.autograd.Function,), {"forward": _fwd, "backward": _bwd})
_Old.apply(_t := torch.tensor([3.0], requires_grad=True)).backward()
assert _t.grad.item() == 6.0  # still works... but not under torch.func:
with redirect_stdout(None), expect_error(RuntimeError, "override the setup_context"):
    torch.func.grad(lambda t: _Old.apply(t).sum())(_t.detach())
with redirect_stdout(None), expect_error(RuntimeError, "does not have vmap support"):
    torch.func.vmap(Exp.apply)(x.detach())  # the split form is not enough
# sphinx_gallery_end_ignore

# %%
# Older code writes ``forward(ctx, x)`` and saves inside it, with no
# ``setup_context``. That still works, but the :mod:`torch.func` transforms
# (later, in :ref:`tutorial 14
# <sphx_glr_tutorials_14_forward_mode_and_torch_func.py>`) need the split form;
# ``vmap`` needs more: ``generate_vmap_rule = True`` on the class or a ``vmap``
# static method, which ``Exp`` does not have.
#
# Two inputs: one gradient each, in order
# ---------------------------------------
# A linear layer without bias, ``x @ w.T``, has two inputs, so ``backward``
# returns two gradients, in the order of ``forward``'s arguments.
# ``ctx.needs_input_grad`` holds one bool per argument, in the same order, so
# ``backward`` skips a gradient nobody needs (usually the data's).


class Linear(torch.autograd.Function):
    @staticmethod
    def forward(x, w):
        return x @ w.T

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, w = inputs
        ctx.save_for_backward(x, w)

    @staticmethod
    def backward(ctx, grad_output):
        x, w = ctx.saved_tensors
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ w
        if ctx.needs_input_grad[1]:
            grad_w = grad_output.T @ x
        return grad_x, grad_w


# %%
# **Common mistake: gradients in the wrong order.** Autograd matches the
# values ``backward`` returns to the inputs *by position*. Return the
# weight's gradient first: with a batch of 5 the input is ``(5, 4)`` and the
# weight ``(3, 4)``, so autograd refuses. With a batch of 3 both are
# ``(3, 4)``: the weight silently gets the input's gradient. The fix is
# ``forward``'s order, as in ``Linear`` (whose gradients are ``F.linear``'s).


class SwappedLinear(Linear):
    @staticmethod
    def backward(ctx, grad_output):
        grad_x, grad_w = Linear.backward(ctx, grad_output)
        return grad_w, grad_x  # WRONG order


_ = torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
x5 = torch.randn(5, 4, requires_grad=True)
with expect_error(RuntimeError, "invalid gradient at index 0"):
    SwappedLinear.apply(x5, w).sum().backward()

x3 = torch.randn(3, 4, requires_grad=True)
for function in (SwappedLinear, Linear):
    w.grad = None
    function.apply(x3, w).sum().backward()
    print(f"{function.__name__:>13}: w.grad[0] = {w.grad[0]}")

# sphinx_gallery_start_ignore
SwappedLinear.apply(x3, _w := w.detach().requires_grad_()).sum().backward()
assert torch.equal(_w.grad, torch.ones(3, 3) @ w.detach())  # the input's gradient
_l = [t.detach().requires_grad_() for t in (x3, w)]
Linear.apply(*_l).sum().backward()
_grads = torch.autograd.grad(F.linear(*_l).sum(), _l)
assert all(torch.allclose(t.grad, g) for t, g in zip(_l, _grads, strict=True))
# sphinx_gallery_end_ignore

# %%
# The masked linear Function
# --------------------------
# :ref:`sphx_glr_tutorials_08_training_part_of_a_weight.py` trains a weight
# only inside a bool mask ``M``. ``"freeze"`` mode uses all of ``W`` but
# zeroes its gradient outside ``M`` (deliberately *not* the derivative);
# ``"prune"`` uses ``W * M``, whose true derivative is zero there. As a
# Function, that is ``Linear`` plus a bias, the mask and the mode. The mask
# and the mode get no gradient but keep their slots: ``backward`` returns
# five values, ``None`` for those two (and for a bias of ``None``).


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
        if needs_input:
            grad_input = grad_output @ effective_weight(weight, mask, ctx.mode)
        if needs_weight:
            grad_weight = (grad_output.T @ input) * mask
        if needs_bias:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, None, grad_bias, None


# %%
# ``y.grad_fn.needs_input_grad`` shows that only the weight and the bias need a
# gradient here, and the weight gradient is zero outside the mask (``-0.`` is a
# zero too: a negative number times ``False``) while it is finite: ``inf *
# False`` is ``nan``, so the package's Function masks with ``torch.where``.
# This ``backward`` expects inputs of shape ``(batch, in)``; later, in
# :ref:`tutorial 10 <sphx_glr_tutorials_10_testing_a_custom_function.py>`, you
# test others.
mask = torch.tensor([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 1]], dtype=torch.bool)
x = torch.randn(5, 4)  # data: needs no gradient
b = torch.randn(3, requires_grad=True)
y = MyMaskedLinear.apply(x, w, mask, b, "freeze")
print(y.grad_fn.needs_input_grad)
w.grad = None
y.sum().backward()
print(w.grad)

# sphinx_gallery_start_ignore
assert y.grad_fn.needs_input_grad == (False, True, False, True, False)
assert torch.equal(w.grad, torch.ones(3, 5) @ x * mask)  # autograd's, masked
assert torch.signbit(w.grad[~mask]).any()  # the printed -0.
for _mode in ("freeze", "prune"):
    _a, _b = ([t.detach().requires_grad_() for t in (x5, w, b)] for _ in "ab")
    MyMaskedLinear.apply(_a[0], _a[1], mask, _a[2], _mode).sum().backward()
    MaskedLinearFunction.apply(_b[0], _b[1], mask, _b[2], _mode).sum().backward()
    assert all(torch.allclose(p.grad, q.grad) for p, q in zip(_a, _b, strict=True))
_args = (torch.full((5, 4), float("inf")), w, mask, None, "freeze")  # inf gradients
_f = (MyMaskedLinear, MaskedLinearFunction)
_mine, _pkg = (torch.autograd.grad(f.apply(*_args).sum(), w)[0] for f in _f)
assert (_mine[~mask].isnan().all(), (_pkg[~mask] == 0).all()) == (True, True)
# sphinx_gallery_end_ignore

# %%
# A module around the Function
# ----------------------------
# A Function holds no state: whoever calls ``apply`` passes the weight in.
# In a model that is an ``nn.Module``, which owns the parameters and calls
# the Function in ``forward``. Written from scratch, like ``nn.Linear``:
#
# * ``nn.Parameter`` makes a tensor a parameter: ``parameters()`` lists it
#   (for the optimizer), ``state_dict()`` saves it.
# * ``reset_parameters`` initialises like ``nn.Linear``:
#   ``kaiming_uniform_(a=math.sqrt(5))`` draws the weight uniformly from
#   :math:`[-1/\sqrt{\text{in}}, 1/\sqrt{\text{in}}]`; the bias, same range.
# * Without a bias, ``register_parameter("bias", None)`` sets ``self.bias``
#   to ``None``, passed on as is; ``parameters()`` and ``state_dict()``
#   skip it.
# * The mask, a copy of the caller's, is a *buffer* (``register_buffer``):
#   saved, and moved by ``.to(device)``, but no optimizer sees it.
# * ``extra_repr`` is what ``print`` shows inside the parentheses.


class MaskedLayer(nn.Module):
    def __init__(self, in_features, out_features, mask, bias=True, mode="freeze"):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.mode = mode
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features))
        else:
            self.register_parameter("bias", None)
        self.register_buffer("mask", mask.clone())
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features)
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return MyMaskedLinear.apply(input, self.weight, self.mask, self.bias, self.mode)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}, mode={self.mode!r}"
        )


# %%
# Train it inside a model
# -----------------------
# The layer goes into an ``nn.Sequential`` like any module. First check the
# gradients: in prune mode the layer computes ``F.linear(x, W * M, b)``,
# which plain autograd differentiates: both must give every parameter the
# same gradient. Then train with plain SGD: the weight entries outside the
# mask get a zero gradient, so they never move (other optimizers can move
# them: :ref:`sphx_glr_tutorials_08_training_part_of_a_weight.py`).
_ = torch.manual_seed(0)
model = nn.Sequential(MaskedLayer(4, 3, mask, mode="prune"), nn.Tanh(), nn.Linear(3, 1))
print(model)
masked = model[0]
inputs, targets = torch.randn(32, 4), torch.randn(32, 1)
params = list(model.parameters())
ours = torch.autograd.grad(F.mse_loss(model(inputs), targets), params)
hidden = torch.tanh(F.linear(inputs, masked.weight * masked.mask, masked.bias))
ref = torch.autograd.grad(F.mse_loss(model[2](hidden), targets), params)
print("same:", [torch.allclose(p, q) for p, q in zip(ours, ref, strict=True)])

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
start = masked.weight.detach().clone()
for step in range(20):
    optimizer.zero_grad()
    loss = F.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        print(f"step {step:2d}: loss {loss.item():.4f}")
print(masked.weight.detach() != start)  # which entries moved

# sphinx_gallery_start_ignore
assert all(torch.allclose(p, q) for p, q in zip(ours, ref, strict=True))
assert torch.equal(masked.weight.detach() != start, mask)
assert F.mse_loss(model(inputs), targets) < loss
_names = ["0.weight", "0.bias", "2.weight", "2.bias"]
assert [n for n, _ in model.named_parameters()] == _names
assert list(model.state_dict()) == [*_names[:2], "0.mask", *_names[2:]]
_ours = MaskedLayer(4, 3, _mask := mask.clone()) if torch.manual_seed(0) else None
_linear = nn.Linear(4, 3) if torch.manual_seed(0) else None
assert all(map(torch.equal, (_ours.weight, _ours.bias), (_linear.weight, _linear.bias)))
assert max(_ours.weight.abs().max(), _ours.bias.abs().max()) <= 1 / math.sqrt(4)
assert repr(masked) == f"MaskedLayer({masked.extra_repr()})"
assert not torch.equal(_ours.mask, _mask.fill_(False))  # the layer keeps a copy
assert _ours.to("meta").mask.device.type == "meta"  # buffers move with .to()
# sphinx_gallery_end_ignore

# %%
# The package's version
# ---------------------
# :class:`~autograd_notes.MaskedLinear` is this module, tested: the same
# arguments and, from the same seed, the same initial numbers. Its
# :class:`~autograd_notes.MaskedLinearFunction` has ``MyMaskedLinear``'s
# argument order and gradients. It adds checks of every argument (ours
# runs ``mode="frozen"`` silently, as prune), any number of batch
# dimensions, and saves only what the needed gradients use.
_ = torch.manual_seed(0)
package = MaskedLinear(4, 3, mask, mode="prune")
print(package)
with expect_error(ValueError, "must be 'freeze' or 'prune'"):
    MaskedLinear(4, 3, mask, mode="frozen")

# sphinx_gallery_start_ignore
assert all(map(torch.equal, (package.weight, package.bias), (start, _linear.bias)))
_frozen = MaskedLayer(4, 3, mask, mode="frozen")
_frozen.load_state_dict(package.state_dict(), strict=False)
assert torch.equal(_frozen(x5), package(x5))  # "frozen" ran as prune
assert package(torch.randn(2, 5, 4)).shape == (2, 5, 3)
_saved = package(x).grad_fn.saved_tensors  # x needs no gradient: w not saved
assert [t is None for t in _saved] == [False, True, False]
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Write.** A Function ``ScaleGradient.apply(x, s)`` that returns
# ``x``'s values unchanged and multiplies the gradient by the float ``s``
# (``s = -1`` makes a "gradient reversal" layer). Check it on
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

# %%
# **2. Predict.** For ``MaskedLayer(4, 3, mask, bias=False)``, what do
# ``bias`` and the ``state_dict`` hold, and which of the Function's inputs
# need a gradient?
#
# **Solution**

# %%
no_bias = MaskedLayer(4, 3, mask, bias=False)
print(no_bias.bias, list(no_bias.state_dict()))
print(no_bias(x).grad_fn.needs_input_grad)  # backward returns None for bias
# sphinx_gallery_start_ignore
assert no_bias(x).grad_fn.needs_input_grad == (False, True, False, False, False)
assert (no_bias.bias, list(no_bias.state_dict())) == (None, ["weight", "mask"])
assert [n for n, _ in no_bias.named_parameters()] == ["weight"]
no_bias(x).sum().backward()  # None for the bias is accepted
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_10_testing_a_custom_function.py` tests this
# Function's ``backward``. PyTorch's own guide is `Extending torch.autograd
# <https://docs.pytorch.org/docs/stable/notes/extending.html>`_.
