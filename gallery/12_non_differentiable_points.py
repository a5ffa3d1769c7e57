"""
What gradient does PyTorch give where the function has no derivative?
=====================================================================

``relu`` has a kink at 0, ``max`` has ties, ``sqrt`` has an infinite slope
at 0. Mathematically there is no derivative there, but autograd does not
complain: each operation returns a fixed number, chosen by convention. After
this tutorial you know those numbers for the common operations, can avoid
the ``torch.where`` trap that turns one of them into ``nan``, and can tell
autograd which outputs of your own ``Function`` have no gradient at all.
"""

# %%
# Kinks: ``relu``, ``abs`` and ``clamp``
# --------------------------------------
# A small helper evaluates the gradient of an element-wise function at a few
# points, each point on its own:
import torch


def grad_at(f, points):
    x = torch.tensor(points, requires_grad=True)
    f(x).sum().backward()
    return x.grad


print("relu     at [-1, 0, 1]:          ", grad_at(torch.relu, [-1.0, 0.0, 1.0]))
print("abs      at [-1, 0, 1]:          ", grad_at(torch.abs, [-1.0, 0.0, 1.0]))


def clamp01(t):
    return t.clamp(0.0, 1.0)


print("clamp01  at [-1, 0, 0.5, 1, 2]: ", grad_at(clamp01, [-1.0, 0.0, 0.5, 1.0, 2.0]))
print("torch", torch.__version__)
# sphinx_gallery_start_ignore
assert grad_at(torch.relu, [-1.0, 0.0, 1.0]).tolist() == [0.0, 0.0, 1.0]
assert grad_at(torch.abs, [-1.0, 0.0, 1.0]).tolist() == [-1.0, 0.0, 1.0]
_new_clamp = torch.__version__ >= "2.14"
_clamp01 = [0, 0, 1, 0, 0] if _new_clamp else [0, 1, 1, 1, 0]
assert grad_at(clamp01, [-1.0, 0.0, 0.5, 1.0, 2.0]).tolist() == _clamp01
assert grad_at(lambda t: t.clamp(min=0.0), [0.0]).item() == (not _new_clamp)
assert grad_at(lambda t: t.clamp(max=1.0), [1.0]).item() == (not _new_clamp)
_bounds = (torch.tensor(0.0), torch.tensor(1.0))
_tensor_bounds = grad_at(lambda t: t.clamp(*_bounds), [0.0, 0.5, 1.0]).tolist()
assert _tensor_bounds == ([0.5, 1.0, 0.5] if _new_clamp else [1.0, 1.0, 1.0])
# sphinx_gallery_end_ignore

# %%
# At the kink, ``relu`` uses the slope on its left (0) and ``abs`` uses 0,
# the middle of its two slopes (-1 and 1). Both are *subgradients*: any value
# between the left and the right slope is one, and for a convex function it
# still points uphill.
#
# ``clamp`` is where the torch version matters. In torch 2.13 its bounds
# count as inside the range: the gradient passes through (1) at ``x == 0``
# and ``x == 1``, so ``x.clamp(min=0)`` and ``relu`` disagree at 0. From
# torch 2.14 on, number bounds count as outside and get 0, like ``relu``
# (tensor bounds split it, 0.5). A
# value that sits exactly on a bound (a parameter projected into a range,
# say) gets a different gradient on the two versions.
#
# Ties: ``max`` and ``min``
# -------------------------
# When the largest value occurs twice, which entry gets the gradient depends
# on *which* max you call:
x = [1.0, 3.0, 3.0]
print("x.max():               ", grad_at(lambda t: t.max(), x))
print("torch.max(x, dim=0):   ", grad_at(lambda t: torch.max(t, dim=0).values, x))
print("index it returns:      ", torch.max(torch.tensor(x), dim=0).indices)
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([1.0, 3.0], requires_grad=True)
torch.maximum(a, b).sum().backward()  # a tie in the first entry
print("torch.maximum(a, b):    a.grad", a.grad, "b.grad", b.grad)
# sphinx_gallery_start_ignore
assert grad_at(lambda t: t.max(), x).tolist() == [0.0, 0.5, 0.5]
assert grad_at(lambda t: t.min(), [1.0, 1.0, 3.0]).tolist() == [0.5, 0.5, 0.0]
assert grad_at(lambda t: t.amax(), x).tolist() == [0.0, 0.5, 0.5]
assert grad_at(lambda t: torch.max(t, dim=0).values, x).tolist() == [0.0, 1.0, 0.0]
assert torch.max(torch.tensor(x), dim=0).indices.item() == 1
assert grad_at(lambda t: torch.min(t, dim=0).values, [2.0, 2.0]).tolist() == [1.0, 0.0]
assert a.grad.tolist() == [0.5, 0.0]
assert b.grad.tolist() == [0.5, 1.0]
_a, _b = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
torch.minimum(_a, _b).sum().backward()
assert _a.grad.item() == 0.5
assert _b.grad.item() == 0.5
# sphinx_gallery_end_ignore

