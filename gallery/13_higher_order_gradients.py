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
# backward pass that computed it is not recorded, so the gradient is a
# constant and cannot be differentiated again. With ``create_graph=True``
# autograd records the backward pass exactly as it records a forward pass:
# the gradient gets a ``grad_fn`` and can be differentiated like any tensor.
# For :math:`y = x^3` the first derivative is :math:`3x^2`, the second
# :math:`6x`:
import warnings

import torch
from torch import nn
from torch.autograd.function import once_differentiable

from autograd_notes import expect_error, walk_graph

_ = torch.manual_seed(0)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(constant,) = torch.autograd.grad((x**3).sum(), x)
print("dy/dx =", constant, " requires_grad:", constant.requires_grad)
with expect_error(RuntimeError, "does not require grad"):
    torch.autograd.grad(constant.sum(), x)

(dy_dx,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
(d2y_dx2,) = torch.autograd.grad(dy_dx.sum(), x)
print("with create_graph=True: dy/dx =", dy_dx)
print("d2y/dx2 =", d2y_dx2)
# sphinx_gallery_start_ignore
assert constant.grad_fn is None
assert not constant.requires_grad
assert torch.equal(constant, 3 * x.detach() ** 2)
assert torch.equal(dy_dx, constant)
assert dy_dx.grad_fn is not None
assert torch.equal(d2y_dx2, 6 * x.detach())
# sphinx_gallery_end_ignore

# %%
# ``loss.backward(create_graph=True)`` also works, but it stores a gradient
# *with* a graph in ``x.grad``: the parameter refers to a graph that refers to
# the parameter. PyTorch warns about that reference cycle and recommends
# ``torch.autograd.grad``, which returns the gradient instead of storing it.

# sphinx_gallery_start_ignore
# The warning fires once per process; an earlier tutorial may have used it.
_warn_always = torch.is_warn_always_enabled()
torch.set_warn_always(True)
with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always")
    (x**3).sum().backward(create_graph=True)
torch.set_warn_always(_warn_always)
_cycle = [str(w.message) for w in _caught if "reference cycle" in str(w.message)]
assert len(_cycle) == 1
assert "recommend using autograd.grad" in _cycle[0]
assert x.grad.grad_fn is not None
# sphinx_gallery_end_ignore

# %%
# A real use: the gradient penalty of WGAN-GP
# -------------------------------------------
# A Wasserstein GAN with gradient penalty trains a *critic* :math:`D` whose
# gradient with respect to its input should have norm 1. On points
# :math:`\hat x` between real and generated samples it adds
# :math:`\lambda (\lVert \nabla_{\hat x} D(\hat x) \rVert - 1)^2` to the
# critic's loss. Training the critic needs the gradient of that penalty with
# respect to the weights: a gradient of a gradient. We use ``float64`` so
# that finite differences can check it.
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
# Such a gradient is easy to get subtly wrong, so check it with central
# finite differences: nudge one weight by :math:`\pm h` and watch the
# penalty. With :math:`h = 10^{-6}` in ``float64`` both agree to better than
# :math:`10^{-8}`:


def finite_difference(weight, index, h=1e-6):
    penalties = []
    for step in (h, -2 * h, h):  # to w + h, to w - h, back to w
        with torch.no_grad():
            weight[index] += step
        penalties.append(gradient_penalty(critic, x_hat).item())
    return (penalties[0] - penalties[1]) / (2 * h)


for index in [(0, 0), (1, 0), (2, 1)]:
    autograd_value = first_weight.grad[index].item()
    numeric = finite_difference(first_weight, index)
    print(f"weight{list(index)}: {autograd_value:+.8f}  finite diff {numeric:+.8f}")
# sphinx_gallery_start_ignore
import itertools

for _index in itertools.product(range(16), range(2)):  # every first-layer weight
    _num = finite_difference(first_weight, _index)
    assert abs(_num - first_weight.grad[_index].item()) < 1e-8
# sphinx_gallery_end_ignore

# %%
# Common mistake: forgetting ``create_graph=True``
# ------------------------------------------------
# Without it, ``grad_x`` is a constant. The penalty alone then fails loudly,
# but added to the rest of the critic's loss it fails *silently*: backward
# runs through the other term, and the penalty contributes nothing. The fix
# is ``create_graph=True`` inside the penalty, as in ``gradient_penalty``.
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
wrong = critic_weight_grad(wrong_penalty)
right = critic_weight_grad(gradient_penalty(critic, x_hat))  # the fix
print("wrong penalty changes the gradient:", not torch.equal(wrong, without_penalty))
print("right penalty changes the gradient:", not torch.equal(right, without_penalty))
# sphinx_gallery_start_ignore
assert torch.isclose(wrong_penalty, penalty)  # same value, no history
assert torch.equal(wrong, without_penalty)
# The right penalty adds ten times the gradient checked by finite differences.
_penalty_grad = torch.autograd.grad(gradient_penalty(critic, x_hat), first_weight)[0]
assert torch.allclose(right, without_penalty + 10 * _penalty_grad)
# sphinx_gallery_end_ignore

# %%
# Hessian-vector products without the Hessian
# -------------------------------------------
# The Hessian :math:`H` of :math:`n` parameters has :math:`n^2` entries, but
# Newton-type methods need only :math:`Hv`: the gradient of :math:`g \cdot v`
# with :math:`g = \nabla L`. Two backward passes, the first with
# ``create_graph=True``, give it without forming :math:`H`
# (``torch.autograd.functional.hvp`` packages them). Here, for 100 weights:
features = torch.randn(64, 100, dtype=torch.float64)
labels = torch.randint(0, 2, (64,)).double()


def loss_fn(w):
    return nn.functional.binary_cross_entropy_with_logits(features @ w, labels)


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
assert torch.allclose(torch.autograd.functional.hvp(loss_fn, w.detach(), v)[1], hv)
# sphinx_gallery_end_ignore

# %%
# Custom functions that can be differentiated only once
# -----------------------------------------------------
# A custom ``torch.autograd.Function``
# (:ref:`sphx_glr_tutorials_09_writing_a_custom_function.py`) whose
# ``backward`` uses differentiable torch operations supports double backward
# for free, as long as those operations start from what autograd recorded: a
# derivative computed in ``setup_context``, which runs without recording, is
# a constant (the ``Cube`` of
# :ref:`sphx_glr_tutorials_10_testing_a_custom_function.py`). A ``backward``
# that steps outside autograd (NumPy, a C++ kernel) cannot, and should be
# marked ``@once_differentiable``. Here the critic's activation
# :math:`z / (1 + |z|)` has its derivative computed in plain Python numbers,
# outside autograd, as NumPy or a compiled kernel would:


class Softsign(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z / (1 + z.abs())

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (z,) = ctx.saved_tensors
        slope = [1 / (1 + abs(v)) ** 2 for v in z.flatten().tolist()]  # no autograd
        return grad_output * torch.tensor(slope, dtype=z.dtype).view_as(z)


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
_good = nn.Sequential(other_critic[0], nn.Softsign(), other_critic[2])  # same weights
assert torch.allclose(first_order, torch.autograd.grad(_good(x_hat).sum(), x_hat)[0])
_weight = other_critic[0].weight
_good_grad = torch.autograd.grad(gradient_penalty(_good, x_hat), _weight)[0]
# Without the decorator: no error, and a wrong penalty gradient.
_undecorated = staticmethod(Softsign.backward.__wrapped__)
_Bad = type("_Undecorated", (Softsign,), {"backward": _undecorated})
_bad = nn.Sequential(other_critic[0], nn.Identity(), other_critic[2])
_bad[1].forward = _Bad.apply
_bad_grad = torch.autograd.grad(gradient_penalty(_bad, x_hat), _weight)[0]
assert not torch.allclose(_bad_grad, _good_grad)
# sphinx_gallery_end_ignore

# %%
# The error comes at the second backward, not when the penalty is built: the
# decorator records a node that raises when reached. Without the decorator
# the second derivative would be silently wrong. The fix is a ``backward``
# made of torch operations, or ``torch.nn.functional.softsign``.
#
# Exercises
# ---------
#
# **1. Predict.** For ``y = (3 * x).sum()``, does the gradient returned by
# ``torch.autograd.grad(y, x, create_graph=True)`` require grad?
#
# **Solution**

# %%
(g3,) = torch.autograd.grad((3 * x).sum(), x, create_graph=True)
print(g3, g3.requires_grad)  # False: 3 does not depend on x, no history
# sphinx_gallery_start_ignore
assert not g3.requires_grad
assert torch.equal(g3, torch.full((3,), 3.0))
# sphinx_gallery_end_ignore

# %%
# **2. Write.** For :math:`f(w) = \sum_i w_i^4` the Hessian is diagonal with
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
# :ref:`sphx_glr_tutorials_14_forward_mode_and_torch_func.py` computes
# derivatives in the other direction, with forward mode, and treats
# gradients as functions with ``torch.func``.
