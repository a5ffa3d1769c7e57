"""
Why does ``backward()`` need a scalar, and what does ``gradient=`` compute?
===========================================================================

``loss.backward()`` works on a scalar loss, but on a vector it raises an
error. After this tutorial you can explain why: the derivative of a vector is
a whole Jacobian matrix, and what autograd computes is a *vector-Jacobian
product* :math:`v^\\top J`, for a vector :math:`v` that you pass as
``gradient=``. You will also know where that :math:`v` comes from in practice.
"""

# %%
# Ask for gradients *before* computing
# ------------------------------------
# ``requires_grad=True`` tells autograd to **record** the operations applied
# to a tensor, so that ``backward()`` can later walk them back. It only
# affects operations that run after it is set. A common mistake is to switch
# it on too late:
import torch

from autograd_notes import expect_error, expect_warning

x = torch.arange(4.0)
y = x * x  # computed while nothing required grad: nothing was recorded
x.requires_grad_(True)
with expect_error(RuntimeError, "does not require grad and does not have a grad_fn"):
    y.sum().backward()
# sphinx_gallery_start_ignore
assert (y.grad_fn, y.requires_grad) == (None, False)
# sphinx_gallery_end_ignore

# %%
# A vector cannot call ``backward()`` on its own
# ----------------------------------------------
# The fix: set the flag when the tensor is created, then compute. Now the
# product is recorded as a ``MulBackward0`` node, but ``y`` has four
# elements, and ``y.backward()`` still refuses:
x = torch.arange(4.0, requires_grad=True)
y = x * x
print(type(y.grad_fn).__name__)
with expect_error(RuntimeError, "grad can be implicitly created only for scalar"):
    y.backward()
# sphinx_gallery_start_ignore
assert type(y.grad_fn).__name__ == "MulBackward0"
# sphinx_gallery_end_ignore

# %%
# "Scalar" here means *one element*, not zero dimensions: shapes ``(1,)`` and
# ``(1, 1)`` are accepted too. Anything larger would force autograd to guess
# how to combine the elements into one number (their sum? their mean? only the
# first?), and each choice gives a different gradient.
for shape in [(), (1,), (1, 1)]:
    t = torch.ones(shape, requires_grad=True)
    (t * 3).backward()
    print(f"shape {shape!s:7} -> grad {t.grad.tolist()}")
    # sphinx_gallery_start_ignore
    assert torch.equal(t.grad, torch.full(shape, 3.0))
    # sphinx_gallery_end_ignore

# %%
# The Jacobian
# ------------
# The full derivative of :math:`y = f(x) \in \mathbb{R}^m` with respect to
# :math:`x \in \mathbb{R}^n` is the :math:`m \times n` *Jacobian*
# :math:`J_{ij} = \partial y_i / \partial x_j`. For ``x * x`` it is diagonal,
# so take a function that mixes neighbouring components (indices wrap):
#
# .. math::
#
#    y_i = x_i^2 \, \sin(x_{i+1}),
#
# so row :math:`i` of :math:`J` has two non-zero entries,
# :math:`2 x_i \sin(x_{i+1})` and :math:`x_i^2 \cos(x_{i+1})`.
# ``torch.autograd.functional.jacobian`` builds the whole matrix:


def f(x: torch.Tensor) -> torch.Tensor:
    return x**2 * torch.sin(torch.roll(x, -1))


x = torch.tensor([0.5, -1.0, 2.0, 1.5, -0.5], requires_grad=True)
J = torch.autograd.functional.jacobian(f, x)
print(J)
# sphinx_gallery_start_ignore
_xd, _nxt = x.detach(), torch.roll(x.detach(), -1)
_diagonal = torch.diag(2 * _xd * torch.sin(_nxt))
_next = torch.roll(torch.diag(_xd**2 * torch.cos(_nxt)), 1, dims=1)
assert torch.allclose(J, _diagonal + _next)
# sphinx_gallery_end_ignore

# %%
# For tensors of higher rank the "matrix" has the shape ``y.shape +
# x.shape``: one entry per pair of an output element and an input element.
M = torch.ones(2, 3)
print(tuple(torch.autograd.functional.jacobian(lambda m: m.sum(0), M).shape))
# sphinx_gallery_start_ignore
assert torch.autograd.functional.jacobian(lambda m: m.sum(0), M).shape == (3, 2, 3)
# sphinx_gallery_end_ignore

