"""
How do I know my custom Function's backward is right?
=====================================================

Autograd checks little of what a custom ``backward`` returns, and never its
values. This tutorial shows what it checks, then tests the values with
:func:`torch.autograd.gradcheck` and :func:`torch.autograd.gradgradcheck`,
against a specification, on shapes the Function was not written for, and
with anomaly mode when a gradient is ``nan``.
"""

# %%
# What autograd checks, and what it does not
# ------------------------------------------
# The example is :class:`~autograd_notes.MaskedLinearFunction`, the masked
# linear layer of :ref:`sphx_glr_tutorials_09_writing_a_custom_function.py`:
# ``apply(input, weight, mask, bias, mode)``. Of the values its ``backward``
# returns, autograd checks:
#
# * **The number**: one per ``forward`` input. Too few is an error, and so
#   is a value other than ``None`` for a non-tensor (the mode, a bias passed
#   as ``None``). A gradient for a tensor that needs none (the mask) is
#   dropped.
# * **The shape**, loosely: another shape is an error *unless* the input
#   broadcasts to it; then autograd silently sums it down. A bias gradient of
#   shape ``(5, 2)`` is summed over the batch (below); ``(2, 1)`` is an error.
# * **The dtype**: not at all. A ``float64`` (even an integer) gradient for a
#   ``float32`` input is silently cast to ``float32``.
# * **The values**: never. Testing them is the rest of this page.
import torch
from torch.autograd import gradcheck, gradgradcheck
from torch.autograd.gradcheck import GradcheckError

from autograd_notes import MaskedLinearFunction, expect_error, expect_warning

_ = torch.manual_seed(0)
mask = torch.tensor([[True, False, True], [False, True, True]])
x = torch.randn(2, 3, requires_grad=True)
w = torch.randn(2, 3, requires_grad=True)
b = torch.randn(2, requires_grad=True)
fn = MaskedLinearFunction.apply  # gradcheck takes a function and its inputs


class UnsummedBias(MaskedLinearFunction):
    @staticmethod
    def backward(ctx, grad_output):
        grads = MaskedLinearFunction.backward(ctx, grad_output)
        return *grads[:3], grad_output, None  # bias: (5, 2), not (2,)


UnsummedBias.apply(torch.randn(5, 3), w, mask, b, "freeze").sum().backward()
print("b.grad:", b.grad)

# sphinx_gallery_start_ignore
_ok = MaskedLinearFunction.backward
_x5 = torch.randn(5, 3)


def _run(backward, bias=b):
    _cls = type("_V", (MaskedLinearFunction,), {"backward": staticmethod(backward)})
    _x, _w = (t.detach().clone().requires_grad_() for t in (_x5, w))
    _b = None if bias is None else bias.detach().clone().requires_grad_()
    _cls.apply(_x, _w, mask, _b, "freeze").sum().backward()
    return _x.grad, _w.grad, None if _b is None else _b.grad


def _error(function, *args):  # the message of the error function(*args) raises
    try:
        function(*args)
    except RuntimeError as error:
        return str(error)


assert torch.equal(b.grad, torch.full((2,), 5.0))  # (5, 2) summed over the batch
assert torch.equal(_run(_ok)[2], b.grad)
for _backward, _bias, _match in [
    (lambda ctx, g: _ok(ctx, g)[:4], b, "number of gradients (expected 5, got 4"),
    (lambda ctx, g: (*_ok(ctx, g)[:3], g.sum(0)[:, None], None), b, "compatible"),
    (lambda ctx, g: (*_ok(ctx, g)[:3], g.sum(0), None), None, "position 4, but"),
    (lambda ctx, g: (*_ok(ctx, g)[:4], g), b, "position 5, but the corresponding"),
]:
    assert _match in _error(_run, _backward, _bias)
