"""
How do I backpropagate several losses that share part of the graph?
===================================================================

A model with several heads computes several losses from one shared trunk.
After this tutorial you can say why a second ``backward()`` through the
trunk fails and what ``retain_graph=True`` changes, train on all the losses
with one ``backward()``, and get each loss's own gradient.
"""

# %%
# Two losses from one computation
# -------------------------------
# The smallest example: ``a`` goes through two operations, and two "heads"
# reduce the result in different ways:
#
# .. math::
#
#    b_i = a_i^2, \qquad c_i = 2 b_i, \qquad
#    d = \tfrac{1}{4}\textstyle\sum_i c_i, \qquad e = \textstyle\sum_i c_i .
#
# The part ``a -> b -> c`` is shared; ``d`` and ``e`` are the two losses.
# :func:`~autograd_notes.format_graph` shows both of them leading into the
# same ``MulBackward0`` node (the second time as a back-reference):
import torch
import torch.nn.functional as F
from torch import nn

from autograd_notes import expect_error, format_graph

_ = torch.manual_seed(0)

a = torch.rand(1, 4, requires_grad=True)
b = a**2
c = 2 * b
d = c.mean()
e = c.sum()
names = {"a": a, "b": b, "c": c, "d": d, "e": e}
print(format_graph(d + e, names=names))

# sphinx_gallery_start_ignore
assert d.grad_fn.next_functions[0][0] is e.grad_fn.next_functions[0][0]
# sphinx_gallery_end_ignore

# %%
# Common mistake: one ``backward()`` per loss
# -------------------------------------------
# Backpropagating ``d`` works. Backpropagating ``e`` afterwards fails, even
# though ``e`` itself was never backpropagated:
d.backward()
with expect_error(RuntimeError, "backward through the graph a second time"):
    e.backward()

# %%
# The reason is in the shared part. To compute its local derivative, a node
# *saves* tensors during the forward pass: ``PowBackward0`` (for ``b = a**2``)
# keeps ``a``, because :math:`\partial b / \partial a = 2a`. ``backward()``
# frees those saved tensors as soon as it has used them, to release memory.
# ``d.backward()`` went through the shared nodes, so ``e.backward()`` finds
# them empty. ``show_saved=True`` lists what each node kept:
print(format_graph(e, names=names, show_saved=True))

# sphinx_gallery_start_ignore
assert format_graph(e, show_saved=True).count("<freed by backward>") == 2
# sphinx_gallery_end_ignore

# %%
# ``retain_graph=True`` keeps the saved tensors, and gradients add up
# -------------------------------------------------------------------
# Passing ``retain_graph=True`` to the first call keeps the saved tensors for
# the next one; the last call may free them. Each ``backward()`` *adds* its
# gradient to ``a.grad``. By hand,
# :math:`\partial d / \partial a_i = \frac{1}{4} \cdot 4 a_i = a_i` and
# :math:`\partial e / \partial a_i = 4 a_i`, so the total is :math:`5 a_i`:
a.grad = None
c = 2 * a**2
d, e = c.mean(), c.sum()
d.backward(retain_graph=True)
print("after d.backward():", a.grad)
e.backward()
print("after e.backward():", a.grad)
print("5 * a:             ", 5 * a.detach())

# sphinx_gallery_start_ignore
assert torch.allclose(a.grad, 5 * a.detach())
# sphinx_gallery_end_ignore

# %%
# The fix: sum the losses, call ``backward()`` once
# --------------------------------------------------
# The derivative of a sum is the sum of the derivatives, so one
# ``backward()`` of ``d + e`` gives the same ``a.grad``, and needs no
# ``retain_graph`` at all. Weighted losses work the same way:
# ``(w1 * l1 + w2 * l2).backward()``.
a.grad = None
c = 2 * a**2
(c.mean() + c.sum()).backward()
print("(d + e).backward():", a.grad)

# sphinx_gallery_start_ignore
assert torch.allclose(a.grad, 5 * a.detach())
# sphinx_gallery_end_ignore

