"""
How do I know my custom Function's backward is right?
=====================================================

Autograd checks how many gradients a custom ``backward`` returns, never their
values (:ref:`sphx_glr_tutorials_08_writing_a_custom_function.py`). This
tutorial tests them: with :func:`torch.autograd.gradcheck` and
:func:`torch.autograd.gradgradcheck`, against a specification, on shapes the
Function was not written for, and with anomaly mode when a gradient turns
into ``nan``.
"""

# %%
# ``gradcheck`` compares ``backward`` with finite differences
# -----------------------------------------------------------
# :func:`torch.autograd.gradcheck` nudges each entry of each input that
# requires grad, measures how the output moves (finite differences), and
# compares that with what ``backward`` returns.
#
# **Common mistake: checking in** ``float32``. The nudges are tiny, the
# finite differences drown in rounding noise, and a *correct* Function
# fails, such as :class:`~autograd_notes.MaskedLinearFunction` in prune mode
# (where its gradient is the true derivative). ``gradcheck`` warns:
import warnings

import torch
import torch.nn.functional as F
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

from autograd_notes import (
    MaskedLinearFunction,
    expect_error,
    expect_warning,
    mask_from_indices,
    masked_linear,
)

_ = torch.manual_seed(0)

mask = torch.tensor([[True, False, True], [False, True, True]])
x = torch.randn(2, 3, requires_grad=True)
w = torch.randn(2, 3, requires_grad=True)
b = torch.randn(2, requires_grad=True)

with expect_warning(UserWarning, "not a double precision"):
    ok = gradcheck(
        MaskedLinearFunction.apply, (x, w, mask, b, "prune"), raise_exception=False
    )
print("float32:", ok)

# %%
# The fix is ``float64``, where the same Function passes:
x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
print("float64:", gradcheck(MaskedLinearFunction.apply, (x64, w64, mask, b64, "prune")))

# sphinx_gallery_start_ignore
assert not ok
assert gradcheck(MaskedLinearFunction.apply, (x64, w64, mask, b64, "prune"))
# sphinx_gallery_end_ignore

# %%
# A gradient that is wrong on purpose
# -----------------------------------
# In freeze mode the forward pass uses the whole weight, but the weight
# gradient is zero outside the mask: by design it is *not* the derivative,
# and ``gradcheck`` rejects it. The error names the output and the input
# (counting only the inputs that require grad: 0 is ``x``, 1 is the weight)
# and prints both Jacobians, finite differences first:
with expect_error(GradcheckError, "with respect to input 1"):
    gradcheck(MaskedLinearFunction.apply, (x64, w64, mask, b64, "freeze"))

# %%
# So test it in two parts: ``gradcheck`` the rest with the weight held fixed
# (``requires_grad=False``), and compare the weight gradient with its
# specification, "plain autograd's gradient, zero outside the mask", as
# below.
fixed_w = w64.detach()
print(
    "input and bias:",
    gradcheck(MaskedLinearFunction.apply, (x64, fixed_w, mask, b64, "freeze")),
)

# sphinx_gallery_start_ignore
assert gradcheck(MaskedLinearFunction.apply, (x64, fixed_w, mask, b64, "freeze"))
# sphinx_gallery_end_ignore

# %%
# A first attempt, and what the tests find
# ----------------------------------------
# Here is a hand-written layer whose weight trains only in some input
# columns, ``location``. It was written for a layer with 20 inputs and a
# 2-D batch, and on those it runs without complaint. It has three bugs.


class FirstTry(torch.autograd.Function):
    @staticmethod
    def forward(input, weight, location, bias):
        return input.mm(weight.t()) + bias

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, location, _ = inputs
        ctx.save_for_backward(input, weight, location)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, location = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
            for row in grad_weight:  # zero the columns outside location
                for col in range(20):
                    if col not in location:
                        row[col] = 0
        if ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, None, grad_bias


location = torch.tensor([0, 2, 5])
x20 = torch.randn(3, 20, dtype=torch.float64, requires_grad=True)
w20 = torch.randn(2, 20, dtype=torch.float64)  # held fixed: checked below
b20 = torch.randn(2, dtype=torch.float64, requires_grad=True)

# %%
# **Bug 1, caught by** ``gradcheck``: the bias never trains. Input 1 is the
# bias (the weight is held fixed); ``backward`` returned ``None`` for it,
# which ``gradcheck`` counts as zeros, because ``ctx.needs_input_grad[2]``
# asks about ``location``, which never needs a gradient. The bias is
# argument 3.
with expect_error(GradcheckError, "with respect to input 1"):
    gradcheck(FirstTry.apply, (x20, w20, location, b20))

