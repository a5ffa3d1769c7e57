"""
How do I train only some entries of a weight?
=============================================

``requires_grad`` is one flag for a whole tensor, so "train these entries of
``W``, freeze those" needs a mask. In this tutorial you write the two hooks
that do it, a gradient hook and an optimizer step hook, see where the first
one alone fails, and then meet the tested versions in ``autograd_notes``.
"""

# %%
# A mask instead of a flag
# ------------------------
# Switching off ``requires_grad`` for a block of ``W`` fails: a slice is not
# a leaf, and only a leaf's flag can be changed
# (:ref:`sphx_glr_tutorials_02_leaf_tensors.py`). So ``W`` keeps
# ``requires_grad=True``, and a *mask* of its shape says per entry what
# trains: ``True`` trains, ``False`` stays frozen. Here each entry is
# ``True`` with probability 0.5, from a seeded generator:
import functools

import torch

from autograd_notes import expect_error

_ = torch.manual_seed(0)
W = torch.randn(4, 4, requires_grad=True)
with expect_error(RuntimeError, "only change requires_grad flags of leaf variables"):
    W[:2, :3].requires_grad_(False)
mask = torch.rand(W.shape, generator=torch.Generator().manual_seed(0)) < 0.5
print(mask)

# %%
# Mask the gradient with a hook
# -----------------------------
# ``w.register_hook(fn)`` attaches a *hook* to ``w``: during ``backward()``,
# as soon as the gradient with respect to ``w`` is computed, autograd calls
# ``fn(grad)``. On a leaf this happens *before* the gradient is accumulated
# into ``w.grad``, and if ``fn`` returns a tensor, that tensor is accumulated
# instead. (:ref:`sphx_glr_tutorials_11_hooks.py` covers hooks in full.) So
# one line zeroes the gradient outside the mask, as long as the gradient is
# finite there: ``inf * 0`` is ``nan`` (the package's version, at the end of
# this page, uses ``torch.where``). Train a small regression with it and
# plain SGD:
X = torch.randn(64, 4)
Y = X @ torch.randn(4, 4)