_got = _run(lambda ctx, g: ((o := _ok(ctx, g))[0].double(), o[1].long(), *o[2:]))
assert _got[0].dtype == _got[1].dtype == torch.float32  # cast to the input's dtype
_mask_grad = _run(lambda ctx, g: (*_ok(ctx, g)[:2], torch.ones(2, 3), *_ok(ctx, g)[3:]))
assert all(torch.equal(p, q) for p, q in zip(_mask_grad, _run(_ok), strict=True))
# sphinx_gallery_end_ignore

# %%
# ``gradcheck`` compares ``backward`` with finite differences
# -----------------------------------------------------------
# :func:`torch.autograd.gradcheck` nudges each entry of each input that
# requires grad, measures how the output moves (finite differences), and
# raises if that differs from what ``backward`` returns.
#
# **Common mistake: checking in** ``float32``. The finite differences drown
# in rounding noise, so a *correct* Function fails, with a warning:
# ``MaskedLinearFunction`` in prune mode (its gradient is the true
# derivative). The fix is ``float64``, where it passes.
with expect_warning(UserWarning, "not a double precision"):
    ok = gradcheck(fn, (x, w, mask, b, "prune"), raise_exception=False)
print("float32:", ok)

x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
print("float64:", gradcheck(fn, (x64, w64, mask, b64, "prune")))

# %%
# A gradient that is wrong on purpose
# -----------------------------------
# In freeze mode the weight gradient is zero outside the mask: by design
# *not* the derivative, so ``gradcheck`` rejects it, naming the input
# (counting only those that require grad: 1 is the weight) and printing both
# Jacobians, finite differences first. So test it in two parts: ``gradcheck``
# the rest with the weight held fixed, and compare the weight gradient with
# its specification, "plain autograd's gradient, zero outside the mask".
with expect_error(GradcheckError, "with respect to input 1"):
    gradcheck(fn, (x64, w64, mask, b64, "freeze"))
print("weight held fixed:", gradcheck(fn, (x64, w64.detach(), mask, b64, "freeze")))

# %%
# A first attempt, and what the tests find
# ----------------------------------------
# Here is a hand-written layer whose weight trains only in some input
# columns, ``location``. It was written for 20 inputs and a 2-D batch, and on
# those it runs without complaint. It has three bugs.


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
# bias (the weight is fixed), and ``backward`` returned ``None`` for it,
# which ``gradcheck`` counts as zeros: ``ctx.needs_input_grad[2]`` asks
# about ``location``, never about the bias, which is argument 3.
with expect_error(GradcheckError, "with respect to input 1"):
    gradcheck(FirstTry.apply, (x20, w20, location, b20))

# %%
# **Bugs 2 and 3, caught by other sizes and shapes.** The loop runs over
# ``range(20)``: compare the weight gradient with its specification on 20
# and 32 inputs (with 8, the loop even indexes past the end). And ``mm``
# takes matrices only, so a batch of sequences ``(batch, time, in)`` fails.
# (:func:`~autograd_notes.mask_from_indices` builds a mask from columns.)
from autograd_notes import mask_from_indices, masked_linear


def wrong_weight_columns(layer, in_features):
    """Columns where the weight gradient differs from its specification."""
    x = torch.randn(4, in_features, dtype=torch.float64)
    w = torch.randn(3, in_features, dtype=torch.float64, requires_grad=True)
    layer(x, w, location, torch.zeros(3, dtype=torch.float64)).sum().backward()
    plain = torch.autograd.grad((x @ w.T).sum(), w)[0]  # autograd's gradient...
    want = plain * mask_from_indices(w.shape, cols=location)  # ...masked
    return (~torch.isclose(w.grad, want)).any(0).nonzero().flatten().tolist()


wrong = {n: wrong_weight_columns(FirstTry.apply, n) for n in (20, 32)}
print("wrong columns:", wrong)
with expect_error(IndexError, "out of bounds"):
    wrong_weight_columns(FirstTry.apply, 8)
