"""
How do I train only some entries of a weight?
=============================================

``requires_grad`` is one flag for a whole tensor, so "train these entries of
``W``, freeze those" needs a mask. After this tutorial you can mask the
forward pass or the gradient, tell when the two agree, and keep frozen
entries exactly unchanged under any optimizer.
"""

# %%
# Common mistake: freezing a slice
# --------------------------------
# The first idea is to switch off ``requires_grad`` for the block to keep
# fixed. It fails: a slice, like any view of ``W`` (``W.t()``, ``W.view(-1)``),
# is the result of an operation, not a leaf, and only a leaf's flag can be
# changed (:ref:`sphx_glr_tutorials_02_leaf_tensors.py`).
import torch

from autograd_notes import apply_mask, expect_error, random_mask, register_grad_mask

_ = torch.manual_seed(0)

W = torch.randn(4, 4, requires_grad=True)
block = W[:2, :3]
print("block.is_leaf:", block.is_leaf, "| grad_fn:", type(block.grad_fn).__name__)
with expect_error(RuntimeError, "only change requires_grad flags of leaf variables"):
    block.requires_grad_(False)

# sphinx_gallery_start_ignore
_views = (W[2, 3], W[:2, :3], W.t(), W.view(-1))
assert all(not v.is_leaf and v.grad_fn is not None for v in _views)
assert type(W.requires_grad) is bool
# sphinx_gallery_end_ignore

# %%
# The leaf ``W`` has one ``requires_grad`` flag for the whole tensor, none
# per entry. So ``W`` keeps ``requires_grad=True``, and a *mask* ``M`` of its
# shape says per entry what trains: ``True`` (1) trains, ``False`` (0) stays.
#
# :func:`~autograd_notes.random_mask` draws each entry ``True`` with
# probability ``p``, independently (a Bernoulli mask, like
# ``torch.bernoulli(torch.full(W.shape, p))`` but as ``bool``). A seeded
# :class:`torch.Generator` gives the same mask on every run.
mask = random_mask(W.shape, p=0.5, generator=torch.Generator().manual_seed(0))
M = mask.float()  # the same mask as 0.0/1.0, for the arithmetic below
print(M)

# sphinx_gallery_start_ignore
assert mask.dtype == torch.bool
_again = random_mask(W.shape, generator=torch.Generator().manual_seed(0))
assert torch.equal(mask, _again)
_share = random_mask(100_000, p=0.3, generator=torch.Generator().manual_seed(1))
assert abs(_share.float().mean().item() - 0.3) < 0.01
# sphinx_gallery_end_ignore

# %%
# Common mistake: ``W @ M`` instead of ``W * M``
# ----------------------------------------------
# "Apply the mask" means the elementwise (Hadamard) product ``W * M``. The
# matrix product ``W @ M`` is something else entirely, and because ``W`` is
# square here, the shapes fit and nothing warns you:
print("W * M is zero where M is 0:", bool(((W * M)[M == 0] == 0).all()))
print("W @ M is zero where M is 0:", bool(((W @ M)[M == 0] == 0).all()))

# sphinx_gallery_start_ignore
assert ((W * M)[M == 0] == 0).all()
assert not ((W @ M)[M == 0] == 0).all()
# sphinx_gallery_end_ignore

# %%
# Two places to put the mask
# --------------------------
# Take one layer :math:`y = Wx` and a loss :math:`L = f(y)`, so that
# :math:`\partial L / \partial W = \frac{\partial L}{\partial y}\,x^\top`.
# Both masks give :math:`M \odot (\frac{\partial L}{\partial y}\,x^\top)`,
# exactly zero where :math:`M = 0`, but with :math:`\partial L / \partial y`
# taken at different outputs:
#
# * **Forward mask**: compute :math:`y = (W \odot M)\,x`.
# * **Gradient mask**: compute :math:`y = Wx`, then multiply the gradient by
#   :math:`M`. This :math:`y` differs whenever a masked-out weight is nonzero.
x = torch.randn(4)


def grad_with_forward_mask(weight, loss_fn):
    w = weight.detach().clone().requires_grad_()
    loss_fn((w * M) @ x).backward()
    return w.grad


def grad_with_gradient_mask(weight, loss_fn):
    w = weight.detach().clone().requires_grad_()
    loss_fn(w @ x).backward()
    return w.grad * M


def masks_agree(weight, loss_fn):
    forward = grad_with_forward_mask(weight, loss_fn)
    return torch.allclose(forward, grad_with_gradient_mask(weight, loss_fn))