# sphinx_gallery_start_ignore
FirstTry.apply(x20, w20, location, b20).sum().backward()
assert b20.grad is None
assert x20.grad is not None
x20.grad = None
# sphinx_gallery_end_ignore

# %%
# **Bug 2, caught by testing other sizes**: the loop runs over ``range(20)``.
# Compare the weight gradient with its specification on layers of 20 and
# 32 inputs; with 8 inputs the loop even indexes past the end.


def wrong_weight_columns(layer, in_features):
    """Columns where the weight gradient differs from its specification."""
    x = torch.randn(4, in_features, dtype=torch.float64)
    w = torch.randn(3, in_features, dtype=torch.float64, requires_grad=True)
    layer(x, w, location, torch.zeros(3, dtype=torch.float64)).sum().backward()
    w_ref = w.detach().clone().requires_grad_()
    F.linear(x, w_ref).sum().backward()
    want = w_ref.grad * mask_from_indices(w.shape, cols=location)
    return (~torch.isclose(w.grad, want)).any(0).nonzero().flatten().tolist()


print("20 inputs, wrong columns:", wrong_weight_columns(FirstTry.apply, 20))
print("32 inputs, wrong columns:", wrong_weight_columns(FirstTry.apply, 32))
with expect_error(IndexError, "out of bounds"):
    wrong_weight_columns(FirstTry.apply, 8)

# %%
# **Bug 3, caught by testing other shapes**: ``mm`` takes matrices only, so
# a batch of sequences, shape ``(batch, time, features)``, fails.
with expect_error(RuntimeError, "must be a matrix"):
    FirstTry.apply(torch.randn(2, 3, 20, dtype=torch.float64), w20, location, b20)

# %%
# The fixes: test ``ctx.needs_input_grad[3]`` for the bias; zero the columns
# with one vectorised multiplication by a mask, for any number of columns
# (and without one Python step per entry); use ``F.linear`` and fold the
# batch dimensions, as in
# :ref:`sphx_glr_tutorials_08_writing_a_custom_function.py`. That is the
# package's :func:`~autograd_notes.masked_linear` with a column mask from
# :func:`~autograd_notes.mask_from_indices`, and it passes all three tests:


def fixed(x, w, location, b):
    return masked_linear(x, w, mask_from_indices(w.shape, cols=location), b)


print("gradcheck:", gradcheck(fixed, (x20, w20, location, b20)))
print("wrong columns:", {n: wrong_weight_columns(fixed, n) for n in (8, 20, 32)})
x_3d = torch.randn(2, 3, 20, dtype=torch.float64)
print("3-D input, output shape:", tuple(fixed(x_3d, w20, location, b20).shape))

# sphinx_gallery_start_ignore
assert wrong_weight_columns(FirstTry.apply, 20) == []
assert wrong_weight_columns(FirstTry.apply, 32) == [
    c for c in range(20, 32) if c not in location.tolist()
]
assert gradcheck(fixed, (x20, w20, location, b20))
for _n in (8, 20, 32):
    assert wrong_weight_columns(fixed, _n) == []
# sphinx_gallery_end_ignore

# %%
# Second derivatives: ``gradgradcheck``
# -------------------------------------
# If your Function will be differentiated twice (a gradient penalty, see
# :ref:`sphx_glr_tutorials_12_higher_order_gradients.py`), check that too:
# :func:`torch.autograd.gradgradcheck` applies the same finite differences
# to ``backward`` itself. A classic slip passes ``gradcheck`` and fails this
# one: computing the derivative in advance, in ``setup_context``. That
# runs without recording, so to the second derivative ``3 * x**2`` is a
# constant. (Exercise 1 fixes it. The package's Function passes
# ``gradgradcheck`` in both modes.)


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(3 * x**2)  # the derivative, computed in advance

    @staticmethod
    def backward(ctx, grad_output):
        (derivative,) = ctx.saved_tensors
        return grad_output * derivative


t = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
print("gradcheck:", gradcheck(Cube.apply, (t,)))
with expect_error(GradcheckError, "Jacobian mismatch"):
    gradgradcheck(Cube.apply, (t,))

# sphinx_gallery_start_ignore
assert gradcheck(Cube.apply, (t,))
for _mode in ("freeze", "prune"):
    assert gradgradcheck(MaskedLinearFunction.apply, (x64, w64, mask, b64, _mode))
# sphinx_gallery_end_ignore


