"""
How do you train only part of a weight?
=======================================

``requires_grad`` is one flag per tensor, so "train these entries of ``W``,
freeze those" needs a mask ``M`` of ``W``'s shape. You can apply it in the
forward pass (compute with ``W * M``) or to the gradient (``W.grad * M``).
This script shows when the two agree, when they do not, and why a zero
gradient alone does not keep an entry frozen under every optimizer.
"""

# %%
# Why not one ``requires_grad`` per entry?
# ----------------------------------------
# ``requires_grad`` belongs to the whole tensor. A slice such as ``W[0]`` is
# not a leaf but the result of an indexing operation (see
# :ref:`sphx_glr_tutorials_01_leaf_tensors.py`), and PyTorch refuses to change
# the flag of a non-leaf.
import torch

_ = torch.manual_seed(0)

W = torch.randn(5, 8, requires_grad=True)
print("W[0].is_leaf:", W[0].is_leaf)
try:
    W[0].requires_grad_(False)
except RuntimeError as err:
    message = str(err)
    print(f"RuntimeError: {message.split('.')[0]}.")
else:
    raise AssertionError("expected a RuntimeError for a non-leaf slice")
assert "only change requires_grad flags of leaf variables" in message

# sphinx_gallery_start_ignore
assert W.is_leaf
assert not W[0].is_leaf
# sphinx_gallery_end_ignore

# %%
# So we keep ``W`` whole and decide *per entry* with a mask ``M`` of the same
# shape: 1 (``True``) trains, 0 (``False``) stays put. "Apply the mask" always
# means the elementwise (Hadamard) product ``W * M``, never the matrix
# product ``W @ M``, a different operation whose shapes here do not even
# fit.
g = torch.Generator().manual_seed(0)
M = (torch.rand(W.shape, generator=g) < 0.5).float()
print(M)
print("W * M has shape", tuple((W * M).shape))
try:
    W @ M
except RuntimeError as err:
    message = str(err)
    print(f"W @ M -> RuntimeError: {message}")
else:
    raise AssertionError("expected W @ M to fail for a 5x8 mask")
assert "cannot be multiplied" in message

# sphinx_gallery_start_ignore
assert (W * M).shape == W.shape
assert torch.equal((W * M)[M == 0], torch.zeros(int((M == 0).sum())))
# sphinx_gallery_end_ignore

# %%
# Two places to put the mask
# --------------------------
# Take one layer :math:`y = Wx` and a loss :math:`L = f(y)`. The chain rule
# gives :math:`\partial L / \partial W = \frac{\partial L}{\partial y}\,x^\top`.
#
# * **Forward mask**: compute :math:`y = (W \odot M)\,x`. Autograd then gives
#
#   .. math::
#
#      \frac{\partial L}{\partial W}
#      = M \odot \Big(\frac{\partial L}{\partial y}\,x^\top\Big)
#      \quad\text{evaluated at } y = (W \odot M)\,x .
#
# * **Gradient mask**: compute :math:`y = Wx`, then multiply the gradient by
#   the mask afterwards:
#
#   .. math::
#
#      M \odot \frac{\partial L}{\partial W}
#      = M \odot \Big(\frac{\partial L}{\partial y}\,x^\top\Big)
#      \quad\text{evaluated at } y = W x .
#
# The formulas look the same, and both are exactly zero where :math:`M = 0`.
# The difference hides in :math:`\partial L / \partial y`: it is evaluated at
# two different outputs whenever a masked-out entry of ``W`` is nonzero.
x = torch.randn(8)


def grad_with_forward_mask(weight, loss_fn):
    w = weight.detach().clone().requires_grad_()
    loss_fn((w * M) @ x).backward()
    return w.grad


def grad_with_gradient_mask(weight, loss_fn):
    w = weight.detach().clone().requires_grad_()
    loss_fn(w @ x).backward()
    return w.grad * M