x_3d = torch.randn(2, 3, 20, dtype=torch.float64)
with expect_error(RuntimeError, "must be a matrix"):
    FirstTry.apply(x_3d, w20, location, b20)

# sphinx_gallery_start_ignore
assert not ok  # float32 failed gradcheck, above
assert wrong == {20: [], 32: list(range(20, 32))}
FirstTry.apply(x20, w20, location, b20).sum().backward()
assert b20.grad is None  # bug 1: None for the bias
# sphinx_gallery_end_ignore

# %%
# The fixes: test ``ctx.needs_input_grad[3]`` for the bias; zero the columns
# with a mask, for any number of columns; and for any batch shape, compute
# the output with ``F.linear`` and, in ``backward``, fold the batch
# dimensions into one, so that one product sums the weight gradient over all
# of them:


def folded_weight_grad(grad_output, input):
    rows = grad_output.reshape(-1, grad_output.shape[-1])  # (N, out)
    return rows.T @ input.reshape(-1, input.shape[-1])  # (out, in)


g_3d = torch.randn(2, 3, 2, dtype=torch.float64)
w_3d = w20.clone().requires_grad_()
plain = torch.autograd.grad(x_3d @ w_3d.T, w_3d, g_3d)[0]
print("folded == autograd:", torch.allclose(folded_weight_grad(g_3d, x_3d), plain))

# %%
# That is :func:`~autograd_notes.masked_linear` in freeze mode with a column
# mask, and it passes all three tests, specification included:


def fixed(x, w, location, b):
    return masked_linear(x, w, mask_from_indices(w.shape, cols=location), b)


print("gradcheck:", gradcheck(fixed, (x20, w20, location, b20)))
wrong = {n: wrong_weight_columns(fixed, n) for n in (8, 20, 32)}
print("wrong columns:", wrong)
print("3-D input, output shape:", tuple(fixed(x_3d, w20, location, b20).shape))

# sphinx_gallery_start_ignore
assert torch.allclose(folded_weight_grad(g_3d, x_3d), plain)
assert wrong == {8: [], 20: [], 32: []}
_w = w20.clone().requires_grad_()
fixed(x_3d, _w, location, b20).backward(g_3d)  # 3-D: the folded gradient, masked
_want = folded_weight_grad(g_3d, x_3d) * mask_from_indices(_w.shape, cols=location)
assert torch.allclose(_w.grad, _want)
# sphinx_gallery_end_ignore

# %%
# Second derivatives: ``gradgradcheck``
# -------------------------------------
# If your Function will be differentiated twice (a gradient penalty, later,
# in :ref:`tutorial 13 <sphx_glr_tutorials_13_higher_order_gradients.py>`),
# :func:`torch.autograd.gradgradcheck` checks ``backward`` itself the same
# way. A classic slip passes ``gradcheck`` but not this: computing the
# derivative in ``setup_context``, which does not record, so to the second
# derivative ``3 * x**2`` is a constant. The package's Function passes: in
# prune mode over every input, and in freeze mode with the weight held fixed,
# as for ``gradcheck``.


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(3 * inputs[0] ** 2)  # the derivative, in advance

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.saved_tensors[0]  # the saved derivative


t = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
print("gradcheck:", gradcheck(Cube.apply, (t,)))
with expect_error(GradcheckError, "Jacobian mismatch"):
    gradgradcheck(Cube.apply, (t,))
print("package, prune mode:", gradgradcheck(fn, (x64, w64, mask, b64, "prune")))
held = (x64, w64.detach(), mask, b64, "freeze")
print("package, freeze mode, weight held fixed:", gradgradcheck(fn, held))
# sphinx_gallery_start_ignore
assert not torch.autograd.grad(Cube.apply(t).sum(), t, create_graph=True)[0].grad_fn
# Over the whole weight, freeze mode fails gradgradcheck as it fails gradcheck.
with expect_error(GradcheckError, "with respect to input 1"):
    gradgradcheck(fn, (x64, w64, mask, b64, "freeze"))
