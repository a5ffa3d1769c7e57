"""
How do I differentiate a gradient?
==================================

Some losses contain a gradient: a gradient penalty, a Hessian-vector product
for a second-order optimizer, a meta-learning step. This tutorial shows how to
make autograd record the backward pass so that its result can be
differentiated again, how to check such a gradient, and which custom
functions cannot take part.
"""

# %%
# A gradient is a result without history
# --------------------------------------
# ``torch.autograd.grad`` returns the gradient as a tensor. By default the
# backward pass that computed it is not recorded, so the gradient is a plain
# constant and cannot be differentiated again:
import copy
import math

import numpy as np
import torch
from torch import nn
from torch.autograd.function import once_differentiable

from autograd_notes import expect_error, walk_graph

_ = torch.manual_seed(0)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(dy_dx,) = torch.autograd.grad((x**3).sum(), x)
print("dy/dx =", dy_dx, " requires_grad:", dy_dx.requires_grad)
with expect_error(RuntimeError, "does not require grad"):
    torch.autograd.grad(dy_dx.sum(), x)

# sphinx_gallery_start_ignore
assert torch.equal(dy_dx, 3 * x.detach() ** 2)
assert dy_dx.grad_fn is None
assert not dy_dx.requires_grad
# sphinx_gallery_end_ignore

# %%
# ``create_graph=True`` records the backward pass
# -----------------------------------------------
# With ``create_graph=True`` autograd records the operations of the backward
# pass itself, exactly as it records a forward pass. The gradient gets a
# ``grad_fn`` and is differentiable like any other tensor. For
# :math:`y = x^3` the first derivative is :math:`3x^2` and the second
# :math:`6x`:
(dy_dx,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
(d2y_dx2,) = torch.autograd.grad(dy_dx.sum(), x)
print("dy/dx   =", dy_dx)
print("d2y/dx2 =", d2y_dx2)

# sphinx_gallery_start_ignore
assert torch.equal(dy_dx, 3 * x.detach() ** 2)
assert dy_dx.grad_fn is not None
assert torch.equal(d2y_dx2, 6 * x.detach())
# sphinx_gallery_end_ignore

# %%
# ``loss.backward(create_graph=True)`` also works, but it stores a gradient
# *with* a graph in ``x.grad``, so the parameter holds a reference to a graph
# that holds the parameter. PyTorch warns about that reference cycle and
# recommends ``torch.autograd.grad``, which returns the gradient instead of
# storing it.

# sphinx_gallery_start_ignore
import warnings

with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always")
    (x**3).sum().backward(create_graph=True)
assert [str(w.message).count("reference cycle") for w in _caught] == [1]
assert "recommend using autograd.grad" in str(_caught[0].message)
assert x.grad.grad_fn is not None
# sphinx_gallery_end_ignore

# %%
# A real use: the gradient penalty of WGAN-GP
# -------------------------------------------
# A Wasserstein GAN with gradient penalty trains a *critic* :math:`D` whose
# gradient with respect to its input should have norm 1. On points
# :math:`\hat x` drawn between real and generated samples it adds
#
# .. math::
#
#    \lambda \, \big(\lVert \nabla_{\hat x} D(\hat x) \rVert - 1\big)^2
#
# to the critic's loss. The penalty contains a gradient, and training the
# critic needs the gradient *of that penalty* with respect to the critic's
# weights: a gradient of a gradient. We work in ``float64`` so that we can
# check the result with finite differences below.
critic = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1)).double()
real = torch.randn(8, 2, dtype=torch.float64) + 2.0
fake = torch.randn(8, 2, dtype=torch.float64)
alpha = torch.rand(8, 1, dtype=torch.float64)
x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_()


def gradient_penalty(critic, x_hat):
    scores = critic(x_hat)  # shape (8, 1): one score per sample
    # Each score depends on its own sample only, so the gradient of the sum
    # holds the gradient of each score in its own row.
    (grad_x,) = torch.autograd.grad(scores.sum(), x_hat, create_graph=True)
    return ((grad_x.norm(dim=1) - 1) ** 2).mean()


penalty = gradient_penalty(critic, x_hat)
penalty.backward()
first_weight = critic[0].weight
print(f"penalty = {penalty.item():.4f}")

# sphinx_gallery_start_ignore
assert first_weight.grad.abs().sum() > 0
_jac = torch.autograd.functional.jacobian(lambda t: critic(t).sum(1), x_hat)
_rows = torch.stack([_jac[i, i] for i in range(8)])
assert torch.allclose(torch.autograd.grad(critic(x_hat).sum(), x_hat)[0], _rows)
# sphinx_gallery_end_ignore

# %%
# Checking a second-order gradient
# --------------------------------
# Such a gradient is easy to get subtly wrong, so check it against central
# finite differences: nudge one weight by :math:`\pm h` and watch the penalty
# change. In ``float64`` with :math:`h = 10^{-6}` both agree to better than
# :math:`10^{-8}`:
h = 1e-6