# %%
# Where does a ``nan`` gradient come from? Anomaly mode
# -----------------------------------------------------
# A gradient full of ``nan`` says nothing about *which* backward produced
# it. Here a hand-written square root clamps its input in the forward pass,
# but its ``backward`` forgets the clamp: at a negative input it takes
# :math:`\sqrt{x}` of a negative number. Inside
# ``torch.autograd.detect_anomaly()``, backward checks each node's output
# and raises at the first ``nan``, naming the node. (It also warns with the
# traceback of the forward line that created the node, not shown here: it
# holds file paths. :ref:`sphx_glr_tutorials_11_non_differentiable_points.py`
# uses it on the ``torch.where`` trap.)


class ClampedSqrt(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.sqrt(x.clamp(min=0))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output / (2 * torch.sqrt(x))  # BUG: x itself, not clamped


# sphinx_gallery_start_ignore
warnings.filterwarnings("ignore", "Error detected in", UserWarning)
# sphinx_gallery_end_ignore
s = torch.tensor([-1.0, 1.0, 4.0], requires_grad=True)
with (
    expect_warning(UserWarning, "Anomaly Detection has been enabled"),
    torch.autograd.detect_anomaly(),
):
    loss = (ClampedSqrt.apply(s) * torch.tensor([1.0, 2.0, 3.0])).sum()
    with expect_error(RuntimeError, "'ClampedSqrtBackward' returned nan"):
        loss.backward()

# sphinx_gallery_start_ignore
with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always")
    with torch.autograd.detect_anomaly():
        _loss = ClampedSqrt.apply(s).sum()
        _message = ""
        try:
            _loss.backward()
        except RuntimeError as _err:
            _message = str(_err)
assert "Function 'ClampedSqrtBackward' returned nan values" in _message
assert any("Error detected in ClampedSqrtBackward" in str(m.message) for m in _caught)
assert any("Traceback of forward call" in str(m.message) for m in _caught)
# sphinx_gallery_end_ignore

# %%
# Anomaly mode slows everything down: switch it on only while hunting. The
# fix makes ``backward`` follow ``forward``: zero slope where the input was
# clamped.


class FixedClampedSqrt(ClampedSqrt):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        slope = torch.where(x > 0, 0.5 / torch.sqrt(x.clamp(min=0)), 0.0)
        return grad_output * slope


s.grad = None
FixedClampedSqrt.apply(s).sum().backward()
print("gradient:", s.grad)

# sphinx_gallery_start_ignore
assert torch.allclose(s.grad, torch.tensor([0.0, 0.5, 0.25]))
# sphinx_gallery_end_ignore

# %%
# A checklist
# -----------
# * ``gradcheck`` in ``float64``, on small inputs; ``gradgradcheck`` too if
#   the Function will be differentiated twice.
# * Test sizes and shapes you did not write it for: non-square, other
#   feature counts, extra batch dimensions, no bias, only some inputs
#   requiring grad.
# * Where the gradient is wrong on purpose, compare that part with its
#   specification and ``gradcheck`` the rest.
# * ``backward`` is ordinary Python: print ``ctx.needs_input_grad`` and
#   shapes in it.
# * ``detect_anomaly`` names the node that first produced a ``nan``.
#
# Exercises
# ---------
#
# **1. Write.** Fix ``Cube`` so that ``gradgradcheck`` passes.
#
# **Solution**


# %%
class FixedCube(Cube):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])  # save x itself...

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x**2  # ...and differentiate with torch ops


print(gradgradcheck(FixedCube.apply, (t,)))
# sphinx_gallery_start_ignore
assert gradgradcheck(FixedCube.apply, (t,))
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** Run ``gradcheck`` on ``FirstTry`` with only ``x20``
# requiring grad (the weight and the bias held fixed). Does it pass? What
# does the answer say about the three bugs?
#
# **Solution**

# %%
print(gradcheck(FirstTry.apply, (x20, w20, location, b20.detach())))
# True: the input gradient is right, and gradcheck checks nothing else. It
# only tests the inputs that require grad, on the shapes you give it.
# sphinx_gallery_start_ignore
assert gradcheck(FirstTry.apply, (x20, w20, location, b20.detach()))
# sphinx_gallery_end_ignore

# %%
# **3. Predict.** Would ``gradcheck`` have caught the bug in
# ``ClampedSqrt``? Run it in ``float64`` at ``[-1.0, 4.0]``.
#
# **Solution**

# %%
points = torch.tensor([-1.0, 4.0], dtype=torch.float64, requires_grad=True)
with expect_error(GradcheckError, "with respect to input 0"):
    gradcheck(ClampedSqrt.apply, (points,))
# Yes: the finite differences give slope 0 at -1; backward gives nan.
# sphinx_gallery_start_ignore
assert gradcheck(FixedClampedSqrt.apply, (points,))
# sphinx_gallery_end_ignore