# %%
# * The full reduction ``x.max()`` (and ``x.min()``, ``x.amax()``) splits
#   the gradient evenly among the tied entries.
# * ``torch.max(x, dim)`` returns an index as well, and the whole gradient
#   goes to the entry at that index (here the first of the tied ones).
# * The element-wise ``torch.maximum(a, b)`` (and ``torch.minimum``) gives
#   half to each side where ``a == b``.
#
# All three are valid subgradients; they differ, so two ways of writing "the
# max" can train differently on data with exact ties.
#
# The edge of the domain: ``sqrt`` at 0
# -------------------------------------
# The slope of :math:`\sqrt{x}` is :math:`1 / (2\sqrt{x})`, which grows
# without bound as :math:`x \to 0`. Autograd evaluates the formula as it is
# and returns ``inf``:
print("sqrt at [0, 1, 4]:", grad_at(torch.sqrt, [0.0, 1.0, 4.0]))
# sphinx_gallery_start_ignore
assert grad_at(torch.sqrt, [0.0, 1.0, 4.0]).tolist() == [float("inf"), 0.5, 0.25]
# sphinx_gallery_end_ignore

# %%
# Common mistake: ``torch.where`` does not protect the gradient
# --------------------------------------------------------------
# To keep :math:`\sqrt{x}` away from :math:`x \le 0`, one writes
# ``torch.where(x > 0, torch.sqrt(x), 0)``. The forward pass is clean, yet
# the gradient is ``nan`` at every point the ``where`` was meant to protect:
x = torch.tensor([-1.0, 0.0, 4.0], requires_grad=True)
y = torch.where(x > 0, torch.sqrt(x), 0.0)
y.sum().backward()
print("y:     ", y)
print("x.grad:", x.grad)
# sphinx_gallery_start_ignore
assert y.tolist() == [0.0, 0.0, 2.0]
assert x.grad[:2].isnan().all()
assert x.grad[2].item() == 0.25
import warnings
from contextlib import redirect_stdout
from io import StringIO

from autograd_notes import expect_error

x.grad = None
with warnings.catch_warnings(record=True) as _caught, redirect_stdout(StringIO()):
    warnings.simplefilter("always")
    with torch.autograd.detect_anomaly(), expect_error(RuntimeError, "'SqrtBackward0'"):
        torch.where(x > 0, torch.sqrt(x), 0.0).sum().backward()
assert any("Error detected in SqrtBackward0" in str(w.message) for w in _caught)
assert any("increase the runtime" in str(w.message) for w in _caught)
_x = torch.tensor([0.0, 4.0], requires_grad=True)
(torch.sqrt(_x) * (_x > 0)).sum().backward()
assert _x.grad[0].isnan()
x.grad = None
# sphinx_gallery_end_ignore