# sphinx_gallery_end_ignore

# %%
# Where does a ``nan`` gradient come from? Anomaly mode
# -----------------------------------------------------
# A ``nan`` gradient does not say *which* backward produced it. This square
# root clamps its input in ``forward``, but ``backward`` forgets the clamp.
# Inside ``torch.autograd.detect_anomaly()`` (slow: use it only to hunt),
# backward raises at the first ``nan``, naming the node, and warns with the
# traceback of the forward line that created it (we print only its first
# line: the traceback under it lists file paths). Each ``expect_*`` prints
# when its block ends, innermost first.


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


import warnings

s = torch.tensor([-1.0, 1.0, 4.0], requires_grad=True)
# expect_warning passes the traceback warning on; catch it to print its first line
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with (
        expect_warning(UserWarning, "Anomaly Detection has been enabled"),
        torch.autograd.detect_anomaly(),
        expect_error(RuntimeError, "'ClampedSqrtBackward' returned nan"),
    ):
        (ClampedSqrt.apply(s) * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(str(caught[0].message).splitlines()[0])

# sphinx_gallery_start_ignore
assert len(caught) == 1
assert "Error detected in ClampedSqrtBackward. Traceback of forward" in str(
    caught[0].message
)
assert "ClampedSqrt.apply(s)" in str(caught[0].message)  # the forward line
# sphinx_gallery_end_ignore

# %%
# A checklist
# -----------
# * ``gradcheck`` in ``float64`` on small inputs; ``gradgradcheck`` too if
#   the Function will be differentiated twice.
# * Test sizes and shapes you did not write it for: other feature counts,
#   extra batch dimensions, no bias, only some inputs requiring grad.
# * A gradient wrong on purpose: compare it with its specification.
# * ``backward`` is ordinary Python: print ``ctx.needs_input_grad`` and
#   shapes in it. ``detect_anomaly`` names the node that made a ``nan``.
# * Outputs without a derivative, and ``once_differentiable``: later, in
#   tutorials 12 and 13.
#
# Exercises
# ---------
#
# **1. Write.** Why does ``Cube`` fail ``gradgradcheck``? Look at what it
# saved (``grad_fn.saved_tensors``), then fix it.
#
# **Solution**

# %%
print(Cube.apply(t).grad_fn.saved_tensors[0].requires_grad)  # False: a constant


class FixedCube(Cube):
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])  # save x itself...

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 3 * ctx.saved_tensors[0] ** 2  # ...differentiate here


print(gradgradcheck(FixedCube.apply, (t,)))
# sphinx_gallery_start_ignore
assert not Cube.apply(t).grad_fn.saved_tensors[0].requires_grad
# sphinx_gallery_end_ignore

# %%
# **2. Write.** Would ``gradcheck`` have caught the bug in ``ClampedSqrt``?
# Run it in ``float64`` at ``[-1.0, 4.0]``, then fix ``backward`` to follow
# ``forward`` (slope zero where the input was clamped) and check again.
#
# **Solution**

# %%
points = torch.tensor([-1.0, 4.0], dtype=torch.float64, requires_grad=True)
with expect_error(GradcheckError, "with respect to input 0"):
    gradcheck(ClampedSqrt.apply, (points,))  # yes: slope 0 at -1, backward nan


class FixedClampedSqrt(ClampedSqrt):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        slope = torch.where(x > 0, 0.5 / torch.sqrt(x.clamp(min=0)), 0.0)
        return grad_output * slope


print("fixed:", gradcheck(FixedClampedSqrt.apply, (points,)))
# sphinx_gallery_start_ignore
FixedClampedSqrt.apply(s).sum().backward()  # s.grad was left None by the error
assert torch.equal(s.grad, torch.tensor([0.0, 0.5, 0.25]))
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_11_hooks.py` steps into ``backward()`` while it runs.