# %%
# A loss linear in the output: the two agree
# ------------------------------------------
# For :math:`L = \sum_i y_i` the upstream gradient is all ones,
# :math:`\partial L / \partial y = \mathbf{1}`, whatever :math:`y` is. Both
# approaches give :math:`M \odot (\mathbf{1} x^\top)`. The study notes tested
# only this loss and concluded the two are "equivalent".
def sum_loss(y):
    return y.sum()


g_fwd = grad_with_forward_mask(W, sum_loss)
g_grad = grad_with_gradient_mask(W, sum_loss)
print("equal for y.sum():", torch.equal(g_fwd, g_grad))

assert torch.equal(g_fwd, g_grad)
# sphinx_gallery_start_ignore
assert torch.allclose(g_fwd, M * torch.outer(torch.ones(5), x))
# sphinx_gallery_end_ignore


# %%
# A nonlinear loss: they differ
# -----------------------------
# For :math:`L = \sum_i y_i^2` the upstream gradient is :math:`2y`, so it
# depends on :math:`y`, and :math:`y` depends on the masked-out entries in the
# gradient-mask approach (they still take part in the forward pass). The two
# gradients, and the forward outputs themselves, are different.
def square_loss(y):
    return (y**2).sum()


g_fwd = grad_with_forward_mask(W, square_loss)
g_grad = grad_with_gradient_mask(W, square_loss)
y_fwd = (W.detach() * M) @ x
y_plain = W.detach() @ x
print("outputs equal:  ", torch.allclose(y_fwd, y_plain))
print("gradients equal:", torch.allclose(g_fwd, g_grad))
print("largest gradient difference:", f"{(g_fwd - g_grad).abs().max():.3f}")

assert not torch.allclose(y_fwd, y_plain)
assert not torch.allclose(g_fwd, g_grad)
# Each one is exactly the formula above, evaluated at its own output:
assert torch.allclose(g_fwd, M * torch.outer(2 * y_fwd, x))
assert torch.allclose(g_grad, M * torch.outer(2 * y_plain, x))
# sphinx_gallery_start_ignore
assert (g_fwd[M == 0] == 0).all()  # both exactly zero where M = 0
assert (g_grad[M == 0] == 0).all()
# sphinx_gallery_end_ignore

# %%
# If the masked-out weights are zero, they agree again
# ----------------------------------------------------
# When ``W`` already holds zeros wherever ``M`` is 0, then :math:`Wx` and
# :math:`(W \odot M)x` are the same output, so the upstream gradient is the
# same and so are the masked gradients, for any loss.
W_zeroed = W.detach() * M
g_fwd0 = grad_with_forward_mask(W_zeroed, square_loss)
g_grad0 = grad_with_gradient_mask(W_zeroed, square_loss)
print("equal for (y**2).sum() with zeroed entries:", torch.allclose(g_fwd0, g_grad0))

assert torch.equal(W_zeroed @ x, (W_zeroed * M) @ x)
assert torch.allclose(g_fwd0, g_grad0)

# %%
# In pictures: the mask, the two gradients of the nonlinear loss and their
# difference. Both gradients vanish exactly where ``M`` is 0 (the pale cells);
# they disagree on the trainable entries.
try:
    import matplotlib.pyplot as plt
except ImportError:  # matplotlib is an optional extra
    plt = None

if plt is not None:
    fig, axes = plt.subplots(1, 4, figsize=(12, 2.6), layout="constrained")
    lim = float(torch.cat([g_fwd, g_grad]).abs().max())
    panels = [
        ("mask M (black: trains)", M, "Greys", (0, 1)),
        ("forward mask:\ngrad of (W*M)x", g_fwd, "RdBu_r", (-lim, lim)),
        ("gradient mask:\nM * grad of Wx", g_grad, "RdBu_r", (-lim, lim)),
        ("difference", g_fwd - g_grad, "RdBu_r", (-lim, lim)),
    ]
    for ax, (title, data, cmap, (lo, hi)) in zip(axes, panels, strict=True):
        im = ax.imshow(data.numpy(), cmap=cmap, vmin=lo, vmax=hi)
        ax.set_title(title, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axes[1:], shrink=0.8, label="gradient")