def finite_difference(weight, index):
    with torch.no_grad():
        weight[index] += h
    plus = gradient_penalty(critic, x_hat).item()
    with torch.no_grad():
        weight[index] -= 2 * h
    minus = gradient_penalty(critic, x_hat).item()
    with torch.no_grad():
        weight[index] += h
    return (plus - minus) / (2 * h)


for index in [(0, 0), (0, 1), (1, 0), (2, 1)]:
    numeric = finite_difference(first_weight, index)
    print(
        f"weight{list(index)}: autograd {first_weight.grad[index].item():+.8f}"
        f"   finite difference {numeric:+.8f}"
    )

# sphinx_gallery_start_ignore
for _i in range(16):
    for _j in range(2):
        _num = finite_difference(first_weight, (_i, _j))
        assert abs(_num - first_weight.grad[_i, _j].item()) < 1e-8
# sphinx_gallery_end_ignore

# %%
# Common mistake: forgetting ``create_graph=True``
# ------------------------------------------------
# Without it, ``grad_x`` is a constant. The penalty alone then fails loudly,
# but added to the rest of the critic's loss it fails *silently*: the loss
# still has a ``grad_fn`` through the other term, backward runs, and the
# penalty simply contributes nothing to the weights' gradient.
(grad_x,) = torch.autograd.grad(critic(x_hat).sum(), x_hat)  # no create_graph
wrong_penalty = ((grad_x.norm(dim=1) - 1) ** 2).mean()
with expect_error(RuntimeError, "does not require grad"):
    wrong_penalty.backward()


def critic_weight_grad(penalty):
    critic.zero_grad()
    wasserstein = critic(fake).mean() - critic(real).mean()
    (wasserstein + 10 * penalty).backward()
    return first_weight.grad.clone()


without_penalty = critic_weight_grad(0.0)
changed = not torch.equal(critic_weight_grad(wrong_penalty), without_penalty)
print("wrong penalty changes the gradient:", changed)

# sphinx_gallery_start_ignore
assert torch.isclose(wrong_penalty, penalty)  # same value, no history
assert torch.equal(critic_weight_grad(wrong_penalty), without_penalty)
# sphinx_gallery_end_ignore

# %%
# The fix is ``create_graph=True`` inside the penalty, as in
# ``gradient_penalty`` above; then the penalty adds ten times its own
# gradient, the one we checked against finite differences:
right = critic_weight_grad(gradient_penalty(critic, x_hat))
print("penalty changes the gradient:", not torch.equal(right, without_penalty))

# sphinx_gallery_start_ignore
_penalty_grad = torch.autograd.grad(gradient_penalty(critic, x_hat), first_weight)[0]
assert torch.allclose(right, without_penalty + 10 * _penalty_grad)
# sphinx_gallery_end_ignore

# %%
# Hessian-vector products without the Hessian
# -------------------------------------------
# The Hessian :math:`H` of a loss with :math:`n` parameters has :math:`n^2`
# entries: for a network with a million parameters, :math:`10^{12}`
# numbers. Newton-type methods and curvature estimates need only products
# :math:`Hv`, and :math:`Hv` is the gradient of :math:`g \cdot v` where
# :math:`g = \nabla L`. So one backward with ``create_graph=True`` and one
# more backward give :math:`Hv` without ever forming :math:`H`. Here
# :math:`L` is a logistic-regression loss with 100 weights:
features = torch.randn(64, 100, dtype=torch.float64)
labels = torch.randint(0, 2, (64,)).double()


def loss_fn(w):
    logits = features @ w
    return nn.functional.binary_cross_entropy_with_logits(logits, labels)


w = torch.randn(100, dtype=torch.float64, requires_grad=True)
v = torch.randn(100, dtype=torch.float64)

(g,) = torch.autograd.grad(loss_fn(w), w, create_graph=True)
(hv,) = torch.autograd.grad(g @ v, w)

H = torch.autograd.functional.hessian(loss_fn, w.detach())
print(f"Hessian: {H.numel()} numbers; Hv: {hv.numel()} numbers")
print("Hv matches H @ v:", torch.allclose(hv, H @ v))

# sphinx_gallery_start_ignore
assert H.shape == (100, 100)
assert torch.allclose(hv, H @ v)
# sphinx_gallery_end_ignore

# %%
# PyTorch packages the same two steps as
# ``torch.autograd.functional.hvp(loss_fn, w, v)``; tutorial
# :ref:`sphx_glr_tutorials_13_forward_mode_and_torch_func.py` shows a third
# way, with forward mode.

# sphinx_gallery_start_ignore
assert torch.allclose(torch.autograd.functional.hvp(loss_fn, w.detach(), v)[1], hv)
# sphinx_gallery_end_ignore