# %%
# A model with four heads
# -----------------------
# The same holds for a real multi-head model: a small trunk computes features,
# four linear heads each predict their own target. A *hook* on the trunk's
# first weight (a function that autograd calls with its gradient; later, in
# :ref:`tutorial 11 <sphx_glr_tutorials_11_hooks.py>`) counts the backward
# passes through the trunk.
trunk = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
heads = nn.ModuleList(nn.Linear(32, 1) for _ in range(4))
params = [*trunk.parameters(), *heads.parameters()]
inputs, targets = torch.randn(64, 8), torch.randn(4, 64, 1)

trunk_backward_runs = []
trunk[0].weight.register_hook(lambda grad: trunk_backward_runs.append(1))


def head_losses():
    features = trunk(inputs)
    pairs = zip(heads, targets, strict=True)
    return [F.mse_loss(head(features), target) for head, target in pairs]


# %%
# First the pattern that calls ``backward()`` once per loss, keeping the
# graph for every call but the last. It is correct: the gradients add up in
# ``.grad`` before the optimizer step.
losses = head_losses()
for loss in losses[:-1]:
    loss.backward(retain_graph=True)
losses[-1].backward()
passes_per_loss = len(trunk_backward_runs)
print("one backward per loss:  ", passes_per_loss, "trunk backward passes")
grads_per_loss = [p.grad.clone() for p in params]

# %%
# Now one ``backward()`` of the sum, from fresh gradients:
for p in params:
    p.grad = None
trunk_backward_runs.clear()
sum(head_losses()).backward()
print("one backward of the sum:", len(trunk_backward_runs), "trunk backward pass")

# sphinx_gallery_start_ignore
assert passes_per_loss == len(heads) == 4
assert len(trunk_backward_runs) == 1
for _g_each, _p in zip(grads_per_loss, params, strict=True):
    assert torch.allclose(_g_each, _p.grad, atol=1e-6)
# sphinx_gallery_end_ignore

# %%
# Both give the same gradients (to rounding), but separate calls walk the
# shared trunk once *per loss*. With the sum, the backward engine waits until
# the gradients of all four heads have reached the trunk's output, adds them,
# and runs the trunk's backward once. The bigger the trunk and the more
# heads, the more work the sum saves.
#
# Common mistake: ``optimizer.step()`` between the calls
# ------------------------------------------------------
# Stepping after each loss looks natural, but the step changes the trunk's
# weights *in place* while the retained graph still needs their old values
# for the next loss. Autograd notices and refuses:
optimizer = torch.optim.SGD(params, lr=0.1)
optimizer.zero_grad()
losses = head_losses()
losses[0].backward(retain_graph=True)
optimizer.step()  # the mistake: the trunk changes under the retained graph
with expect_error(RuntimeError, "modified by an inplace operation"):
    losses[1].backward()

# %%
# The fix is the order of the training step: all the backward work first
# (best, the one ``backward()`` of the sum), then one ``optimizer.step()``.
#
# Each loss's gradient on its own
# -------------------------------
# Sometimes you *want* the gradients apart, for example to compare how hard
# each head pulls on the trunk. :func:`torch.autograd.grad` returns them
# instead of adding them to ``.grad``. Keep the graph with
# ``retain_graph=True``, because the losses share the trunk.
optimizer.zero_grad()
trunk_params = list(trunk.parameters())
losses = head_losses()
per_loss = [
    torch.autograd.grad(loss, trunk_params, retain_graph=True) for loss in losses
]
for i, grads in enumerate(per_loss):
    print(f"head {i}: gradient norm on the first trunk weight {grads[0].norm():.3f}")

# sphinx_gallery_start_ignore
assert all(p.grad is None for p in params)  # autograd.grad left .grad alone
_total = torch.autograd.grad(sum(losses), trunk_params, retain_graph=True)
for _j, _g_sum in enumerate(_total):  # the per-loss gradients add up to the sum's
    assert torch.allclose(sum(_g[_j] for _g in per_loss), _g_sum, atol=1e-6)
# sphinx_gallery_end_ignore