# %%
# Which one is right? Both, for different goals. A forward mask *prunes*:
# the masked-out weights act as zeros, and zero gradient is their true
# derivative. A gradient mask *freezes*: the weights keep acting with their
# current values and only stop learning. The
# :ref:`custom Function tutorial <sphx_glr_tutorials_07_custom_autograd_function.py>`
# builds a layer that offers both as ``mode="prune"`` and ``mode="freeze"``.
#
# The same with ``autograd_notes.masks``
# --------------------------------------
# :func:`autograd_notes.random_mask` draws a bool mask; pass a seeded
# :class:`torch.Generator` to get the same mask every run. It is the
# comparison ``torch.rand(shape) < p`` used above, as ``True``/``False``.
from autograd_notes.masks import (
    apply_mask,
    check_mask,
    frozen_report,
    keep_frozen,
    mask_from_condition,
    mask_from_indices,
    parametrize_mask,
    random_mask,
    register_grad_mask,
)

mask = random_mask(W.shape, p=0.5, generator=torch.Generator().manual_seed(0))
print(mask)

assert mask.dtype == torch.bool
assert torch.equal(mask, M.bool())

# %%
# The study notes trained only some *input columns* of a linear layer (a
# "location" list). :func:`autograd_notes.mask_from_indices` builds
# exactly that mask: for a weight of shape ``(out_features, in_features)``,
# ``cols`` picks the inputs whose weights learn (``rows`` the outputs).
col_mask = mask_from_indices(W.shape, cols=[0, 3, 4])
print(col_mask.int())

assert col_mask[:, [0, 3, 4]].all()
assert not col_mask[:, [1, 2, 5, 6, 7]].any()

# %%
# :func:`autograd_notes.mask_from_condition` turns a condition on the
# weight into a detached mask, e.g. "train only the large weights".
big_mask = mask_from_condition(W.abs() > 1.0)
print(big_mask.int())
print("trainable:", int(big_mask.sum()), "of", big_mask.numel())

assert not big_mask.requires_grad
assert torch.equal(big_mask, W.detach().abs() > 1.0)

# %%
# Every helper validates its mask with
# :func:`autograd_notes.check_mask`: same shape as the weight (no
# broadcasting), bool or 0/1 float, same device. A transposed mask is a
# common slip:
try:
    check_mask(mask.T, W)
except ValueError as err:
    message = str(err)
    print(f"ValueError: {message}")
else:
    raise AssertionError("expected a ValueError for a transposed mask")
assert "must have the weight's shape (5, 8), got shape (8, 5)" in message
# sphinx_gallery_start_ignore
for _bad in (
    torch.ones(1, 8, dtype=torch.bool),  # broadcastable, still rejected
    torch.full(W.shape, 0.5),  # float, but not 0/1
    torch.ones(W.shape, dtype=torch.bool, device="meta"),  # another device
):
    for _helper in (
        lambda m: check_mask(m, W),
        lambda m: apply_mask(W, m),
        lambda m: register_grad_mask(W, m),
        lambda m: parametrize_mask(torch.nn.Linear(8, 5), "weight", m),
        lambda m: keep_frozen(torch.optim.SGD([W], lr=0.1), W, m),
    ):
        try:
            _helper(_bad)
        except ValueError:
            pass
        else:
            raise AssertionError("expected a ValueError")
# sphinx_gallery_end_ignore

# %%
# Forward masking with the package
# --------------------------------
# :func:`autograd_notes.apply_mask` returns the masked weight (the
# ``W * M`` of the formulas) and gives exactly the forward-mask gradient.
# It is computed with :func:`torch.where`, so an ``inf`` outside the mask
# becomes 0 rather than ``inf * 0 = nan``.
w = W.detach().clone().requires_grad_()
square_loss(apply_mask(w, mask) @ x).backward()
print("same gradient as W * M:", torch.allclose(w.grad, g_fwd))

