"""
How do I train only some entries of a weight?
=============================================

``requires_grad`` is one flag for a whole tensor, so "train these entries of
``W``, freeze those" needs a mask. In this tutorial you mask the gradient in
the training loop, see where that alone fails, write the frozen values back
after each step, and then meet the tested versions in ``autograd_notes``.
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
import torch

from autograd_notes import expect_error

_ = torch.manual_seed(0)
W = torch.randn(4, 4, requires_grad=True)
with expect_error(RuntimeError, "only change requires_grad flags of leaf variables"):
    W[:2, :3].requires_grad_(False)
mask = torch.rand(W.shape, generator=torch.Generator().manual_seed(0)) < 0.5
print(mask)

# %%
# Mask the gradient
# -----------------
# Between ``backward()`` and the optimizer's ``step()``, multiply ``w.grad``
# by the mask: the frozen entries get a zero gradient, and plain SGD does
# not move them. That holds as long as the gradient is finite there:
# ``inf * 0`` is ``nan`` (the package's version, at the end of this page,
# uses ``torch.where``). One function trains a small regression (its
# ``write_back`` option comes later on this page):
X = torch.randn(64, 4)
Y = X @ torch.randn(4, 4)


def fit(w, optimizer, steps, mask=None, write_back=False):
    frozen = w.detach().clone()  # the values before these steps
    for _ in range(steps):
        optimizer.zero_grad()
        ((X @ w.T - Y) ** 2).mean().backward()
        if mask is not None:
            w.grad *= mask  # zero gradient outside the mask
        optimizer.step()
        if write_back:
            with torch.no_grad():
                w.copy_(torch.where(mask, w, frozen))


def count_moved(before, w):
    m = w.detach() != before
    return f"moved: {int(m[~mask].sum())} frozen, {int(m[mask].sum())} trainable"


w = torch.nn.Parameter(W.detach().clone())
before = w.detach().clone()
fit(w, torch.optim.SGD([w], lr=0.05), steps=10, mask=mask)
print(count_moved(before, w), "| bit-identical:", torch.equal(w[~mask], before[~mask]))

# sphinx_gallery_start_ignore
assert type(W.requires_grad) is bool  # one flag for the whole tensor
assert ((w != before) == mask).all()  # frozen entries equal, the others moved
_inf = torch.full((4, 4), float("inf"))
assert (_inf * mask)[~mask].isnan().all()  # the product: nan where frozen
assert (torch.where(mask, _inf, 0.0)[~mask] == 0).all()
# sphinx_gallery_end_ignore


# %%
# A zero gradient does not mean frozen
# ------------------------------------
# Autograd computes gradients; the *optimizer* writes the weights, and it
# may use more than the gradient. To try some, here is the experiment above
# as a function: ``warmup`` steps without the mask, then 10 steps with it.
# With weight decay, ``SGD`` adds :math:`\lambda W` to the gradient *inside*
# ``step()``, after the mask, so every frozen entry shrinks a little at
# every step:
def train_with_mask(warmup=0, write_back=False, opt=torch.optim.SGD, **kw):
    w = torch.nn.Parameter(W.detach().clone())
    optimizer = opt([w], **kw)
    fit(w, optimizer, steps=warmup)
    before = w.detach().clone()
    fit(w, optimizer, steps=10, mask=mask, write_back=write_back)
    return before, w, optimizer


decay = {"lr": 0.05, "weight_decay": 0.01}
before, w, _ = train_with_mask(**decay)
print(count_moved(before, w))

# sphinx_gallery_start_ignore
assert (w.grad[~mask] == 0).all()  # the mask did its job
assert torch.allclose(w[~mask], before[~mask] * (1 - 0.05 * 0.01) ** 10)
# sphinx_gallery_end_ignore

# %%
# Momentum fails in another way. Freeze part of a weight that has already
# trained for 10 steps, and the momentum buffer still holds velocity from
# those unmasked gradients: it keeps moving the frozen entries although their
# gradient is now exactly zero. Adam's running averages do the same. (With the
# mask on from the first step, momentum and Adam keep the entries frozen:
# their state only ever saw zeros there.)
momentum = {"lr": 0.05, "momentum": 0.9}
before, w, optimizer = train_with_mask(warmup=10, **momentum)
print(count_moved(before, w))
print("velocity at frozen entries:", optimizer.state[w]["momentum_buffer"][~mask])

# sphinx_gallery_start_ignore
assert ((w.grad == 0) & (optimizer.state[w]["momentum_buffer"] != 0))[~mask].all()
for _cls, _warmup, _frozen, _options in (
    (torch.optim.SGD, 0, 1, momentum),
    (torch.optim.Adam, 0, 1, {"lr": 0.01}),
    (torch.optim.Adam, 10, 0, {"lr": 0.01}),
):
    _before, _w, _ = train_with_mask(_warmup, False, _cls, **_options)
    assert torch.equal(_w[~mask], _before[~mask]) == _frozen
# sphinx_gallery_end_ignore

# %%
# Write the values back after every step
# --------------------------------------
# Whatever the optimizer does, the frozen entries end up right if their old
# values are written back after each step: that is ``fit``'s
# ``write_back``. The write is in place on a leaf that requires grad, so it
# runs under ``torch.no_grad()``; without it, autograd refuses, as in
# :ref:`sphx_glr_tutorials_01_one_training_step.py`:
with expect_error(RuntimeError, "leaf Variable that requires grad"):
    w.copy_(torch.where(mask, w, before))  # outside torch.no_grad()

runs = {"decay": (0, decay), "momentum": (10, momentum)}  # write back now
for name, (warmup, options) in runs.items():
    before, w, optimizer = train_with_mask(warmup, True, **options)
    print(f"{name:8}", count_moved(before, w), torch.equal(w[~mask], before[~mask]))
    # sphinx_gallery_start_ignore
    assert ((w != before) == mask).all()  # frozen entries equal, the others moved
    # sphinx_gallery_end_ignore
# sphinx_gallery_start_ignore
assert (optimizer.state[w]["momentum_buffer"][~mask] != 0).all()  # momentum run
fit(w, optimizer, 1, mask=mask)  # one step without writing back
assert (w[~mask] != before[~mask]).all()
# sphinx_gallery_end_ignore

# %%
# Writing back restores the weights, not the optimizer's state: after the
# momentum run, the velocity at the frozen entries is not zero, so stop
# writing back and the next step moves them again. Keep both: only the
# gradient mask keeps frozen entries out of ``w.grad``, and so out of
# gradient clipping or anything else that reads it.
#
# The tested versions in ``autograd_notes``
# -----------------------------------------
# :func:`~autograd_notes.register_grad_mask` masks the gradient and
# :func:`~autograd_notes.keep_frozen` writes the values back, with no change
# to your training loop: each registers a *hook*, a function that autograd
# or the optimizer calls at the right moment (later, in
# :ref:`tutorial 11 <sphx_glr_tutorials_11_hooks.py>`).
# :func:`~autograd_notes.frozen_report` is the check. They give bit for bit
# the weights of ``fit`` while gradients are finite (they mask with
# ``torch.where``: an ``inf`` at a frozen entry becomes 0, not ``nan``), and
# add handles whose ``remove()`` takes them off, a report of what moved on
# each side of the mask, and checked arguments:
from autograd_notes import frozen_report, keep_frozen, register_grad_mask

w = torch.nn.Parameter(W.detach().clone())
optimizer = torch.optim.AdamW([w], lr=0.01)  # weight_decay=0.01 by default
fit(w, optimizer, steps=10)
grad_handle = register_grad_mask(w, mask)
freeze_handle = keep_frozen(optimizer, w, mask)
before = w.detach().clone()
fit(w, optimizer, steps=10)
print(frozen_report(before, w, mask))

# sphinx_gallery_start_ignore
from contextlib import redirect_stdout
from io import StringIO

assert frozen_report(before, w, mask).frozen
assert optimizer.defaults["weight_decay"] == 0.01
_, _mine, _ = train_with_mask(10, True, torch.optim.AdamW, lr=0.01)
assert torch.equal(_mine, w)  # bit for bit
with redirect_stdout(StringIO()), expect_error(ValueError, "must have shape"):
    register_grad_mask(w, mask[0])  # checked arguments
grad_handle.remove()
freeze_handle.remove()
fit(w, optimizer, steps=1)  # both hooks gone: the gradient and decay move them
assert (w.grad[~mask] != 0).any()
assert not frozen_report(before, w, mask).frozen
register_grad_mask(_package := torch.nn.Parameter(torch.ones(4, 4)), mask)
(_package * float("inf")).sum().backward()  # an infinite gradient everywhere
assert (_package.grad[~mask] == 0).all()  # torch.where, not the product's nan
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
    loss_fn(b @ x).backward()
    return torch.allclose(a.grad, b.grad * mask)  # gradient mask


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
options = {"lr": 0.01, "weight_decay": 0.01}
before, w, _ = train_with_mask(opt=torch.optim.Adam, **options)
print(frozen_report(before, w, mask))  # no: Adam adds the decay to the gradient
# sphinx_gallery_start_ignore
assert frozen_report(before, w, mask).max_abs_change_outside > 0.05  # ~lr per step
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** A forward mask can also live inside the layer, as a
# *parametrization*: ``parametrize_mask(layer, "weight", mask)`` registers
# one with :func:`torch.nn.utils.parametrize.register_parametrization`. Is
# ``layer.weight`` then still a leaf? Which tensor does the optimizer update?
#
# **Solution**

# %%
from autograd_notes import parametrize_mask

layer = parametrize_mask(torch.nn.Linear(4, 4), "weight", mask)
original = layer.parametrizations.weight.original
print({"layer.weight": layer.weight.is_leaf, "original": original.is_leaf})
# layer.weight is computed from original at every access, so it is not a
# leaf; the optimizer updates the leaf original. weight_norm and
# spectral_norm work the same way.
# sphinx_gallery_start_ignore
from torch import nn

with torch.random.fork_rng():  # leave the page's random numbers unchanged
    _wn = nn.utils.parametrizations.weight_norm(nn.Linear(4, 3))
    _sn = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 3))
for _layer in (layer, _wn, _sn):
    assert (_layer.weight.is_leaf, _layer.weight.grad_fn is None) == (False, False)
    assert all(_p.is_leaf and _p is not _layer.weight for _p in _layer.parameters())
assert id(original) in map(id, layer.parameters())  # the optimizer's leaf
assert torch.equal(layer.weight, original * mask)
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_09_writing_a_custom_function.py` writes the
# masked layer as a custom autograd ``Function``. The recipe alone:
# :doc:`/how-to/freeze-part-of-a-weight`.