# %%
# For a loss that is linear in the output, such as :math:`L = \sum_i y_i`,
# :math:`\partial L / \partial y` is all ones whatever :math:`y` is, so the
# two agree:
print("same gradient for L = y.sum():", masks_agree(W, torch.sum))

# sphinx_gallery_start_ignore
_g = grad_with_forward_mask(W, torch.sum)
assert torch.equal(_g, M * torch.outer(torch.ones(4), x))
assert torch.equal(_g, grad_with_gradient_mask(W, torch.sum))  # exactly
# sphinx_gallery_end_ignore


# %%
# A counterexample: a nonlinear loss
# ----------------------------------
# Testing with ``y.sum()`` alone suggests the two are always equivalent. They
# are not. For :math:`L = \sum_i y_i^2`, :math:`\partial L / \partial y = 2y`
# depends on the output, and the outputs differ, because with a gradient mask
# the masked-out entries still take part in the forward pass:
def square_loss(y):
    return (y**2).sum()


g_forward = grad_with_forward_mask(W, square_loss)
g_gradient = grad_with_gradient_mask(W, square_loss)
print("forward mask: ", g_forward)
print("gradient mask:", g_gradient)  # both zero where M is 0, different elsewhere

# sphinx_gallery_start_ignore
_y_fwd, _y_plain = (W.detach() * M) @ x, W.detach() @ x
assert not torch.allclose(_y_fwd, _y_plain)
assert not torch.allclose(g_forward, g_gradient)
assert torch.allclose(g_forward, M * torch.outer(2 * _y_fwd, x))
assert torch.allclose(g_gradient, M * torch.outer(2 * _y_plain, x))
# sphinx_gallery_end_ignore

# %%
# The two agree again when the masked-out weights are already zero: then
# :math:`Wx = (W \odot M)x`, the outputs are equal, and so are the gradients,
# for any loss. So one can stand in for the other when the loss is linear in
# the output, or when the masked weights are zero; in general, it cannot.
W_zeroed = W.detach() * M
print("same gradient, masked entries zero:", masks_agree(W_zeroed, square_loss))

# sphinx_gallery_start_ignore
assert torch.equal(W_zeroed @ x, (W_zeroed * M) @ x)
assert masks_agree(W_zeroed, square_loss)
# sphinx_gallery_end_ignore

# %%
# Which is right depends on the goal. A forward mask *prunes*: masked-out
# weights act as zeros, and zero is their true derivative. A gradient mask
# *freezes*: they keep acting with their values and only stop learning.
# :func:`~autograd_notes.apply_mask` masks the weight in the forward pass,
# :func:`~autograd_notes.register_grad_mask` masks the gradient with a hook;
# :func:`~autograd_notes.masked_linear` has both, as ``mode="prune"`` and
# ``mode="freeze"``.
w = W.detach().clone().requires_grad_()
square_loss(apply_mask(w, mask) @ x).backward()
print("apply_mask gives the forward-mask gradient:", torch.allclose(w.grad, g_forward))

w = W.detach().clone().requires_grad_()
handle = register_grad_mask(w, mask)
square_loss(w @ x).backward()
handle.remove()
print("register_grad_mask gives the gradient mask:", torch.allclose(w.grad, g_gradient))

# sphinx_gallery_start_ignore
from autograd_notes import masked_linear

for _mode, _expected in (("prune", g_forward), ("freeze", g_gradient)):
    _loss = square_loss(masked_linear(x, W, mask, mode=_mode))
    assert torch.allclose(torch.autograd.grad(_loss, W)[0], _expected)
# sphinx_gallery_end_ignore

# %%
# A zero gradient does not mean frozen
# ------------------------------------
# Autograd computes gradients; the *optimizer* writes the weights. Train a
# small regression for 20 steps with a gradient mask from step 0 or step 10
# (freezing part of a trained layer); :func:`~autograd_notes.frozen_report`
# tells whether masked-out entries changed while the mask was on.
from autograd_notes import frozen_report, keep_frozen

X = torch.randn(64, 4)
Y = X @ torch.randn(4, 4)
W_START = torch.randn(4, 4)
OPTIMIZERS = {
    "SGD": lambda p: torch.optim.SGD([p], lr=0.05),
    "SGD, momentum": lambda p: torch.optim.SGD([p], lr=0.05, momentum=0.9),
    "SGD, weight_decay": lambda p: torch.optim.SGD([p], lr=0.05, weight_decay=0.01),
    "Adam": lambda p: torch.optim.Adam([p], lr=0.01),
    "AdamW": lambda p: torch.optim.AdamW([p], lr=0.01, weight_decay=0.01),
}