assert torch.allclose(w.grad, g_fwd)
assert torch.equal(w.grad[~mask], torch.zeros(int((~mask).sum())))
# sphinx_gallery_start_ignore
_w_inf = torch.full((5, 8), float("inf"))
assert torch.isnan((_w_inf * M)[~mask]).all()
assert torch.equal(apply_mask(_w_inf, mask)[~mask], torch.zeros(int((~mask).sum())))
# sphinx_gallery_end_ignore

# %%
# For a module, :func:`autograd_notes.parametrize_mask` installs the
# forward mask permanently: ``layer.weight`` becomes the masked view and the
# trainable tensor moves to ``layer.parametrizations.weight.original``.
layer = torch.nn.Linear(8, 5, bias=False)
with torch.no_grad():
    layer.weight.copy_(W)
parametrize_mask(layer, "weight", mask)
square_loss(layer(x)).backward()
original = layer.parametrizations.weight.original
print("layer.weight is zero outside the mask:", bool((layer.weight[~mask] == 0).all()))
print(
    "original keeps its values there:      ", torch.equal(original.detach(), W.detach())
)
print("and gets the forward-mask gradient:   ", torch.allclose(original.grad, g_fwd))

assert (layer.weight[~mask] == 0).all()
assert torch.equal(original.detach(), W.detach())
assert torch.allclose(original.grad, g_fwd)

# %%
# Gradient masking with the package
# ---------------------------------
# :func:`autograd_notes.register_grad_mask` keeps the forward pass and
# masks the gradient with a hook, *before* it is accumulated into ``.grad``.
# It returns a handle; ``handle.remove()`` takes the hook off again.
w = W.detach().clone().requires_grad_()
handle = register_grad_mask(w, mask)
square_loss(w @ x).backward()
print("same gradient as W.grad * M:", torch.allclose(w.grad, g_grad))
handle.remove()

assert torch.allclose(w.grad, g_grad)
assert torch.equal(w.grad[~mask], torch.zeros(int((~mask).sum())))
# sphinx_gallery_start_ignore
# Masked before accumulation: an existing .grad outside the mask is kept.
_w = W.detach().clone().requires_grad_()
_w.grad = torch.ones(5, 8)
_handle = register_grad_mask(_w, mask)
square_loss(_w @ x).backward()
assert torch.equal(_w.grad[~mask], torch.ones(int((~mask).sum())))
_handle.remove()  # and once removed, the full gradient flows again
_w.grad = None
square_loss(_w @ x).backward()
assert torch.allclose(_w.grad * M, g_grad)
assert not (_w.grad[~mask] == 0).all()
# sphinx_gallery_end_ignore

# %%
# Zero gradient is not the same as frozen
# ---------------------------------------
# The optimizer, not autograd, writes the weights. We train a small
# regression for a few steps with each optimizer and a gradient mask, and
# ask :func:`autograd_notes.frozen_report` whether the masked-out
# entries are bit-identical afterwards. Two schedules: the mask is
# registered before the first step, or only halfway through training (for
# example, when you decide to freeze part of a layer you have already been
# training).
X = torch.randn(64, 8)
Y = X @ torch.randn(8, 5)
W_START = torch.randn(5, 8)
STEPS, HALFWAY = 20, 10

OPTIMIZERS = {
    "SGD": lambda p: torch.optim.SGD([p], lr=0.05),
    "SGD+momentum": lambda p: torch.optim.SGD([p], lr=0.05, momentum=0.9),
    "SGD+weight_decay": lambda p: torch.optim.SGD([p], lr=0.05, weight_decay=0.01),
    "Adam": lambda p: torch.optim.Adam([p], lr=0.01),
    "AdamW": lambda p: torch.optim.AdamW([p], lr=0.01, weight_decay=0.01),
}