# %%
# Custom functions that can be differentiated only once
# -----------------------------------------------------
# A custom ``torch.autograd.Function``
# (:ref:`sphx_glr_tutorials_08_writing_a_custom_function.py`) whose
# ``backward`` is built from differentiable torch operations supports double
# backward for free. A ``backward`` that leaves autograd (NumPy, a C++ kernel)
# cannot, and should be decorated with ``@once_differentiable``. Here is a
# critic whose activation :math:`\mathrm{softsign}(z) = z / (1 + |z|)` has
# its derivative computed by NumPy:


class Softsign(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z / (1 + z.abs())

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (z,) = ctx.saved_tensors
        slope = 1 / (1 + np.abs(z.detach().numpy())) ** 2  # outside autograd
        return grad_output * torch.from_numpy(slope)


class SoftsignLayer(nn.Module):
    def forward(self, z):
        return Softsign.apply(z)


other_critic = nn.Sequential(nn.Linear(2, 16), SoftsignLayer(), nn.Linear(16, 1))
other_critic = other_critic.double()
first_order = torch.autograd.grad(other_critic(x_hat).sum(), x_hat)[0]
print("first-order gradient works, shape", tuple(first_order.shape))
penalty = gradient_penalty(other_critic, x_hat)  # builds without complaint
with expect_error(RuntimeError, "once_differentiable"):
    penalty.backward()

# sphinx_gallery_start_ignore
_gx = torch.autograd.grad(other_critic(x_hat).sum(), x_hat, create_graph=True)[0]
assert "torch::autograd::Error" in [n.name() for n in walk_graph(_gx)]
_good = copy.deepcopy(other_critic)
_good[1] = nn.Softsign()
assert torch.allclose(first_order, torch.autograd.grad(_good(x_hat).sum(), x_hat)[0])
gradient_penalty(_good, x_hat).backward()


# Without the decorator: no error, and a wrong penalty gradient.
class _Undecorated(Softsign):
    backward = staticmethod(Softsign.backward.__wrapped__)


_bad = copy.deepcopy(other_critic)
_bad[1].forward = _Undecorated.apply
gradient_penalty(_bad, x_hat).backward()
assert not torch.allclose(_bad[0].weight.grad, _good[0].weight.grad)
# sphinx_gallery_end_ignore

# %%
# The error comes at the second backward, not when the penalty is built:
# the decorator puts a node into the recorded backward graph that raises
# when it is reached. Without the decorator, a ``backward`` that leaves
# autograd would return a wrong second derivative instead of an error. The
# fix here is to write ``backward`` with differentiable torch operations (and
# drop the decorator), or to use ``torch.nn.functional.softsign``.
#
# Exercises
# ---------
#
# **1. Write.** Compute the second derivative of :math:`\sin` at
# :math:`\pi/6, \pi/2, 5\pi/6` with two calls to ``torch.autograd.grad``.
#
# **Solution**

# %%
t = torch.tensor([math.pi / 6, math.pi / 2, 5 * math.pi / 6], requires_grad=True)
(d1,) = torch.autograd.grad(torch.sin(t).sum(), t, create_graph=True)
(d2,) = torch.autograd.grad(d1.sum(), t)
print(d2.round(decimals=4))  # -sin(t) = [-0.5, -1, -0.5]
# sphinx_gallery_start_ignore
assert torch.allclose(d2, -torch.sin(t.detach()), atol=1e-6)
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** For ``y = (3 * x).sum()``, does the gradient returned by
# ``torch.autograd.grad(y, x, create_graph=True)`` require grad?
#
# **Solution**

# %%
(g3,) = torch.autograd.grad((3 * x).sum(), x, create_graph=True)
print(g3, g3.requires_grad)  # False: the gradient 3 does not depend on x
# sphinx_gallery_start_ignore
assert not g3.requires_grad
assert torch.equal(g3, torch.full((3,), 3.0))
# sphinx_gallery_end_ignore

# %%
# The second derivative of a linear function is zero, and autograd
# represents it by a gradient with no history; differentiating that again
# raises the error from the first section.
#
# **3. Write.** For :math:`f(w) = \sum_i w_i^4` the Hessian is diagonal with
# entries :math:`12 w_i^2`. Compute :math:`Hv` by double backward for
# ``w = [1, 2, 3]`` and ``v = [1, 0, -1]``, without building :math:`H`.
#
# **Solution**

# %%
w4 = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
v4 = torch.tensor([1.0, 0.0, -1.0])
(g4,) = torch.autograd.grad((w4**4).sum(), w4, create_graph=True)
(hv4,) = torch.autograd.grad(g4 @ v4, w4)
print(hv4)  # 12 * w**2 * v = [12, 0, -108]
# sphinx_gallery_start_ignore
assert torch.equal(hv4, torch.tensor([12.0, 0.0, -108.0]))
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_13_forward_mode_and_torch_func.py` computes
# derivatives in the other direction, with forward mode, and treats
# gradients as functions with ``torch.func``.