# %%
# ``torch.sqrt`` ran on *all* entries, and the backward graph still
# contains it. ``where`` sends a zero gradient to the branch it did not pick,
# and ``sqrt``'s backward multiplies that zero by its own slope: at 0 that is
# :math:`0 \cdot \infty`, at -1 it is :math:`0 \cdot \text{nan}`
# (:math:`\sqrt{-1}` is already ``nan`` in the forward pass), and both are
# ``nan``. Multiplying by a mask instead of ``where`` fails the same way.
#
# In a large model, ``torch.autograd.detect_anomaly()`` finds the culprit:
# inside it, backward raises at the first node whose gradient contains a
# ``nan``, here ``SqrtBackward0`` (it also slows everything down, so use it
# only while debugging).

# %%
# The fix, the "double ``where``": keep the unsafe values away from ``sqrt``
# *before* it runs, by swapping in a harmless input (here 1), then select as
# before. Now both branches have finite gradients:
safe_x = torch.where(x > 0, x, 1.0)
y = torch.where(x > 0, torch.sqrt(safe_x), 0.0)
y.sum().backward()
print("y:     ", y)
print("x.grad:", x.grad)
# sphinx_gallery_start_ignore
assert y.tolist() == [0.0, 0.0, 2.0]
assert x.grad.tolist() == [0.0, 0.0, 0.25]
# sphinx_gallery_end_ignore

# %%
# Outputs that have no gradient, in your own ``Function``
# -------------------------------------------------------
# A custom :class:`torch.autograd.Function`
# (:ref:`sphx_glr_tutorials_09_writing_a_custom_function.py`) may return
# something that has no derivative at all, such as the *index* of the
# largest entry. ``ctx.mark_non_differentiable(index)`` says so: that output
# never requires grad. ``backward`` still receives one gradient per output;
# ``received`` below records what arrives for the index.
received = []


class MaxWithIndex(torch.autograd.Function):
    """The largest entry of a 1-D tensor, and where it is."""

    @staticmethod
    def forward(x, materialize=True):
        index = x.argmax()
        return x[index], index

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, materialize = inputs
        _, index = output
        ctx.mark_non_differentiable(index)
        ctx.set_materialize_grads(materialize)
        ctx.save_for_backward(index)
        ctx.size = x.shape[0]

    @staticmethod
    def backward(ctx, grad_value, grad_index):
        received.append(grad_index)
        (index,) = ctx.saved_tensors
        grad_x = grad_value.new_zeros(ctx.size)
        grad_x[index] = grad_value
        return grad_x, None


x = torch.tensor([2.0, 7.0, 5.0], requires_grad=True)
value, index = MaxWithIndex.apply(x)
print("value requires_grad:", value.requires_grad)
print("index requires_grad:", index.requires_grad)
value.backward()
print("backward received for the index:", received[-1])
print("x.grad:", x.grad)
# sphinx_gallery_start_ignore
assert value.grad_fn.name() == "MaxWithIndexBackward"
assert index.grad_fn is None
assert not index.requires_grad
assert torch.equal(received[-1], torch.zeros((), dtype=torch.int64))
assert x.grad.tolist() == [0.0, 1.0, 0.0]
# sphinx_gallery_end_ignore

# %%
# No gradient can flow into the index, so autograd *materialized* one for
# it: a tensor of zeros, allocated only to be ignored. After
# ``ctx.set_materialize_grads(False)``, an output that received no gradient
# arrives as ``None`` instead, which saves the allocation but means
# ``backward`` must be ready for ``None`` in every gradient it reads:
x.grad = None
value, index = MaxWithIndex.apply(x, False)
value.backward()
print("backward received for the index:", received[-1])
# sphinx_gallery_start_ignore
assert received[-1] is None
assert x.grad.tolist() == [0.0, 1.0, 0.0]