def train(make_optimizer, *, mask_from, fix=False):
    """Train; the gradient mask (and optionally keep_frozen) starts at `mask_from`."""
    w = torch.nn.Parameter(W_START.clone())
    optimizer = make_optimizer(w)
    for step in range(STEPS):
        if step == mask_from:
            register_grad_mask(w, mask)
            if fix:
                keep_frozen(optimizer, w, mask)
            before = w.detach().clone()
        optimizer.zero_grad()
        ((X @ w.T - Y) ** 2).mean().backward()
        # sphinx_gallery_start_ignore
        if step >= mask_from:  # the gradient really is zero outside the mask
            assert torch.equal(w.grad[~mask], torch.zeros(int((~mask).sum())))
        # sphinx_gallery_end_ignore
        optimizer.step()
    return frozen_report(before, w.detach(), mask), w.detach() - before


def cell(report):
    if report.frozen:
        return "frozen"
    return (
        f"moved {report.moved_outside}/{report.total_outside}"
        f" (max {report.max_abs_change_outside:.2g})"
    )


SCHEDULES = {"mask from step 0": 0, f"mask from step {HALFWAY}": HALFWAY}
results = {
    (name, schedule, fix): train(make, mask_from=start, fix=fix)
    for name, make in OPTIMIZERS.items()
    for schedule, start in SCHEDULES.items()
    for fix in (False, True)
}

header = f"{'optimizer':<18}" + "".join(f"{s:>26}" for s in SCHEDULES)
print(header)
print("-" * len(header))
for name in OPTIMIZERS:
    row = "".join(f"{cell(results[name, s, False][0]):>26}" for s in SCHEDULES)
    print(f"{name:<18}{row}")

# %%
# The table above is computed, not typed in. Read it row by row:
#
# * With the mask in place from the start, plain SGD, momentum and Adam keep
#   the entries frozen: their state only ever saw zeros there, and Adam's
#   update :math:`\hat m / (\sqrt{\hat v} + \epsilon)` is exactly 0 for
#   :math:`\hat m = \hat v = 0`.
# * **Weight decay** moves them anyway. ``SGD(weight_decay=...)`` adds
#   :math:`\lambda W` to the gradient *inside* ``step()``, after the hook ran;
#   ``AdamW`` shrinks :math:`W` directly. Neither looks at ``.grad`` for that.
# * With the mask applied **halfway**, momentum and Adam also move them: the
#   velocity and moment estimates built up from earlier, unmasked gradients
#   keep pushing for many steps after the gradient became zero.
moved_from_start = {
    n for n in OPTIMIZERS if not results[n, "mask from step 0", False][0].frozen
}
moved_halfway = {
    n
    for n in OPTIMIZERS
    if not results[n, f"mask from step {HALFWAY}", False][0].frozen
}
print("moved, mask from step 0: ", sorted(moved_from_start))
print("moved, mask from halfway:", sorted(moved_halfway))

assert moved_from_start == {"SGD+weight_decay", "AdamW"}
assert moved_halfway == {"SGD+momentum", "SGD+weight_decay", "Adam", "AdamW"}
# sphinx_gallery_start_ignore
# Training did happen: every trainable entry moved in every run.
for (_n, _s, _f), (_r, _d) in results.items():
    assert _r.moved_inside == _r.total_inside, (_n, _s, _f)
# sphinx_gallery_end_ignore