def train(make_optimizer, mask_from, fix=False):
    w = torch.nn.Parameter(W_START.clone())
    optimizer = make_optimizer(w)
    for step in range(20):
        if step == mask_from:
            register_grad_mask(w, mask)
            if fix:
                keep_frozen(optimizer, w, mask)
            before = w.detach().clone()
        optimizer.zero_grad()
        ((X @ w.T - Y) ** 2).mean().backward()
        optimizer.step()
    return frozen_report(before, w.detach(), mask)


def outcome(report):
    moved = f"moved {report.moved_outside} of {report.total_outside}"
    return "frozen" if report.frozen else moved


reports = {name: (train(make, 0), train(make, 10)) for name, make in OPTIMIZERS.items()}
print(f"{'optimizer':18} {'mask from step 0':>17} {'mask from step 10':>18}")
for name, (from_0, from_10) in reports.items():
    print(f"{name:18} {outcome(from_0):>17} {outcome(from_10):>18}")

# sphinx_gallery_start_ignore
_moved_0 = {n for n, (r0, _) in reports.items() if not r0.frozen}
_moved_10 = {n for n, (_, r10) in reports.items() if not r10.frozen}
assert _moved_0 == {"SGD, weight_decay", "AdamW"}
assert _moved_10 == {"SGD, momentum", "SGD, weight_decay", "Adam", "AdamW"}
for _r0, _r10 in reports.values():  # training happened: every trainable entry moved
    assert _r0.moved_inside == _r0.total_inside == _r10.moved_inside
for _make in (OPTIMIZERS["SGD, weight_decay"], OPTIMIZERS["AdamW"]):
    _p = torch.nn.Parameter(torch.ones(3))  # zero gradient, one step: W shrinks
    _p.grad = torch.zeros(3)
    _make(_p).step()
    assert (_p < 1).all()
# sphinx_gallery_end_ignore

# %%
# * **Weight decay** moves masked entries whatever the schedule.
#   ``SGD(weight_decay=...)`` adds :math:`\lambda W` to the gradient *inside*
#   ``step()``, after the hook has run; ``AdamW`` shrinks :math:`W` directly.
# * **Momentum and Adam** keep them frozen when the mask is there from the
#   start (their state only saw zeros there), not when it arrives at step
#   10: velocity and moments built from the earlier, unmasked gradients keep
#   pushing after the gradient has become zero.
#
# The fix: :func:`~autograd_notes.keep_frozen`
# --------------------------------------------
# :func:`~autograd_notes.keep_frozen` records the values outside the mask
# and writes them back after every ``optimizer.step()``: those entries stay
# bit-identical, whatever the optimizer does. Keep the gradient mask too, so
# frozen entries do not feed gradient clipping or other ``.grad`` statistics.
fixed = {name: train(make, 10, fix=True) for name, make in OPTIMIZERS.items()}
for name, report in fixed.items():
    print(f"{name:18} mask and keep_frozen from step 10: {outcome(report)}")

# sphinx_gallery_start_ignore
assert all(report.frozen for report in fixed.values())
assert all(train(make, 0, fix=True).frozen for make in OPTIMIZERS.values())
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** Do the forward mask and the gradient mask give the same
# gradient for the loss ``(3 * y).sum() - y.mean()``?
#
# **Solution**

# %%
agree = masks_agree(W, lambda y: (3 * y).sum() - y.mean())
print(agree)  # True: the loss is linear in y, so dL/dy is the same for any y
# sphinx_gallery_start_ignore
assert agree
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** Plain ``Adam`` (not ``AdamW``) with ``weight_decay=0.01``,
# gradient mask from step 0: are the masked-out entries frozen?
#
# **Solution**

# %%
adam_l2 = train(lambda p: torch.optim.Adam([p], lr=0.01, weight_decay=0.01), 0)
print(adam_l2)  # not frozen: Adam adds the decay to the gradient, then normalises it
# sphinx_gallery_start_ignore
assert not adam_l2.frozen
assert adam_l2.max_abs_change_outside > 0.1  # about lr per step, though decay is tiny
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# The recipe alone: :doc:`/how-to/freeze-part-of-a-weight`.
# :ref:`sphx_glr_tutorials_09_writing_a_custom_function.py` writes the
# masked layer as a custom autograd ``Function``.