class _ReluAndMask(torch.autograd.Function):
    @staticmethod
    def forward(x, mark):
        mask = (x > 0).to(x.dtype)
        return x * mask, mask

    @staticmethod
    def setup_context(ctx, inputs, output):
        if inputs[1]:
            ctx.mark_non_differentiable(output[1])
        ctx.save_for_backward(output[1])

    @staticmethod
    def backward(ctx, grad_y, grad_mask):
        return grad_y * ctx.saved_tensors[0], None


_x = torch.tensor([-1.0, 2.0], requires_grad=True)
_mask = _ReluAndMask.apply(_x, False)[1]
assert _mask.requires_grad
_mask.sum().backward()
assert _x.grad.tolist() == [0.0, 0.0]
assert not _ReluAndMask.apply(_x, True)[1].requires_grad
assert not torch.sort(_x).indices.requires_grad
with redirect_stdout(StringIO()), expect_error(RuntimeError, "floating point dtype"):
    torch.zeros(1, dtype=torch.int64).requires_grad_()
# sphinx_gallery_end_ignore

# %%
# An integer output can never require grad, so for an index the mark mostly
# states intent. It matters for a *floating-point* output without a
# derivative, such as a 0/1 mask: unmarked, it requires grad, and a loss
# built on it runs and quietly yields a zero gradient, as if the mask were
# differentiable.

# %%
# Exercises
# ---------
#
# **1. Predict.** ``relu`` takes the slope on its left at 0. What does
# ``F.leaky_relu(x, negative_slope=0.1)`` give at ``x = 0``? And ``F.elu``,
# whose slopes are 1 on both sides of 0?
#
# **Solution**

# %%
import torch.nn.functional as F

print("leaky_relu:", grad_at(lambda t: F.leaky_relu(t, 0.1), [0.0]))  # left: 0.1
print("elu:       ", grad_at(F.elu, [0.0]))  # no kink, so no choice: 1
# sphinx_gallery_start_ignore
assert torch.allclose(grad_at(lambda t: F.leaky_relu(t, 0.1), [0.0]), torch.tensor(0.1))
assert grad_at(F.elu, [0.0]).item() == 1.0
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** What is the gradient of a hand-written norm,
# ``torch.sqrt((x**2).sum())``, at ``x = torch.zeros(2)``? And of
# ``torch.linalg.vector_norm(x)``?
#
# **Solution**

# %%
hand_written = grad_at(lambda t: torch.sqrt((t**2).sum()), [0.0, 0.0])
built_in = grad_at(torch.linalg.vector_norm, [0.0, 0.0])
print("hand-written:", hand_written)  # 0 from x**2 times inf from sqrt: nan
print("vector_norm: ", built_in)  # the built-in picks the subgradient 0
# sphinx_gallery_start_ignore
assert hand_written.isnan().all()
assert built_in.tolist() == [0.0, 0.0]
# sphinx_gallery_end_ignore

# %%
# **3. Write.** The entropy term :math:`x \log x` is 0 at :math:`x = 0` by
# convention, but ``x * torch.log(x)`` gives ``nan`` there. Write a version
# whose value is 0 at 0 and whose gradient is finite everywhere on
# :math:`x \ge 0`.
#
# **Solution**


# %%
def x_log_x(x):
    safe_x = torch.where(x > 0, x, 1.0)
    return torch.where(x > 0, x * torch.log(safe_x), 0.0)


x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
y = x_log_x(x)
y.sum().backward()
print("value:   ", y)
print("gradient:", x.grad)  # 1 + log(x) for x > 0, and 0 at the protected point
# sphinx_gallery_start_ignore
assert (torch.tensor(0.0) * torch.log(torch.tensor(0.0))).isnan()
assert y.tolist()[:2] == [0.0, 0.0]
assert x.grad.isfinite().all()
assert torch.allclose(x.grad[1:], 1 + torch.log(x.detach()[1:]))
# sphinx_gallery_end_ignore