# %%
# The per-loss gradients add up to the gradient of the sum, and ``.grad``
# stays untouched. The how-to :doc:`/how-to/per-loss-gradients` has the full
# recipe, including losses that do not reach every parameter.
#
# When a second ``backward()`` happens to work
# --------------------------------------------
# Some nodes save no tensors at all. The derivative of :math:`a + 1` is
# :math:`1` whatever ``a`` is, so ``AddBackward0`` keeps only the number
# ``alpha`` (of ``a + alpha * other``). With nothing to free, a second
# ``backward()`` runs without ``retain_graph``, and the gradients accumulate,
# so ``a.grad`` doubles:
a.grad = None
s = (a + 1).sum()
print(format_graph(s, names={"a": a}, show_saved=True))
s.backward()
s.backward()  # no error
print("after two backward calls:", a.grad)

# sphinx_gallery_start_ignore
assert torch.equal(a.grad, torch.full((1, 4), 2.0))
assert "_saved_alpha: 1" in format_graph(s, show_saved=True)
# sphinx_gallery_end_ignore

# %%
# Do not rely on it. What a node saves is an implementation detail, not the
# maths: ``a * 2`` looks as harmless as ``a + 1``, but ``MulBackward0`` keeps
# the factor ``2`` as a tensor, and the second call fails.
s = (a * 2).sum()
s.backward()
with expect_error(RuntimeError, "backward through the graph a second time"):
    s.backward()

# sphinx_gallery_start_ignore
_saved = format_graph(a * 2, show_saved=True)  # a fresh graph, nothing freed
assert "_saved_other: tensor of shape (), int64, value 2" in _saved
# sphinx_gallery_end_ignore

# %%
# A second backward fails exactly when it needs a saved tensor the first one
# freed, and nothing in PyTorch's API promises which tensors an operation
# saves. Whenever you mean to backpropagate through a graph twice, pass
# ``retain_graph=True``; better, sum the losses.
#
# Exercises
# ---------
#
# **1. Predict.** ``s = a.exp().sum()``. After ``s.backward()``, does a
# second ``s.backward()`` work? Hint: the derivative of :math:`e^a` is
# :math:`e^a`.
#
# **Solution**

# %%
s = a.exp().sum()  # ExpBackward0 saves its result e**a: it is the derivative
s.backward()  # ... and the first backward frees it, so the second one fails
with expect_error(RuntimeError, "backward through the graph a second time"):
    s.backward()
# sphinx_gallery_start_ignore
assert [n for n in dir(a.exp().grad_fn) if n.startswith("_saved_")] == ["_saved_result"]
# sphinx_gallery_end_ignore

# %%
# **2. Predict.** With ``c = 2 * a**2`` as above, what is ``a.grad`` after
# ``(0.3 * c.mean() + 0.7 * c.sum()).backward()``, as a multiple of ``a``?
#
# **Solution**

# %%
a.grad = None
c = 2 * a**2
(0.3 * c.mean() + 0.7 * c.sum()).backward()
print(a.grad / a.detach())  # 0.3 * 1 + 0.7 * 4 = 3.1 in every entry
# sphinx_gallery_start_ignore
assert torch.allclose(a.grad, 3.1 * a.detach())
# sphinx_gallery_end_ignore

# %%
# **3. Predict.** With the four-head model, how many times does the
# backward pass reach the bottom of the trunk for
# ``(l0 + l1).backward(retain_graph=True)`` followed by
# ``(l2 + l3).backward()``?
#
# **Solution**

# %%
trunk_backward_runs.clear()
l0, l1, l2, l3 = head_losses()
(l0 + l1).backward(retain_graph=True)
(l2 + l3).backward()
print(len(trunk_backward_runs))  # 2: one per backward() call, not one per loss
# sphinx_gallery_start_ignore
assert len(trunk_backward_runs) == 2
# sphinx_gallery_end_ignore

# %%
# What next
# ---------
# :ref:`sphx_glr_tutorials_08_training_part_of_a_weight.py` trains only some
# entries of a weight. The glossary tells :ref:`retain_graph from retain_grad
# <glossary-retain-graph-vs-retain-grad>`.