# %%
# Where they moved: the change of every weight entry during the masked part
# of training, one panel per optimizer and schedule. White cells did not
# change at all; a dot marks an entry outside the mask, which should be
# white.
if plt is not None:
    from matplotlib.colors import LogNorm

    fig, axes = plt.subplots(2, 5, figsize=(13, 3.4), layout="constrained")
    changes = torch.stack([results[key][1].abs() for key in results if not key[2]])
    norm = LogNorm(vmin=float(changes[changes > 0].min()), vmax=float(changes.max()))
    cmap = plt.get_cmap("viridis").with_extremes(bad="white")  # bad: no change
    rows_, cols_ = (~mask).nonzero().T
    for i, schedule in enumerate(SCHEDULES):
        for j, name in enumerate(OPTIMIZERS):
            ax = axes[i, j]
            change = results[name, schedule, False][1].abs()
            shown = torch.where(change > 0, change, float("nan"))
            im = ax.imshow(shown.numpy(), cmap=cmap, norm=norm)
            ax.scatter(cols_, rows_, s=6, c="red")
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(name, fontsize=10)
            if j == 0:
                ax.set_ylabel(schedule, fontsize=9)
    fig.colorbar(im, ax=axes, shrink=0.8, label="|change of W|")

# %%
# The fix: restore the frozen entries after every step
# ----------------------------------------------------
# :func:`autograd_notes.keep_frozen` records the values outside the
# mask when you call it and writes them back after every
# ``optimizer.step()`` (a step post-hook). Whatever the optimizer does,
# those entries end each step bit-identical. Keep the gradient mask too, so
# that frozen entries do not feed gradient clipping or other global
# statistics.
header = f"{'optimizer + keep_frozen':<24}" + "".join(f"{s:>26}" for s in SCHEDULES)
print(header)
print("-" * len(header))
for name in OPTIMIZERS:
    row = "".join(f"{cell(results[name, s, True][0]):>26}" for s in SCHEDULES)
    print(f"{name:<24}{row}")

assert all(results[key][0].frozen for key in results if key[2])
# sphinx_gallery_start_ignore
# keep_frozen records the values when called and restores them after step().
_p = torch.nn.Parameter(W_START.clone())
_opt = torch.optim.SGD([_p], lr=0.05)
keep_frozen(_opt, _p, mask)
with torch.no_grad():
    _p.add_(1.0)
_opt.zero_grad()
((X @ _p.T - Y) ** 2).mean().backward()
_opt.step()
assert torch.equal(_p.detach()[~mask], W_START[~mask])
# sphinx_gallery_end_ignore

# %%
# With a forward mask the layer never *sees* the masked entries, so the
# optimizer moving them is harmless while the mask is on; it matters only
# if you remove the mask later. Here AdamW's weight decay shrinks
# ``original`` outside the mask, while ``layer.weight`` stays exactly zero
# there.
layer = torch.nn.Linear(8, 5, bias=False)
with torch.no_grad():
    layer.weight.copy_(W_START)
parametrize_mask(layer, "weight", mask)
original = layer.parametrizations.weight.original
before = original.detach().clone()
optimizer = torch.optim.AdamW(layer.parameters(), lr=0.01, weight_decay=0.01)
for _ in range(STEPS):
    optimizer.zero_grad()
    ((layer(X) - Y) ** 2).mean().backward()
    optimizer.step()
print("original:    ", frozen_report(before, original.detach(), mask))
print("layer.weight zero outside the mask:", bool((layer.weight[~mask] == 0).all()))

assert not frozen_report(before, original.detach(), mask).frozen
assert (layer.weight[~mask] == 0).all()

# %%
# Summary
# -------
# * ``requires_grad`` is per tensor; train part of a weight with a mask
#   ``M`` of its shape, applied elementwise (``W * M``, not ``W @ M``).
# * Forward mask (prune) and gradient mask (freeze) give the same gradient
#   when the loss is linear in the output, or when the masked-out weights
#   are zero. In general they differ: the upstream gradient depends on the
#   output, and the outputs differ.
# * A zero gradient does not freeze an entry under weight decay, nor under
#   momentum or Adam when the mask arrives mid-training.
#   :func:`autograd_notes.keep_frozen` does.
#
# The recipe without the explanation: :doc:`/how-to/freeze-part-of-a-weight`.

# sphinx_gallery_thumbnail_number = 2