def fit(w, optimizer, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        ((X @ w.T - Y) ** 2).mean().backward()
        optimizer.step()


def count_moved(before, w):
    m = w.detach() != before
    return f"moved: {int(m[~mask].sum())} frozen, {int(m[mask].sum())} trainable"


w = torch.nn.Parameter(W.detach().clone())
w.register_hook(lambda g: g * mask)
before = w.detach().clone()
fit(w, torch.optim.SGD([w], lr=0.05), steps=10)
print(count_moved(before, w), "| bit-identical:", torch.equal(w[~mask], before[~mask]))

# sphinx_gallery_start_ignore
assert type(W.requires_grad) is bool  # one flag for the whole tensor
assert ((w != before) == mask).all()  # frozen entries equal, the others moved
_v = torch.nn.Parameter(torch.ones(4, 4))
_v.grad, _seen, _k = torch.ones(4, 4), [], torch.arange(16.0).view(4, 4)
_v.register_hook(lambda g: _seen.append(g) or g * mask)
(_v * _k).sum().backward()
assert torch.equal(_seen[0], _k)  # the hook saw the gradient before accumulation
assert torch.equal(_v.grad, 1 + _k * mask)  # and its result was accumulated
_inf = torch.full((4, 4), float("inf"))
assert (_inf * mask)[~mask].isnan().all()  # the product: nan where frozen
assert (torch.where(mask, _inf, 0.0)[~mask] == 0).all()
# sphinx_gallery_end_ignore


# %%
# A zero gradient does not mean frozen
# ------------------------------------
# Autograd computes gradients; the *optimizer* writes the weights, and it
# may use more than the gradient. To try some, here is the experiment above
# as a function (``warmup`` steps without the mask, then the hook, then 10
# steps; ``restore`` is for later). With weight decay, ``SGD`` adds
# :math:`\lambda W` to the gradient *inside* ``step()``, after the hook has
# run, so every frozen entry shrinks a little at every step:
def train_with_mask(make_optimizer, warmup=0, restore=None):
    w = torch.nn.Parameter(W.detach().clone())
    optimizer = make_optimizer([w])
    fit(w, optimizer, steps=warmup)
    w.register_hook(lambda g: g * mask)
    if restore:
        restore(optimizer, w, mask)
    before = w.detach().clone()
    fit(w, optimizer, steps=10)
    return before, w, optimizer


sgd_decay = functools.partial(torch.optim.SGD, lr=0.05, weight_decay=0.01)
sgd_momentum = functools.partial(torch.optim.SGD, lr=0.05, momentum=0.9)
before, w, _ = train_with_mask(sgd_decay)
print(count_moved(before, w))

# sphinx_gallery_start_ignore
assert (w.grad[~mask] == 0).all()  # the hook did its job
assert torch.allclose(w[~mask], before[~mask] * (1 - 0.05 * 0.01) ** 10)
# sphinx_gallery_end_ignore

# %%
# Momentum fails in another way. Freeze part of a weight that has already
# trained for 10 steps, and the momentum buffer still holds velocity from
# those unmasked gradients: it keeps moving the frozen entries although their
# gradient is now exactly zero. Adam's running averages do the same. (With the
# mask on from the first step, momentum and Adam keep the entries frozen:
# their state only ever saw zeros there.)
before, w, optimizer = train_with_mask(sgd_momentum, warmup=10)
print(count_moved(before, w))
print("velocity at frozen entries:", optimizer.state[w]["momentum_buffer"][~mask])

# sphinx_gallery_start_ignore
assert ((w.grad == 0) & (optimizer.state[w]["momentum_buffer"] != 0))[~mask].all()
_adam = functools.partial(torch.optim.Adam, lr=0.01)
for _make, _warmup, _frozen in ((sgd_momentum, 0, 1), (_adam, 0, 1), (_adam, 10, 0)):
    _before, _w, _ = train_with_mask(_make, _warmup)
    assert torch.equal(_w[~mask], _before[~mask]) == _frozen
# sphinx_gallery_end_ignore


# %%
# Write the values back after every step
# --------------------------------------
# Whatever the optimizer does, the frozen entries end up right if their old
# values are written back after each step, by a hook on the optimizer:
# ``optimizer.register_step_post_hook(fn)`` calls
# ``fn(optimizer, args, kwargs)`` after every ``step()``. The write is in place
# on a leaf that requires grad, so it runs under ``torch.no_grad()``; without
# it, autograd refuses, as in
# :ref:`sphx_glr_tutorials_01_one_training_step.py`:
def keep_frozen_by_hand(optimizer, w, mask):
    saved = w.detach().clone()

    def restore(optimizer, args, kwargs):
        with torch.no_grad():
            w.copy_(torch.where(mask, w, saved))

    return optimizer.register_step_post_hook(restore)


with expect_error(RuntimeError, "leaf Variable that requires grad"):
    w.copy_(torch.where(mask, w, before))  # outside torch.no_grad()
# sphinx_gallery_start_ignore
from pathlib import Path

_gallery = Path(keep_frozen_by_hand.__code__.co_filename).parent
_message = "leaf Variable that requires grad"
assert _message in (_gallery / "01_one_training_step.py").read_text()
assert _message not in (_gallery / "02_leaf_tensors.py").read_text()
# sphinx_gallery_end_ignore

# The two failures again, with the step hook on from when the mask arrives:
for name, make, warmup in (("decay", sgd_decay, 0), ("momentum", sgd_momentum, 10)):
    before, w, _ = train_with_mask(make, warmup, restore=keep_frozen_by_hand)
    print(f"{name:8}", count_moved(before, w), torch.equal(w[~mask], before[~mask]))
    # sphinx_gallery_start_ignore
    assert ((w != before) == mask).all()  # frozen entries equal, the others moved
    # sphinx_gallery_end_ignore

# %%
# Keep both hooks: only the gradient hook keeps frozen entries out of
# ``w.grad``, and so out of gradient clipping or anything else that reads it.
#
# The tested versions in ``autograd_notes``
# -----------------------------------------
# :func:`~autograd_notes.register_grad_mask` is the gradient hook,
# :func:`~autograd_notes.keep_frozen` the step hook and
# :func:`~autograd_notes.frozen_report` the check
# (:func:`~autograd_notes.random_mask` draws masks as above). They give bit
# for bit the weights your hooks give while gradients are finite (they mask
# with ``torch.where``: an ``inf`` at a frozen entry becomes 0, not ``nan``),
# and add what those lack: handles whose
# ``remove()`` takes the hooks off, ``keep_frozen`` following the parameter
# through an in-place cast such as ``model.double()``, a report of what moved
# on each side of the mask, and checked arguments. A mask of the wrong shape,
# say one row, broadcasts in ``g * row`` without a word; here it is refused:
from autograd_notes import frozen_report, keep_frozen, random_mask, register_grad_mask

w = torch.nn.Parameter(W.detach().clone())
optimizer = torch.optim.AdamW([w], lr=0.01)  # weight_decay=0.01 by default
fit(w, optimizer, steps=10)
grad_handle = register_grad_mask(w, mask)
freeze_handle = keep_frozen(optimizer, w, mask)
before = w.detach().clone()
fit(w, optimizer, steps=10)
print(frozen_report(before, w, mask))
with expect_error(ValueError, "must have shape"):
    register_grad_mask(w, mask[0])

# sphinx_gallery_start_ignore
assert frozen_report(before, w, mask).frozen
assert optimizer.defaults["weight_decay"] == 0.01
_generator = torch.Generator().manual_seed(0)
assert torch.equal(random_mask(W.shape, generator=_generator), mask)
_adamw = functools.partial(torch.optim.AdamW, lr=0.01)
_, _mine, _ = train_with_mask(_adamw, 10, restore=keep_frozen_by_hand)
assert torch.equal(_mine, w)  # bit for bit
assert torch.equal(torch.ones(4, 4) * mask[0], mask[0].float().expand(4, 4))
grad_handle.remove()
freeze_handle.remove()
fit(w, optimizer, steps=1)  # both hooks gone: the gradient and decay move them
assert (w.grad[~mask] != 0).any()
assert not frozen_report(before, w, mask).frozen
_lin = torch.nn.Linear(4, 4, bias=False)
_opt, _start = torch.optim.AdamW(_lin.parameters()), _lin.weight.detach().clone()
keep_frozen(_opt, _lin.weight, mask)
_lin.double()(X.double()).sum().backward()
_opt.step()
assert torch.equal(_lin.weight[~mask], _start.double()[~mask])
_hand, _package = (torch.nn.Parameter(torch.ones(4, 4)) for _ in "ab")
_hand.register_hook(lambda g: g * mask)
register_grad_mask(_package, mask)
for _p in (_hand, _package):
    (_p * float("inf")).sum().backward()  # an infinite gradient everywhere
assert _hand.grad[~mask].isnan().all()  # the product
assert (_package.grad[~mask] == 0).all()  # torch.where
# sphinx_gallery_end_ignore

# %%
# Or mask the forward pass
# ------------------------
# A gradient mask *freezes*: frozen weights still act with their values. A
# forward mask *prunes*: the layer computes with ``w * mask``, so masked
# weights act as zeros, with exactly zero gradient. For :math:`y = Wx` both
# gradients are :math:`M \odot (\frac{\partial L}{\partial y}\,x^\top)`,
# but with :math:`\partial L / \partial y` taken at different outputs: they
# agree for a loss linear in :math:`y` or when the masked weights are zero,
# not in general. :func:`~autograd_notes.apply_mask` masks the forward pass,
# :func:`~autograd_notes.masked_linear` does either (``mode="prune"`` or
# ``"freeze"``), and a forward mask needs ``keep_frozen`` just the same.
x = torch.randn(4)


def masks_agree(weight, loss_fn):
    a, b = (weight.detach().clone().requires_grad_() for _ in range(2))
    loss_fn((a * mask) @ x).backward()  # forward mask
    b.register_hook(lambda g: g * mask)  # gradient mask
    loss_fn(b @ x).backward()
    return torch.allclose(a.grad, b.grad)


def square_loss(y):
    return (y**2).sum()


print("L = y.sum():              ", masks_agree(W, torch.sum))
print("L = (y**2).sum():         ", masks_agree(W, square_loss))
print("same, masked weights zero:", masks_agree(W.detach() * mask, square_loss))

# sphinx_gallery_start_ignore
assert masks_agree(W, torch.sum)
assert masks_agree(W.detach() * mask, square_loss)
assert not masks_agree(W, square_loss)
from autograd_notes import apply_mask, masked_linear

for _mode, _forward in (("prune", lambda v: v * mask), ("freeze", lambda v: v)):
    _g = torch.autograd.grad(square_loss(masked_linear(x, W, mask, mode=_mode)), W)[0]
    _b = W.detach().clone().requires_grad_()
    square_loss(_forward(_b) @ x).backward()
    assert torch.allclose(_g, _b.grad * mask)
_a = torch.nn.Parameter(W.detach().clone())
_opt = torch.optim.AdamW([_a], lr=0.01)
square_loss(apply_mask(_a, mask) @ x).backward()
_opt.step()
assert ((_a.grad == 0) & (_a != W))[~mask].all()  # zero gradient, moved anyway
# sphinx_gallery_end_ignore

# %%
# Exercises
# ---------
#
# **1. Predict.** Plain ``Adam`` (not ``AdamW``) with ``weight_decay=0.01``
# and a gradient mask from the first step: do the frozen entries stay frozen?
#
# **Solution**

# %%
make_adam = functools.partial(torch.optim.Adam, lr=0.01, weight_decay=0.01)
before, w, _ = train_with_mask(make_adam)
print(frozen_report(before, w, mask))  # no: Adam adds the decay to the gradient
# sphinx_gallery_start_ignore
assert frozen_report(before, w, mask).max_abs_change_outside > 0.05  # ~lr per step
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** In the momentum run with ``keep_frozen_by_hand`` above,
# is the velocity at the frozen entries zero at the end?
#
# **Solution**

# %%
before, w, optimizer = train_with_mask(sgd_momentum, 10, keep_frozen_by_hand)
print(optimizer.state[w]["momentum_buffer"][~mask])
# Not zero: the step hook restores the weights, not the optimizer's state.
# Remove the hook, and the next step moves the frozen entries again.
# sphinx_gallery_start_ignore
assert (optimizer.state[w]["momentum_buffer"][~mask] != 0).all()
_handles = []
_keep = lambda *args: _handles.append(keep_frozen_by_hand(*args))  # noqa: E731
_before, _w, _opt = train_with_mask(sgd_momentum, 10, _keep)
_handles[0].remove()
fit(_w, _opt, 1)
assert (_w[~mask] != _before[~mask]).all()
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# The recipe alone: :doc:`/how-to/freeze-part-of-a-weight`.
# :ref:`sphx_glr_tutorials_09_writing_a_custom_function.py` writes the
# masked layer as a custom autograd ``Function``.