# %%
# ``backward(gradient=v)`` computes :math:`v^\top J`
# --------------------------------------------------
# Give ``backward`` a vector :math:`v` with the shape of ``y`` and it adds
# :math:`v^\top J` to ``x.grad``: entry :math:`j` is
# :math:`\sum_i v_i \, \partial y_i / \partial x_j`, a vector shaped like
# ``x``.
v = torch.tensor([1.0, 2.0, -1.0, 0.5, 3.0])
f(x).backward(gradient=v)
print("x.grad =", x.grad)
print("v @ J  =", v @ J)
vjp = x.grad.clone()
# sphinx_gallery_start_ignore
assert torch.allclose(x.grad, v @ J)
# sphinx_gallery_end_ignore

# %%
# That is the gradient of the scalar :math:`\sum_i v_i y_i`, ``v`` being
# fixed weights on the outputs; all ones gives the usual ``y.sum().backward()``.
# ``v`` must have exactly the shape of ``y``: it is not broadcast.
x.grad = None
(v * f(x)).sum().backward()
print("via (v * y).sum():", x.grad)
with expect_error(RuntimeError, "Mismatch in shape"):
    f(x).backward(gradient=torch.ones(1))
# sphinx_gallery_start_ignore
assert torch.allclose(x.grad, vjp)
_g = torch.autograd.grad(f(x), x, grad_outputs=torch.ones(5))
assert torch.equal(_g[0], torch.autograd.grad(f(x).sum(), x)[0])
# sphinx_gallery_end_ignore

# %%
# Where ``v`` comes from
# ----------------------
# Usually a scalar loss :math:`L` is computed from ``y``. The right ``v`` is
# then :math:`\partial L / \partial y`, and ``y.backward(v)`` finishes the
# chain rule exactly as ``L.backward()`` would: ``v`` is *the gradient of some
# scalar with respect to* ``y``. Inside ``L.backward()``, every node receives
# such a ``v`` from the node above it.
x.grad = None
torch.tanh(f(x)).sum().backward()  # the usual way
print("L.backward():     ", x.grad)
via_loss = x.grad.clone()

x.grad = None
y = f(x)
L = torch.tanh(y).sum()
(dL_dy,) = torch.autograd.grad(L, y)  # returns v = dL/dy; .grad is untouched
y.backward(gradient=dL_dy)  # the chain rule from y down to x
print("y.backward(dL/dy):", x.grad)
# sphinx_gallery_start_ignore
assert torch.allclose(x.grad, via_loss)  # so autograd.grad added nothing to it
(_y := f(x)).register_hook((_seen := []).append)
torch.tanh(_y).sum().backward()
assert torch.allclose(_seen[0], dL_dy)  # what the node above y sends down
# sphinx_gallery_end_ignore

# %%
# Why never the whole Jacobian?
# -----------------------------
# Autograd never forms :math:`J` (with ten million outputs and parameters it
# would have :math:`10^{14}` entries): each node multiplies the incoming
# vector by its local derivative, so one backward pass gives
# :math:`v^\top J`. The full Jacobian needs one such pass *per output* (row
# :math:`i` is :math:`e_i^\top J` for the one-hot :math:`e_i`), unless
# ``vectorize=True`` batches them; forward mode needs one per input. A
# *hook*, a function that autograd calls with a gradient as soon as it is
# computed (more on hooks later, in
# :ref:`tutorial 11 <sphx_glr_tutorials_11_hooks.py>`), counts the passes:
passes = []


def f_counted(x: torch.Tensor) -> torch.Tensor:
    square = x**2
    square.register_hook(lambda grad: passes.append(1))
    return square * torch.sin(torch.roll(x, -1))


torch.autograd.functional.jacobian(f_counted, x)
print(f"functional.jacobian:  {len(passes)} backward passes")
jacobian_passes = len(passes)
passes.clear()
f_counted(x).backward(gradient=v)
print(f"backward(gradient=v): {len(passes)} backward pass")
# sphinx_gallery_start_ignore
torch.autograd.functional.jacobian(f_counted, x, vectorize=True)  # 1 batched pass
assert (jacobian_passes, len(passes)) == (len(x), 2)
# sphinx_gallery_end_ignore

# %%
# Repeated calls add up, in place
# -------------------------------
# Every ``backward`` *adds* its :math:`v^\top J` into ``.grad`` (see
# :ref:`sphx_glr_tutorials_03_grad_fn_and_the_graph.py`), **in place**:
# ``x.grad`` stays the same tensor object, so a reference you kept sees the
# new value too.
x.grad = None
f(x).backward(gradient=v)
kept = x.grad
f(x).backward(gradient=v)
print(f"same tensor: {x.grad is kept}, kept = {kept}")
# sphinx_gallery_start_ignore
assert (x.grad is kept, torch.allclose(kept, 2 * vjp)) == (True, True)
# sphinx_gallery_end_ignore

# %%
# Not with ``create_graph=True``, which records the backward pass itself so
# that the gradient can be differentiated again (later, in
# :ref:`tutorial 13 <sphx_glr_tutorials_13_higher_order_gradients.py>`). To keep the
# accumulation differentiable, autograd computes ``x.grad + new`` as a **new
# tensor**, with a ``grad_fn``, and stores that in ``x.grad``: a reference
# you kept no longer follows ``.grad``. PyTorch also warns of a reference
# cycle, ``x`` to its ``.grad`` and back.

# sphinx_gallery_start_ignore
# warn-always mode: do not use up this once-per-process warning (tutorial 13)
_warn_always = torch.is_warn_always_enabled()
torch.set_warn_always(True)
# sphinx_gallery_end_ignore
with expect_warning(UserWarning, "reference cycle"):
    f(x).backward(gradient=v, create_graph=True)
# sphinx_gallery_start_ignore
torch.set_warn_always(_warn_always)
# sphinx_gallery_end_ignore
print(f"same tensor: {x.grad is kept}, kept = {kept}")
print("x.grad =", x.grad)
# sphinx_gallery_start_ignore
assert (x.grad is not kept, type(x.grad.grad_fn).__name__) == (True, "AddBackward0")
assert torch.allclose(kept, 2 * vjp) and torch.allclose(x.grad, 3 * vjp)  # noqa: PT018
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** ``x = torch.tensor([1., 2., 3., 4.], requires_grad=True)``
# and ``y = x * x``. What is ``x.grad`` after
# ``y.backward(gradient=torch.tensor([1., 0., 0., 0.]))``?
#
# **Solution**

# %%
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = x * x
y.backward(gradient=torch.tensor([1.0, 0.0, 0.0, 0.0]))
print(x.grad)  # row 0 of the diagonal Jacobian diag(2x): only x_0 gets 2 * 1
# sphinx_gallery_start_ignore
assert torch.equal(x.grad, torch.tensor([2.0, 0.0, 0.0, 0.0]))
# sphinx_gallery_end_ignore

# %%
# **2. Write.** Which ``v`` makes ``y.backward(gradient=v)`` give the same
# ``x.grad`` as ``y.mean().backward()``? Check your answer.
#
# **Solution**

# %%
x.grad = None
(x * x).mean().backward()
from_mean = x.grad.clone()
x.grad = None
y = x * x
y.backward(gradient=torch.full_like(y, 1 / y.numel()))  # v_i = 1 / n
print(from_mean, x.grad)
# sphinx_gallery_start_ignore
assert torch.allclose(x.grad, from_mean)
# sphinx_gallery_end_ignore

# %%
# **3. Write.** Build the Jacobian ``J`` of ``f`` at
# ``[0.5, -1.0, 2.0, 1.5, -0.5]`` row by row, with one
# ``torch.autograd.grad`` call per output and a one-hot ``grad_outputs``.
# Compare with ``torch.autograd.functional.jacobian``.
#
# **Solution**

# %%
x = torch.tensor([0.5, -1.0, 2.0, 1.5, -0.5], requires_grad=True)
y = f(x)
rows = []
for i in range(len(y)):
    e_i = torch.zeros_like(y)
    e_i[i] = 1.0
    (row,) = torch.autograd.grad(y, x, grad_outputs=e_i, retain_graph=True)
    rows.append(row)
print(torch.allclose(torch.stack(rows), J))
# sphinx_gallery_start_ignore
assert torch.allclose(torch.stack(rows), J)
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# In short: ``backward()`` alone needs a one-element output; otherwise pass
# ``gradient=v`` shaped like ``y``. It adds :math:`v^\top J` to ``.grad`` in
# one pass, without forming :math:`J`, in place except under
# ``create_graph=True``.
#
# :ref:`sphx_glr_tutorials_07_several_losses.py` runs backward from several
# losses that share part of the graph.
